//! The capability of driving a node the tool did not start (`runtime: external`): an
//! implementation offers it ([`super::NodeDriver::external`]) once the scenario can
//! name where such a node's credential files are.

/// How the scenario names the credential files of an external node.
pub trait External: Send + Sync {
    /// The scenario fields with which an external node of this implementation names
    /// its credential files: one per entry of
    /// [`super::NodeDriver::credential_files`], in that order, so
    /// [`super::NodeDriver::credentials`] builds its credentials.
    fn credential_fields(&self) -> &'static [&'static str];
}
