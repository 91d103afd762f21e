//! Both nodes restarted after the load (`after_load: restart: all`), checked on the
//! basic run of each runtime: `alice_pays_bob::` on local processes (the shipped
//! scenarios/soak.yaml), `docker::` in containers and `kube::` in pods. A restart
//! needs a network that carried a load, so it rides on the run that brings one up
//! for its own checks rather than bringing up one more.

use std::path::Path;

/// The tool said it restarted each node, and the report's HTML and summary have the
/// restart table and the tool's memory.
pub fn check_shown(log: &str, report_dir: &Path) {
    for node in ["alice", "bob"] {
        assert!(
            log.contains(&format!("restarting {node}")),
            "the restart of {node} is not shown:\n{log}"
        );
    }
    let html = std::fs::read_to_string(report_dir.join("report.html")).unwrap();
    assert!(html.contains("<h2>Restart</h2>"), "no restart table");
    let md = std::fs::read_to_string(report_dir.join("summary.md")).unwrap();
    assert!(md.contains("| restarted node |"), "{md}");
    assert!(md.contains("Tool RSS first / last / peak"), "{md}");
}

/// Each node's restart in the report: stopped, its RPC back no later than its
/// channels, and all `channels` of its channels active again on the same data.
pub fn check_restarts(report: &serde_json::Value, channels: u64) {
    for node in report["nodes"].as_array().unwrap() {
        let r = &node["restart"];
        let secs = |f: &str| r[f].as_f64().unwrap_or_else(|| panic!("{f} in {r:#}"));
        let (stop, rpc, channels_s) = (secs("stop_s"), secs("rpc_s"), secs("channels_s"));
        assert!(stop > 0.0 && rpc > 0.0, "{}: {r:#}", node["name"]);
        assert!(
            rpc <= channels_s,
            "{}: RPC after channels: {r:#}",
            node["name"]
        );
        // The same wallet and channels: the node's data outlived its process.
        assert_eq!(r["active_channels"], channels, "{}: {r:#}", node["name"]);
    }
    let tool = &report["tool_resources"];
    assert!(
        tool["mem_bytes_peak"].as_u64().unwrap() > 1024 * 1024,
        "{tool:#}"
    );
}
