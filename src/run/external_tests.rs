//! The setup of `runtime: external` against fake LND nodes that report mainnet, through
//! the one bring-up (the external runtime starts nothing, so its nodes are reached): the
//! network is refused unless allowed, and with it allowed the caps are checked.

use super::*;
use crate::node::lnd::fake_grpc::FakeLnd;

/// Two fake LND nodes on mainnet, and a scenario of 5 keysends of 1000 msat between
/// them, run with `payments` (as `--payments` sets it after validation); `external` is
/// the scenario's `external:` block.
async fn mainnet_pair(dir: &std::path::Path, external: &str, payments: u64) -> Result<Network> {
    crate::tls::install_crypto_provider();
    let mut nodes = String::new();
    let mut fakes = Vec::new();
    for name in ["alice", "bob"] {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).unwrap();
        let fake = FakeLnd::start(&d).await.unwrap();
        fake.report_network("mainnet");
        nodes.push_str(&format!(
            "  {name}:\n    implementation: lnd\n    rpc: {}\n    tls_cert: {}\n    macaroon: {}\n",
            fake.addr,
            fake.credentials.tls_cert.display(),
            fake.credentials.macaroon.display()
        ));
        fakes.push(fake);
    }
    let yaml = format!(
        "name: mainnet-pair\nruntime: external\n{external}nodes:\n{nodes}workload:\n  \
         kind: keysend\n  senders: [alice]\n  receiver: bob\n  amount_msat: 1000\n  \
         concurrency: 1\n  stop: {{ payments: 5 }}\n"
    );
    let mut scenario =
        crate::scenario::parse(&dir.join("s.yaml"), &yaml, crate::runtime::capabilities).unwrap();
    scenario.workload.stop.payments = Some(payments);
    let (mut log, mut facts) = (StepLog::default(), RunFacts::default());
    // Through the one bring-up, on the runtime the scenario asks for: one that starts
    // nothing has its nodes reached.
    use super::super::choose::Choose;
    let chosen = super::super::choose::Runtimes.choose(&scenario).await?;
    let run_dir = dir.join("run");
    let place = crate::runtime::Place {
        run_id: "t",
        scenario: &scenario.name,
        run_dir: &run_dir,
        keep: true,
    };
    let mut runtime = chosen.create(&place);
    super::super::bring_up::bring_up(&scenario, runtime.as_mut(), &mut log, &mut facts).await
}

#[tokio::test]
async fn a_node_on_mainnet_is_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let e = mainnet_pair(dir.path(), "", 10)
        .await
        .err()
        .expect("refused");
    let e = format!("{e:#}");
    assert!(e.contains("runs on mainnet: refused"), "{e}");
}

#[tokio::test]
async fn with_mainnet_allowed_the_caps_are_checked_before_any_node_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let caps = "external: { allow_mainnet: true, max_payment_msat: 1000, max_total_msat: 5000 }\n";
    // --payments 10: 10 payments of 1000 msat, over the total (validation saw 5).
    let e = mainnet_pair(dir.path(), caps, 10).await;
    let e = format!("{:#}", e.err().expect("refused"));
    assert!(e.contains("exceed the mainnet caps"), "{e}");
    // 5 payments fit: the nodes on mainnet are taken, no probe payment is made.
    let network = mainnet_pair(dir.path(), caps, 5).await.expect("allowed");
    assert_eq!(network.nodes.len(), 2);
}
