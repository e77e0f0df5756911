//! A live capture (`sizeup capture --for 60s`): the server's slow log turned to its
//! `mysql.slow_log` table at long_query_time = 0 for a while, every setting put back
//! exactly as it was however the capture ends, then the table's rows of that while read
//! into a capture file with the captured tables' definitions and row counts.
//!
//! Only what sizeup changed is changed back; the rows stay in `mysql.slow_log` (the
//! table is the server's, not sizeup's).

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Row};
use sizeup_model::capture::file::{Header, Statement, Table, Writer};
use sizeup_model::capture::{is_own, Precision, OWN_MARK as OWN};
use std::io::Write;

/// The most tables whose definitions a capture keeps.
pub const MOST_TABLES: usize = 1000;

/// The slow log's settings before the capture: put back as they were.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub slow_query_log: bool,
    /// `FILE`, `TABLE`, `FILE,TABLE` or `NONE`.
    pub log_output: String,
    /// Seconds, as the server writes them (`10.000000`).
    pub long_query_time: String,
}

impl Settings {
    /// The output with the table added (a file log the user keeps goes on).
    fn with_table(&self) -> String {
        let mut parts: Vec<&str> =
            self.log_output.split(',').map(str::trim).filter(|p| !p.eq_ignore_ascii_case("NONE")).collect();
        if !parts.iter().any(|p| p.eq_ignore_ascii_case("TABLE")) {
            parts.push("TABLE");
        }
        parts.join(",")
    }
}

/// Why a live capture could not be made.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// A privilege the capture needs is missing: said in one line.
    #[error(
        "{0}: capture --for needs SUPER (or SYSTEM_VARIABLES_ADMIN) to turn the slow log on, and SELECT on \
         mysql.slow_log; capture from a slow-log file (--slow-log) where these cannot be granted"
    )]
    Privilege(String),
    /// The server has no slow log table (not MariaDB or MySQL, or one without it).
    #[error("{0}: this server keeps no mysql.slow_log table; capture from its slow-log file (--slow-log)")]
    NoTable(String),
    #[error("{0}")]
    Server(String),
    #[error("{0}")]
    File(#[from] std::io::Error),
}

fn live(e: mysql_async::Error) -> LiveError {
    let said = e.to_string();
    match &e {
        // ER_SPECIFIC_ACCESS_DENIED_ERROR, ER_TABLEACCESS_DENIED_ERROR, ER_DBACCESS_DENIED_ERROR
        mysql_async::Error::Server(s) if matches!(s.code, 1227 | 1142 | 1044) => {
            LiveError::Privilege(s.message.clone())
        }
        // ER_NO_SUCH_TABLE, ER_UNKNOWN_SYSTEM_VARIABLE
        mysql_async::Error::Server(s) if matches!(s.code, 1146 | 1193) => LiveError::NoTable(s.message.clone()),
        _ => LiveError::Server(said),
    }
}

/// The slow log's settings now; the table is looked for first, so that a server
/// without it is told before anything changes.
pub async fn settings(conn: &mut Conn) -> Result<Settings, LiveError> {
    conn.query_drop(format!("{OWN} SELECT 1 FROM mysql.slow_log WHERE 1 = 0")).await.map_err(live)?;
    let sql = format!("{OWN} SELECT @@GLOBAL.slow_query_log, @@GLOBAL.log_output, @@GLOBAL.long_query_time");
    let row: Option<(i64, String, String)> = conn.query_first(sql).await.map_err(live)?;
    let (on, output, time) = row.ok_or_else(|| LiveError::Server("the slow log's settings read as nothing".into()))?;
    Ok(Settings { slow_query_log: on != 0, log_output: output, long_query_time: time })
}

/// Every statement of new sessions to `mysql.slow_log`: the output with TABLE added,
/// long_query_time 0, the log on. Returns the server's time then and this session's
/// id (its own statements are left out).
pub async fn turn_on(conn: &mut Conn, was: &Settings) -> Result<(String, u64), LiveError> {
    let (now, id): (String, u64) = conn
        .query_first(format!("{OWN} SELECT CAST(NOW(6) AS CHAR), CONNECTION_ID()"))
        .await
        .map_err(live)?
        .ok_or_else(|| LiveError::Server("NOW(6) read as nothing".into()))?;
    for sql in [
        format!("SET GLOBAL log_output = '{}'", was.with_table()),
        "SET GLOBAL long_query_time = 0".to_string(),
        "SET GLOBAL slow_query_log = 1".to_string(),
    ] {
        conn.query_drop(format!("{OWN} {sql}")).await.map_err(live)?;
    }
    Ok((now, id))
}

/// The settings as they were, the log first (off before its output changes).
pub async fn restore(conn: &mut Conn, was: &Settings) -> Result<(), LiveError> {
    for sql in [
        format!("SET GLOBAL slow_query_log = {}", u8::from(was.slow_query_log)),
        format!("SET GLOBAL long_query_time = {}", was.long_query_time.trim()),
        format!("SET GLOBAL log_output = '{}'", was.log_output.replace('\'', "")),
    ] {
        conn.query_drop(format!("{OWN} {sql}")).await.map_err(live)?;
    }
    Ok(())
}

/// The base tables of the schemas the capture's statements ran in: their definitions
/// and row counts (information_schema's estimate), at most [`MOST_TABLES`].
pub async fn tables(conn: &mut Conn, since: &str, own: u64) -> Result<Vec<Table>, LiveError> {
    let sql = format!(
        "{OWN} SELECT DISTINCT CAST(db AS CHAR) FROM mysql.slow_log WHERE start_time >= '{since}' AND thread_id <> {own} \
         AND db <> ''"
    );
    let schemas: Vec<String> = conn.query(sql).await.map_err(live)?;
    let mut out = Vec::new();
    const SYSTEM: [&str; 4] = ["mysql", "sys", "information_schema", "performance_schema"];
    for schema in schemas.iter().filter(|s| !SYSTEM.iter().any(|y| y.eq_ignore_ascii_case(s))) {
        let sql = format!(
            "{OWN} SELECT TABLE_NAME, COALESCE(TABLE_ROWS, 0) FROM information_schema.TABLES WHERE TABLE_SCHEMA = {} \
             AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
            crate::target::literal(schema)
        );
        let names: Vec<(String, u64)> = conn.query(sql).await.map_err(live)?;
        for (name, rows) in names {
            if out.len() == MOST_TABLES {
                return Ok(out);
            }
            let quoted = |s: &str| format!("`{}`", s.replace('`', "``"));
            let sql = format!("{OWN} SHOW CREATE TABLE {}.{}", quoted(schema), quoted(&name));
            let create: Option<(String, String)> = conn.query_first(sql).await.map_err(live)?;
            out.push(Table { schema: schema.clone(), name, create: create.map(|c| c.1).unwrap_or_default(), rows });
        }
    }
    Ok(out)
}

/// The table's rows since `since`, less this session's and sizeup's own, written to
/// `out` as a capture (streamed: no row is held beyond its line). Returns the trailer.
pub async fn read<W: Write>(
    conn: &mut Conn,
    since: &str,
    own: u64,
    mut header: Header,
    out: W,
) -> Result<Option<sizeup_model::capture::file::Trailer>, LiveError> {
    let sql = format!(
        "{OWN} SELECT thread_id, CAST(ROUND(UNIX_TIMESTAMP(start_time) * 1000000) AS SIGNED), \
         CAST(ROUND(TIME_TO_SEC(query_time) * 1000000) AS SIGNED), CAST(db AS CHAR), sql_text FROM mysql.slow_log \
         WHERE start_time >= '{since}' AND thread_id <> {own} ORDER BY start_time"
    );
    let mut result = conn.query_iter(sql).await.map_err(live)?;
    let mut writer: Option<Writer<W>> = None;
    let mut out = Some(out);
    let (mut own_n, mut admin) = (0u64, 0u64);
    let mut failed: Option<std::io::Error> = None;
    result
        .for_each(|row: Row| {
            if failed.is_some() {
                return;
            }
            let Some((session, start, took, db, text)) = parse(row) else { return };
            if is_own(&text) {
                own_n += 1;
                return;
            }
            if text.trim().is_empty() || text.starts_with("administrator command") {
                admin += 1;
                return;
            }
            if writer.is_none() {
                header.start_us = start;
                match Writer::new(out.take().expect("once"), &header) {
                    Ok(w) => writer = Some(w),
                    Err(e) => {
                        failed = Some(std::io::Error::other(e.to_string()));
                        return;
                    }
                }
            }
            let s = Statement {
                session,
                offset_us: (start - header.start_us).max(0) as u64,
                schema: db.filter(|d| !d.is_empty()),
                text,
                query_time_us: took.max(0) as u64,
            };
            if let Err(e) = writer.as_mut().expect("made").statement(s) {
                failed = Some(std::io::Error::other(e.to_string()));
            }
        })
        .await
        .map_err(live)?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    let Some(mut w) = writer else { return Ok(None) };
    w.trailer.own = own_n;
    w.trailer.admin = admin;
    let (trailer, _) = w.finish().map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(Some(trailer))
}

/// A row of the query in [`read`]: session, start (µs since the epoch), time on the
/// server (µs), database, text.
fn parse(row: Row) -> Option<(u64, i64, i64, Option<String>, String)> {
    let (session, start, took, db, text): (u64, i64, i64, Option<String>, Vec<u8>) =
        mysql_async::from_row_opt(row).ok()?;
    Some((session, start, took, db, String::from_utf8_lossy(&text).into_owned()))
}

/// The precision a table capture has: MariaDB's and MySQL's `start_time` are
/// `timestamp(6)`.
pub const PRECISION: Precision = Precision::Microseconds;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_added_to_the_output_the_user_has() {
        let s = |o: &str| Settings { slow_query_log: false, log_output: o.into(), long_query_time: "10.000000".into() };
        assert_eq!(s("FILE").with_table(), "FILE,TABLE");
        assert_eq!(s("TABLE").with_table(), "TABLE");
        assert_eq!(s("NONE").with_table(), "TABLE");
        assert_eq!(s("FILE,TABLE").with_table(), "FILE,TABLE");
    }
}
