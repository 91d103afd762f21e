//! Where the store is: an SQLite file, or a PostgreSQL server named by a URL
//! (`postgres://USER@HOST:PORT/DATABASE`, `--store` or `$LNBENCH_HISTORY`). The
//! password may stand in the URL, but a command line is readable by every user of the
//! machine (`ps`), so `$PGPASSWORD` (libpq's variable) is taken when the URL has
//! none. Wherever the store is named (errors, `recorded as run N in ...`) it is
//! [`Dsn::redacted`]: the password is never printed.

use super::BadStore;
use std::path::{Path, PathBuf};

/// How long a server is waited for when the URL sets no `connect_timeout`.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The environment variable of the password, when the URL has none.
pub const PASSWORD_ENV: &str = "PGPASSWORD";

/// A results store's location.
#[derive(Debug, Clone, PartialEq)]
pub enum StoreAt {
    File(PathBuf),
    Postgres(Box<Dsn>),
}

/// True when `text` names a PostgreSQL server rather than a file.
pub fn is_postgres(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

impl StoreAt {
    /// `path` as given (`--store`, `$LNBENCH_HISTORY`): a URL of PostgreSQL's, else a
    /// file. `env` reads [`PASSWORD_ENV`].
    pub fn parse(
        path: &Path,
        env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Result<StoreAt, BadStore> {
        match path.to_str().filter(|t| is_postgres(t)) {
            Some(text) => {
                let password = env(PASSWORD_ENV)
                    .and_then(|v| v.into_string().ok())
                    .filter(|v| !v.is_empty());
                Dsn::parse(text, password).map(|d| StoreAt::Postgres(Box::new(d)))
            }
            None => Ok(StoreAt::File(path.to_path_buf())),
        }
    }

    /// [`StoreAt::parse`] with the process's environment.
    pub fn of(path: &Path) -> Result<StoreAt, BadStore> {
        StoreAt::parse(path, &|k| std::env::var_os(k))
    }
}

impl std::fmt::Display for StoreAt {
    /// The path, or the URL with its password redacted.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreAt::File(p) => write!(f, "{}", p.display()),
            StoreAt::Postgres(d) => f.write_str(&d.redacted()),
        }
    }
}

/// A PostgreSQL server's URL, checked, with the password it logs in with.
#[derive(Clone)]
pub struct Dsn {
    given: String,
    /// From the URL (user info or `password=`), else from [`PASSWORD_ENV`].
    password: Option<String>,
    config: postgres::Config,
}

impl PartialEq for Dsn {
    fn eq(&self, other: &Dsn) -> bool {
        (&self.given, &self.password) == (&other.given, &other.password)
    }
}

impl std::fmt::Debug for Dsn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Dsn({})", self.redacted())
    }
}

impl Dsn {
    /// Checks `text` (a `postgres://` URL); `env_password` is used when it names no
    /// password. The password is registered as a secret of the process, so it is
    /// redacted wherever it is quoted.
    pub fn parse(text: &str, env_password: Option<String>) -> Result<Dsn, BadStore> {
        let mut dsn = Dsn {
            given: text.to_string(),
            password: None,
            config: postgres::Config::new(),
        };
        let config: postgres::Config = text.parse().map_err(|e: postgres::Error| {
            BadStore(format!(
                "--store {}: not a PostgreSQL URL ({}); write \
                 postgres://USER@HOST:PORT/DATABASE, the password in ${PASSWORD_ENV}",
                dsn.redacted(),
                dsn.hide(&e.to_string())
            ))
        })?;
        let mut config = config;
        let from_url = config
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned());
        dsn.password = from_url.or(env_password);
        if let Some(p) = &dsn.password {
            config.password(p.as_bytes());
            crate::redact::register_secret(p);
        }
        if config.get_hosts().is_empty() {
            return Err(BadStore(format!(
                "--store {}: no server named; write postgres://USER@HOST:PORT/DATABASE \
                 (or ?host=/socket/dir for a unix socket)",
                dsn.redacted()
            )));
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("lnbench-tui history");
        dsn.config = config;
        Ok(dsn)
    }

    pub fn config(&self) -> &postgres::Config {
        &self.config
    }

    /// The URL as given, its password (in the user info, or a `password=` parameter)
    /// replaced by [`crate::redact::REDACTED`].
    pub fn redacted(&self) -> String {
        let text = &self.given;
        let Some(start) = text.find("://").map(|i| i + 3) else {
            return crate::redact::redact_text(text);
        };
        let rest = &text[start..];
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let authority = &rest[..authority_end];
        let out = match authority.rfind('@') {
            Some(at) => {
                let userinfo = &authority[..at];
                let user = userinfo.split(':').next().unwrap_or_default();
                let hidden = if userinfo.contains(':') {
                    format!("{user}:{}", crate::redact::REDACTED)
                } else {
                    user.to_string()
                };
                format!("{}{hidden}{}", &text[..start], &rest[at..])
            }
            None => text.clone(),
        };
        self.hide(&crate::redact::redact_text(&out))
    }

    /// `text` with the password replaced wherever it stands, however short (the
    /// process's registered secrets are only those of 8 characters and more).
    pub fn hide(&self, text: &str) -> String {
        match self.password.as_deref().filter(|p| !p.is_empty()) {
            Some(p) => text.replace(p, crate::redact::REDACTED),
            None => text.to_string(),
        }
    }

    /// Whether a password is given (in the URL or the environment).
    pub fn has_password(&self) -> bool {
        self.password.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn at(text: &str, pgpassword: Option<&str>) -> Result<StoreAt, BadStore> {
        let pw = pgpassword.map(OsString::from);
        StoreAt::parse(Path::new(text), &move |k| {
            (k == PASSWORD_ENV).then(|| pw.clone()).flatten()
        })
    }

    #[test]
    fn a_url_is_a_server_and_anything_else_a_file() {
        let file = at("/tmp/h.sqlite", Some("pw")).unwrap();
        assert_eq!(file, StoreAt::File("/tmp/h.sqlite".into()));
        assert_eq!(file.to_string(), "/tmp/h.sqlite");
        for url in [
            "postgres://bench@db.example:5433/history",
            "postgresql://bench@db.example/history",
        ] {
            let StoreAt::Postgres(d) = at(url, None).unwrap() else {
                panic!("{url} is a server")
            };
            assert_eq!(d.config().get_user(), Some("bench"));
            assert!(!d.has_password());
        }
    }

    #[test]
    fn the_password_is_never_in_the_name_of_the_store() {
        let StoreAt::Postgres(d) = at("postgres://bench:s3cr%40t@db:5432/h", None).unwrap() else {
            panic!()
        };
        assert_eq!(d.redacted(), "postgres://bench:[REDACTED]@db:5432/h");
        assert_eq!(d.config().get_password(), Some(&b"s3cr@t"[..]));
        assert_eq!(
            d.hide("auth failed for s3cr@t"),
            "auth failed for [REDACTED]"
        );
        let d = Dsn::parse("postgres://bench@db/h?password=pw1&sslmode=disable", None).unwrap();
        assert!(!d.redacted().contains("pw1"), "{}", d.redacted());
        assert!(d.redacted().starts_with("postgres://bench@db/h?"));
        assert_eq!(format!("{d:?}"), format!("Dsn({})", d.redacted()));
    }

    #[test]
    fn the_environment_gives_the_password_the_url_does_not() {
        let StoreAt::Postgres(d) = at("postgres://bench@db/h", Some("env-pw-q7z3")).unwrap() else {
            panic!()
        };
        assert_eq!(d.config().get_password(), Some(&b"env-pw-q7z3"[..]));
        assert_eq!(d.redacted(), "postgres://bench@db/h");
        assert_eq!(d.hide("x env-pw-q7z3 y"), "x [REDACTED] y");
        // The URL's own password wins.
        let StoreAt::Postgres(d) = at("postgres://bench:url-pw@db/h", Some("env-pw-q7z3")).unwrap()
        else {
            panic!()
        };
        assert_eq!(d.config().get_password(), Some(&b"url-pw"[..]));
    }

    #[test]
    fn a_bad_url_is_refused_without_its_password() {
        let e = at("postgres://bench:qz81x7pw@db:notaport/h", None)
            .err()
            .unwrap();
        let text = e.to_string();
        assert!(text.contains("not a PostgreSQL URL"), "{text}");
        assert!(
            text.contains("postgres://USER@HOST:PORT/DATABASE"),
            "{text}"
        );
        assert!(!text.contains("qz81x7pw"), "{text}");
        let e = at("postgres:///h", None).err().unwrap();
        assert!(e.to_string().contains("no server named"), "{e}");
    }

    #[test]
    fn a_socket_directory_names_the_server() {
        let d = Dsn::parse("postgres://bench@/h?host=/run/pg&port=5439", None).unwrap();
        assert_eq!(d.config().get_ports(), [5439]);
        assert_eq!(d.redacted(), "postgres://bench@/h?host=/run/pg&port=5439");
    }
}
