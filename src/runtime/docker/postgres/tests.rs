use super::*;

#[test]
fn the_container_publishes_nothing_and_carries_the_run_labels() {
    let labels = spec::labels("r1", "s", Some(NAME));
    let body = body("lnbench/postgres:15", "lnbench-r1", labels, None);
    let host = body.host_config.unwrap();
    // Not published: only the run's network (and the host, through its bridge).
    assert!(host.port_bindings.unwrap_or_default().is_empty());
    assert!(body.exposed_ports.unwrap_or_default().is_empty());
    assert_eq!(host.network_mode.as_deref(), Some("lnbench-r1"));
    let aliases = body.networking_config.unwrap().endpoints_config.unwrap()["lnbench-r1"]
        .aliases
        .clone();
    assert_eq!(aliases, Some(vec!["postgres".to_string()]));
    assert_eq!(body.hostname.as_deref(), Some("postgres"));
    let labels = body.labels.unwrap();
    assert_eq!(labels["lnbench.run"], "r1");
    assert_eq!(labels["lnbench.scenario"], "s");
    assert_eq!(labels["lnbench.node"], "postgres");
    assert_eq!(body.image.as_deref(), Some("lnbench/postgres:15"));
    assert_eq!(
        body.cmd.unwrap(),
        ["-c", "max_connections=500", "-c", "log_connections=on"]
    );
}

#[test]
fn each_node_gets_its_own_database_at_the_postgres_alias() {
    assert_eq!(
        dsn("alice", "pw"),
        "postgres://lnbench:pw@postgres:5432/alice?sslmode=disable"
    );
    assert_ne!(dsn("alice", "pw"), dsn("bob", "pw"));
}

/// An image built before psql was in it fails at once, saying to rebuild it, instead of
/// being retried until the start-up deadline.
#[test]
fn an_image_without_psql_is_named_stale() {
    let out = "OCI runtime exec failed: exec failed: unable to start container process: \
               exec: \"psql\": executable file not found in $PATH: unknown";
    let err = stale_image("PostgreSQL", "psql", out).map(|e| e.to_string());
    let err = err.unwrap_or_default();
    assert!(
        err.contains("scripts/build-images.sh") && err.contains("psql"),
        "{err}"
    );
    let starting = "psql: error: connection to server on socket \"/tmp/.s.PGSQL.5432\" failed";
    assert!(stale_image("PostgreSQL", "psql", starting).is_none());
}

/// The statement that sets the password is not logged when it fails (the server's log
/// is kept in the run directory), and psql ends after it.
#[test]
fn the_password_is_set_with_its_statement_kept_out_of_the_log() {
    let sql = password_sql(PASSWORD);
    let lines: Vec<&str> = sql.lines().collect();
    assert_eq!(
        lines,
        [
            "SET log_min_error_statement = panic;",
            &format!("ALTER ROLE lnbench PASSWORD '{PASSWORD}';"),
            "\\q"
        ]
    );
}

#[test]
fn the_highest_major_version_is_chosen() {
    let tags = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        newest(&tags(&[
            "lnbench/postgres:9",
            "lnbench/postgres:15",
            "lnbench/postgres:latest",
            "lnbench/postgresql:99",
            "other/postgres:17"
        ])),
        Some("lnbench/postgres:15".into())
    );
    assert_eq!(newest(&tags(&["lnbench/postgres:dev"])), None);
    assert_eq!(newest(&[]), None);
}

#[test]
fn the_server_stops_after_the_nodes() {
    assert!(stops_last("postgres"));
    assert!(stops_last("chain"));
    assert!(!stops_last("alice"));
}

const PASSWORD: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";

/// A DSN of the run's server with the run's password, as the runtime hands it out.
fn dsn_with_password() -> String {
    format!("postgres://lnbench:{PASSWORD}@postgres:5432/alice?sslmode=disable")
}

/// The DSN (and so the password) of every implementation on the run's server reaches
/// its node in a config file inside the container, never on its command line or in its
/// environment, which `docker inspect` and `ps` show.
#[test]
fn the_password_reaches_each_node_in_its_config_file_only() {
    use crate::chain::ChainKind;
    use crate::node::Implementation;
    let access = super::super::chain_access(ChainKind::Bitcoind, "u", "p");
    let dsn = dsn_with_password();
    for (implementation, file, line) in [
        (
            Implementation::Lnd,
            "lnd.conf",
            format!("db.postgres.dsn={dsn}"),
        ),
        (Implementation::Cln, "config", format!("wallet={dsn}")),
        (
            Implementation::Eclair,
            "eclair.conf",
            format!("eclair.db.postgres.password = \"{PASSWORD}\""),
        ),
    ] {
        let (cmd, mut configs) = super::super::node_command(implementation, "alice", &access);
        point_at(implementation, &dsn, &mut configs).unwrap();
        let body = spec::container_body(&spec::ContainerSpec {
            name: "alice",
            image: "lnbench/x:1",
            cmd,
            ports: &[(10009, 0)],
            network: "lnbench-r1",
            labels: HashMap::new(),
            envelope: None,
        });
        let shown = format!("{:?} {:?} {:?}", body.cmd, body.env, body.entrypoint);
        assert!(
            !shown.contains(PASSWORD),
            "{implementation:?}: the password is on the container's command line: {shown}"
        );
        let config = configs.iter().find(|c| c.path == file);
        let content = config.map(|c| c.content.as_str()).unwrap_or_default();
        assert!(
            content.lines().any(|l| l == line),
            "{implementation:?}: no `{line}` in {file}: {configs:?}"
        );
    }
}

/// What the server answers a client that starts a session as `lnbench` with no
/// password: the message type, and the authentication code of an `R` message
/// (0: let in; 10: SASL, a password is asked for).
async fn startup_answer(addr: &str) -> std::io::Result<(u8, i32)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    let params = format!("user\0{USER}\0database\0postgres\0\0");
    let len = i32::try_from(8 + params.len()).unwrap();
    let mut message = len.to_be_bytes().to_vec();
    message.extend_from_slice(&196_608_i32.to_be_bytes()); // protocol 3.0
    message.extend_from_slice(params.as_bytes());
    stream.write_all(&message).await?;
    let kind = stream.read_u8().await?;
    let _len = stream.read_i32().await?;
    let code = if kind == b'R' {
        stream.read_i32().await?
    } else {
        -1
    };
    Ok((kind, code))
}

/// The run's PostgreSQL holds LND's wallet and macaroon root key: a client on the host
/// reaching the container through the run's bridge without the run's password is not
/// let in.
#[tokio::test]
async fn a_client_on_the_host_without_the_password_is_refused() {
    let Ok(docker) = super::super::connect().await else {
        eprintln!("not run: no Docker engine answers");
        return;
    };
    let Ok(pg_image) = image(&docker).await else {
        eprintln!("not run: no lnbench/postgres image (scripts/build-images.sh)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let images = super::super::RunImages {
        chain: String::new(),
        nodes: Vec::new(),
        postgres: Some(pg_image),
    };
    let run = format!("pg-auth-{:08x}", rand::random::<u32>());
    let mut rt = DockerRuntime::new(docker, images, &run, "t", tmp.path().into(), false);
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 1;
    let started = rt.start_postgres().await;
    let dsn = match &started {
        Ok(()) => rt.database_for("alice").await.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    let id = (rt.containers.iter().find(|c| c.name == NAME)).map(|c| c.id.clone());
    let ip = match &id {
        Some(id) => rt.network_ip(id).await,
        None => None,
    };
    let answer = match &ip {
        Some(ip) => {
            let addr = format!("{ip}:{PORT}");
            tokio::time::timeout(Duration::from_secs(30), startup_answer(&addr))
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r.map_err(|e| e.to_string()))
        }
        None => Err("the server has no address on the run network".into()),
    };
    // From the run's network (the server's own address, over TCP): without the
    // password refused, with it let in.
    let (without, with, shown) = match (&id, &ip, &dsn) {
        (Some(id), Some(ip), Ok(dsn)) => {
            let password = dsn_password(dsn);
            let uri = |login: &str| format!("postgresql://{login}@{ip}:{PORT}/alice");
            (
                connects(&rt.docker, id, &uri(USER)).await,
                connects(&rt.docker, id, &uri(&format!("{USER}:{password}"))).await,
                shown_by_inspect(&rt.docker, id).await,
            )
        }
        _ => (
            Err("not started".into()),
            Err("not started".into()),
            String::new(),
        ),
    };
    super::super::Runtime::down(&mut rt).await.unwrap();
    let execs = exec_commands(&rt.docker, &run, since).await;
    started.unwrap();
    let dsn = dsn.unwrap();
    let (code, out) = without.unwrap();
    assert_ne!(
        code, 0,
        "psql over TCP without the password was let in: {out}"
    );
    let (code, out) = with.unwrap();
    assert_eq!(
        code, 0,
        "psql over TCP with the password was refused: {out}"
    );
    assert!(out.contains("alice"), "{out}");
    // The password in no argument of the container or of its execs (createdb, psql).
    assert!(shown.contains("max_connections"), "{shown}");
    assert!(!shown.contains(dsn_password(&dsn)), "{shown}");
    assert!(
        execs.iter().any(|e| e.contains("createdb")) && execs.iter().any(|e| e.contains("psql")),
        "{execs:?}"
    );
    assert!(
        !execs.iter().any(|e| e.contains(dsn_password(&dsn))),
        "{execs:?}"
    );
    let (kind, code) = answer.unwrap();
    assert!(
        !(kind == b'R' && code == 0),
        "a client without the password was let in (message {:?}, code {code})",
        kind as char
    );
}

/// The password of a DSN the runtime handed out.
fn dsn_password(dsn: &str) -> &str {
    let login = dsn
        .strip_prefix("postgres://")
        .unwrap()
        .split('@')
        .next()
        .unwrap();
    login.split_once(':').unwrap().1
}

/// psql in the server's container, started over the unix socket, switching to `uri`
/// (over TCP): its exit code and output.
async fn connects(docker: &Docker, id: &str, uri: &str) -> Result<(i64, String), String> {
    let sql = format!("\\connect {uri}\nSELECT current_database();\n\\q\n");
    exec(docker, id, &psql("postgres"), Some(&sql)).await
}

/// What `docker inspect` shows of the container's command line and environment.
async fn shown_by_inspect(docker: &Docker, id: &str) -> String {
    let Ok(container) = docker.inspect_container(id, None).await else {
        return String::new();
    };
    let config = container.config.as_ref();
    format!(
        "{:?} {:?} {:?} {:?}",
        config.map(|c| &c.cmd),
        config.map(|c| &c.env),
        config.map(|c| &c.entrypoint),
        container.args
    )
}

/// The command lines of the execs in the containers of run `run` since `since` (unix
/// seconds), as the engine's events show them (`exec_start: <command>`).
async fn exec_commands(docker: &Docker, run: &str, since: u64) -> Vec<String> {
    let label = format!("{}={run}", super::super::LABEL_RUN);
    let filters = HashMap::from([("label", vec![label.as_str()]), ("type", vec!["container"])]);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let options = bollard::query_parameters::EventsOptionsBuilder::default()
        .since(&since.to_string())
        .until(&(now + 1).to_string())
        .filters(&filters)
        .build();
    let events: Vec<_> = docker.events(Some(options)).collect().await;
    (events.into_iter().flatten())
        .filter_map(|e| e.action)
        .filter(|a| a.starts_with("exec_start"))
        .collect()
}
