//! The PostgreSQL backend of the store: a synchronous client (no TLS: a unix socket,
//! loopback, or a tunnel), its errors said for the store, named by its URL with the
//! password redacted: a server not reached (environment, exit 3), a login refused, a
//! database missing (the user's input, exit 2).

use super::BadStore;
use super::dsn::{Dsn, PASSWORD_ENV};
use super::sql::{Cell, Param};
use anyhow::{Result, anyhow};
use postgres::error::SqlState;
use postgres::types::{ToSql, Type};

pub struct Pg {
    client: postgres::Client,
    dsn: Dsn,
}

impl Pg {
    pub fn connect(dsn: &Dsn) -> Result<Pg> {
        let client = (dsn.config().connect(postgres::NoTls)).map_err(|e| pg_error(dsn, e))?;
        Ok(Pg {
            client,
            dsn: dsn.clone(),
        })
    }

    pub fn batch(&mut self, sql: &str) -> Result<()> {
        let r = self.client.batch_execute(sql);
        r.map_err(|e| pg_error(&self.dsn, e))
    }

    pub fn execute(&mut self, sql: &str, params: &[Param]) -> Result<u64> {
        let boxed = boxed(params);
        let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
        let r = self.client.execute(sql, &refs);
        r.map_err(|e| pg_error(&self.dsn, e))
    }

    pub fn query(&mut self, sql: &str, params: &[Param]) -> Result<Vec<Vec<Cell>>> {
        let boxed = boxed(params);
        let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
        let rows = (self.client.query(sql, &refs)).map_err(|e| pg_error(&self.dsn, e))?;
        rows.iter()
            .map(|row| (0..row.len()).map(|i| cell(row, i)).collect())
            .collect::<Result<_>>()
            .map_err(|e| e.context(format!("results store {}", self.dsn.redacted())))
    }
}

/// Each parameter as the type of its column: BIGINT, DOUBLE PRECISION, TEXT, BOOLEAN.
fn boxed<'a>(params: &'a [Param]) -> Vec<Box<dyn ToSql + Sync + 'a>> {
    params
        .iter()
        .map(|p| -> Box<dyn ToSql + Sync + 'a> {
            match p {
                Param::Int(v) => Box::new(*v),
                Param::Real(v) => Box::new(*v),
                Param::Text(v) => Box::new(*v),
                Param::Bool(v) => Box::new(*v),
            }
        })
        .collect()
}

fn cell(row: &postgres::Row, i: usize) -> Result<Cell> {
    let t = row.columns()[i].type_().clone();
    let c = match t {
        Type::INT8 => row.try_get::<_, Option<i64>>(i)?.map(Cell::Int),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)?
            .map(|v| Cell::Int(v.into())),
        Type::INT2 => row
            .try_get::<_, Option<i16>>(i)?
            .map(|v| Cell::Int(v.into())),
        Type::FLOAT8 => row.try_get::<_, Option<f64>>(i)?.map(Cell::Real),
        Type::FLOAT4 => row
            .try_get::<_, Option<f32>>(i)?
            .map(|v| Cell::Real(v.into())),
        Type::BOOL => row.try_get::<_, Option<bool>>(i)?.map(Cell::Bool),
        Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR => {
            row.try_get::<_, Option<String>>(i)?.map(Cell::Text)
        }
        other => return Err(anyhow!("column {i}: type {other} is not read")),
    };
    Ok(c.unwrap_or(Cell::Null))
}

/// What PostgreSQL (or the way to it) said, for the store `dsn`, without its password.
pub fn pg_error(dsn: &Dsn, e: postgres::Error) -> anyhow::Error {
    let store = dsn.redacted();
    let said = dsn.hide(&crate::redact::redact_text(&crate::exit::error_chain(&e)));
    let code = e.code().cloned();
    if code == Some(SqlState::INVALID_PASSWORD)
        || code == Some(SqlState::INVALID_AUTHORIZATION_SPECIFICATION)
    {
        return BadStore(format!(
            "--store {store}: the server refused the login ({said}); check the user, and \
             the password (in ${PASSWORD_ENV}, or in the URL); nothing was written"
        ))
        .into();
    }
    if code == Some(SqlState::INVALID_CATALOG_NAME) {
        return BadStore(format!(
            "--store {store}: {said}; create the database (createdb NAME) or name one that \
             exists; nothing was written"
        ))
        .into();
    }
    if code == Some(SqlState::INSUFFICIENT_PRIVILEGE) {
        return BadStore(format!(
            "--store {store}: {said}; the user must be allowed to create tables in the \
             database (its owner is); nothing was written"
        ))
        .into();
    }
    if said.contains("password missing") {
        return BadStore(format!(
            "--store {store}: the server asks for a password and none was given; set \
             ${PASSWORD_ENV}; nothing was written"
        ))
        .into();
    }
    let unreachable = e.as_db_error().is_none()
        && (said.contains("error connecting")
            || said.contains("timeout")
            || said.contains("connection closed")
            || said.contains("TLS"));
    if unreachable {
        return anyhow!(
            "cannot reach the PostgreSQL server of the results store {store}: {said}; is it \
             running, and are the host and port right? nothing was written"
        );
    }
    anyhow!("results store {store}: {said}")
}
