//! The SQLite backend of the store: one file, a write lock waited for
//! ([`BUSY_TIMEOUT`]), SQLite's errors said for that file.

use super::BadStore;
use super::sql::{Cell, Param};
use anyhow::Result;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ErrorCode, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a store locked by another process is waited for.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

pub struct Sqlite {
    conn: Connection,
    path: PathBuf,
    busy: Duration,
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Param::Int(v) => v.to_sql()?,
            Param::Real(v) => v.to_sql()?,
            Param::Text(v) => v.to_sql()?,
            Param::Bool(v) => v.to_sql()?,
        })
    }
}

impl Sqlite {
    /// Opens (creating) the file at `path`, which must not be a directory.
    pub fn open(path: &Path, create: bool, busy: Duration) -> Result<Sqlite> {
        if path.is_dir() {
            return Err(BadStore(format!(
                "--store {}: a directory; give a file, e.g. {}",
                path.display(),
                path.join(super::FILE_NAME).display()
            ))
            .into());
        }
        if !create && !path.exists() {
            return Err(BadStore(format!(
                "--store {}: no results store there yet; runs that write a report record \
                 themselves, or `lnbench-tui history import DIR` records earlier ones",
                path.display()
            ))
            .into());
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", parent.display()))?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags(path, flags).map_err(|e| store_error(path, e, busy))?;
        conn.busy_timeout(busy)
            .map_err(|e| store_error(path, e, busy))?;
        Ok(Sqlite {
            conn,
            path: path.to_path_buf(),
            busy,
        })
    }

    fn said(&self, e: rusqlite::Error) -> anyhow::Error {
        store_error(&self.path, e, self.busy)
    }

    pub fn batch(&mut self, sql: &str) -> Result<()> {
        self.conn.execute_batch(sql).map_err(|e| self.said(e))
    }

    pub fn execute(&mut self, sql: &str, params: &[Param]) -> Result<u64> {
        let run = || -> rusqlite::Result<u64> {
            let mut stmt = self.conn.prepare_cached(sql)?;
            Ok(stmt.execute(rusqlite::params_from_iter(params))? as u64)
        };
        run().map_err(|e| self.said(e))
    }

    pub fn query(&mut self, sql: &str, params: &[Param]) -> Result<Vec<Vec<Cell>>> {
        let run = || -> rusqlite::Result<Vec<Vec<Cell>>> {
            let mut stmt = self.conn.prepare_cached(sql)?;
            let width = stmt.column_count();
            let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                let cells = (0..width)
                    .map(|i| {
                        Ok(match row.get_ref(i)? {
                            ValueRef::Null => Cell::Null,
                            ValueRef::Integer(v) => Cell::Int(v),
                            ValueRef::Real(v) => Cell::Real(v),
                            ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into()),
                            ValueRef::Blob(_) => Cell::Null,
                        })
                    })
                    .collect::<rusqlite::Result<Vec<Cell>>>()?;
                out.push(cells);
            }
            Ok(out)
        };
        run().map_err(|e| self.said(e))
    }
}

/// An error of SQLite's, said for the store at `path`: a file that is no database
/// (bad input), one locked by another process past the wait (environment).
fn store_error(path: &Path, e: rusqlite::Error, busy: Duration) -> anyhow::Error {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => BadStore(format!(
            "--store {}: not a results store, or a damaged one (SQLite: {e}); move it away \
             or give another --store; nothing was written to it",
            path.display()
        ))
        .into(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => anyhow::anyhow!(
            "the results store {} is locked by another process (waited {} s); try again once \
             it is done; nothing was written",
            path.display(),
            busy.as_secs_f64()
        ),
        _ => anyhow::Error::new(e).context(format!("results store {}", path.display())),
    }
}
