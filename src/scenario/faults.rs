//! `links:` and `faults:`: the shape of peer links from the start (a WAN), and a
//! timeline of faults during the load.
//!
//! ```yaml
//! links:                      # every peer connection between the two goes through a proxy
//!   - between: [alice, carol] # a pair, or [alice, "*"]: alice and every peer of hers
//!     latency: 15ms           # one way, each direction (so 30 ms more round trip)
//!     jitter: 2ms
//!     bandwidth: 500          # KB/s, each direction (optional)
//! faults:
//!   - at: 20s                 # into the load; or after_payments: 500
//!     kill: bob               # SIGKILL
//!     restart_after: 5s       # started again after 5 s (omit: stays down)
//!   - at: 10s
//!     pause: alice            # SIGSTOP, then SIGCONT after `for:`
//!     for: 3s
//!   - at: 40s
//!     restart: bob            # a clean stop and start
//!   - at: 15s
//!     link: [alice, bob]
//!     latency: 50ms           # or down: true (cut and refused), reset: true (cut once)
//!     for: 10s                # omit: to the end of the load
//!   - at: 30s
//!     mine: 6                 # a burst of blocks
//!   - at: 40s
//!     restart: chain          # the chain backend (bitcoind), or kill: chain
//! ```

use std::time::Duration;

mod chain;
mod read;
pub(super) use chain::check as check_chain_faults;
pub(super) use read::{mining, validate};

/// The word for "every peer" in a link's pair.
pub const EVERY: &str = "*";

/// One end of a link: an instance, or every peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkEnd {
    Node(String),
    Every,
}

impl LinkEnd {
    pub fn matches(&self, name: &str) -> bool {
        match self {
            LinkEnd::Node(n) => n == name,
            LinkEnd::Every => true,
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            LinkEnd::Node(n) => n,
            LinkEnd::Every => EVERY,
        }
    }
}

/// The links between `a` and `b` (both directions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkPair {
    pub a: String,
    pub b: LinkEnd,
}

impl LinkPair {
    /// True for a connection between these two nodes, either way round.
    pub fn covers(&self, x: &str, y: &str) -> bool {
        (self.a == x && self.b.matches(y)) || (self.a == y && self.b.matches(x))
    }

    pub fn label(&self) -> String {
        format!("{}–{}", self.a, self.b.as_str())
    }
}

/// What a link adds to the traffic, each direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkShape {
    /// One-way delay added each direction.
    pub latency: Duration,
    pub jitter: Duration,
    /// KB/s each direction; None: unlimited.
    pub bandwidth_kb_s: Option<u64>,
}

impl LinkShape {
    pub fn is_clear(&self) -> bool {
        *self == LinkShape::default()
    }

    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.latency.is_zero() {
            parts.push(format!("+{} ms each way", self.latency.as_millis()));
        }
        if !self.jitter.is_zero() {
            parts.push(format!("± {} ms", self.jitter.as_millis()));
        }
        if let Some(kb) = self.bandwidth_kb_s {
            parts.push(format!("{kb} KB/s"));
        }
        if parts.is_empty() {
            "clear".into()
        } else {
            parts.join(" ")
        }
    }
}

/// `links:` entry: a shape from setup on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkSpec {
    pub pair: LinkPair,
    pub shape: LinkShape,
}

/// When a fault begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultTrigger {
    /// Time into the load.
    At(Duration),
    /// Once this many payments have completed (ok or failed).
    AfterPayments(u64),
}

/// What a link fault does while it lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkChange {
    /// Another shape (the `links:` one comes back afterwards).
    Shape(LinkShape),
    /// Connections cut and new ones refused (a partition).
    Down,
    /// Connections cut once; new ones allowed.
    Reset,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultAction {
    /// SIGKILL (container kill); started again after the delay, or never.
    Kill {
        node: String,
        restart_after: Option<Duration>,
    },
    /// A clean stop and start.
    Restart { node: String },
    /// SIGSTOP (container pause) for a while, then resumed.
    Pause { node: String, duration: Duration },
    Link {
        pair: LinkPair,
        change: LinkChange,
        /// None: until the end of the load (and never for a reset).
        duration: Option<Duration>,
    },
    /// A burst of blocks mined at once.
    Mine { blocks: u32 },
    /// `mining: stop` / `mining: resume`: the background mining of `mining:`.
    Mining { on: bool },
}

/// One entry of `faults:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub trigger: FaultTrigger,
    pub action: FaultAction,
}

impl Fault {
    /// A short label: `kill bob`, `latency alice–bob`.
    pub fn label(&self) -> String {
        match &self.action {
            FaultAction::Kill { node, .. } => format!("kill {node}"),
            FaultAction::Restart { node } => format!("restart {node}"),
            FaultAction::Pause { node, .. } => format!("pause {node}"),
            FaultAction::Link { pair, change, .. } => {
                let what = match change {
                    LinkChange::Shape(s) if s.latency.is_zero() && s.bandwidth_kb_s.is_some() => {
                        "bandwidth"
                    }
                    LinkChange::Shape(_) => "latency",
                    LinkChange::Down => "partition",
                    LinkChange::Reset => "reset",
                };
                format!("{what} {}", pair.label())
            }
            FaultAction::Mine { blocks } => format!("mine {blocks}"),
            FaultAction::Mining { on: false } => "mining stop".to_string(),
            FaultAction::Mining { on: true } => "mining resume".to_string(),
        }
    }

    /// The node this fault stops, pauses or kills, if any.
    pub fn node(&self) -> Option<&str> {
        match &self.action {
            FaultAction::Kill { node, .. }
            | FaultAction::Restart { node }
            | FaultAction::Pause { node, .. } => Some(node),
            _ => None,
        }
    }

    /// `kill: chain` or `restart: chain`: the chain backend stopped.
    pub fn stops_chain(&self) -> bool {
        match &self.action {
            FaultAction::Kill { node, .. } | FaultAction::Restart { node } => {
                node == crate::chain::CHAIN_NAME
            }
            _ => false,
        }
    }

    pub fn is_link(&self) -> bool {
        matches!(self.action, FaultAction::Link { .. })
    }
}

#[cfg(test)]
mod tests;
