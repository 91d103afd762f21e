//! `runtime: external`: nodes that already run elsewhere (a Polar network, a staging
//! cluster, machines of their own). Each node gives its RPC address and where its
//! credentials are: a file path, or `$NAME` for the path in environment variable
//! NAME; never the secret itself. `external: { nodes_file: sim.json }` reads sim-ln's
//! node file as (more of) the node list. Checked here: every node says how to reach
//! it, nothing asks to start or change a node, mainnet caps are consistent.

use super::error::Ctx;
use super::raw::{RawExternal, RawNode, RawScenario};
use super::{Capabilities, ScenarioError, StopCondition};
use crate::node::{Credentials, Implementation};
use serde_saphyr::{Location, Spanned};
use std::path::{Path, PathBuf};

/// `external:` as validated.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExternalSettings {
    /// sim-ln's node file the nodes (also) came from, as resolved.
    pub nodes_file: Option<PathBuf>,
    /// Payments on mainnet allowed (then both caps are set).
    pub allow_mainnet: bool,
    pub max_payment_msat: Option<u64>,
    pub max_total_msat: Option<u64>,
}

/// How to reach one external node.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalNode {
    /// `host:port` of its RPC (gRPC) listener.
    pub rpc_addr: String,
    /// Where its credential files are (resolved: `$NAME` and `~/` expanded).
    pub credentials: Credentials,
    /// The node's public key when the node list gave one (sim-ln's `id`): the node
    /// must report it.
    pub pubkey: Option<String>,
}

/// The implementations whose drivers take external nodes, for messages: `lnd and cln`.
fn external_implementations() -> String {
    let names: Vec<&str> = (Implementation::ALL.iter())
        .filter(|i| crate::node::driver(**i).external().is_some())
        .map(|i| i.as_str())
        .collect();
    names.join(" and ")
}

/// The fields of a node that only `runtime: external` takes, by name, if set.
fn external_fields(node: &RawNode) -> Vec<(&'static str, &Spanned<String>)> {
    [
        ("rpc", &node.rpc),
        ("tls_cert", &node.tls_cert),
        ("macaroon", &node.macaroon),
        ("ca_cert", &node.ca_cert),
        ("client_cert", &node.client_cert),
        ("client_key", &node.client_key),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.as_ref().map(|v| (k, v)))
    .collect()
}

/// Refuses `chain:` (nothing is started), and adds the nodes of sim-ln's node file (`external: nodes_file:`) to `raw`'s nodes,
/// located at the `nodes_file:` value for errors.
pub(super) fn add_nodes_file(ctx: &Ctx, raw: &mut RawScenario) -> Result<(), ScenarioError> {
    if raw.chain.is_some() {
        return Err(ctx.error(
            &raw.name.referenced,
            "chain: is set, but runtime: external starts no chain",
            "remove chain: (the external nodes run on their own chain)",
        ));
    }
    let Some(file) = raw
        .external
        .as_ref()
        .and_then(|e| e.value.nodes_file.clone())
    else {
        return Ok(());
    };
    let loc = file.referenced;
    let path = resolve(ctx, &file, "nodes_file")?;
    let text = crate::files::read_text(&path, super::MAX_FILE_BYTES).map_err(|e| {
        ctx.error(
            &loc,
            format!("cannot read the node file {}: {e}", path.display()),
            "give the path of sim-ln's node file (sim.json), relative to this scenario",
        )
    })?;
    let sim: SimFile = serde_json::from_str(&text).map_err(|e| {
        ctx.error(
            &loc,
            format!("{} is not a sim-ln node file: {e}", path.display()),
            "it must hold {\"nodes\": [{\"id\": ..., \"address\": ..., \"macaroon\": ..., \"cert\": ...}]} \
             (LND) or ca_cert, client_cert and client_key (Core Lightning)",
        )
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    let at = |v: String| Spanned::new(v, loc, loc);
    let file_path = |v: String| {
        // Paths in the file are relative to the file.
        let p = PathBuf::from(&v);
        let full = if p.is_relative() && !v.starts_with('$') && !v.starts_with("~/") {
            base.join(p).display().to_string()
        } else {
            v
        };
        Some(at(full))
    };
    for node in sim.nodes {
        let implementation = match implementation_of(&node)[..] {
            [one] => one,
            _ => {
                return Err(ctx.error(
                    &loc,
                    format!(
                        "node {} in {} is neither LND (macaroon, cert) nor Core Lightning \
                         (ca_cert, client_cert, client_key)",
                        node.id,
                        path.display()
                    ),
                    "runtime: external reads LND and Core Lightning nodes from a sim-ln file",
                ));
            }
        };
        let address = node
            .address
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string();
        let raw_node = RawNode {
            implementation: Spanned::new(implementation, loc, loc),
            version: None,
            binary: None,
            image: None,
            replicas: None,
            payment_engine: None,
            database: None,
            resources: None,
            args: Vec::new(),
            rpc: Some(at(address)),
            tls_cert: node.cert.and_then(file_path),
            macaroon: node.macaroon.and_then(file_path),
            ca_cert: node.ca_cert.and_then(file_path),
            client_cert: node.client_cert.and_then(file_path),
            client_key: node.client_key.and_then(file_path),
        };
        raw.nodes.value.0.push((at(node.id), raw_node));
    }
    Ok(())
}

/// The implementations a sim-ln node could be: those that drive external nodes and
/// whose credential fields the entry fills (sim-ln's `cert` is the scenario's
/// `tls_cert`). One, for an entry the tool can drive.
fn implementation_of(node: &SimNode) -> Vec<Implementation> {
    let given = [
        ("tls_cert", &node.cert),
        ("macaroon", &node.macaroon),
        ("ca_cert", &node.ca_cert),
        ("client_cert", &node.client_cert),
        ("client_key", &node.client_key),
    ];
    let fills = |field: &&str| given.iter().any(|(f, v)| f == field && v.is_some());
    (Implementation::ALL.into_iter())
        .filter(|i| {
            (crate::node::driver(*i).external())
                .is_some_and(|e| e.credential_fields().iter().any(fills))
        })
        .collect()
}

/// sim-ln's node file: `{"nodes": [...], "activity": [...]}`; only `nodes` is read.
#[derive(serde::Deserialize)]
struct SimFile {
    nodes: Vec<SimNode>,
}

#[derive(serde::Deserialize)]
struct SimNode {
    id: String,
    address: String,
    #[serde(default)]
    macaroon: Option<String>,
    #[serde(default)]
    cert: Option<String>,
    #[serde(default)]
    ca_cert: Option<String>,
    #[serde(default)]
    client_cert: Option<String>,
    #[serde(default)]
    client_key: Option<String>,
}

/// A 33-byte public key in hex, as sim-ln's `id` may be.
pub fn is_pubkey(id: &str) -> bool {
    id.len() == 66 && id.chars().all(|c| c.is_ascii_hexdigit()) && matches!(&id[..2], "02" | "03")
}

/// `external:`'s settings (None unless `runtime: external`) and each group's endpoint.
type Checked = (Option<ExternalSettings>, Vec<(String, ExternalNode)>);

/// Checks the external parts of a scenario: the nodes' fields against the runtime,
/// `external:`'s settings; returns the settings and each group's endpoint.
pub(super) fn validate(
    ctx: &Ctx,
    raw: &RawScenario,
    runtime: &Capabilities,
    amount_msat: u64,
    stop: &StopCondition,
) -> Result<Checked, ScenarioError> {
    if runtime.starts_nodes {
        refuse_external_fields(ctx, raw)?;
        return Ok((None, Vec::new()));
    }
    if let Some(a) = &raw.after_load {
        return Err(ctx.error(
            &a.referenced,
            "after_load: restarts nodes, which runtime: external never does",
            "remove after_load: (the tool neither stops nor starts external nodes)",
        ));
    }
    let settings = settings(ctx, raw.external.as_ref(), amount_msat, stop)?;
    let mut nodes = Vec::new();
    for (name, node) in &raw.nodes.value.0 {
        nodes.push((name.value.clone(), external_node(ctx, name, node)?));
    }
    Ok((Some(settings), nodes))
}

/// On a runtime that starts its nodes, `external:` and the external-only node fields
/// are errors at the field.
fn refuse_external_fields(ctx: &Ctx, raw: &RawScenario) -> Result<(), ScenarioError> {
    if let Some(e) = &raw.external {
        return Err(ctx.error(
            &e.referenced,
            "external: is set but the runtime is not external",
            "write runtime: external to drive nodes that run elsewhere, or remove external:",
        ));
    }
    for (name, node) in &raw.nodes.value.0 {
        if let Some((field, v)) = external_fields(node).first() {
            return Err(ctx.error(
                &v.referenced,
                format!(
                    "node {} sets {field}:, which only runtime: external takes",
                    name.value
                ),
                "write runtime: external to drive a node that runs elsewhere, or remove it \
                 (the runtime starts this node and knows its address and credentials)",
            ));
        }
    }
    Ok(())
}

/// One node of `runtime: external`: no field that starts or changes a node, and the
/// RPC address and credential files its implementation takes, resolved.
fn external_node(
    ctx: &Ctx,
    name: &Spanned<String>,
    node: &RawNode,
) -> Result<ExternalNode, ScenarioError> {
    let refuse = |loc: &Location, field: &str| {
        ctx.error(
            loc,
            format!(
                "node {} sets {field}:, but runtime: external starts no node",
                name.value
            ),
            format!("remove {field}: (the node already runs; give rpc: and its credentials)"),
        )
    };
    if let Some(v) = &node.image {
        return Err(refuse(&v.referenced, "image"));
    }
    if let Some(v) = &node.replicas {
        return Err(refuse(&v.referenced, "replicas"));
    }
    if let Some(v) = &node.database {
        return Err(refuse(&v.referenced, "database"));
    }
    if node.binary.is_some() || !node.args.is_empty() {
        return Err(refuse(&name.referenced, "binary or args"));
    }
    let implementation = node.implementation.value;
    let driver = crate::node::driver(implementation);
    let Some(credential_fields) = driver.external().map(|e| e.credential_fields()) else {
        return Err(ctx.error(
            &node.implementation.referenced,
            format!(
                "runtime: external drives {} nodes; {implementation} is not supported yet",
                external_implementations()
            ),
            "use runtime: local or docker for this implementation",
        ));
    };
    let wanted: Vec<&str> = std::iter::once("rpc")
        .chain(credential_fields.iter().copied())
        .collect();
    let resolved = wanted_fields(ctx, name, node, &wanted)?;
    let rpc_addr = resolved[0].value.trim().to_string();
    if crate::node::driver::split_host_port(&rpc_addr)
        .1
        .parse::<u16>()
        .is_err()
    {
        return Err(ctx.error(
            &resolved[0].referenced,
            format!("rpc: {rpc_addr:?} is not host:port"),
            "write the node's gRPC address, e.g. rpc: 127.0.0.1:10009",
        ));
    }
    let mut files = Vec::new();
    for (field, v) in wanted[1..].iter().zip(&resolved[1..]) {
        files.push(resolve(ctx, v, field)?);
    }
    // The driver builds its credentials; the fields name its files in order.
    let by_file: std::collections::HashMap<&str, PathBuf> = (driver.credential_files().iter())
        .copied()
        .zip(files)
        .collect();
    let credentials = driver.credentials(&|file| by_file.get(file).cloned().unwrap_or_default());
    let pubkey = is_pubkey(&name.value).then(|| name.value.to_ascii_lowercase());
    Ok(ExternalNode {
        rpc_addr,
        credentials,
        pubkey,
    })
}

/// The node's values of the `wanted` fields, in that order: a field it sets that its
/// implementation does not use, or one it leaves out, is an error.
fn wanted_fields<'a>(
    ctx: &Ctx,
    name: &Spanned<String>,
    node: &'a RawNode,
    wanted: &[&str],
) -> Result<Vec<&'a Spanned<String>>, ScenarioError> {
    let implementation = node.implementation.value;
    let given = external_fields(node);
    for (field, v) in &given {
        if !wanted.contains(field) {
            return Err(ctx.error(
                &v.referenced,
                format!(
                    "node {} ({implementation}) sets {field}:, which {implementation} does not use",
                    name.value
                ),
                format!(
                    "an external {implementation} node takes {}",
                    wanted.join(", ")
                ),
            ));
        }
    }
    let mut resolved = Vec::new();
    for field in wanted {
        let Some((_, v)) = given.iter().find(|(f, _)| f == field) else {
            return Err(ctx.error(
                &name.referenced,
                format!("external node {} has no {field}:", name.value),
                format!(
                    "an external {implementation} node takes {} (files as paths, or $NAME for \
                     the path in an environment variable)",
                    wanted.join(", ")
                ),
            ));
        };
        resolved.push(*v);
    }
    Ok(resolved)
}

fn settings(
    ctx: &Ctx,
    raw: Option<&Spanned<RawExternal>>,
    amount_msat: u64,
    stop: &StopCondition,
) -> Result<ExternalSettings, ScenarioError> {
    let Some(raw) = raw else {
        return Ok(ExternalSettings::default());
    };
    let e = &raw.value;
    let nodes_file = match &e.nodes_file {
        Some(f) => Some(resolve(ctx, f, "nodes_file")?),
        None => None,
    };
    let allow_mainnet = e.allow_mainnet.as_ref().is_some_and(|a| a.value);
    let (per, total) = (e.max_payment_msat.as_ref(), e.max_total_msat.as_ref());
    if allow_mainnet {
        const HINT: &str = "mainnet needs both caps: external: { allow_mainnet: true, \
                            max_payment_msat: N, max_total_msat: M }, and stop: payments: so the \
                            total is known";
        let (Some(per), Some(total)) = (per, total) else {
            return Err(ctx.error(
                &raw.referenced,
                "allow_mainnet: true without both caps",
                HINT,
            ));
        };
        if amount_msat > per.value {
            return Err(ctx.error(
                &per.referenced,
                format!(
                    "the workload pays {amount_msat} msat, above max_payment_msat: {}",
                    per.value
                ),
                "lower workload: amount_msat: or raise the cap",
            ));
        }
        let Some(payments) = stop.payments else {
            return Err(ctx.error(
                &raw.referenced,
                "allow_mainnet: true without stop: payments:",
                HINT,
            ));
        };
        let spent = u128::from(payments) * u128::from(amount_msat);
        if spent > u128::from(total.value) {
            return Err(ctx.error(
                &total.referenced,
                format!(
                    "{payments} payments of {amount_msat} msat make {spent} msat, above \
                     max_total_msat: {}",
                    total.value
                ),
                "pay fewer or smaller payments, or raise the cap (routing fees come on top)",
            ));
        }
    }
    Ok(ExternalSettings {
        nodes_file,
        allow_mainnet,
        max_payment_msat: per.map(|p| p.value),
        max_total_msat: total.map(|t| t.value),
    })
}

/// A credential (or node file) location: `$NAME` is the path in environment variable
/// NAME, `~/` the home directory, a relative path is relative to the scenario file.
/// Whatever looks like the secret itself (PEM text, a hex macaroon) is refused.
fn resolve(ctx: &Ctx, v: &Spanned<String>, field: &str) -> Result<PathBuf, ScenarioError> {
    let text = v.value.trim();
    let hexish = text.len() >= 64 && text.chars().all(|c| c.is_ascii_hexdigit());
    if text.contains("-----BEGIN") || hexish || text.contains('\n') {
        return Err(ctx.error(
            &v.referenced,
            format!("{field}: holds what looks like the secret itself"),
            "give the file's path, or $NAME for an environment variable that holds the path; \
             a scenario file never holds secrets",
        ));
    }
    let path = if let Some(name) = text.strip_prefix('$') {
        let name = name.trim_start_matches('{').trim_end_matches('}');
        match std::env::var_os(name) {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => {
                return Err(ctx.error(
                    &v.referenced,
                    format!("{field}: names environment variable {name}, which is not set"),
                    format!("export {name}=/path/to/the/file before the run, or give the path"),
                ));
            }
        }
    } else if let Some(rest) = text.strip_prefix("~/") {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        home.join(rest)
    } else {
        PathBuf::from(text)
    };
    Ok(match path.is_relative() {
        true => ctx.path.parent().unwrap_or(Path::new(".")).join(path),
        false => path,
    })
}

#[cfg(test)]
mod tests;
