//! The capability of keeping a node's state in PostgreSQL: an implementation whose
//! node can offers it ([`super::NodeDriver::postgres`]); `database: postgres` and the
//! runtimes' database server ask it how to point the node at its database.

use crate::chain::ConfigFile;

/// How a node of an implementation with a PostgreSQL backend is pointed at its
/// database on the run's server.
pub trait Postgres: Send + Sync {
    /// True when the node's arguments ask for a PostgreSQL database the runtime
    /// provides (besides `database: postgres`, which always does).
    fn wanted_by(&self, args: &[String]) -> bool;
    /// The flags that choose the PostgreSQL backend (besides [`Postgres::arg_for`]), for
    /// `database: postgres`; empty where the database's address alone chooses it.
    fn flags(&self) -> &'static [&'static str];
    /// The argument that points the node at its PostgreSQL database.
    fn arg_for(&self, dsn: &str) -> String;
    /// The arguments that point the node at its PostgreSQL database: the one of
    /// [`Postgres::arg_for`], unless the implementation needs several (Eclair: host, port,
    /// database and user apart).
    fn args_for(&self, dsn: &str) -> Vec<String> {
        vec![self.arg_for(dsn)]
    }
    /// The config file lines that point the node at its PostgreSQL database `dsn`
    /// (which carries the run's password), merged into its config file of that path, so
    /// that the password is never on its command line. `None` when `dsn` cannot be
    /// written so.
    fn config(&self, dsn: &str) -> Option<ConfigFile>;
    /// True when the node can reach PostgreSQL over a unix socket; false for clients
    /// that speak TCP only, for whom the local runtime's server also listens on
    /// loopback TCP (their login through [`Postgres::config`]).
    fn over_unix_socket(&self) -> bool {
        true
    }
    /// Files in its data dir where the node notes its database's address, and refuses
    /// to start on another (Eclair's `last_jdbcurl`): a snapshot leaves them out, as
    /// the run it is restored into gives the node the same data on another server.
    fn address_files(&self) -> &'static [&'static str] {
        &[]
    }
}

/// A node's login to a PostgreSQL server over TCP with a password (the local runtime's
/// server, for a client that speaks TCP only).
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresLogin {
    pub host: String,
    pub port: u16,
    pub database: String,
    pub user: String,
    /// A secret of the run (registered for redaction).
    pub password: String,
}

/// Everything but the password, which a log line or a panic message must not carry.
impl std::fmt::Debug for PostgresLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresLogin")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("database", &self.database)
            .field("user", &self.user)
            .field("password", &crate::secrets::REDACTED)
            .finish()
    }
}

impl PostgresLogin {
    /// As a DSN with its password, for [`Postgres::config`] (the password is the run's
    /// own: letters and digits, nothing to escape).
    pub fn dsn(&self) -> String {
        let PostgresLogin {
            host,
            port,
            database,
            user,
            password,
        } = self;
        format!("postgres://{user}:{password}@{host}:{port}/{database}?sslmode=disable")
    }
}

#[cfg(test)]
mod tests {
    use super::PostgresLogin;

    #[test]
    fn a_postgres_login_shows_no_password_in_debug_and_keeps_it_in_its_dsn() {
        let login = PostgresLogin {
            host: "127.0.0.1".into(),
            port: 5432,
            database: "alice".into(),
            user: "alice".into(),
            password: "s3cretpassw0rd".into(),
        };
        let debug = format!("{login:?}");
        assert!(!debug.contains("s3cretpassw0rd"), "{debug}");
        assert!(
            debug.contains(crate::secrets::REDACTED) && debug.contains("5432"),
            "{debug}"
        );
        assert!(login.dsn().contains(":s3cretpassw0rd@127.0.0.1:5432/alice"));
    }
}
