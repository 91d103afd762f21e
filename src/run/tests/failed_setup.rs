//! A network that does not come up: the run fails, the partial report says why, and
//! each node's last log lines are kept beside it (the run directory goes at teardown).

use super::*;

#[tokio::test]
async fn a_failed_setup_keeps_each_nodes_log_tail_beside_the_partial_report() {
    let dirs = Dirs::new();
    let runtimes = fakes(|_| {
        Ok(FakeScript {
            setup_error: Some("bob never answered (scripted)".to_string()),
            ..quick()
        })
    });
    let err = execute_with(scenario(""), &dirs.opts, &runtimes, Signals::manual())
        .await
        .unwrap_err();
    assert!(format!("{err:#}").contains("bob never answered"), "{err:#}");
    let report = dirs.report("");
    assert_eq!(report["complete"], false);
    let logs = dirs.opts.report_dir.as_ref().unwrap().join("logs");
    for node in ["alice", "bob"] {
        let path = logs.join(format!("{node}.log"));
        let tail =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("no {}: {e}", path.display()));
        assert!(tail.contains(&format!("fake node {node}")), "{tail}");
    }
    assert_eq!(dirs.runs_left(), 0);
}

#[tokio::test]
async fn a_run_that_comes_up_keeps_no_log_tails() {
    let dirs = Dirs::new();
    let runtimes = fakes(|_| Ok(quick()));
    execute_with(scenario(""), &dirs.opts, &runtimes, Signals::manual())
        .await
        .unwrap();
    let logs = dirs.opts.report_dir.as_ref().unwrap().join("logs");
    assert!(!logs.exists(), "{}", logs.display());
}
