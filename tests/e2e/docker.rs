//! End to end on a real Docker engine, through the binary: alice-pays-bob with
//! `runtime: docker` (the local images scripts/build-images.sh builds, `pull: never`,
//! so no test reaches a registry), and nothing labelled with the run left afterwards:
//! after a normal end, after SIGINT in the middle of the load, and after `down`
//! following a SIGKILL. Also the two ways a missing engine is handled.
//!
//! Skips (with a message) only when no engine answers and CI is not set; under
//! `CI=true` a missing engine fails the tests.

use crate::common::docker::{block_on, engine, engine_ready, labelled, labelled_now};
use crate::common::running::ScenarioRun;
use crate::common::*;
use bollard::Docker;
use bollard::query_parameters::ListContainersOptionsBuilder;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const SCENARIO: &str = "tests/fixtures/docker/alice-pays-bob.yaml";
/// [`SCENARIO`] with both nodes restarted after the load.
const SOAK: &str = "tests/fixtures/docker/soak.yaml";

/// One docker run at a time: three pairs of LND nodes at once would swamp two cores,
/// and `down` removes every run's leftovers.
static ENGINE: Mutex<()> = Mutex::new(());

/// The engine's turn and a run of far more payments than can finish, once its load
/// is under way; None when no engine answers (outside CI).
fn run_under_load() -> Option<(std::sync::MutexGuard<'static, ()>, ScenarioRun)> {
    let turn = ENGINE.lock().unwrap_or_else(|e| e.into_inner());
    engine_ready(&[])?;
    let mut run = ScenarioRun::start(SCENARIO, 1_000_000, &[]);
    run.wait_for_load(2);
    Some((turn, run))
}

/// `lnbench-tui down` with `args`, its local part in `run`'s own run directory (the
/// other tests' local runs are not its business); its Docker part looks at every run.
fn down(run: &ScenarioRun, args: &[&str]) -> std::process::Output {
    lnbench_command()
        .arg("down")
        .arg("--run-dir")
        .arg(run.work.path())
        .args(args)
        .output()
        .expect("run lnbench-tui down")
}

fn assert_nothing_left(run_id: &str, log: &str) {
    let (containers, networks) = labelled(Some(run_id));
    assert!(
        containers.is_empty() && networks.is_empty(),
        "left behind by run {run_id}: containers {containers:?}, networks {networks:?}\n{log}"
    );
}

#[test]
fn alice_pays_bob_in_docker_records_resources_restarts_both_and_leaves_nothing() {
    let _engine = ENGINE.lock().unwrap_or_else(|e| e.into_inner());
    if engine_ready(&[]).is_none() {
        return;
    }
    let mut run = ScenarioRun::start(SOAK, 300, &[]);
    run.wait_for("the run id", 1, |l| l.starts_with("run "));
    let (status, log) = run.wait_exit(Duration::from_secs(600));
    let run_id = run.run_id();
    assert_eq!(status.code(), Some(0), "exit status {status:?}\n{log}");
    assert_nothing_left(&run_id, &log);

    let report = crate::basic_run::check_report(&run.report_dir(), "docker", 300);
    assert_reconciled(&report);

    // Both containers restarted after the load, on their volumes.
    crate::restarts::check_shown(&log, &run.report_dir());
    crate::restarts::check_restarts(&report, 10);
}

#[test]
fn sigint_in_the_middle_of_the_load_exits_130_and_removes_everything() {
    let Some((_engine, mut run)) = run_under_load() else {
        return;
    };
    let run_id = run.run_id();
    let (containers, _) = labelled(Some(&run_id));
    assert_eq!(containers.len(), 3, "chain, alice, bob: {containers:?}");
    kill(Pid::from_raw(run.child.id() as i32), Signal::SIGINT).unwrap();
    let (status, log) = run.wait_exit(Duration::from_secs(90));
    assert_eq!(status.code(), Some(130), "exit status {status:?}\n{log}");
    assert!(log.contains("interrupted by SIGINT"), "{log}");
    assert_nothing_left(&run_id, &log);
}

#[test]
fn down_removes_what_a_killed_run_left() {
    let _turn = killed_runs_turn();
    let Some((_engine, mut run)) = run_under_load() else {
        return;
    };
    let run_id = run.run_id();
    kill(Pid::from_raw(run.child.id() as i32), Signal::SIGKILL).unwrap();
    let (_, log) = run.wait_exit(Duration::from_secs(30));
    // SIGKILL runs no teardown: the containers and the network stay.
    let (containers, networks) = labelled(Some(&run_id));
    assert_eq!(containers.len(), 3, "{containers:?}\n{log}");
    assert_eq!(networks.len(), 1, "{networks:?}\n{log}");

    let out = down(&run, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "down failed: {out:?}");
    for name in ["chain", "alice", "bob"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("removed container lnbench-")
                    && l.contains(&format!("-{name} (run {run_id})"))),
            "down did not list the {name} container:\n{stdout}"
        );
    }
    assert!(
        stdout.contains("removed network lnbench-"),
        "down did not list the network:\n{stdout}"
    );
    assert_nothing_left(&run_id, &log);

    // Nothing left: down says so and still exits 0. Asked of this run alone: the other
    // tests' runs going on beside this one are left alone, and listed, by a plain `down`.
    let again = down(&run, &["--run", &run_id]);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing to remove"));
}

#[test]
fn down_leaves_a_run_that_is_still_going_alone() {
    let _turn = killed_runs_turn();
    let Some((_engine, mut run)) = run_under_load() else {
        return;
    };
    let run_id = run.run_id();
    let out = down(&run, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "down failed: {out:?}");
    assert!(
        stdout.contains(&format!(
            "left run {run_id} alone: its lnbench-tui (pid {})",
            run.child.id()
        )),
        "{stdout}"
    );
    assert!(!stdout.contains(&format!("(run {run_id})")), "{stdout}");
    let (containers, networks) = labelled(Some(&run_id));
    assert_eq!(
        containers.len(),
        3,
        "down removed a live run's containers: {containers:?}"
    );
    assert_eq!(networks.len(), 1, "{networks:?}");
    // The run goes on and ends as usual.
    kill(Pid::from_raw(run.child.id() as i32), Signal::SIGINT).unwrap();
    let (status, log) = run.wait_exit(Duration::from_secs(90));
    assert_eq!(status.code(), Some(130), "exit status {status:?}\n{log}");
    assert!(log.contains("interrupted by SIGINT"), "{log}");
    assert_nothing_left(&run_id, &log);
}

/// Another user's leftovers (a network labelled with their uid, its tool gone): `down`
/// leaves them and says whose they are; `down --all` removes them and says whose it
/// removed.
#[test]
fn down_leaves_another_users_run_unless_all() {
    let _engine = ENGINE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(docker) = engine() else {
        return;
    };
    let run_id = format!("other-user-{}", std::process::id());
    let host = lnbench_tui::leftovers::hostname();
    let labels = HashMap::from([
        ("lnbench.run".to_string(), run_id.clone()),
        ("lnbench.owner".to_string(), format!("{host}/1")),
        ("lnbench.user".to_string(), "54321".to_string()),
    ]);
    let name = format!("lnbench-{run_id}");
    block_on(
        docker.create_network(bollard::models::NetworkCreateRequest {
            name: name.clone(),
            labels: Some(labels),
            ..Default::default()
        }),
    )
    .expect("create a labelled network");

    // Scoped to this run (--run): other runs on the machine are not this test's.
    let down = |all: bool| {
        let mut cmd = lnbench_command();
        cmd.args(["down", "--run", &run_id]);
        if all {
            cmd.arg("--all");
        }
        cmd.output().unwrap()
    };
    let out = down(false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "down failed: {out:?}");
    let (_, networks) = labelled(Some(&run_id));
    assert_eq!(
        networks.len(),
        1,
        "down removed another user's run:\n{stdout}"
    );
    assert!(
        stdout.contains(&format!("left run {run_id} alone: it belongs to uid 54321")),
        "{stdout}"
    );

    let out = down(true);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "down --all failed: {out:?}");
    let (_, networks) = labelled(Some(&run_id));
    assert!(networks.is_empty(), "{networks:?}\n{stdout}");
    assert!(
        stdout.contains(&format!(
            "removed network {name} (run {run_id}) (a run of uid 54321)"
        )),
        "{stdout}"
    );
}

/// A scenario asking for docker where no engine answers fails at once (exit 3) and
/// says what to do; nothing is created.
#[test]
fn runtime_docker_without_an_engine_exits_3_at_once() {
    let work = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = lnbench_command()
        .arg(repo_file(SCENARIO))
        .arg("--run-dir")
        .arg(work.path())
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("no Docker engine answers"), "{stderr}");
    assert!(stderr.contains("scripts/start-dockerd.sh"), "{stderr}");
    assert!(stderr.contains("runtime: local"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(std::fs::read_dir(work.path()).unwrap().next().is_none());

    // `down` cannot look at an engine either: it says so, and that it looked for
    // nothing there, and still does what it can (the run directories) and exits 0.
    let down = lnbench_command()
        .arg("down")
        .arg("--run-dir")
        .arg(work.path())
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&down.stdout);
    let stderr = String::from_utf8_lossy(&down.stderr);
    assert_eq!(down.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("no Docker engine answers"), "{stdout}");
    assert!(
        stdout.contains("no container, network or volume was looked for"),
        "{stdout}"
    );
}

/// `runtime: auto` without an engine falls back to local processes and says why
/// (here the local run then finds no binaries, so it fails before starting anything).
#[test]
fn auto_without_an_engine_falls_back_to_local_and_says_so() {
    let work = tempfile::tempdir().unwrap();
    let scenario = work.path().join("auto.yaml");
    let text = std::fs::read_to_string(repo_file(SCENARIO))
        .unwrap()
        .replace("runtime: docker", "runtime: auto")
        .replace("pull: never\n", "");
    std::fs::write(&scenario, text).unwrap();
    let out = lnbench_command()
        .arg(&scenario)
        .arg("--run-dir")
        .arg(work.path())
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .env("LNBENCH_CACHE", work.path().join("no-cache"))
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("runtime auto: using local processes (no Docker engine answers"),
        "{stderr}"
    );
    assert!(stderr.contains("no btcd binary found"), "{stderr}");
    assert_eq!(out.status.code(), Some(3), "{stderr}");
}

/// The runtime API on its own, on the chain container: resources read from the stats
/// stream (CPU after the first sample, memory, network, writable-layer size), the log
/// saved, a container that dies reported by `exited`, and `down` removing everything.
#[test]
fn chain_container_resources_exit_and_teardown() {
    use lnbench_tui::runtime::docker::{DockerRuntime, RunImages};
    use lnbench_tui::runtime::{Measures, Runtime, Starts};
    let _engine = ENGINE.lock().unwrap_or_else(|e| e.into_inner());
    if engine_ready(&[]).is_none() {
        return;
    }
    lnbench_tui::tls::install_crypto_provider();
    let work = tempfile::tempdir().unwrap();
    let run_id = format!("runtime-test-{}", std::process::id());
    block_on(async {
        let docker = lnbench_tui::runtime::docker::connect().await.unwrap();
        let images = RunImages {
            chain: "lnbench/btcd:v0.24.2".into(),
            nodes: Vec::new(),
            postgres: None,
        };
        let run_dir = work.path().join("run");
        let mut rt =
            DockerRuntime::new(docker.clone(), images, &run_id, "t", run_dir.clone(), true);
        let spec = lnbench_tui::scenario::ChainSpec {
            kind: lnbench_tui::scenario::ChainKind::Btcd,
            binary: None,
            image: None,
            args: Vec::new(),
        };
        let wallet = lnbench_tui::chain::MiningWallet::generate();
        let chain = rt.start_chain(&spec, &wallet.address()).await.unwrap();
        assert!(
            chain.rpc_addr.starts_with("127.0.0.1:"),
            "{}",
            chain.rpc_addr
        );
        // Ports are published on loopback only.
        let (containers, networks) = labelled_now(Some(&run_id)).await;
        assert_eq!((containers.len(), networks.len()), (1, 1));
        let name = containers[0].trim_start_matches('/').to_string();
        let info = docker.inspect_container(&name, None).await.unwrap();
        let ports = info.host_config.unwrap().port_bindings.unwrap();
        for binding in ports.values().flatten().flatten() {
            assert_eq!(binding.host_ip.as_deref(), Some("127.0.0.1"));
        }
        let labels = info.config.unwrap().labels.unwrap();
        assert_eq!(labels["lnbench.node"], "chain");
        assert_eq!(labels["lnbench.scenario"], "t");

        // Mine a little so the CPU figure has something to show.
        let btcd = lnbench_tui::chain::driver(chain.kind)
            .connect(&chain, wallet)
            .await
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let reading = loop {
            btcd.mine(20).await.unwrap();
            let r = rt.resources().await;
            if let Some(r) = r
                .into_iter()
                .find(|r| r.cpu_pct.is_some_and(|c| c > 0.0) && r.data_dir_bytes.is_some())
            {
                break r;
            }
            assert!(
                Instant::now() < deadline,
                "no CPU reading above 0 within 60 s"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        assert_eq!(reading.name, "chain");
        assert!(
            reading.mem_bytes.is_some_and(|m| m > 1_000_000),
            "{reading:?}"
        );
        assert!(reading.net_rx_bytes.is_some(), "{reading:?}");
        assert!(reading.data_dir_bytes.is_some_and(|d| d > 0), "{reading:?}");

        // A container that dies is reported, with its name.
        assert_eq!(rt.exited(), None);
        docker
            .kill_container(
                &name,
                None::<bollard::query_parameters::KillContainerOptions>,
            )
            .await
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let died = loop {
            if let Some(d) = rt.exited() {
                break d;
            }
            assert!(
                Instant::now() < deadline,
                "exited() did not report the kill"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!(died.0, "chain");
        assert!(died.1.contains("137"), "{died:?}");

        rt.down().await.unwrap();
        rt.down().await.unwrap();
        let log = std::fs::read_to_string(run_dir.join("chain.log")).unwrap();
        assert!(log.contains("Version 0.24.2"), "chain.log: {log}");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(run_dir.join("chain/rpc.cert"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    });
    assert_nothing_left(&run_id, "");
}

/// A node that fails to start: the run fails (exit 3) with the last lines of its
/// container's log, and nothing of the run is left.
#[test]
fn a_node_that_fails_to_start_shows_its_log_and_leaves_nothing() {
    let _engine = ENGINE.lock().unwrap_or_else(|e| e.into_inner());
    if engine_ready(&[]).is_none() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let scenario = work.path().join("bad-flag.yaml");
    let text = std::fs::read_to_string(repo_file(SCENARIO))
        .unwrap()
        .replace(
            "  bob:\n    implementation: lnd\n",
            "  bob:\n    implementation: lnd\n    args: [\"--no-such-flag\"]\n",
        );
    std::fs::write(&scenario, text).unwrap();
    let out = lnbench_command()
        .arg(&scenario)
        .arg("--run-dir")
        .arg(work.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("node bob exited early"), "{stderr}");
    assert!(
        stderr.contains("no-such-flag"),
        "the log's last lines: {stderr}"
    );
    let run_id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("run ")?.split(':').next())
        .unwrap()
        .to_string();
    assert_nothing_left(&run_id, &stderr);
}

/// A node whose container dies in the middle of the load ends the run (exit 3, its
/// log's last lines in the error) and the rest is torn down.
#[test]
fn a_node_that_dies_during_the_load_ends_the_run_and_leaves_nothing() {
    let Some((_engine, mut run)) = run_under_load() else {
        return;
    };
    let run_id = run.run_id();
    block_on(async {
        let docker = Docker::connect_with_defaults().unwrap();
        let filters = HashMap::from([(
            "label",
            vec![
                format!("lnbench.run={run_id}"),
                "lnbench.node=bob".to_string(),
            ],
        )]);
        let bob = docker
            .list_containers(Some(
                ListContainersOptionsBuilder::default()
                    .filters(&filters)
                    .build(),
            ))
            .await
            .unwrap();
        assert_eq!(bob.len(), 1, "{bob:?}");
        docker
            .kill_container(
                bob[0].id.as_deref().unwrap(),
                None::<bollard::query_parameters::KillContainerOptions>,
            )
            .await
            .unwrap();
    });
    let (status, log) = run.wait_exit(Duration::from_secs(120));
    assert_eq!(status.code(), Some(3), "exit status {status:?}\n{log}");
    assert!(
        log.contains("bob exited during the load (exit code 137)"),
        "{log}"
    );
    assert_nothing_left(&run_id, &log);
}

/// Dropping the runtime without `down` (a panic unwinding past the run) still removes
/// the run's containers and network.
#[test]
fn dropping_the_runtime_without_down_removes_the_run() {
    use lnbench_tui::runtime::Starts;
    use lnbench_tui::runtime::docker::{DockerRuntime, RunImages};
    let _engine = ENGINE.lock().unwrap_or_else(|e| e.into_inner());
    if engine_ready(&[]).is_none() {
        return;
    }
    lnbench_tui::tls::install_crypto_provider();
    let work = tempfile::tempdir().unwrap();
    let run_id = format!("drop-test-{}", std::process::id());
    block_on(async {
        let docker = lnbench_tui::runtime::docker::connect().await.unwrap();
        let images = RunImages {
            chain: "lnbench/btcd:v0.24.2".into(),
            nodes: Vec::new(),
            postgres: None,
        };
        let mut rt =
            DockerRuntime::new(docker, images, &run_id, "t", work.path().join("run"), false);
        let spec = lnbench_tui::scenario::ChainSpec {
            kind: lnbench_tui::scenario::ChainKind::Btcd,
            binary: None,
            image: None,
            args: Vec::new(),
        };
        let wallet = lnbench_tui::chain::MiningWallet::generate();
        rt.start_chain(&spec, &wallet.address()).await.unwrap();
        assert_eq!(labelled_now(Some(&run_id)).await.0.len(), 1);
        drop(rt);
    });
    assert_nothing_left(&run_id, "");
    assert!(
        !work.path().join("run").exists(),
        "the run dir is removed without --keep"
    );
}
