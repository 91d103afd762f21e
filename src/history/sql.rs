//! What the two stores share and where they differ. The record and query code
//! (`store.rs`) is written once, in SQLite's placeholders (`?1`), with typed
//! parameters ([`Param`]) and untyped cells read back ([`Cell`]); each backend
//! (`sqlite.rs`, `postgres.rs`) binds and reads them. Every difference of SQL between
//! SQLite and PostgreSQL is in [`Dialect`]: placeholders, how a transaction starts,
//! how the schema version is found, the order of a point's nodes, the migrations.

use anyhow::{Result, anyhow};

/// A parameter, typed so that PostgreSQL (strict about types) gets the column's type
/// even for a NULL: integers are BIGINT, reals DOUBLE PRECISION.
#[derive(Debug, Clone, PartialEq)]
pub enum Param<'a> {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<&'a str>),
    Bool(Option<bool>),
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(v: &'a str) -> Self {
        Param::Text(Some(v))
    }
}
impl<'a> From<&'a String> for Param<'a> {
    fn from(v: &'a String) -> Self {
        Param::Text(Some(v))
    }
}
impl<'a> From<&'a Option<String>> for Param<'a> {
    fn from(v: &'a Option<String>) -> Self {
        Param::Text(v.as_deref())
    }
}
impl From<i64> for Param<'_> {
    fn from(v: i64) -> Self {
        Param::Int(Some(v))
    }
}
impl From<u64> for Param<'_> {
    fn from(v: u64) -> Self {
        Param::Int(Some(v as i64))
    }
}
impl From<Option<u32>> for Param<'_> {
    fn from(v: Option<u32>) -> Self {
        Param::Int(v.map(i64::from))
    }
}
impl From<Option<u64>> for Param<'_> {
    fn from(v: Option<u64>) -> Self {
        Param::Int(v.map(|v| v as i64))
    }
}
impl From<f64> for Param<'_> {
    fn from(v: f64) -> Self {
        Param::Real(Some(v))
    }
}
impl From<Option<f64>> for Param<'_> {
    fn from(v: Option<f64>) -> Self {
        Param::Real(v)
    }
}
impl From<bool> for Param<'_> {
    fn from(v: bool) -> Self {
        Param::Bool(Some(v))
    }
}
impl From<Option<bool>> for Param<'_> {
    fn from(v: Option<bool>) -> Self {
        Param::Bool(v)
    }
}

/// A value read back. SQLite has no boolean (an INTEGER 0 or 1) and PostgreSQL's
/// `count(*) > 0` is one, so the readers accept either.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bool(bool),
}

impl Cell {
    pub fn int(&self) -> Result<i64> {
        match self {
            Cell::Int(v) => Ok(*v),
            Cell::Bool(b) => Ok(i64::from(*b)),
            other => Err(anyhow!("expected an integer, read {other:?}")),
        }
    }
    pub fn opt_int(&self) -> Result<Option<i64>> {
        self.nullable(Cell::int)
    }
    pub fn real(&self) -> Result<f64> {
        match self {
            Cell::Real(v) => Ok(*v),
            Cell::Int(v) => Ok(*v as f64),
            other => Err(anyhow!("expected a number, read {other:?}")),
        }
    }
    pub fn opt_real(&self) -> Result<Option<f64>> {
        self.nullable(Cell::real)
    }
    pub fn boolean(&self) -> Result<bool> {
        match self {
            Cell::Bool(b) => Ok(*b),
            Cell::Int(v) => Ok(*v != 0),
            other => Err(anyhow!("expected a boolean, read {other:?}")),
        }
    }
    pub fn opt_bool(&self) -> Result<Option<bool>> {
        self.nullable(Cell::boolean)
    }
    pub fn text(&self) -> Result<String> {
        match self {
            Cell::Text(s) => Ok(s.clone()),
            other => Err(anyhow!("expected text, read {other:?}")),
        }
    }
    pub fn opt_text(&self) -> Result<Option<String>> {
        self.nullable(Cell::text)
    }
    fn nullable<T>(&self, f: impl Fn(&Cell) -> Result<T>) -> Result<Option<T>> {
        match self {
            Cell::Null => Ok(None),
            other => f(other).map(Some),
        }
    }
}

/// The SQL of one kind of server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// `MIGRATIONS[i]` takes a store from version `i` to `i + 1`: (SQLite, PostgreSQL).
const MIGRATIONS: &[(&str, &str)] = &[
    (
        include_str!("schema_v1.sql"),
        include_str!("schema_v1.pg.sql"),
    ),
    (
        include_str!("schema_v2.sql"),
        include_str!("schema_v2.pg.sql"),
    ),
    (
        include_str!("schema_v3.sql"),
        include_str!("schema_v3.pg.sql"),
    ),
];

/// The schema this build writes and reads. A store of a higher version is refused.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

impl Dialect {
    /// `sql` (written with SQLite's `?N`) with this server's placeholders: `$N` for
    /// PostgreSQL. The store's statements hold no `?` in a literal.
    pub fn sql(self, sql: &str) -> String {
        match self {
            Dialect::Sqlite => sql.to_string(),
            Dialect::Postgres => {
                let mut out = String::with_capacity(sql.len());
                let mut chars = sql.chars().peekable();
                while let Some(c) = chars.next() {
                    if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
                        out.push('$');
                    } else {
                        out.push(c);
                    }
                }
                out
            }
        }
    }

    /// Starts a transaction that writes: SQLite takes its write lock at once (so a
    /// store locked by another process is waited for here, not half-way).
    pub fn begin(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        }
    }

    /// Inside the migration's transaction, before the version is read: PostgreSQL
    /// holds a transaction-level advisory lock, so two processes opening a new store
    /// at once migrate it one after the other. (SQLite's BEGIN IMMEDIATE does this.)
    pub fn migration_lock(self) -> Option<&'static str> {
        match self {
            Dialect::Sqlite => None,
            // "lnbench" as digits: a key of this tool's own.
            Dialect::Postgres => Some("SELECT pg_advisory_xact_lock(5662362436)"),
        }
    }

    /// One row, one cell: whether the `schema_version` table exists.
    pub fn has_version_table(self) -> &'static str {
        match self {
            Dialect::Sqlite => {
                "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
            }
            Dialect::Postgres => {
                "SELECT count(*) > 0 FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_name = 'schema_version'"
            }
        }
    }

    /// One row, one cell: how many tables there are (0: a new, empty store).
    pub fn table_count(self) -> &'static str {
        match self {
            Dialect::Sqlite => "SELECT count(*) FROM sqlite_master",
            Dialect::Postgres => {
                "SELECT count(*) FROM information_schema.tables \
                 WHERE table_schema = current_schema()"
            }
        }
    }

    /// The column that keeps a point's nodes in the order inserted.
    pub fn node_order(self) -> &'static str {
        match self {
            Dialect::Sqlite => "rowid",
            Dialect::Postgres => "id",
        }
    }

    /// The migration from `version` to `version + 1`.
    pub fn migration(self, version: i64) -> Option<&'static str> {
        let (sqlite, pg) = MIGRATIONS.get(usize::try_from(version).ok()?)?;
        Some(match self {
            Dialect::Sqlite => sqlite,
            Dialect::Postgres => pg,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_gets_dollar_placeholders_and_sqlite_its_own() {
        let sql = "SELECT id FROM runs WHERE source = ?1 AND started_at = ?12 AND x = '?'";
        assert_eq!(Dialect::Sqlite.sql(sql), sql);
        assert_eq!(
            Dialect::Postgres.sql(sql),
            "SELECT id FROM runs WHERE source = $1 AND started_at = $12 AND x = '?'"
        );
    }

    #[test]
    fn each_version_has_a_migration_for_both_servers() {
        for v in 0..SCHEMA_VERSION {
            for d in [Dialect::Sqlite, Dialect::Postgres] {
                let sql = d.migration(v).unwrap();
                assert!(sql.contains("CREATE") || sql.contains("ALTER"), "{sql}");
            }
        }
        assert_eq!(Dialect::Sqlite.migration(SCHEMA_VERSION), None);
        assert_eq!(Dialect::Postgres.migration(-1), None);
        // PostgreSQL's types are strict: no SQLite-only type names in its schema.
        for v in 0..SCHEMA_VERSION {
            let pg = Dialect::Postgres.migration(v).unwrap();
            for word in [" REAL", "INTEGER PRIMARY KEY", "strftime"] {
                assert!(!pg.contains(word), "{word} in {pg}");
            }
        }
    }

    #[test]
    fn cells_read_booleans_and_integers_from_either_server() {
        assert!(Cell::Int(1).boolean().unwrap());
        assert!(!Cell::Bool(false).boolean().unwrap());
        assert_eq!(Cell::Bool(true).int().unwrap(), 1);
        assert_eq!(Cell::Int(3).real().unwrap(), 3.0);
        assert_eq!(Cell::Null.opt_real().unwrap(), None);
        assert_eq!(Cell::Null.opt_text().unwrap(), None);
        assert!(Cell::Text("x".into()).int().is_err());
        assert!(Cell::Null.text().is_err());
    }
}
