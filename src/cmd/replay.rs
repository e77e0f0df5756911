//! `sizeup replay CAPTURE --speed 1,2,4`: a capture played back, one stored run per
//! speed, through the same runner as `sizeup run` (the connection and output options
//! are run's). The capture sets the connections (one per captured session) and how
//! long each run lasts (its span at that speed, with room for the last statements).

use super::Context;
use crate::cli::ReplayArgs;
use crate::error::Invalid;
use crate::exec::Ended;
use crate::workload::replay;
use crate::{request, runner, Error};

pub fn replay(cx: &Context, a: &ReplayArgs) -> Result<i32, Error> {
    let speeds = speeds(&a.speed)?;
    let path = a.capture.to_string_lossy().into_owned();
    let read_only = a.options.workload.oltp.read_only;
    let schedule = replay::load(&path, read_only)?;
    let span_s = schedule.span_us as f64 / 1e6;
    crate::outln!(
        "{path}: {} sessions ({} at once at most), {} statements over {span_s:.1} s{}",
        schedule.sessions.len(),
        schedule.most_at_once,
        schedule.statements,
        if read_only {
            format!("; --read-only left out {} that change data", schedule.writes_left_out)
        } else {
            String::new()
        }
    );
    if a.prepare_from_schema {
        prepare_from_schema(cx, a, &path, &schedule)?;
    }
    let mut worst = 0;
    for &speed in &speeds {
        let mut options = a.options.clone();
        replay::run_options(&mut options, &path, schedule.clone(), speed)?;
        if speeds.len() > 1 {
            options.json = a.options.json.as_deref().map(|p| with_speed(p, speed));
        }
        let request = request::run_request(&path, &options).map_err(Error::from)?;
        crate::outln!(
            "\nreplay at {speed}x: {:.0} statements a second due over {:.1} s",
            schedule.statements as f64 / (span_s / speed).max(1e-6),
            span_s / speed
        );
        let observer = runner::observe::for_output(&request.output);
        let (doc, ended) = runner::measure(&cx.manager, &cx.results, request, observer.as_ref())?;
        if ended == Ended::Failed {
            eprintln!("error: the replay at {speed}x stopped: {}", doc.error.unwrap_or_default());
        }
        worst = worst.max(ended.exit_code());
        if ended.exit_code() != 0 {
            break;
        }
    }
    Ok(worst)
}

/// The captured tables made from the capture's schema, before the first speed.
fn prepare_from_schema(
    cx: &Context,
    a: &ReplayArgs,
    path: &str,
    schedule: &std::sync::Arc<crate::capture::schedule::Schedule>,
) -> Result<(), Error> {
    let mut options = a.options.workload.clone();
    options.replay.schedule = Some(schedule.clone());
    let w = crate::workload::build(path, &options).map_err(Error::from)?;
    let database = schedule.schema.as_deref().unwrap_or("sizeup");
    let (target, _) = runner::resolve_target(&cx.manager, &a.options.target, database)?;
    let load = crate::workload::bulk::LoadSettings {
        method: a.options.load_method,
        statement_timeout: request::statement_timeout(a.options.statement_timeout).map_err(Error::from)?,
    };
    let line = runner::prepare(&target, &*w, 1, load, request::seed(a.options.workload.oltp.rand_seed))?;
    crate::outln!("{line}");
    Ok(())
}

/// `--replay FILE` (capacity, plan): a capture's path, which ends in `.capture`.
pub fn capture_path(capture: &std::path::Path) -> Result<String, Error> {
    let path = capture.to_string_lossy().into_owned();
    if !path.ends_with(replay::SUFFIX) {
        return Err(Error::Usage(format!(
            "--replay {path}: a capture file ends in {} (`sizeup capture ... -o FILE{}`)",
            replay::SUFFIX,
            replay::SUFFIX
        )));
    }
    Ok(path)
}

/// "1,2,4" as speeds above 0.
fn speeds(text: &str) -> Result<Vec<f64>, Invalid> {
    let bad = |s: &str| Invalid::Entry {
        option: "--speed",
        entry: s.to_string(),
        why: "not a factor above 0".into(),
        grammar: "give factors of the captured pace, such as 1,2,4 or 0.5",
    };
    let v: Vec<f64> = text
        .split(',')
        .map(|s| {
            s.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0 && *v <= 1000.0).ok_or_else(|| bad(s))
        })
        .collect::<Result<_, _>>()?;
    if v.is_empty() {
        return Err(bad(text));
    }
    Ok(v)
}

/// `out.json` as `out-2x.json` for the run at speed 2.
fn with_speed(p: &std::path::Path, speed: f64) -> std::path::PathBuf {
    let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = match p.extension() {
        Some(e) => format!("{stem}-{speed}x.{}", e.to_string_lossy()),
        None => format!("{stem}-{speed}x"),
    };
    p.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_read_as_factors() {
        assert_eq!(speeds("1,2,4").unwrap(), [1.0, 2.0, 4.0]);
        assert_eq!(speeds("0.5").unwrap(), [0.5]);
        for bad in ["0", "-1", "fast", "1,,2", "inf"] {
            assert!(matches!(speeds(bad), Err(Invalid::Entry { option: "--speed", .. })), "{bad}");
        }
        assert_eq!(with_speed(std::path::Path::new("/r/out.json"), 2.0), std::path::Path::new("/r/out-2x.json"));
    }
}
