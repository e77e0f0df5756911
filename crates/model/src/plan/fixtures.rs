//! Plans, hosts and findings of known shapes for tests (this crate's and, with the
//! `fixtures` feature, the others'): a CPU-bound, a lock-bound and a memory-bound
//! server's sweeps on 2 cores.

use super::{ClusterChoice, Findings, Found, Host, PlanSpec};
use crate::monitor::status::StatusSample;
use crate::study::figures::fixtures::fixture;
use crate::study::figures::SeriesResult;
use std::collections::BTreeMap;

pub fn plan() -> PlanSpec {
    PlanSpec {
        name: "p".into(),
        target_tps: 5000.0,
        latency: Some("p99<50ms".into()),
        workload: "oltp_read_write".into(),
        options: BTreeMap::new(),
        script_options: BTreeMap::new(),
        cost: None,
        power: Default::default(),
        cluster: ClusterChoice::None,
        efficiency: None,
        memory_price: None,
        budget_s: 600.0,
        growth: None,
    }
}

pub fn host() -> Host {
    Host { cpus: 2, managed: true, data_bytes: Some(50 << 20), pool_bytes: Some(1 << 30), ..Default::default() }
}

/// A sweep on 2 cores that peaks at 8 connections: busy % at each level as given.
pub fn sweep(busy: [f64; 5]) -> SeriesResult {
    fixture(
        &[
            (1, 400.0, 0.02, busy[0]),
            (2, 800.0, 0.02, busy[1]),
            (4, 1500.0, 0.02, busy[2]),
            (8, 1800.0, 0.02, busy[3]),
            (16, 1790.0, 0.02, busy[4]),
        ],
        "",
    )
}

/// A CPU-bound server: the host's CPU 97 % busy from 8 connections on.
pub fn cpu_bound() -> Findings {
    let s = sweep([30.0, 55.0, 85.0, 97.0, 98.0]);
    Findings { sweep: Some(found(1, s)), ..Default::default() }
}

/// A lock-bound server: throughput flat from 8 connections with the CPU 55 % busy
/// and half the running sessions waiting on row locks.
pub fn lock_bound() -> Findings {
    let mut s = sweep([20.0, 35.0, 50.0, 55.0, 55.0]);
    for l in &mut s.levels {
        l.observed.status = Some(StatusSample {
            row_lock_time_ms_per_s: Some(l.level as f64 * 400.0),
            row_lock_waits_per_s: Some(120.0),
            threads_running: Some(l.level as f64),
            ..Default::default()
        });
    }
    Findings { sweep: Some(found(1, s)), ..Default::default() }
}

/// A memory-bound server: CPU 60 % busy, the pool's hit ratio 93 % with 2,400
/// page reads a second from disk.
pub fn memory_bound() -> Findings {
    let mut s = sweep([20.0, 35.0, 50.0, 60.0, 60.0]);
    for l in &mut s.levels {
        l.observed.status = Some(StatusSample {
            buffer_pool_hit_ratio: Some(0.93),
            buffer_pool_reads_per_s: Some(2400.0),
            ..Default::default()
        });
    }
    Findings { sweep: Some(found(1, s)), ..Default::default() }
}

pub fn found(study: i64, s: SeriesResult) -> Found {
    Found { study, status: crate::status::Status::Completed, series: vec![s], ..Default::default() }
}
