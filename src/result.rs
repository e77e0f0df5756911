//! The one result type: what `--json` writes, what the store keeps and reads back, and
//! what every report reads. Top-level keys are stable: `config`, `summary`,
//! `intervals`, `histograms`. Every field of the config has a default, so results
//! stored by earlier releases (which lacked some) still load.

use crate::exec::RunSpec;
pub use crate::monitor::HostFacts;
use crate::stats::{Interval, Summary};
use crate::workload::{self, Kind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunDocument {
    /// The run's id in the results store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    /// running, completed, interrupted or failed.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub config: RunConfig,
    pub summary: Option<Summary>,
    pub intervals: Vec<Interval>,
    /// Steady-state latency per transaction type: HdrHistogram V2 (deflate), base64,
    /// microsecond units.
    pub histograms: BTreeMap<String, String>,
}

impl RunDocument {
    /// The workload this run measured, known by its name.
    pub fn kind(&self) -> &'static dyn Kind {
        self.config.kind()
    }

    /// An interval's throughput in the workload's unit (tps, or NOPM).
    pub fn throughput(&self, iv: &Interval) -> f64 {
        self.kind().throughput(iv)
    }
}

/// How a run was made: workload, options, run parameters, target, server, host.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RunConfig {
    pub sizeup_version: String,
    pub workload: String,
    /// The workload's own options as it records them (sysbench's or TPC-C's).
    pub options: Value,
    /// The worker loop's parameters.
    pub run: RunSpec,
    /// Where the server was (never a password).
    pub target: TargetFacts,
    /// Server version and the variables that matter for an OLTP measurement
    /// (lowercase name to value, as the server reports it).
    pub server: BTreeMap<String, Value>,
    pub host: HostFacts,
}

impl RunConfig {
    pub fn kind(&self) -> &'static dyn Kind {
        workload::kind_of_result(&self.workload)
    }

    /// A server variable or fact as text.
    pub fn server_fact(&self, name: &str) -> Option<String> {
        self.server.get(name).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
    }
}

/// The target as results record it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TargetFacts {
    pub host: String,
    pub port: u16,
    pub socket: Option<String>,
    pub user: String,
    pub database: String,
    /// Anything else the target records (kept as it was written).
    #[serde(flatten)]
    pub more: BTreeMap<String, Value>,
}

impl TargetFacts {
    /// Where, as `describe` says it: the socket or host:port, and the user.
    pub fn place(&self) -> String {
        match &self.socket {
            Some(sock) => format!("socket {sock}"),
            None => format!("{}:{}", self.host, self.port),
        }
    }
}
