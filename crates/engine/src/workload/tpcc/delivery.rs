//! Delivery (clause 2.7): deliver the oldest undelivered order of each of the
//! warehouse's ten districts, in one database transaction (clause 2.7.4.1 allows one
//! for all ten).

use super::random as r;
use super::terminal::Terminal;
use super::tx::{float, int, Tx};
use crate::client::Param;
use crate::workload::Failed;

/// Clause 2.7.4.2, per district: the oldest new-order, locked, then deleted.
const OLDEST: &str =
    "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE";
const DELETE: &str = "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?";
/// The order's customer; the order gets its carrier.
const ORDER_CUSTOMER: &str = "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?";
const CARRIER: &str = "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?";
/// Every line is delivered now; their amounts are summed for the customer.
const DELIVERED: &str = "UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";
const AMOUNT: &str = "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";
const CUSTOMER: &str = "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 \
                        WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";

pub(super) struct Input {
    w: u32,
    carrier: u32,
}

impl Input {
    /// Clause 2.7.1: home warehouse, carrier 1..10.
    pub(super) fn draw(s: &mut Terminal) -> Self {
        let w = s.home();
        Input { w, carrier: r::uniform(&mut s.rng, 1, 10) }
    }
}

pub(super) async fn run(tx: &mut Tx<'_>, i: &Input) -> Result<bool, Failed> {
    let w = Param::Int(i.w as i64);
    for d in 1..=super::load::DISTRICTS as i64 {
        let d = Param::Int(d);
        // A district with no undelivered order is skipped (clause 2.7.4.2).
        let Some(oldest) = tx.first("delivery new_order", OLDEST, &[w, d]).await? else { continue };
        let o = Param::Int(int(&oldest, 0));
        tx.exec("delivery new_order", DELETE, &[w, d, o]).await?;
        let order = tx.first("delivery order", ORDER_CUSTOMER, &[w, d, o]).await?;
        let c = Param::Int(order.as_deref().map_or(0, |r| int(r, 0)));
        tx.exec("delivery order", CARRIER, &[Param::Int(i.carrier as i64), w, d, o]).await?;
        tx.exec("delivery lines", DELIVERED, &[w, d, o]).await?;
        let sum = tx.first("delivery lines", AMOUNT, &[w, d, o]).await?;
        let amount = sum.as_deref().map_or(0.0, |r| float(r, 0));
        tx.exec("delivery customer", CUSTOMER, &[Param::Float(amount), w, d, c]).await?;
    }
    tx.commit().await?;
    Ok(false)
}
