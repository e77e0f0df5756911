//! Payment (clause 2.5): a customer pays; the warehouse's and district's year-to-date
//! totals grow, the customer's balance falls, and the payment is written to history.

use super::random as r;
use super::terminal::Terminal;
use super::tx::{int, Tx};
use crate::client::{Param, Value};
use crate::workload::Failed;

/// Clause 2.5.2.2, in the spec's order.
const WAREHOUSE_YTD: &str = "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?";
const WAREHOUSE: &str = "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?";
const DISTRICT_YTD: &str = "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?";
const DISTRICT: &str =
    "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?";
/// Case 2: by last name, sorted by first name; the customer is the one at position
/// n/2 rounded up.
pub(super) const BY_NAME: &str =
    "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first";
const CUSTOMER: &str = "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, \
                        c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer \
                        WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE";
/// Bad credit: C_DATA gets the payment prepended, kept to 500 characters.
const CUSTOMER_DATA: &str = "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
const PAY: &str = "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, \
                   c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
const PAY_BAD_CREDIT: &str = "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, \
                              c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
/// H_DATA is the warehouse name and the district name separated by 4 spaces.
const HISTORY: &str = "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
                       VALUES (?, ?, ?, ?, ?, NOW(), ?, ?)";

/// The customer a Payment or Order-Status is for (clause 2.5.1.2 / 2.6.1.2).
pub(super) enum Customer {
    Id(u32),
    /// The last name's number (0..999), spelled with [`r::last_name`].
    LastName(u32),
}

impl Customer {
    /// 60 % by last name, 40 % by id.
    pub(super) fn draw(s: &mut Terminal) -> Self {
        if r::uniform(&mut s.rng, 1, 100) <= 60 {
            Customer::LastName(r::last_name_number(&mut s.rng, &s.constants))
        } else {
            Customer::Id(r::customer_id(&mut s.rng, &s.constants))
        }
    }
}

pub(super) struct Input {
    w: u32,
    d: u32,
    c_w: u32,
    c_d: u32,
    customer: Customer,
    /// H_AMOUNT in cents, 1.00 .. 5,000.00.
    cents: u32,
}

impl Input {
    /// Clause 2.5.1: 85 % home customers, 15 % of another warehouse (any district).
    pub(super) fn draw(s: &mut Terminal) -> Self {
        let w = s.home();
        let d = r::uniform(&mut s.rng, 1, 10);
        let (c_w, c_d) = if r::uniform(&mut s.rng, 1, 100) <= 85 || s.warehouses == 1 {
            (w, d)
        } else {
            (s.other_warehouse(w), r::uniform(&mut s.rng, 1, 10))
        };
        let customer = Customer::draw(s);
        Input { w, d, c_w, c_d, customer, cents: r::uniform(&mut s.rng, 100, 500_000) }
    }
}

/// Finds the customer by last name: the id at position n/2 rounded up (clause 2.5.2.2).
pub(super) async fn customer_by_name(tx: &mut Tx<'_>, w: u32, d: u32, number: u32) -> Result<Option<i64>, Failed> {
    let mut name = Vec::with_capacity(16);
    r::last_name(number, &mut name);
    let mut ids = Vec::new();
    tx.run(
        "customer by last name",
        BY_NAME,
        super::tx::Kind::Read,
        &[Param::Int(w as i64), Param::Int(d as i64), Param::Bytes(&name)],
        Some(&mut |row: &[Value]| ids.push(int(row, 0))),
    )
    .await?;
    Ok(ids.get(ids.len().div_ceil(2).saturating_sub(1)).copied())
}

pub(super) async fn run(tx: &mut Tx<'_>, i: &Input) -> Result<bool, Failed> {
    let amount = i.cents as f64 / 100.0;
    let (w, d) = (Param::Int(i.w as i64), Param::Int(i.d as i64));
    tx.exec("payment warehouse", WAREHOUSE_YTD, &[Param::Float(amount), w]).await?;
    let wname = tx.first("payment warehouse", WAREHOUSE, &[w]).await?;
    tx.exec("payment district", DISTRICT_YTD, &[Param::Float(amount), w, d]).await?;
    let dname = tx.first("payment district", DISTRICT, &[w, d]).await?;
    let c_id = match i.customer {
        Customer::Id(c) => c as i64,
        Customer::LastName(n) => match customer_by_name(tx, i.c_w, i.c_d, n).await? {
            Some(c) => c,
            None => {
                // No customer of that name (data another tool loaded): nothing to pay.
                tx.rollback().await?;
                return Ok(true);
            }
        },
    };
    let key = [Param::Int(i.c_w as i64), Param::Int(i.c_d as i64), Param::Int(c_id)];
    let customer = tx.first("payment customer", CUSTOMER, &key).await?;
    let bad_credit = customer.as_deref().and_then(|c| c.get(10)).and_then(Value::as_bytes) == Some(b"BC");
    if bad_credit {
        let old = tx.first("payment customer", CUSTOMER_DATA, &key).await?;
        let old = old.as_deref().and_then(|r| r.first()).and_then(Value::as_bytes).unwrap_or_default().to_vec();
        let mut data = format!("{} {} {} {} {} {amount:.2} | ", c_id, i.c_d, i.c_w, i.d, i.w).into_bytes();
        data.extend_from_slice(&old);
        data.truncate(500);
        let params = [Param::Float(amount), Param::Float(amount), Param::Bytes(&data), key[0], key[1], key[2]];
        tx.exec("payment customer", PAY_BAD_CREDIT, &params).await?;
    } else {
        tx.exec("payment customer", PAY, &[Param::Float(amount), Param::Float(amount), key[0], key[1], key[2]]).await?;
    }
    let name = |row: &Option<Vec<Value>>| {
        row.as_deref().and_then(|r| r.first()).and_then(Value::as_bytes).unwrap_or_default().to_vec()
    };
    let mut h_data = name(&wname);
    h_data.extend_from_slice(b"    ");
    h_data.extend_from_slice(&name(&dname));
    // Amounts go as DOUBLE parameters; the DECIMAL columns round them to cents.
    tx.exec("payment history", HISTORY, &[key[2], key[1], key[0], d, w, Param::Float(amount), Param::Bytes(&h_data)])
        .await?;
    tx.commit().await?;
    Ok(false)
}
