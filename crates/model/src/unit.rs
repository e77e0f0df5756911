//! What a workload's throughput is counted in, known from its name alone: a stored
//! result names its workload, and TPC-C's is counted in New-Orders per minute.

use crate::stats::{per_second, Interval};

/// What a workload's throughput is counted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Transactions per second.
    Tps,
    /// TPC-C's New-Order transactions per minute.
    Nopm,
    /// A replayed capture's statements per second (its transactions are the
    /// application's, counted beside them).
    Statements,
}

impl Unit {
    pub fn label(self) -> &'static str {
        match self {
            Unit::Tps => "tps",
            Unit::Nopm => "NOPM",
            Unit::Statements => "statements/s",
        }
    }
}

/// TPC-C's workload name.
pub const TPCC: &str = "tpcc";
/// A capture file is named by its path, ending so.
pub const CAPTURE_SUFFIX: &str = ".capture";
/// TPC-C's New-Order: the first of its transaction types.
pub const NEW_ORDER: usize = 0;

impl Unit {
    /// The unit a workload of this name counts in: NOPM for TPC-C, statements a second
    /// for a capture, tps for the rest (a later release's workload too).
    pub fn of(workload: &str) -> Unit {
        if workload == TPCC {
            Unit::Nopm
        } else if workload.ends_with(CAPTURE_SUFFIX) {
            Unit::Statements
        } else {
            Unit::Tps
        }
    }

    /// An interval's throughput in this unit.
    pub fn throughput(self, iv: &Interval) -> f64 {
        match self {
            Unit::Tps | Unit::Statements => iv.tps,
            Unit::Nopm => interval_nopm(iv),
        }
    }
}

/// Committed New-Orders per minute in an interval.
pub fn interval_nopm(iv: &Interval) -> f64 {
    let no = iv.types.get(NEW_ORDER).map_or(0, |t| t.transactions - t.rollbacks);
    per_second(no, iv.duration) * 60.0
}

/// All committed transactions per minute in an interval.
pub fn interval_tpm(iv: &Interval) -> f64 {
    let committed: u64 = iv.types.iter().map(|t| t.transactions - t.rollbacks).sum();
    per_second(committed, iv.duration) * 60.0
}
