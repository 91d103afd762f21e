//! The orchestration on the fake runtime: plans, networks, points, signals at each
//! phase, a node that dies, a matrix with a skipped and a failed network, and the
//! report written on each path. No process is started; each test takes well under a
//! second of load.

use super::{Choose, Chosen, RunOptions, Signals, execute_with};
use crate::exit::Exit;
use crate::runtime::fake::{FakeRuntime, FakeScript, Phase};
use crate::scenario::{Scenario, parse};
use anyhow::Result;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const PAIR: &str = "
name: fake-pair
runtime: docker
chain: { implementation: bitcoind }
nodes:
  alice: { implementation: lnd }
  bob: { implementation: lnd }
channels:
  - { from: alice, to: bob, capacity_sat: 5000000 }
workload:
  kind: invoice
  senders: [alice]
  receiver: bob
  amount_msat: 1000
  concurrency: 2
  stop: { payments: 40 }
  payment_timeout: 10s
";

fn scenario(extra: &str) -> Scenario {
    parse(
        Path::new("fake.yaml"),
        &format!("{PAIR}{extra}"),
        crate::runtime::capabilities,
    )
    .unwrap()
}

type Script = dyn Fn(&Scenario) -> Result<FakeScript> + Send + Sync;

/// Hands out a fake runtime per network, scripted by what the network's scenario
/// holds; counts the networks it was asked for.
struct Fakes {
    script: Box<Script>,
    asked: AtomicUsize,
}

#[async_trait::async_trait]
impl Choose for Fakes {
    async fn choose(&self, scenario: &Scenario) -> Result<Chosen> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let script = (self.script)(scenario)?;
        Ok(Chosen::made(Box::new(move |dir: &Path| {
            Box::new(FakeRuntime::new(script, dir)) as Box<dyn crate::runtime::Runtime>
        })))
    }
}

fn fakes(script: impl Fn(&Scenario) -> Result<FakeScript> + Send + Sync + 'static) -> Fakes {
    Fakes {
        script: Box::new(script),
        asked: AtomicUsize::new(0),
    }
}

struct Dirs {
    _root: tempfile::TempDir,
    opts: RunOptions,
}

impl Dirs {
    fn new() -> Dirs {
        let root = tempfile::tempdir().unwrap();
        let opts = RunOptions {
            report_dir: Some(root.path().join("report")),
            run_dir_parent: Some(root.path().join("runs")),
            ..RunOptions::default()
        };
        Dirs { _root: root, opts }
    }

    fn report(&self, sub: &str) -> serde_json::Value {
        let dir = self.opts.report_dir.as_ref().unwrap().join(sub);
        let text = std::fs::read_to_string(dir.join("report.json"))
            .unwrap_or_else(|e| panic!("no report.json in {}: {e}", dir.display()));
        let report = serde_json::from_str(&text).unwrap();
        matches_schema(&report, "docs/report.schema.json");
        report
    }

    fn sweep_report(&self) -> serde_json::Value {
        let path = self.opts.report_dir.as_ref().unwrap().join("sweep.json");
        let report = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        matches_schema(&report, "docs/sweep.schema.json");
        report
    }

    /// Run directories left behind (teardown removes each).
    fn runs_left(&self) -> usize {
        let parent = self.opts.run_dir_parent.as_ref().unwrap();
        std::fs::read_dir(parent).map_or(0, |d| d.count())
    }
}

/// Every report a test reads is checked against its published schema, on every path
/// (complete, partial, failed network, skipped point).
fn matches_schema(report: &serde_json::Value, schema: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(schema);
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = (validator.iter_errors(report))
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

fn quick() -> FakeScript {
    FakeScript {
        latency: Duration::from_millis(1),
        ..FakeScript::default()
    }
}

/// A load long enough to be interrupted: 400 payments of 5 ms, two at a time (1 s).
fn long(script: FakeScript) -> FakeScript {
    FakeScript {
        latency: Duration::from_millis(5),
        ..script
    }
}

fn long_scenario() -> Scenario {
    let mut s = scenario("");
    s.workload.stop.payments = Some(400);
    s
}

#[tokio::test]
async fn a_plain_run_measures_every_payment_reports_and_tears_down() {
    let dirs = Dirs::new();
    let downs = Arc::new(AtomicUsize::new(0));
    let d = downs.clone();
    let runtimes = fakes(move |_| {
        Ok(FakeScript {
            downs: d.clone(),
            ..quick()
        })
    });
    let exit = execute_with(scenario(""), &dirs.opts, &runtimes, Signals::manual())
        .await
        .unwrap();
    assert_eq!(exit, Exit::Ok);
    let report = dirs.report("");
    assert_eq!(report["complete"], true, "{report}");
    assert_eq!(report["results"]["ok"], 40);
    assert_eq!(report["runtime"], "fake");
    assert_eq!(downs.load(Ordering::SeqCst), 1);
    assert_eq!(dirs.runs_left(), 0);
    // One point: no combined report.
    assert!(
        !dirs
            .opts
            .report_dir
            .as_ref()
            .unwrap()
            .join("sweep.json")
            .exists()
    );
}

#[tokio::test]
async fn a_sweep_runs_its_points_on_one_network_and_writes_the_combined_report() {
    let dirs = Dirs::new();
    let runtimes = fakes(|_| Ok(quick()));
    let s = scenario("sweep:\n  concurrency: [1, 2, 3]\n");
    let exit = execute_with(s, &dirs.opts, &runtimes, Signals::manual())
        .await
        .unwrap();
    assert_eq!(exit, Exit::Ok);
    // Only the load changes: one network for the three points.
    assert_eq!(runtimes.asked.load(Ordering::SeqCst), 1);
    let root = dirs.opts.report_dir.clone().unwrap();
    for (i, label) in ["concurrency=1", "concurrency=2", "concurrency=3"]
        .iter()
        .enumerate()
    {
        let report = dirs.report(label);
        assert_eq!(report["results"]["ok"], 40, "{label}");
        // Each point's report names its point and links back to the sweep's page.
        let name = format!("point {}/3: {label}", i + 1);
        assert_eq!(report["point"], name.as_str());
        let html = std::fs::read_to_string(root.join(label).join("report.html")).unwrap();
        // As the page escapes it (`/` too).
        let title = format!(
            "<title>lnbench-tui report: {}, {}</title>",
            report["scenario"]["name"].as_str().unwrap(),
            name.replace('/', "&#x2f;")
        );
        assert!(html.contains(&title), "{title} not in the page");
        assert!(
            html.contains(r#"<a href="../sweep.html">"#),
            "no link to the sweep"
        );
        assert!(root.join(label).join("../sweep.html").is_file());
        let md = std::fs::read_to_string(root.join(label).join("summary.md")).unwrap();
        assert!(md.lines().next().unwrap().contains(&name), "{md}");
    }
    let sweep = dirs.sweep_report();
    assert_eq!(sweep["complete"], true);
    let status: Vec<_> = (sweep["points"].as_array().unwrap().iter())
        .map(|p| p["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(status, ["done", "done", "done"]);
    assert_eq!(dirs.runs_left(), 0);
}

#[tokio::test]
async fn a_matrix_skips_what_cannot_run_fails_a_network_that_does_not_come_up_and_goes_on() {
    let dirs = Dirs::new();
    // LDK at the pinned commit has no PostgreSQL (skipped before anything starts);
    // LDK's other network fails its setup; LND's two networks run.
    let runtimes = fakes(|s| {
        let ldk = s.nodes.iter().any(|n| n.implementation.as_str() == "ldk");
        Ok(FakeScript {
            setup_error: ldk.then(|| "ldk-server did not start (scripted)".to_string()),
            ..quick()
        })
    });
    let s = scenario("sweep:\n  implementation: [lnd, ldk]\n  database: [default, postgres]\n");
    let err = execute_with(s, &dirs.opts, &runtimes, Signals::manual())
        .await
        .unwrap_err();
    assert!(
        format!("{err:#}").contains("1 network(s) of the matrix did not come up"),
        "{err:#}"
    );
    assert_eq!(runtimes.asked.load(Ordering::SeqCst), 3);
    let sweep = dirs.sweep_report();
    let points = sweep["points"].as_array().unwrap();
    let by_label = |label: &str| {
        (points.iter())
            .find(|p| p["label"].as_str().unwrap().contains(label))
            .unwrap_or_else(|| panic!("no point {label} in {sweep}"))
    };
    assert_eq!(by_label("lnd,database=default")["status"], "done");
    assert_eq!(by_label("lnd,database=postgres")["status"], "done");
    let failed = by_label("ldk,database=default");
    assert_eq!(failed["status"], "failed");
    assert!(failed["reason"].as_str().unwrap().contains("scripted"));
    assert_eq!(by_label("ldk,database=postgres")["status"], "skipped");
    assert_eq!(dirs.runs_left(), 0);
}

#[tokio::test]
async fn a_node_that_dies_ends_the_load_and_the_report_says_so() {
    let dirs = Dirs::new();
    let runtimes = fakes(|_| {
        Ok(long(FakeScript {
            dies: Some(("bob".into(), Duration::from_millis(100))),
            ..FakeScript::default()
        }))
    });
    let err = execute_with(long_scenario(), &dirs.opts, &runtimes, Signals::manual())
        .await
        .unwrap_err();
    assert!(
        format!("{err:#}").contains("bob exited during the load"),
        "{err:#}"
    );
    let report = dirs.report("");
    assert_eq!(report["complete"], false);
    let why = report["interrupted_by"].as_str().unwrap();
    assert!(why.contains("bob exited"), "{why}");
    assert!(report["results"]["ok"].as_u64().unwrap() < 400);
    assert_eq!(dirs.runs_left(), 0);
}

/// Runs the long scenario with SIGINT raised at `phase`; returns the exit code and
/// how many teardowns ran.
async fn interrupted_at(phase: Phase, dirs: &Dirs) -> (Exit, usize) {
    interrupted_by("SIGINT", phase, dirs).await
}

/// [`interrupted_at`] with the signal `name`.
async fn interrupted_by(name: &'static str, phase: Phase, dirs: &Dirs) -> (Exit, usize) {
    let signals = Signals::manual();
    let raise: Arc<dyn Fn() + Send + Sync> = Arc::new(signals.raiser(name));
    let downs = Arc::new(AtomicUsize::new(0));
    let d = downs.clone();
    let runtimes = fakes(move |_| {
        Ok(long(FakeScript {
            setup_delay: Duration::from_millis(50),
            hook: Some((phase, raise.clone())),
            downs: d.clone(),
            ..FakeScript::default()
        }))
    });
    let exit = execute_with(long_scenario(), &dirs.opts, &runtimes, signals)
        .await
        .unwrap();
    (exit, downs.load(Ordering::SeqCst))
}

#[tokio::test]
async fn ctrl_c_during_setup_tears_down_and_writes_a_partial_report() {
    let dirs = Dirs::new();
    let (exit, downs) = interrupted_at(Phase::Setup, &dirs).await;
    assert_eq!(exit, Exit::Interrupted);
    assert_eq!(downs, 1);
    let report = dirs.report("");
    assert_eq!(report["complete"], false);
    assert_eq!(report["interrupted_by"], "SIGINT");
    assert_eq!(report["results"]["ok"], 0);
    assert_eq!(dirs.runs_left(), 0);
}

/// `signal` 100 ms into the load: the load stops, the exit code is the signal's, the
/// partial report names it and holds what was paid, and teardown ran.
async fn signal_during_the_load(signal: &'static str, code: Exit) {
    let dirs = Dirs::new();
    let (exit, downs) =
        interrupted_by(signal, Phase::Load(Duration::from_millis(100)), &dirs).await;
    assert_eq!(exit, code, "{signal}");
    assert_eq!(downs, 1);
    let report = dirs.report("");
    assert_eq!(report["complete"], false);
    assert_eq!(report["interrupted_by"], signal);
    let ok = report["results"]["ok"].as_u64().unwrap();
    assert!(ok > 0 && ok < 400, "{signal}: {ok} payments");
    assert_eq!(dirs.runs_left(), 0);
}

#[tokio::test]
async fn ctrl_c_during_the_load_stops_it_reports_what_was_done_and_tears_down() {
    signal_during_the_load("SIGINT", Exit::Interrupted).await;
}

#[tokio::test]
async fn sighup_during_the_load_is_handled_like_sigterm() {
    signal_during_the_load("SIGHUP", Exit::HungUp).await;
}

#[tokio::test]
async fn sigterm_during_the_load_exits_143_with_a_partial_report() {
    signal_during_the_load("SIGTERM", Exit::Terminated).await;
    assert_eq!(Exit::Terminated as u8, 143);
}

/// A second signal during the load exits at once; what was recorded until then is
/// still written, as a schema-valid partial report that says so.
#[tokio::test]
async fn a_second_signal_during_the_load_still_writes_what_was_recorded() {
    let dirs = Dirs::new();
    let signals = Signals::manual();
    let (force, raise) = (signals.forcer("SIGINT"), signals.raiser("SIGINT"));
    let dir = dirs.opts.report_dir.clone().unwrap();
    let seen = Arc::new(std::sync::Mutex::new(None));
    let keep = seen.clone();
    let hook: Arc<dyn Fn() + Send + Sync> = Arc::new(move || {
        force();
        *keep.lock().unwrap() = std::fs::read_to_string(dir.join("report.json")).ok();
        raise();
    });
    let runtimes = fakes(move |_| {
        Ok(long(FakeScript {
            hook: Some((Phase::Load(Duration::from_millis(100)), hook.clone())),
            ..FakeScript::default()
        }))
    });
    execute_with(long_scenario(), &dirs.opts, &runtimes, signals)
        .await
        .unwrap();
    let text = seen
        .lock()
        .unwrap()
        .take()
        .expect("no report at the forced exit");
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    matches_schema(&report, "docs/report.schema.json");
    assert_eq!(report["complete"], false);
    let why = report["interrupted_by"].as_str().unwrap();
    assert!(why.starts_with("SIGINT, then a second signal"), "{why}");
    let ok = report["results"]["ok"].as_u64().unwrap();
    assert!(ok > 0 && ok < 400, "{ok} payments");
}

#[tokio::test]
async fn ctrl_c_during_teardown_keeps_the_complete_report_and_exits_interrupted() {
    let dirs = Dirs::new();
    let (exit, downs) = interrupted_at(Phase::Teardown, &dirs).await;
    assert_eq!(exit, Exit::Interrupted);
    assert_eq!(downs, 1);
    // The report was written before teardown began, from a load that ran to its end.
    let report = dirs.report("");
    assert_eq!(report["complete"], true);
    assert_eq!(report["results"]["ok"], 400);
    assert_eq!(dirs.runs_left(), 0);
}

#[tokio::test]
async fn ctrl_c_in_a_sweep_stops_before_the_next_network_and_marks_the_rest_not_run() {
    let dirs = Dirs::new();
    let signals = Signals::manual();
    let raise: Arc<dyn Fn() + Send + Sync> = Arc::new(signals.raiser("SIGINT"));
    let runtimes = fakes(move |_| {
        Ok(long(FakeScript {
            hook: Some((Phase::Load(Duration::from_millis(100)), raise.clone())),
            ..FakeScript::default()
        }))
    });
    let mut s = scenario("sweep:\n  implementation: [lnd, lnd@v0.20.0-beta]\n");
    for p in &mut s.sweep.as_mut().unwrap().points {
        p.scenario.workload.stop.payments = Some(400);
    }
    let exit = execute_with(s, &dirs.opts, &runtimes, signals)
        .await
        .unwrap();
    assert_eq!(exit, Exit::Interrupted);
    assert_eq!(
        runtimes.asked.load(Ordering::SeqCst),
        1,
        "no second network"
    );
    let sweep = dirs.sweep_report();
    assert_eq!(sweep["complete"], false);
    assert_eq!(sweep["interrupted_by"], "SIGINT");
    let status: Vec<_> = (sweep["points"].as_array().unwrap().iter())
        .map(|p| p["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(status, ["partial", "not-run"]);
    assert_eq!(dirs.runs_left(), 0);
}

#[tokio::test]
async fn a_runtime_that_cannot_be_had_fails_the_run_before_anything_starts() {
    let dirs = Dirs::new();
    let runtimes = fakes(|_| anyhow::bail!("no engine answers (scripted)"));
    let err = execute_with(scenario(""), &dirs.opts, &runtimes, Signals::manual())
        .await
        .unwrap_err();
    assert!(format!("{err:#}").contains("scripted"), "{err:#}");
    assert_eq!(dirs.runs_left(), 0);
}

#[tokio::test]
async fn a_report_directory_that_fails_after_the_load_does_not_lose_the_results() {
    let dirs = Dirs::new();
    let report_dir = dirs.opts.report_dir.clone().unwrap();
    // During the load, a regular file takes the report directory's place.
    let plant: Arc<dyn Fn() + Send + Sync> = Arc::new(move || {
        std::fs::write(&report_dir, "not a directory").unwrap();
    });
    let runtimes = fakes(move |_| {
        Ok(long(FakeScript {
            hook: Some((Phase::Load(Duration::from_millis(50)), plant.clone())),
            ..FakeScript::default()
        }))
    });
    let err = execute_with(long_scenario(), &dirs.opts, &runtimes, Signals::manual())
        .await
        .unwrap_err();
    let why = format!("{err:#}");
    assert!(why.contains("could not be written into"), "{why}");
    // Teardown removed the run directory; the report beside it stayed, whole.
    let runs = dirs.opts.run_dir_parent.as_ref().unwrap();
    let kept: Vec<_> = std::fs::read_dir(runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(why.contains(&kept[0].display().to_string()), "{why}");
    let text = std::fs::read_to_string(kept[0].join("report.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(report["results"]["ok"], 400);
    assert!(kept[0].join(crate::metrics::hlog::FILE_NAME).exists());
}

/// One element of a JUnit file: its name, attributes and the names of its children.
#[derive(Debug, Default)]
struct Element {
    name: String,
    attrs: std::collections::HashMap<String, String>,
    children: Vec<Element>,
}

/// The element tree of an XML text (quick-xml's events, folded).
fn parse_xml(text: &str) -> Element {
    use quick_xml::events::{BytesStart, Event};
    let element = |e: &BytesStart| Element {
        name: String::from_utf8(e.name().as_ref().to_vec()).unwrap(),
        attrs: (e.attributes().map(Result::unwrap))
            .map(|a| {
                let key = String::from_utf8(a.key.as_ref().to_vec()).unwrap();
                (
                    key,
                    a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .unwrap()
                        .into_owned(),
                )
            })
            .collect(),
        children: Vec::new(),
    };
    let mut reader = quick_xml::Reader::from_str(text);
    let mut stack = vec![Element::default()];
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) => stack.push(element(&e)),
            Event::Empty(e) => stack.last_mut().unwrap().children.push(element(&e)),
            Event::End(_) => {
                let done = stack.pop().unwrap();
                stack.last_mut().unwrap().children.push(done);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(stack.len(), 1, "unclosed elements");
    stack.pop().unwrap().children.pop().expect("a root element")
}

#[tokio::test]
async fn junit_has_a_suite_per_point_and_a_case_per_threshold() {
    let mut dirs = Dirs::new();
    let junit = dirs.opts.report_dir.clone().unwrap().join("ci/junit.xml");
    dirs.opts.junit = Some(junit.clone());
    let runtimes = fakes(|_| Ok(quick()));
    let s = scenario(
        "thresholds:\n  p99_latency: 10s\n  min_tps: 1000000000\n\
         sweep:\n  concurrency: [1, 2]\n",
    );
    let exit = execute_with(s, &dirs.opts, &runtimes, Signals::manual())
        .await
        .unwrap();
    assert_eq!(exit, Exit::ThresholdFailed);
    let root = parse_xml(&std::fs::read_to_string(&junit).unwrap());
    assert_eq!(root.name, "testsuites");
    assert_eq!(
        (
            root.attrs["tests"].as_str(),
            root.attrs["failures"].as_str()
        ),
        ("4", "2")
    );
    let labels: Vec<_> = root
        .children
        .iter()
        .map(|s| s.attrs["name"].as_str())
        .collect();
    assert_eq!(
        labels,
        ["fake-pair/concurrency=1", "fake-pair/concurrency=2"]
    );
    for suite in &root.children {
        assert_eq!(suite.name, "testsuite");
        assert_eq!(
            (
                suite.attrs["tests"].as_str(),
                suite.attrs["failures"].as_str()
            ),
            ("2", "1")
        );
        let cases: Vec<_> = suite
            .children
            .iter()
            .map(|c| c.attrs["name"].as_str())
            .collect();
        assert_eq!(cases, ["p99_latency", "min_tps"]);
        for case in &suite.children {
            assert_eq!(case.name, "testcase");
            assert_eq!(case.attrs["classname"], suite.attrs["name"]);
        }
        assert!(suite.children[0].children.is_empty(), "p99 passed");
        let failure = &suite.children[1].children[0];
        assert_eq!(failure.name, "failure");
        assert!(
            failure.attrs["message"].starts_with("min_tps: "),
            "{failure:?}"
        );
    }
}

mod bring_up;
mod caps;
mod failed_setup;
mod reconcile;
mod shipped;

#[tokio::test]
async fn a_snapshot_on_a_runtime_that_keeps_no_data_here_is_refused_and_torn_down() {
    let mut dirs = Dirs::new();
    dirs.opts.snapshot = Some("snap".into());
    let downs = Arc::new(AtomicUsize::new(0));
    let d = downs.clone();
    let runtimes = fakes(move |_| {
        Ok(FakeScript {
            downs: d.clone(),
            ..quick()
        })
    });
    let result = execute_with(scenario(""), &dirs.opts, &runtimes, Signals::manual()).await;
    let err = result.expect_err("refused");
    assert_eq!(crate::exit_code_for(&err), Exit::BadInput, "{err:#}");
    let text = format!("{err:#}");
    assert!(
        text.contains("fake.yaml:3:1: snapshots are kept for the local and docker runtimes only"),
        "{text}"
    );
    assert_eq!(downs.load(Ordering::SeqCst), 1);
    assert_eq!(dirs.runs_left(), 0);
}
