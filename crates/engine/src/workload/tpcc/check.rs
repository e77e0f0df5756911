//! The consistency conditions of clause 3.3.2. Each is one query that returns the rows
//! breaking it, so a failure names the warehouse, district, order or customer.
//! Conditions 1-10 and 12 are checked; 11 holds only right after the load and is left out.

use crate::target::stall;
use crate::target::{short_error, Target};
use crate::workload::DataError;
use mysql_async::prelude::Queryable;
use std::time::Duration;

/// (number, what must hold, query returning the offending rows).
pub const CONDITIONS: [(u32, &str, &str); 11] = [
    (
        1,
        "W_YTD = sum(D_YTD) per warehouse",
        "SELECT w_id, w_ytd, SUM(d_ytd) FROM warehouse JOIN district ON d_w_id = w_id \
         GROUP BY w_id, w_ytd HAVING w_ytd <> SUM(d_ytd)",
    ),
    (
        2,
        "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district",
        "SELECT * FROM (SELECT d_w_id, d_id, d_next_o_id - 1 AS last_o_id, \
           (SELECT MAX(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) AS max_o_id, \
           (SELECT MAX(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id) AS max_no_o_id \
         FROM district) t \
         WHERE max_o_id IS NULL OR last_o_id <> max_o_id OR (max_no_o_id IS NOT NULL AND max_no_o_id <> max_o_id)",
    ),
    (
        3,
        "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER per district",
        "SELECT no_w_id, no_d_id, MAX(no_o_id) - MIN(no_o_id) + 1, COUNT(*) FROM new_order \
         GROUP BY no_w_id, no_d_id HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)",
    ),
    (
        4,
        "sum(O_OL_CNT) = rows in ORDER-LINE per district",
        "SELECT o.w, o.d, o.ol_cnt, COALESCE(l.n, 0) FROM \
           (SELECT o_w_id AS w, o_d_id AS d, SUM(o_ol_cnt) AS ol_cnt FROM orders GROUP BY o_w_id, o_d_id) o \
         LEFT JOIN (SELECT ol_w_id AS w, ol_d_id AS d, COUNT(*) AS n FROM order_line GROUP BY ol_w_id, ol_d_id) l \
           ON l.w = o.w AND l.d = o.d \
         WHERE o.ol_cnt <> COALESCE(l.n, 0)",
    ),
    (
        5,
        "O_CARRIER_ID is null exactly for orders with a NEW-ORDER row",
        "SELECT o_w_id, o_d_id, o_id, o_carrier_id FROM orders \
         LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id \
         WHERE (o_carrier_id IS NULL) <> (no_o_id IS NOT NULL)",
    ),
    (
        6,
        "O_OL_CNT = rows in ORDER-LINE per order",
        "SELECT o_w_id, o_d_id, o_id, o_ol_cnt, COUNT(ol_o_id) FROM orders \
         LEFT JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
         GROUP BY o_w_id, o_d_id, o_id, o_ol_cnt HAVING o_ol_cnt <> COUNT(ol_o_id)",
    ),
    (
        7,
        "OL_DELIVERY_D is null exactly when the order's O_CARRIER_ID is",
        "SELECT ol_w_id, ol_d_id, ol_o_id, ol_number FROM order_line \
         JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id \
         WHERE (ol_delivery_d IS NULL) <> (o_carrier_id IS NULL)",
    ),
    (
        8,
        "W_YTD = sum(H_AMOUNT) per warehouse",
        "SELECT w_id, w_ytd, COALESCE(h, 0) FROM warehouse \
         LEFT JOIN (SELECT h_w_id, SUM(h_amount) AS h FROM history GROUP BY h_w_id) x ON h_w_id = w_id \
         WHERE w_ytd <> COALESCE(h, 0)",
    ),
    (
        9,
        "D_YTD = sum(H_AMOUNT) per district",
        "SELECT d_w_id, d_id, d_ytd, COALESCE(h, 0) FROM district \
         LEFT JOIN (SELECT h_w_id, h_d_id, SUM(h_amount) AS h FROM history GROUP BY h_w_id, h_d_id) x \
           ON h_w_id = d_w_id AND h_d_id = d_id \
         WHERE d_ytd <> COALESCE(h, 0)",
    ),
    (
        10,
        "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) per customer",
        "SELECT c_w_id, c_d_id, c_id, c_balance, COALESCE(ol, 0) - COALESCE(h, 0) FROM customer \
         LEFT JOIN (SELECT o_w_id, o_d_id, o_c_id, SUM(ol_amount) AS ol FROM orders \
             JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
             WHERE ol_delivery_d IS NOT NULL GROUP BY o_w_id, o_d_id, o_c_id) a \
           ON a.o_w_id = c_w_id AND a.o_d_id = c_d_id AND a.o_c_id = c_id \
         LEFT JOIN (SELECT h_c_w_id, h_c_d_id, h_c_id, SUM(h_amount) AS h FROM history \
             GROUP BY h_c_w_id, h_c_d_id, h_c_id) b \
           ON b.h_c_w_id = c_w_id AND b.h_c_d_id = c_d_id AND b.h_c_id = c_id \
         WHERE c_balance <> COALESCE(ol, 0) - COALESCE(h, 0)",
    ),
    (
        12,
        "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) per customer",
        "SELECT c_w_id, c_d_id, c_id, c_balance + c_ytd_payment, COALESCE(ol, 0) FROM customer \
         LEFT JOIN (SELECT o_w_id, o_d_id, o_c_id, SUM(ol_amount) AS ol FROM orders \
             JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
             WHERE ol_delivery_d IS NOT NULL GROUP BY o_w_id, o_d_id, o_c_id) a \
           ON a.o_w_id = c_w_id AND a.o_d_id = c_d_id AND a.o_c_id = c_id \
         WHERE c_balance + c_ytd_payment <> COALESCE(ol, 0)",
    ),
];

/// How the check opens its snapshot, most exact first, with what each reads
/// (check_tpcc_falls_back_to_the_snapshot_the_server_takes).
const SNAPSHOTS: [(&str, &str); 3] = [
    ("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY", "one consistent read-only snapshot"),
    (
        "START TRANSACTION WITH CONSISTENT SNAPSHOT",
        "one consistent snapshot in a read-write transaction (it writes nothing)",
    ),
    ("START TRANSACTION", "in one transaction, as consistent as the server's isolation level makes it"),
];

/// Offending rows shown per failed condition.
const SHOWN: usize = 5;

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Outcome {
    pub number: u32,
    pub condition: &'static str,
    pub passed: bool,
    /// How many rows break it.
    pub violations: usize,
    /// The first few, as text.
    pub examples: Vec<String>,
}

/// Checks every condition on the target's TPC-C tables.
/// Each scan takes as long as its tables need; one that waits for a lock for `every`, or
/// on a server that stopped answering, fails the check as stalled.
pub async fn check(target: &Target, every: Duration) -> Result<Vec<Outcome>, DataError> {
    let mut conn = target.connect().await?;
    let id = stall::server_id(&mut conn)
        .await
        .map_err(|e| DataError::Data(format!("reading the check's connection id: {e}")))?;
    // The checks read a consistent snapshot of all the tables; a server that refuses
    // the read-only one gets the nearest it takes, said (Dolt: no READ ONLY beside it).
    let mut refused = Vec::new();
    let mut taken = None;
    for (sql, words) in SNAPSHOTS {
        match conn.query_drop(sql).await {
            Ok(()) => {
                taken = Some(words);
                break;
            }
            Err(e @ mysql_async::Error::Server(_)) => refused.push(format!("{sql}: {}", short_error(&e))),
            Err(e) => return Err(DataError::sql("starting the check's read-only snapshot", &e)),
        }
    }
    let Some(words) = taken else {
        let reason = format!("the server refused every form ({})", refused.join("; "));
        return Err(DataError::Statement { what: "starting the check's snapshot".into(), reason });
    };
    if let Some(first) = refused.first() {
        eprintln!("note: the check reads {words} (the server refused {first})");
    }
    let mut out = Vec::new();
    for (number, condition, sql) in CONDITIONS {
        let what = format!("checking condition {number}");
        let scan = async { conn.query(sql).await.map_err(|e| DataError::sql(what.clone(), &e)) };
        let rows: Vec<mysql_async::Row> = stall::watched(target, id, every, &what, scan).await??;
        out.push(Outcome {
            number,
            condition,
            passed: rows.is_empty(),
            violations: rows.len(),
            examples: rows.iter().take(SHOWN).map(row_text).collect(),
        });
    }
    let _ = conn.query_drop("COMMIT").await;
    Ok(out)
}

fn row_text(row: &mysql_async::Row) -> String {
    let cols = row.columns_ref();
    (0..row.len())
        .map(|i| {
            let v = match row.as_ref(i) {
                Some(mysql_async::Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
                Some(mysql_async::Value::NULL) | None => "NULL".into(),
                Some(v) => v.as_sql(true),
            };
            format!("{}={v}", cols[i].name_str())
        })
        .collect::<Vec<_>>()
        .join(" ")
}
