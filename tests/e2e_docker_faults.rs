//! Node faults on a real Docker engine, through the binary: bob's container killed and
//! started again, then alice's frozen (the engine's pause) and thawed, while alice pays
//! bob's invoices. Bob's RPC makes every invoice, so payments after his restart show
//! that the run's client still reaches him (his host port is fixed when his container
//! is created). Then the peer link through the fault proxy's container: 50 ms each way,
//! then a partition. The report's fault windows and ways back, the channels at the
//! end, and nothing of the run left in the engine. Not run (and said so) when no
//! engine answers.

mod common;

use common::docker::{assert_nothing_left_in_engine, engine};
use common::scenario_run::{Finished, fault, killed_node_back, lnd_pair};
use serde_json::Value;

fn scenario() -> String {
    // LND's mission control would refuse alice's direct route for about a minute after
    // a payment failed on it as bob died (docs/scenarios/crash-recovery.md).
    let pair = lnd_pair("e2e-docker-faults", "runtime: docker\npull: never\n", 2000000, 2)
        .replace("kind: keysend", "kind: invoice")
        .replace(
            "  alice:\n    implementation: lnd\n",
            "  alice:\n    implementation: lnd\n    args: [\"--routerrpc.apriori.penaltyhalflife=10s\"]\n",
        );
    assert!(pair.contains("penaltyhalflife"), "{pair}");
    pair + "  amount_msat: 1000
  rate:
    hold: { rate: 5, duration: 50s }
  stop:
    duration: 50s
  payment_timeout: 20s
faults:
  - at: 10s
    kill: bob
    restart_after: 4s
  - at: 32s
    pause: alice
    for: 3s
"
}

fn report_of(run: &Finished) -> Value {
    let report = run.report_json();
    assert!(
        report["runtime"]
            .as_str()
            .is_some_and(|r| r.starts_with("docker (")),
        "{}",
        report["runtime"]
    );
    report
}

#[test]
fn a_killed_and_a_paused_container_recover() {
    if engine().is_none() {
        return;
    }
    let run = Finished::run(&scenario());
    let log = &run.log;
    assert_eq!(run.status.code(), Some(0), "{log}");
    let report = report_of(&run);

    let k = killed_node_back(&report, "kill bob", "docker kill");
    assert!(k["during"]["ok"].as_u64().unwrap() <= 5, "{k:#}");
    // Invoices from bob's RPC again, through the client made before the kill.
    assert!(k["after"]["ok"].as_u64().unwrap() > 0, "{k:#}");
    assert!(
        k["recovered_after_s"].as_f64().is_some(),
        "TPS came back after the kill: {k:#}"
    );

    let p = fault(&report, "pause alice");
    eprintln!("docker pause: {p:#}");
    assert!(p["error"].is_null(), "{p:#}");
    let (began, ended) = (
        p["began_s"].as_f64().unwrap(),
        p["ended_s"].as_f64().unwrap(),
    );
    assert!((2.5..=5.0).contains(&(ended - began)), "{p:#}");
    // A frozen payer finishes nothing while frozen.
    assert!(p["during"]["ok"].as_u64().unwrap() <= 5, "{p:#}");
    assert!(
        p["recovered_after_s"].as_f64().is_some(),
        "TPS came back after the pause: {p:#}"
    );

    let health = report["channel_health"].as_array().expect("channel_health");
    assert_eq!(health.len(), 2, "{health:?}");
    for h in health {
        assert_eq!(h["health"]["force_closed"], 0, "{h}");
        assert_eq!(h["health"]["active"], 2, "{h}");
    }
    assert_nothing_left_in_engine(log);
}

/// One keysend at a time; 10 s in, 50 ms each way on the link for 10 s (a keysend
/// crosses it about four times: ~200 ms more); 26 s in, a partition for 4 s, in which
/// the payment in flight waits.
#[test]
fn a_slow_link_and_a_partition_through_the_proxy_container() {
    let Some(docker) = engine() else {
        return;
    };
    let image = lnbench_tui::runtime::docker::toxiproxy::IMAGE;
    assert!(
        common::docker::block_on(docker.inspect_image(image)).is_ok(),
        "image {image} is missing: run scripts/build-images.sh"
    );
    let scenario = lnd_pair(
        "e2e-docker-links",
        "runtime: docker\npull: never\n",
        2000000,
        2,
    ) + "  amount_msat: 1000
  concurrency: 1
  stop:
    duration: 40s
  payment_timeout: 20s
faults:
  - at: 10s
    link: [alice, bob]
    latency: 50ms
    for: 10s
  - at: 26s
    link: [alice, bob]
    down: true
    for: 4s
";
    let run = Finished::run(&scenario);
    let log = &run.log;
    assert_eq!(run.status.code(), Some(0), "{log}");
    let report = report_of(&run);
    let slow = fault(&report, "latency alice–bob");
    eprintln!("docker latency: {slow:#}");
    assert!(slow["error"].is_null() && slow["links"] == 1, "{slow:#}");
    // Per-second p50 of successful payments, in ms, between two load times.
    let series = report["results"]["series"].as_array().unwrap();
    let p50 = |from: f64, to: f64| {
        let mut v: Vec<f64> = (series.iter())
            .filter(|p| p["ok"].as_u64() > Some(0))
            .filter(|p| (from..to).contains(&p["at_s"].as_f64().unwrap()))
            .map(|p| p["p50_us"].as_f64().unwrap() / 1000.0)
            .collect();
        assert!(!v.is_empty(), "payments between {from} and {to} s");
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let began = slow["began_s"].as_f64().unwrap();
    let (before, during) = (p50(3.0, began), p50(began + 2.0, began + 10.0));
    eprintln!("p50 {before:.0} ms before, {during:.0} ms with 50 ms each way");
    assert!(
        (150.0..=800.0).contains(&(during - before)),
        "p50 {before:.0} -> {during:.0} ms; expected about 200 ms more"
    );
    let cut = fault(&report, "partition alice–bob");
    eprintln!("docker partition: {cut:#}");
    // The one payment in flight waits out the partition (closed loop): nothing
    // completes during it, and the load goes on after.
    assert!(cut["during"]["ok"].as_u64().unwrap() <= 1, "{cut:#}");
    assert!(cut["after"]["ok"].as_u64().unwrap() > 0, "{cut:#}");
    assert!(cut["recovered_after_s"].as_f64().is_some(), "{cut:#}");
    let services = report["services"].as_array().unwrap();
    assert!(
        services.iter().any(|s| s["name"] == "toxiproxy"),
        "{services:?}"
    );
    assert_nothing_left_in_engine(log);
}
