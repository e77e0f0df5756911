//! `sizeup report` (one offline HTML file) and `sizeup compare` (two runs or two
//! studies with significance verdicts).

use super::{load_study, parse_ref, Context, Ref};
use crate::cli::{CompareArgs, ReportArgs};
use crate::report::{self, compare::Steps, html::Item};
use crate::store::Store;
use crate::Error;

pub fn report(cx: &Context, a: &ReportArgs) -> Result<i32, Error> {
    let store = Store::open_read_only(&cx.results)?;
    let items = a.items.iter().map(|i| item(&store, i)).collect::<Result<Vec<_>, _>>()?;
    if a.target_tps.is_some_and(|t| !t.is_finite() || t <= 0.0)
        || !(0.0..=1.0).contains(&a.efficiency)
        || a.efficiency == 0.0
    {
        return Err(Error::Usage("--target-tps must be above 0 and --efficiency in (0, 1]".into()));
    }
    let sizing = a.target_tps.map(|target| report::html::Sizing { target, efficiency: a.efficiency });
    let html = report::html::report(&items, &now_utc(), sizing);
    write_file(&a.html, &html)?;
    crate::outln!("wrote {} ({} item(s))", a.html.display(), items.len());
    Ok(0)
}

pub(super) fn study_item(store: &Store, id: i64) -> Result<Item, Error> {
    let (row, spec, series) = load_study(store, id)?;
    // Each series' first run: its configuration's settings as the server had them.
    let mut samples = Vec::new();
    for s in &series {
        let run = row.steps.iter().filter(|st| st.series == s.name).flat_map(|st| st.runs.first()).next();
        if let Some(doc) = run.and_then(|&r| store.load_run(r).ok()) {
            samples.push((s.name.clone(), doc));
        }
    }
    Ok(Item::Study { row: Box::new(row), spec: Box::new(spec), series, samples })
}

fn item(store: &Store, s: &str) -> Result<Item, Error> {
    match parse_ref(s)? {
        Ref::Run(id) => Ok(Item::Run(Box::new(store.load_run(id)?))),
        Ref::Study(id) => study_item(store, id),
    }
}

pub(super) fn write_file(path: &std::path::Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|e| Error::Failed(format!("cannot write {}: {e}", path.display())))
}

/// The time now as ISO 8601 UTC, without a date crate.
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

pub fn compare(cx: &Context, a: &CompareArgs) -> Result<i32, Error> {
    let store = Store::open_read_only(&cx.results)?;
    let (comparison, items) = match (parse_ref(&a.a)?, parse_ref(&a.b)?) {
        (Ref::Run(x), Ref::Run(y)) => {
            let (da, db) = (store.load_run(x)?, store.load_run(y)?);
            let c = report::compare::runs(&da, &db).map_err(Error::from)?;
            (c, vec![Item::Run(Box::new(da)), Item::Run(Box::new(db))])
        }
        (Ref::Study(x), Ref::Study(y)) => {
            let load = |id: i64| -> Result<(Item, Steps), Error> {
                let item = study_item(&store, id)?;
                let Item::Study { row, .. } = &item else { unreachable!("a study item") };
                // Each level's steps (repeats), each with its runs (instances).
                let mut steps = Steps::new();
                for st in row.steps.iter().filter(|s| s.status == crate::store::Status::Completed) {
                    let runs = st.runs.iter().map(|&r| store.load_run(r)).collect::<Result<Vec<_>, _>>()?;
                    steps.entry((st.series.clone(), st.level)).or_default().push(runs);
                }
                Ok((item, steps))
            };
            let ((ia, ra), (ib, rb)) = (load(x)?, load(y)?);
            let c = report::compare::studies(&ia, &ra, &ib, &rb).map_err(Error::from)?;
            (c, vec![ia, ib])
        }
        _ => return Err(Error::Usage("compare two runs or two studies, not one of each".into())),
    };
    if let Some(path) = &a.html {
        write_file(path, &report::compare::html(&comparison, items, &now_utc()))?;
    }
    crate::out!("{}", report::compare::table(&comparison));
    Ok(0)
}
