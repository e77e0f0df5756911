//! A study's kind and the sections a study file holds beside its options: the
//! managed instances' settings, configurations, scale and cluster, the rate search,
//! the memory levels, power. Pure data; reading a study file, and what its options
//! mean to the engine, are the report crate's (`study::spec`).

use super::memory::Vary;
use crate::error::Invalid;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// One server, load levels (threads or users) step by step.
    Sweep,
    /// 1..N instances at once, one client group each.
    Scale,
    /// 1..N nodes of one cluster (Galera, or a primary and replicas), the same load per
    /// node: the scale-out efficiency e(N) = X(N) / (N x X(1)).
    #[serde(rename = "scale-out")]
    ScaleOut,
    /// One server, open-loop arrival rates: the highest rate that meets a latency
    /// objective (`sizeup capacity`, `[rate]`). `kind = "replay"` is one of a captured
    /// traffic (`sizeup capacity --replay`): its rates are speeds of the capture.
    #[serde(alias = "replay")]
    Rate,
    /// One server, buffer-pool sizes with the data fixed (or data sizes with the pool
    /// fixed): throughput against the data-to-memory ratio (`sizeup memory`, `[memory]`).
    Memory,
}

impl Kind {
    /// The word stored with the study and shown in lists.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sweep => "sweep",
            Kind::Scale => "scale",
            Kind::ScaleOut => "scale-out",
            Kind::Rate => "rate",
            Kind::Memory => "memory",
        }
    }

    /// Several client groups, one per instance or node.
    pub fn grouped(self) -> bool {
        matches!(self, Kind::Scale | Kind::ScaleOut)
    }
}

/// Where a scale-out step's client groups send their transactions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Route {
    /// Every node reads and writes: one client group per node (Galera).
    #[default]
    EveryNode,
    /// Reads to the replicas, writes to the primary (node 0), as a proxy's read/write
    /// split does: the series' (read-only) workload runs on the replicas (on the
    /// primary while it is alone), `write_workload` on the primary throughout.
    Split,
    /// One client group whose connections are dealt over the nodes in turn (connection
    /// i to node i mod N), as a connection pool or a proxy in round-robin mode does.
    RoundRobin,
}

impl Route {
    /// The words a study file and the command line take, in order.
    pub const NAMES: [&'static str; 3] = ["every-node", "split", "round-robin"];
    const ALL: [Route; 3] = [Route::EveryNode, Route::Split, Route::RoundRobin];

    /// The route a word names (`--route round-robin`).
    pub fn named(word: &str) -> Option<Route> {
        Self::NAMES.iter().position(|n| *n == word).map(|i| Self::ALL[i])
    }
}

/// Settings of managed instances (as `sizeup server start`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    pub buffer_pool: Option<String>,
    pub log_file_size: Option<String>,
    pub flush_log_at_trx_commit: Option<u8>,
    pub max_connections: Option<u32>,
    #[serde(default)]
    pub set: Vec<String>,
}

/// The settings a study names for one configuration (its `[server]` with the
/// configuration's own laid over it), in words: "buffer_pool=1G, flush_log_at_trx_commit=0,
/// innodb_doublewrite=0". Everything not named is the managed instance's default.
pub fn config_settings_text(base: &ServerSpec, c: &Config) -> String {
    let s = base.with(&c.server);
    let mut parts = Vec::new();
    if let Some(v) = &s.buffer_pool {
        parts.push(format!("buffer_pool={v}"));
    }
    if let Some(v) = &s.log_file_size {
        parts.push(format!("log_file_size={v}"));
    }
    if let Some(v) = s.flush_log_at_trx_commit {
        parts.push(format!("flush_log_at_trx_commit={v}"));
    }
    if let Some(v) = s.max_connections {
        parts.push(format!("max_connections={v}"));
    }
    parts.extend(s.set.iter().cloned());
    if parts.is_empty() {
        "none (the managed defaults)".into()
    } else {
        parts.join(", ")
    }
}

impl ServerSpec {
    /// The settings it names, in words ("buffer pool 256M", "innodb_doublewrite=0").
    pub fn words(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(b) = &self.buffer_pool {
            v.push(format!("buffer pool {b}"));
        }
        if let Some(l) = &self.log_file_size {
            v.push(format!("redo log {l}"));
        }
        if let Some(f) = self.flush_log_at_trx_commit {
            v.push(format!("flush_log_at_trx_commit {f}"));
        }
        if let Some(m) = self.max_connections {
            v.push(format!("max_connections {m}"));
        }
        v.extend(self.set.iter().cloned());
        v
    }

    /// `over` laid on top of `self`.
    pub fn with(&self, over: &ServerSpec) -> ServerSpec {
        ServerSpec {
            buffer_pool: over.buffer_pool.clone().or(self.buffer_pool.clone()),
            log_file_size: over.log_file_size.clone().or(self.log_file_size.clone()),
            flush_log_at_trx_commit: over.flush_log_at_trx_commit.or(self.flush_log_at_trx_commit),
            max_connections: over.max_connections.or(self.max_connections),
            set: self.set.iter().chain(&over.set).cloned().collect(),
        }
    }
}

/// A named server configuration: the study runs its levels once per configuration
/// (SPEC study 4: storage set-ups, here stood in for by server settings).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub name: String,
    /// This configuration's own cost inputs (else the study's `[cost]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::cost::CostInputs>,
    #[serde(flatten)]
    pub server: ServerSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleSpec {
    /// Each instance's client group (SPEC study 2: 16).
    pub threads_per_instance: Option<u32>,
    /// Or a total divided evenly over the instances (SPEC study 3: 48 sessions).
    pub threads: Option<u32>,
    /// Buffer pool of each instance (study 2: 1G each).
    pub buffer_pool_per_instance: Option<String>,
    /// Split-data variant: the dataset in `options` (warehouses, or tables x rows) and
    /// this buffer pool are divided over the instances (study 3).
    #[serde(default)]
    pub split: bool,
    pub buffer_pool: Option<String>,
    /// Servers sizeup does not manage (`host:port` or a socket path), used instead of
    /// managed instances. For scale-out: the cluster's nodes, node 0 first (the
    /// primary, where the data is loaded).
    #[serde(default)]
    pub targets: Vec<String>,
    /// Scale-out: how transactions are routed to the nodes.
    #[serde(default, skip_serializing_if = "is_default")]
    pub route: Route,
    /// Scale-out with `route = "split"`: the primary's workload (default
    /// oltp_write_only) and its threads (default threads_per_instance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_workload: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_threads: Option<u32>,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

impl ScaleSpec {
    /// The split route's write workload.
    pub fn write_workload(&self) -> &str {
        self.write_workload.as_deref().unwrap_or("oltp_write_only")
    }
}

/// A scale-out study's own managed cluster (`sizeup cluster start` with these): started
/// before the first step unless one like it runs, its nodes the study's targets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSection {
    /// "galera" or "replicas".
    pub kind: String,
    /// Every node, the primary included.
    pub nodes: u32,
    /// The lab: each node's CPU quota in cores, and its link's delay and jitter
    /// ("0.2ms").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_cpus: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_delay: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_jitter: Option<String>,
}

/// A rate study's objective and search (`[rate]`, `sizeup capacity`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateSpec {
    /// The latency objective(s), all to be met: `p99<20ms`, `p99<20ms,p90[delivery]<5s`.
    pub latency: String,
    /// How close the search brackets the capacity, in percent of the rate (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<f64>,
    /// Connections each level opens (default: twice what the objective needs in flight
    /// at the level's rate, plus one per CPU, within the server's limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u32>,
    /// The closed-loop probe that gives the search its scale: its connections (default
    /// 4 per CPU of the client host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_threads: Option<u32>,
    /// The most rate levels the search runs (default 12).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_levels: Option<usize>,
}

/// The bracket a rate study aims for when none is given, in percent.
pub const DEFAULT_RESOLUTION_PCT: f64 = 5.0;
/// The most levels a rate search runs when not told.
pub const DEFAULT_MAX_RATE_LEVELS: usize = 12;

impl RateSpec {
    pub fn objectives(&self) -> Result<Vec<super::capacity::Objective>, Invalid> {
        super::capacity::parse_objectives(&self.latency)
    }
    pub fn resolution(&self) -> f64 {
        self.resolution.unwrap_or(DEFAULT_RESOLUTION_PCT) / 100.0
    }
}

/// A memory study's settings (`[memory]`, `sizeup memory`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySpec {
    #[serde(default, skip_serializing_if = "is_default")]
    pub vary: Vary,
    /// With `vary = "data"`: the buffer pool every level runs with (default: the
    /// study's `[server]` pool, else sizeup's default or the one the user started the
    /// instance with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_pool: Option<String>,
    /// Connections of every level (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// The longest a level's warm-up may wait for the hit ratio to settle, in seconds
    /// (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_warmup: Option<f64>,
}

/// A memory study's connections when not given.
pub const DEFAULT_MEMORY_THREADS: u32 = 8;
/// A memory level's warm-up bound when not given, in seconds.
pub const DEFAULT_MAX_WARMUP: f64 = 300.0;

impl MemorySpec {
    pub fn threads(&self) -> u32 {
        self.threads.unwrap_or(DEFAULT_MEMORY_THREADS)
    }
    pub fn max_warmup(&self) -> f64 {
        self.max_warmup.unwrap_or(DEFAULT_MAX_WARMUP)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerSpec {
    /// `idle=W,max=W`.
    pub model: Option<String>,
    pub watts: Option<f64>,
}

/// A study's kind with the section only that kind has: a rate study always has its
/// objective, a memory study its settings (their defaults when `[memory]` is left out),
/// a scale-out study its managed cluster when it names one.
#[derive(Clone, Debug, PartialEq)]
pub enum Section {
    Sweep,
    Scale,
    ScaleOut { cluster: Option<ClusterSection> },
    Rate(RateSpec),
    Memory(MemorySpec),
}

impl Section {
    pub fn kind(&self) -> Kind {
        match self {
            Section::Sweep => Kind::Sweep,
            Section::Scale => Kind::Scale,
            Section::ScaleOut { .. } => Kind::ScaleOut,
            Section::Rate(_) => Kind::Rate,
            Section::Memory(_) => Kind::Memory,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_names_are_the_study_files_words() {
        for (n, r) in Route::NAMES.iter().zip(Route::ALL) {
            assert_eq!(serde_json::to_value(r).unwrap(), *n);
            assert_eq!(Route::named(n), Some(r));
        }
        assert_eq!(Route::named("nope"), None);
    }
}
