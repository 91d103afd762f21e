//! `kill: chain` and `restart: chain`: faults of the chain backend, refused where they
//! cannot do what they say.

use super::super::error::Ctx;
use super::super::error::ScenarioError;
use super::Fault;
use crate::scenario::raw::RawFault;
use crate::scenario::{Capabilities, ChainKind};
use serde_saphyr::Spanned;

/// Refuses a kill or restart of the chain backend on btcd (its regtest chain does not
/// survive a start) and on runtimes that cannot stop their chain and start it again.
pub(in crate::scenario) fn check(
    ctx: &Ctx,
    raw: Option<&Spanned<Vec<Spanned<RawFault>>>>,
    faults: &[Fault],
    chain: ChainKind,
    runtime: &Capabilities,
) -> Result<(), ScenarioError> {
    for (raw, fault) in raw.iter().flat_map(|f| &f.value).zip(faults) {
        if !fault.stops_chain() {
            continue;
        }
        let f = &raw.value;
        let Some(at) = (f.kill.as_ref().or(f.restart.as_ref())).map(|n| &n.referenced) else {
            continue;
        };
        if chain == ChainKind::Btcd {
            return Err(ctx.error(
                at,
                format!(
                    "{} cannot run on btcd: btcd deletes its regtest chain at every \
                     start, so it would come back without the channels' blocks",
                    fault.label()
                ),
                "run the chain on bitcoind: chain: { implementation: bitcoind }",
            ));
        }
        if !runtime.starts_nodes {
            return Err(ctx.error(
                at,
                format!(
                    "{} cannot run here: the {} runtime starts no chain backend to stop",
                    fault.label(),
                    runtime.name
                ),
                "run the scenario with runtime: local, docker or kubernetes",
            ));
        }
    }
    Ok(())
}
