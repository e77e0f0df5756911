//! `sizeup sweep|scale|study|demo`: studies, many runs that answer one capacity
//! question. The command line becomes a `StudySpec` (as a study file does) and the
//! study runner (`crate::study`) runs it.

use super::{load_study, write_out, Context};
use crate::cli::{CapacityArgs, DemoArgs, ExportArgs, MemoryArgs, ScaleArgs, ScaleOutArgs, StudyCommand, SweepArgs};
use crate::runner::study::{self, Site};
use crate::study::spec::{self, Levels, PowerSpec, Section, StudySpec};
use crate::{report, store, Error};

fn site<'a>(cx: &'a Context, target: Option<&crate::options::TargetArgs>) -> Site<'a> {
    if let Some(t) = target {
        super::keep_agent_token(t);
    }
    Site { manager: &cx.manager, results: &cx.results, password: target.and_then(|t| t.password.clone()) }
}

/// The study a `sizeup sweep` or `sizeup scale` command line describes.
fn spec_of(section: Section, workload: &str, levels: &str, a: &crate::cli::StudyArgs, name: String) -> StudySpec {
    StudySpec {
        name: a.name.clone().unwrap_or(name),
        description: String::new(),
        section,
        workloads: vec![workload.to_string()],
        levels: Levels::Text(levels.to_string()),
        step_time: a.step_time,
        warmup: a.warmup,
        repeat: a.repeat,
        sample_interval: a.sample_interval,
        steady_last: a.steady_last,
        stop_when: a.stop_when.clone(),
        options: a.run_options().changed(),
        server: Default::default(),
        configs: Vec::new(),
        scale: Default::default(),
        power: PowerSpec { model: a.power.power_model.clone(), watts: a.power.watts },
        cost: None,
        script_options: a.workload_args.script_options.iter().map(|(k, v)| (k.clone(), v.as_str().into())).collect(),
    }
}

pub fn sweep(cx: &Context, a: &SweepArgs) -> Result<i32, Error> {
    let name = format!("sweep {} {}", a.workload, a.threads);
    let spec = spec_of(Section::Sweep, &a.workload, &a.threads, &a.study, name);
    study::run(&site(cx, Some(&a.study.target)), &spec, None)
}

pub fn capacity(cx: &Context, a: &CapacityArgs) -> Result<i32, Error> {
    // Given again, an objective adds to the others (a repeated one is refused when parsed).
    let latency = a.latency.join(",");
    if a.rates.trim().is_empty() {
        return Err(Error::Usage("--rates is empty: give rates (500,1000 or 500..4000+500), or `auto`".into()));
    }
    let workload = match (&a.workload, &a.replay) {
        (_, Some(capture)) => super::replay::capture_path(capture)?,
        (Some(w), None) => w.clone(),
        (None, None) => return Err(Error::Usage("give a workload, or --replay CAPTURE".into())),
    };
    let name = format!("capacity {workload} {latency}");
    let rate = spec::RateSpec {
        latency,
        resolution: a.resolution,
        connections: a.connections,
        probe_threads: a.probe_threads,
        max_levels: a.max_levels,
    };
    let spec = spec_of(Section::Rate(rate), &workload, &a.rates, &a.study, name);
    study::run(&site(cx, Some(&a.study.target)), &spec, None)
}

pub fn memory(cx: &Context, a: &MemoryArgs) -> Result<i32, Error> {
    let name = format!("memory {} {} {}", a.workload, a.vary_word(), a.levels);
    let memory = spec::MemorySpec {
        vary: a.vary,
        buffer_pool: a.buffer_pool.clone(),
        threads: a.threads,
        max_warmup: a.max_warmup,
    };
    let spec = spec_of(Section::Memory(memory), &a.workload, &a.levels, &a.study, name);
    study::run(&site(cx, Some(&a.study.target)), &spec, None)
}

pub fn scale(cx: &Context, a: &ScaleArgs) -> Result<i32, Error> {
    let name = format!("scale {} {} instances", a.workload, a.instances);
    let mut spec = spec_of(Section::Scale, &a.workload, &a.instances, &a.study, name);
    spec.scale = spec::ScaleSpec {
        threads_per_instance: a.threads_per_instance,
        threads: a.threads,
        buffer_pool_per_instance: a.buffer_pool_per_instance.clone(),
        split: a.split,
        buffer_pool: a.buffer_pool.clone(),
        targets: a.targets.clone(),
        ..Default::default()
    };
    spec.server.set = a.set.clone();
    study::run(&site(cx, Some(&a.study.target)), &spec, None)
}

pub fn scale_out(cx: &Context, a: &ScaleOutArgs) -> Result<i32, Error> {
    let name = format!("scale-out {} {} nodes", a.workload, a.nodes);
    let mut spec = spec_of(Section::ScaleOut { cluster: None }, &a.workload, &a.nodes, &a.study, name);
    spec.scale = spec::ScaleSpec {
        threads_per_instance: Some(a.threads_per_node),
        targets: a.targets.clone(),
        route: a.route,
        write_workload: (a.route == spec::Route::Split).then(|| a.write_workload.clone()),
        write_threads: a.write_threads,
        ..Default::default()
    };
    study::run(&site(cx, Some(&a.study.target)), &spec, None)
}

pub fn study(cx: &Context, cmd: StudyCommand) -> Result<i32, Error> {
    match cmd {
        StudyCommand::Run { file } => {
            let text =
                crate::user_file::read_to_string(&file, crate::user_file::TEXT_LIMIT, "a study file is a few KiB")
                    .map_err(|e| Error::Usage(format!("cannot read study file {}: {e}", file.display())))?;
            // A plan file runs as `sizeup plan --file` does.
            let kind =
                toml::from_str::<toml::Table>(&text).ok().and_then(|t| t.get("kind")?.as_str().map(str::to_string));
            if kind.as_deref() == Some("plan") {
                let plan = super::plan::read_file(&file)?;
                return super::plan::run_spec(cx, &site(cx, None), &plan, None, None);
            }
            let spec = StudySpec::from_toml(&text, &file.display().to_string()).map_err(Error::from)?;
            study::run(&site(cx, None), &spec, None)
        }
        StudyCommand::Resume { id } => {
            let (row, spec, series) = load_study(&store::Store::open_read_only(&cx.results)?, id)?;
            match row.status {
                store::Status::Completed => {
                    crate::outln!("study {id} is complete; nothing to resume");
                    crate::out!("{}", report::study_text(&spec, &row, &series));
                    Ok(0)
                }
                store::Status::Running => Err(Error::Usage(format!(
                    "study {id} is still running in another sizeup process; stop that one first"
                ))),
                _ => study::run(&site(cx, None), &spec, Some(id)),
            }
        }
        StudyCommand::Show { id, json } => {
            let store = store::Store::open_read_only(&cx.results)?;
            let id = match id {
                Some(id) => id,
                None => store.list_studies()?.last().map(|s| s.id).ok_or_else(|| {
                    Error::Usage(
                        "no studies stored yet: run `sizeup sweep`, `sizeup scale` or `sizeup study run FILE`".into(),
                    )
                })?,
            };
            if json {
                crate::outln!("{}", serde_json::to_string_pretty(&store.load_study(id)?).expect("serialisable"));
                return Ok(0);
            }
            let (row, spec, series) = load_study(&store, id)?;
            crate::outln!(
                "study {} — {} — {} ({}, started {})",
                row.id,
                row.name,
                row.status,
                row.kind,
                row.started_at
            );
            // Not only in --json: a failed study says why where it is shown.
            if let Some(e) = row.error() {
                crate::outln!("it failed: {e}");
            }
            if !spec.description.is_empty() {
                crate::outln!("{}", spec.description.trim());
            }
            // The configuration it ran with, and what the reader must know beside it.
            let said = |k: &str| row.result.as_ref().and_then(|r| r.get(k).cloned());
            if let Some(c) = said("configuration").and_then(|c| c.as_str().map(str::to_string)) {
                crate::outln!("configuration: {c}");
            }
            let notes: Vec<String> = said("notes").and_then(|n| serde_json::from_value(n).ok()).unwrap_or_default();
            for n in notes {
                crate::outln!("note: {n}");
            }
            crate::out!("{}", report::study_text(&spec, &row, &series));
            let runs: Vec<i64> = row.steps.iter().flat_map(|s| s.runs.iter().copied()).collect();
            // In order: a step's groups store their runs as they finish ("runs: 59 61 60").
            crate::outln!("\n{}", report::run_ids(&runs));
            Ok(0)
        }
        StudyCommand::Export(ExportArgs { id, format, output }) => {
            let (row, spec, series) = load_study(&store::Store::open_read_only(&cx.results)?, id)?;
            write_out(output.as_deref(), &report::export::study(&row, &series, spec.level_name(), format))?;
            Ok(0)
        }
        StudyCommand::List => {
            let store = store::Store::open_read_only(&cx.results)?;
            crate::out!("{}", report::studies_table(&store.list_studies()?));
            Ok(0)
        }
    }
}

/// The README's first command ends here: a short connection sweep on the managed
/// default instance, stored as a study, so a newcomer sees a finished study within a
/// minute or two. Tables already prepared at the demo's size are reused.
pub fn demo(cx: &Context, a: &DemoArgs) -> Result<i32, Error> {
    let options = [("tables", serde_json::json!(4)), ("table-size", serde_json::json!(a.table_size))];
    let spec = StudySpec {
        name: "demo: oltp_read_write connection sweep".into(),
        description: String::new(),
        section: Section::Sweep,
        workloads: vec!["oltp_read_write".into()],
        levels: Levels::List(vec![1, 2, 4, 8]),
        step_time: a.step_time,
        warmup: 1.0,
        repeat: 1,
        sample_interval: 1.0_f64.min(a.step_time),
        steady_last: 1.0,
        stop_when: String::new(),
        options: options.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        server: Default::default(),
        configs: Vec::new(),
        scale: Default::default(),
        power: Default::default(),
        cost: None,
        script_options: Default::default(),
    };
    let code = study::run(&site(cx, None), &spec, None)?;
    if code == 0 {
        // A newcomer sees the charts: the study's report, next to the results store.
        let store = store::Store::open(&cx.results)?;
        if let Some(last) = store.list_studies()?.last() {
            let item = super::report::study_item(&store, last.id)?;
            let path = cx.manager.home().join("demo-report.html");
            let html = crate::report::html::report(&[item], &super::report::now_utc(), None);
            super::report::write_file(&path, &html)?;
            crate::outln!("report: {} (open it in a browser)", path.display());
        }
        crate::outln!("the managed server keeps running (`sizeup server stop`)");
    }
    Ok(code)
}
