//! `topology:`: a network generated from a few lines (shape, node count, capacities,
//! implementation mix, seed) instead of `nodes:` and `channels:` written out. The
//! generated nodes and channels are handed to the ordinary validation as if written,
//! so every check on nodes and channels applies to them too.

use super::dist::Dist;
use super::error::Ctx;
use super::error::ScenarioError;
use super::raw::RawTopology;
pub use super::raw::Shape;
use super::raw::{NodeMap, RawChannel, RawNode};
use crate::node::Implementation;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_saphyr::{Location, Spanned};
use std::collections::{BTreeSet, VecDeque};

/// Most generated nodes: each is a whole node on this machine.
const MAX_NODES: u32 = 200;
/// Imported channels are capped at LND's largest channel without wumbo.
const IMPORT_CAP_SAT: u64 = 16_777_215;
/// Most parallel channels per generated pair.
const MAX_CHANNELS_PER_PAIR: f64 = 20.0;
/// The largest generated channel, in sat (a whole bitcoin is 1e8; 10 BTC is far past
/// any regtest benchmark).
const MAX_CAPACITY_SAT: f64 = 1e9;

/// The generated graph, kept for the report (drawing, route lengths).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Topology {
    pub shape: Shape,
    pub seed: u64,
    /// Node names, index = position in `edges`.
    pub nodes: Vec<String>,
    /// Undirected links (a < b); each carries one or more channels.
    pub edges: Vec<(usize, usize)>,
}

impl Topology {
    /// Shortest path lengths (in channels) from `from` to every node; None: unreachable.
    pub fn hops_from(&self, from: usize) -> Vec<Option<u32>> {
        let mut adjacent = vec![Vec::new(); self.nodes.len()];
        for &(a, b) in &self.edges {
            adjacent[a].push(b);
            adjacent[b].push(a);
        }
        let mut dist = vec![None; self.nodes.len()];
        dist[from] = Some(0);
        let mut queue = VecDeque::from([from]);
        while let Some(at) = queue.pop_front() {
            let d = dist[at].unwrap_or(0);
            for &next in &adjacent[at] {
                if dist[next].is_none() {
                    dist[next] = Some(d + 1);
                    queue.push_back(next);
                }
            }
        }
        dist
    }

    /// The index of a node name.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n == name)
    }
}

/// What a topology expands to: nodes and channels as if written, and the graph.
pub(super) struct Generated {
    pub nodes: NodeMap,
    pub channels: Vec<Spanned<RawChannel>>,
    pub topology: Topology,
}

pub(super) fn generate(ctx: &Ctx, raw: &Spanned<RawTopology>) -> Result<Generated, ScenarioError> {
    let t = &raw.value;
    let n = t.nodes.value;
    let shape = t.shape.value;
    let least = match shape {
        Shape::Ring => 3,
        _ => 2,
    };
    if n < least || n > MAX_NODES {
        return Err(ctx.error(
            &t.nodes.referenced,
            format!(
                "topology has nodes: {n}; shape {} needs {least} to {MAX_NODES}",
                shape.as_str()
            ),
            format!("write nodes: {least} to {MAX_NODES} (each is a whole node on this machine)"),
        ));
    }
    let degree = degree(ctx, t, n)?;
    let capacity = capacity(ctx, raw)?;
    let imported = imported(ctx, t, n)?;
    let per_pair = match &t.channels_per_pair {
        Some(c) => Dist::validate(ctx, c, "channels_per_pair", MAX_CHANNELS_PER_PAIR)?,
        None => Dist::Fixed { value: 1.0 },
    };
    let prefix = match &t.prefix {
        Some(p) => p.value.trim().to_string(),
        None => "n".to_string(),
    };
    let seed = t.seed.unwrap_or(1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let implementations = mix(ctx, t, n, &mut rng)?;
    let (edges, file_capacity): (Vec<(usize, usize)>, Vec<Option<u64>>) = match imported {
        Some(links) => links.into_iter().map(|(e, c)| (e, Some(c))).unzip(),
        None => {
            let edges = edges(shape, n as usize, degree, &mut rng);
            let none = vec![None; edges.len()];
            (edges, none)
        }
    };

    let width = n.to_string().len();
    let names: Vec<String> = (1..=n).map(|i| format!("{prefix}{i:0width$}")).collect();
    let at = raw.referenced;
    fn spanned<T>(v: T, at: Location) -> Spanned<T> {
        Spanned::new(v, at, at)
    }
    let nodes = node_entries(t, &names, &implementations, at);
    let both_ways = t.both_ways.unwrap_or(true);
    let cap_at = (t.capacity_sat.as_ref()).map_or(raw.referenced, |c| c.referenced);
    let mut channels = Vec::new();
    for (&(a, b), from_file) in edges.iter().zip(file_capacity) {
        let capacity_sat = match (from_file, capacity) {
            // A real graph's channels, capped by capacity_sat: (default: the largest
            // channel LND opens without wumbo).
            (Some(c), cap) => {
                let high = cap.map_or(IMPORT_CAP_SAT, |d| d.high() as u64);
                c.clamp(
                    super::graph_import::MIN_CHANNEL_SAT,
                    high.max(super::graph_import::MIN_CHANNEL_SAT),
                )
            }
            (None, Some(d)) => d.sample_u64(&mut rng),
            (None, None) => IMPORT_CAP_SAT,
        };
        let count = per_pair.sample_u64(&mut rng) as u32;
        let ends: Vec<(usize, usize)> = match both_ways {
            true => vec![(a, b), (b, a)],
            false if rng.random_bool(0.5) => vec![(a, b)],
            false => vec![(b, a)],
        };
        for (from, to) in ends {
            let channel = RawChannel {
                from: spanned(names[from].clone(), at),
                to: spanned(names[to].clone(), at),
                capacity_sat: spanned(capacity_sat, cap_at),
                count: Some(spanned(count, at)),
                through: None,
            };
            channels.push(spanned(channel, at));
        }
    }
    Ok(Generated {
        nodes: NodeMap(nodes),
        channels,
        topology: Topology {
            shape,
            seed,
            nodes: names,
            edges,
        },
    })
}

/// `capacity_sat:`, which every shape but import needs.
fn capacity(ctx: &Ctx, raw: &Spanned<RawTopology>) -> Result<Option<Dist>, ScenarioError> {
    let t = &raw.value;
    match &t.capacity_sat {
        Some(c) => Ok(Some(Dist::validate(ctx, c, "capacity_sat", MAX_CAPACITY_SAT)?)),
        None if t.shape.value == Shape::Import => Ok(None),
        None => Err(ctx.error(
            &raw.referenced,
            "topology: has no capacity_sat:",
            "add capacity_sat: 5000000, or a distribution such as capacity_sat: { uniform: [2000000, 5000000] }",
        )),
    }
}

/// The channel graph of `shape: import` (its `file:`), which no other shape takes.
fn imported(
    ctx: &Ctx,
    t: &RawTopology,
    n: u32,
) -> Result<Option<Vec<super::graph_import::Link>>, ScenarioError> {
    let shape = t.shape.value;
    match (&t.file, shape) {
        (Some(file), Shape::Import) => Ok(Some(super::graph_import::read(ctx, file, n)?)),
        (None, Shape::Import) => Err(ctx.error(
            &t.shape.referenced,
            "shape: import needs file:",
            "add file: graph.json (written by lncli describegraph, relative to the scenario)",
        )),
        (Some(file), _) => Err(ctx.error(
            &file.referenced,
            format!("file: is given for shape {}", shape.as_str()),
            "remove file:, or write shape: import to read a channel graph",
        )),
        (None, _) => Ok(None),
    }
}

/// The generated nodes as if written under `nodes:`: each name with its
/// implementation and that implementation's `args:`; `at` locates them (the
/// `topology:` block).
fn node_entries(
    t: &RawTopology,
    names: &[String],
    implementations: &[(Implementation, Location)],
    at: Location,
) -> Vec<(Spanned<String>, RawNode)> {
    names
        .iter()
        .zip(implementations)
        .map(|(name, &(implementation, impl_at))| {
            let args = (t.args.as_ref())
                .and_then(|a| a.get(&implementation))
                .cloned()
                .unwrap_or_default();
            let node = RawNode {
                implementation: Spanned::new(implementation, impl_at, impl_at),
                version: None,
                binary: None,
                image: None,
                replicas: None,
                payment_engine: None,
                database: None,
                resources: None,
                args,
                rpc: None,
                tls_cert: None,
                macaroon: None,
                ca_cert: None,
                client_cert: None,
                client_key: None,
            };
            (
                Spanned::new(
                    name.clone(),
                    t.prefix.as_ref().map_or(at, |p| p.referenced),
                    at,
                ),
                node,
            )
        })
        .collect()
}

/// `degree:` where the shape needs one (random, scale-free); the others ignore it.
fn degree(ctx: &Ctx, t: &RawTopology, n: u32) -> Result<f64, ScenarioError> {
    let needs = matches!(t.shape.value, Shape::Random | Shape::ScaleFree);
    let Some(d) = &t.degree else {
        return match needs {
            true => Ok(3.0_f64.min(f64::from(n - 1))),
            false => Ok(0.0),
        };
    };
    if !needs {
        return Err(ctx.error(
            &d.referenced,
            format!(
                "degree: is given for shape {}, which has a fixed degree",
                t.shape.value.as_str()
            ),
            "remove degree:, or use shape: random or shape: scale-free",
        ));
    }
    let max = f64::from(n - 1);
    let whole = t.shape.value == Shape::ScaleFree;
    if !(d.value.is_finite() && d.value >= 1.0 && d.value <= max)
        || (whole && d.value.fract() != 0.0)
    {
        return Err(ctx.error(
            &d.referenced,
            format!("degree: {} does not fit {n} nodes", d.value),
            format!(
                "write a degree from 1 to {max}{}",
                if whole {
                    ", a whole number for scale-free"
                } else {
                    ""
                }
            ),
        ));
    }
    Ok(d.value)
}

/// The implementation of each node: shares turned into counts (largest remainder),
/// then shuffled so no implementation sits on one part of the graph.
fn mix(
    ctx: &Ctx,
    t: &RawTopology,
    n: u32,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<(Implementation, Location)>, ScenarioError> {
    let Some(shares) = &t.implementations else {
        return Ok(vec![
            (Implementation::default(), t.shape.referenced);
            n as usize
        ]);
    };
    const HINT: &str =
        "give each implementation a share above 0, e.g. implementations: { lnd: 0.5, cln: 0.5 }";
    if shares.value.0.is_empty() {
        return Err(ctx.error(&shares.referenced, "implementations: is empty", HINT));
    }
    for (i, (implementation, share)) in shares.value.0.iter().enumerate() {
        if !(share.value.is_finite() && share.value > 0.0) {
            return Err(ctx.error(
                &share.referenced,
                format!("share of {} is {}", implementation.value, share.value),
                HINT,
            ));
        }
        if shares.value.0[..i]
            .iter()
            .any(|(other, _)| other.value == implementation.value)
        {
            return Err(ctx.error(
                &implementation.referenced,
                format!(
                    "{} is listed twice under implementations:",
                    implementation.value
                ),
                "list each implementation once",
            ));
        }
    }
    let total: f64 = shares.value.0.iter().map(|(_, s)| s.value).sum();
    let exact: Vec<f64> = (shares.value.0.iter())
        .map(|(_, s)| s.value / total * f64::from(n))
        .collect();
    let mut counts: Vec<u32> = exact.iter().map(|e| e.floor() as u32).collect();
    let mut order: Vec<usize> = (0..counts.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
    let mut left = n - counts.iter().sum::<u32>();
    for &i in order.iter().cycle() {
        if left == 0 {
            break;
        }
        counts[i] += 1;
        left -= 1;
    }
    let mut all: Vec<(Implementation, Location)> = Vec::new();
    for ((implementation, _), count) in shares.value.0.iter().zip(counts) {
        all.extend(std::iter::repeat_n(
            (implementation.value, implementation.referenced),
            count as usize,
        ));
    }
    all.shuffle(rng);
    Ok(all)
}

/// The links of a shape over `n` nodes, each once with a < b, sorted.
pub(super) fn edges(
    shape: Shape,
    n: usize,
    degree: f64,
    rng: &mut ChaCha8Rng,
) -> Vec<(usize, usize)> {
    let mut set = BTreeSet::new();
    let link = |set: &mut BTreeSet<(usize, usize)>, a: usize, b: usize| {
        if a != b {
            set.insert((a.min(b), a.max(b)));
        }
    };
    match shape {
        // Read from the file instead (graph_import.rs).
        Shape::Import => {}
        Shape::Star => (1..n).for_each(|i| link(&mut set, 0, i)),
        Shape::Line => (1..n).for_each(|i| link(&mut set, i - 1, i)),
        Shape::Ring => (0..n).for_each(|i| link(&mut set, i, (i + 1) % n)),
        Shape::Complete => {
            for a in 0..n {
                for b in a + 1..n {
                    link(&mut set, a, b);
                }
            }
        }
        Shape::Random => {
            let p = (degree / (n - 1) as f64).min(1.0);
            for a in 0..n {
                for b in a + 1..n {
                    if rng.random_bool(p) {
                        link(&mut set, a, b);
                    }
                }
            }
            join_components(&mut set, n, rng);
        }
        Shape::ScaleFree => {
            let m = (degree as usize).max(1);
            // A small complete core, then each node attaches to m distinct existing
            // nodes picked from the list of link ends (so by degree).
            let core = (m + 1).min(n);
            let mut ends = Vec::new();
            for a in 0..core {
                for b in a + 1..core {
                    link(&mut set, a, b);
                    ends.extend([a, b]);
                }
            }
            for new in core..n {
                let mut picked = BTreeSet::new();
                while picked.len() < m.min(new) {
                    let at = match ends.is_empty() {
                        true => rng.random_range(0..new),
                        false => ends[rng.random_range(0..ends.len())],
                    };
                    picked.insert(at);
                }
                for at in picked {
                    link(&mut set, new, at);
                    ends.extend([new, at]);
                }
            }
        }
    }
    set.into_iter().collect()
}

/// Links each component to the first one through a random node of each, so every
/// node reaches every other.
fn join_components(set: &mut BTreeSet<(usize, usize)>, n: usize, rng: &mut ChaCha8Rng) {
    let mut component: Vec<usize> = (0..n).collect();
    fn root(c: &mut [usize], mut x: usize) -> usize {
        while c[x] != x {
            c[x] = c[c[x]];
            x = c[x];
        }
        x
    }
    for &(a, b) in set.iter() {
        let (ra, rb) = (root(&mut component, a), root(&mut component, b));
        component[ra] = rb;
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut of_root = std::collections::HashMap::new();
    for x in 0..n {
        let r = root(&mut component, x);
        let i = *of_root.entry(r).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[i].push(x);
    }
    for pair in 1..groups.len() {
        let a = groups[0][rng.random_range(0..groups[0].len())];
        let b = groups[pair][rng.random_range(0..groups[pair].len())];
        set.insert((a.min(b), a.max(b)));
    }
}

/// Puts the nodes and channels of `topology:` in place of `nodes:` and `channels:`
/// (which must then be absent); returns the graph.
pub(super) fn apply(
    ctx: &Ctx,
    raw: &mut super::raw::RawScenario,
) -> Result<Option<Topology>, ScenarioError> {
    let Some(topology) = raw.topology.take() else {
        return Ok(None);
    };
    if raw.nodes.referenced != Location::UNKNOWN || !raw.nodes.value.0.is_empty() {
        return Err(ctx.error(
            &raw.nodes.referenced,
            "nodes: is given beside topology:",
            "keep one: topology: generates the nodes and channels, nodes: and channels: write them out",
        ));
    }
    if let Some(channel) = raw.channels.first() {
        return Err(ctx.error(
            &channel.referenced,
            "channels: is given beside topology:",
            "remove channels: (topology: generates them) or write nodes: instead of topology:",
        ));
    }
    let generated = generate(ctx, &topology)?;
    raw.nodes = Spanned::new(generated.nodes, topology.referenced, topology.defined);
    raw.channels = generated.channels;
    Ok(Some(generated.topology))
}
