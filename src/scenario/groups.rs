//! The node groups of a scenario (the names under `nodes:`), each with its instances
//! (`carol` with `replicas: 3` is carol-1, carol-2, carol-3), as the sections that name
//! nodes look them up.

use super::error::{Ctx, ScenarioError};
use serde_saphyr::Spanned;
use std::collections::{HashMap, HashSet};

/// The node groups of a scenario (names under `nodes:`) and their instances.
pub(crate) struct Groups {
    /// Group name -> instance names, in file order.
    pub order: Vec<(String, Vec<String>)>,
    /// Group name -> its position in `order`.
    pub(super) index: HashMap<String, usize>,
}

impl Groups {
    pub fn instances(&self, group: &str) -> Option<&[String]> {
        self.index.get(group).map(|&i| self.order[i].1.as_slice())
    }

    pub fn names(&self) -> String {
        let names: Vec<&str> = self.order.iter().map(|(g, _)| g.as_str()).collect();
        names.join(", ")
    }

    /// An error for a name that is not a group, with the defined ones listed.
    pub fn unknown(&self, ctx: &Ctx, name: &Spanned<String>, what: &str) -> ScenarioError {
        let defined = self.names();
        ctx.error(
            &name.referenced,
            format!(
                "{what} names node \"{}\", which is not defined under nodes: (defined: {defined})",
                name.value
            ),
            format!("add {} under nodes: or use one of {defined}", name.value),
        )
    }
}
/// The instances of one `senders:` entry, refused when the group is unknown or was
/// listed before (`seen`).
pub(super) fn sender_instances<'a>(
    ctx: &Ctx,
    groups: &'a Groups,
    sender: &'a Spanned<String>,
    seen: &mut HashSet<&'a str>,
) -> Result<&'a [String], ScenarioError> {
    let instances = groups
        .instances(&sender.value)
        .ok_or_else(|| groups.unknown(ctx, sender, "senders:"))?;
    if !seen.insert(sender.value.as_str()) {
        return Err(ctx.error(
            &sender.referenced,
            format!("{} is listed twice under senders:", sender.value),
            format!("list {} once; all its replicas pay", sender.value),
        ));
    }
    Ok(instances)
}
