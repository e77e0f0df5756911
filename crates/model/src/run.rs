//! How a run was asked to run: the worker loop's parameters as results record them,
//! which server errors are retried, and the warm-up that ends when the pool settles.

use crate::error::Invalid;
use crate::stats::Interval;
use std::time::Duration;

/// How to run: the parameters of the one worker loop, as results record them.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct RunSpec {
    pub threads: u32,
    /// An agent's share of a run: the whole run's connections (`threads` is its own).
    /// TPC-C deals warehouses to terminals over the whole run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_connections: Option<u32>,
    /// Stop starting transactions after this long (`--time`); `None` for no limit.
    #[serde(with = "seconds_opt")]
    pub time: Option<Duration>,
    /// Stop after this many transactions (`--events`).
    pub events: Option<u64>,
    #[serde(with = "seconds")]
    pub warmup: Duration,
    /// Open-loop arrivals per second (`--rate`).
    pub rate: Option<f64>,
    /// Sampling interval: one stored interval each.
    #[serde(with = "seconds")]
    pub interval: Duration,
    /// Fixed pause between a worker's transactions.
    #[serde(with = "seconds_opt")]
    pub delay: Option<Duration>,
    /// OS threads that drive the workers.
    pub client_threads: u32,
    pub seed: u64,
    /// The latency percentile shown in interval lines (sysbench's `--percentile`).
    pub percentile: f64,
    /// Server errors that are retried rather than fatal.
    pub retry_on: RetryOn,
    /// How long a lost server may stay away before the run ends as failed (stored
    /// when not the default, so results and exports read as before).
    #[serde(with = "seconds", skip_serializing_if = "is_default_lost_timeout")]
    pub server_lost_timeout: Duration,
    /// How long one transaction may wait for the server before the run ends as failed.
    #[serde(with = "seconds", skip_serializing_if = "is_default_statement_timeout")]
    pub statement_timeout: Duration,
    /// The server host's node_exporter, scraped every interval (`--server-metrics`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_metrics: Option<String>,
    /// Where watts come from (RAPL is used when the host has it and nothing was given).
    pub power: crate::monitor::os::Power,
    /// A target is a replica: replication lag is sampled on every target each interval
    /// (a primary or a Galera node has none), and the largest kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replica: bool,
    /// A warm-up run that ends as soon as the buffer pool's hit ratio settles (within
    /// `time`, its bound): the memory study's, before each measured run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<Settle>,
}

/// Default `--server-lost-timeout`: how long a run waits for a lost server to come back.
pub const DEFAULT_SERVER_LOST_TIMEOUT: f64 = 30.0;
/// Default `--statement-timeout`: the longest a transaction may wait for the server.
pub const DEFAULT_STATEMENT_TIMEOUT: f64 = 60.0;

impl Default for RunSpec {
    /// What a result stored without run parameters reads as.
    fn default() -> Self {
        RunSpec {
            threads: 1,
            run_connections: None,
            time: None,
            events: None,
            warmup: Duration::ZERO,
            rate: None,
            interval: Duration::from_secs(1),
            delay: None,
            client_threads: 1,
            seed: 0,
            percentile: 95.0,
            retry_on: RetryOn::default(),
            server_lost_timeout: Duration::from_secs_f64(DEFAULT_SERVER_LOST_TIMEOUT),
            statement_timeout: Duration::from_secs_f64(DEFAULT_STATEMENT_TIMEOUT),
            server_metrics: None,
            power: crate::monitor::os::Power::None,
            replica: false,
            settle: None,
        }
    }
}

fn is_default_lost_timeout(d: &Duration) -> bool {
    d.as_secs_f64() == DEFAULT_SERVER_LOST_TIMEOUT
}

fn is_default_statement_timeout(d: &Duration) -> bool {
    d.as_secs_f64() == DEFAULT_STATEMENT_TIMEOUT
}

/// Durations appear in results as seconds, the unit users give them in.
mod seconds {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
    }
}

mod seconds_opt {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<f64>::deserialize(d)?
            .map(|v| Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// Which server errors are retried (sysbench's `--mysql-ignore-errors`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetryOn {
    /// These codes; sysbench's default is 1213, 1020, 1205.
    Codes(Vec<u16>),
    /// Every server error (`all`): nothing but a protocol fault stops the run.
    All,
}

impl Default for RetryOn {
    fn default() -> Self {
        RetryOn::Codes(vec![1213, 1020, 1205])
    }
}

impl std::str::FromStr for RetryOn {
    type Err = Invalid;
    /// `all`, `none`, or a comma-separated list of error codes.
    fn from_str(s: &str) -> Result<Self, Invalid> {
        match s.trim() {
            "all" => Ok(RetryOn::All),
            "none" | "" => Ok(RetryOn::Codes(Vec::new())),
            list => list
                .split(',')
                .map(|c| c.trim().parse::<u16>().map_err(|_| Invalid::Value(format!("--mysql-ignore-errors: '{c}' is not an error code; give codes like 1213,1205, or all, or none"))))
                .collect::<Result<Vec<_>, _>>()
                .map(RetryOn::Codes),
        }
    }
}

/// A warm-up that lasts until the buffer pool's hit ratio settles, not a fixed time
/// (the memory study: a cold pool's misses are no steady state). Settled when the
/// miss ratio (1 - hit ratio) of the last `window` intervals differs from the window
/// before it by at most `relative` of itself or `absolute`; a server without the
/// counters is judged on throughput the same way. Never before two windows have run.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Settle {
    pub window: usize,
    pub relative: f64,
    pub absolute: f64,
}

impl Settle {
    /// `window_s` seconds a window, at `interval` seconds an interval.
    pub fn new(window_s: f64, interval: f64) -> Settle {
        Settle { window: (window_s / interval.max(1e-3)).ceil().max(2.0) as usize, relative: 0.10, absolute: 0.001 }
    }

    /// Whether `intervals` (all so far) show the hit ratio settled.
    pub fn settled(&self, intervals: &[Interval]) -> bool {
        let n = self.window;
        if intervals.len() < 2 * n {
            return false;
        }
        let (before, last) = intervals[intervals.len() - 2 * n..].split_at(n);
        let misses = |w: &[Interval]| -> Option<f64> {
            let ratios: Vec<f64> =
                w.iter().filter_map(|iv| iv.status.as_ref()?.buffer_pool_hit_ratio).map(|h| 1.0 - h).collect();
            (ratios.len() == w.len()).then(|| ratios.iter().sum::<f64>() / w.len() as f64)
        };
        let tps = |w: &[Interval]| w.iter().map(|iv| iv.tps).sum::<f64>() / w.len() as f64;
        match (misses(before), misses(last)) {
            (Some(a), Some(b)) => (a - b).abs() <= self.absolute.max(self.relative * a.max(b)),
            // No counters (or a gap): throughput must settle instead; an interval without
            // any transaction (an outage) settles nothing.
            _ => {
                let (a, b) = (tps(before), tps(last));
                all_answered(before) && all_answered(last) && (a - b).abs() <= self.relative * a.max(b)
            }
        }
    }
}

fn all_answered(w: &[Interval]) -> bool {
    w.iter().all(|iv| iv.transactions > 0)
}
