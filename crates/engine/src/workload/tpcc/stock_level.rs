//! Stock-Level (clause 2.8): how many items of the district's last 20 orders are low
//! in stock. Read-only, and the heaviest read of the mix.

use super::random as r;
use super::terminal::Terminal;
use super::tx::{int, Tx};
use crate::client::Param;
use crate::workload::Failed;

/// Clause 2.8.2.2: the district's next order number ...
const NEXT_ORDER: &str = "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?";
/// ... and the distinct items of orders next-20 .. next-1 whose stock is below the threshold.
const LOW_STOCK: &str = "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock \
                         WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? \
                         AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?";

pub(super) struct Input {
    w: u32,
    d: u32,
    threshold: u32,
}

impl Input {
    /// Clause 2.8.1: the terminal's own warehouse and district, threshold 10..20.
    pub(super) fn draw(s: &mut Terminal) -> Self {
        let w = s.home();
        Input { w, d: s.district, threshold: r::uniform(&mut s.rng, 10, 20) }
    }
}

pub(super) async fn run(tx: &mut Tx<'_>, i: &Input) -> Result<bool, Failed> {
    let (w, d) = (Param::Int(i.w as i64), Param::Int(i.d as i64));
    let next = tx.first("stock_level district", NEXT_ORDER, &[w, d]).await?;
    let next = next.as_deref().map_or(0, |r| int(r, 0));
    let params = [w, d, Param::Int(next), Param::Int(next - 20), w, Param::Int(i.threshold as i64)];
    tx.first("stock_level stock", LOW_STOCK, &params).await?;
    tx.commit().await?;
    Ok(false)
}
