//! A private PostgreSQL server for the history tests, started as the local runtime
//! starts one for nodes on `database: postgres` (the machine's initdb and postgres,
//! a fresh data directory, a 0700 socket directory): it listens on 127.0.0.1 for one
//! role, `history`, that owns its database and logs in with a password (SCRAM). The
//! server is killed and its directories removed when the guard drops, however the
//! test ends. Without PostgreSQL installed the test is recorded as not run (outside CI,
//! where its absence fails).

#![allow(dead_code)] // each test binary uses a different subset of these helpers

use lnbench_tui::runtime::RuntimeError;
use lnbench_tui::runtime::local::postgres::Postgres;

pub struct PgServer {
    pg: Option<Postgres>,
    _dir: tempfile::TempDir,
    /// Kept alive for the server's process (a tokio child).
    _rt: tokio::runtime::Runtime,
    pub port: u16,
    pub user: String,
    pub password: String,
    pub database: String,
}

impl PgServer {
    /// The URL of its database, without the password (given as PGPASSWORD).
    pub fn url(&self) -> String {
        format!(
            "postgres://{}@127.0.0.1:{}/{}?sslmode=disable",
            self.user, self.port, self.database
        )
    }

    /// The same with the password in the URL.
    pub fn url_with(&self, password: &str) -> String {
        format!(
            "postgres://{}:{password}@127.0.0.1:{}/{}?sslmode=disable",
            self.user, self.port, self.database
        )
    }

    /// A client of its own (to plant what a test needs).
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url_with(&self.password), postgres::NoTls)
            .expect("connect to the test server")
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if let Some(mut pg) = self.pg.take() {
            pg.proc.kill_now();
            let _ = std::fs::remove_dir_all(&pg.socket_dir);
            let _ = std::fs::remove_dir_all(&pg.data);
        }
    }
}

/// A free port on 127.0.0.1 (bound, then let go).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind 127.0.0.1:0");
    l.local_addr().unwrap().port()
}

/// Starts the server, or `None` (recorded as not run) without PostgreSQL.
pub fn start(test: &str) -> Option<PgServer> {
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let port = free_port();
    let name = format!("hist-{}-{port}", std::process::id());
    let clients = ["history".to_string()];
    let started = rt.block_on(Postgres::start(dir.path(), &name, port, &clients));
    let pg = match started {
        Ok(pg) => pg,
        Err(RuntimeError::BinaryNotFound { binary, .. }) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must have PostgreSQL (scripts/setup.sh installs it): {binary} missing"
            );
            crate::common::record_not_run(test, &format!("PostgreSQL is not installed ({binary})"));
            return None;
        }
        Err(e) => panic!("PostgreSQL did not start: {e}"),
    };
    let login = rt.block_on(pg.login_over_tcp("history"));
    let mut server = PgServer {
        pg: Some(pg),
        _dir: dir,
        _rt: rt,
        port,
        user: String::new(),
        password: String::new(),
        database: String::new(),
    };
    let login = login.expect("a role and database for the history");
    server.user = login.user;
    server.password = login.password;
    server.database = login.database;
    Some(server)
}
