//! The capability of reading, from a node's log, the database migrations it ran as it
//! started: an implementation whose log says so in words the tool reads (LND) offers it
//! ([`super::NodeDriver::migrations`]), and a run that restores a snapshot into a
//! migrating node reports them.

use crate::node::LoggedMigration;

/// How the database migrations a node ran are read from its log.
pub trait Migrations: Send + Sync {
    /// The migrations the node's log (`log`, its output from its start) says it ran.
    fn in_log(&self, log: &str) -> Vec<LoggedMigration>;
    /// The arguments that move the node's store to another schema, which it migrates
    /// to as it starts (LND's `--db.use-native-sql`, in each form it takes): a node
    /// restored from a snapshot saved without them migrates.
    fn schema_args(&self) -> &'static [&'static str];
}
