//! `topology: { shape: import, file: graph.json, nodes: N }`: a channel graph as LND's
//! `lncli describegraph` prints it (for instance a snapshot of a real network), cut
//! down to N nodes: the best-connected node first, then its neighbours breadth first,
//! best connected first, so the cut keeps the core of the graph and stays connected.

use super::error::Ctx;
use super::error::ScenarioError;
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// The smallest channel LND opens (its `--minchansize` default).
pub(super) const MIN_CHANNEL_SAT: u64 = 20_000;
/// The largest graph file read (a mainnet describegraph is about 100 MB).
const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;
/// The most channels read from it (mainnet has under 100,000).
const MAX_EDGES: usize = 1_000_000;

/// A link between two kept nodes (a < b) and its capacity in sat.
pub(super) type Link = ((usize, usize), u64);

/// The links among the `n` nodes kept (indices 0..n, a < b) with the largest
/// capacity the file gives each pair, in sat.
pub(super) fn read(ctx: &Ctx, file: &Spanned<String>, n: u32) -> Result<Vec<Link>, ScenarioError> {
    let path = ctx
        .path
        .parent()
        .unwrap_or(std::path::Path::new("."))
        .join(file.value.trim());
    let fail = |what: String| {
        ctx.error(
            &file.referenced,
            what,
            "give a file written by `lncli describegraph` (JSON with nodes[].pub_key and edges[].node1_pub, node2_pub, capacity), relative to the scenario file",
        )
    };
    let text = crate::files::read_text(&path, MAX_FILE_BYTES)
        .map_err(|e| fail(format!("cannot read graph file {}: {e}", path.display())))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| fail(format!("graph file {} is not JSON: {e}", path.display())))?;
    let edges = json["edges"].as_array().map_or(0, Vec::len);
    if edges > MAX_EDGES {
        return Err(fail(format!(
            "graph file {} has {edges} edges, more than {MAX_EDGES}",
            path.display()
        )));
    }
    let links = links(&json);
    if links.is_empty() {
        return Err(fail(format!(
            "graph file {} has no edges with node1_pub, node2_pub and a capacity",
            path.display()
        )));
    }
    let kept = cut(&links, n as usize);
    if kept.len() < n as usize {
        return Err(ctx.error(
            &file.referenced,
            format!(
                "graph file {} has {} connected nodes around its best-connected one, fewer than nodes: {n}",
                path.display(),
                kept.len()
            ),
            format!("write nodes: {} or fewer, or use a larger graph", kept.len()),
        ));
    }
    let index: HashMap<&str, usize> = kept.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    let mut pairs: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    for (a, b, capacity) in &links {
        if let (Some(&a), Some(&b)) = (index.get(a), index.get(b))
            && a != b
        {
            let pair = (a.min(b), a.max(b));
            let at = pairs.entry(pair).or_default();
            *at = (*at).max(*capacity);
        }
    }
    Ok(pairs.into_iter().collect())
}

/// Every edge of the file as (node1, node2, capacity sat); capacity is a string in
/// LND's JSON, a number in some exports.
fn links(json: &serde_json::Value) -> Vec<(&str, &str, u64)> {
    let edges = json["edges"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    edges
        .iter()
        .filter_map(|e| {
            let capacity = match &e["capacity"] {
                serde_json::Value::String(s) => s.parse().ok()?,
                v => v.as_u64()?,
            };
            Some((e["node1_pub"].as_str()?, e["node2_pub"].as_str()?, capacity))
        })
        .collect()
}

/// Up to `n` node keys: the best-connected node, then breadth first, the
/// best-connected neighbours first.
fn cut<'a>(links: &[(&'a str, &'a str, u64)], n: usize) -> Vec<&'a str> {
    let mut adjacent: HashMap<&str, Vec<&str>> = HashMap::new();
    for &(a, b, _) in links {
        if a != b {
            adjacent.entry(a).or_default().push(b);
            adjacent.entry(b).or_default().push(a);
        }
    }
    let degree = |k: &str| adjacent.get(k).map_or(0, Vec::len);
    // Ties broken by key, so the cut does not depend on hash order.
    let Some(start) = adjacent
        .keys()
        .copied()
        .max_by(|a, b| degree(a).cmp(&degree(b)).then(b.cmp(a)))
    else {
        return Vec::new();
    };
    let mut kept = vec![start];
    let mut queue = VecDeque::from([start]);
    while let Some(at) = queue.pop_front() {
        let mut next: Vec<&str> = adjacent[at].clone();
        next.sort_by(|a, b| degree(b).cmp(&degree(a)).then(a.cmp(b)));
        next.dedup();
        for k in next {
            if kept.len() >= n {
                return kept;
            }
            if !kept.contains(&k) {
                kept.push(k);
                queue.push_back(k);
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cut_starts_at_the_hub_and_keeps_its_best_connected_neighbours() {
        let links = vec![
            ("hub", "a", 100),
            ("hub", "b", 100),
            ("hub", "c", 100),
            ("a", "b", 100),
            ("c", "leaf", 100),
            ("far", "leaf", 100),
        ];
        assert_eq!(cut(&links, 3), ["hub", "a", "b"]);
        assert_eq!(cut(&links, 10).len(), 6);
    }

    #[test]
    fn capacities_are_read_as_strings_or_numbers() {
        let json = serde_json::json!({ "edges": [
            { "node1_pub": "x", "node2_pub": "y", "capacity": "5000000" },
            { "node1_pub": "y", "node2_pub": "z", "capacity": 70000 },
            { "node1_pub": "y", "capacity": "1" }
        ]});
        assert_eq!(links(&json), [("x", "y", 5_000_000), ("y", "z", 70_000)]);
    }
}
