//! Running a study: each step is one measured run per client group (`runner::measure`),
//! stored under the study as it finishes; the verdicts (stop, saturation, peak) come
//! from `study`'s pure figures, so a resumed study reaches what an uninterrupted one
//! would.

use super::driver::{self, At, Begun, Grid, Measured, Screen, StudyKind};
use crate::error::Invalid;
use crate::exec::{Ended, StartLine};
use crate::options::RunOptions;
use crate::request::{self, RunRequest};
use crate::result::RunDocument;
use crate::runner::{self, observe};
use crate::server::cluster::ClusterSpec;
use crate::server::{Manager, ServerSettings};
use crate::stats::Interval;
use crate::store::Store;
use crate::study::spec::ManagedSettings;
use crate::study::spec::{Config, Kind, Route, Section, ServerSpec, StudySpec};
use crate::study::{series_of, Series};
use crate::Error;
use std::path::Path;

/// Where a study runs: the managed instances, the results store, and the password its
/// steps log in with when the command line gave one (never stored with the study;
/// option files and MYSQL_PWD are read by each step as `sizeup run` reads them).
pub struct Site<'a> {
    pub manager: &'a Manager,
    pub results: &'a Path,
    pub password: Option<String>,
}

/// Runs (or, with `resume`, continues) a study; returns the exit code. A study that
/// fails on an error is stored as failed with the reason (not left to read as
/// abandoned, which means its process died).
pub fn run(site: &Site, spec: &StudySpec, resume: Option<i64>) -> Result<i32, Error> {
    run_with_id(site, spec, resume).0
}

/// As `run`, with the study's id when it was stored (a plan records its studies).
pub fn run_with_id(site: &Site, spec: &StudySpec, resume: Option<i64>) -> (Result<i32, Error>, Option<i64>) {
    let mut study = None;
    let r = run_study(site, spec, resume, &mut study);
    if let (Err(e), Some(id)) = (&r, study) {
        if let Ok(store) = Store::open(site.results) {
            let _ = store.set_study_status(
                id,
                crate::store::Status::Failed,
                Some(&serde_json::json!({ "error": e.to_string() })),
            );
        }
    }
    (r, study)
}

/// A scale-out study's nodes: its own managed cluster (`[cluster]`, started or resized
/// unless one like it runs), the state directory's running cluster when no targets
/// are given, else the targets as given. Returns the spec to run, targets filled in,
/// and for a managed cluster how to start it (each level resizes it to its node count,
/// so N nodes are a cluster of N, not N loaded nodes of a larger one).
fn resolve_nodes(site: &Site, spec: &StudySpec) -> Result<(StudySpec, Option<ClusterSpec>), Error> {
    use crate::server::cluster::{Cluster, ClusterKind, LabSpec};
    if spec.kind() != Kind::ScaleOut || !spec.scale.targets.is_empty() {
        return Ok((spec.clone(), None));
    }
    let home = site.manager.home();
    let cluster = match &spec.cluster() {
        Some(c) => {
            let kind = if c.kind == "galera" { ClusterKind::Galera } else { ClusterKind::Replicas };
            let ms = |v: &Option<String>| v.as_deref().map(crate::study::spec::parse_ms).transpose();
            let lab = (c.node_cpus.is_some() || c.link_delay.is_some() || c.link_jitter.is_some()).then(|| {
                Ok::<_, Invalid>(LabSpec {
                    node_cpus: c.node_cpus,
                    link_delay_ms: ms(&c.link_delay)?,
                    link_jitter_ms: ms(&c.link_jitter)?,
                    client_cpus: 1.0,
                })
            });
            let lab = lab.transpose()?;
            let settings = spec.server.settings().map_err(Error::from)?;
            let running = Cluster::load(home)?.filter(|k| {
                k.kind == kind
                    && k.lab == lab
                    && k.settings == settings
                    && k.running().count() == c.nodes as usize
                    && k.nodes.len() == c.nodes as usize
            });
            match running {
                Some(k) => k,
                None => {
                    crate::outln!("starting the study's {} cluster of {} nodes", kind.name(), c.nodes);
                    Cluster::start(home, &ClusterSpec { kind, nodes: c.nodes, settings, base_port: None, lab })?
                }
            }
        }
        None => {
            let k = Cluster::load(home)?.filter(|k| k.running().count() > 0).ok_or_else(|| {
                Error::Usage(
                    "a scale-out study needs its nodes: --target HOST:PORT (node 0 first), a [cluster] section, \
                     or a running managed cluster (sizeup cluster start --galera --nodes 3)"
                        .into(),
                )
            })?;
            // A node that crashed (a study resumed after it) is started again, as each
            // level's resize would; its runs carry the cold-server note. One the user
            // stopped stays stopped.
            let crashed = k.nodes.iter().any(|n| n.state == crate::server::State::Crashed);
            match crashed {
                false => k,
                true => {
                    let nodes = k.nodes.iter().filter(|n| n.state != crate::server::State::Stopped).count() as u32;
                    let again = ClusterSpec {
                        kind: k.kind,
                        nodes,
                        settings: k.settings.clone(),
                        base_port: None,
                        lab: k.lab.clone(),
                    };
                    Cluster::start(home, &again)?
                }
            }
        }
    };
    let mut resolved = spec.clone();
    resolved.section = Section::ScaleOut { cluster: None };
    resolved.scale.targets = cluster
        .running()
        .map(|n| match &n.socket {
            Some(s) => s.display().to_string(),
            None => format!("{}:{}", n.host, n.port),
        })
        .collect();
    resolved.validate().map_err(Error::from)?;
    let again = ClusterSpec {
        kind: cluster.kind,
        nodes: cluster.nodes.len() as u32,
        settings: cluster.settings.clone(),
        base_port: None,
        lab: cluster.lab.clone(),
    };
    Ok((resolved, Some(again)))
}

/// A writing workload that would reach a replica is refused before anything runs (not
/// at the first level with a replica in it): every node the study reaches is asked.
/// Round robin deals writes to every node; every-node runs the series' workload on each;
/// split runs it on the replicas.
fn refuse_writes_to_replicas(site: &Site, spec: &StudySpec) -> Result<(), Error> {
    let most = spec.levels.resolve().map_err(Error::from)?.into_iter().max().unwrap_or(1);
    let how = match spec.scale.route {
        Route::RoundRobin => runner::ROUND_ROBIN_WRITES,
        Route::EveryNode => {
            "the every-node route runs the workload on every node (for Galera); on a primary with replicas use \
             --route split (writes to the primary, reads to the replicas) or a read-only workload"
        }
        Route::Split => {
            "the split route runs the series' workload on the replicas: give a read-only one (oltp_read_only, \
             oltp_point_select; the primary's is --write-workload)"
        }
    };
    for series in series_of(spec) {
        for (w, mut o) in group_options(spec, &series.workload, most)? {
            o.target.password = site.password.clone();
            let req = request::run_request(&w, &o).map_err(Error::from)?;
            let db = req.workload.kind().default_database();
            let targets: Vec<_> = req
                .targets
                .iter()
                .map(|t| runner::resolve_target(site.manager, t, db).map(|r| r.0))
                .collect::<Result<_, _>>()?;
            runner::runtime(1)?.block_on(runner::refuse_writes_to_replicas(&targets, &*req.workload, how))?;
        }
    }
    Ok(())
}

/// The lock of the server the study loads: this directory's managed instances, or the
/// server its options name (by socket, else host and port), held until it ends.
fn measurement_lock(site: &Site, spec: &StudySpec) -> Result<crate::server::Lock, Error> {
    let req = spec.request(&spec.workloads[0], 1, None).map_err(Error::from)?;
    let key = measurement_key(req.target())?;
    Ok(site.manager.measuring(&key, &format!("{} study '{}'", spec.kind().name(), spec.name))?)
}

/// The measurement lock's name for the server `target` reaches: "managed" for the
/// managed instances, else its socket or address.
pub fn measurement_key(target: &crate::options::TargetArgs) -> Result<String, Error> {
    let t = runner::complete_target(target)?;
    Ok(match (&t.socket, &t.host) {
        _ if !t.names_a_server() => "managed".to_string(),
        (Some(s), _) => format!("socket {}", s.display()),
        (None, h) => format!("{}:{}", h.as_deref().unwrap_or("localhost"), t.port.unwrap_or(3306)),
    })
}

/// What named the server a study reaches when its own options do not.
struct Named {
    by: String,
    /// How to reach the managed instance instead.
    instead: &'static str,
}

/// The spec with the server that option files or the environment name (as the mysql
/// client reads them) written into its options, and where that came from: whether a
/// study may restart, resize or multiply a server is decided from the server it will
/// reach, not from its own options alone (an_environment_named_server_is_not_resized).
/// Host, port and socket only: a password is never stored.
fn with_named_server(spec: &StudySpec) -> Result<(StudySpec, Option<Named>), Error> {
    if spec.kind() == Kind::ScaleOut || spec.names_a_server() || !spec.scale.targets.is_empty() {
        return Ok((spec.clone(), None));
    }
    // A spec that cannot make a request is validate's to refuse, with its own words.
    let Some(req) = spec.workloads.first().and_then(|w| spec.request(w, 1, None).ok()) else {
        return Ok((spec.clone(), None));
    };
    let t = runner::complete_target(req.target())?;
    if !t.names_a_server() {
        return Ok((spec.clone(), None));
    }
    let mut named = spec.clone();
    if let Some(h) = &t.host {
        named.options.insert("host".into(), h.clone().into());
    }
    if let Some(p) = t.port {
        named.options.insert("port".into(), p.into());
    }
    if let Some(s) = &t.socket {
        named.options.insert("socket".into(), s.display().to_string().into());
    }
    let env: Vec<&str> = crate::option_file::environment()
        .into_keys()
        .filter(|k| matches!(*k, "MYSQL_HOST" | "MYSQL_TCP_PORT" | "MYSQL_UNIX_PORT"))
        .collect();
    let from = match env.is_empty() {
        true => Named {
            by: "an option file (~/.my.cnf, --defaults-file or --defaults-extra-file)".into(),
            instead: "--no-defaults leaves it for the managed instance",
        },
        false => Named {
            by: format!("{} in the environment", env.join(" and ")),
            instead: "unset it for the managed instance",
        },
    };
    Ok((named, Some(from)))
}

fn run_study(site: &Site, spec: &StudySpec, resume: Option<i64>, study: &mut Option<i64>) -> Result<i32, Error> {
    let results = site.results;
    let (named, from) = with_named_server(spec)?;
    let spec = &named;
    spec.validate().map_err(|e| match &from {
        Some(n) => Error::Usage(format!("{e} ({} names a server; {})", n.by, n.instead)),
        None => Error::from(e),
    })?;
    if let Some(n) = &from {
        crate::outln!("server: {} names it; the study runs on it as it is (no restart, no resize)", n.by);
    }
    // Before any server is started or resized for it.
    Store::check_writable(results)?;
    check_scale_memory(site, spec)?;
    if spec.kind() == Kind::Memory {
        super::memory::check_levels(site, spec)?;
    }
    let _measuring = measurement_lock(site, spec)?;
    // Dropped after the levels, however the study ends, before the lock is released.
    let _restore = match spec.kind() {
        Kind::Memory => super::memory::Restore::capture(site, spec)?,
        _ => None,
    };
    // `auto` pools are found from the data before the study is stored with them.
    let pools = match resume {
        None => super::memory::resolve_levels(site, spec)?,
        Some(_) => spec.clone(),
    };
    let spec = &pools;
    let stored_spec = spec;
    let (resolved, cluster) = resolve_nodes(site, spec)?;
    let spec = &resolved;
    if spec.kind() == Kind::ScaleOut {
        refuse_writes_to_replicas(site, spec)?;
    }
    let store = Store::open(results)?;
    let id = match resume {
        Some(id) => {
            store.set_study_status(id, crate::store::Status::Running, None)?;
            id
        }
        None => store.begin_study(
            &spec.name,
            spec.kind().name(),
            &serde_json::to_value(stored_spec).expect("serialisable"),
        )?,
    };
    *study = Some(id);
    // Said before anything is restarted for it, with what of an earlier study's it resets.
    let configuration = configuration(site, spec, &spec.level_values().unwrap_or_default())?;
    let notes = provenance_notes(site, spec, &spec.level_values().unwrap_or_default());
    let grid = Grid::of(spec)?;
    let mut kind: Box<dyn StudyKind + '_> = match spec.kind() {
        Kind::Sweep => Box::new(Sweep { grid, site }),
        Kind::Scale => Box::new(Scale { grid, site }),
        Kind::ScaleOut => Box::new(ScaleOut { grid, site, cluster }),
        Kind::Memory => Box::new(super::memory::Memory { grid, site }),
        Kind::Rate => Box::new(super::capacity::Rate::new(site, spec, &store, id)?),
    };
    let stored = driver::Study { id, store: &store, results, resumed: resume.is_some(), configuration, notes };
    driver::drive(kind.as_mut(), &stored, &crate::exec::interrupt_pending)
}

/// A sweep (and each configuration's series): one server, load levels step by step.
struct Sweep<'a> {
    grid: Grid,
    site: &'a Site<'a>,
}

impl StudyKind for Sweep<'_> {
    fn grid(&self) -> &Grid {
        &self.grid
    }

    fn begin(&mut self, series: &Series, _bar: &indicatif::ProgressBar) -> Result<Begun, Error> {
        prepare_sweep(self.site, &self.grid.spec, series)?;
        Ok(Begun::Ready)
    }

    fn step(&self, series: &Series, at: At, screen: &Screen) -> Result<Measured, Error> {
        let req =
            self.grid.spec.request(&series.workload, at.level, self.site.password.as_deref()).map_err(Error::from)?;
        Ok(Measured::one(runner::measure(self.site.manager, self.site.results, req, &observe::Progress(screen.show))?))
    }
}

/// 1..N instances at once, one client group each.
struct Scale<'a> {
    grid: Grid,
    site: &'a Site<'a>,
}

impl StudyKind for Scale<'_> {
    fn grid(&self) -> &Grid {
        &self.grid
    }

    fn what(&self, _series: &Series, level: u32) -> String {
        format!("{level} instance(s)")
    }

    fn step(&self, series: &Series, at: At, screen: &Screen) -> Result<Measured, Error> {
        scale_step(self.site, &self.grid.spec, series, at.level, screen.show)
    }
}

/// 1..N nodes of one cluster; a managed cluster is resized to each level's nodes.
struct ScaleOut<'a> {
    grid: Grid,
    site: &'a Site<'a>,
    cluster: Option<ClusterSpec>,
}

impl StudyKind for ScaleOut<'_> {
    fn grid(&self) -> &Grid {
        &self.grid
    }

    fn what(&self, _series: &Series, level: u32) -> String {
        format!("{level} node(s)")
    }

    fn step(&self, series: &Series, at: At, screen: &Screen) -> Result<Measured, Error> {
        if let Some(c) = &self.cluster {
            screen.bar.suspend(|| crate::outln!("resizing the cluster to {} node(s)", at.level));
            let sized = ClusterSpec { nodes: at.level, ..c.clone() };
            crate::server::cluster::Cluster::start(self.site.manager.home(), &sized)?;
        }
        scale_step(self.site, &self.grid.spec, series, at.level, screen.show)
    }
}

/// Why a step measured no capacity, if it did not: its server was lost or stalled (an
/// outage: no figure, no stop condition, no peak; the study stops), or a client group
/// finished no transaction in its steady state (a node whose every statement failed and
/// was retried: a 0 is no figure).
pub fn not_capacity(docs: &[RunDocument], ended: Ended) -> Option<String> {
    docs.iter()
        .filter_map(|d| {
            let s = d.summary.as_ref()?;
            s.not_capacity().or_else(|| {
                // An interrupted or failed step says so itself.
                (s.transactions == 0 && d.error.is_none() && ended == Ended::Completed)
                    .then(|| "no transaction finished after the warm-up: there is no throughput figure".into())
            })
        })
        .map(|why| format!("{why}, so the study stops here"))
        .next()
}

/// What a reader must know about the servers a study runs on that its file does not say:
/// managed instances running beside it that it does not use. (The settings it runs
/// with are its configuration line: `configuration`.)
fn provenance_notes(site: &Site, spec: &StudySpec, levels: &[u32]) -> Vec<String> {
    let mut notes = Vec::new();
    if spec.kind() == Kind::ScaleOut || spec.names_a_server() {
        return notes;
    }
    let Ok(status) = site.manager.status() else { return notes };
    let running: Vec<u32> =
        status.iter().filter(|s| s.state == crate::server::State::Running).map(|s| s.index).collect();
    let used = match spec.kind() {
        Kind::Scale => levels.iter().copied().max().unwrap_or(1),
        _ => 1,
    };
    let idle: Vec<String> = running.iter().filter(|i| **i >= used).map(|i| i.to_string()).collect();
    if !idle.is_empty() {
        notes.push(format!(
            "managed instance(s) {} are running and not used by this study: they share the host's CPU and memory \
             (`sizeup server stop --instance N` stops one)",
            idle.join(", ")
        ));
    }
    notes
}

/// The configuration a study on managed instances starts from, whatever an earlier
/// study left on them: the settings the user started instance 0 with (`sizeup server
/// start`), else sizeup's defaults; and whether it is the user's.
pub fn study_base(manager: &Manager) -> Result<(ServerSettings, bool), Error> {
    Ok(match manager.user_settings_of(0)? {
        Some(s) => (s, true),
        None => (ServerSettings::default(), false),
    })
}

/// The study's line naming the configuration it runs with: its base (sizeup's
/// defaults, or the settings the user started the instance with), what the study
/// itself names over it (`own`), and what of an earlier study's settings it resets
/// (`reset`).
pub fn configuration_line(base: &ServerSettings, by_user: bool, own: &[String], reset: &[String]) -> String {
    let words = crate::server::settings_words(base).join(", ");
    let from = match by_user && base != &ServerSettings::default() {
        true => format!("the settings instance 0 was started with by `sizeup server start` ({words})"),
        false => format!("sizeup's defaults ({words})"),
    };
    let mut line = match own.is_empty() {
        true => format!("{from}, the study naming no server setting"),
        false => format!("{from} with the study's {}", own.join(", ")),
    };
    if !reset.is_empty() {
        line.push_str(&format!("; resets what an earlier study left on instance 0: {}", reset.join(", ")));
    }
    line
}

/// The settings the study's first step asks of managed instance 0; None for servers
/// sizeup does not manage (named ones, a scale-out study's nodes).
fn first_settings(site: &Site, spec: &StudySpec, levels: &[u32]) -> Result<Option<ServerSettings>, Error> {
    let first = levels.first().copied().unwrap_or(1);
    match spec.kind() {
        Kind::ScaleOut => Ok(None),
        Kind::Scale if !spec.scale.targets.is_empty() => Ok(None),
        Kind::Scale => scale_settings(site.manager, spec, spec.configs.first(), first).map(Some),
        Kind::Memory => super::memory::settings(site, spec, first),
        Kind::Sweep | Kind::Rate => {
            let series = series_of(spec);
            let Some(s) = series.first() else { return Ok(None) };
            let req = spec.request(&s.workload, 1, site.password.as_deref()).map_err(Error::from)?;
            settings_for(site.manager, spec, s.config.as_ref(), req.target())
        }
    }
}

/// The configuration the study runs with, as one line (printed, stored with its
/// result and shown by `sizeup study show`); None for a scale-out study, whose cluster
/// says its own.
pub fn configuration(site: &Site, spec: &StudySpec, levels: &[u32]) -> Result<Option<String>, Error> {
    if spec.kind() == Kind::ScaleOut {
        return Ok(None);
    }
    let Some(asked) = first_settings(site, spec, levels)? else {
        return Ok(Some("the server's own (sizeup does not manage it); each run records its settings".into()));
    };
    let (base, by_user) = study_base(site.manager)?;
    let mut own = spec.server.words();
    match spec.kind() {
        Kind::Memory => {
            let m = spec.memory_spec();
            match m.vary {
                crate::study::spec::Vary::Pool => {
                    own.retain(|w| !w.starts_with("buffer pool "));
                    own.push("each level's buffer pool".into());
                }
                crate::study::spec::Vary::Data => {
                    if let Some(b) = &m.buffer_pool {
                        own.retain(|w| !w.starts_with("buffer pool "));
                        own.push(format!("buffer pool {b}"));
                    }
                }
            }
            let named = |k: &str| spec.server.set.iter().any(|s| s.split('=').next().map(str::trim) == Some(k));
            own.extend(
                super::memory::COLD_AND_DIRECT.iter().filter(|(k, _)| !named(k)).map(|(k, v)| format!("{k}={v}")),
            );
        }
        Kind::Scale => {
            if let (true, Some(total)) = (spec.scale.split, &spec.scale.buffer_pool) {
                own.retain(|w| !w.starts_with("buffer pool "));
                own.push(format!("buffer pool {total} split over the instances"));
            } else if let Some(b) = &spec.scale.buffer_pool_per_instance {
                own.retain(|w| !w.starts_with("buffer pool "));
                own.push(format!("buffer pool {b} per instance"));
            }
        }
        _ => {}
    }
    if !spec.configs.is_empty() {
        own.push("each configuration's own settings (listed with its series)".into());
    }
    // What an earlier study left: instance 0's settings that are neither the base's
    // nor what this study asks.
    let reset = match site.manager.settings_of(0)? {
        Some(now) => crate::server::settings_changes(&now, &asked, &|name, left| {
            let base_has = |b: &ServerSettings| match name {
                "buffer_pool" => Some(b.buffer_pool.clone()),
                "log_file_size" => Some(b.log_file_size.clone()),
                "flush_log_at_trx_commit" => Some(b.flush_log_at_trx_commit.to_string()),
                "max_connections" => Some(b.max_connections.to_string()),
                k => b.extra.iter().rev().find(|(n, _)| n == k).map(|(_, v)| v.clone()),
            };
            base_has(&base).as_deref() != left
        }),
        None => Vec::new(),
    };
    Ok(Some(configuration_line(&base, by_user, &own, &reset)))
}

/// A managed instance's settings for a sweep (or rate) series: the study's base
/// (`study_base`) with the study's `[server]` and the series' configuration laid over
/// it; None for a server sizeup does not manage.
fn settings_for(
    manager: &Manager,
    spec: &StudySpec,
    config: Option<&Config>,
    target: &crate::options::TargetArgs,
) -> Result<Option<ServerSettings>, Error> {
    let named = runner::complete_target(target)?.names_a_server();
    if named && config.is_some() {
        return Err(Error::Usage(
            "configs restart managed instances with other settings; an option file or the environment \
             names a server (host, port or socket): give --no-defaults or leave the configs out"
                .into(),
        ));
    }
    if named || spec.names_a_server() {
        return Ok(None);
    }
    let server = match config {
        Some(c) => spec.server.with(&c.server),
        None => spec.server.clone(),
    };
    let (base, _) = study_base(manager)?;
    server.settings_on(base).map(Some).map_err(Error::from)
}

/// Loads a sweep's (or rate study's) data when missing, and checks the server's limits
/// against the sweep's most connections.
pub fn prepare_sweep(site: &Site, spec: &StudySpec, series: &Series) -> Result<(), Error> {
    let req = spec.request(&series.workload, 1, site.password.as_deref()).map_err(Error::from)?;
    if let Some(settings) = settings_for(site.manager, spec, series.config.as_ref(), req.target())? {
        site.manager.start_with(req.target().instance + 1, &settings)?;
    }
    runner::ensure_prepared(site.manager, &req)?;
    if spec.kind() == Kind::Rate {
        return Ok(()); // each level's connections are fitted to the limits
    }
    // The server's limits against the sweep's most connections, before the first level
    // (sweep_levels_beyond_limits: 1000,3000 failed at 3000 on max_connections).
    let most = spec.levels.resolve().map_err(Error::from)?.into_iter().max().unwrap_or(1);
    let req = spec.request(&series.workload, most, site.password.as_deref()).map_err(Error::from)?;
    runner::check_limits(site.manager, &req).map_err(|e| match e {
        e if e.is_usage() => Error::Usage(format!("level {most}: {e}")),
        other => other,
    })
}

/// `host:port`, `host` or a socket path, as run options.
fn target_options(t: &str) -> Vec<(&'static str, serde_json::Value)> {
    if t.starts_with('/') {
        return vec![("socket", t.into())];
    }
    match t.rsplit_once(':') {
        Some((host, port)) if port.parse::<u16>().is_ok() => {
            vec![("host", host.into()), ("port", port.parse::<u16>().expect("checked").into())]
        }
        _ => vec![("host", t.into())],
    }
}

/// A size such as `4G` divided by `n`, in megabytes.
pub fn divide_size(size: &str, n: u32) -> Result<String, Invalid> {
    let bytes = crate::server::size_bytes(size.trim())
        .ok_or_else(|| Invalid::Value(format!("'{size}' is not a size; write it like 512M or 2G")))?;
    let mb = bytes / n.max(1) as u64 / (1 << 20);
    if mb < 8 {
        return Err(Invalid::Value(format!(
            "{size} over {n} instances leaves under 8M each; give a larger buffer pool"
        )));
    }
    Ok(format!("{mb}M"))
}

/// The client groups of an `n`-node scale-out step: (workload, nodes, threads), a
/// group's connections dealt round robin over its nodes. Every node runs the series'
/// workload in a group of its own; or with the split route the primary (node 0) runs
/// the write workload and the replicas the series' (read) workload, the primary too
/// while it is alone; or with round robin one group of n x threads-per-node deals its
/// connections over all n nodes, as a connection pool or a proxy in round-robin mode.
pub fn scale_out_groups(spec: &StudySpec, workload: &str, n: u32) -> Vec<(String, Vec<usize>, u32)> {
    let per_node = spec.scale.threads_per_instance.unwrap_or(8);
    match spec.scale.route {
        Route::EveryNode => (0..n as usize).map(|i| (workload.to_string(), vec![i], per_node)).collect(),
        Route::Split => {
            let writes =
                (spec.scale.write_workload().to_string(), vec![0], spec.scale.write_threads.unwrap_or(per_node));
            let readers: Vec<usize> = if n == 1 { vec![0] } else { (1..n as usize).collect() };
            std::iter::once(writes)
                .chain(readers.into_iter().map(|i| (workload.to_string(), vec![i], per_node)))
                .collect()
        }
        Route::RoundRobin => vec![(workload.to_string(), (0..n as usize).collect(), per_node * n)],
    }
}

/// The run options of each client group of an `n`-instance (or -node) step, with the
/// workload each runs.
pub fn group_options(spec: &StudySpec, workload: &str, n: u32) -> Result<Vec<(String, RunOptions)>, Invalid> {
    if spec.kind() == Kind::ScaleOut {
        return scale_out_groups(spec, workload, n)
            .into_iter()
            .map(|(w, nodes, threads)| {
                let mut s = spec.clone();
                match nodes.as_slice() {
                    [node] => s.options.extend(
                        target_options(&spec.scale.targets[*node]).into_iter().map(|(k, v)| (k.to_string(), v)),
                    ),
                    _ => {
                        let all: Vec<&str> = nodes.iter().map(|&i| spec.scale.targets[i].as_str()).collect();
                        s.options.insert("target".into(), all.into());
                    }
                }
                Ok((w, s.run_options(threads)?))
            })
            .collect();
    }
    let threads = spec.scale.threads_per_instance.or(spec.scale.threads.map(|t| (t / n).max(1))).unwrap_or(8);
    (0..n)
        .map(|i| {
            // Each instance holds its share in a database named after it (tpcc_w2).
            let mut s = match spec.scale.split {
                true => spec.with_data_size(workload, spec.split_share(workload, n)?)?,
                false => spec.clone(),
            };
            match spec.scale.targets.get(i as usize) {
                Some(t) => s.options.extend(target_options(t).into_iter().map(|(k, v)| (k.to_string(), v))),
                None => {
                    s.options.insert("instance".into(), i.into());
                }
            }
            Ok((workload.to_string(), s.run_options(threads)?))
        })
        .collect()
}

/// A scale study's largest level must fit the host's memory, checked before the study
/// is stored or a running instance restarted for it.
fn check_scale_memory(site: &Site, spec: &StudySpec) -> Result<(), Error> {
    if spec.kind() != Kind::Scale || !spec.scale.targets.is_empty() {
        return Ok(());
    }
    let most = spec.levels.resolve().map_err(Error::from)?.into_iter().max().unwrap_or(1);
    let configs: Vec<Option<&Config>> =
        if spec.configs.is_empty() { vec![None] } else { spec.configs.iter().map(Some).collect() };
    for config in configs {
        let settings = scale_settings(site.manager, spec, config, most)?;
        crate::server::check_memory(&settings, most, false).map_err(|e| Error::Usage(e.to_string()))?;
    }
    Ok(())
}

/// The settings each of `n` managed instances of a scale step runs with: the study's
/// server (with the series' configuration laid over it), its buffer pool per instance
/// (or the total split over them), over the study's base (`study_base`). A configuration's
/// buffer pool takes the place of the one `[scale]` names: the total to split in a
/// split study (study 3's big and small pools), else each instance's.
fn scale_settings(
    manager: &Manager,
    spec: &StudySpec,
    config: Option<&Config>,
    n: u32,
) -> Result<crate::server::ServerSettings, Error> {
    let mut server = match config {
        Some(c) => spec.server.with(&ServerSpec { buffer_pool: None, ..c.server.clone() }),
        None => spec.server.clone(),
    };
    let own = config.and_then(|c| c.server.buffer_pool.clone());
    if let (false, Some(b)) = (spec.scale.split, own.clone().or(spec.scale.buffer_pool_per_instance.clone())) {
        server.buffer_pool = Some(b);
    } else if let (true, Some(total)) = (spec.scale.split, own.or(spec.scale.buffer_pool.clone())) {
        server.buffer_pool = Some(divide_size(&total, n).map_err(Error::from)?);
    } else if let Some(b) = &spec.scale.buffer_pool_per_instance {
        server.buffer_pool = Some(b.clone());
    }
    let (base, _) = study_base(manager)?;
    server.settings_on(base).map_err(Error::from)
}

fn scale_step(
    site: &Site,
    spec: &StudySpec,
    series: &Series,
    n: u32,
    show: &(dyn Fn(&Interval) + Sync),
) -> Result<Measured, Error> {
    let manager = site.manager;
    let groups: Vec<RunRequest> = group_options(spec, &series.workload, n)
        .and_then(|all| {
            all.into_iter()
                .map(|(w, mut o)| {
                    o.target.password = site.password.clone();
                    request::run_request(&w, &o)
                })
                .collect()
        })
        .map_err(Error::from)?;
    if spec.kind() == Kind::ScaleOut {
        // One cluster: the data is loaded on node 0 once and reaches the others by
        // replication; nothing is written to the other nodes.
        let first = &groups[0];
        runner::ensure_prepared(manager, first)?;
        let nodes = scale_out_groups(spec, &series.workload, n);
        for (g, (req, (_, at, _))) in groups.iter().zip(&nodes).enumerate() {
            for (k, &node) in at.iter().enumerate() {
                if g == 0 && k == 0 {
                    continue;
                }
                if node == 0 {
                    // The primary's other group: its own workload's data, on the primary.
                    runner::ensure_prepared(manager, req)?;
                } else {
                    runner::await_replicated(manager, first.target(), &*req.workload, &req.targets[k], node)?;
                }
            }
        }
    } else if spec.scale.targets.is_empty() {
        manager.start_with(n, &scale_settings(manager, spec, series.config.as_ref(), n)?)?;
    }
    if spec.kind() != Kind::ScaleOut {
        // Each instance's data, loaded in parallel.
        std::thread::scope(|s| {
            let loads: Vec<_> = groups.iter().map(|r| s.spawn(move || runner::ensure_prepared(manager, r))).collect();
            loads.into_iter().try_for_each(|h| h.join().expect("a loader thread panicked").map(|_| ()))
        })?;
    }
    let line = StartLine::new(groups.len());
    let outcomes: Vec<Result<(RunDocument, Ended), Error>> = std::thread::scope(|s| {
        let handles: Vec<_> = groups
            .into_iter()
            .enumerate()
            .map(|(i, mut req)| {
                req.start_line = Some(line.clone());
                let line = line.clone();
                s.spawn(move || {
                    let progress = observe::Progress(show);
                    let observer: &dyn observe::Observer = if i == 0 { &progress } else { &observe::Quiet };
                    let r = runner::measure(manager, site.results, req, observer);
                    if r.is_err() {
                        line.fail();
                    }
                    r
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a client group panicked")).collect()
    });
    let mut docs = Vec::new();
    let mut ended = Ended::Completed;
    for o in outcomes {
        let (doc, e) = o?;
        if e == Ended::Failed || (e == Ended::Interrupted && ended == Ended::Completed) {
            ended = e;
        }
        docs.push(doc);
    }
    Ok(Measured { docs, ended, memory: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 61, point 2: after a memory study left instance 0 at an 8 MiB pool (and
    /// study 4 at flush_log_at_trx_commit=0), a study that names nothing ran on them.
    /// What a study asks for is sizeup's defaults plus its own settings, whatever
    /// instance 0 last ran with; settings the user started it with are kept.
    #[test]
    fn settings_do_not_leak_from_an_earlier_study() {
        let home = tempfile::tempdir().unwrap();
        let manager = Manager::new(home.path());
        let left = ServerSettings {
            buffer_pool: "8M".into(),
            flush_log_at_trx_commit: 0,
            extra: vec![("innodb_flush_method".into(), "O_DIRECT".into())],
            ..Default::default()
        };
        let remember = |user: Option<ServerSettings>| {
            let inst = crate::server::Instance {
                index: 0,
                settings: left.clone(),
                user_settings: user,
                ..crate::server::fixtures::inst()
            };
            manager.remember(vec![inst]);
        };
        remember(None);
        let site = Site { manager: &manager, results: home.path(), password: None };
        let file = |server: &str| {
            let text = format!(
                "name = \"plain\"\nkind = \"sweep\"\nworkloads = [\"oltp_read_only\"]\nlevels = [1, 2]\n\
                 step_time = 2\n[options]\nno-defaults = true\n{server}"
            );
            StudySpec::from_toml(&text, "t").unwrap()
        };
        let asked = |spec: &StudySpec| {
            let req = spec.request("oltp_read_only", 1, None).unwrap();
            settings_for(&manager, spec, None, req.target()).unwrap().expect("a managed instance")
        };
        // A sweep naming no setting: the defaults, not the 8M pool left behind.
        let plain = file("");
        assert_eq!(asked(&plain), ServerSettings::default());
        let line = configuration(&site, &plain, &[1, 2]).unwrap().unwrap();
        assert!(
            line.starts_with("sizeup's defaults (buffer pool 1G, redo log 512M, flush_log_at_trx_commit 2"),
            "{line}"
        );
        assert!(line.contains("the study naming no server setting"), "{line}");
        assert!(
            line.contains(
                "resets what an earlier study left on instance 0: buffer pool 8M (now 1G), \
                           flush_log_at_trx_commit 0 (now 2), innodb_flush_method=O_DIRECT (now unset)"
            ),
            "{line}"
        );
        // Its own pool over the defaults: the rest is not inherited either.
        let own = file("[server]\nbuffer_pool = \"256M\"\n");
        assert_eq!(asked(&own), ServerSettings { buffer_pool: "256M".into(), ..Default::default() });
        let line = configuration(&site, &own, &[1, 2]).unwrap().unwrap();
        assert!(line.contains(") with the study's buffer pool 256M; resets"), "{line}");
        assert!(line.contains("buffer pool 8M (now 256M)"), "{line}");
        // A scale study's instances too.
        let mut scale = own.clone();
        scale.section = Section::Scale;
        assert_eq!(scale_settings(&manager, &scale, None, 2).unwrap().flush_log_at_trx_commit, 2);
        // The user's own start (`sizeup server start --buffer-pool 128M`) is the base.
        let user = ServerSettings { buffer_pool: "128M".into(), max_connections: 500, ..Default::default() };
        remember(Some(user.clone()));
        assert_eq!(asked(&plain), user);
        let line = configuration(&site, &plain, &[1, 2]).unwrap().unwrap();
        assert!(
            line.starts_with("the settings instance 0 was started with by `sizeup server start` (buffer pool 128M"),
            "{line}"
        );
        assert!(line.contains("buffer pool 8M (now 128M)"), "{line}");
        // Nothing to reset on an instance already at the study's configuration.
        remember(None);
        let inst = crate::server::Instance { index: 0, ..crate::server::fixtures::inst() };
        manager.remember(vec![crate::server::Instance { settings: ServerSettings::default(), ..inst }]);
        assert!(!configuration(&site, &plain, &[1, 2]).unwrap().unwrap().contains("resets"));
    }

    #[test]
    fn sizes_divide_into_megabytes() {
        assert_eq!(divide_size("4G", 4).unwrap(), "1024M");
        assert_eq!(divide_size("1G", 3).unwrap(), "341M");
        assert!(matches!(divide_size("16M", 4), Err(Invalid::Value(m)) if m.contains("under 8M")));
        assert!(divide_size("lots", 2).is_err());
    }

    #[test]
    fn targets_become_run_options() {
        assert_eq!(target_options("/tmp/a.sock"), vec![("socket", "/tmp/a.sock".into())]);
        assert_eq!(target_options("db1:3307"), vec![("host", "db1".into()), ("port", 3307.into())]);
        assert_eq!(target_options("db2"), vec![("host", "db2".into())]);
    }

    #[test]
    fn split_groups_share_the_data_and_the_sessions() {
        use crate::workload::tpcc::NAME as TPCC;
        let file = r#"
name = "split"
kind = "scale"
workloads = ["TPCC"]
levels = [1, 2, 4]
step_time = 10
[options]
warehouses = 8
[scale]
split = true
threads = 48
buffer_pool = "2G"
"#;
        let spec = StudySpec::from_toml(&file.replace("TPCC", TPCC), "t").unwrap();
        let g: Vec<RunOptions> = group_options(&spec, TPCC, 4).unwrap().into_iter().map(|(_, o)| o).collect();
        assert_eq!(g.len(), 4);
        assert_eq!(g.iter().map(|a| a.target.instance).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert!(g.iter().all(|a| a.threads == 12 && a.workload.tpcc.warehouses == Some(2)));
        assert_eq!(g[3].target.database.as_deref(), Some("tpcc_w2"));
        let one: Vec<RunOptions> = group_options(&spec, TPCC, 1).unwrap().into_iter().map(|(_, o)| o).collect();
        assert_eq!((one[0].threads, one[0].workload.tpcc.warehouses), (48, Some(8)));
        assert_eq!(one[0].target.database.as_deref(), Some("tpcc_w8"));
    }

    #[test]
    fn scale_out_groups_follow_the_route() {
        let file = r#"
name = "out"
kind = "scale-out"
workloads = ["oltp_read_only"]
levels = "1..3"
step_time = 10
[scale]
threads_per_instance = 4
targets = ["10.0.0.1:3306", "10.0.0.2:3306", "10.0.0.3:3306"]
"#;
        let spec = StudySpec::from_toml(file, "t").unwrap();
        let every = scale_out_groups(&spec, "oltp_read_only", 3);
        assert_eq!(
            every.iter().map(|g| (g.1.clone(), g.2)).collect::<Vec<_>>(),
            [(vec![0], 4), (vec![1], 4), (vec![2], 4)]
        );
        let g = group_options(&spec, "oltp_read_only", 2).unwrap();
        assert_eq!(g[1].1.target.host.as_deref(), Some("10.0.0.2"));
        // The split route: writes on the primary throughout, reads on the replicas (on
        // the primary while it is alone).
        let split = StudySpec::from_toml(&format!("{file}route = \"split\"\nwrite_threads = 2\n"), "t").unwrap();
        let one = scale_out_groups(&split, "oltp_read_only", 1);
        assert_eq!(one, [("oltp_write_only".to_string(), vec![0], 2), ("oltp_read_only".to_string(), vec![0], 4)]);
        let three = scale_out_groups(&split, "oltp_read_only", 3);
        assert_eq!(
            three.iter().map(|g| (g.0.as_str(), g.1.clone())).collect::<Vec<_>>(),
            [("oltp_write_only", vec![0]), ("oltp_read_only", vec![1]), ("oltp_read_only", vec![2])]
        );
        // Round robin: one group of 3 x 4 connections dealt over the three nodes, in
        // node order, which `sizeup run` reads as its --target list.
        let rr = StudySpec::from_toml(&format!("{file}route = \"round-robin\"\n"), "t").unwrap();
        assert_eq!(scale_out_groups(&rr, "oltp_read_only", 3), [("oltp_read_only".to_string(), vec![0, 1, 2], 12)]);
        let g = group_options(&rr, "oltp_read_only", 2).unwrap();
        assert_eq!(g.len(), 1);
        assert_eq!((g[0].1.threads, g[0].1.targets.clone()), (8, vec!["10.0.0.1:3306".into(), "10.0.0.2:3306".into()]));
        let req = request::run_request(&g[0].0, &g[0].1).unwrap();
        assert_eq!(
            req.targets.iter().map(|t| t.host.as_deref().unwrap()).collect::<Vec<_>>(),
            ["10.0.0.1", "10.0.0.2"]
        );
        assert_eq!(req.targets[1].port, Some(3306));
        // More levels than nodes, or no nodes at all, is refused before anything runs.
        let e = StudySpec::from_toml(&file.replace("1..3", "1..4"), "t").unwrap_err();
        assert!(matches!(e.what(), Invalid::Value(m) if m.contains("only 3")), "{e}");
        // No nodes named: the running managed cluster is looked up when the study runs.
        assert!(StudySpec::from_toml(&file.replace("targets", "#"), "t").is_ok());
    }
}
