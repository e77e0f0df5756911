//! sysbench 1.0.20's OLTP workloads (`oltp_*.lua`), with the same schema, data, statement
//! mix and option names, so a sizeup run and a sysbench run are like for like; plus the
//! 0.4 "complex" mode that the older sizing guides used.
//!
//! The mix is data ([`Plan`]: which statement groups, how many of each); each oltp_* name
//! is a thin variant over it, as in sysbench's scripts.

pub mod lifecycle;
mod prepare;
mod session;

use crate::random::RandOptions;
use serde::{Deserialize, Serialize};

/// The oltp_* workload names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    ReadWrite,
    ReadOnly,
    WriteOnly,
    PointSelect,
    UpdateIndex,
    UpdateNonIndex,
    Insert,
    Delete,
    /// sysbench 0.4 `--test=oltp --oltp-test-mode=complex`.
    Complex,
}

impl Variant {
    pub const ALL: [(&'static str, Variant); 9] = [
        ("oltp_read_write", Variant::ReadWrite),
        ("oltp_read_only", Variant::ReadOnly),
        ("oltp_write_only", Variant::WriteOnly),
        ("oltp_point_select", Variant::PointSelect),
        ("oltp_update_index", Variant::UpdateIndex),
        ("oltp_update_non_index", Variant::UpdateNonIndex),
        ("oltp_insert", Variant::Insert),
        ("oltp_delete", Variant::Delete),
        ("oltp_complex", Variant::Complex),
    ];

    pub fn from_name(name: &str) -> Option<Variant> {
        let name = name.trim_end_matches(".lua");
        Variant::ALL.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    pub fn name(self) -> &'static str {
        Variant::ALL.iter().find(|(_, v)| *v == self).map(|(n, _)| *n).expect("every variant is listed")
    }
}

/// sysbench's oltp_common.lua options, with its defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OltpOptions {
    pub tables: u32,
    pub table_size: u32,
    pub range_size: u32,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub range_selects: bool,
    pub auto_inc: bool,
    pub skip_trx: bool,
    pub secondary: bool,
    pub create_secondary: bool,
    pub storage_engine: String,
    /// oltp_complex only: leave out the writes (0.4's `--oltp-read-only`).
    pub read_only: bool,
    pub rand: RandOptions,
    /// Send every statement as text with its values written in (`--db-ps-mode disable`).
    #[serde(default)]
    pub text_protocol: bool,
}

impl Default for OltpOptions {
    fn default() -> Self {
        OltpOptions {
            tables: 1,
            table_size: 10_000,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            auto_inc: true,
            skip_trx: false,
            secondary: false,
            create_secondary: true,
            storage_engine: "innodb".into(),
            read_only: false,
            rand: RandOptions::default(),
            text_protocol: false,
        }
    }
}

/// One kind of prepared statement, with its SQL as sysbench writes it (`%u` is the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statement {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
}

impl Statement {
    pub const COUNT: usize = 9;

    pub fn sql(self, table: u32) -> String {
        let t = table;
        match self {
            Statement::PointSelect => format!("SELECT c FROM sbtest{t} WHERE id=?"),
            Statement::SimpleRange => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Statement::SumRange => format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Statement::OrderRange => {
                format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Statement::DistinctRange => {
                format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Statement::IndexUpdate => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
            Statement::NonIndexUpdate => format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
            Statement::Delete => format!("DELETE FROM sbtest{t} WHERE id=?"),
            Statement::Insert => {
                format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)")
            }
        }
    }

    /// The name sysbench gives the statement group, used in error messages.
    pub fn class(self) -> &'static str {
        match self {
            Statement::PointSelect => "point_selects",
            Statement::SimpleRange => "simple_ranges",
            Statement::SumRange => "sum_ranges",
            Statement::OrderRange => "order_ranges",
            Statement::DistinctRange => "distinct_ranges",
            Statement::IndexUpdate => "index_updates",
            Statement::NonIndexUpdate => "non_index_updates",
            Statement::Delete => "deletes",
            Statement::Insert => "inserts",
        }
    }

    pub fn is_read(self) -> bool {
        matches!(
            self,
            Statement::PointSelect
                | Statement::SimpleRange
                | Statement::SumRange
                | Statement::OrderRange
                | Statement::DistinctRange
        )
    }
}

/// A group of statements run back to back on one randomly chosen table
/// (sysbench's `execute_point_selects`, `execute_delete_inserts`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Single(Statement, u32),
    /// DELETE then INSERT of the same id, `n` times.
    DeleteInserts(u32),
    /// oltp_insert: one INSERT sent as text, id from AUTO_INCREMENT or unique random.
    TextInsert,
}

/// What one transaction of a variant does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub explicit_trx: bool,
    pub groups: Vec<Group>,
    /// 0.4 complex mode: one table for the whole transaction, 0.4's insert values.
    pub legacy_complex: bool,
}

impl Plan {
    pub fn new(variant: Variant, o: &OltpOptions) -> Plan {
        use Statement::*;
        let ranges = |g: &mut Vec<Group>| {
            if o.range_selects {
                g.extend([
                    Group::Single(SimpleRange, o.simple_ranges),
                    Group::Single(SumRange, o.sum_ranges),
                    Group::Single(OrderRange, o.order_ranges),
                    Group::Single(DistinctRange, o.distinct_ranges),
                ]);
            }
        };
        let writes = |g: &mut Vec<Group>| {
            g.extend([
                Group::Single(IndexUpdate, o.index_updates),
                Group::Single(NonIndexUpdate, o.non_index_updates),
                Group::DeleteInserts(o.delete_inserts),
            ]);
        };
        let mut groups = Vec::new();
        let mut explicit_trx = !o.skip_trx;
        match variant {
            Variant::ReadWrite | Variant::Complex => {
                groups.push(Group::Single(PointSelect, o.point_selects));
                ranges(&mut groups);
                if !(variant == Variant::Complex && o.read_only) {
                    writes(&mut groups);
                }
            }
            Variant::ReadOnly => {
                groups.push(Group::Single(PointSelect, o.point_selects));
                ranges(&mut groups);
            }
            Variant::WriteOnly => writes(&mut groups),
            Variant::PointSelect => {
                explicit_trx = false;
                groups.push(Group::Single(PointSelect, 1)); // the script forces point_selects=1
            }
            Variant::UpdateIndex => {
                explicit_trx = false;
                groups.push(Group::Single(IndexUpdate, o.index_updates));
            }
            Variant::UpdateNonIndex => {
                explicit_trx = false;
                groups.push(Group::Single(NonIndexUpdate, o.non_index_updates));
            }
            Variant::Delete => {
                explicit_trx = false;
                groups.push(Group::Single(Delete, 1));
            }
            Variant::Insert => {
                explicit_trx = false;
                groups.push(Group::TextInsert);
            }
        }
        groups.retain(|g| !matches!(g, Group::Single(_, 0) | Group::DeleteInserts(0)));
        Plan { explicit_trx, groups, legacy_complex: variant == Variant::Complex }
    }

    /// The statements this plan needs prepared.
    pub fn statements(&self) -> Vec<Statement> {
        let mut v = Vec::new();
        for g in &self.groups {
            match *g {
                Group::Single(s, _) => v.push(s),
                Group::DeleteInserts(_) => v.extend([Statement::Delete, Statement::Insert]),
                Group::TextInsert => {}
            }
        }
        v
    }

    /// Statements sent per transaction, by class (reads, writes, other).
    pub fn queries_per_transaction(&self) -> (u32, u32, u32) {
        let (mut r, mut w) = (0, 0);
        for g in &self.groups {
            match *g {
                Group::Single(s, n) if s.is_read() => r += n,
                Group::Single(_, n) => w += n,
                Group::DeleteInserts(n) => w += 2 * n,
                Group::TextInsert => w += 1,
            }
        }
        (r, w, if self.explicit_trx { 2 } else { 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_write_mix_matches_sysbench() {
        // oltp_read_write.lua defaults: 10 point selects, 4 ranges, 2 updates, 1 delete +
        // 1 insert: 14 reads, 4 writes, 2 other = 20 queries per transaction.
        let p = Plan::new(Variant::ReadWrite, &OltpOptions::default());
        assert_eq!(p.queries_per_transaction(), (14, 4, 2));
        assert!(p.explicit_trx);
    }

    #[test]
    fn variants_have_their_scripts_mix() {
        let o = OltpOptions::default();
        assert_eq!(Plan::new(Variant::ReadOnly, &o).queries_per_transaction(), (14, 0, 2));
        assert_eq!(Plan::new(Variant::WriteOnly, &o).queries_per_transaction(), (0, 4, 2));
        assert_eq!(Plan::new(Variant::PointSelect, &o).queries_per_transaction(), (1, 0, 0));
        assert_eq!(Plan::new(Variant::UpdateIndex, &o).queries_per_transaction(), (0, 1, 0));
        assert_eq!(Plan::new(Variant::UpdateNonIndex, &o).queries_per_transaction(), (0, 1, 0));
        assert_eq!(Plan::new(Variant::Insert, &o).queries_per_transaction(), (0, 1, 0));
        assert_eq!(Plan::new(Variant::Delete, &o).queries_per_transaction(), (0, 1, 0));
        let complex = Plan::new(Variant::Complex, &o);
        assert_eq!(complex.queries_per_transaction(), (14, 4, 2));
        assert!(complex.legacy_complex);
        let ro = OltpOptions { read_only: true, ..o.clone() };
        assert_eq!(Plan::new(Variant::Complex, &ro).queries_per_transaction(), (14, 0, 2));
    }

    #[test]
    fn options_change_the_mix() {
        let o = OltpOptions { range_selects: false, skip_trx: true, point_selects: 3, ..Default::default() };
        assert_eq!(Plan::new(Variant::ReadWrite, &o).queries_per_transaction(), (3, 4, 0));
        let none = OltpOptions { delete_inserts: 0, ..Default::default() };
        assert!(!Plan::new(Variant::WriteOnly, &none).statements().contains(&Statement::Delete));
    }

    #[test]
    fn names_round_trip() {
        for (name, v) in Variant::ALL {
            assert_eq!(Variant::from_name(name), Some(v));
            assert_eq!(v.name(), name);
        }
        assert_eq!(Variant::from_name("oltp_read_write.lua"), Some(Variant::ReadWrite));
        assert_eq!(Variant::from_name("tpcc"), None);
    }
}
