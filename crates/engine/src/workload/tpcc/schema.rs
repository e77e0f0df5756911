//! The nine TPC-C tables (clause 1.3) with the spec's column names, in go-tpc's table
//! names and column types, so go-tpc's checker and workload read sizeup's data as their
//! own (tpcc-mysql names the table `new_orders` and types some columns otherwise: it
//! needs views). Secondary indexes are separate: the loader builds them after the bulk
//! load.

/// Every table, in the order they are created (and dropped in reverse).
pub const TABLES: [&str; 9] =
    ["warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock"];

/// CREATE TABLE bodies (column list and primary key), by table.
pub const COLUMNS: [(&str, &str); 9] = [
    (
        "warehouse",
        "w_id INT NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20), \
         w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2), \
         PRIMARY KEY (w_id)",
    ),
    (
        "district",
        "d_id INT NOT NULL, d_w_id INT NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20), \
         d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4,4), \
         d_ytd DECIMAL(12,2), d_next_o_id INT, PRIMARY KEY (d_w_id, d_id)",
    ),
    (
        "customer",
        "c_id INT NOT NULL, c_d_id INT NOT NULL, c_w_id INT NOT NULL, c_first VARCHAR(16), c_middle CHAR(2), \
         c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20), c_city VARCHAR(20), c_state CHAR(2), \
         c_zip CHAR(9), c_phone CHAR(16), c_since DATETIME, c_credit CHAR(2), c_credit_lim DECIMAL(12,2), \
         c_discount DECIMAL(4,4), c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), c_payment_cnt INT, \
         c_delivery_cnt INT, c_data VARCHAR(500), PRIMARY KEY (c_w_id, c_d_id, c_id)",
    ),
    (
        // No primary key in the spec; InnoDB adds its hidden row id.
        "history",
        "h_c_id INT, h_c_d_id INT, h_c_w_id INT, h_d_id INT, h_w_id INT, h_date DATETIME, \
         h_amount DECIMAL(6,2), h_data VARCHAR(24)",
    ),
    ("new_order", "no_o_id INT NOT NULL, no_d_id INT NOT NULL, no_w_id INT NOT NULL, PRIMARY KEY (no_w_id, no_d_id, no_o_id)"),
    (
        "orders",
        "o_id INT NOT NULL, o_d_id INT NOT NULL, o_w_id INT NOT NULL, o_c_id INT, o_entry_d DATETIME, \
         o_carrier_id INT, o_ol_cnt INT, o_all_local INT, PRIMARY KEY (o_w_id, o_d_id, o_id)",
    ),
    (
        "order_line",
        "ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, ol_w_id INT NOT NULL, ol_number INT NOT NULL, ol_i_id INT NOT NULL, \
         ol_supply_w_id INT, ol_delivery_d DATETIME, ol_quantity INT, ol_amount DECIMAL(6,2), ol_dist_info CHAR(24), \
         PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)",
    ),
    (
        "item",
        "i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5,2), i_data VARCHAR(50), \
         PRIMARY KEY (i_id)",
    ),
    (
        "stock",
        "s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity INT, s_dist_01 CHAR(24), s_dist_02 CHAR(24), \
         s_dist_03 CHAR(24), s_dist_04 CHAR(24), s_dist_05 CHAR(24), s_dist_06 CHAR(24), s_dist_07 CHAR(24), \
         s_dist_08 CHAR(24), s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd INT, s_order_cnt INT, \
         s_remote_cnt INT, s_data VARCHAR(50), PRIMARY KEY (s_w_id, s_i_id)",
    ),
];

/// The secondary indexes the transactions need: customers by last name (Payment and
/// Order-Status, clause 2.5.2.2 / 2.6.2.2) and orders by customer (Order-Status).
pub const INDEXES: [(&str, &str); 2] = [
    ("customer", "CREATE INDEX idx_customer ON customer (c_w_id, c_d_id, c_last, c_first)"),
    ("orders", "CREATE INDEX idx_orders ON orders (o_w_id, o_d_id, o_c_id, o_id)"),
];

/// The CREATE TABLE statement for `table`, carrying sizeup's mark (and, on `item`, the
/// load's C_LAST constant, which the run needs to pick its own, clause 2.1.6.1).
pub fn create_sql(table: &str, comment: &str) -> String {
    let body = COLUMNS.iter().find(|(t, _)| *t == table).map(|(_, b)| *b).expect("a TPC-C table");
    format!("CREATE TABLE {table} ({body}) ENGINE = InnoDB {comment}")
}

/// The table comment for `table`: the ownership mark, plus `c_last=N` on `item`.
pub fn comment(table: &str, c_last: u32) -> String {
    let mark = crate::workload::ownership::comment_clause("tpcc");
    if table == "item" {
        format!("{}; c_last={c_last}'", mark.trim_end_matches('\''))
    } else {
        mark
    }
}

/// The load's C_LAST read back from `item`'s comment, if sizeup loaded it.
pub fn c_last_from_comment(comment: &str) -> Option<u32> {
    comment.split("c_last=").nth(1)?.trim_end_matches(|c: char| !c.is_ascii_digit()).parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_has_a_definition_with_the_spec_prefixes() {
        for t in TABLES {
            let sql = create_sql(t, &comment(t, 7));
            assert!(sql.starts_with(&format!("CREATE TABLE {t} (")), "{sql}");
            assert!(sql.contains(crate::workload::ownership::MARK));
        }
        for col in ["w_ytd", "d_next_o_id", "c_balance", "no_o_id", "o_carrier_id", "ol_amount", "s_quantity"] {
            assert!(COLUMNS.iter().any(|(_, b)| b.contains(col)), "{col}");
        }
    }

    #[test]
    fn the_load_constant_round_trips_through_the_comment() {
        let c = comment("item", 123);
        assert_eq!(c, "COMMENT='created by sizeup (tpcc); c_last=123'");
        let stored = c.trim_start_matches("COMMENT='").trim_end_matches('\'');
        assert_eq!(c_last_from_comment(stored), Some(123));
        assert_eq!(c_last_from_comment("created by sizeup (tpcc)"), None);
    }
}
