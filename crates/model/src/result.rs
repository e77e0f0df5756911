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
    /// The server's variables that matter for an OLTP measurement, and what sizeup
    /// found beside them.
    pub server: ServerFacts,
    pub host: HostFacts,
}

impl RunConfig {
    /// What the run's throughput is counted in.
    pub fn unit(&self) -> Unit {
        Unit::of(&self.workload)
    }

    /// Why the server's InnoDB settings do not apply to this run (its storage is not
    /// InnoDB), when they do not.
    pub fn innodb_unused(&self) -> Option<String> {
        self.server.innodb_unused.clone()
    }

    /// The run's data on disk, in bytes, as the server estimated it before the run.
    pub fn data_bytes(&self) -> Option<u64> {
        self.server.data_bytes
    }

    /// The buffer pool the run's data had, in bytes: None when the server did not say,
    /// or when its storage is not InnoDB (go-mysql-server and Dolt report 128 MiB with
    /// no pool underneath).
    pub fn pool_bytes(&self) -> Option<u64> {
        if self.server.innodb_unused.is_some() {
            return None;
        }
        self.server.variable("innodb_buffer_pool_size")?.parse().ok().filter(|p| *p > 0)
    }
}

/// What a run recorded about its server: the variables that matter for an OLTP
/// measurement, as the server reports them, and what sizeup found beside them (the
/// data's size, TLS, replication, the lab, the process and metrics it watched). Stored
/// as one flat object, every fact beside the variables, as every release stored it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerFacts {
    /// "mariadb", "mysql", "percona", or what the version says otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_family: Option<String>,
    /// The version's number ("10.11.6").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// The run's data in words ("4 table(s) x 50000 rows"), its base tables and bytes
    /// on disk (information_schema's estimate), read before the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", with = "text_number")]
    pub data_tables: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", with = "text_number")]
    pub data_bytes: Option<u64>,
    /// Why InnoDB's settings (the buffer pool above all) do not apply: the server has
    /// no InnoDB, the run's tables are another engine's, or InnoDB's counters did not
    /// move while rows were read. None where InnoDB stores the data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub innodb_unused: Option<String>,
    /// The settings that shape the measurement which the server does not have, named
    /// ("innodb_buffer_pool_size, sync_binlog").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub absent: Option<String>,
    /// sizeup's own connection was encrypted (stored "on"/"off"), and how.
    #[serde(skip_serializing_if = "Option::is_none", with = "on_off")]
    pub tls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_cipher: Option<String>,
    /// The server replicates from a primary (stored "yes"), and its lag when the run
    /// began, seconds.
    #[serde(skip_serializing_if = "std::ops::Not::not", with = "yes")]
    pub replica: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replication_lag_s: Option<f64>,
    /// The lab the server ran in ("emulated (node CPU quota 0.4, link delay 0.2 ms)",
    /// "not emulated"), and a lab node's CPU quota in cores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lab: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lab_cpu_quota: Option<f64>,
    /// The server's process sizeup watched, in words, and the node_exporter it read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_process: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_metrics: Option<String>,
    /// The server's variables by lowercase name, as it reports them (text):
    /// version, version_comment, max_connections, innodb_buffer_pool_size, ...
    #[serde(flatten)]
    pub variables: BTreeMap<String, Value>,
}

impl ServerFacts {
    /// A server variable as text.
    pub fn variable(&self, name: &str) -> Option<String> {
        self.variables.get(name).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
    }

    /// A variable as a positive number (0 and text that is no number: None).
    pub fn number(&self, name: &str) -> Option<u64> {
        self.variable(name)?.trim().parse().ok().filter(|n| *n > 0)
    }

    /// The run was emulated in the lab.
    pub fn emulated(&self) -> Option<&str> {
        self.lab.as_deref().filter(|l| l.starts_with("emulated"))
    }
}

/// A count stored as text ("47841280"), as every release stored it; read from text or
/// a number, and text that is no number reads as absent.
mod text_number {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(n) => s.serialize_str(&n.to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        Ok(match Option::<serde_json::Value>::deserialize(d)? {
            Some(serde_json::Value::String(t)) => t.trim().parse().ok(),
            Some(v) => v.as_u64(),
            None => None,
        })
    }
}

/// A yes-or-no fact stored as "on" or "off".
mod on_off {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<bool>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(b) => s.serialize_str(if *b { "on" } else { "off" }),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
        Ok(Option::<String>::deserialize(d)?.and_then(|t| match t.to_ascii_lowercase().as_str() {
            "on" => Some(true),
            "off" => Some(false),
            _ => None,
        }))
    }
}

/// A fact that is there ("yes") or absent.
mod yes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(_: &bool, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("yes")
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
        Ok(Option::<serde_json::Value>::deserialize(d)?.is_some_and(|v| !v.is_null()))
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
        assert_eq!(doc.config.server.variable("max_connections").as_deref(), Some("2000"));
        assert_eq!(doc.config.host.cpus, 2);
        // An empty config (the oldest runs) reads as defaults.
        let bare: RunConfig = serde_json::from_str("{}").unwrap();
        assert_eq!((bare.run.threads, bare.unit()), (1, Unit::Tps));
    }

    /// data_bytes_read_in_one_place: the memory study and the answer each parsed the
    /// fact's text; one typed field reads it, from text or a number.
    #[test]
    fn data_bytes_read_in_one_place() {
        let read = |v: Value| serde_json::from_value::<ServerFacts>(serde_json::json!({ "data_bytes": v })).unwrap();
        assert_eq!(read(Value::Null).data_bytes, None);
        assert_eq!(read("47841280".into()).data_bytes, Some(47841280));
        assert_eq!(read(1024.into()).data_bytes, Some(1024));
        assert_eq!(read("unknown".into()).data_bytes, None);
    }

    /// server_facts_are_typed_and_stored_as_before: the facts sizeup found are fields,
    /// the variables a map, and the stored object is the flat one earlier releases wrote
    /// (counts as text, TLS "on", a replica "yes").
    #[test]
    fn server_facts_are_typed_and_stored_as_before() {
        let stored = serde_json::json!({
            "version": "10.11.6-MariaDB", "max_connections": "151", "innodb_buffer_pool_size": "134217728",
            "server_family": "mariadb", "server_version": "10.11.6",
            "data": "4 table(s) x 1000 rows", "data_tables": "4", "data_bytes": "2850816",
            "tls": "on", "tls_version": "TLSv1.3", "replica": "yes", "replication_lag_s": 0.5,
            "lab": "emulated (node CPU quota 0.4, link delay 0.2 ms)", "lab_cpu_quota": 0.4,
            "server_process": "mariadbd (pid 42)", "innodb_unused": "the run's tables are ENGINE=MEMORY"
        });
        let f: ServerFacts = serde_json::from_value(stored.clone()).unwrap();
        assert_eq!((f.data_tables, f.data_bytes, f.tls, f.replica), (Some(4), Some(2850816), Some(true), true));
        assert_eq!((f.lab_cpu_quota, f.replication_lag_s), (Some(0.4), Some(0.5)));
        assert_eq!(f.emulated(), f.lab.as_deref());
        assert_eq!(f.variables.len(), 3, "only the server's own variables: {:?}", f.variables);
        assert_eq!(f.number("max_connections"), Some(151));
        assert_eq!(serde_json::to_value(&f).unwrap(), stored, "stored as before");
        let c = RunConfig { server: f, ..Default::default() };
        assert_eq!(c.pool_bytes(), None, "no pool where InnoDB does not hold the data");
        let plain: ServerFacts = serde_json::from_value(serde_json::json!({"tls": "off"})).unwrap();
        assert_eq!((plain.tls, plain.replica), (Some(false), false));
        assert_eq!(serde_json::to_value(&plain).unwrap(), serde_json::json!({"tls": "off"}));
    }
}
