//! The SQLite results store: one file, its schema versioned (`schema_version`, one
//! migration per version, applied in a transaction on open), a run written in one
//! transaction with its points and nodes, so a failure leaves nothing half written.

use super::BadStore;
use super::record::{HostRecord, NodeRecord, PointRecord, RunRecord};
use anyhow::{Context, Result};
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, params};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The schema this build writes and reads. A store of a higher version is refused.
pub const SCHEMA_VERSION: i64 = 1;

/// `MIGRATIONS[i]` takes a store from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[include_str!("schema_v1.sql")];

/// How long a store locked by another process is waited for.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// A run as stored, with its id.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    pub id: i64,
    pub recorded_at: String,
    pub run: RunRecord,
}

/// What [`Store::insert`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    New(i64),
    /// The same report (directory, start time, scenario) was recorded before.
    Already(i64),
}

impl Store {
    /// Opens the store at `path`, creating it (and its directory) if needed, and
    /// brings its schema up to date.
    pub fn open(path: &Path) -> Result<Store> {
        Store::open_with(path, true, BUSY_TIMEOUT)
    }

    /// Opens a store that must exist (the commands that only read).
    pub fn open_existing(path: &Path) -> Result<Store> {
        Store::open_with(path, false, BUSY_TIMEOUT)
    }

    pub fn open_with(path: &Path, create: bool, busy: Duration) -> Result<Store> {
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
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags(path, flags).map_err(|e| store_error(path, e, busy))?;
        conn.busy_timeout(busy)
            .map_err(|e| store_error(path, e, busy))?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store.migrate().map_err(|e| lift(path, e, busy))?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn migrate(&mut self) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let version = Store::version_of(&tx)?;
        let Some(version) = version else {
            return Err(BadStore(format!(
                "--store {}: an SQLite database but not a results store (no schema_version \
                 table); give another path",
                self.path.display()
            ))
            .into());
        };
        if version > SCHEMA_VERSION {
            return Err(BadStore(format!(
                "--store {}: schema version {version}, written by a newer lnbench-tui (this \
                 one reads up to {SCHEMA_VERSION}); upgrade lnbench-tui, or give another --store",
                self.path.display()
            ))
            .into());
        }
        for (v, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            tx.execute_batch(sql)?;
            tx.execute(
                "INSERT INTO schema_version (version) VALUES (?1)",
                [v as i64 + 1],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Records `run` with its points and nodes in one transaction.
    pub fn insert(&mut self, run: &RunRecord) -> Result<Inserted> {
        let path = self.path.clone();
        self.insert_tx(run)
            .map_err(|e| lift(&path, e, BUSY_TIMEOUT))
    }

    fn insert_tx(&mut self, run: &RunRecord) -> Result<Inserted> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let existing: Option<i64> = tx
            .query_row(
                "SELECT id FROM runs WHERE source = ?1 AND started_at = ?2 AND scenario_hash = ?3",
                params![run.source, run.started_at, run.scenario_hash],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = existing {
            return Ok(Inserted::Already(id));
        }
        let h = &run.host;
        tx.execute(
            "INSERT INTO runs (recorded_at, started_at, finished_at, scenario, scenario_hash, \
             runtime, tool_version, complete, source, host_cpu, host_cores, host_memory, \
             host_os, host_kernel, host_class) \
             VALUES (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, \
             ?10, ?11, ?12, ?13, ?14)",
            params![
                run.started_at,
                run.finished_at,
                run.scenario,
                run.scenario_hash,
                run.runtime,
                run.tool_version,
                run.complete,
                run.source,
                h.cpu_model,
                h.cores as i64,
                h.memory_bytes as i64,
                h.os,
                h.kernel,
                h.class()
            ],
        )?;
        let run_id = tx.last_insert_rowid();
        for p in &run.points {
            insert_point(&tx, run_id, p)?;
        }
        tx.commit()?;
        Ok(Inserted::New(run_id))
    }

    /// Every run, oldest first, with its points and nodes.
    pub fn runs(&self) -> Result<Vec<StoredRun>> {
        self.runs_where("1 = 1", [])
    }

    /// The run `id`, if stored.
    pub fn run(&self, id: i64) -> Result<Option<StoredRun>> {
        Ok(self.runs_where("id = ?1", [id])?.pop())
    }

    fn runs_where<P: rusqlite::Params>(&self, cond: &str, p: P) -> Result<Vec<StoredRun>> {
        let read = || -> rusqlite::Result<Vec<StoredRun>> {
            let mut stmt = self.conn.prepare(&format!(
                "SELECT id, recorded_at, started_at, finished_at, scenario, scenario_hash, \
                 runtime, tool_version, complete, source, host_cpu, host_cores, host_memory, \
                 host_os, host_kernel FROM runs WHERE {cond} ORDER BY started_at, id"
            ))?;
            let mut runs: Vec<StoredRun> = stmt
                .query_map(p, |r| {
                    Ok(StoredRun {
                        id: r.get(0)?,
                        recorded_at: r.get(1)?,
                        run: RunRecord {
                            started_at: r.get(2)?,
                            finished_at: r.get(3)?,
                            scenario: r.get(4)?,
                            scenario_hash: r.get(5)?,
                            runtime: r.get(6)?,
                            tool_version: r.get(7)?,
                            complete: r.get(8)?,
                            source: r.get(9)?,
                            host: HostRecord {
                                cpu_model: r.get(10)?,
                                cores: r.get::<_, i64>(11)? as u64,
                                memory_bytes: r.get::<_, i64>(12)? as u64,
                                os: r.get(13)?,
                                kernel: r.get(14)?,
                            },
                            points: Vec::new(),
                        },
                    })
                })?
                .collect::<rusqlite::Result<_>>()?;
            for run in &mut runs {
                run.run.points = points_of(&self.conn, run.id)?;
            }
            Ok(runs)
        };
        read().map_err(|e| store_error(&self.path, e, BUSY_TIMEOUT))
    }
}

impl Store {
    /// The schema version the file says, 0 for a new (empty) file, `None` for a
    /// database with tables but no version (not a results store).
    fn version_of(conn: &Connection) -> rusqlite::Result<Option<i64>> {
        let has_table: bool = conn.query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
            [],
            |r| r.get(0),
        )?;
        if has_table {
            return conn.query_row("SELECT max(version) FROM schema_version", [], |r| r.get(0));
        }
        let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
        Ok(if tables == 0 { Some(0) } else { None })
    }
}

fn insert_point(tx: &rusqlite::Transaction, run_id: i64, p: &PointRecord) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO points (run_id, label, grp, repeat, report, complete, load, envelope, \
         outside_load_pct, steal_pct, disturbed, ok, failed, tps, p50_us, p90_us, p99_us, cpu_pct) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        params![
            run_id,
            p.label,
            p.group,
            p.repeat,
            p.report,
            p.complete,
            p.load,
            p.envelope,
            p.outside_load_pct,
            p.steal_pct,
            p.disturbed,
            p.ok as i64,
            p.failed as i64,
            p.tps,
            p.p50_us as i64,
            p.p90_us as i64,
            p.p99_us as i64,
            p.cpu_pct
        ],
    )?;
    let point_id = tx.last_insert_rowid();
    for n in &p.nodes {
        tx.execute(
            "INSERT INTO nodes (point_id, name, implementation, version, commit_id, database, cpu_pct) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                point_id,
                n.name,
                n.implementation,
                n.version,
                n.commit,
                n.database,
                n.cpu_pct
            ],
        )?;
    }
    Ok(())
}

fn points_of(conn: &Connection, run_id: i64) -> rusqlite::Result<Vec<PointRecord>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, label, grp, repeat, report, complete, load, envelope, outside_load_pct, \
         steal_pct, disturbed, ok, failed, tps, p50_us, p90_us, p99_us, cpu_pct \
         FROM points WHERE run_id = ?1 ORDER BY id",
    )?;
    let rows: Vec<(i64, PointRecord)> = stmt
        .query_map([run_id], |r| {
            Ok((
                r.get(0)?,
                PointRecord {
                    label: r.get(1)?,
                    group: r.get(2)?,
                    repeat: r.get(3)?,
                    report: r.get(4)?,
                    complete: r.get(5)?,
                    load: r.get(6)?,
                    envelope: r.get(7)?,
                    outside_load_pct: r.get(8)?,
                    steal_pct: r.get(9)?,
                    disturbed: r.get(10)?,
                    ok: r.get::<_, i64>(11)? as u64,
                    failed: r.get::<_, i64>(12)? as u64,
                    tps: r.get(13)?,
                    p50_us: r.get::<_, i64>(14)? as u64,
                    p90_us: r.get::<_, i64>(15)? as u64,
                    p99_us: r.get::<_, i64>(16)? as u64,
                    cpu_pct: r.get(17)?,
                    nodes: Vec::new(),
                },
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut nodes = conn.prepare_cached(
        "SELECT name, implementation, version, commit_id, database, cpu_pct FROM nodes \
         WHERE point_id = ?1 ORDER BY rowid",
    )?;
    let mut points = Vec::with_capacity(rows.len());
    for (id, mut p) in rows {
        p.nodes = nodes
            .query_map([id], |r| {
                Ok(NodeRecord {
                    name: r.get(0)?,
                    implementation: r.get(1)?,
                    version: r.get(2)?,
                    commit: r.get(3)?,
                    database: r.get(4)?,
                    cpu_pct: r.get(5)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        points.push(p);
    }
    Ok(points)
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

/// [`store_error`] for an error that may be SQLite's inside an anyhow chain.
fn lift(path: &Path, e: anyhow::Error, busy: Duration) -> anyhow::Error {
    match e.downcast::<rusqlite::Error>() {
        Ok(sqlite) => store_error(path, sqlite, busy),
        Err(other) => other,
    }
}
