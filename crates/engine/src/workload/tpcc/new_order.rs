//! New-Order (clause 2.4): enter an order of 5-15 lines in one database transaction.
//!
//! The item and stock reads of all lines go as one IN-list statement each (per supply
//! warehouse), the stock updates as one CASE update, and the order lines as one
//! multi-row INSERT: about 12 round trips instead of 4 per line, the same rows read,
//! locked and written as the spec's line-by-line profile.

use super::random as r;
use super::terminal::Terminal;
use super::tx::{float, int, Kind, Tx};
use crate::client::{Param, Value};
use crate::workload::Failed;
use std::fmt::Write;

/// Clause 2.4.2.2: the customer's discount, last name and credit, the warehouse's tax.
const CUSTOMER: &str = "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse \
                        WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?";
/// The district's next order number and tax, locked: it is incremented below.
const DISTRICT: &str = "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE";
const DISTRICT_NEXT: &str = "UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?";
/// O_CARRIER_ID is null until Delivery; O_ALL_LOCAL says whether every line is local.
const ORDER: &str = "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, \
                     o_all_local) VALUES (?, ?, ?, ?, NOW(), NULL, ?, ?)";
const NEW_ORDER: &str = "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)";
/// Built per order (IN lists): the items, and the stock of each supply warehouse.
const ITEMS: &str = "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN (";
const STOCK_COLUMNS: &str = "SELECT s_i_id, s_quantity, s_data, s_dist_";
const LINES: &str = "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, \
                     ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES ";

/// The id that no item has: 1 % of orders end with it and are rolled back (2.4.1.4).
const UNUSED_ITEM: u32 = 100_001;

pub(super) struct Input {
    w: u32,
    d: u32,
    c: u32,
    /// Per line: item id, supply warehouse, quantity.
    lines: Vec<(u32, u32, u32)>,
}

impl Input {
    /// Clause 2.4.1: district, customer, 5-15 distinct items, 1 % remote supply per
    /// line, 1 % of orders with an unused last item.
    pub(super) fn draw(s: &mut Terminal) -> Self {
        let w = s.home();
        let d = r::uniform(&mut s.rng, 1, 10);
        let c = r::customer_id(&mut s.rng, &s.constants);
        let count = r::uniform(&mut s.rng, 5, 15) as usize;
        let rollback = r::uniform(&mut s.rng, 1, 100) == 1;
        let mut lines: Vec<(u32, u32, u32)> = Vec::with_capacity(count);
        while lines.len() < count {
            let item =
                if rollback && lines.len() == count - 1 { UNUSED_ITEM } else { r::item_id(&mut s.rng, &s.constants) };
            // Items are distinct within an order, so each stock row is locked once.
            if lines.iter().any(|l| l.0 == item) {
                continue;
            }
            let supply = if r::uniform(&mut s.rng, 1, 100) == 1 { s.other_warehouse(w) } else { w };
            lines.push((item, supply, r::uniform(&mut s.rng, 1, 10)));
        }
        Input { w, d, c, lines }
    }
}

/// Runs it; returns whether it rolled back (the unused item).
pub(super) async fn run(tx: &mut Tx<'_>, i: &Input, sql: &mut String) -> Result<bool, Failed> {
    let (w, d) = (i.w as i64, i.d as i64);
    tx.first("new_order customer", CUSTOMER, &[Param::Int(w), Param::Int(d), Param::Int(i.c as i64)]).await?;
    let district = tx.first("new_order district", DISTRICT, &[Param::Int(w), Param::Int(d)]).await?;
    let o_id = district.as_deref().map_or(0, |r| int(r, 0));
    tx.exec("new_order district", DISTRICT_NEXT, &[Param::Int(o_id + 1), Param::Int(w), Param::Int(d)]).await?;
    let all_local = i.lines.iter().all(|l| l.1 == i.w);
    let order = [Param::Int(o_id), Param::Int(d), Param::Int(w), Param::Int(i.c as i64)];
    let count = [Param::Int(i.lines.len() as i64), Param::Int(all_local as i64)];
    tx.exec("new_order order", ORDER, &[order[0], order[1], order[2], order[3], count[0], count[1]]).await?;
    tx.exec("new_order order", NEW_ORDER, &order[..3]).await?;

    // Items: price per requested id. A missing one is the unused id: roll back.
    let mut prices: Vec<(u32, f64)> = Vec::with_capacity(i.lines.len());
    sql.clear();
    sql.push_str(ITEMS);
    in_list(sql, i.lines.iter().map(|l| l.0));
    tx.text(
        "new_order item",
        sql,
        Kind::Read,
        Some(&mut |row: &[Value]| prices.push((int(row, 0) as u32, float(row, 1)))),
    )
    .await?;
    if prices.len() < i.lines.len() {
        tx.rollback().await?;
        return Ok(true);
    }

    // Stock, per supply warehouse: read and lock, then one update for all its lines.
    let mut stock: Vec<(u32, u32, i64, Vec<u8>)> = Vec::with_capacity(i.lines.len()); // item, supply, qty, dist
    let mut supplies: Vec<u32> = i.lines.iter().map(|l| l.1).collect();
    supplies.sort_unstable();
    supplies.dedup();
    for &sw in &supplies {
        sql.clear();
        let _ = write!(sql, "{STOCK_COLUMNS}{:02} FROM stock WHERE s_w_id = {sw} AND s_i_id IN (", i.d);
        in_list(sql, i.lines.iter().filter(|l| l.1 == sw).map(|l| l.0));
        sql.push_str(" FOR UPDATE");
        tx.text(
            "new_order stock",
            sql,
            Kind::Read,
            Some(&mut |row: &[Value]| {
                let dist = row.get(3).and_then(Value::as_bytes).unwrap_or_default().to_vec();
                stock.push((int(row, 0) as u32, sw, int(row, 1), dist));
            }),
        )
        .await?;
        // Clause 2.4.2.2: take the quantity; restock by 91 when it would fall below 10.
        sql.clear();
        sql.push_str("UPDATE stock SET s_quantity = CASE s_i_id");
        for l in i.lines.iter().filter(|l| l.1 == sw) {
            let have = stock.iter().find(|s| s.0 == l.0 && s.1 == sw).map_or(0, |s| s.2);
            let qty = l.2 as i64;
            let left = if have >= qty + 10 { have - qty } else { have - qty + 91 };
            let _ = write!(sql, " WHEN {} THEN {left}", l.0);
        }
        sql.push_str(" END, s_ytd = s_ytd + CASE s_i_id");
        for l in i.lines.iter().filter(|l| l.1 == sw) {
            let _ = write!(sql, " WHEN {} THEN {}", l.0, l.2);
        }
        let remote = (sw != i.w) as u32;
        let _ = write!(
            sql,
            " END, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + {remote} WHERE s_w_id = {sw} AND s_i_id IN ("
        );
        in_list(sql, i.lines.iter().filter(|l| l.1 == sw).map(|l| l.0));
        tx.text("new_order stock", sql, Kind::Write, None).await?;
    }

    // The lines: OL_AMOUNT = quantity x price, OL_DIST_INFO from the district's column.
    sql.clear();
    sql.push_str(LINES);
    for (n, l) in i.lines.iter().enumerate() {
        let price = prices.iter().find(|p| p.0 == l.0).map_or(0.0, |p| p.1);
        let dist = stock.iter().find(|s| s.0 == l.0 && s.1 == l.1).map(|s| s.3.as_slice()).unwrap_or_default();
        let _ = write!(
            sql,
            "{}({o_id},{d},{w},{},{},{},NULL,{},{:.2},'{}')",
            if n > 0 { "," } else { "" },
            n + 1,
            l.0,
            l.1,
            l.2,
            l.2 as f64 * price,
            String::from_utf8_lossy(dist).replace('\'', "''")
        );
    }
    tx.text("new_order line", sql, Kind::Write, None).await?;
    tx.commit().await?;
    Ok(false)
}

fn in_list(sql: &mut String, ids: impl Iterator<Item = u32>) {
    for (n, id) in ids.enumerate() {
        if n > 0 {
            sql.push(',');
        }
        sql.push_str(itoa::Buffer::new().format(id));
    }
    sql.push(')');
}
