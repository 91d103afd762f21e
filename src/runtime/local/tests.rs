//! The local runtime's tests: teardown, resources, restart and the chain's client.

use super::*;
use crate::runtime::{Measures, PatientDown, Starts};

#[tokio::test]
async fn down_is_idempotent_and_removes_the_run_dir() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let mut rt = LocalRuntime::new(run_dir.clone(), false);
    let sleeper = rt.dir_for("sleeper").unwrap();
    let proc = Proc::spawn(
        "sleeper",
        "test sleeper",
        Path::new("/bin/sleep"),
        &["300".into()],
        sleeper.join("output.log"),
    )
    .unwrap();
    rt.pids.push(proc.pid);
    rt.nodes.push(proc);
    rt.down().await.unwrap();
    rt.down().await.unwrap();
    assert!(!run_dir.exists());
    assert!(!std::path::Path::new(&format!("/proc/{}", rt.pids()[0])).exists());
}

#[tokio::test]
async fn resources_read_every_started_process_from_proc() {
    let dir = tempfile::tempdir().unwrap();
    let mut rt = LocalRuntime::new(dir.path().join("run"), false);
    for name in ["alice", CHAIN_NAME] {
        let d = rt.dir_for(name).unwrap();
        std::fs::write(d.join("db"), vec![1u8; 100 * 1024]).unwrap();
        // Busy for a while, then idle: CPU to measure, memory to read.
        let proc = Proc::spawn(
            name,
            "test shell",
            Path::new("/bin/sh"),
            &[
                "-c".into(),
                "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 300".into(),
            ],
            d.join("output.log"),
        )
        .unwrap();
        rt.pids.push(proc.pid);
        if name == CHAIN_NAME {
            rt.chain = Some(proc);
        } else {
            rt.nodes.push(proc);
        }
    }
    let first = rt.resources().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    std::fs::write(rt.run_dir.join("alice/more"), vec![1u8; 64 * 1024]).unwrap();
    let second = rt.resources().await;
    let fresh = rt.resources_fresh().await;
    rt.down().await.unwrap();

    let names: Vec<&str> = first.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["alice", CHAIN_NAME]);
    for (a, b) in first.iter().zip(&second) {
        assert_eq!(a.cpu_pct, None, "first reading: {a:?}");
        assert!(b.cpu_pct.is_some_and(|c| c >= 0.0), "{b:?}");
        assert!(b.mem_bytes.is_some_and(|m| m > 0), "{b:?}");
        assert!(a.data_dir_bytes.is_some_and(|d| d >= 100 * 1024), "{a:?}");
        assert_eq!(b.data_dir_bytes, a.data_dir_bytes, "cached between walks");
        assert_eq!((b.net_rx_bytes, b.net_tx_bytes), (None, None));
        if Path::new("/proc/self/io").exists() {
            assert!(b.disk_write_bytes.is_some(), "{b:?}");
        }
    }
    let grown = |r: &[crate::metrics::ResourceReading]| r[0].data_dir_bytes.unwrap();
    assert!(
        grown(&fresh) >= grown(&first) + 64 * 1024,
        "a fresh reading walks"
    );
    assert_eq!(fresh[1].data_dir_bytes, first[1].data_dir_bytes);
}

#[tokio::test]
async fn restart_node_stops_and_starts_the_same_command_unseen_by_exited() {
    let dir = tempfile::tempdir().unwrap();
    let mut rt = LocalRuntime::new(dir.path().join("run"), false);
    let d = rt.dir_for("alice").unwrap();
    // Writes a line per start into its data dir, then waits for SIGTERM.
    let args = vec![
        "-c".to_string(),
        format!("echo started >> {}/starts; exec sleep 300", d.display()),
    ];
    let proc = Proc::spawn(
        "alice",
        "test node",
        Path::new("/bin/sh"),
        &args,
        d.join("output.log"),
    )
    .unwrap();
    let first = proc.pid;
    rt.pids.push(first);
    let endpoint = NodeEndpoint {
        name: "alice".into(),
        implementation: crate::node::Implementation::Lnd,
        rpc_addr: "127.0.0.1:1".into(),
        p2p_addr: "127.0.0.1:2".into(),
        credentials: crate::node::driver(crate::node::Implementation::Lnd)
            .credentials(&|file| d.join(file)),
        data_dir: d.clone(),
        binary: "/bin/sh".into(),
        pid: Some(first),
        payment_engine: Default::default(),
    };
    rt.launches
        .push(("/bin/sh".into(), args.clone(), endpoint.clone()));
    rt.nodes.push(proc);
    tokio::time::sleep(Duration::from_millis(200)).await;

    let restarted = rt.restart_node("alice").await.unwrap();
    let second = restarted.endpoint.pid.unwrap();
    assert_ne!(second, first);
    assert_eq!(restarted.endpoint.rpc_addr, endpoint.rpc_addr, "ports kept");
    assert!(restarted.stop > Duration::ZERO);
    assert!(
        restarted.stop < STOP_DEADLINE,
        "stopped by SIGTERM, not killed"
    );
    assert!(
        !Path::new(&format!("/proc/{first}")).exists(),
        "old process gone"
    );
    assert_eq!(rt.exited(), None, "the deliberate stop is no death");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let starts = std::fs::read_to_string(d.join("starts")).unwrap();
    assert_eq!(
        starts.lines().count(),
        2,
        "started again with the same command"
    );
    assert!(matches!(
        rt.restart_node("carol").await,
        Err(RuntimeError::UnknownNode { .. })
    ));
    rt.down().await.unwrap();
    assert!(!Path::new(&format!("/proc/{second}")).exists());
}

#[test]
fn the_chains_cli_is_the_one_beside_its_binary() {
    let dir = tempfile::tempdir().unwrap();
    let bitcoind = dir.path().join("bitcoind");
    assert_eq!(
        cli_beside(&bitcoind, Some("bitcoin-cli")),
        None,
        "not built"
    );
    std::fs::write(dir.path().join("bitcoin-cli"), "").unwrap();
    assert_eq!(
        cli_beside(&bitcoind, Some("bitcoin-cli")),
        Some(dir.path().join("bitcoin-cli").display().to_string())
    );
    assert_eq!(cli_beside(&bitcoind, None), None, "a chain without one");
}

#[test]
fn drop_kills_what_down_did_not_stop() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let pid = runtime.block_on(async {
        let mut rt = LocalRuntime::new(dir.path().join("run"), true);
        let d = rt.dir_for("sleeper").unwrap();
        let proc = Proc::spawn(
            "sleeper",
            "test sleeper",
            Path::new("/bin/sleep"),
            &["300".into()],
            d.join("output.log"),
        )
        .unwrap();
        let pid = proc.pid;
        rt.chain = Some(proc);
        drop(rt);
        pid
    });
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "pid {pid} survived Drop"
    );
    assert!(
        dir.path().join("run").exists(),
        "keep = true keeps the logs"
    );
}

#[tokio::test]
async fn a_stop_for_a_snapshot_names_the_node_it_had_to_kill() {
    let dir = tempfile::tempdir().unwrap();
    let mut rt = LocalRuntime::new(dir.path().join("run"), false);
    // alice exits on SIGTERM; bob ignores it (as a node busy for longer than allowed).
    for (name, script) in [
        ("alice", "exec sleep 300"),
        ("bob", "trap '' TERM; while :; do sleep 0.05; done"),
    ] {
        let d = rt.dir_for(name).unwrap();
        let args = ["-c".to_string(), script.to_string()];
        let proc = Proc::spawn(
            name,
            "test node",
            Path::new("/bin/sh"),
            &args,
            d.join("output.log"),
        )
        .unwrap();
        rt.pids.push(proc.pid);
        rt.nodes.push(proc);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let killed = rt
        .down_for_snapshot(Duration::from_millis(500))
        .await
        .unwrap();
    assert_eq!(killed, ["bob"]);
    for pid in rt.pids() {
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "{pid} gone");
    }
}

#[tokio::test]
async fn down_names_what_it_had_to_kill() {
    let dir = tempfile::tempdir().unwrap();
    let mut rt = LocalRuntime::new(dir.path().join("run"), false);
    rt.stop_deadline = Duration::from_millis(500);
    // alice exits on SIGTERM; bob ignores it (as a node that hangs on exit).
    for (name, script) in [
        ("alice", "exec sleep 300"),
        ("bob", "trap '' TERM; while :; do sleep 0.05; done"),
    ] {
        let d = rt.dir_for(name).unwrap();
        let args = ["-c".to_string(), script.to_string()];
        let log = d.join("output.log");
        let proc = Proc::spawn(name, "test node", Path::new("/bin/sh"), &args, log).unwrap();
        rt.pids.push(proc.pid);
        rt.nodes.push(proc);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    rt.down().await.unwrap();
    assert_eq!(rt.killed_at_down(), ["bob"]);
    for pid in rt.pids() {
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "{pid} gone");
    }
    // A second down has nothing more to kill, and forgets nothing.
    rt.down().await.unwrap();
    assert_eq!(rt.killed_at_down(), ["bob"]);
}
