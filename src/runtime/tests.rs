//! The shared readiness wait of the runtimes, and their start errors.

use super::*;
use std::time::Duration;

fn named(i: usize) -> (String, PathBuf) {
    (
        ["alice", "bob"][i].to_string(),
        PathBuf::from("/nonexistent/node.log"),
    )
}

#[tokio::test(start_paused = true)]
async fn nodes_ready_at_different_looks_are_waited_for_together() {
    let looks = std::sync::Mutex::new([0u32; 2]);
    let start = tokio::time::Instant::now();
    let outcome = wait_nodes_ready(
        Duration::from_secs(60),
        2,
        Duration::from_secs(1),
        |_| None,
        |i| {
            let n = {
                let mut looks = looks.lock().unwrap();
                looks[i] += 1;
                looks[i]
            };
            async move {
                // alice serves at her 2nd look, bob at his 4th.
                if n > [1, 3][i] {
                    Ok(())
                } else {
                    Err("not yet".to_string())
                }
            }
        },
        named,
    )
    .await;
    assert!(outcome.is_ok(), "{outcome:?}");
    assert_eq!(
        *looks.lock().unwrap(),
        [2, 4],
        "no look after a node served"
    );
    assert_eq!(start.elapsed(), Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn a_look_that_hangs_is_cut_and_the_error_says_what_the_last_look_found() {
    let start = tokio::time::Instant::now();
    let err = wait_nodes_ready(
        Duration::from_secs(40),
        2,
        Duration::from_secs(1),
        |_| None,
        |i| async move {
            if i == 0 {
                // Accepted and never answered: each look ends at the look limit.
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(Duration::from_secs(5)).await;
            Err("connection refused".to_string())
        },
        named,
    )
    .await
    .expect_err("neither serves");
    let text = err.to_string();
    assert!(
        text.starts_with("node alice did not become ready in 40 s (last look: no answer within 15 s); last lines of its log (/nonexistent/node.log)"),
        "{text}"
    );
    // Rounds of 15 s (alice's cut look, bob's 5 s one alongside) and 1 s pauses: the
    // 3rd round ends at 47 s, past the limit. One look after the other would end at 41 s.
    assert_eq!(start.elapsed(), Duration::from_secs(47));
}

#[tokio::test(start_paused = true)]
async fn a_node_that_exited_ends_the_wait_with_its_status() {
    let err = wait_nodes_ready(
        Duration::from_secs(60),
        2,
        Duration::from_secs(1),
        |i| (i == 1).then(|| "exit status: 1".to_string()),
        |_| async { Err("not yet".to_string()) },
        named,
    )
    .await
    .expect_err("bob exited");
    assert!(
        err.to_string()
            .starts_with("node bob exited early (exit status: 1)"),
        "{err}"
    );
}

#[test]
fn start_errors_show_the_end_of_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("output.log");
    let lines: Vec<String> = (1..=40).map(|i| format!("line {i}")).collect();
    std::fs::write(&log, lines.join("\n")).unwrap();
    let text = RuntimeError::exited("node alice", "exit 1".into(), &log).to_string();
    assert!(
        text.starts_with("node alice exited early (exit 1)"),
        "{text}"
    );
    assert!(
        text.ends_with("line 40") && text.contains("line 11\n"),
        "{text}"
    );
    assert!(!text.contains("line 10\n"), "30 lines, not more: {text}");
    let text = RuntimeError::not_ready("the chain", Duration::from_secs(60), &log).to_string();
    assert!(
        text.starts_with("the chain did not become ready in 60 s"),
        "{text}"
    );
    assert!(text.contains(&log.display().to_string()), "{text}");
}
