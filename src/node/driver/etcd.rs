//! The capability of keeping a node's state on etcd: an implementation whose node can
//! (LND, built with `kvdb_etcd`) offers it ([`super::NodeDriver::etcd`]); the runtimes
//! that start etcd for the run ask it how to point the node there.

use crate::chain::ConfigFile;

/// How a node of an implementation with an etcd backend is pointed at the run's etcd.
pub trait Etcd: Send + Sync {
    /// True when the node's arguments ask for an etcd server the runtime provides.
    fn wanted_by(&self, args: &[String]) -> bool;
    /// The arguments that point the node at the etcd endpoints `hosts` (`host:port`,
    /// comma-separated), its keys under `namespace` (one per node).
    fn args_for(&self, hosts: &str, namespace: &str) -> Vec<String>;
    /// The config file lines that give the node etcd's `user` and `password` (never its
    /// command line), merged into its config file of that path.
    fn config(&self, user: &str, password: &str) -> ConfigFile;
}
