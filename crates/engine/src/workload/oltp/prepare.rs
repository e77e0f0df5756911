//! Creating and dropping the sbtest tables.
//!
//! The load is what makes prepare fast: rows go in by array binding on MariaDB, else as
//! `LOAD DATA LOCAL INFILE` streams (both far less server parsing per row than sysbench's
//! multi-row INSERTs; see `workload::bulk`), in chunks spread over the loader
//! connections, and the k index is built once per table after its last chunk, as a
//! sorted index build. Rows match sysbench's: k from the configured distribution, c and
//! pad as random digit groups.

use super::OltpOptions;
use crate::random::{fill_template, rng_from_seed, IdDistribution, C_TEMPLATE, PAD_TEMPLATE};
use crate::target::stall;
use crate::target::Target;
use crate::workload::bulk::{self, Rows};
use crate::workload::ownership::{self, comment_clause};
use crate::workload::DataError;
use bytes::Bytes;
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Rows per load (one transaction): big enough that per-statement cost vanishes, small
/// enough to spread one big table over all loaders and keep undo logs short.
const CHUNK_ROWS: u32 = 25_000;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PrepareReport {
    pub tables: u32,
    pub rows: u64,
    pub seconds: f64,
    pub rows_per_second: f64,
    pub method: &'static str,
}

fn table_names(tables: u32) -> Vec<String> {
    (1..=tables).map(|i| format!("sbtest{i}")).collect()
}

#[cfg(test)]
fn create_sql(o: &OltpOptions, table: u32) -> String {
    create_sql_with(o, table, &comment_clause("oltp"))
}

fn create_sql_with(o: &OltpOptions, table: u32, comment: &str) -> String {
    let id_def = if o.auto_inc { "INTEGER NOT NULL AUTO_INCREMENT" } else { "INTEGER NOT NULL" };
    let id_index = if o.secondary { "KEY xid" } else { "PRIMARY KEY" };
    format!(
        "CREATE TABLE sbtest{table}(\n  id {id_def},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  \
         pad CHAR(60) DEFAULT '' NOT NULL,\n  {id_index} (id)\n) ENGINE = {} {comment}",
        o.storage_engine,
    )
}

/// One LOAD unit: rows `first..=last` of a table.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    table: u32,
    first: u32,
    last: u32,
}

/// The load order: chunk 1 of every table, then chunk 2 of every table, ... so that
/// concurrent loaders work on different tables. Two bulk loads into one table serialise
/// on InnoDB's table-level AUTO-INC lock (innodb_autoinc_lock_mode 1, the default).
/// Each chunk commits on its own: measured, one transaction per table was slower.
fn chunks(o: &OltpOptions) -> VecDeque<Chunk> {
    let per_table = o.table_size.div_ceil(CHUNK_ROWS);
    let mut v = VecDeque::new();
    for n in 0..per_table {
        for table in 1..=o.tables {
            let first = n * CHUNK_ROWS + 1;
            v.push_back(Chunk { table, first, last: (first + CHUNK_ROWS - 1).min(o.table_size) });
        }
    }
    v
}

/// Writes the rows of a chunk as tab-separated lines: id, k, c, pad.
fn chunk_rows(chunk: Chunk, ids: &IdDistribution, seed: u64) -> Vec<Bytes> {
    let mut rng = rng_from_seed(seed ^ ((chunk.table as u64) << 32 | chunk.first as u64));
    let mut rows = Rows::default();
    let mut num = itoa::Buffer::new();
    for id in chunk.first..=chunk.last {
        let line = rows.line();
        line.extend_from_slice(num.format(id).as_bytes());
        line.push(b'\t');
        line.extend_from_slice(num.format(ids.next(&mut rng)).as_bytes());
        line.push(b'\t');
        fill_template(line, C_TEMPLATE, &mut rng);
        line.push(b'\t');
        fill_template(line, PAD_TEMPLATE, &mut rng);
        rows.end_row();
    }
    rows.finish()
}

/// Shared state of one prepare: the chunk queue and what is left per table.
struct Loading {
    queue: Mutex<VecDeque<Chunk>>,
    chunks_left: Vec<AtomicU32>,
    rows_done: Arc<AtomicU64>,
    sending: Arc<bulk::Sending>,
    failed: AtomicBool,
}

/// Creates `sbtest1..N` in the target database and loads them with `threads` connections.
pub async fn prepare(
    target: &Target,
    o: &OltpOptions,
    threads: u32,
    load: bulk::LoadSettings,
    seed: u64,
    rows_done: Arc<AtomicU64>,
) -> Result<PrepareReport, DataError> {
    let started = Instant::now();
    target.ensure_database(load.statement_timeout).await?;
    let mut conn = target.connect().await?;
    let names = table_names(o.tables);
    let existing = ownership::existing_tables(&mut conn, &target.database, &names, "sbtest").await?;
    if let Some(refusal) = ownership::refusal(&target.database, &existing, "oltp_read_write") {
        return Err(DataError::NotOurs(refusal));
    }
    let sending = Arc::new(bulk::Sending::new(load));
    sending.decide(target).await?;
    // Marked incomplete until every row and index is in (see ownership::INCOMPLETE).
    let loading = ownership::while_loading(&comment_clause("oltp"));
    let creates: Vec<_> =
        (1..=o.tables).map(|t| (create_sql_with(o, t, &loading), format!("creating sbtest{t}"))).collect();
    ownership::run_or_undo(target, &mut conn, &names, creates, load.statement_timeout, "oltp_read_write").await?;
    let in_table = ownership::marked_or_undo(target, &mut conn, &names, |_| loading.clone(), "oltp_read_write").await?;
    if let Err(e) = load_all(target, o, threads, &sending, seed, rows_done, &mut conn).await {
        return Err(ownership::undo_prepare(target, &names, e, "oltp_read_write", &sending.stalled()).await);
    }
    let method = sending.describe();
    let marks = ownership::mark_complete(&names, |_| comment_clause("oltp"));
    if !in_table {
        ownership::run_or_undo(target, &mut conn, &names, marks, load.statement_timeout, "oltp_read_write").await?;
    }
    ownership::marked_or_undo(target, &mut conn, &names, |_| comment_clause("oltp"), "oltp_read_write").await?;
    let _ = conn.disconnect().await;
    let seconds = started.elapsed().as_secs_f64();
    let rows = o.tables as u64 * o.table_size as u64;
    Ok(PrepareReport { tables: o.tables, rows, seconds, rows_per_second: rows as f64 / seconds.max(1e-9), method })
}

/// Loads the created tables.
async fn load_all(
    target: &Target,
    o: &OltpOptions,
    threads: u32,
    sending: &Arc<bulk::Sending>,
    seed: u64,
    rows_done: Arc<AtomicU64>,
    conn: &mut Conn,
) -> Result<(), DataError> {
    let queue = chunks(o);
    let mut left: Vec<AtomicU32> = (0..o.tables).map(|_| AtomicU32::new(0)).collect();
    for c in &queue {
        *left[c.table as usize - 1].get_mut() += 1;
    }
    let state = Arc::new(Loading {
        queue: Mutex::new(queue),
        chunks_left: left,
        rows_done,
        sending: sending.clone(),
        failed: AtomicBool::new(false),
    });
    let ids = Arc::new(IdDistribution::new(&o.rand, o.table_size));
    let mut loaders = Vec::new();
    for _ in 0..threads.max(1) {
        let (target, o, state, ids) = (target.clone(), o.clone(), state.clone(), ids.clone());
        loaders.push(tokio::spawn(async move {
            let r = loader(&target, &o, &state, &ids, seed).await;
            if r.is_err() {
                state.failed.store(true, Ordering::Relaxed);
            }
            r
        }));
    }
    // Tables with no rows still get their index.
    if o.table_size == 0 && o.create_secondary {
        let id = stall::server_id(conn).await?;
        let every = sending.settings.statement_timeout;
        for t in 1..=o.tables {
            let (sql, what) = create_index(t);
            match stall::watched(target, id, every, &what, bulk::exec_retrying(conn, &sql, &what)).await {
                Ok(built) => built?,
                Err(stall::Stalled(e)) => {
                    sending.stall(id); // the caller's undo ends it
                    return Err(DataError::Stalled(e));
                }
            }
        }
    }
    bulk::join_loaders(loaders).await
}

/// The k index of a table, and what a failure to build it says.
fn create_index(table: u32) -> (String, String) {
    (format!("CREATE INDEX k_{table} ON sbtest{table}(k)"), format!("creating index k_{table}"))
}

async fn loader(
    target: &Target,
    o: &OltpOptions,
    state: &Loading,
    ids: &Arc<IdDistribution>,
    seed: u64,
) -> Result<(), DataError> {
    let mut conn = bulk::Loader::open(target, &state.sending).await?;
    let r = load_chunks(target, &mut conn, o, state, ids, seed).await;
    conn.close(&state.sending).await;
    r
}

async fn load_chunks(
    target: &Target,
    conn: &mut bulk::Loader,
    o: &OltpOptions,
    state: &Loading,
    ids: &Arc<IdDistribution>,
    seed: u64,
) -> Result<(), DataError> {
    // The next chunk's rows are made on another runtime thread while the server takes
    // this one's: made in turn, the server's thread for this connection waited on them.
    let make = |chunk: Chunk| {
        let ids = ids.clone();
        tokio::task::spawn_blocking(move || (chunk, chunk_rows(chunk, &ids, seed)))
    };
    let claim = || state.queue.lock().expect("no panics while held").pop_front();
    let mut next = claim().map(make);
    while let Some(made) = next.take() {
        let (chunk, pieces) = made.await.map_err(|e| DataError::Data(format!("making rows stopped: {e}")))?;
        if state.failed.load(Ordering::Relaxed) {
            return Ok(());
        }
        next = claim().map(make);
        let table = format!("sbtest{}", chunk.table);
        conn.load(&table, "id, k, c, pad", pieces, &state.sending).await?;
        state.rows_done.fetch_add((chunk.last - chunk.first + 1) as u64, Ordering::Relaxed);
        let left = state.chunks_left[chunk.table as usize - 1].fetch_sub(1, Ordering::AcqRel) - 1;
        if left == 0 && o.create_secondary {
            let (sql, what) = create_index(chunk.table);
            conn.exec(target, &sql, &what, &state.sending).await?;
        }
    }
    Ok(())
}

/// Reads every row of each table through its primary key and every k index entry, so
/// the buffer pool holds them before a run: the statements sysbench's `prewarm` sends.
/// Reads only, so it is safe on tables sizeup did not create.
/// Each scan takes as long as its table needs; one that waits for a lock for `every`, or
/// on a server that stopped answering, fails the prewarm as stalled.
pub async fn prewarm(
    target: &Target,
    tables: u32,
    table_size: u32,
    threads: u32,
    every: Duration,
) -> Result<(), DataError> {
    let next = Arc::new(AtomicU32::new(1));
    let mut workers = Vec::new();
    for _ in 0..threads.min(tables).max(1) {
        let (target, next) = (target.clone(), next.clone());
        workers.push(tokio::spawn(async move {
            let r = prewarm_tables(&target, &next, tables, table_size, every).await;
            if r.is_err() {
                next.store(tables + 1, Ordering::Relaxed); // the others stop after their table
            }
            r
        }));
    }
    for w in workers {
        w.await.map_err(|e| DataError::Data(format!("a prewarm connection stopped: {e}")))??;
    }
    Ok(())
}

/// One prewarm connection's work: tables from `next` until none is left.
async fn prewarm_tables(
    target: &Target,
    next: &AtomicU32,
    tables: u32,
    table_size: u32,
    every: Duration,
) -> Result<(), DataError> {
    let mut conn = target.connect().await?;
    let id = stall::server_id(&mut conn).await?;
    // Keep the derived tables of the statements below in memory, as sysbench does.
    conn.query_drop("SET SESSION tmp_table_size=2*1024*1024*1024, max_heap_table_size=2*1024*1024*1024")
        .await
        .map_err(|e| DataError::sql("keeping the prewarm's derived tables in memory", &e))?;
    loop {
        let t = next.fetch_add(1, Ordering::Relaxed);
        if t > tables {
            return Ok::<(), DataError>(());
        }
        for sql in [
            format!("ANALYZE TABLE sbtest{t}"),
            format!("SELECT AVG(id) FROM (SELECT * FROM sbtest{t} FORCE KEY (PRIMARY) LIMIT {table_size}) t"),
            format!("SELECT COUNT(*) FROM (SELECT * FROM sbtest{t} WHERE k LIKE '%0%' LIMIT {table_size}) t"),
        ] {
            let what = format!("prewarming sbtest{t}");
            let scan = async { conn.query_drop(&sql).await.map_err(|e| DataError::sql(what.clone(), &e)) };
            stall::watched(target, id, every, &what, scan).await??;
        }
    }
}

/// Drops every `sbtestN` table of the target database that sizeup created, and only those.
pub async fn cleanup(target: &Target) -> Result<ownership::CleanupReport, DataError> {
    let is_sbtest = |n: &str| n.len() > "sbtest".len() && n["sbtest".len()..].chars().all(|c| c.is_ascii_digit());
    ownership::drop_ours(target, &[], "sbtest", is_sbtest).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_every_row_once() {
        let o = OltpOptions { tables: 3, table_size: 60_001, ..Default::default() };
        let c = chunks(&o);
        let total: u64 = c.iter().map(|c| (c.last - c.first + 1) as u64).sum();
        assert_eq!(total, 3 * 60_001);
        assert_eq!(c.iter().filter(|c| c.table == 2).count(), 3);
        assert_eq!(c.back().unwrap().last, 60_001);
        // Neighbours in the queue are different tables; each table's chunks stay in id order.
        assert!(c.iter().zip(c.iter().skip(1)).all(|(a, b)| a.table != b.table));
        let t1: Vec<u32> = c.iter().filter(|c| c.table == 1).map(|c| c.first).collect();
        assert_eq!(t1, vec![1, 25_001, 50_001]);
    }

    #[test]
    fn chunk_rows_are_sysbench_rows() {
        let o = OltpOptions { table_size: 1000, ..Default::default() };
        let ids = IdDistribution::new(&o.rand, o.table_size);
        let pieces = chunk_rows(Chunk { table: 1, first: 11, last: 20 }, &ids, 5);
        let text: String = pieces.iter().map(|p| std::str::from_utf8(p).unwrap()).collect();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 10);
        for (i, line) in lines.iter().enumerate() {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f[0], (11 + i).to_string());
            let k: u32 = f[1].parse().unwrap();
            assert!((1..=1000).contains(&k));
            assert_eq!(f[2].len(), 119);
            assert_eq!(f[3].len(), 59);
        }
    }

    #[test]
    fn create_statement_marks_ownership() {
        let sql = create_sql(&OltpOptions::default(), 3);
        assert!(sql.starts_with("CREATE TABLE sbtest3("));
        assert!(sql.contains("AUTO_INCREMENT") && sql.contains("PRIMARY KEY (id)"));
        assert!(sql.contains(ownership::MARK));
        let sec = create_sql(&OltpOptions { secondary: true, auto_inc: false, ..Default::default() }, 1);
        assert!(sec.contains("KEY xid (id)") && !sec.contains("AUTO_INCREMENT"));
    }
}
