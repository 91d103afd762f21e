//! The results store, on SQLite (one file) or PostgreSQL (a server): its schema
//! versioned (`schema_version`, one migration per version, applied in a transaction
//! on open), a run written in one transaction with its points and nodes, so a failure
//! leaves nothing half written. The record and query code is shared; the SQL that
//! differs is in `sql.rs` ([`Dialect`]), the connections in `sqlite.rs` and `pg.rs`.

use super::BadStore;
use super::dsn::StoreAt;
use super::pg::Pg;
use super::record::{HostRecord, NodeRecord, PointRecord, RunRecord};
use super::sql::{Cell, Dialect, Param};
use super::sqlite::Sqlite;
use anyhow::Result;
use std::path::Path;
use std::time::Duration;

pub use super::sql::SCHEMA_VERSION;
pub use super::sqlite::BUSY_TIMEOUT;

enum Db {
    Sqlite(Sqlite),
    Postgres(Box<Pg>),
}

impl Db {
    fn dialect(&self) -> Dialect {
        match self {
            Db::Sqlite(_) => Dialect::Sqlite,
            Db::Postgres(_) => Dialect::Postgres,
        }
    }

    fn batch(&mut self, sql: &str) -> Result<()> {
        match self {
            Db::Sqlite(db) => db.batch(sql),
            Db::Postgres(db) => db.batch(sql),
        }
    }

    /// `sql` in SQLite's placeholders (turned into the server's).
    fn execute(&mut self, sql: &str, params: &[Param]) -> Result<u64> {
        let sql = self.dialect().sql(sql);
        match self {
            Db::Sqlite(db) => db.execute(&sql, params),
            Db::Postgres(db) => db.execute(&sql, params),
        }
    }

    fn query(&mut self, sql: &str, params: &[Param]) -> Result<Vec<Vec<Cell>>> {
        let sql = self.dialect().sql(sql);
        match self {
            Db::Sqlite(db) => db.query(&sql, params),
            Db::Postgres(db) => db.query(&sql, params),
        }
    }

    /// The first cell of the first row.
    fn one(&mut self, sql: &str, params: &[Param]) -> Result<Option<Cell>> {
        Ok(self
            .query(sql, params)?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next()))
    }

    /// `body` in a transaction that writes: committed when it succeeds, rolled back
    /// when it fails (nothing half written).
    fn transaction<T>(&mut self, body: impl FnOnce(&mut Db) -> Result<T>) -> Result<T> {
        self.batch(self.dialect().begin())?;
        match body(self).and_then(|v| self.batch("COMMIT").map(|()| v)) {
            Ok(v) => Ok(v),
            Err(e) => {
                let _ = self.batch("ROLLBACK");
                Err(e)
            }
        }
    }
}

pub struct Store {
    db: Db,
    at: StoreAt,
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
    /// Opens the store at `path` (a file, or a `postgres://` URL), creating it (and
    /// its directory) if needed, and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Store> {
        Store::open_at(StoreAt::of(path)?, true, BUSY_TIMEOUT)
    }

    /// Opens a store that must exist (the commands that only read).
    pub fn open_existing(path: &Path) -> Result<Store> {
        Store::open_at(StoreAt::of(path)?, false, BUSY_TIMEOUT)
    }

    pub fn open_with(path: &Path, create: bool, busy: Duration) -> Result<Store> {
        Store::open_at(StoreAt::of(path)?, create, busy)
    }

    /// A server's database is there to be used: `create` only matters for a file.
    pub fn open_at(at: StoreAt, create: bool, busy: Duration) -> Result<Store> {
        let db = match &at {
            StoreAt::File(path) => Db::Sqlite(Sqlite::open(path, create, busy)?),
            StoreAt::Postgres(dsn) => Db::Postgres(Box::new(Pg::connect(dsn)?)),
        };
        let mut store = Store { db, at };
        store.migrate()?;
        Ok(store)
    }

    /// Where it is (a URL without its password).
    pub fn at(&self) -> &StoreAt {
        &self.at
    }

    fn migrate(&mut self) -> Result<()> {
        let at = self.at.to_string();
        self.db.transaction(|db| {
            let d = db.dialect();
            if let Some(lock) = d.migration_lock() {
                db.execute(lock, &[])?;
            }
            let Some(version) = version_of(db)? else {
                return Err(BadStore(format!(
                    "--store {at}: a database but not a results store (no schema_version \
                     table); give another store"
                ))
                .into());
            };
            if version > SCHEMA_VERSION {
                return Err(BadStore(format!(
                    "--store {at}: schema version {version}, written by a newer lnbench-tui \
                     (this one reads up to {SCHEMA_VERSION}); upgrade lnbench-tui, or give \
                     another --store"
                ))
                .into());
            }
            for v in version..SCHEMA_VERSION {
                let Some(sql) = d.migration(v) else {
                    return Err(BadStore(format!(
                        "--store {at}: schema version {version}, which no lnbench-tui wrote                          (versions run from 0 to {SCHEMA_VERSION}); give another --store"
                    ))
                    .into());
                };
                db.batch(sql)?;
                db.execute(
                    "INSERT INTO schema_version (version) VALUES (?1)",
                    &[(v + 1).into()],
                )?;
            }
            Ok(())
        })
    }

    /// The schema version the store is at.
    pub fn version(&mut self) -> Result<i64> {
        Ok(version_of(&mut self.db)?.unwrap_or(0))
    }

    /// Records `run` with its points and nodes in one transaction.
    pub fn insert(&mut self, run: &RunRecord) -> Result<Inserted> {
        self.db.transaction(|db| insert_run(db, run))
    }

    /// Every run, oldest first, with its points and nodes.
    pub fn runs(&mut self) -> Result<Vec<StoredRun>> {
        self.runs_where("1 = 1", &[])
    }

    /// The run `id`, if stored.
    pub fn run(&mut self, id: i64) -> Result<Option<StoredRun>> {
        Ok(self.runs_where("id = ?1", &[id.into()])?.pop())
    }

    fn runs_where(&mut self, cond: &str, p: &[Param]) -> Result<Vec<StoredRun>> {
        let rows = self.db.query(
            &format!(
                "SELECT id, recorded_at, started_at, finished_at, scenario, scenario_hash, \
                 runtime, tool_version, complete, source, host_cpu, host_cores, host_memory, \
                 host_os, host_kernel FROM runs WHERE {cond} ORDER BY started_at, id"
            ),
            p,
        )?;
        let mut runs = Vec::with_capacity(rows.len());
        for r in rows {
            let id = r[0].int()?;
            runs.push(StoredRun {
                id,
                recorded_at: r[1].text()?,
                run: RunRecord {
                    started_at: r[2].text()?,
                    finished_at: r[3].text()?,
                    scenario: r[4].text()?,
                    scenario_hash: r[5].text()?,
                    runtime: r[6].text()?,
                    tool_version: r[7].text()?,
                    complete: r[8].boolean()?,
                    source: r[9].text()?,
                    host: HostRecord {
                        cpu_model: r[10].text()?,
                        cores: r[11].int()? as u64,
                        memory_bytes: r[12].int()? as u64,
                        os: r[13].text()?,
                        kernel: r[14].text()?,
                    },
                    points: points_of(&mut self.db, id)?,
                },
            });
        }
        Ok(runs)
    }
}

/// The schema version the store says, 0 for a new (empty) one, `None` for a
/// database with tables but no version (not a results store).
fn version_of(db: &mut Db) -> Result<Option<i64>> {
    let d = db.dialect();
    let has_table = db.one(d.has_version_table(), &[])?;
    if has_table.map(|c| c.boolean()).transpose()? == Some(true) {
        let v = db.one("SELECT max(version) FROM schema_version", &[])?;
        return v.map_or(Ok(None), |c| c.opt_int());
    }
    let tables = db.one(d.table_count(), &[])?;
    let tables = tables.map(|c| c.int()).transpose()?.unwrap_or(0);
    Ok((tables == 0).then_some(0))
}

fn insert_run(db: &mut Db, run: &RunRecord) -> Result<Inserted> {
    let existing = db.one(
        "SELECT id FROM runs WHERE source = ?1 AND started_at = ?2 AND scenario_hash = ?3",
        &[
            (&run.source).into(),
            (&run.started_at).into(),
            (&run.scenario_hash).into(),
        ],
    )?;
    if let Some(id) = existing {
        return Ok(Inserted::Already(id.int()?));
    }
    let h = &run.host;
    let recorded_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let class = h.class();
    let id = db.one(
        "INSERT INTO runs (recorded_at, started_at, finished_at, scenario, scenario_hash, \
         runtime, tool_version, complete, source, host_cpu, host_cores, host_memory, \
         host_os, host_kernel, host_class) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) RETURNING id",
        &[
            (&recorded_at).into(),
            (&run.started_at).into(),
            (&run.finished_at).into(),
            (&run.scenario).into(),
            (&run.scenario_hash).into(),
            (&run.runtime).into(),
            (&run.tool_version).into(),
            run.complete.into(),
            (&run.source).into(),
            (&h.cpu_model).into(),
            h.cores.into(),
            h.memory_bytes.into(),
            (&h.os).into(),
            (&h.kernel).into(),
            (&class).into(),
        ],
    )?;
    let run_id = returned(id)?;
    for p in &run.points {
        insert_point(db, run_id, p)?;
    }
    Ok(Inserted::New(run_id))
}

fn returned(id: Option<Cell>) -> Result<i64> {
    id.ok_or_else(|| anyhow::anyhow!("INSERT ... RETURNING id returned no row"))?
        .int()
}

fn insert_point(db: &mut Db, run_id: i64, p: &PointRecord) -> Result<()> {
    let id = db.one(
        "INSERT INTO points (run_id, label, grp, repeat, report, complete, load, envelope, \
         outside_load_pct, steal_pct, disturbed, ok, failed, tps, p50_us, p90_us, p99_us, \
         cpu_pct, bytes_per_payment, made_before) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, \
         ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20) RETURNING id",
        &[
            run_id.into(),
            (&p.label).into(),
            (&p.group).into(),
            p.repeat.into(),
            (&p.report).into(),
            p.complete.into(),
            (&p.load).into(),
            (&p.envelope).into(),
            p.outside_load_pct.into(),
            p.steal_pct.into(),
            p.disturbed.into(),
            p.ok.into(),
            p.failed.into(),
            p.tps.into(),
            p.p50_us.into(),
            p.p90_us.into(),
            p.p99_us.into(),
            p.cpu_pct.into(),
            p.bytes_per_payment.into(),
            p.made_before.into(),
        ],
    )?;
    let point_id = returned(id)?;
    for n in &p.nodes {
        db.execute(
            "INSERT INTO nodes (point_id, name, implementation, version, commit_id, database, \
             cpu_pct, bytes_per_payment) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            &[
                point_id.into(),
                (&n.name).into(),
                (&n.implementation).into(),
                (&n.version).into(),
                (&n.commit).into(),
                (&n.database).into(),
                n.cpu_pct.into(),
                n.bytes_per_payment.into(),
            ],
        )?;
    }
    Ok(())
}

fn points_of(db: &mut Db, run_id: i64) -> Result<Vec<PointRecord>> {
    let rows = db.query(
        "SELECT id, label, grp, repeat, report, complete, load, envelope, outside_load_pct, \
         steal_pct, disturbed, ok, failed, tps, p50_us, p90_us, p99_us, cpu_pct, \
         bytes_per_payment, made_before FROM points WHERE run_id = ?1 ORDER BY id",
        &[run_id.into()],
    )?;
    let nodes_sql = format!(
        "SELECT name, implementation, version, commit_id, database, cpu_pct, \
         bytes_per_payment FROM nodes WHERE point_id = ?1 ORDER BY {}",
        db.dialect().node_order()
    );
    let mut points = Vec::with_capacity(rows.len());
    for r in rows {
        let nodes = db
            .query(&nodes_sql, &[r[0].int()?.into()])?
            .iter()
            .map(|n| {
                Ok(NodeRecord {
                    name: n[0].text()?,
                    implementation: n[1].text()?,
                    version: n[2].text()?,
                    commit: n[3].opt_text()?,
                    database: n[4].opt_text()?,
                    cpu_pct: n[5].opt_real()?,
                    bytes_per_payment: n[6].opt_real()?,
                })
            })
            .collect::<Result<_>>()?;
        points.push(PointRecord {
            label: r[1].text()?,
            group: r[2].text()?,
            repeat: r[3].opt_int()?.map(|v| v as u32),
            report: r[4].text()?,
            complete: r[5].boolean()?,
            load: r[6].text()?,
            envelope: r[7].text()?,
            outside_load_pct: r[8].opt_real()?,
            steal_pct: r[9].opt_real()?,
            disturbed: r[10].opt_bool()?,
            ok: r[11].int()? as u64,
            failed: r[12].int()? as u64,
            tps: r[13].real()?,
            p50_us: r[14].int()? as u64,
            p90_us: r[15].int()? as u64,
            p99_us: r[16].int()? as u64,
            cpu_pct: r[17].opt_real()?,
            bytes_per_payment: r[18].opt_real()?,
            made_before: r[19].opt_int()?.map(|v| v as u64),
            nodes,
        });
    }
    Ok(points)
}
