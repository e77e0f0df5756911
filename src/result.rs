//! The one result type: what `--json` writes, what the store keeps and reads back, and
//! what every report reads. Top-level keys are stable: `config`, `summary`,
//! `intervals`, `histograms`.

use crate::stats::{Interval, Summary};
use serde::{Deserialize, Serialize};
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
    /// Workload, options, run parameters, server version and variables, host facts.
    pub config: serde_json::Value,
    pub summary: Option<Summary>,
    pub intervals: Vec<Interval>,
    /// Steady-state latency per transaction type: HdrHistogram V2 (deflate), base64,
    /// microsecond units.
    pub histograms: BTreeMap<String, String>,
}
