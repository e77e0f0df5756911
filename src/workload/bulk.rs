//! Bulk loading for prepare: rows generated as tab-separated text go in through
//! `LOAD DATA LOCAL INFILE` (far less server parsing per row than multi-row INSERTs),
//! or, when the server forbids LOCAL INFILE, as multi-row INSERTs of the same rows.
//!
//! Generated fields never contain tabs, newlines or backslashes; `\N` is NULL.

use crate::target::short_error;
use bytes::Bytes;
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use std::sync::atomic::{AtomicBool, Ordering};

/// Bytes per piece handed to the driver while streaming rows.
pub const PIECE_BYTES: usize = 256 * 1024;

/// Rows being written as tab-separated text, cut into pieces of about [`PIECE_BYTES`].
pub struct Rows {
    pieces: Vec<Bytes>,
    buf: Vec<u8>,
    pub count: u64,
}

impl Default for Rows {
    fn default() -> Self {
        Rows { pieces: Vec::new(), buf: Vec::with_capacity(PIECE_BYTES + 1024), count: 0 }
    }
}

impl Rows {
    /// The buffer the current row is written into (fields separated by `\t`).
    #[inline]
    pub fn line(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Ends the current row.
    #[inline]
    pub fn end_row(&mut self) {
        self.buf.push(b'\n');
        self.count += 1;
        if self.buf.len() >= PIECE_BYTES {
            let full = std::mem::replace(&mut self.buf, Vec::with_capacity(PIECE_BYTES + 1024));
            self.pieces.push(Bytes::from(full));
        }
    }

    pub fn finish(mut self) -> Vec<Bytes> {
        if !self.buf.is_empty() {
            self.pieces.push(Bytes::from(std::mem::take(&mut self.buf)));
        }
        self.pieces
    }
}

/// Server errors meaning LOAD DATA LOCAL is not allowed.
pub const LOCAL_INFILE_REFUSED: [u16; 3] = [1148, 4166, 3948];

/// Loads `pieces` into `table` (`columns` lists the fields of each line, in order).
/// Switches `use_insert` on, for this and every later call, when the server refuses
/// LOCAL INFILE.
pub async fn load(
    conn: &mut Conn,
    table: &str,
    columns: &str,
    pieces: Vec<Bytes>,
    use_insert: &AtomicBool,
) -> Result<(), String> {
    if pieces.is_empty() {
        return Ok(());
    }
    if !use_insert.load(Ordering::Relaxed) {
        let sql = format!(
            "LOAD DATA LOCAL INFILE 'sizeup-{table}' INTO TABLE {table} CHARACTER SET latin1 \
             FIELDS TERMINATED BY '\\t' LINES TERMINATED BY '\\n' ({columns})"
        );
        let mut attempt = 0;
        loop {
            let stream = futures_util::stream::iter(pieces.clone().into_iter().map(Ok));
            conn.set_infile_handler(async move { Ok(Box::pin(stream) as mysql_async::InfileData) });
            match conn.query_drop(&sql).await {
                Ok(()) => return Ok(()),
                // LOCAL INFILE disabled on the server (MariaDB 1148 / 4166, MySQL 8's
                // local_infile=OFF 3948): fall back to INSERTs.
                Err(mysql_async::Error::Server(e)) if LOCAL_INFILE_REFUSED.contains(&e.code) => {
                    use_insert.store(true, Ordering::Relaxed);
                    break;
                }
                Err(e) if retryable(&e) && attempt < RETRIES => {
                    attempt += 1;
                    backoff(attempt).await;
                }
                Err(e) => return Err(format!("loading {table}: {}", short_error(&e))),
            }
        }
    }
    insert(conn, table, columns, &pieces).await
}

/// Errors the run engine retries (deadlock 1213, lock wait timeout 1205, record
/// changed 1020): the statement was rolled back whole, so loading it again is safe.
pub const RETRY_CODES: [u16; 3] = [1213, 1205, 1020];
/// Attempts after the first before a load gives up.
pub const RETRIES: u32 = 10;

fn retryable(e: &mysql_async::Error) -> bool {
    matches!(e, mysql_async::Error::Server(s) if RETRY_CODES.contains(&s.code))
}

async fn backoff(attempt: u32) {
    tokio::time::sleep(std::time::Duration::from_millis(20 * attempt as u64)).await;
}

/// One statement of a load, retried as [`load`] retries.
pub async fn exec_retrying(conn: &mut Conn, sql: &str, what: &str) -> Result<(), String> {
    let mut attempt = 0;
    loop {
        match conn.query_drop(sql).await {
            Ok(()) => return Ok(()),
            Err(e) if retryable(&e) && attempt < RETRIES => {
                attempt += 1;
                backoff(attempt).await;
            }
            Err(e) => return Err(format!("{what}: {}", short_error(&e))),
        }
    }
}

/// The fallback: the same rows as multi-row INSERTs of 1,000 rows, every field quoted
/// (the server converts '12' to a number as LOAD DATA does).
async fn insert(conn: &mut Conn, table: &str, columns: &str, pieces: &[Bytes]) -> Result<(), String> {
    let head = format!("INSERT INTO {table} ({columns}) VALUES ");
    let mut sql = head.clone();
    let mut n = 0;
    let lines = pieces.iter().flat_map(|p| p.split(|&b| b == b'\n')).filter(|l| !l.is_empty());
    for line in lines {
        sql.push_str(if n > 0 { ",(" } else { "(" });
        for (i, field) in line.split(|&b| b == b'\t').enumerate() {
            if i > 0 {
                sql.push(',');
            }
            if field == b"\\N" {
                sql.push_str("NULL");
            } else {
                sql.push('\'');
                sql.push_str(std::str::from_utf8(field).map_err(|_| format!("loading {table}: generated non-text"))?);
                sql.push('\'');
            }
        }
        sql.push(')');
        n += 1;
        if n == 1000 {
            let full = std::mem::replace(&mut sql, head.clone());
            exec_retrying(conn, &full, &format!("loading {table}")).await?;
            n = 0;
        }
    }
    if n > 0 {
        exec_retrying(conn, &sql, &format!("loading {table}")).await?;
    }
    Ok(())
}

/// Waits for every loader task; the first error (a loader's own, or its panic) wins.
pub async fn join_loaders(loaders: Vec<tokio::task::JoinHandle<Result<(), String>>>) -> Result<(), String> {
    let mut first_error = None;
    for l in loaders {
        match l.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(e) => {
                first_error.get_or_insert(format!("a loader stopped: {e}"));
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::errors::RetryOn;

    #[test]
    fn loaders_retry_what_the_run_engine_retries() {
        let RetryOn::Codes(mut engine) = RetryOn::default() else { panic!("the default is a list") };
        let mut ours = RETRY_CODES.to_vec();
        engine.sort();
        ours.sort();
        assert_eq!(ours, engine);
        let deadlock = mysql_async::Error::Server(mysql_async::ServerError {
            code: 1213,
            message: "Deadlock found when trying to get lock; try restarting transaction".into(),
            state: "40001".into(),
        });
        assert!(retryable(&deadlock));
        let killed = mysql_async::Error::Server(mysql_async::ServerError {
            code: 1317,
            message: "Query execution was interrupted".into(),
            state: "70100".into(),
        });
        assert!(!retryable(&killed));
    }

    #[test]
    fn mysql_8_local_infile_off_falls_back_to_inserts_like_mariadb() {
        // MariaDB: 1148 (not allowed), 4166 (disabled); MySQL 8: 3948 (local_infile=OFF).
        for code in [1148, 4166, 3948] {
            assert!(LOCAL_INFILE_REFUSED.contains(&code), "{code}");
        }
    }
}
