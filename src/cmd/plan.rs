//! `sizeup plan`: the command line (or a plan file) becomes a `PlanSpec`, the plan
//! runner (`runner::plan`) runs its studies, and the plan is printed and written as one
//! HTML report with the studies' sections under it.

use super::report::{now_utc, study_item, write_file};
use super::Context;
use crate::cli::PlanArgs;
use crate::plan::{purchase, PlanSpec, PlanState};
use crate::runner::study::Site;
use crate::store::{self, Store};
use crate::{report, runner, Error};
use std::path::{Path, PathBuf};

pub fn plan(cx: &Context, a: &PlanArgs) -> Result<i32, Error> {
    if a.list {
        let store = Store::open_read_only(&cx.results)?;
        for row in store.list_plans()? {
            crate::outln!("{:>4}  {:<11} {}  {}", row.id, row.status, row.started_at, row.name);
        }
        return Ok(0);
    }
    if let Some(id) = a.show {
        let store = Store::open_read_only(&cx.results)?;
        let id = match id {
            0 => store.list_plans()?.last().map(|p| p.id).ok_or_else(|| {
                Error::Usage("no plans stored yet: run `sizeup plan --target-tps T --budget 10m`".into())
            })?,
            id => id,
        };
        return show(cx, id, a.html.as_deref()).map(|(_, answered)| exit_code(answered));
    }
    super::keep_agent_token(&a.target);
    let site = Site { manager: &cx.manager, results: &cx.results, password: a.target.password.clone() };
    let (spec, resume) = match (a.resume, &a.file) {
        (Some(id), _) => {
            let row = Store::open_read_only(&cx.results)?.load_plan(id)?;
            match row.status {
                store::Status::Completed => {
                    crate::outln!("plan {id} is complete; nothing to resume");
                    return show(cx, id, a.html.as_deref()).map(|(_, answered)| exit_code(answered));
                }
                store::Status::Running => {
                    return Err(Error::Usage(format!(
                        "plan {id} is still running in another sizeup process; stop that one first"
                    )))
                }
                _ => {}
            }
            let spec: PlanSpec = serde_json::from_value(row.spec)
                .map_err(|e| Error::Failed(format!("plan {id}'s stored request cannot be read: {e}")))?;
            (spec, Some(id))
        }
        (None, Some(file)) => (read_file(file)?, None),
        (None, None) => (spec_of(a)?, None),
    };
    run_spec(cx, &site, &spec, resume, a.html.as_deref())
}

/// Runs a plan (new or resumed), then prints it and writes its report.
pub fn run_spec(
    cx: &Context,
    site: &Site,
    spec: &PlanSpec,
    resume: Option<i64>,
    html: Option<&Path>,
) -> Result<i32, Error> {
    let (code, id) = runner::plan::run(site, spec, resume)?;
    let (_, answered) = show(cx, id, html)?;
    if crate::interrupted(code) {
        crate::outln!("the finished studies are kept: `sizeup plan --resume {id}` continues it");
        return Ok(code);
    }
    Ok(if code == 0 { exit_code(answered) } else { code })
}

/// "No plan" is a failure to answer: non-zero, so a script never takes it for a plan.
fn exit_code(answered: bool) -> i32 {
    if answered {
        0
    } else {
        1
    }
}

/// A plan file (`kind = "plan"`), also taken by `sizeup study run`.
pub fn read_file(file: &Path) -> Result<PlanSpec, Error> {
    let text = crate::user_file::read_to_string(file, crate::user_file::TEXT_LIMIT, "a plan file is a few KiB")
        .map_err(|e| Error::Usage(format!("cannot read plan file {}: {e}", file.display())))?;
    crate::plan::from_toml(&text, &file.display().to_string()).map_err(Error::from)
}

fn spec_of(a: &PlanArgs) -> Result<PlanSpec, Error> {
    // A capture's plan: its workload is the capture, its target the growth times its
    // captured rate (statements a second).
    let (workload, target_tps) = match (&a.replay, a.growth) {
        (Some(capture), Some(growth)) => {
            let path = super::replay::capture_path(capture)?;
            if !(growth.is_finite() && growth > 0.0) {
                return Err(Error::Usage(format!(
                    "--growth {growth}: give a factor of the captured traffic above 0, e.g. 3"
                )));
            }
            let read_only = a.workload_args.oltp.read_only;
            let rate = crate::workload::replay::load(&path, read_only)?.rate();
            (path, growth * rate)
        }
        _ => (
            a.workload.clone(),
            a.target_tps.expect("clap requires it without --resume, --show, --list, --file or --replay"),
        ),
    };
    let budget_s = crate::plan::parse_budget(&a.budget).map_err(Error::from)?;
    let cost = a.cost.as_deref().map(crate::cost::CostInputs::parse).transpose().map_err(Error::from)?;
    let options = crate::options::RunOptions {
        target: a.target.clone(),
        workload: a.workload_args.clone(),
        session: a.session.clone(),
        write_foreign_tables: a.write_foreign_tables,
        ..Default::default()
    }
    .changed();
    // Given again, an objective adds to the others (a repeated one is refused when parsed).
    let latency = (!a.latency.is_empty()).then(|| a.latency.join(","));
    let spec = PlanSpec {
        name: a.name.clone().unwrap_or_else(|| {
            format!(
                "plan {workload} {}{}",
                a.growth.map_or(format!("{target_tps}"), |g| format!("{g}x")),
                latency.as_deref().map_or(String::new(), |l| format!(" at {l}"))
            )
        }),
        target_tps,
        latency,
        workload,
        options,
        script_options: Default::default(),
        cost,
        power: crate::study::spec::PowerSpec { model: a.power.power_model.clone(), watts: a.power.watts },
        cluster: a.cluster,
        efficiency: a.efficiency,
        memory_price: a.memory_price,
        budget_s,
        growth: a.growth,
    };
    crate::plan::validate(&spec).map_err(Error::from)?;
    Ok(spec)
}

/// Prints a stored plan and writes its HTML report (the plan, then its studies);
/// returns the report's path and whether there was a plan.
fn show(cx: &Context, id: i64, html: Option<&Path>) -> Result<(PathBuf, bool), Error> {
    let store = Store::open_read_only(&cx.results)?;
    let row = store.load_plan(id)?;
    let spec: PlanSpec = serde_json::from_value(row.spec.clone())
        .map_err(|e| Error::Failed(format!("plan {id}'s stored request cannot be read: {e}")))?;
    let state: PlanState = serde_json::from_value(row.state.clone()).unwrap_or_default();
    let mut found = runner::plan::findings_of(&store, &state)?;
    found.earlier = runner::plan::earlier_runs(&store, id, &spec, &state)?;
    let pool = state.host.as_ref().and_then(|h| h.pool_bytes);
    let answer = purchase::purchase(&spec, &found, &state.stages, pool);
    crate::out!("{}", report::plan::text(id, row.status, &spec, &state, &answer));
    let items =
        state.stages.iter().filter_map(|r| r.study).map(|s| study_item(&store, s)).collect::<Result<Vec<_>, _>>()?;
    let preamble = report::plan::html(id, row.status, &spec, &state, &answer);
    let page = report::html::report_with(&format!("sizeup plan {id}"), &preamble, &items, &now_utc(), None);
    let path = match html {
        Some(p) => p.to_path_buf(),
        None => cx.results.parent().unwrap_or(Path::new(".")).join(format!("plan-{id}.html")),
    };
    write_file(&path, &page)?;
    crate::outln!("report: {} (open it in a browser)", path.display());
    Ok((path, answer.is_ok()))
}
