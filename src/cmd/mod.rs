//! One module per command family, each readable alone: it parses nothing (clap did),
//! validates through `request`, and calls the layers below. This file only dispatches.

mod agent;
mod capture;
mod cluster;
mod data;
mod model;
mod plan;
mod replay;
mod report;
mod run;
mod runs;
mod server;
mod studies;

use crate::cli::{Cli, Command};
use crate::server::Manager;
use crate::Error;
use std::path::{Path, PathBuf};

/// Where a command keeps its state: the managed instances and the results store.
pub struct Context {
    pub manager: Manager,
    pub results: PathBuf,
}

pub fn run(cli: Cli) -> Result<i32, Error> {
    let home = cli.home.clone().filter(|h| !h.as_os_str().is_empty()).unwrap_or_else(crate::server::default_home);
    let results = cli.results.clone().unwrap_or_else(|| home.join("results.db"));
    refuse_writing_the_store(&cli.command, &results)?;
    let cx = Context { manager: Manager::new(&home), results };
    let sysbench = cli.sysbench_output;
    if sysbench && matches!(cli.command, Command::Prepare(_) | Command::Cleanup(_) | Command::Prewarm(_)) {
        crate::outln!("{}\n", crate::workload::script::version_line());
    }
    match cli.command {
        Command::Server(cmd) => server::run(&cx, cmd),
        Command::Cluster(cmd) => cluster::run(&cx, cmd),
        Command::Prepare(a) => data::prepare(&cx, &a, sysbench),
        Command::Cleanup(a) => data::cleanup(&cx, &a, sysbench),
        Command::Check(a) => data::check(&cx, &a),
        Command::Prewarm(a) => data::prewarm(&cx, &a),
        Command::Run(a) => run::run(&cx, &a, sysbench),
        Command::Runs(cmd) => runs::run(&cx, cmd),
        Command::Sweep(a) => studies::sweep(&cx, &a),
        Command::Capacity(a) => studies::capacity(&cx, &a),
        Command::Memory(a) => studies::memory(&cx, &a),
        Command::Scale(a) => studies::scale(&cx, &a),
        Command::ScaleOut(a) => studies::scale_out(&cx, &a),
        Command::Study(cmd) => studies::study(&cx, cmd),
        Command::Demo(a) => studies::demo(&cx, &a),
        Command::Report(a) => report::report(&cx, &a),
        Command::Compare(a) => report::compare(&cx, &a),
        Command::Model(cmd) => model::model(&cx, cmd),
        Command::Size(a) => model::size(&cx, &a),
        Command::Plan(a) => plan::plan(&cx, &a),
        Command::Capture(a) => capture::capture(&cx, &a),
        Command::Replay(a) => replay::replay(&cx, &a),
        Command::Agent(a) => agent::agent(&a),
    }
}

/// The files a command writes besides the results store, with the option naming each.
fn outputs(command: &Command) -> Vec<(&'static str, &Path)> {
    use crate::cli::RunsCommand;
    let mut out: Vec<(&'static str, &Path)> = Vec::new();
    match command {
        Command::Run(a) => out.extend(a.options.json.as_deref().map(|p| ("--json", p))),
        Command::Runs(RunsCommand::Export(a)) => out.extend(a.output.as_deref().map(|p| ("--output", p))),
        Command::Report(a) => out.push(("--html", a.html.as_path())),
        Command::Compare(a) => out.extend(a.html.as_deref().map(|p| ("--html", p))),
        Command::Plan(a) => out.extend(a.html.as_deref().map(|p| ("--html", p))),
        Command::Capture(a) => out.extend(a.output.as_deref().map(|p| ("--output", p))),
        Command::Replay(a) => out.extend(a.options.json.as_deref().map(|p| ("--json", p))),
        _ => {}
    }
    out
}

/// An output file that is the results store (or its journal) would overwrite it
/// (an_output_file_that_is_the_results_store): refused before anything runs. Compared
/// by file identity where both exist, else by the absolute path, so `./r.db`, `r.db`
/// and a link to it are one file.
fn refuse_writing_the_store(command: &Command, results: &Path) -> Result<(), Error> {
    for (option, path) in outputs(command) {
        if path.as_os_str() == "-" {
            continue;
        }
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut store = results.as_os_str().to_owned();
            store.push(suffix);
            if same_file(path, Path::new(&store)) {
                return Err(Error::Usage(format!(
                    "{option} {} is the results store{}: writing there would destroy the stored results; \
                     give another file",
                    path.display(),
                    if suffix.is_empty() { String::new() } else { format!("'s {} file", &suffix[1..]) }
                )));
            }
        }
    }
    Ok(())
}

/// Whether `a` and `b` name one file: the same device and inode where both exist, else
/// the same absolute path (the directory resolved, links included).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        return x.dev() == y.dev() && x.ino() == y.ino();
    }
    let absolute = |p: &Path| {
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        Some(std::fs::canonicalize(dir).ok()?.join(p.file_name()?))
    };
    matches!((absolute(a), absolute(b)), (Some(x), Some(y)) if x == y)
}

/// Text to a file, or to standard output.
fn write_out(path: Option<&std::path::Path>, text: &str) -> Result<(), Error> {
    match path {
        Some(p) => std::fs::write(p, text).map_err(|e| Error::Failed(format!("cannot write {}: {e}", p.display()))),
        None => {
            crate::out!("{text}");
            Ok(())
        }
    }
}

/// A run (`12`, `run:12`) or a study (`s3`, `study:3`) named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ref {
    Run(i64),
    Study(i64),
}

pub fn parse_ref(s: &str) -> Result<Ref, Error> {
    let bad = || {
        Error::Usage(format!("'{s}' names no run or study: write 12 or run:12 for a run, s3 or study:3 for a study"))
    };
    let s = s.trim();
    let (study, id) = if let Some(id) = s.strip_prefix("study:").or_else(|| s.strip_prefix('s')) {
        (true, id)
    } else {
        (false, s.strip_prefix("run:").unwrap_or(s))
    };
    let id: i64 = id.parse().map_err(|_| bad())?;
    Ok(if study { Ref::Study(id) } else { Ref::Run(id) })
}

/// A stored study with its spec and its series' verdicts.
fn load_study(
    store: &crate::store::Store,
    id: i64,
) -> Result<(crate::store::StudyRow, crate::study::spec::StudySpec, Vec<crate::study::figures::SeriesResult>), Error> {
    let row = store.load_study(id)?;
    let spec = crate::study::spec::StudySpec::stored(&row).map_err(Error::from)?;
    let series = crate::study::results_of(&spec, &row).map_err(Error::from)?;
    Ok((row, spec, series))
}

/// A study's or plan's steps carry no token (it is never stored with their options): a
/// --token given on the command line is kept where their runs look for it, in this
/// process's environment.
fn keep_agent_token(t: &crate::options::TargetArgs) {
    if let Some(token) = &t.token {
        std::env::set_var("SIZEUP_AGENT_TOKEN", token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_name_runs_and_studies() {
        assert_eq!(parse_ref("12").unwrap(), Ref::Run(12));
        assert_eq!(parse_ref("run:12").unwrap(), Ref::Run(12));
        assert_eq!(parse_ref("s3").unwrap(), Ref::Study(3));
        assert_eq!(parse_ref("study:3").unwrap(), Ref::Study(3));
        assert!(parse_ref("x3").is_err());
    }
}
