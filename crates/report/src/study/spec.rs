//! A study as data: what `sizeup sweep`/`sizeup scale` build from their arguments and
//! what a study file (TOML) holds. Stored with the study, so `study resume` reruns
//! exactly what was asked. Run options are kept by their `sizeup run` names and read
//! into the same typed options the command line fills (`crate::options`), then
//! validated by the same plan (`crate::request`) into each step's run request.

use crate::error::Invalid;
use crate::options::{RunOptions, ServerArgs};
use crate::request::{self, RunRequest};
use crate::workload;
use serde::{Deserialize, Serialize};
use serde_json::Value;
pub use sizeup_model::study::levels::Levels;
pub use sizeup_model::study::memory::Vary;
pub use sizeup_model::study::parse_ms;
pub use sizeup_model::study::section::*;
use std::collections::BTreeMap;

/// A `[server]` section as the engine's settings of a managed instance (the section is
/// the model's data, the settings the engine's).
pub trait ManagedSettings {
    /// These settings over sizeup's defaults.
    fn settings(&self) -> Result<crate::server::ServerSettings, Invalid>;
    /// These settings over `base` (sizeup's defaults, or the settings the user started
    /// the instance with; never what an earlier study left): what the study leaves
    /// unsaid is the base's.
    fn settings_on(&self, base: crate::server::ServerSettings) -> Result<crate::server::ServerSettings, Invalid>;
}

impl ManagedSettings for ServerSpec {
    fn settings(&self) -> Result<crate::server::ServerSettings, Invalid> {
        self.settings_on(crate::server::ServerSettings::default())
    }

    fn settings_on(&self, base: crate::server::ServerSettings) -> Result<crate::server::ServerSettings, Invalid> {
        let d = base;
        let mut set: Vec<String> = d
            .extra
            .iter()
            .filter(|(k, _)| !self.set.iter().any(|s| s.split('=').next().map(str::trim) == Some(k.as_str())))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        set.extend(self.set.iter().cloned());
        let a = ServerArgs {
            buffer_pool: self.buffer_pool.clone().unwrap_or(d.buffer_pool),
            log_file_size: self.log_file_size.clone().unwrap_or(d.log_file_size),
            flush_log_at_trx_commit: self.flush_log_at_trx_commit.unwrap_or(d.flush_log_at_trx_commit),
            max_connections: self.max_connections.unwrap_or(d.max_connections),
            set,
            bind_address: None,
        };
        request::server_settings(&a)
    }
}

/// A study file (and a stored study) as written: `kind` beside the sections only
/// some kinds have. Read into [`StudySpec`], whose [`Section`] holds the kind with its
/// own section, so a rate study without its objective cannot be represented.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStudySpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub kind: Kind,
    /// One series per workload (and per configuration).
    pub workloads: Vec<String>,
    /// Threads (OLTP) or users (TPC-C) for a sweep; instance counts for a scale study.
    pub levels: Levels,
    /// Seconds measured per step, after the warm-up.
    pub step_time: f64,
    #[serde(default)]
    pub warmup: f64,
    #[serde(default = "one")]
    pub repeat: u32,
    /// Seconds per interval sample (the median is taken over these).
    #[serde(default = "one_f")]
    pub sample_interval: f64,
    /// Fraction of the post-warm-up samples, counted from the end, that the median uses.
    #[serde(default = "one_f")]
    pub steady_last: f64,
    #[serde(default)]
    pub stop_when: String,
    /// `sizeup run` options by long name: tables, table-size, warehouses, think-time,
    /// socket, ...
    #[serde(default)]
    pub options: BTreeMap<String, Value>,
    /// Managed instances' settings.
    #[serde(default)]
    pub server: ServerSpec,
    #[serde(default)]
    pub configs: Vec<Config>,
    #[serde(default)]
    pub scale: ScaleSpec,
    /// Scale-out: the managed cluster to run on (else `[scale] targets`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterSection>,
    #[serde(default)]
    pub power: PowerSpec,
    /// Cost inputs: capex, power price, cooling, years (TCO and cost per transaction).
    #[serde(default)]
    pub cost: Option<crate::cost::CostInputs>,
    /// A Lua script's own options (`[script_options]`), by its option names.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub script_options: BTreeMap<String, Value>,
    /// A rate study's objective and search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateSpec>,
    /// A memory study's levels and load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemorySpec>,
}

/// A study: what `sizeup sweep`/`scale`/`capacity`/`memory` build from their
/// arguments and what a study file holds. Its file format is [`RawStudySpec`]
/// (unchanged); here the kind is one [`Section`] with the section only it has.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawStudySpec", into = "RawStudySpec")]
pub struct StudySpec {
    pub name: String,
    pub description: String,
    /// The kind, with its own section.
    pub section: Section,
    /// One series per workload (and per configuration).
    pub workloads: Vec<String>,
    /// Threads (OLTP) or users (TPC-C) for a sweep; instance counts for a scale study.
    pub levels: Levels,
    /// Seconds measured per step, after the warm-up.
    pub step_time: f64,
    pub warmup: f64,
    pub repeat: u32,
    /// Seconds per interval sample (the median is taken over these).
    pub sample_interval: f64,
    /// Fraction of the post-warm-up samples, counted from the end, that the median uses.
    pub steady_last: f64,
    pub stop_when: String,
    /// `sizeup run` options by long name: tables, table-size, warehouses, think-time,
    /// socket, ...
    pub options: BTreeMap<String, Value>,
    /// Managed instances' settings.
    pub server: ServerSpec,
    pub configs: Vec<Config>,
    pub scale: ScaleSpec,
    pub power: PowerSpec,
    /// Cost inputs: capex, power price, cooling, years (TCO and cost per transaction).
    pub cost: Option<crate::cost::CostInputs>,
    /// A Lua script's own options (`[script_options]`), by its option names.
    pub script_options: BTreeMap<String, Value>,
}

impl TryFrom<RawStudySpec> for StudySpec {
    type Error = Invalid;

    fn try_from(r: RawStudySpec) -> Result<StudySpec, Invalid> {
        let section = match (r.kind, r.rate, r.memory, r.cluster) {
            (Kind::Rate, Some(rate), None, None) => Section::Rate(rate),
            (Kind::Rate, None, ..) => {
                return Err(Invalid::Value("a rate study needs its objective: [rate] latency = \"p99<20ms\"".into()))
            }
            (Kind::Memory, None, memory, None) => Section::Memory(memory.unwrap_or_default()),
            (Kind::ScaleOut, None, None, cluster) => Section::ScaleOut { cluster },
            (Kind::Sweep, None, None, None) => Section::Sweep,
            (Kind::Scale, None, None, None) => Section::Scale,
            (k, Some(_), ..) if k != Kind::Rate => {
                return Err(Invalid::Value(
                    "[rate] belongs to rate studies (kind = \"rate\", `sizeup capacity`)".into(),
                ))
            }
            (k, _, Some(_), _) if k != Kind::Memory => {
                return Err(Invalid::Value(
                    "[memory] belongs to memory studies (kind = \"memory\", `sizeup memory`)".into(),
                ))
            }
            _ => {
                return Err(Invalid::Value(
                    "[cluster], [scale] route and write_workload belong to scale-out studies".into(),
                ))
            }
        };
        Ok(StudySpec {
            name: r.name,
            description: r.description,
            section,
            workloads: r.workloads,
            levels: r.levels,
            step_time: r.step_time,
            warmup: r.warmup,
            repeat: r.repeat,
            sample_interval: r.sample_interval,
            steady_last: r.steady_last,
            stop_when: r.stop_when,
            options: r.options,
            server: r.server,
            configs: r.configs,
            scale: r.scale,
            power: r.power,
            cost: r.cost,
            script_options: r.script_options,
        })
    }
}

impl From<StudySpec> for RawStudySpec {
    fn from(s: StudySpec) -> RawStudySpec {
        let kind = s.kind();
        let (rate, memory, cluster) = match s.section {
            Section::Rate(r) => (Some(r), None, None),
            Section::Memory(m) => (None, Some(m), None),
            Section::ScaleOut { cluster } => (None, None, cluster),
            Section::Sweep | Section::Scale => (None, None, None),
        };
        RawStudySpec {
            name: s.name,
            description: s.description,
            kind,
            workloads: s.workloads,
            levels: s.levels,
            step_time: s.step_time,
            warmup: s.warmup,
            repeat: s.repeat,
            sample_interval: s.sample_interval,
            steady_last: s.steady_last,
            stop_when: s.stop_when,
            options: s.options,
            server: s.server,
            configs: s.configs,
            scale: s.scale,
            cluster,
            power: s.power,
            cost: s.cost,
            script_options: s.script_options,
            rate,
            memory,
        }
    }
}

/// A script option's value as its command line would give it.
fn option_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => if *b { "on" } else { "off" }.to_string(),
        Value::Array(items) => items.iter().map(option_text).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

fn one() -> u32 {
    1
}
fn one_f() -> f64 {
    1.0
}

impl StudySpec {
    pub fn from_toml(text: &str, origin: &str) -> Result<StudySpec, Invalid> {
        let spec: StudySpec = toml::from_str(text).map_err(|e| {
            // One line: where (line and column) and what, without toml's source excerpt.
            let at = e.span().map(|s| {
                let before = &text[..s.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                format!(" at line {line}, column {col}")
            });
            Invalid::File(format!("{origin}: not a valid study file{}: {}", at.unwrap_or_default(), e.message().trim()))
        })?;
        spec.validate().map_err(|e| e.found_in(origin))?;
        Ok(spec)
    }

    /// Everything checked before anything runs.
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.name.trim().is_empty() {
            return Err(Invalid::Value("the study needs a name".into()));
        }
        if self.workloads.is_empty() {
            return Err(Invalid::Value("name at least one workload".into()));
        }
        // A capture's sessions are its connections: only a speed can vary.
        if let Some(w) = self.workloads.iter().find(|w| w.ends_with(crate::workload::replay::SUFFIX)) {
            if self.kind() != Kind::Rate {
                return Err(Invalid::Value(format!(
                    "{w} is a capture: its sessions set the connections, so a {} study cannot vary them; replay it in \
                     a capacity study (kind = \"replay\", or `sizeup capacity --replay {w}`), or at given speeds \
                     with `sizeup replay {w} --speed 1,2,4`",
                    self.kind().name()
                )));
            }
        }
        // A section of another kind cannot be read into this one (`Section`).
        if let Section::Rate(r) = &self.section {
            self.validate_rate(r)?;
        }
        if let Section::Memory(m) = &self.section {
            self.validate_memory(m)?;
        }
        // A rate study's levels are rates, each run at its own pool of connections; a
        // memory study's are pools or data sizes, each run at its own connections.
        let levels = match self.kind() {
            Kind::Rate => vec![1],
            Kind::Memory => vec![self.memory_spec().threads()],
            _ => self.levels.resolve()?,
        };
        let max = crate::request::MAX_SECONDS;
        if !self.step_time.is_finite() || self.step_time <= 0.0 || self.step_time > max {
            return Err(Invalid::Value(format!(
                "step_time (--step-time) must be above 0 and at most {max} seconds (got {})",
                request::shown(self.step_time)
            )));
        }
        if !self.warmup.is_finite() || self.warmup > max {
            return Err(Invalid::Value(format!(
                "warmup (--warmup) must be between 0 and {max} seconds (got {})",
                request::shown(self.warmup)
            )));
        }
        if self.warmup < 0.0 {
            return Err(Invalid::Value(format!("warmup (--warmup) must be 0 or more (got {})", self.warmup)));
        }
        if self.repeat == 0 || self.repeat > 100 {
            return Err(Invalid::Value(format!("repeat (--repeat) must be between 1 and 100 (got {})", self.repeat)));
        }
        if self.warmup + self.step_time > max {
            return Err(Invalid::Value(format!("warmup plus step_time must be at most {max} seconds")));
        }
        if !(0.1..=self.step_time.min(crate::request::MAX_INTERVAL_SECONDS)).contains(&self.sample_interval) {
            return Err(Invalid::Value(
                "sample_interval (--sample-interval) must be at least 0.1 s and at most step_time (and 3600 s)".into(),
            ));
        }
        if !(self.steady_last > 0.0 && self.steady_last <= 1.0) {
            return Err(Invalid::Value(
                "steady_last (--steady-last) must be above 0 and at most 1 (the share of samples, from the end)".into(),
            ));
        }
        let types: Vec<String> = self
            .workloads
            .iter()
            .flat_map(|w| crate::workload::kind(w).map(|k| k.transaction_types(w)).unwrap_or_default())
            .collect();
        super::stop::check_types(&super::stop::parse(&self.stop_when)?, &types)?;
        // An open loop carries exactly its rate wherever the server can: every level
        // would read as the rate, and a plateau as saturation.
        let given = RunOptions::from_map(&self.options)?;
        if given.rate > 0.0 {
            return Err(Invalid::Value(
                "rate (--rate): a study measures what the server carries in closed loop, and an open-loop \
                        rate caps every level at itself; measure a rate with `sizeup run --rate`"
                    .into(),
            ));
        }
        request::power(self.power.model.as_deref(), self.power.watts)?;
        for c in self.cost.iter().chain(self.configs.iter().filter_map(|c| c.cost.as_ref())) {
            c.validate()?;
        }
        self.server.settings()?;
        // Named as the user gave them: a step's own check would say --threads, --buffer-pool.
        let per = if self.kind() == Kind::ScaleOut {
            "threads_per_node (--threads-per-node)"
        } else {
            "threads_per_instance (--threads-per-instance)"
        };
        for (name, v) in [
            (per, self.scale.threads_per_instance),
            ("threads (--threads)", self.scale.threads),
            ("write_threads (--write-threads)", self.scale.write_threads),
        ] {
            if v == Some(0) {
                return Err(Invalid::Value(format!("{name} must be at least 1")));
            }
        }
        for (name, v) in [
            ("buffer_pool_per_instance (--buffer-pool-per-instance)", &self.scale.buffer_pool_per_instance),
            ("buffer_pool (--buffer-pool)", &self.scale.buffer_pool),
        ] {
            if let Some(v) = v.as_deref().filter(|v| !request::is_size(v)) {
                return Err(Invalid::Value(format!("{name} '{v}' is not a size; write it like 512M or 2G")));
            }
        }
        for (i, c) in self.configs.iter().enumerate() {
            self.server.with(&c.server).settings().map_err(|e| Invalid::Value(format!("config '{}': {e}", c.name)))?;
            // A series is named by workload and config: two alike share one series, and one
            // step ran for both (steps_sharing_a_series_name_collide).
            if c.name.trim().is_empty() || self.configs[..i].iter().any(|o| o.name.trim() == c.name.trim()) {
                return Err(Invalid::Value(format!(
                    "[[configs]] name '{}': give each config a name of its own",
                    c.name
                )));
            }
        }
        if let Some(w) = self.workloads.iter().enumerate().find(|(i, w)| self.workloads[..*i].contains(w)) {
            return Err(Invalid::Twice(format!("workload {} is named twice: name each workload once", w.1)));
        }
        for w in &self.workloads {
            self.request(w, levels[0], None)?;
            // A sweep's levels are its connections: the most of them is checked against
            // the tool's limits now, not when reached (sweep_levels_beyond_limits).
            if self.kind() == Kind::Sweep {
                let most = *levels.iter().max().expect("not empty");
                self.request(w, most, None).map_err(|e| Invalid::Value(format!("level {most}: {e}")))?;
            }
        }
        match &self.section {
            Section::ScaleOut { cluster } => self.validate_scale_out(cluster.as_ref(), &levels, &given)?,
            _ if self.scale.route != Route::EveryNode || self.scale.write_workload.is_some() => {
                return Err(Invalid::Value(
                    "[cluster], [scale] route and write_workload belong to scale-out studies".into(),
                ));
            }
            _ => {}
        }
        match &self.section {
            Section::Scale => self.validate_scale(&levels)?,
            Section::Sweep if !self.scale.targets.is_empty() => {
                return Err(Invalid::Value("[scale] targets belong to scale studies".into()));
            }
            _ => {}
        }
        if !self.configs.is_empty() && self.names_a_server() {
            return Err(Invalid::Value("configs restart managed instances with other settings; they cannot apply to a server named by host, port or socket".into()));
        }
        Ok(())
    }

    /// A scale-out study's own checks: its nodes (a managed cluster or targets), the
    /// levels against them, and the route.
    fn validate_scale_out(
        &self,
        cluster: Option<&ClusterSection>,
        levels: &[u32],
        given: &RunOptions,
    ) -> Result<(), Invalid> {
        let most = *levels.iter().max().expect("not empty");
        let nodes = match cluster {
            Some(c) => {
                if !self.scale.targets.is_empty() {
                    return Err(Invalid::Value("give [cluster] or [scale] targets, not both".into()));
                }
                if !matches!(c.kind.as_str(), "galera" | "replicas") {
                    return Err(Invalid::Value(format!("[cluster] kind '{}': galera or replicas", c.kind)));
                }
                for d in [&c.link_delay, &c.link_jitter].into_iter().flatten() {
                    parse_ms(d)?;
                }
                if c.node_cpus.is_some_and(|n| !(n > 0.0 && n.is_finite())) {
                    return Err(Invalid::Value("[cluster] node_cpus must be above 0".into()));
                }
                c.nodes as usize
            }
            None => self.scale.targets.len(),
        };
        // No nodes named: the state directory's running cluster, checked when run.
        if nodes > 0 && most as usize > nodes {
            return Err(Invalid::Value(format!("levels go up to {most} nodes but the cluster has only {nodes}")));
        }
        if self.scale.split || self.scale.buffer_pool_per_instance.is_some() || !self.configs.is_empty() {
            return Err(Invalid::Value(
                "a scale-out study runs on the cluster as it is: no split, buffer pools or configs".into(),
            ));
        }
        // The nodes are the cluster's or the targets': a server named the way a run
        // names one would be left unused without a word.
        if given.target.names_a_server() {
            return Err(Invalid::Value(
                "--host/--port/--socket: a scale-out study runs on its nodes (the managed cluster, or --target \
                 HOST:PORT once per node), not on one server"
                    .into(),
            ));
        }
        if self.scale.route == Route::Split {
            let writes = self.request(self.scale.write_workload(), 1, None)?.workload;
            for w in &self.workloads {
                let reads = self.request(w, 1, None)?.workload;
                // Two units added into one column would be neither.
                if reads.kind().unit().label() != writes.kind().unit().label() {
                    return Err(Invalid::Value(format!(
                        "the split route adds the primary's and the replicas' throughput: {} counts {} and \
                         write_workload {} counts {}; give workloads of one kind",
                        w,
                        reads.kind().unit().label(),
                        self.scale.write_workload(),
                        writes.kind().unit().label()
                    )));
                }
            }
        } else if self.scale.write_workload.is_some() || self.scale.write_threads.is_some() {
            return Err(Invalid::Value(
                "write_workload and write_threads (--write-workload, --write-threads) go with route split \
                        (--route split)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// A scale study's own checks: its instances (managed, or targets) against the
    /// levels, and a split dataset's shares.
    fn validate_scale(&self, levels: &[u32]) -> Result<(), Invalid> {
        let most = *levels.iter().max().expect("not empty");
        // N client groups on one named server would be read as N instances
        // (an_environment_named_server_is_not_multiplied).
        if self.scale.targets.is_empty() && self.names_a_server() {
            return Err(Invalid::Value(
                "a scale study starts 1 to N managed instances on this host; a server named by host, port \
                        or socket is one server: name each instance with --target HOST:PORT (`[scale] targets`)"
                    .into(),
            ));
        }
        if self.scale.targets.is_empty() && most > crate::server::MAX_INSTANCES {
            return Err(Invalid::Value(format!(
                "levels go up to {most} instances; sizeup manages at most {} on one host",
                crate::server::MAX_INSTANCES
            )));
        }
        if !self.scale.targets.is_empty() && most as usize > self.scale.targets.len() {
            return Err(Invalid::Value(format!(
                "levels go up to {most} instances but only {} target(s) are given",
                self.scale.targets.len()
            )));
        }
        if self.scale.split {
            for w in &self.workloads {
                for &n in levels {
                    self.split_share(w, n)?;
                }
            }
        }
        if !self.configs.is_empty() && !self.scale.targets.is_empty() {
            return Err(Invalid::Value(
                "configs restart managed instances with other settings; a scale study on [scale] \
                        targets runs on the servers as they are"
                    .into(),
            ));
        }
        // A split study divides each configuration's pool over the instances.
        let most = *levels.iter().max().expect("not empty") as u64;
        for c in self.configs.iter().filter(|_| self.scale.split) {
            let pool = c.server.buffer_pool.as_deref().and_then(crate::server::size_bytes);
            if pool.is_some_and(|b| b / most < 8 << 20) {
                return Err(Invalid::Value(format!(
                    "config '{}': a buffer_pool of {} over {most} instances leaves under 8M each",
                    c.name,
                    c.server.buffer_pool.as_deref().unwrap_or("")
                )));
            }
        }
        Ok(())
    }

    /// A rate study's own checks: its objective, its levels (rates, or found), and
    /// what it does not take.
    fn validate_rate(&self, r: &RateSpec) -> Result<(), Invalid> {
        let objectives = r.objectives()?;
        let types: Vec<String> = self
            .workloads
            .iter()
            .flat_map(|w| crate::workload::kind(w).map(|k| k.transaction_types(w)).unwrap_or_default())
            .collect();
        super::capacity::check_types(&objectives, &types)?;
        // Every rate given within the tool's limit before the first runs.
        if let (Some(most), Some(w)) = (self.rates()?.into_iter().max(), self.workloads.first()) {
            self.rate_request(w, most, 1, None).map_err(|e| Invalid::Value(format!("rate {most}: {e}")))?;
        }
        if r.resolution.is_some_and(|p| !(0.5..=50.0).contains(&p)) {
            return Err(Invalid::Value("resolution (--resolution) is a percentage between 0.5 and 50".into()));
        }
        for (name, v) in [("connections (--connections)", r.connections), ("probe_threads", r.probe_threads)] {
            if let Some(n) = v.filter(|n| *n == 0 || *n > request::MAX_THREADS) {
                return Err(Invalid::Value(format!("{name} {n}: give 1 to {} connections", request::MAX_THREADS)));
            }
        }
        if r.max_levels.is_some_and(|n| !(2..=100).contains(&n)) {
            return Err(Invalid::Value("max_levels (--max-levels) must be between 2 and 100".into()));
        }
        if !self.stop_when.trim().is_empty() {
            return Err(Invalid::Value(
                "a rate study ends at its latency objective: leave stop_when (--stop-when) out".into(),
            ));
        }
        if self.repeat != 1 {
            return Err(Invalid::Value(
                "a rate study runs each rate once (the search brackets the capacity): leave repeat out".into(),
            ));
        }
        if !self.configs.is_empty() || self.scale != ScaleSpec::default() {
            return Err(Invalid::Value("a rate study runs on one server: no [[configs]], [scale] or [cluster]".into()));
        }
        Ok(())
    }

    /// A rate study's rates as given (tps), or none when the search finds them
    /// (`levels = "auto"`).
    pub fn rates(&self) -> Result<Vec<u32>, Invalid> {
        match &self.levels {
            Levels::Text(t) if t.trim() == "auto" || t.trim().is_empty() => Ok(Vec::new()),
            other => other.resolve().map_err(|e| Invalid::Value(format!("rates: {e}; or \"auto\" to find them"))),
        }
    }

    /// One rate level's run request: `connections` at `rate` arrivals per second.
    pub fn rate_request(
        &self,
        workload: &str,
        rate: u32,
        connections: u32,
        password: Option<&str>,
    ) -> Result<RunRequest, Invalid> {
        // A capture's rate is a speed of its own schedule, in statements a second.
        if workload.ends_with(crate::workload::replay::SUFFIX) {
            let read_only = self.run_options(1)?.workload.oltp.read_only;
            let schedule = crate::workload::replay::load(workload, read_only)?;
            let speed = rate as f64 / schedule.rate();
            return self.replay_request(workload, schedule, speed, password);
        }
        let mut o = self.run_options(connections)?;
        o.rate = rate as f64;
        o.target.password = password.map(str::to_string);
        request::run_request(workload, &o)
    }

    /// A rate level of a replayed capture: the capture at `speed`, one connection per
    /// captured session.
    pub fn replay_request(
        &self,
        workload: &str,
        schedule: std::sync::Arc<sizeup_model::capture::schedule::Schedule>,
        speed: f64,
        password: Option<&str>,
    ) -> Result<RunRequest, Invalid> {
        let mut o = self.run_options(schedule.sessions.len().max(1) as u32)?;
        o.target.password = password.map(str::to_string);
        // A fast replay of a short capture still has intervals to measure after its
        // warm-up: a tenth of its span each at most (a tenth of a second at least).
        let span_s = schedule.span_us as f64 / 1e6 / speed;
        o.report_interval = o.report_interval.min(span_s / 10.0).max(crate::workload::replay::MIN_INTERVAL_S);
        crate::workload::replay::run_options(&mut o, workload, schedule, speed)?;
        request::run_request(workload, &o)
    }

    /// A memory study's `[memory]` (its defaults when the section is left out; and
    /// for another kind, which has none).
    pub fn memory_spec(&self) -> MemorySpec {
        match &self.section {
            Section::Memory(m) => m.clone(),
            _ => MemorySpec::default(),
        }
    }

    pub fn kind(&self) -> Kind {
        self.section.kind()
    }

    /// A rate study's objective and search.
    pub fn rate(&self) -> Option<&RateSpec> {
        match &self.section {
            Section::Rate(r) => Some(r),
            _ => None,
        }
    }

    /// A scale-out study's own managed cluster, when it names one.
    pub fn cluster(&self) -> Option<&ClusterSection> {
        match &self.section {
            Section::ScaleOut { cluster } => cluster.as_ref(),
            _ => None,
        }
    }

    /// A memory study of `auto` pools: the pools are found from the data's size before
    /// it is stored. Only a memory study: a rate study's `auto` is its rate search.
    pub fn finds_pools(&self) -> bool {
        self.kind() == Kind::Memory
            && self.memory_spec().vary == Vary::Pool
            && matches!(&self.levels, Levels::Text(t) if t.trim() == "auto")
    }

    /// The levels as numbers: pool sizes in MiB for a memory study that varies the pool
    /// (none yet for `auto`: the study finds them from the data's size), else as given.
    pub fn level_values(&self) -> Result<Vec<u32>, Invalid> {
        match (self.kind(), self.memory_spec().vary) {
            (Kind::Memory, Vary::Pool) => super::memory::parse_pools(&self.levels),
            (Kind::Rate, _) => self.rates(),
            _ => self.levels.resolve(),
        }
    }

    /// What a memory study's levels count, in the user's words.
    fn memory_level_name(&self) -> &'static str {
        match self.memory_spec().vary {
            Vary::Pool => "MiB pool",
            Vary::Data => match self.workloads.first().and_then(|w| workload::kind(w).ok()?.data_size()) {
                Some(d) if d.option == "warehouses" => "warehouses",
                _ => "rows per table",
            },
        }
    }

    /// A memory study's own checks.
    fn validate_memory(&self, m: &MemorySpec) -> Result<(), Invalid> {
        if let Some(n) = m.threads.filter(|n| *n == 0 || *n > request::MAX_THREADS) {
            return Err(Invalid::Value(format!(
                "threads (--threads) {n}: give 1 to {} connections",
                request::MAX_THREADS
            )));
        }
        if !(m.max_warmup() > 0.0 && m.max_warmup() <= crate::request::MAX_SECONDS) {
            return Err(Invalid::Value(format!(
                "max_warmup (--max-warmup) must be above 0 and at most {} seconds",
                crate::request::MAX_SECONDS
            )));
        }
        if !self.configs.is_empty() || self.scale != ScaleSpec::default() {
            return Err(Invalid::Value(
                "a memory study runs on one server: no [[configs]], [scale] or [cluster]".into(),
            ));
        }
        if m.vary == Vary::Data && matches!(self.levels, Levels::Text(ref t) if t.trim() == "auto") {
            return Err(Invalid::Value(
                "data levels are data sizes (rows per table or warehouses): give them, e.g. \
                        --levels 10000,40000,160000"
                    .into(),
            ));
        }
        let levels = self.level_values()?;
        match m.vary {
            Vary::Pool => {
                if self.names_a_server() {
                    return Err(Invalid::Value(
                        "pool levels restart a managed instance with each buffer pool; a server named by \
                                host, port or socket keeps its own: vary the data on it instead (--vary data)"
                            .into(),
                    ));
                }
                if self.server.buffer_pool.is_some() || m.buffer_pool.is_some() {
                    return Err(Invalid::Value(
                        "the levels are the buffer pool: leave buffer_pool (--buffer-pool) out".into(),
                    ));
                }
                if let Some(small) = levels.iter().find(|l| **l < super::memory::MIN_POOL_MIB) {
                    return Err(Invalid::Value(format!(
                        "a {small} MiB buffer pool is below the {} MiB the server starts with: give larger pools",
                        super::memory::MIN_POOL_MIB
                    )));
                }
            }
            Vary::Data => {
                for w in &self.workloads {
                    if workload::kind(w)?.data_size().is_none() {
                        return Err(Invalid::Value(format!(
                            "{w} sizes its own data, so sizeup cannot vary it: vary the pool"
                        )));
                    }
                }
                if let Some(p) = &m.buffer_pool {
                    if !request::is_size(p) {
                        return Err(Invalid::Value(format!(
                            "buffer_pool (--buffer-pool) '{p}' is not a size; write it like 64M"
                        )));
                    }
                    // Refused here, not by a server that fails to start after the study
                    // was stored (memory_checks_come_before_anything_runs).
                    let min = u64::from(super::memory::MIN_POOL_MIB) << 20;
                    if crate::server::size_bytes(p).is_some_and(|b| b < min) {
                        return Err(Invalid::Value(format!(
                            "buffer_pool (--buffer-pool) {p} is below the {} MiB the server starts with: give a \
                             larger pool",
                            super::memory::MIN_POOL_MIB
                        )));
                    }
                    if self.names_a_server() {
                        return Err(Invalid::Value(
                            "buffer_pool (--buffer-pool) restarts a managed instance; a server named by \
                                    host, port or socket keeps its own pool: leave it out"
                                .into(),
                        ));
                    }
                }
            }
        }
        for w in &self.workloads {
            for &l in &levels {
                self.memory_request(w, l, None).map_err(|e| Invalid::Value(format!("level {l}: {e}")))?;
            }
        }
        Ok(())
    }

    /// One memory level's run request: the study's options at `[memory]` threads; a
    /// data level sizes the data and loads it into a database of its own
    /// (`sbtest_r40000`, `tpcc_w4`).
    pub fn memory_request(&self, workload: &str, level: u32, password: Option<&str>) -> Result<RunRequest, Invalid> {
        let s = match self.memory_spec().vary {
            Vary::Data => self.with_data_size(workload, level)?,
            Vary::Pool => self.clone(),
        };
        let mut o = s.run_options(self.memory_spec().threads())?;
        o.target.password = password.map(str::to_string);
        request::run_request(workload, &o)
    }

    /// This study with `workload`'s data sized `size` (its data-size option: rows per
    /// table, warehouses) in a database of its own named after it (`sbtest_r40000`,
    /// `tpcc_w4`): a split study's share, a memory study's data level.
    pub fn with_data_size(&self, workload: &str, size: u32) -> Result<StudySpec, Invalid> {
        let kind = workload::kind(workload)?;
        let d = kind.data_size().ok_or_else(|| Invalid::Value(format!("{workload} sizes its own data")))?;
        let mut s = self.clone();
        s.options.remove(&d.option.replace('-', "_"));
        s.options.insert(d.option.into(), size.into());
        let base = self.options.get("database").and_then(|v| v.as_str()).unwrap_or(kind.default_database());
        s.options.insert("database".into(), format!("{base}_{}{size}", d.tag).into());
        Ok(s)
    }

    /// The spec a study was stored with.
    pub fn stored(row: &crate::store::StudyRow) -> Result<StudySpec, Invalid> {
        serde_json::from_value(row.spec.clone())
            .map_err(|e| Invalid::File(format!("study {} was stored by another sizeup version: {e}", row.id)))
    }

    /// True when the options name a server (host, port or socket) instead of a managed instance.
    pub fn names_a_server(&self) -> bool {
        RunOptions::from_map(&self.options).is_ok_and(|o| o.target.names_a_server())
    }

    /// What a series' figures are of: its workload, or with the split route both the
    /// replicas' workload and the primary's writes, whose transactions the step adds.
    pub fn series_label(&self, workload: &str) -> String {
        match (self.kind(), self.scale.route) {
            (Kind::ScaleOut, Route::Split) => {
                // At 1 node both groups run on the primary.
                format!(
                    "{workload} on the replicas (the primary at 1 node) + {} on the primary (together)",
                    self.scale.write_workload()
                )
            }
            _ => workload.to_string(),
        }
    }

    /// What the levels count: instances, or the workloads' own level (threads, users).
    pub fn level_name(&self) -> &'static str {
        match self.kind() {
            Kind::Scale => return "instances",
            Kind::ScaleOut => return "nodes",
            Kind::Rate => return "tps",
            Kind::Memory => return self.memory_level_name(),
            Kind::Sweep => {}
        }
        let names: Vec<&str> = self.workloads.iter().map(|w| workload::kind_of_result(w).level_name()).collect();
        if names.iter().all(|n| *n == names[0]) {
            names[0]
        } else {
            "threads"
        }
    }

    /// Split-data share of one of `n` instances: the workload's data-size option
    /// (warehouses, or rows per table) divided by `n`.
    pub fn split_share(&self, workload: &str, n: u32) -> Result<u32, Invalid> {
        let size = workload::kind(workload)?.data_size().ok_or_else(|| {
            Invalid::Value(format!("split: {workload} sizes its own data, which sizeup cannot divide over instances"))
        })?;
        let key = size.option;
        let options = serde_json::to_value(RunOptions::from_map(&self.options)?).expect("serialisable");
        let total = options.get(key).and_then(|v| v.as_u64()).map_or(size.default, |v| v as u32);
        if total % n != 0 {
            return Err(Invalid::Value(format!("split: {key} {total} does not divide evenly over {n} instances")));
        }
        Ok(total / n)
    }

    /// The cost inputs of a series: its configuration's, else the study's.
    pub fn cost_of(&self, series: &str) -> Option<&crate::cost::CostInputs> {
        let config = self.configs.iter().find(|c| series.ends_with(&format!(" @ {}", c.name)));
        config.and_then(|c| c.cost.as_ref()).or(self.cost.as_ref())
    }

    /// The run options of one step at `threads`: the study's options, its step
    /// length, warm-up, sampling interval and power inputs.
    pub fn run_options(&self, threads: u32) -> Result<RunOptions, Invalid> {
        let mut o = RunOptions::from_map(&self.options)?;
        o.workload.script_options = self.script_options.iter().map(|(k, v)| (k.clone(), option_text(v))).collect();
        o.threads = threads;
        o.users = None;
        o.time = self.warmup + self.step_time;
        o.warmup = self.warmup;
        o.report_interval = self.sample_interval;
        if self.power.model.is_some() || self.power.watts.is_some() {
            o.power.power_model = self.power.model.clone();
            o.power.watts = self.power.watts;
        }
        Ok(o)
    }

    /// One step's run request, validated by the plan `sizeup run` uses; the password
    /// (never stored with the study) is handed in.
    pub fn request(&self, workload: &str, threads: u32, password: Option<&str>) -> Result<RunRequest, Invalid> {
        // A capture sets its own connections and database: at its captured speed.
        if workload.ends_with(crate::workload::replay::SUFFIX) {
            let read_only = self.run_options(1)?.workload.oltp.read_only;
            return self.replay_request(workload, crate::workload::replay::load(workload, read_only)?, 1.0, password);
        }
        let mut o = self.run_options(threads)?;
        o.target.password = password.map(str::to_string);
        request::run_request(workload, &o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
name = "connection sweep"
kind = "sweep"
workloads = ["oltp_read_only", "oltp_read_write"]
levels = [1, 2, 4]
step_time = 10
warmup = 2
stop_when = "plateau<3%"

[options]
tables = 1
table-size = 20000
skip_trx = false
rand-type = "uniform"

[server]
buffer_pool = "256M"
set = ["innodb_io_capacity=1000"]

[[configs]]
name = "durable"
flush_log_at_trx_commit = 1

[power]
model = "idle=40,max=120"
"#;

    #[test]
    fn a_study_file_becomes_run_arguments() {
        let s = StudySpec::from_toml(FILE, "f.toml").unwrap();
        assert_eq!(s.levels.resolve().unwrap(), [1, 2, 4]);
        let a = s.run_options(4).unwrap();
        assert_eq!((a.threads, a.time, a.warmup, a.report_interval), (4, 12.0, 2.0, 1.0));
        let oltp = &a.workload.oltp;
        assert_eq!((oltp.tables, oltp.table_size, oltp.skip_trx), (1, 20000, false));
        assert_eq!(oltp.rand_type, "uniform");
        let r = s.request("oltp_read_write", 4, Some("secret")).unwrap();
        assert_eq!((r.spec.threads, r.spec.warmup.as_secs(), r.workload.name()), (4, 2, "oltp_read_write"));
        assert_eq!(r.target().password.as_deref(), Some("secret"));
        assert_eq!(a.power.power_model.as_deref(), Some("idle=40,max=120"));
        let durable = s.server.with(&s.configs[0].server).settings().unwrap();
        assert_eq!((durable.buffer_pool.as_str(), durable.flush_log_at_trx_commit), ("256M", 1));
        assert_eq!(durable.extra, vec![("innodb_io_capacity".to_string(), "1000".to_string())]);
    }

    /// steps_sharing_a_series_name_collide: two `[[configs]]` named alike ran one step and
    /// printed the first's figure for both; a workload named twice did the same.
    #[test]
    fn steps_sharing_a_series_name_collide() {
        let e = |text: &str| StudySpec::from_toml(text, "s.toml").unwrap_err().what().clone();
        let twice = FILE.replace("[power]", "[[configs]]\nname = \"durable\"\nflush_log_at_trx_commit = 2\n\n[power]");
        assert!(
            matches!(&e(&twice), Invalid::Value(m) if m.contains("name 'durable': give each config a name of its own")),
            "{}",
            e(&twice)
        );
        let again = FILE.replace(
            "workloads = [\"oltp_read_only\", \"oltp_read_write\"]",
            "workloads = [\"oltp_read_only\", \"oltp_read_only\"]",
        );
        assert!(
            matches!(&e(&again), Invalid::Twice(m) if m.contains("workload oltp_read_only is named twice")),
            "{}",
            e(&again)
        );
        let levels = FILE.replace("levels = [1, 2, 4]", "levels = [2, 1, 2]");
        assert!(matches!(&e(&levels), Invalid::Twice(m) if m.contains("names level 2 twice")), "{}", e(&levels));
        let stop = FILE.replace("plateau<3%", "p90[nosuchtype]>1ms");
        assert!(matches!(&e(&stop), Invalid::UnknownType { ty, .. } if ty == "nosuchtype"), "{}", e(&stop));
    }

    #[test]
    fn bad_study_files_say_what_is_wrong() {
        let e = |text: &str| StudySpec::from_toml(text, "s.toml").unwrap_err().what().clone();
        let with = |from: &str, to: &str| FILE.replace(from, to);
        assert!(
            matches!(&e(&with("tables = 1", "tabels = 1")), Invalid::Value(m) if m.contains("unknown option 'tabels'"))
        );
        assert!(matches!(&e(&with("tables = 1", "threads = 4")), Invalid::Value(m) if m.contains("set by the study")));
        assert!(
            matches!(&e(&with("levels = [1, 2, 4]", "levels = \"1..x\"")), Invalid::Value(m) if m.contains("32..256+32"))
        );
        assert!(
            matches!(&e(&with("plateau<3%", "plateau>3%")), Invalid::Entry { why, .. } if why == "unknown condition")
        );
        assert!(matches!(&e(&with("step_time = 10", "step_time = 0")), Invalid::Value(m) if m.contains("step_time")));
        assert!(
            matches!(&e(&with("\"oltp_read_only\",", "\"oltp_read_onyl\",")), Invalid::Value(m) if m.contains("unknown workload"))
        );
        assert!(matches!(&e(&with("kind = \"sweep\"", "kind = \"sweeep\"")), Invalid::File(m) if m.contains("s.toml")));
        assert!(
            matches!(&e(&with("table-size = 20000", "table-size = 20000\nhost = \"db1\"")), Invalid::Value(m) if m.contains("configs"))
        );
        assert!(matches!(&e(&with("tables = 1", "password = \"x\"")), Invalid::Value(m) if m.contains("MYSQL_PWD")));
    }

    /// A replay study is a rate study of a capture (`kind = "replay"`); a capture's
    /// sessions are its connections, so no other kind takes one.
    #[test]
    fn a_replay_study_is_a_rate_study_of_a_capture() {
        use sizeup_model::capture::file::{Header, Statement, Writer};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shop.capture");
        let mut w = Writer::new(std::fs::File::create(&path).unwrap(), &Header::default()).unwrap();
        let text = "SELECT 1".to_string();
        w.statement(Statement { session: 1, schema: Some("shop".into()), text, ..Statement::default() }).unwrap();
        w.finish().unwrap();
        let file = format!(
            r#"
name = "our traffic"
kind = "replay"
workloads = ["{}"]
levels = "auto"
step_time = 30

[rate]
latency = "p99<20ms"
"#,
            path.display()
        );
        let s = StudySpec::from_toml(&file, "r.toml").unwrap();
        assert_eq!(s.kind(), Kind::Rate);
        assert_eq!(s.rate().map(|r| r.latency.as_str()), Some("p99<20ms"));
        let sweep = FILE.replace("\"oltp_read_only\", \"oltp_read_write\"", "\"/captures/shop.capture\"");
        let e = StudySpec::from_toml(&sweep, "s.toml").unwrap_err().what().clone();
        assert!(
            matches!(&e, Invalid::Value(m) if m.contains("is a capture") && m.contains("sizeup capacity --replay")),
            "{e}"
        );
    }

    /// Study 3's two forms from one file: a split scale study with a big and a small
    /// pool configuration, each its own series; a pool too small to split is refused.
    #[test]
    fn a_scale_study_splits_each_configurations_pool() {
        let file = r#"
name = "split"
kind = "scale"
workloads = ["oltp_read_write"]
levels = [1, 2, 4]
step_time = 10
[options]
table-size = 40000
[scale]
split = true
threads = 48
[[configs]]
name = "big pool"
buffer_pool = "1G"
[[configs]]
name = "small pool"
buffer_pool = "128M"
"#;
        let s = StudySpec::from_toml(file, "t").unwrap();
        let names: Vec<String> = crate::study::series_of(&s).into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["oltp_read_write @ big pool", "oltp_read_write @ small pool"]);
        let e = StudySpec::from_toml(&file.replace("128M", "16M"), "t").unwrap_err().what().clone();
        assert!(
            matches!(&e, Invalid::Value(m) if m.contains("config 'small pool': a buffer_pool of 16M over 4 instances leaves under 8M each")),
            "{e}"
        );
        let e = StudySpec::from_toml(&format!("{file}\n[scale]\n"), "t").unwrap_err().what().clone();
        assert!(matches!(&e, Invalid::File(m) if m.contains("t:")), "{e}");
        let targets = file.replace("threads = 48", "threads = 48\ntargets = [\"a:1\", \"b:1\", \"c:1\", \"d:1\"]");
        let e = StudySpec::from_toml(&targets, "t").unwrap_err().what().clone();
        assert!(
            matches!(&e, Invalid::Value(m) if m.contains("a scale study on [scale] targets runs on the servers as they are")),
            "{e}"
        );
    }

    /// The kind is a tagged section (`Section`); study files and stored studies keep
    /// their shape: `kind` beside `[rate]`, `[memory]` or `[cluster]`.
    #[test]
    fn a_study_files_kind_holds_its_own_section_and_writes_back_unchanged() {
        let head = "name = 'k'\nworkloads = ['oltp_point_select']\nstep_time = 5\n";
        let read = |rest: &str| StudySpec::from_toml(&format!("{head}{rest}"), "f");
        let rate = read("kind = 'rate'\nlevels = 'auto'\n[rate]\nlatency = 'p99<20ms'\n").unwrap();
        assert_eq!(rate.rate().map(|r| r.latency.as_str()), Some("p99<20ms"));
        let json = serde_json::to_value(&rate).unwrap();
        assert_eq!((json["kind"].as_str(), json["rate"]["latency"].as_str()), (Some("rate"), Some("p99<20ms")));
        assert!(json.get("section").is_none() && json.get("memory").is_none(), "{json}");
        assert_eq!(serde_json::from_value::<StudySpec>(json).unwrap(), rate, "stored and read back alike");
        // A section the kind does not have, or a rate study without its objective, is
        // not a study: refused when read, before anything runs.
        let e = read("kind = 'rate'\nlevels = 'auto'\n").unwrap_err();
        assert!(matches!(&e, Invalid::File(m) if m.contains("a rate study needs its objective")), "{e}");
        let e = read("kind = 'sweep'\nlevels = [1]\n[rate]\nlatency = 'p99<20ms'\n").unwrap_err();
        assert!(matches!(&e, Invalid::File(m) if m.contains("[rate] belongs to rate studies")), "{e}");
        let e = read("kind = 'sweep'\nlevels = [1]\n[memory]\nthreads = 2\n").unwrap_err();
        assert!(matches!(&e, Invalid::File(m) if m.contains("[memory] belongs to memory studies")), "{e}");
        let e = read("kind = 'scale'\nlevels = [1]\n[cluster]\nkind = 'galera'\nnodes = 2\n").unwrap_err();
        assert!(matches!(&e, Invalid::File(m) if m.contains("belong to scale-out studies")), "{e}");
        // A memory study without [memory] has its defaults.
        let memory = read("kind = 'memory'\nlevels = '64M,32M'\n").unwrap();
        assert_eq!(memory.section, Section::Memory(MemorySpec::default()));
        let out = read("kind = 'scale-out'\nlevels = [1, 2]\n[cluster]\nkind = 'galera'\nnodes = 2\n").unwrap();
        assert_eq!(out.cluster().map(|c| c.nodes), Some(2));
        assert_eq!(serde_json::to_value(&out).unwrap()["cluster"]["kind"], "galera");
    }

    #[test]
    fn auto_rates_are_not_pools() {
        // `sizeup capacity` with its default `--rates auto` ran the rates 16 and 8: its
        // `auto` was taken for a memory study's and resolved to pools from the data.
        let mut s = StudySpec::from_toml(FILE, "f").unwrap();
        s.levels = Levels::Text("auto".into());
        s.section = Section::Rate(Default::default());
        assert!(!s.finds_pools());
        s.section = Section::Memory(Default::default());
        assert!(s.finds_pools());
        s.section = Section::Memory(MemorySpec { vary: Vary::Data, ..Default::default() });
        assert!(!s.finds_pools());
    }

    #[test]
    fn split_shares_divide_the_data() {
        let mut s = StudySpec::from_toml(FILE, "f").unwrap();
        s.options.insert("table-size".into(), Value::from(40000));
        assert_eq!(s.split_share("oltp_read_write", 4).unwrap(), 10000);
        assert!(matches!(s.split_share("oltp_read_write", 3), Err(Invalid::Value(m)) if m.contains("does not divide")));
        s.workloads = vec![crate::workload::tpcc::NAME.into()];
        s.options = [("warehouses".to_string(), Value::from(8))].into();
        assert_eq!(s.split_share(crate::workload::tpcc::NAME, 2).unwrap(), 4);
    }

    #[test]
    fn studies_stored_by_earlier_releases_still_load() {
        // The options map a 0.1 `sizeup sweep` stored: every option, kebab-case names.
        let stored = serde_json::json!({
            "name": "sweep oltp_read_write 1,2", "kind": "sweep", "workloads": ["oltp_read_write"],
            "levels": "1,2", "step_time": 5.0, "warmup": 1.0, "repeat": 1, "sample_interval": 1.0,
            "steady_last": 1.0, "stop_when": "",
            "options": {"instance": 0, "tables": 4, "table-size": 5000, "range-size": 100,
                        "skip-trx": false, "rand-type": "special", "mix": "45,43,4,4,4",
                        "all-warehouses": false, "think-time": "none", "delay": 0.0,
                        "mysql-ignore-errors": "1213,1020,1205", "rand-seed": 0},
            "server": {"buffer_pool": null, "log_file_size": null, "flush_log_at_trx_commit": null,
                       "max_connections": null, "set": []},
            "configs": [], "scale": {"threads_per_instance": null, "threads": null,
                                     "buffer_pool_per_instance": null, "split": false,
                                     "buffer_pool": null, "targets": []},
            "power": {"model": null, "watts": null}, "cost": null
        });
        let row = crate::store::StudyRow { id: 1, spec: stored, ..Default::default() };
        let spec = StudySpec::stored(&row).unwrap();
        spec.validate().unwrap();
        let o = spec.run_options(2).unwrap();
        assert_eq!((o.workload.oltp.tables, o.workload.oltp.table_size, o.threads), (4, 5000, 2));
    }
}

#[cfg(test)]
mod shipped {
    /// Every file in studies/ parses and validates (its options included).
    #[test]
    fn shipped_study_files_are_valid() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../studies");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                let text = std::fs::read_to_string(&p).unwrap();
                if text.lines().any(|l| l.trim() == "kind = \"plan\"") {
                    continue; // a plan file: `plan`'s test reads it
                }
                super::StudySpec::from_toml(&text, &p.display().to_string()).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
        assert_eq!(n, 9, "one file per seed study, the two scale-out studies, the rate and the memory study");
    }
}
