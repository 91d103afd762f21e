//! Node faults on a real Docker engine, through the binary: bob's container killed and
//! started again, then alice's frozen (the engine's pause) and thawed, while alice pays
//! bob's invoices. Bob's RPC makes every invoice, so payments after his restart show
//! that the run's client still reaches him (his host port is fixed when his container
//! is created). Then, on the same network, the peer link through the fault proxy's
//! container: 50 ms each way, then a partition; then background mining stopped, a
//! burst and resumed. The report's fault windows and ways back, the channels at the
//! end, and nothing of the run left in the engine. Not run (and said so) when no
//! engine answers.

use crate::common::docker::{assert_nothing_left_in_engine, engine};
use crate::common::runtime_faults::*;
use crate::common::scenario_run::Finished;

const TOP: &str = "runtime: docker\npull: never\n";

/// [`one_network_scenario`] in containers: bob's container killed and started again,
/// alice's paused; about 200 ms more through the proxy's container, and the
/// throughput back after the partition; mining stopped, burst and resumed.
#[test]
fn node_and_link_faults_and_mining_have_their_effect_in_containers() {
    let Some(docker) = engine() else {
        return;
    };
    let image = lnbench_tui::runtime::docker::toxiproxy::IMAGE;
    assert!(
        crate::common::docker::block_on(docker.inspect_image(image)).is_ok(),
        "image {image} is missing: run scripts/build-images.sh"
    );
    let run = Finished::run(&one_network_scenario("e2e-docker-faults", TOP));
    let report = run.report_on("docker (");
    let (k, p) = check_kill_and_pause(&report, "docker");
    assert!(k["during"]["ok"].as_u64().unwrap() <= 5, "{k:#}");
    let (began, ended) = (
        p["began_s"].as_f64().unwrap(),
        p["ended_s"].as_f64().unwrap(),
    );
    assert!((2.5..=5.0).contains(&(ended - began)), "{p:#}");
    assert!(
        p["recovered_after_s"].as_f64().is_some(),
        "TPS came back after the pause: {p:#}"
    );
    let (rise, cut) = check_links(&report, "docker");
    assert!(
        rise <= 800.0,
        "p50 {rise:.0} ms more; expected about 200 ms more"
    );
    assert!(cut["recovered_after_s"].as_f64().is_some(), "{cut:#}");
    crate::common::fault_kinds::check_mining(&report);
    assert_nothing_left_in_engine(&run.log);
}
