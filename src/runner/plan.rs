//! Running a purchase plan (`sizeup plan`): the host's facts once, then each stage in
//! order, decided by `plan::decide` from what the studies before it found and run as an
//! ordinary stored study (`runner::study`). The plan's state (the host, each stage's
//! decision and study, the time spent) is stored after every stage, so an interrupted
//! plan resumes where it stopped and decides as it would have.

use super::study::{self, Site};
use crate::plan;
use crate::plan::decide::{self, Decision};
use crate::plan::{Earlier, Findings, Found, Host, PlanSpec, PlanState, Stage, StageRecord};
use crate::runner;
use crate::store::{Status, Store};
use crate::study::spec::{Kind, StudySpec};
use crate::Error;
use std::time::Instant;

/// Runs (or, with `resume`, continues) a plan. Returns its exit code and id.
pub fn run(site: &Site, spec: &PlanSpec, resume: Option<i64>) -> Result<(i32, i64), Error> {
    plan::validate(spec).map_err(Error::from)?;
    Store::check_writable(site.results)?;
    let store = Store::open(site.results)?;
    let (id, mut state) = match resume {
        Some(id) => {
            let row = store.load_plan(id)?;
            // A state that cannot be read is said, not silently dropped
            // (a_corrupted_plan_state_is_said): the stages are decided again.
            let state = match serde_json::from_value::<PlanState>(row.state) {
                Ok(state) => state,
                Err(e) => {
                    eprintln!(
                        "note: plan {id}'s stored progress cannot be read ({e}): its stages are decided and run \
                         again (the studies it stored stay in the store)"
                    );
                    PlanState::default()
                }
            };
            (id, state)
        }
        None => {
            (store.begin_plan(&spec.name, &serde_json::to_value(spec).expect("serialisable"))?, PlanState::default())
        }
    };
    let save = |state: &PlanState, status: Status| {
        store.set_plan(id, status, &serde_json::to_value(state).expect("serialisable"))
    };
    save(&state, Status::Running)?;
    // Counted from here, so Ctrl-C in the setup (the data's load) interrupts the plan
    // rather than failing it (ctrl_c_in_a_plans_setup_interrupts_it).
    crate::exec::install_signal_handler();
    let signals_at = crate::exec::signals_received();
    let mut r = run_stages(site, spec, id, &store, &mut state, &save);
    if let Err(e) = &r {
        if crate::exec::signals_received() > signals_at {
            eprintln!("interrupted: {e}");
            crate::exec::interrupt_pending();
            r = Ok(crate::exec::Ended::Interrupted.exit_code());
        }
    }
    match &r {
        Ok(code) if crate::interrupted(*code) => save(&state, Status::Interrupted)?,
        Ok(_) => save(&state, Status::Completed)?,
        Err(e) => {
            state.error = Some(e.to_string());
            save(&state, Status::Failed)?
        }
    }
    r.map(|code| (code, id))
}

fn run_stages(
    site: &Site,
    spec: &PlanSpec,
    id: i64,
    store: &Store,
    state: &mut PlanState,
    save: &dyn Fn(&PlanState, Status) -> Result<(), crate::store::StoreError>,
) -> Result<i32, Error> {
    crate::outln!(
        "plan {id}: {:.0} {} of {}{} within {:.0} s{}",
        spec.target_tps,
        unit(spec),
        spec.workload,
        spec.latency.as_deref().map_or(String::new(), |l| format!(" at {l}")),
        spec.budget_s,
        if state.stages.is_empty() { String::new() } else { format!(" ({:.0} s spent before)", state.spent_s()) }
    );
    let host = match state.host.clone() {
        Some(h) => h,
        None => {
            let t0 = Instant::now();
            let h = host_facts(site, spec)?;
            state.setup_s += t0.elapsed().as_secs_f64();
            state.host = Some(h.clone());
            save(state, Status::Running)?;
            h
        }
    };
    let timing = decide::timing(spec, &host);
    crate::outln!(
        "host: {} CPUs, {} server{}; each study step measures {:.0} s after a {:.0} s warm-up (sized to the budget)",
        host.cpus,
        if host.managed { "a managed" } else { "a named" },
        match (host.data_bytes, host.pool_bytes) {
            (Some(d), Some(p)) => format!(", {:.0} MiB of data, a {:.0} MiB buffer pool", mib(d), mib(p)),
            _ => String::new(),
        },
        timing.step_time,
        timing.warmup
    );
    let mut found = Findings::default();
    for stage in Stage::ALL {
        // Decided before this plan was interrupted: kept, its study resumed if cut short.
        let study = match state.record(stage).cloned() {
            Some(rec) => match rec.study {
                None => {
                    crate::outln!("{}: skipped — {}", stage.name(), rec.why);
                    continue;
                }
                Some(s) => Some(s),
            },
            // Started, but the plan was killed before it could note the study.
            None => store.study_named(&decide::study_name(id, stage))?,
        };
        if let Some(sid) = study {
            let row = store.load_study(sid)?;
            if row.status.cut_short() {
                crate::outln!("{}: resuming study {sid}", stage.name());
                let stored = StudySpec::stored(&row).map_err(Error::from)?;
                let t0 = Instant::now();
                let (r, _) = study::run_with_id(site, &stored, Some(sid));
                add_seconds(state, stage, sid, t0, " and resumed");
                save(state, Status::Running)?;
                if stopped(&r) {
                    return r;
                }
            } else {
                add_seconds(state, stage, sid, Instant::now(), "");
            }
            found.set(stage, found_of(store, sid)?);
            continue;
        }
        let left = spec.budget_s - state.spent_s();
        match decide::decide(stage, spec, id, &host, timing, &found, left) {
            Decision::Skip { why, for_time } => {
                crate::outln!("{}: skipped — {why}", stage.name());
                state.stages.push(StageRecord { stage, study: None, why, for_time, seconds: 0.0 });
                save(state, Status::Running)?;
            }
            Decision::Run { study: planned, why } => {
                crate::outln!("\n{}: {why} (about {:.0} s)", stage.name(), decide::estimate_s(&planned));
                let s = plan::study_spec(spec, id, &planned);
                let t0 = Instant::now();
                let (r, sid) = study::run_with_id(site, &s, None);
                let seconds = t0.elapsed().as_secs_f64();
                let why = match (&r, stage) {
                    // No plan stands without its sweep.
                    (Err(_), Stage::Sweep) => return r,
                    (Err(e), _) => format!("{why}; it failed: {e}"),
                    _ => why,
                };
                state.stages.push(StageRecord { stage, study: sid, why, for_time: false, seconds });
                save(state, Status::Running)?;
                if stopped(&r) {
                    return r;
                }
                if let Some(sid) = sid {
                    found.set(stage, found_of(store, sid)?);
                }
            }
        }
    }
    Ok(0)
}

/// The plan stops here: interrupted (Ctrl-C) between or during a study.
fn stopped(r: &Result<i32, Error>) -> bool {
    matches!(r, Ok(code) if crate::interrupted(*code))
}

/// A stage's record gains the seconds since `t0` (a resumed study).
fn add_seconds(state: &mut PlanState, stage: Stage, sid: i64, t0: Instant, how: &str) {
    let s = t0.elapsed().as_secs_f64();
    match state.stages.iter_mut().find(|r| r.stage == stage) {
        Some(r) => r.seconds += s,
        None => state.stages.push(StageRecord {
            stage,
            study: Some(sid),
            why: format!("its study was found under the plan's name{how}"),
            for_time: false,
            seconds: s,
        }),
    }
}

fn unit(spec: &PlanSpec) -> &'static str {
    match crate::workload::kind(&spec.workload).map(|k| k.unit().label()) {
        Ok(u @ ("NOPM" | "statements/s")) => u,
        _ => "tps",
    }
}

fn mib(b: u64) -> f64 {
    b as f64 / (1u64 << 20) as f64
}

/// The host's CPUs, whether sizeup manages the server, and the data's size against the
/// buffer pool (the data loaded first when missing, as the sweep would).
fn host_facts(site: &Site, spec: &PlanSpec) -> Result<Host, Error> {
    let probe = plan::probe_spec(spec);
    probe.validate().map_err(Error::from)?;
    let series = crate::study::series_of(&probe);
    study::prepare_sweep(site, &probe, &series[0])?;
    let req = probe.request(&spec.workload, 1, site.password.as_deref()).map_err(Error::from)?;
    let managed = !probe.names_a_server() && !runner::complete_target(req.target())?.names_a_server();
    let found = runner::data_and_pool(site.manager, &req)?;
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let (target, _) = runner::resolve_target(site.manager, req.target(), req.workload.kind().default_database())?;
    let path = match &target.socket {
        Some(_) => "a unix socket (no network round trip)".to_string(),
        None if target.host == "localhost" || target.host.starts_with("127.") || target.host == "::1" => {
            format!("TCP over loopback to {}:{} (no network between client and server)", target.host, target.port)
        }
        None => format!("TCP to {}:{}", target.host, target.port),
    };
    let storage = if managed {
        site.manager.running(req.target().instance)?.and_then(|i| storage_words(&i.datadir()))
    } else {
        None
    };
    Ok(Host {
        cpus: runner::cpus(),
        managed,
        data_bytes: found.data,
        pool_bytes: found.pool,
        pool_unused: found.unused,
        memory_bytes: crate::monitor::os::parse_meminfo(&meminfo).map(|(total, _)| total),
        storage,
        path: Some(path),
    })
}

/// "vda, 100 GiB, not rotational": the device a directory's file system lives on.
fn storage_words(dir: &std::path::Path) -> Option<String> {
    let dev = crate::monitor::os::device_of(dir)?;
    let sys = std::fs::canonicalize(format!("/sys/class/block/{dev}")).ok()?;
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok().map(|s| s.trim().to_string());
    // A partition has no queue of its own: its disk's is one directory up.
    let rotational = read(sys.join("queue/rotational")).or_else(|| read(sys.parent()?.join("queue/rotational")));
    let bytes = read(sys.join("size")).and_then(|s| s.parse::<u64>().ok()).map(|sectors| sectors * 512);
    let mut words = vec![dev];
    if let Some(b) = bytes.filter(|b| *b > 0) {
        words.push(format!("{:.0} GiB", b as f64 / (1u64 << 30) as f64));
    }
    match rotational.as_deref() {
        Some("0") => words.push("not rotational (SSD, NVMe or virtual)".into()),
        Some("1") => words.push("rotational, as the kernel reports it".into()),
        _ => {}
    }
    Some(words.join(", "))
}

/// What a stored study found, in the planner's terms.
pub fn found_of(store: &Store, id: i64) -> Result<Found, Error> {
    let row = store.load_study(id)?;
    let spec = StudySpec::stored(&row).map_err(Error::from)?;
    let series = crate::study::results_of(&spec, &row).map_err(Error::from)?;
    let mut f = Found {
        study: id,
        status: row.status,
        error: row.error().map(str::to_string),
        series,
        emulated: emulated(store, &row),
        ..Default::default()
    };
    if spec.kind() == Kind::Rate {
        if let Some(s) = crate::study::series_of(&spec).first() {
            f.rates = crate::study::rate_levels(&row, &s.name);
            let steps = crate::study::completed_steps(&row, &s.name);
            f.rate_watts = steps.iter().filter_map(|(l, f)| Some((*l, f.observed.os.as_ref()?.watts?))).collect();
            f.rate_os = steps.into_iter().filter_map(|(l, f)| Some((l, f.observed.os?))).collect();
        }
    }
    Ok(f)
}

/// Every stage's findings from a stored plan's state.
pub fn findings_of(store: &Store, state: &PlanState) -> Result<Findings, Error> {
    let mut found = Findings::default();
    for r in &state.stages {
        if let Some(sid) = r.study {
            found.set(r.stage, found_of(store, sid)?);
        }
    }
    Ok(found)
}

/// How many earlier runs of the same measurement a plan's range takes in.
const EARLIER_RUNS: usize = 3;

/// The newest earlier completed plans (before `id`) that measured what `spec` does on
/// the host `state` records, with their one-server ranges.
pub fn earlier_runs(store: &Store, id: i64, spec: &PlanSpec, state: &PlanState) -> Result<Vec<Earlier>, Error> {
    let Some(host) = state.host.as_ref() else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for row in
        store.list_plans()?.into_iter().rev().filter(|r| r.id < id && r.status == crate::store::Status::Completed)
    {
        let (Ok(s), Ok(st)) = (
            serde_json::from_value::<PlanSpec>(row.spec.clone()),
            serde_json::from_value::<PlanState>(row.state.clone()),
        ) else {
            continue;
        };
        if !spec.measures_like(&s) || !st.host.as_ref().is_some_and(|h| h.same_as(host)) {
            continue;
        }
        let found = findings_of(store, &st)?;
        let pool = st.host.as_ref().and_then(|h| h.pool_bytes);
        if let Ok(p) = crate::plan::purchase::purchase(&s, &found, &st.stages, pool) {
            out.push(Earlier {
                plan: row.id,
                started_at: row.started_at.clone(),
                at_objective: p.at_objective,
                range: p.per_instance_range,
            });
        }
        if out.len() == EARLIER_RUNS {
            break;
        }
    }
    Ok(out)
}

/// The lab label of a study's runs ("emulated (node CPU quota 0.3, ...)"), when they ran
/// on lab nodes.
pub fn emulated(store: &Store, row: &crate::store::StudyRow) -> Option<String> {
    let run = row.steps.iter().find(|s| s.status == crate::store::Status::Completed)?.runs.first()?;
    let doc = store.load_run(*run).ok()?;
    doc.config.server.emulated().map(str::to_string)
}
