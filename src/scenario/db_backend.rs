//! LND's database backends, as `sweep: db_backend:` names them.

use serde::Deserialize;

/// LND's database backend, set on every LND node of a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DbBackend {
    Bbolt,
    Sqlite,
    /// SQLite with LND's native SQL schema (`--db.use-native-sql`) for the stores
    /// that have one (invoices, payments, graph: as the release has them).
    SqliteNative,
    Postgres,
    /// PostgreSQL with LND's native SQL schema.
    PostgresNative,
    /// One etcd server (the file's `etcd: { members: N }` when it has one).
    Etcd,
    /// A three-member etcd cluster, as Bottlepay ran it.
    EtcdCluster,
}

impl DbBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            DbBackend::Bbolt => "bbolt",
            DbBackend::Sqlite => "sqlite",
            DbBackend::SqliteNative => "sqlite-native",
            DbBackend::Postgres => "postgres",
            DbBackend::PostgresNative => "postgres-native",
            DbBackend::Etcd => "etcd",
            DbBackend::EtcdCluster => "etcd-cluster",
        }
    }

    /// The LND flags that select it.
    pub fn lnd_flags(self) -> &'static [&'static str] {
        const NATIVE: &str = "--db.use-native-sql";
        match self {
            DbBackend::Bbolt => &["--db.backend=bolt"],
            DbBackend::Sqlite => &["--db.backend=sqlite"],
            DbBackend::SqliteNative => &["--db.backend=sqlite", NATIVE],
            DbBackend::Postgres => &["--db.backend=postgres"],
            DbBackend::PostgresNative => &["--db.backend=postgres", NATIVE],
            DbBackend::Etcd | DbBackend::EtcdCluster => &["--db.backend=etcd"],
        }
    }
}
