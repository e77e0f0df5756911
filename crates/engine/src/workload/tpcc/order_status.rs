//! Order-Status (clause 2.6): a read-only look at a customer's last order and its lines.

use super::payment::{customer_by_name, Customer};
use super::random as r;
use super::terminal::Terminal;
use super::tx::{int, Tx};
use crate::client::Param;
use crate::workload::Failed;

/// Clause 2.6.2.2: the customer's balance and name.
const CUSTOMER: &str =
    "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
/// The customer's most recent order (the orders-by-customer index serves it).
const LAST_ORDER: &str = "SELECT o_id, o_carrier_id, o_entry_d FROM orders \
                          WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1";
const LINES: &str = "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line \
                     WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";

pub(super) struct Input {
    w: u32,
    d: u32,
    customer: Customer,
}

impl Input {
    /// Clause 2.6.1: home warehouse, random district, 60 % by last name.
    pub(super) fn draw(s: &mut Terminal) -> Self {
        let w = s.home();
        let d = r::uniform(&mut s.rng, 1, 10);
        Input { w, d, customer: Customer::draw(s) }
    }
}

pub(super) async fn run(tx: &mut Tx<'_>, i: &Input) -> Result<bool, Failed> {
    let c_id = match i.customer {
        Customer::Id(c) => c as i64,
        Customer::LastName(n) => match customer_by_name(tx, i.w, i.d, n).await? {
            Some(c) => c,
            None => {
                tx.commit().await?;
                return Ok(false);
            }
        },
    };
    let (w, d) = (Param::Int(i.w as i64), Param::Int(i.d as i64));
    tx.read("order_status customer", CUSTOMER, &[w, d, Param::Int(c_id)]).await?;
    if let Some(order) = tx.first("order_status order", LAST_ORDER, &[w, d, Param::Int(c_id)]).await? {
        tx.read("order_status lines", LINES, &[w, d, Param::Int(int(&order, 0))]).await?;
    }
    tx.commit().await?;
    Ok(false)
}
