//! The one result type: what `--json` writes, what the store keeps and reads back, and
//! what every report reads. Top-level keys are stable: `config`, `summary`,
//! `intervals`, `histograms`. Every field of the config has a default, so results
//! stored by earlier releases (which lacked some) still load.

pub use crate::monitor::HostFacts;
use crate::run::RunSpec;
use crate::stats::{Interval, Summary};
use crate::unit::Unit;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The server fact that says why InnoDB's settings (the buffer pool above all) do not
/// apply: the server has no InnoDB, the run's tables are another engine's, or InnoDB's
/// counters did not move while rows were read. Absent where InnoDB stores the data.
pub const NO_INNODB: &str = "innodb_unused";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunDocument {
    /// The run's id in the results store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    pub status: crate::status::Status,
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
    /// An interval's throughput in the workload's unit (tps, or NOPM).
    pub fn throughput(&self, iv: &Interval) -> f64 {
        self.config.unit().throughput(iv)
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
    /// Round robin per connection: every server the connections were dealt over, in
    /// order (connection i went to the i-th mod N; the first is `target`, which the
    /// server facts are of). Empty for a run on one server.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub round_robin: Vec<TargetFacts>,
    /// Server version and the variables that matter for an OLTP measurement
    /// (lowercase name to value, as the server reports it).
    pub server: BTreeMap<String, Value>,
    pub host: HostFacts,
}

impl RunConfig {
    /// What the run's throughput is counted in.
    pub fn unit(&self) -> Unit {
        Unit::of(&self.workload)
    }

    /// A server variable or fact as text.
    pub fn server_fact(&self, name: &str) -> Option<String> {
        self.server.get(name).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
    }

    /// Why the server's InnoDB settings do not apply to this run (its storage is not
    /// InnoDB), when they do not: see [`NO_INNODB`].
    pub fn innodb_unused(&self) -> Option<String> {
        self.server_fact(NO_INNODB)
    }

    /// The run's data on disk, in bytes, as the server estimated it before the run
    /// (stored as text, as every release stored it, or as a number).
    pub fn data_bytes(&self) -> Option<u64> {
        self.server_fact("data_bytes")?.parse().ok()
    }

    /// The buffer pool the run's data had, in bytes: None when the server did not say,
    /// or when its storage is not InnoDB (go-mysql-server and Dolt report 128 MiB with
    /// no pool underneath).
    pub fn pool_bytes(&self) -> Option<u64> {
        if self.innodb_unused().is_some() {
            return None;
        }
        self.server_fact("innodb_buffer_pool_size")?.parse().ok().filter(|p| *p > 0)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_stored_by_earlier_releases_still_load() {
        // A config as 0.1 wrote it (a JSON object built by hand), with a key this
        // release does not know.
        let doc = serde_json::json!({
            "id": 3, "status": "completed",
            "config": {
                "sizeup_version": "0.1.0", "workload": "tpcc",
                "options": {"warehouses": 4, "users": 8},
                "run": {"threads": 8, "time": 60.0, "events": null, "warmup": 10.0, "rate": null,
                        "interval": 1.0, "delay": null, "client_threads": 1, "seed": 7,
                        "percentile": 95.0, "retry_on": {"codes": [1213, 1020, 1205]},
                        "power": {"source": "none"}},
                "target": {"host": "127.0.0.1", "port": 13306, "socket": "/s/mysqld.sock",
                           "user": "root", "database": "tpcc"},
                "server": {"version": "10.11.19-MariaDB", "max_connections": "2000"},
                "host": {"hostname": "h", "cpus": 2, "cpu_model": "x", "memory_bytes": 25769803776_u64,
                         "kernel": "6.1", "client_io": "io_uring"},
                "future_key": true
            },
            "summary": null, "intervals": [], "histograms": {}
        });
        let doc: RunDocument = serde_json::from_value(doc).unwrap();
        assert_eq!(doc.config.unit(), Unit::Nopm);
        assert_eq!(doc.config.run.threads, 8);
        assert_eq!(doc.config.run.warmup, std::time::Duration::from_secs(10));
        assert_eq!(doc.config.target.place(), "socket /s/mysqld.sock");
        assert_eq!(doc.config.server_fact("max_connections").as_deref(), Some("2000"));
        assert_eq!(doc.config.host.cpus, 2);
        // An empty config (the oldest runs) reads as defaults.
        let bare: RunConfig = serde_json::from_str("{}").unwrap();
        assert_eq!((bare.run.threads, bare.unit()), (1, Unit::Tps));
    }

    /// data_bytes_read_in_one_place: the memory study and the answer each parsed the
    /// fact's text; one accessor reads it, as text or as a number.
    #[test]
    fn data_bytes_read_in_one_place() {
        let mut c = RunConfig::default();
        assert_eq!(c.data_bytes(), None);
        c.server.insert("data_bytes".into(), "47841280".into());
        assert_eq!(c.data_bytes(), Some(47841280));
        c.server.insert("data_bytes".into(), 1024.into());
        assert_eq!(c.data_bytes(), Some(1024));
        c.server.insert("data_bytes".into(), "unknown".into());
        assert_eq!(c.data_bytes(), None);
    }
}
