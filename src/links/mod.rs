//! Peer links through a fault proxy: every peer connection of the scenario's channels
//! (`from` dials `to`) goes through a Toxiproxy proxy of its own, so `links:` can give
//! it latency, jitter and bandwidth from setup on, and `faults:` can change, cut or
//! partition it during the load. This kernel has no `netem` qdisc, so the proxy works
//! on TCP streams (each chunk delayed), not on packets; a `tc`-based emulation could
//! implement the same [`LinkProxies`] operations where `netem` exists.

pub mod toxiproxy;

use crate::runtime::ProxyHost;
use crate::scenario::{LinkChange, LinkPair, LinkShape, LinkSpec};
use anyhow::{Result, bail};
use toxiproxy::Toxiproxy;

/// One directed peer link: `from` dials `to` at `dial` (the proxy), which forwards to
/// `to`'s own P2P address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxiedLink {
    pub from: String,
    pub to: String,
    /// The proxy's name in Toxiproxy (`alice->bob`).
    pub proxy: String,
    /// Where `from` dials (the proxy's listener, as the node sees it).
    pub dial: String,
}

/// The run's proxies and the shapes `links:` gives them.
#[derive(Debug, Clone)]
pub struct LinkProxies {
    api: Toxiproxy,
    links: Vec<ProxiedLink>,
    base: Vec<LinkSpec>,
}

impl LinkProxies {
    /// Creates one proxy per directed link of `wanted` (`(from, to, upstream)`, where
    /// `upstream` is `to`'s P2P address as the proxy reaches it), on `host`'s ports, and
    /// gives each its `links:` shape.
    pub async fn create(
        host: &ProxyHost,
        wanted: &[(String, String, String)],
        base: &[LinkSpec],
    ) -> Result<LinkProxies> {
        if wanted.len() > host.ports.len() {
            bail!(
                "the fault proxy has {} ports for {} links",
                host.ports.len(),
                wanted.len()
            );
        }
        let api = Toxiproxy::new(&host.api)?;
        let mut links = Vec::with_capacity(wanted.len());
        for ((from, to, upstream), port) in wanted.iter().zip(&host.ports) {
            let proxy = format!("{from}->{to}");
            api.create(&proxy, &port.listen, upstream).await?;
            links.push(ProxiedLink {
                from: from.clone(),
                to: to.clone(),
                proxy,
                dial: port.dial.clone(),
            });
        }
        let proxies = LinkProxies {
            api,
            links,
            base: base.to_vec(),
        };
        for link in &proxies.links {
            let shape = proxies.base_shape(&link.from, &link.to);
            if !shape.is_clear() {
                proxies.api.set_shape(&link.proxy, &shape).await?;
            }
        }
        Ok(proxies)
    }

    pub fn links(&self) -> &[ProxiedLink] {
        &self.links
    }

    /// Where `from` dials `to`, when that link is proxied.
    pub fn dial_addr(&self, from: &str, to: &str) -> Option<&str> {
        (self.links.iter())
            .find(|l| l.from == from && l.to == to)
            .map(|l| l.dial.as_str())
    }

    /// The `links:` shape of the connection between `x` and `y` (the last entry that
    /// covers it; clear when none does).
    pub fn base_shape(&self, x: &str, y: &str) -> LinkShape {
        (self.base.iter().rev())
            .find(|l| l.pair.covers(x, y))
            .map(|l| l.shape)
            .unwrap_or_default()
    }

    fn covered<'a>(&'a self, pair: &'a LinkPair) -> impl Iterator<Item = &'a ProxiedLink> {
        self.links.iter().filter(|l| pair.covers(&l.from, &l.to))
    }

    /// Applies a link fault to every proxied link `pair` covers; the count of links.
    pub async fn apply(&self, pair: &LinkPair, change: LinkChange) -> Result<usize> {
        let mut n = 0;
        for link in self.covered(pair) {
            match change {
                LinkChange::Shape(shape) => self.api.set_shape(&link.proxy, &shape).await?,
                LinkChange::Down => self.api.set_enabled(&link.proxy, false).await?,
                LinkChange::Reset => {
                    self.api.set_enabled(&link.proxy, false).await?;
                    self.api.set_enabled(&link.proxy, true).await?;
                }
            }
            n += 1;
        }
        Ok(n)
    }

    /// Lifts a link fault: each link `pair` covers gets its `links:` shape back and is
    /// enabled.
    pub async fn restore(&self, pair: &LinkPair, change: LinkChange) -> Result<()> {
        for link in self.covered(pair) {
            match change {
                LinkChange::Shape(_) => {
                    let shape = self.base_shape(&link.from, &link.to);
                    self.api.set_shape(&link.proxy, &shape).await?;
                }
                LinkChange::Down => self.api.set_enabled(&link.proxy, true).await?,
                LinkChange::Reset => {}
            }
        }
        Ok(())
    }
}

/// The directed links of `channels`' peer connections, each once: `(from, to)`.
pub fn directed(channels: &[crate::scenario::ChannelSpec]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for ch in channels {
        let l = (ch.from.clone(), ch.to.clone());
        if !out.contains(&l) {
            out.push(l);
        }
    }
    out
}
