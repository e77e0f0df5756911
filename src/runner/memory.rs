//! Running a memory study's level (`sizeup memory`): the managed instance restarted
//! with the level's buffer pool, cold (no pool dump loaded at start) and with direct I/O
//! so the OS page cache cannot hide its misses; the level's data loaded when missing; a
//! warm-up run that ends when the hit ratio settles (`max_warmup` its bound); then the
//! measured run. The pool, the data and the warm-up go into the step's figures, the
//! page-cache check once the figures are in (`study::memory::page_cache`).

use super::driver::{At, Grid, Measured, Screen, StudyKind};
use super::study::{not_capacity, Site};
use crate::exec::{clock::Settle, Ended};
use crate::runner::{self, observe};
use crate::server::ServerSettings;
use crate::stats::Interval;
use crate::study::memory::{self, MemoryLevel};
use crate::study::spec::ManagedSettings;
use crate::study::spec::{Levels, StudySpec, Vary};
use crate::study::Series;
use crate::Error;

/// How long each of the two windows the warm-up's hit ratio is compared over lasts.
const SETTLE_WINDOW_S: f64 = 5.0;

/// Server settings a memory level needs unless the study names them itself: direct
/// I/O (the page cache kept out) and a cold pool at every start.
pub(super) const COLD_AND_DIRECT: [(&str, &str); 3] = [
    ("innodb_flush_method", "O_DIRECT"),
    ("innodb_buffer_pool_load_at_startup", "OFF"),
    ("innodb_buffer_pool_dump_at_shutdown", "OFF"),
];

/// The managed settings of a level; None for a server sizeup does not manage.
pub(super) fn settings(site: &Site, spec: &StudySpec, level: u32) -> Result<Option<ServerSettings>, Error> {
    let req = spec.memory_request(&spec.workloads[0], level, None).map_err(Error::from)?;
    if spec.names_a_server() || runner::complete_target(req.target())?.names_a_server() {
        return Ok(None);
    }
    let m = spec.memory_spec();
    let mut server = spec.server.clone();
    match m.vary {
        Vary::Pool => server.buffer_pool = Some(format!("{level}M")),
        Vary::Data => server.buffer_pool = m.buffer_pool.clone().or(server.buffer_pool),
    }
    for (k, v) in COLD_AND_DIRECT {
        if !server.set.iter().any(|s| s.split('=').next().map(str::trim) == Some(k)) {
            server.set.push(format!("{k}={v}"));
        }
    }
    let (base, _) = super::study::study_base(site.manager)?;
    server.settings_on(base).map(Some).map_err(Error::from)
}

/// Every level's pool fits the host and its connections the level's server, checked
/// before the study is stored or an instance restarted for it
/// (memory_checks_come_before_anything_runs: `--threads 9999` was refused after a restart).
pub fn check_levels(site: &Site, spec: &StudySpec) -> Result<(), Error> {
    let threads = spec.memory_spec().threads();
    for level in spec.level_values().map_err(Error::from)? {
        if let Some(s) = settings(site, spec, level)? {
            crate::server::check_memory(&s, 1, false).map_err(|e| Error::Usage(e.to_string()))?;
            runner::connection_limit(threads, s.max_connections, "give fewer --threads")?;
        }
    }
    Ok(())
}

/// What a memory study changes on its managed instance (the pool, direct I/O, a cold
/// start), put back when the study ends however it ends (a_memory_study_leaves_its_pool:
/// instance 0 stayed on the last level's 16 MiB pool and O_DIRECT, and a later plan on
/// the same home found "the buffer pool ran out").
pub struct Restore<'a> {
    manager: &'a crate::server::Manager,
    instance: u32,
    before: ServerSettings,
    was_running: bool,
}

impl<'a> Restore<'a> {
    /// The instance's settings now, for a study that restarts a managed instance; None
    /// for a server sizeup does not manage.
    pub fn capture(site: &Site<'a>, spec: &StudySpec) -> Result<Option<Restore<'a>>, Error> {
        let Some(first) = spec.level_values().map_err(Error::from)?.first().copied() else { return Ok(None) };
        if settings(site, spec, first)?.is_none() {
            return Ok(None);
        }
        let req = spec.memory_request(&spec.workloads[0], first, None).map_err(Error::from)?;
        let instance = req.target().instance;
        let running = site.manager.running(instance)?;
        let before = match (&running, site.manager.settings_of(instance)?) {
            (Some(i), _) => i.settings.clone(),
            (None, Some(s)) => s,
            (None, None) => super::study::study_base(site.manager)?.0,
        };
        Ok(Some(Restore { manager: site.manager, instance, before, was_running: running.is_some() }))
    }
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        let Ok(now) = self.manager.settings_of(self.instance) else { return };
        if now.as_ref() == Some(&self.before) {
            return;
        }
        let words = crate::server::settings_words(&self.before).join(", ");
        let done = self.manager.start_with(self.instance + 1, &self.before).and_then(|_| match self.was_running {
            true => Ok(()),
            false => self.manager.stop(Some(self.instance), false).map(|_| ()),
        });
        match done {
            Ok(_) => crate::outln!(
                "instance {}: restored to the settings it had before the study ({words}){}",
                self.instance,
                if self.was_running { "" } else { ", and stopped again" }
            ),
            Err(e) => eprintln!(
                "instance {} keeps the study's last settings: restoring {words} failed ({e}); \
                 `sizeup server stop` then `sizeup server start` puts it back",
                self.instance
            ),
        }
    }
}

/// `auto` pool levels made concrete from the data's size (the largest of the study's
/// workloads'), loading the data first when missing; the study is stored with them, so
/// a resumed study runs the same levels. Any other spec is returned as it is.
pub fn resolve_levels(site: &Site, spec: &StudySpec) -> Result<StudySpec, Error> {
    if !spec.finds_pools() {
        return Ok(spec.clone());
    }
    let mut most = 0;
    for w in &spec.workloads {
        let req = spec.memory_request(w, 0, site.password.as_deref()).map_err(Error::from)?;
        runner::ensure_prepared(site.manager, &req)?;
        let bytes = runner::data_and_pool(site.manager, &req)?.data;
        most = most.max(bytes.ok_or_else(|| {
            Error::Failed(format!(
                "the server did not say how large {}'s data is: give the pools (--pools 128M,64M)",
                w
            ))
        })?);
    }
    let pools = memory::auto_pools(most);
    crate::outln!(
        "pools found from the data's {:.0} MiB: {}",
        most as f64 / (1u64 << 20) as f64,
        pools.iter().map(|p| format!("{p}M")).collect::<Vec<_>>().join(", ")
    );
    let mut resolved = spec.clone();
    resolved.levels = Levels::List(pools);
    resolved.validate().map_err(Error::from)?;
    Ok(resolved)
}

/// Buffer-pool sizes with the data fixed (or data sizes with the pool fixed), each
/// level on a restarted server warmed until its hit ratio settles.
pub struct Memory<'a> {
    pub grid: Grid,
    pub site: &'a Site<'a>,
}

impl StudyKind for Memory<'_> {
    fn grid(&self) -> &Grid {
        &self.grid
    }

    fn what(&self, _series: &Series, level: u32) -> String {
        format!("{level} {}", self.grid.spec.level_name())
    }

    fn step(&self, series: &Series, at: At, screen: &Screen) -> Result<Measured, Error> {
        step(self.site, &self.grid.spec, series, at.level, screen.bar, screen.label)
    }
}

/// One level: the restart, the data, the warm-up and the measured run. Returns the
/// step's documents (the measured run's; the warm-up's when it ended the step), how it
/// ended, and the level's memory facts when it was measured.
fn step(
    site: &Site,
    spec: &StudySpec,
    series: &Series,
    level: u32,
    bar: &indicatif::ProgressBar,
    label: &str,
) -> Result<Measured, Error> {
    let m = spec.memory_spec();
    let password = site.password.as_deref();
    let req = spec.memory_request(&series.workload, level, password).map_err(Error::from)?;
    let managed = settings(site, spec, level)?;
    // A restart every level, repeats too: each warms a cold pool the same way.
    let restart = |s: &ServerSettings| -> Result<(), Error> {
        let instance = req.target().instance;
        crate::server::check_memory(s, 1, false).map_err(|e| Error::Usage(e.to_string()))?;
        site.manager.stop(Some(instance), false)?;
        site.manager.start_with(instance + 1, s)?;
        Ok(())
    };
    if let Some(s) = &managed {
        restart(s)?;
    }
    // Data loaded now passed through the pool: cold again before the warm-up.
    if runner::ensure_prepared(site.manager, &req)? {
        if let Some(s) = &managed {
            restart(s)?;
        }
    }
    // The warm-up: the same load, ended by the settled hit ratio or its bound.
    let mut warm = spec.clone();
    warm.warmup = 0.0;
    warm.step_time = m.max_warmup();
    warm.sample_interval = 1.0_f64.min(m.max_warmup() / 4.0).max(0.1);
    let mut warm_req = warm.memory_request(&series.workload, level, password).map_err(Error::from)?;
    warm_req.spec.settle = Some(Settle::new(SETTLE_WINDOW_S, warm.sample_interval));
    let warming = |iv: &Interval| {
        let hit = iv.status.as_ref().and_then(|s| s.buffer_pool_hit_ratio);
        bar.set_message(format!(
            "{label} · warming the pool {:.0}/{:.0} s · {:.0} tps{}",
            iv.t,
            m.max_warmup(),
            iv.tps,
            hit.map_or(String::new(), |h| format!(" · hit ratio {:.2} %", h * 100.0))
        ))
    };
    let (doc, ended) = runner::measure(site.manager, site.results, warm_req, &observe::Progress(&warming))?;
    if ended != Ended::Completed || not_capacity(std::slice::from_ref(&doc), ended).is_some() {
        return Ok(Measured::one((doc, ended)));
    }
    let summary = doc.summary.as_ref();
    let settled = summary.is_some_and(|s| s.settled_after_s.is_some());
    let warmup_s = summary.map_or(0.0, |s| s.seconds);
    let warmup_run = doc.id;
    bar.suspend(|| {
        crate::outln!(
            "{label}: warm-up {warmup_s:.0} s ({}){}",
            if settled { "the hit ratio settled" } else { "its bound: the hit ratio had not settled" },
            warmup_run.map_or(String::new(), |r| format!(", run {r}"))
        )
    });
    let measured = |iv: &Interval| {
        bar.set_message(format!(
            "{label} · {:.0}/{:.0} s · {:.0} tps{}",
            iv.t,
            spec.warmup + spec.step_time,
            iv.tps,
            if iv.warmup { " (warm-up)" } else { "" }
        ))
    };
    let (doc, ended) = runner::measure(site.manager, site.results, req, &observe::Progress(&measured))?;
    let fact = |name: &str| doc.config.server.variable(name);
    let level_facts = MemoryLevel {
        pool_bytes: doc.config.pool_bytes(),
        data_bytes: doc.config.data_bytes(),
        warmup_s,
        settled,
        warmup_run,
        flush_method: fact("innodb_flush_method").filter(|v| !v.is_empty()),
        page_cache: None,
    };
    Ok(Measured { docs: vec![doc], ended, memory: Some(level_facts) })
}
