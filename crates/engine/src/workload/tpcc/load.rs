//! Creating, populating and dropping the TPC-C database (clause 4.3).
//!
//! The population is cut into units (a quarter of the items, a quarter of a warehouse's
//! stock, one district's customers with their history, one district's orders with their
//! lines and new-orders) that the loader connections take from one queue, so loading is
//! parallel across warehouses and tables. Rows go in the cheapest way the server takes
//! (`workload::bulk`: array binding on MariaDB, else LOAD DATA LOCAL), one commit per
//! unit's table; the two secondary indexes are built once after the load,
//! as sorted index builds.

use super::random::{self as r, Constants};
use super::schema::{self, TABLES};
use crate::random::{rng_from_seed, WorkerRng};
use crate::target::stall::{self, Stalled};
use crate::target::Target;
use crate::workload::bulk::{self, Rows};
use crate::workload::ownership;
use crate::workload::DataError;
use mysql_async::prelude::Queryable;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub const ITEMS: u32 = 100_000;
pub const DISTRICTS: u32 = 10;
pub const CUSTOMERS: u32 = 3_000;
pub const ORDERS: u32 = 3_000;
/// Orders 2,101..=3,000 of each district are undelivered: they have new-order rows.
pub const FIRST_NEW_ORDER: u32 = 2_101;
const PARTS: u32 = 4;

/// Rows one warehouse adds, roughly (order lines average 10 per order).
pub const ROWS_PER_WAREHOUSE: u64 = 1 + 10 + 100_000 + 2 * 30_000 + 30_000 + 9_000 + 300_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    /// Items `part * 25,000 + 1 ..`.
    Items {
        part: u32,
    },
    /// The warehouse row and its ten districts.
    Warehouse {
        w: u32,
    },
    Stock {
        w: u32,
        part: u32,
    },
    Customers {
        w: u32,
        d: u32,
    },
    Orders {
        w: u32,
        d: u32,
    },
}

/// All the work of loading `warehouses`, warehouse by warehouse so that the loaders
/// work on different warehouses (and usually different tables) at the same time.
fn units(warehouses: u32) -> VecDeque<Unit> {
    let mut v: VecDeque<Unit> = (0..PARTS).map(|part| Unit::Items { part }).collect();
    for w in 1..=warehouses {
        v.push_back(Unit::Warehouse { w });
        for part in 0..PARTS {
            v.push_back(Unit::Stock { w, part });
        }
        for d in 1..=DISTRICTS {
            v.push_back(Unit::Customers { w, d });
            v.push_back(Unit::Orders { w, d });
        }
    }
    v
}

/// One table's rows of a unit, ready to load.
struct Batch {
    table: &'static str,
    columns: &'static str,
    rows: Rows,
}

impl Batch {
    fn new(table: &'static str, columns: &'static str) -> Self {
        Batch { table, columns, rows: Rows::default() }
    }
}

/// Appends `\t` then the field.
#[inline]
fn tab(line: &mut Vec<u8>) -> &mut Vec<u8> {
    line.push(b'\t');
    line
}

#[inline]
fn num(line: &mut Vec<u8>, n: u32) {
    line.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// The address fields: street 1, street 2, city, state, zip (clause 4.3.3.1).
fn address(rng: &mut WorkerRng, line: &mut Vec<u8>) {
    r::a_string(rng, 10, 20, tab(line));
    r::a_string(rng, 10, 20, tab(line));
    r::a_string(rng, 10, 20, tab(line));
    r::state(rng, tab(line));
    r::zip(rng, tab(line));
}

/// Generates a unit's rows. `now` is the load's timestamp for the date columns.
fn generate(unit: Unit, k: &Constants, now: &[u8], seed: u64) -> Vec<Batch> {
    let mut rng = rng_from_seed(seed ^ unit_seed(unit));
    let rng = &mut rng;
    match unit {
        Unit::Items { part } => items(rng, part),
        Unit::Warehouse { w } => warehouse(rng, w),
        Unit::Stock { w, part } => stock(rng, w, part),
        Unit::Customers { w, d } => customers(rng, k, now, w, d),
        Unit::Orders { w, d } => orders(rng, now, w, d),
    }
}

/// The item table's rows of one part (clause 4.3.3.1).
fn items(rng: &mut WorkerRng, part: u32) -> Vec<Batch> {
    let mut b = Batch::new("item", "i_id, i_im_id, i_name, i_price, i_data");
    let per = ITEMS / PARTS;
    for i in part * per + 1..=(part + 1) * per {
        let line = b.rows.line();
        num(line, i);
        num(tab(line), r::uniform(rng, 1, 10_000));
        r::a_string(rng, 14, 24, tab(line));
        r::fixed(rng, 100, 10_000, 2, tab(line));
        r::data_field(rng, tab(line));
        b.rows.end_row();
    }
    vec![b]
}

/// A warehouse and its districts.
fn warehouse(rng: &mut WorkerRng, w: u32) -> Vec<Batch> {
    let mut wh = Batch::new("warehouse", "w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd");
    let line = wh.rows.line();
    num(line, w);
    r::a_string(rng, 6, 10, tab(line));
    address(rng, line);
    r::fixed(rng, 0, 2000, 4, tab(line));
    tab(line).extend_from_slice(b"300000.00");
    wh.rows.end_row();
    let mut d = Batch::new(
        "district",
        "d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, d_ytd, d_next_o_id",
    );
    for id in 1..=DISTRICTS {
        let line = d.rows.line();
        num(line, id);
        num(tab(line), w);
        r::a_string(rng, 6, 10, tab(line));
        address(rng, line);
        r::fixed(rng, 0, 2000, 4, tab(line));
        tab(line).extend_from_slice(b"30000.00\t3001");
        d.rows.end_row();
    }
    vec![wh, d]
}

/// One part of a warehouse's stock.
fn stock(rng: &mut WorkerRng, w: u32, part: u32) -> Vec<Batch> {
    let mut b = Batch::new(
        "stock",
        "s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, \
         s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_ytd, s_order_cnt, s_remote_cnt, s_data",
    );
    let per = ITEMS / PARTS;
    for i in part * per + 1..=(part + 1) * per {
        let line = b.rows.line();
        num(line, i);
        num(tab(line), w);
        num(tab(line), r::uniform(rng, 10, 100));
        for _ in 0..10 {
            r::a_string(rng, 24, 24, tab(line));
        }
        tab(line).extend_from_slice(b"0\t0\t0");
        r::data_field(rng, tab(line));
        b.rows.end_row();
    }
    vec![b]
}

/// A district's customers and each one's first history row; the first 1,000 take
/// the last names 0..999 in order, the rest NURand's (`k`).
fn customers(rng: &mut WorkerRng, k: &Constants, now: &[u8], w: u32, d: u32) -> Vec<Batch> {
    let mut c = Batch::new(
        "customer",
        "c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, \
         c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, \
         c_delivery_cnt, c_data",
    );
    let mut h = Batch::new("history", "h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data");
    for id in 1..=CUSTOMERS {
        let line = c.rows.line();
        num(line, id);
        num(tab(line), d);
        num(tab(line), w);
        r::a_string(rng, 8, 16, tab(line));
        tab(line).extend_from_slice(b"OE");
        // The first 1,000 customers take the names 0..999 in order; the rest NURand.
        let n = if id <= 1000 { id - 1 } else { r::last_name_number(rng, k) };
        r::last_name(n, tab(line));
        r::a_string(rng, 10, 20, tab(line));
        r::a_string(rng, 10, 20, tab(line));
        r::a_string(rng, 10, 20, tab(line));
        r::state(rng, tab(line));
        r::zip(rng, tab(line));
        r::n_string(rng, 16, tab(line));
        tab(line).extend_from_slice(now);
        tab(line).extend_from_slice(if r::uniform(rng, 1, 10) == 1 { b"BC" } else { b"GC" });
        tab(line).extend_from_slice(b"50000.00");
        r::fixed(rng, 0, 5000, 4, tab(line));
        tab(line).extend_from_slice(b"-10.00\t10.00\t1\t0");
        r::a_string(rng, 300, 500, tab(line));
        c.rows.end_row();

        let line = h.rows.line();
        num(line, id);
        num(tab(line), d);
        num(tab(line), w);
        num(tab(line), d);
        num(tab(line), w);
        tab(line).extend_from_slice(now);
        tab(line).extend_from_slice(b"10.00");
        r::a_string(rng, 12, 24, tab(line));
        h.rows.end_row();
    }
    vec![c, h]
}

/// A district's orders, their lines and the undelivered ones' new-order rows.
fn orders(rng: &mut WorkerRng, now: &[u8], w: u32, d: u32) -> Vec<Batch> {
    let mut o = Batch::new("orders", "o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local");
    let mut no = Batch::new("new_order", "no_o_id, no_d_id, no_w_id");
    let mut ol = Batch::new(
        "order_line",
        "ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, \
         ol_amount, ol_dist_info",
    );
    let customers = r::permutation(rng, CUSTOMERS);
    for id in 1..=ORDERS {
        let delivered = id < FIRST_NEW_ORDER;
        let lines = r::uniform(rng, 5, 15);
        let line = o.rows.line();
        num(line, id);
        num(tab(line), d);
        num(tab(line), w);
        num(tab(line), customers[id as usize - 1]);
        tab(line).extend_from_slice(now);
        if delivered {
            num(tab(line), r::uniform(rng, 1, 10));
        } else {
            tab(line).extend_from_slice(b"\\N");
        }
        num(tab(line), lines);
        tab(line).push(b'1');
        o.rows.end_row();
        if !delivered {
            let line = no.rows.line();
            num(line, id);
            num(tab(line), d);
            num(tab(line), w);
            no.rows.end_row();
        }
        for n in 1..=lines {
            let line = ol.rows.line();
            num(line, id);
            num(tab(line), d);
            num(tab(line), w);
            num(tab(line), n);
            num(tab(line), r::uniform(rng, 1, ITEMS));
            num(tab(line), w);
            if delivered {
                tab(line).extend_from_slice(now);
                line.extend_from_slice(b"\t5\t0.00");
            } else {
                tab(line).extend_from_slice(b"\\N\t5");
                r::fixed(rng, 1, 999_999, 2, tab(line));
            }
            r::a_string(rng, 24, 24, tab(line));
            ol.rows.end_row();
        }
    }
    vec![o, no, ol]
}

fn unit_seed(u: Unit) -> u64 {
    let (kind, a, b) = match u {
        Unit::Items { part } => (1u64, 0, part),
        Unit::Warehouse { w } => (2, w, 0),
        Unit::Stock { w, part } => (3, w, part),
        Unit::Customers { w, d } => (4, w, d),
        Unit::Orders { w, d } => (5, w, d),
    };
    kind << 56 | (a as u64) << 24 | b as u64
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LoadReport {
    pub warehouses: u32,
    pub rows: u64,
    pub bytes: u64,
    pub seconds: f64,
    pub rows_per_second: f64,
    pub method: &'static str,
    pub constants: Constants,
}

struct Loading {
    queue: Mutex<VecDeque<Unit>>,
    rows_done: Arc<AtomicU64>,
    bytes: AtomicU64,
    sending: bulk::Sending,
    failed: AtomicBool,
}

/// Creates the nine tables in the target database and loads `warehouses` warehouses
/// with `threads` connections.
pub async fn prepare(
    target: &Target,
    warehouses: u32,
    threads: u32,
    load: bulk::LoadSettings,
    seed: u64,
    rows_done: Arc<AtomicU64>,
) -> Result<LoadReport, DataError> {
    let started = Instant::now();
    target.ensure_database(load.statement_timeout).await?;
    let mut conn = target.connect().await?;
    let names: Vec<String> = TABLES.iter().map(|t| t.to_string()).collect();
    let existing = ownership::existing_tables(&mut conn, &target.database, &names, "").await?;
    if let Some(refusal) = ownership::refusal(&target.database, &existing, "tpcc") {
        return Err(DataError::NotOurs(refusal));
    }
    let sending = bulk::Sending::new(load);
    sending.decide(target).await?;
    let k = Constants::for_load(&mut rng_from_seed(seed));
    // Marked incomplete until every row and index is in (see ownership::INCOMPLETE).
    let creates: Vec<(String, String)> = TABLES
        .iter()
        .map(|t| {
            (schema::create_sql(t, &ownership::while_loading(&schema::comment(t, k.c_last))), format!("creating {t}"))
        })
        .collect();
    ownership::run_or_undo(target, &mut conn, &names, creates, load.statement_timeout, "tpcc").await?;
    let loading = |t: &str| ownership::while_loading(&schema::comment(t, k.c_last));
    let in_table = ownership::marked_or_undo(target, &mut conn, &names, loading, "tpcc").await?;
    let state = Arc::new(Loading {
        queue: Mutex::new(units(warehouses)),
        rows_done,
        bytes: AtomicU64::new(0),
        sending,
        failed: AtomicBool::new(false),
    });
    if let Err(e) = load_all(target, &state, threads, seed, &k, &mut conn).await {
        return Err(ownership::undo_prepare(target, &names, e, "tpcc", &state.sending.stalled()).await);
    }
    let marks = ownership::mark_complete(&names, |t| schema::comment(t, k.c_last));
    if !in_table {
        ownership::run_or_undo(target, &mut conn, &names, marks, load.statement_timeout, "tpcc").await?;
    }
    ownership::marked_or_undo(target, &mut conn, &names, |t| schema::comment(t, k.c_last), "tpcc").await?;
    let _ = conn.disconnect().await;
    let seconds = started.elapsed().as_secs_f64();
    let rows = state.rows_done.load(Ordering::Relaxed);
    Ok(LoadReport {
        warehouses,
        rows,
        bytes: state.bytes.load(Ordering::Relaxed),
        seconds,
        rows_per_second: rows as f64 / seconds.max(1e-9),
        method: state.sending.describe(),
        constants: k,
    })
}

/// Loads the created tables and builds their secondary indexes.
async fn load_all(
    target: &Target,
    state: &Arc<Loading>,
    threads: u32,
    seed: u64,
    k: &Constants,
    conn: &mut mysql_async::Conn,
) -> Result<(), DataError> {
    let k = *k;
    let now: String = conn
        .query_first("SELECT DATE_FORMAT(NOW(), '%Y-%m-%d %H:%i:%s')")
        .await
        .map_err(|e| DataError::sql("reading the server's clock", &e))?
        .unwrap_or_default();
    let mut loaders = Vec::new();
    for _ in 0..threads.max(1) {
        let (target, state, now) = (target.clone(), state.clone(), now.clone());
        loaders.push(tokio::spawn(async move {
            let r = loader(&target, &state, &k, now.as_bytes(), seed).await;
            if r.is_err() {
                state.failed.store(true, Ordering::Relaxed);
            }
            r
        }));
    }
    bulk::join_loaders(loaders).await?;
    // The secondary indexes, built once over the loaded tables (sorted index builds).
    // Measured at 4 warehouses: the same time as keeping them during the load (4.1-4.5 s
    // either way, docs/PERFORMANCE.md); this way the load's undo and redo stay smaller.
    let mut builders = Vec::new();
    for (table, sql) in schema::INDEXES {
        let (target, state) = (target.clone(), state.clone());
        builders.push(tokio::spawn(async move {
            let mut conn = target.connect().await?;
            let id = stall::server_id(&mut conn).await?;
            let what = format!("indexing {table}");
            let every = state.sending.settings.statement_timeout;
            match stall::watched(&target, id, every, &what, bulk::exec_retrying(&mut conn, sql, &what)).await {
                Ok(built) => {
                    if built.is_ok() {
                        let _ = conn.disconnect().await;
                    }
                    built
                }
                Err(Stalled(e)) => {
                    state.sending.stall(id);
                    state.sending.hold(conn);
                    Err(DataError::Stalled(e))
                }
            }
        }));
    }
    let mut first_error = None;
    for b in builders {
        if let Err(e) = b.await.map_err(|e| DataError::Data(format!("an index build stopped: {e}"))).and_then(|r| r) {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

async fn loader(target: &Target, state: &Loading, k: &Constants, now: &[u8], seed: u64) -> Result<(), DataError> {
    let mut conn = bulk::Loader::open(target, &state.sending).await?;
    let r = load_units(&mut conn, state, k, now, seed).await;
    conn.close(&state.sending).await;
    r
}

async fn load_units(
    conn: &mut bulk::Loader,
    state: &Loading,
    k: &Constants,
    now: &[u8],
    seed: u64,
) -> Result<(), DataError> {
    loop {
        if state.failed.load(Ordering::Relaxed) {
            return Ok(());
        }
        let Some(unit) = state.queue.lock().expect("no panics while held").pop_front() else {
            return Ok(());
        };
        for batch in generate(unit, k, now, seed) {
            let count = batch.rows.count;
            let pieces = batch.rows.finish();
            state.bytes.fetch_add(pieces.iter().map(|p| p.len() as u64).sum(), Ordering::Relaxed);
            conn.load(batch.table, batch.columns, pieces, &state.sending).await?;
            state.rows_done.fetch_add(count, Ordering::Relaxed);
        }
    }
}

/// Drops the TPC-C tables of the target database that sizeup created, and only those.
pub async fn cleanup(target: &Target) -> Result<ownership::CleanupReport, DataError> {
    let names: Vec<String> = TABLES.iter().map(|t| t.to_string()).collect();
    ownership::drop_ours(target, &names, "", |_| true).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(b: Batch) -> Vec<Vec<String>> {
        let text: Vec<u8> = b.rows.finish().concat();
        String::from_utf8(text).unwrap().lines().map(|l| l.split('\t').map(String::from).collect()).collect()
    }

    #[test]
    fn units_cover_every_warehouse_and_district() {
        let u = units(3);
        assert_eq!(u.len(), 4 + 3 * (1 + 4 + 20));
        for w in 1..=3 {
            for d in 1..=10 {
                assert!(u.contains(&Unit::Customers { w, d }) && u.contains(&Unit::Orders { w, d }));
            }
        }
    }

    #[test]
    fn orders_follow_clause_4_3_3_1() {
        let k = Constants { c_last: 1, c_id: 2, ol_i_id: 3 };
        let mut b = generate(Unit::Orders { w: 2, d: 7 }, &k, b"2026-01-01 00:00:00", 9).into_iter();
        let (orders, new_orders, order_lines) =
            (lines(b.next().unwrap()), lines(b.next().unwrap()), lines(b.next().unwrap()));
        assert_eq!(orders.len(), 3000);
        assert_eq!(new_orders.len(), 900);
        assert_eq!(new_orders[0][0], "2101");
        let mut customers: Vec<u32> = orders.iter().map(|o| o[3].parse().unwrap()).collect();
        customers.sort();
        assert_eq!(customers, (1..=3000).collect::<Vec<_>>(), "o_c_id is a permutation");
        let total_lines: u32 = orders.iter().map(|o| o[6].parse::<u32>().unwrap()).sum();
        assert_eq!(order_lines.len() as u32, total_lines);
        for o in &orders {
            let id: u32 = o[0].parse().unwrap();
            assert_eq!(o[5] == "\\N", id >= FIRST_NEW_ORDER, "carrier null exactly for undelivered");
            assert!((5..=15).contains(&o[6].parse::<u32>().unwrap()));
        }
        for l in &order_lines {
            let undelivered = l[0].parse::<u32>().unwrap() >= FIRST_NEW_ORDER;
            assert_eq!(l[6] == "\\N", undelivered);
            assert_eq!(l[8] == "0.00", !undelivered);
            assert_eq!(l[9].len(), 24);
        }
    }

    #[test]
    fn customers_have_spec_names_credit_and_history() {
        let k = Constants { c_last: 1, c_id: 2, ol_i_id: 3 };
        let mut b = generate(Unit::Customers { w: 1, d: 1 }, &k, b"2026-01-01 00:00:00", 9).into_iter();
        let (customers, history) = (lines(b.next().unwrap()), lines(b.next().unwrap()));
        assert_eq!((customers.len(), history.len()), (3000, 3000));
        assert_eq!(customers[0][5], "BARBARBAR");
        assert_eq!(customers[371][5], "PRICALLYOUGHT");
        let bad = customers.iter().filter(|c| c[13] == "BC").count();
        assert!((200..400).contains(&bad), "{bad} BC of 3000");
        assert!(customers.iter().all(|c| c.len() == 21 && c[16] == "-10.00" && (300..=500).contains(&c[20].len())));
        assert!(history.iter().all(|h| h[6] == "10.00"));
    }
}
