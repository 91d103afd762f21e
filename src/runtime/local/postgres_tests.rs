use super::*;
use std::os::unix::fs::PermissionsExt;

#[test]
fn a_socket_dsn_names_the_directory_port_and_database() {
    assert_eq!(
        socket_dsn(Path::new("/tmp/lnbench-pg-1-5432"), 5432, "alice"),
        "postgres://lnbench@/alice?host=/tmp/lnbench-pg-1-5432&port=5432&sslmode=disable"
    );
}

#[test]
fn over_tcp_only_each_named_node_to_its_database_with_a_password() {
    assert_eq!(hba(&[]), "local all all trust\n");
    assert_eq!(
        hba(&["carol".into(), "we\"ird".into()]),
        "local all all trust\n\
         host \"carol\" \"carol\" 127.0.0.1/32 scram-sha-256\n\
         host \"we\"\"ird\" \"we\"\"ird\" 127.0.0.1/32 scram-sha-256\n"
    );
}

#[test]
fn the_role_sql_quotes_the_name_and_the_password() {
    assert_eq!(
        login_sql("a\"b", "p'w"),
        "CREATE ROLE \"a\"\"b\" LOGIN PASSWORD 'p''w';\n\
         ALTER DATABASE \"a\"\"b\" OWNER TO \"a\"\"b\";\n"
    );
}

/// `psql` over TCP to 127.0.0.1:`port` as `user` on `database`, with `password`
/// (in the environment) if any: whether it could create a table there.
async fn tcp_login(port: u16, user: &str, database: &str, password: Option<&str>) -> bool {
    let mut cmd = tokio::process::Command::new(find("psql").unwrap());
    cmd.args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", user])
        .args(["-d", database, "-w", "-X", "-v", "ON_ERROR_STOP=1"])
        .args(["-c", "CREATE TABLE IF NOT EXISTS t (x int)"])
        .env_remove("PGPASSWORD")
        .kill_on_drop(true);
    if let Some(p) = password {
        cmd.env("PGPASSWORD", p);
    }
    cmd.output().await.unwrap().status.success()
}

/// The real server started for a TCP-only client: over loopback TCP that node's
/// role gets into its own database with its password, and nothing else gets in.
#[tokio::test]
async fn a_tcp_client_gets_in_with_its_password_only() {
    if find("initdb").is_err() || find("psql").is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have PostgreSQL (scripts/setup.sh installs it)"
        );
        eprintln!("not run: PostgreSQL is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = super::super::ports::free_ports(1).unwrap()[0];
    let run_name = format!("pgtcp-{}", std::process::id());
    let clients = ["carol".to_string(), "dave".to_string()];
    let mut pg = Postgres::start(dir.path(), &run_name, port, &clients)
        .await
        .unwrap();
    let carol = pg.login_over_tcp("carol").await;
    let dave = pg.login_over_tcp("dave").await;
    let stranger = pg.login_over_tcp("erin").await;
    let (mut right, mut wrong, mut superuser, mut other_db) = (false, true, true, true);
    if let (Ok(c), Ok(_)) = (&carol, &dave) {
        right = tcp_login(port, "carol", "carol", Some(&c.password)).await;
        wrong = tcp_login(port, "carol", "carol", Some("not-the-password")).await;
        superuser = tcp_login(port, USER, "postgres", None).await;
        other_db = tcp_login(port, "carol", "dave", Some(&c.password)).await;
    }
    pg.proc.kill_now();
    let _ = std::fs::remove_dir_all(&pg.socket_dir);
    if !pg.data.starts_with(dir.path()) {
        let _ = std::fs::remove_dir_all(&pg.data);
    }
    let (carol, dave) = (carol.unwrap(), dave.unwrap());
    assert_eq!((carol.host.as_str(), carol.port), ("127.0.0.1", port));
    assert_eq!(
        (carol.database.as_str(), carol.user.as_str()),
        ("carol", "carol")
    );
    assert_eq!(carol.password.len(), 32);
    assert_ne!(carol.password, dave.password, "one password per node");
    assert_eq!(
        crate::redact::redact_text(&carol.password),
        crate::redact::REDACTED,
        "a secret of the run"
    );
    assert!(right, "carol could not use her database over TCP");
    assert!(!wrong, "a wrong password was accepted");
    assert!(
        !superuser,
        "the superuser got in over TCP without a password"
    );
    assert!(!other_db, "carol got into dave's database");
    assert!(stranger.is_err(), "a node the server was not started for");
}

/// The real server (Debian's postgresql, which scripts/setup.sh installs): no TCP
/// listener, its socket in a fresh 0700 directory, databases created through it.
#[tokio::test]
async fn the_server_listens_on_a_private_socket_only() {
    if find("initdb").is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have PostgreSQL (scripts/setup.sh installs it)"
        );
        eprintln!("not run: PostgreSQL is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = super::super::ports::free_ports(1).unwrap()[0];
    let run_name = format!("pgtest-{}", std::process::id());
    let mut pg = Postgres::start(dir.path(), &run_name, port, &[])
        .await
        .unwrap();
    let mode = std::fs::metadata(&pg.socket_dir)
        .unwrap()
        .permissions()
        .mode();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await;
    let dsn = pg.database_for("alice").await;
    // A second server on the same port cannot reuse the socket directory.
    let again = private_socket_dir(&pg.data, port);
    pg.proc.kill_now();
    let _ = std::fs::remove_dir_all(&pg.socket_dir);
    if !pg.data.starts_with(dir.path()) {
        let _ = std::fs::remove_dir_all(&pg.data);
    }
    assert_eq!(mode & 0o777, 0o700);
    assert!(tcp.is_err(), "PostgreSQL accepted TCP on 127.0.0.1:{port}");
    let dsn = dsn.unwrap();
    assert!(dsn.contains(&pg.socket_dir.display().to_string()), "{dsn}");
    assert!(again.is_err(), "an existing socket directory was reused");
}
