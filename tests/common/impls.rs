//! The end-to-end tests every implementation on Bitcoin Core runs alike (Core
//! Lightning, Eclair, LDK), written once and parameterised by [`Impl`]: each test file
//! keeps one `#[test]` per implementation that calls the body here, so each is
//! counted, and fails, on its own.

use super::docker::{block_on, labelled};
use super::scenario_run::{ScenarioRun as Run, assert_nothing_left, node};
use super::{
    CLN_BUILD, ECLAIR_BUILD, LDK_BUILD, built_on_bitcoind, processes_mentioning,
    processes_with_passwords, repo_file, scenario_fixture, yaml,
};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};
use std::time::Duration;

/// What differs between the implementations in the tests they share (and, in
/// [`Impl::version_is`], [`Impl::bob_process`] and [`Impl::log_tail_is_bobs`], what
/// their nodes show).
pub struct Impl {
    pub implementation: lnbench_tui::node::Implementation,
    /// As the scenario and the report name it (`cln`); its fixture, the pair paying
    /// itself, is tests/fixtures/scenarios/valid/`<name>-pays-<name>.yaml`.
    pub name: &'static str,
    /// As people name it, in scenario descriptions.
    pub label: &'static str,
    /// The binary the build cache must hold, and the report's `binary` ends with.
    pub binary: &'static str,
    /// How to build it, for [`built_on_bitcoind`].
    pub build: &'static str,
    /// How the fixture's payments are made (`keysend`, or `invoice` where there is
    /// no keysend).
    pub kind: &'static str,
    /// Channels between LND and this implementation in [`Impl::mixed`].
    pub mixed_channels: u32,
}

pub const CLN: Impl = Impl {
    implementation: lnbench_tui::node::Implementation::Cln,
    name: "cln",
    label: "Core Lightning",
    binary: "lightningd",
    build: CLN_BUILD,
    kind: "keysend",
    mixed_channels: 5,
};

pub const ECLAIR: Impl = Impl {
    implementation: lnbench_tui::node::Implementation::Eclair,
    name: "eclair",
    label: "Eclair",
    binary: "eclair-node",
    build: ECLAIR_BUILD,
    kind: "keysend",
    mixed_channels: 2,
};

/// ldk-server at the pinned commit has no keysend.
pub const LDK: Impl = Impl {
    implementation: lnbench_tui::node::Implementation::Ldk,
    name: "ldk",
    label: "LDK",
    binary: "ldk-server",
    build: LDK_BUILD,
    kind: "invoice",
    mixed_channels: 5,
};

impl Impl {
    /// Whether the report's node version is the pinned release.
    pub fn version_is(&self, version: &str) -> bool {
        match self.name {
            "cln" => version.starts_with("v26.06"),
            "eclair" => version.contains("0.13.0"),
            _ => version.starts_with("ldk-server v0.1.0 (source "),
        }
    }

    /// Whether a command line is bob's node process, the one to kill.
    pub fn bob_process(&self, cmd: &str) -> bool {
        match self.name {
            "cln" => cmd.contains("lightningd") && cmd.contains("--alias=bob"),
            // The JVM is the process started (the script execs it), named by bob's alias.
            "eclair" => cmd.contains("-Declair.node-alias=bob") && cmd.contains("java"),
            _ => cmd.contains("bob/ldk-server.toml"),
        }
    }

    /// Whether the run's output shows bob's own log after he died.
    pub fn log_tail_is_bobs(&self, log: &str) -> bool {
        let tail = log.split("last lines of its log").nth(1);
        match self.name {
            // Core Lightning's own lines, each with its level.
            "cln" => (log.split_once("last lines of its log:\n").map(|(_, t)| t))
                .and_then(|t| t.lines().next())
                .is_some_and(|l| l.contains("INFO") || l.contains("DEBUG")),
            // Eclair's own lines (printed to its stdout).
            "eclair" => log.contains("fr.acinq.eclair") || log.contains("f.a.e"),
            // Which lines it holds depends on what bob was doing when killed (a
            // received payment, or gossip and chain sync after it): only that it is
            // there is checked.
            _ => {
                (tail.unwrap_or_default().lines())
                    .filter(|l| !l.trim().is_empty())
                    .count()
                    >= 3
            }
        }
    }

    /// The fixture's path in the repository.
    fn fixture_path(&self) -> String {
        format!(
            "tests/fixtures/scenarios/valid/{0}-pays-{0}.yaml",
            self.name
        )
    }

    /// True when this implementation and bitcoind are built; otherwise records that
    /// `test` did not run.
    pub fn built(&self, test: &str) -> bool {
        built_on_bitcoind(test, self.binary, self.build)
    }

    /// The fixture as a value to edit, on the local runtime.
    pub fn fixture(&self) -> Value {
        let mut v = scenario_fixture(&format!("valid/{0}-pays-{0}.yaml", self.name));
        v["runtime"] = "local".into();
        v
    }

    /// The fixture's text as the file has it.
    pub fn fixture_text(&self) -> String {
        std::fs::read_to_string(repo_file(&self.fixture_path())).unwrap()
    }

    /// [`Run::succeeded`], the payments made by `kind`.
    pub fn paid(&self, run: &mut Run, payments: u64, kind: &str) -> (Value, String) {
        let (report, log) = run.succeeded(payments);
        assert_eq!(report["workload"]["kind"], kind);
        (report, log)
    }

    /// The setup steps shown, and alice and bob of this implementation at its pinned
    /// version, run from its binary.
    pub fn assert_pair_ran(&self, report: &Value, log: &str) {
        for step in [
            "chain up",
            "nodes up",
            "wallets funded",
            "channels active",
            "routes ready",
        ] {
            assert!(log.contains(step), "setup step {step:?} not shown:\n{log}");
        }
        for name in ["alice", "bob"] {
            let n = node(report, name);
            assert_eq!(n["implementation"], self.name, "{n:#}");
            let version = n["version"].as_str().unwrap();
            assert!(self.version_is(version), "{name}: {version}");
            assert!(
                n["binary"].as_str().unwrap().ends_with(self.binary),
                "{n:#}"
            );
        }
    }

    /// LND (alice) and this implementation (bob) on one chain, channels from `payer`,
    /// paid by `kind` (`keysend` or `invoice`: the payee makes the invoices).
    pub fn mixed(&self, payer: &str, payee: &str, kind: &str) -> Value {
        json!({
            "name": format!("{payer}-pays-{payee}-by-{kind}"),
            "description": format!("Can LND and {} pay each other?", self.label),
            "runtime": "local",
            "chain": { "implementation": "bitcoind" },
            "nodes": {
                "alice": { "implementation": "lnd" },
                "bob": { "implementation": self.name },
            },
            "channels": [{
                "from": payer, "to": payee, "capacity_sat": 5_000_000,
                "count": self.mixed_channels,
            }],
            "workload": {
                "kind": kind,
                "senders": [payer],
                "receiver": payee,
                "amount_msat": 1000,
                "concurrency": 5,
                "stop": { "payments": 2000 },
                "payment_timeout": "60s",
            },
        })
    }
}

/// Waits until the load has made payments: two progress lines that count some (the
/// JVM's first payments take a while: JIT).
pub fn wait_for_payments(run: &mut Run) {
    run.running.wait_for("payments made", 2, |l| {
        l.contains(" ok ") && l.contains("tps") && !l.contains(" ok 0 ")
    });
}

/// [`super::TEST_JVM_OPTIONS`] as the `args:` of every Eclair node of `scenario` (an
/// Eclair node's `args:` are JVM options): a container does not inherit the tool's
/// environment, where [`super::lnbench_command`] puts them for local nodes.
pub fn jvm_options_in_containers(scenario: &mut Value) {
    let Some(nodes) = scenario["nodes"].as_object_mut() else {
        return;
    };
    for node in nodes.values_mut() {
        if node["implementation"] == "eclair" {
            node["args"] = super::TEST_JVM_OPTIONS.to_vec().into();
        }
    }
}

/// The implementation pays itself in containers, its scenario changed by `adjust`: its
/// image and the chain's are there, the report names both, and nothing of the run is
/// left in the engine. The report, for the caller's own checks (None: not run here).
pub fn pays_itself_in_docker(
    imp: &Impl,
    test: &str,
    adjust: impl FnOnce(&mut Value),
) -> Option<Value> {
    if !imp.built(test) {
        return None;
    }
    let docker = super::docker::engine()?;
    let chain = lnbench_tui::chain::driver(lnbench_tui::chain::ChainKind::Bitcoind).local_image();
    let image = lnbench_tui::node::driver(imp.implementation)
        .program()
        .images(None)
        .local;
    for image in [&chain, &image] {
        assert!(
            block_on(docker.inspect_image(image)).is_ok(),
            "image {image} is missing: run scripts/build-images.sh (scripts/setup.sh --dev does)"
        );
    }
    let mut scenario = imp.fixture();
    scenario["runtime"] = "docker".into();
    jvm_options_in_containers(&mut scenario);
    adjust(&mut scenario);
    let mut run = Run::start(&yaml(&scenario), 200);
    let (report, log) = imp.paid(&mut run, 200, imp.kind);
    let runtime = report["runtime"].as_str().unwrap();
    assert!(
        runtime.contains(&image) && runtime.contains(&chain),
        "{runtime}"
    );
    assert_eq!(node(&report, "bob")["implementation"], imp.name);
    let run_id = run.running.run_id();
    let (containers, networks) = labelled(Some(&run_id));
    assert!(
        containers.is_empty() && networks.is_empty(),
        "left behind: {containers:?} {networks:?}\n{log}"
    );
    Some(report)
}

/// LND and the implementation pay each other, each `(payer, payee, kind)` a run of
/// [`Impl::mixed`]: the report names both implementations, the payer sends.
pub fn lnd_and_it_pay_each_other(imp: &Impl, test: &str, runs: &[(&str, &str, &str)]) {
    if !imp.built(test) {
        return;
    }
    for &(payer, payee, kind) in runs {
        let mut run = Run::start(&yaml(&imp.mixed(payer, payee, kind)), 200);
        let (report, log) = imp.paid(&mut run, 200, kind);
        assert_eq!(node(&report, "alice")["implementation"], "lnd");
        assert_eq!(node(&report, "bob")["implementation"], imp.name);
        assert_eq!(node(&report, payer)["role"], "sender");
        assert_nothing_left(&run.run_dir(), &log);
    }
}

/// SIGINT in the middle of the load: the tool exits with `exit` (or, where that is
/// None, with some failing code of its own), a partial report, no process left; while
/// it ran, no command line on the machine showed a password.
pub fn sigint_mid_load_leaves_nothing(imp: &Impl, test: &str, exit: Option<i32>) {
    if !imp.built(test) {
        return;
    }
    let mut run = Run::start(&yaml(&imp.fixture()), 1_000_000);
    wait_for_payments(&mut run);
    let with_passwords = processes_with_passwords();
    kill(Pid::from_raw(run.running.child.id() as i32), Signal::SIGINT).expect("SIGINT");
    let (status, log) = run.running.wait_exit(Duration::from_secs(120));
    assert!(
        status.code().is_some() && !status.success(),
        "exit status {status:?}\n{log}"
    );
    if exit.is_some() {
        assert_eq!(status.code(), exit, "exit status {status:?}\n{log}");
    }
    assert!(
        with_passwords.is_empty(),
        "passwords on command lines: {with_passwords:?}"
    );
    let report = run.report();
    assert_eq!(report["complete"], false);
    assert_eq!(report["interrupted_by"], "SIGINT");
    assert!(report["results"]["ok"].as_u64().unwrap() > 0);
    assert_nothing_left(&run.run_dir(), &log);
}

/// Bob's node process killed in the middle of the load ends the run: exit 3, bob
/// named, his log's last lines shown, a partial report, nothing left running.
pub fn a_node_killed_mid_load_ends_the_run_with_its_log(imp: &Impl, test: &str) {
    if !imp.built(test) {
        return;
    }
    let mut run = Run::start(&yaml(&imp.fixture()), 1_000_000);
    wait_for_payments(&mut run);
    let bob = processes_mentioning(&run.run_dir())
        .into_iter()
        .find(|(_, cmd)| imp.bob_process(cmd))
        .unwrap_or_else(|| panic!("bob's {} is running", imp.binary));
    kill(Pid::from_raw(bob.0 as i32), Signal::SIGKILL).expect("kill bob");
    let (status, log) = run.running.wait_exit(Duration::from_secs(120));
    assert_eq!(status.code(), Some(3), "exit status {status:?}\n{log}");
    assert!(log.contains("bob exited during the load"), "{log}");
    assert!(
        imp.log_tail_is_bobs(&log),
        "bob's log lines follow the notice:\n{log}"
    );
    let report = run.report();
    assert_eq!(report["complete"], false);
    assert!(
        report["interrupted_by"]
            .as_str()
            .unwrap()
            .contains("bob exited"),
        "{}",
        report["interrupted_by"]
    );
    assert_nothing_left(&run.run_dir(), &log);
}
