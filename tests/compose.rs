//! The hand-run compose files stay what the tool runs: the same images, the same btcd
//! and LND command lines (but for the differences the file names), ports on loopback.

mod common;

use lnbench_tui::chain::ChainKind;
use lnbench_tui::node::Implementation;
use lnbench_tui::runtime::docker::{chain_access, chain_command, node_command};
use serde_json::Value;
use std::str::FromStr;

fn compose() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/compose/alice-pays-bob.yml");
    let text = std::fs::read_to_string(path).unwrap();
    serde_saphyr::from_str(&text).expect("compose file parses")
}

fn command(service: &Value) -> Vec<String> {
    service["command"]
        .as_array()
        .expect("command is a list")
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// The value of `--flag=` in `args`.
fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    let prefix = format!("{name}=");
    args.iter().find_map(|a| a.strip_prefix(prefix.as_str()))
}

#[test]
fn images_are_the_ones_the_docker_runtime_picks_for_the_scenario() {
    let c = compose();
    let scenario = lnbench_tui::scenario::load(
        std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scenarios/alice-pays-bob.yaml"
        )),
        lnbench_tui::runtime::capabilities,
    )
    .unwrap();
    for node in &scenario.nodes {
        let version = node.version.as_deref().expect("the scenario pins versions");
        assert_eq!(
            c["services"][&node.name]["image"],
            format!("lnbench/lnd:{version}"),
            "{}",
            node.name
        );
        assert_eq!(c["services"][&node.name]["hostname"], node.name.as_str());
    }
    assert_eq!(c["services"]["chain"]["image"], "lnbench/btcd:v0.24.2");
    assert_eq!(c["services"]["chain"]["hostname"], "chain");
}

#[test]
fn btcd_runs_with_the_tools_command_line() {
    let c = compose();
    let args = command(&c["services"]["chain"]);
    let mining = flag(&args, "--miningaddr").expect("a mining address");
    bitcoin::Address::from_str(mining)
        .expect("the mining address parses")
        .require_network(bitcoin::Network::Regtest)
        .expect("a regtest address");
    let user = flag(&args, "--rpcuser").unwrap();
    // The hand-run file gives the password on the command line; the tool writes it
    // into btcd.conf (read through --configfile, which compose leaves out).
    let pass = flag(&args, "--rpcpass").unwrap();
    let (tool, configs) = chain_command(ChainKind::Btcd, user, pass, mining);
    assert!(configs[0].content.contains(&format!("rpcpass={pass}")));
    let args: Vec<String> = args
        .into_iter()
        .filter(|a| !a.starts_with("--rpcpass="))
        .collect();
    let tool: Vec<String> = tool
        .into_iter()
        .filter(|a| !a.starts_with("--configfile="))
        .collect();
    assert_eq!(args, tool);
}

#[test]
fn lnd_runs_with_the_tools_command_line_but_the_certificate_path() {
    let c = compose();
    for name in ["alice", "bob"] {
        // The hand-run file gives the password on the command line; the tool writes it
        // into lnd.conf, which LND reads from its directory.
        let mut args: Vec<String> = command(&c["services"][name])
            .into_iter()
            .filter(|a| a != "--btcd.rpcpass=lnbench")
            .collect();
        // The one difference by design: btcd's certificate comes from its volume.
        let cert = args
            .iter_mut()
            .find(|a| a.starts_with("--btcd.rpccert="))
            .expect("a btcd certificate");
        assert_eq!(cert, "--btcd.rpccert=/chain/rpc.cert");
        let chain = chain_access(ChainKind::Btcd, "lnbench", "lnbench");
        let (tool, configs) = node_command(Implementation::Lnd, name, &chain);
        assert!(configs[0].content.contains("btcd.rpcpass=lnbench"));
        *cert = tool
            .iter()
            .find(|a| a.starts_with("--btcd.rpccert="))
            .unwrap()
            .clone();
        assert_eq!(args, tool, "{name}");
    }
}

#[test]
fn ports_are_published_on_loopback_only() {
    let c = compose();
    let services = c["services"].as_object().unwrap();
    let mut published = 0;
    for (name, service) in services {
        for port in service["ports"].as_array().into_iter().flatten() {
            let port = port.as_str().unwrap();
            assert!(port.starts_with("127.0.0.1:"), "{name}: {port}");
            published += 1;
        }
    }
    assert_eq!(published, 3, "btcd's RPC and each node's gRPC");
}

#[test]
fn every_service_has_a_healthcheck_and_the_nodes_wait_for_a_healthy_chain() {
    let c = compose();
    let services = c["services"].as_object().unwrap();
    assert_eq!(services.len(), 3);
    for (name, service) in services {
        let test = service["healthcheck"]["test"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: no healthcheck"));
        assert_eq!(test[0], "CMD", "{name}: {test:?}");
        // Each image is FROM scratch: its own CLI is the only command it has.
        let cli = if name == "chain" {
            "/bin/btcctl"
        } else {
            "/bin/lncli"
        };
        assert_eq!(test[1], cli, "{name}: {test:?}");
        if name != "chain" {
            let condition = &service["depends_on"]["chain"]["condition"];
            assert_eq!(condition, "service_healthy", "{name}");
        }
    }
}

/// Compose itself reads the file (anchors, merges, healthchecks): `docker compose
/// config`, or Debian's docker-compose 1.x where the v2 plugin is missing.
#[test]
fn compose_accepts_the_file() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/compose/alice-pays-bob.yml");
    let tries: [&[&str]; 2] = [&["docker", "compose"], &["docker-compose"]];
    for tool in tries {
        let out = std::process::Command::new(tool[0])
            .args(&tool[1..])
            .args(["-f", file, "config"])
            .output();
        let Ok(out) = out else { continue };
        // `docker compose` without the plugin is docker's own usage error.
        if tool.len() > 1 && String::from_utf8_lossy(&out.stderr).contains("unknown") {
            continue;
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{tool:?} config: {stderr}");
        let config: serde_json::Value =
            serde_saphyr::from_str(&String::from_utf8_lossy(&out.stdout)).unwrap();
        let bob = &config["services"]["bob"];
        assert_eq!(bob["image"], "lnbench/lnd:v0.21.1-beta", "{config:#}");
        assert_eq!(bob["depends_on"]["chain"]["condition"], "service_healthy");
        assert!(bob["healthcheck"]["test"].is_array(), "{config:#}");
        return;
    }
    common::record_not_run(
        "compose_accepts_the_file",
        "neither docker compose nor docker-compose (scripts/setup.sh --dev installs it)",
    );
}
