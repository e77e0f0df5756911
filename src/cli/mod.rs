//! The command line as the user types it. Raw arguments only: `crate::request` validates
//! them once into what the rest of the program trusts. The option groups a run takes
//! live in `crate::options`, shared with study files; this module adds the commands.
// Doc comments here are clap's help text, printed as written: `[client]` is an
// option file's section and `p90[type]` an objective, not links.
#![allow(rustdoc::broken_intra_doc_links)]

pub mod sysbench;

use crate::error::Invalid;
pub use crate::options::{
    parse_switch, ClusterStartArgs, LabArgs, PowerArgs, RunOptions, ServerArgs, SessionArgs, TargetArgs, WorkloadArgs,
};
use clap::{Args, Parser, Subcommand};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "sizeup",
    version,
    about = "Measure how much OLTP work a MySQL-family server carries, and size for it",
    // sysbench takes an option given twice at its last value; so does sizeup.
    args_override_self = true
)]
pub struct Cli {
    /// State directory: managed instances and the default results database.
    #[arg(long, global = true, env = "SIZEUP_HOME", value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Results database (SQLite). Default: results.db in the state directory ($SIZEUP_HOME).
    #[arg(long, global = true, value_name = "FILE")]
    pub results: Option<PathBuf>,
    /// Set by `sysbench::rewrite` for a command line in sysbench's order: the output is
    /// sysbench's (its header, its closing block alone).
    #[arg(long, global = true, hide = true)]
    pub sysbench_output: bool,
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// The command line as given, sysbench's spellings and order included (see
    /// `sysbench::rewrite`); clap's errors and help exit as clap does.
    pub fn parse_args(args: Vec<std::ffi::OsString>) -> Result<Cli, Invalid> {
        use clap::CommandFactory;
        let cmd = Cli::command();
        let names: Vec<&str> = cmd.get_subcommands().map(|s| s.get_name()).collect();
        let args = sysbench::expand_config_files(args)?;
        if let Some(script) = sysbench::script_alone(&args, &names) {
            // sysbench's `SCRIPT` with no command: loaded, and nothing more.
            exit_as_sysbench(crate::workload::script::load_alone(&script));
        }
        let args = sysbench::rewrite(args, &names)?;
        let (args, script_options) = script_options(&cmd, args, &names)?;
        let (args, ignored) = sysbench_options_unused(&cmd, args)?;
        let args = negative_values_joined(&cmd, args);
        let unused = match script_options {
            None => options_the_workload_ignores(&cmd, &args),
            Some(_) => Vec::new(),
        };
        plan_defined_elsewhere(&cmd, &args)?;
        let group = args.iter().find_map(|a| a.to_str().filter(|a| names.contains(a)).map(str::to_string));
        let mut cli = Cli::try_parse_from(args).map_err(|e| match e.kind() {
            // `sizeup runs` alone: clap's help for the group (on stderr, exit 2), not that
            // help dressed as an "error: Stored runs".
            clap::error::ErrorKind::DisplayHelp
            | clap::error::ErrorKind::DisplayVersion
            | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
            // The same when SIZEUP_HOME is set: clap counts the --home it supplies as an
            // argument given to the group and calls the command missing.
            clap::error::ErrorKind::MissingSubcommand => {
                let mut full = Cli::command();
                full.build();
                match group.as_deref().and_then(|g| full.find_subcommand_mut(g)) {
                    Some(g) => {
                        eprint!("{}", g.render_help());
                        std::process::exit(2)
                    }
                    None => Invalid::CommandLine(e.render().to_string()),
                }
            }
            _ => Invalid::CommandLine(e.render().to_string()),
        })?;
        for note in unused.iter().chain(&ignored) {
            eprintln!("note: {note}");
        }
        if let Some(given) = script_options {
            match &mut cli.command {
                Command::Run(a) => a.options.workload.script_options = given,
                Command::Prepare(a) => a.workload_args.script_options = given,
                Command::Prewarm(a) => a.workload_args.script_options = given,
                Command::Cleanup(a) => a.script_options = given,
                Command::Sweep(a) => a.study.workload_args.script_options = given,
                Command::Capacity(a) => a.study.workload_args.script_options = given,
                Command::Memory(a) => a.study.workload_args.script_options = given,
                Command::Scale(a) => a.study.workload_args.script_options = given,
                Command::Plan(a) => a.workload_args.script_options = given,
                _ => {}
            }
        }
        Ok(cli)
    }
}

/// sysbench's options that a sysbench verb of sizeup's has no use for, taken out (see
/// `sysbench::drop_unused`), with a note for each that asked for what sizeup does not do.
fn sysbench_options_unused(
    cmd: &clap::Command,
    args: Vec<std::ffi::OsString>,
) -> Result<(Vec<std::ffi::OsString>, Vec<String>), Invalid> {
    let verb_at = args.iter().position(|a| a.to_str().is_some_and(|a| sysbench::VERBS.contains(&a) && a != "help"));
    let Some(sub) = verb_at.and_then(|i| cmd.find_subcommand(args[i].to_str()?)) else { return Ok((args, Vec::new())) };
    let known = |name: &str| {
        [name.to_string(), name.replace('_', "-")]
            .iter()
            .any(|n| option_named(sub, n).is_some() || option_named(cmd, n).is_some())
    };
    let at = verb_at.expect("found") + 1;
    let (mut before, after) = (args[..at].to_vec(), args[at..].to_vec());
    let (after, notes) = sysbench::drop_unused(after, &known)?;
    before.extend(after);
    Ok((before, notes))
}

/// `--table-size -3` as `--table-size=-3`, for options that take a value: clap read
/// the -3 as an unknown flag ("unexpected argument '-3'") instead of naming the option
/// whose value is wrong.
fn negative_values_joined(cmd: &clap::Command, args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let Some(text): Option<Vec<&str>> = args.iter().map(|a| a.to_str()).collect() else { return args };
    let Some(sub) = text.iter().find_map(|a| cmd.find_subcommand(a)) else { return args };
    let takes_value = |name: &str| {
        option_named(sub, name).or_else(|| option_named(cmd, name)).is_some_and(|a| a.get_action().takes_values())
    };
    let mut out: Vec<std::ffi::OsString> = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < text.len() {
        let (a, next) = (text[i], text.get(i + 1));
        let negative = next.is_some_and(|v| v.starts_with('-') && v[1..].parse::<f64>().is_ok());
        match a.strip_prefix("--").filter(|n| negative && !n.contains('=') && takes_value(n)) {
            Some(_) => {
                out.push(format!("{a}={}", next.expect("checked")).into());
                i += 2;
            }
            None => {
                out.push(a.into());
                i += 1;
            }
        }
    }
    out
}

/// The command's option spelled `--name` (its long name or an alias).
/// `plan --resume N` (or `--file F`) with options that define a plan: the stored request
/// (or the file) says those, so they are refused rather than silently ignored
/// (a_resumed_plan_ignored_its_options). The connection's options are taken: a password
/// is never stored.
fn plan_defined_elsewhere(cmd: &clap::Command, args: &[std::ffi::OsString]) -> Result<(), Invalid> {
    use clap::Args;
    let text: Vec<&str> = args.iter().filter_map(|a| a.to_str()).collect();
    let Some(at) = text.iter().position(|a| *a == "plan") else { return Ok(()) };
    let Some(plan) = cmd.find_subcommand("plan") else { return Ok(()) };
    let name = |a: &str| a.strip_prefix("--").map(|b| b.split('=').next().unwrap_or(b).to_string());
    let given: Vec<String> = text[at + 1..].iter().filter_map(|a| name(a)).collect();
    let Some(by) = given.iter().find(|g| *g == "resume" || *g == "file") else { return Ok(()) };
    let target = crate::options::TargetArgs::augment_args(clap::Command::new("target"));
    let kept = ["resume", "file", "html", "help"];
    let defining: Vec<String> = given
        .iter()
        .filter(|g| !kept.contains(&g.as_str()) && option_named(&target, g).is_none())
        .filter_map(|g| option_named(plan, g).and_then(|a| a.get_long()).map(|l| format!("--{l}")))
        .collect();
    match defining.is_empty() {
        true => Ok(()),
        false => Err(Invalid::Conflict(format!(
            "--{by} takes the plan as {}: leave out {} (a new plan takes them)",
            if by == "resume" { "it was stored" } else { "the file says it" },
            defining.join(", ")
        ))),
    }
}

fn option_named<'a>(cmd: &'a clap::Command, name: &str) -> Option<&'a clap::Arg> {
    cmd.get_arguments().find(|a| a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|v| v.contains(&name)))
}

/// Options given for the other kind of workload (`--tables` for tpcc, `--mix` for an
/// OLTP workload): accepted, since one command line takes both, but they do nothing,
/// which a user should hear. By each option's help heading.
fn options_the_workload_ignores(cmd: &clap::Command, args: &[std::ffi::OsString]) -> Vec<String> {
    const WITH_WORKLOAD: [&str; 5] = ["run", "prepare", "prewarm", "sweep", "scale"];
    let text: Vec<&str> = args.iter().filter_map(|a| a.to_str()).collect();
    let Some(at) = text.iter().position(|a| WITH_WORKLOAD.contains(a)) else { return Vec::new() };
    let (Some(sub), Some(workload)) = (cmd.find_subcommand(text[at]), text.get(at + 1)) else { return Vec::new() };
    let tpcc = *workload == crate::workload::tpcc::NAME;
    if !tpcc && !crate::workload::oltp::Variant::ALL.iter().any(|(n, _)| n == workload) {
        return Vec::new();
    }
    let mut notes = Vec::new();
    for arg in &text[at + 2..] {
        let Some(name) = arg.strip_prefix("--").map(|n| n.split('=').next().unwrap_or(n)) else { continue };
        let Some(opt) = option_named(sub, name) else { continue };
        // --users stands for --threads and --rand-seed seeds either kind.
        let heading = opt.get_help_heading().unwrap_or("");
        let foreign = match tpcc {
            true => heading == "OLTP" || (heading == "Random numbers" && name != "rand-seed"),
            false => heading == "TPC-C" && name != "users",
        };
        if foreign && !notes.iter().any(|n: &String| n.starts_with(&format!("--{name} "))) {
            let other = if tpcc { "OLTP" } else { "TPC-C" };
            notes.push(format!("--{name} is an option of {other} workloads; {workload} does not use it"));
        }
    }
    notes
}

/// Commands whose workload may be a Lua script with options of its own, and the
/// sysbench command the script is loaded for.
const SCRIPT_COMMANDS: [(&str, &str); 7] = [
    ("run", "run"),
    ("prepare", "prepare"),
    ("cleanup", "cleanup"),
    ("prewarm", "prewarm"),
    ("sweep", "run"),
    ("scale", "run"),
    ("help", "help"),
];

/// The arguments for clap, and the script's options when the workload is a script.
type ScriptSplit = (Vec<std::ffi::OsString>, Option<BTreeMap<String, String>>);

/// When the workload is a Lua script, its own options (`--table-size=5` for a script
/// that defines `table_size`) taken out of the arguments, as sysbench reads them after
/// loading the script; `--help` (or sysbench's `help` command) lists them first.
fn script_options(
    cmd: &clap::Command,
    args: Vec<std::ffi::OsString>,
    subcommands: &[&str],
) -> Result<ScriptSplit, Invalid> {
    let Some(text): Option<Vec<String>> = args.iter().map(|a| a.to_str().map(str::to_string)).collect() else {
        return Ok((args, None));
    };
    let mut skip_value = false;
    let verb_at = text.iter().enumerate().skip(1).find_map(|(i, a)| {
        if std::mem::take(&mut skip_value) {
            return None;
        }
        skip_value = sysbench::GLOBAL_WITH_VALUE.contains(&a.as_str());
        (!a.starts_with('-') && (subcommands.contains(&a.as_str()) || a == "help")).then_some(i)
    });
    let Some(verb_at) = verb_at else { return Ok((args, None)) };
    let Some(&(_, command)) = SCRIPT_COMMANDS.iter().find(|(c, _)| *c == text[verb_at]) else {
        return Ok((args, None));
    };
    if command == "help" {
        if let Some(name) = text.get(verb_at + 1).filter(|w| !crate::workload::script::is_script(w)) {
            builtin_help(cmd, name);
        }
    }
    let Some(script) = text.get(verb_at + 1).filter(|w| crate::workload::script::is_script(w)) else {
        return Ok((args, None));
    };
    if command == "help" {
        // sysbench's `SCRIPT help`: the script's help() or its options.
        exit_as_sysbench(crate::workload::script::help_command(script, script));
    }
    let (defs, legacy) = crate::workload::script::option_defs(script, command).map_err(Invalid::File)?;
    if text[verb_at + 2..].iter().any(|a| a == "--help" || a == "-h") {
        crate::out!("{}", crate::workload::script::options::help(script, &defs));
    }
    let sizeup = sizeup_options(cmd, if command == "help" { "run" } else { &text[verb_at] });
    let (rest, given) = crate::workload::script::options::split(script, &text[verb_at + 2..], &defs, legacy, &sizeup)
        .map_err(Invalid::Value)?;
    let args = text[..verb_at + 2].iter().cloned().chain(rest).map(std::ffi::OsString::from).collect();
    Ok((args, Some(given)))
}

/// Ends a command sizeup did as sysbench (a script loaded alone, `help`) as sysbench
/// ends it: 0, or its `FATAL:` line and 1.
fn exit_as_sysbench(done: Result<(), String>) -> ! {
    if let Err(e) = done {
        eprintln!("FATAL: {e}");
        crate::stdout::exit(1)
    }
    crate::stdout::exit(0)
}

/// sysbench's `oltp_read_write help` for a built-in workload: the options of sysbench's
/// own script of that name where sysbench's scripts are installed (the built-in takes
/// the same), else `sizeup run --help`. Exits.
fn builtin_help(cmd: &clap::Command, name: &str) -> ! {
    let script = format!("/usr/share/sysbench/{}.lua", name.trim_end_matches(".lua"));
    let builtin = crate::workload::oltp::Variant::from_name(name).is_some();
    if builtin && std::path::Path::new(&script).is_file() {
        exit_as_sysbench(crate::workload::script::help_command(&script, name));
    }
    let mut cmd = cmd.clone();
    cmd.build();
    match cmd.find_subcommand_mut("run") {
        Some(run) => crate::out!("{}", run.render_help()),
        None => eprintln!("no help for {name}"),
    }
    crate::stdout::exit(0)
}

/// `subcommand`'s option names and aliases, normalised as sysbench names options, in
/// two sets: the built-in workloads' (the OLTP and TPC-C headings) and the rest.
fn sizeup_options(cmd: &clap::Command, subcommand: &str) -> crate::workload::script::options::SizeupOptions {
    use crate::workload::script::options::normalise;
    let mut out = crate::workload::script::options::SizeupOptions::default();
    let sub = cmd.find_subcommand(subcommand);
    for arg in cmd.get_arguments().chain(sub.into_iter().flat_map(|s| s.get_arguments())) {
        let names = arg.get_long().into_iter().chain(arg.get_all_aliases().unwrap_or_default());
        // --users is --threads by TPC-C's name: sizeup's own, whatever its heading.
        let set = match (arg.get_help_heading(), arg.get_id().as_str()) {
            (_, "users") => &mut out.general,
            (Some("OLTP" | "TPC-C"), _) => &mut out.workload,
            _ => &mut out.general,
        };
        set.extend(names.map(normalise));
    }
    out.general.insert("help".into());
    out
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Managed private server instances (the default target).
    #[command(subcommand)]
    Server(ServerCommand),
    /// Managed clusters on this host: Galera, or a primary with replicas; optionally as
    /// miniature servers (own network namespace, link delay, CPU quota per node).
    #[command(subcommand)]
    Cluster(ClusterCommand),
    /// Create and load a workload's tables.
    Prepare(PrepareArgs),
    /// Run a workload and measure it.
    Run(RunArgs),
    /// Drop the tables sizeup created for a workload (and nothing else).
    Cleanup(CleanupArgs),
    /// Check a workload's data: for tpcc, the consistency conditions of clause 3.3.2.
    Check(CheckArgs),
    /// Read a workload's tables and k indexes into the buffer pool (sysbench's prewarm).
    Prewarm(PrewarmArgs),
    /// Stored runs.
    #[command(subcommand)]
    Runs(RunsCommand),
    /// Raise the load level by level (threads, or users for tpcc) until a stop
    /// condition; each step is a stored run, the whole a study.
    Sweep(SweepArgs),
    /// 1..N server instances at once, one client group each: total and per-instance
    /// throughput, and the peak instance count.
    Scale(ScaleArgs),
    /// 1..N nodes of one cluster (Galera, or a primary and replicas), the same load per
    /// node: total and per-node throughput and the scale-out efficiency
    /// e(N) = X(N) / (N x X(1)) that `sizeup size --efficiency measured` uses.
    #[command(name = "scale-out")]
    ScaleOut(ScaleOutArgs),
    /// The highest arrival rate that meets a latency objective (`--latency 'p99<20ms'`):
    /// open-loop levels, latency from each arrival's intended start, the rate found by
    /// stepping up and halving the gap; the answer names the rate that held and the one
    /// that broke it.
    Capacity(CapacityArgs),
    /// Throughput against the data-to-memory ratio: buffer-pool sizes with the data fixed
    /// (--pools 128M,64M,32M or auto), or data sizes with the pool fixed (--vary data);
    /// each level warmed until its hit ratio settles, the page cache kept out; the
    /// answer says how far down throughput holds and about how large the hot set is.
    Memory(MemoryArgs),
    /// Study files, and stored studies.
    #[command(subcommand)]
    Study(StudyCommand),
    /// One self-contained HTML file with the charts and tables of runs and studies.
    Report(ReportArgs),
    /// Two runs or two studies side by side, with the significance of each difference.
    Compare(CompareArgs),
    /// Scalability models: fit the Universal Scalability Law to measured points.
    #[command(subcommand)]
    Model(ModelCommand),
    /// Sizing answers from measured studies: instances per server, servers needed for a
    /// target, which configurations meet a requirement.
    Size(SizeArgs),
    /// A short study on the managed default instance: prepare, then oltp_read_write at
    /// 1, 2, 4 and 8 threads, with the peak marked.
    Demo(DemoArgs),
    /// From a requirement to a purchase plan: runs the studies the answer needs (a
    /// connection sweep, the capacity at --latency, a scale-up when CPU was left unused,
    /// scale-out on a --cluster made here, the memory study when the data outgrows the
    /// pool), each chosen from what the one before found, within --budget; then servers
    /// x instances per server with their range, cost and watts, and one HTML report.
    Plan(PlanArgs),
    /// Your own traffic: a server's slow log (written at long_query_time = 0) as a
    /// capture file of sessions and statements with the moment each started, for
    /// `capture show` to summarise by digest.
    Capture(CaptureArgs),
    /// Play a capture back against a copy of the captured server's data: one connection
    /// per captured session, each statement started at its captured moment divided by
    /// --speed (open loop: latency from when it was due), one stored run per speed.
    Replay(ReplayArgs),
    /// Drive load from this host for a coordinator elsewhere (`run`, studies and plans
    /// with --agents): waits on --listen for a coordinator that proves the shared
    /// --token (or a client certificate), and runs each share it is given.
    Agent(AgentArgs),
}

#[derive(Args, Debug)]
pub struct AgentArgs {
    /// Where to wait for a coordinator, ADDRESS:PORT; without TLS a loopback address only.
    #[arg(long, value_name = "ADDR:PORT", required_unless_present = "stdio")]
    pub listen: Option<String>,
    /// The shared token (better: SIZEUP_AGENT_TOKEN), at least 16 characters; the
    /// coordinator proves it without sending it.
    #[arg(long, env = "SIZEUP_AGENT_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// This agent's certificate and key (PEM): the link is TLS.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// Coordinators presenting a certificate this CA signed need no token.
    #[arg(long, value_name = "FILE")]
    pub client_ca: Option<PathBuf>,
    /// Exit once the first coordinator that proved itself has left (a Kubernetes Job's
    /// pod then completes).
    #[arg(long)]
    pub once: bool,
    /// Serve one coordinator over stdin and stdout (how --agents-ssh starts an agent).
    #[arg(long, hide = true, conflicts_with = "listen")]
    pub stdio: bool,
    /// Remove this binary as it starts (a copy --agents-ssh made).
    #[arg(long, hide = true, requires = "stdio")]
    pub remove_self: bool,
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The capture file (`sizeup capture ... -o FILE`).
    pub capture: PathBuf,
    /// The captured pace times each of these, one run each: 1,2,4 (2: twice as fast).
    #[arg(long, default_value = "1")]
    pub speed: String,
    /// No copy of the data? Make the captured tables from the schema the capture
    /// recorded (`capture --for` records it), filled with their captured row counts of
    /// drawn values, then replay; every figure on such data says so.
    #[arg(long)]
    pub prepare_from_schema: bool,
    /// The run's options; `--read-only` replays only the statements that change no
    /// data (no copy needed).
    #[command(flatten)]
    pub options: RunOptions,
}

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct CaptureArgs {
    #[command(subcommand)]
    pub command: Option<CaptureCommand>,
    /// The slow log to read (MariaDB's, or MySQL 5.7's or 8.x's file format), written
    /// with long_query_time = 0 so that every statement is in it.
    #[arg(long, value_name = "FILE", required_unless_present = "live", conflicts_with = "live")]
    pub slow_log: Option<PathBuf>,
    /// Capture from the server itself for this long (60s, 5m): its slow log turned to
    /// mysql.slow_log at long_query_time = 0, every setting put back after.
    #[arg(long = "for", id = "live", value_name = "DURATION")]
    pub live: Option<String>,
    /// The capture file to write.
    #[arg(long, short, value_name = "CAPTURE", required = true)]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Subcommand, Debug)]
pub enum CaptureCommand {
    /// What a capture holds: its length, sessions, statements per second, read/write
    /// share, and its digests (pt-query-digest's) by share of time, with each one's
    /// count, mean and p99 as captured.
    Show {
        capture: PathBuf,
        /// The digests shown, by share of time (0: all).
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// The throughput to provide (tps; NOPM for tpcc).
    #[arg(long, allow_negative_numbers = true, required_unless_present_any = ["resume", "show", "list", "file", "replay"])]
    pub target_tps: Option<f64>,
    /// Size for your own traffic: a capture (`sizeup capture`) replayed on a copy of its
    /// data; the target is --growth times its captured rate.
    #[arg(long, value_name = "CAPTURE", requires = "growth", conflicts_with_all = ["target_tps", "file"])]
    pub replay: Option<PathBuf>,
    /// With --replay: the captured traffic times this is the target (3: three times it).
    #[arg(long, value_name = "FACTOR", requires = "replay", allow_negative_numbers = true)]
    pub growth: Option<f64>,
    /// Let the studies write to tables sizeup did not create (as `sizeup run
    /// --write-foreign-tables`): a replayed capture's, on a copy of its data.
    #[arg(long)]
    pub write_foreign_tables: bool,
    /// The latency objective each server must meet at its share: p99<50ms (several
    /// with commas or given again, all to be met).
    #[arg(long, value_name = "OBJECTIVE", action = clap::ArgAction::Append)]
    pub latency: Vec<String>,
    /// Workload name: tpcc, an OLTP workload, or a sysbench Lua script.
    #[arg(long, default_value = "oltp_read_write")]
    pub workload: String,
    /// Cost inputs: server_capex=9000,power_price_kwh=0.15,cooling_factor=1.5,years=4
    /// (devices=, device_capex=, currency= too).
    #[arg(long, value_name = "KEY=VALUE,...")]
    pub cost: Option<String>,
    /// Measure scale-out on a cluster made on this host (emulated: a lab of miniature
    /// nodes): galera, or replicas (read-only workloads); none uses --efficiency.
    #[arg(long, default_value = "none", value_parser = cluster)]
    pub cluster: crate::plan::ClusterChoice,
    /// The scale-out efficiency E (0..1] when no cluster is measured (default 0.9, said
    /// to be assumed).
    #[arg(long, allow_negative_numbers = true)]
    pub efficiency: Option<f64>,
    /// The price of a GiB of server memory: prices the memory study's pools.
    #[arg(long, value_name = "PRICE", allow_negative_numbers = true)]
    pub memory_price: Option<f64>,
    /// The time the plan's studies may take, all together: 10m, 90s, 1h30m.
    #[arg(long, default_value = "30m")]
    pub budget: String,
    /// A name for the plan.
    #[arg(long)]
    pub name: Option<String>,
    /// A plan file (TOML, kind = "plan") instead of the options above.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["target_tps", "resume", "show", "list"])]
    pub file: Option<PathBuf>,
    /// Continue an interrupted plan, as it was stored (the options that define a plan
    /// are refused with it; the connection's are taken).
    #[arg(long, value_name = "ID", conflicts_with_all = ["target_tps", "show", "list"])]
    pub resume: Option<i64>,
    /// Show a stored plan (default: the latest) and write its report.
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "0", conflicts_with_all = ["target_tps", "list"])]
    pub show: Option<i64>,
    /// One line per stored plan.
    #[arg(long)]
    pub list: bool,
    /// Where to write the plan's HTML report (default: plan-ID.html beside the results store).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub workload_args: WorkloadArgs,
    #[command(flatten)]
    pub power: PowerArgs,
    #[command(flatten)]
    pub session: SessionArgs,
}

#[derive(Subcommand, Debug)]
pub enum ServerCommand {
    /// Initialise (if needed) and start managed instances 0..N.
    Start(ServerStartArgs),
    /// Stop managed instances.
    Stop(ServerStopArgs),
    /// Show each managed instance: state, socket, port, user.
    Status {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Debug, Clone)]
pub struct ServerStartArgs {
    /// How many instances (0..N-1) should be running.
    #[arg(long, default_value_t = 1)]
    pub instances: u32,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Where instance directories go (default: the state directory).
    #[arg(long, value_name = "DIR")]
    pub datadir_root: Option<PathBuf>,
    /// Port of instance 0; instance i listens on base + i (default: first free from 13306).
    #[arg(long)]
    pub base_port: Option<u16>,
}

#[derive(Subcommand, Debug)]
pub enum ClusterCommand {
    /// Start (or resize) the managed cluster: `--galera --nodes N`, or `--replicas N`.
    Start(Box<ClusterStartArgs>),
    /// Stop every node and remove what the lab made (namespaces, links, cgroups).
    Stop(ClusterStopArgs),
    /// Each node: role, address, readiness (Galera state; replica threads and lag).
    Status {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Debug)]
pub struct ClusterStopArgs {
    /// Also delete the nodes' directories and forget the cluster.
    #[arg(long)]
    pub purge: bool,
}

#[derive(Args, Debug)]
pub struct ServerStopArgs {
    /// Stop only this instance.
    #[arg(long)]
    pub instance: Option<u32>,
    /// Also delete the instances' directories and forget them.
    #[arg(long)]
    pub purge: bool,
}

#[derive(Args, Debug)]
pub struct PrepareArgs {
    /// Workload name: tpcc, an OLTP workload such as oltp_read_write, or a sysbench Lua
    /// script (./my_test.lua).
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub workload_args: WorkloadArgs,
    /// Loader connections (default: two per CPU).
    #[arg(long, alias = "num-threads")]
    pub threads: Option<u32>,
    /// How rows are sent: auto is array binding on MariaDB (COM_STMT_BULK_EXECUTE), else
    /// LOAD DATA LOCAL where the server's greeting offers it and its local_infile is not
    /// OFF, else multi-row INSERTs (one note says why).
    #[arg(long, value_enum, default_value_t)]
    pub load_method: crate::options::LoadMethod,
    /// Seconds one load of rows may wait for the server before the prepare fails as
    /// stalled and undoes itself. Index builds take as long as their table needs: they
    /// fail only when the server stops answering or they wait this long for a lock.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::exec::DEFAULT_STATEMENT_TIMEOUT, allow_negative_numbers = true)]
    pub statement_timeout: f64,
}

#[derive(Args, Debug)]
pub struct PrewarmArgs {
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub workload_args: WorkloadArgs,
    /// Connections reading in parallel (default: the number of CPUs).
    #[arg(long)]
    pub threads: Option<u32>,
    #[command(flatten)]
    pub watch: WatchArgs,
    /// A script's own command to run instead (`sizeup ./tpcc.lua check`, rewritten by
    /// `sysbench::rewrite`), with --threads as sysbench's (default 1).
    #[arg(long, hide = true)]
    pub script_command: Option<String>,
}

/// When a command's long statements (scans that take as long as their tables need)
/// count as stalled.
#[derive(Args, Debug, Clone, Copy)]
pub struct WatchArgs {
    /// Seconds a statement may wait for a lock, or the server go without answering,
    /// before the command fails as stalled. Scans the server works on run to their end.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::exec::DEFAULT_STATEMENT_TIMEOUT, allow_negative_numbers = true)]
    pub statement_timeout: f64,
}

#[derive(Args, Debug)]
pub struct CleanupArgs {
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
    /// A Lua script's cleanup sees this as sysbench.opt.threads (sysbench's --threads).
    #[arg(long, alias = "num-threads", default_value_t = 1)]
    pub threads: u32,
    /// A Lua script's own options (taken out of the command line before clap reads it).
    #[arg(skip)]
    pub script_options: BTreeMap<String, String>,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub watch: WatchArgs,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Workload name: tpcc, an OLTP workload such as oltp_read_write, or a sysbench Lua
    /// script (./my_test.lua).
    pub workload: String,
    #[command(flatten)]
    pub options: RunOptions,
}

/// What `runs export` and `study export` take.
#[derive(Args, Debug)]
pub struct ExportArgs {
    pub id: i64,
    #[arg(long, value_enum, default_value = "json")]
    pub format: crate::report::export::Format,
    /// Write here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum RunsCommand {
    /// One line per stored run.
    List,
    /// Write a stored run as JSON (the `--json` document), CSV (one row per interval)
    /// or Markdown (a table ready to paste).
    Export(ExportArgs),
    /// One stored run in full.
    Show {
        id: i64,
        /// Print the JSON document (the same as --json writes).
        #[arg(long)]
        json: bool,
    },
}

/// What sweeps and scale studies share: step length, repeats, stop conditions, and the
/// run options of every step.
#[derive(Args, Debug, Clone)]
pub struct StudyArgs {
    /// Seconds each step measures, after its warm-up.
    #[arg(long, default_value_t = 30.0, help_heading = "Study", allow_negative_numbers = true)]
    pub step_time: f64,
    /// Seconds at the start of each step left out.
    #[arg(long, default_value_t = 5.0, help_heading = "Study", allow_negative_numbers = true)]
    pub warmup: f64,
    /// Run each step this many times; the level reports their mean and spread.
    #[arg(long, default_value_t = 1, help_heading = "Study")]
    pub repeat: u32,
    /// Stop early on any of: cpu>80, p90>5s (p90>spec, p90[type]>20s), plateau<5%, kink>3,
    /// lag>5s (a replica behind its primary).
    #[arg(long, default_value = "", help_heading = "Study")]
    pub stop_when: String,
    /// Seconds per sample; a step's figure is the median of its samples.
    #[arg(long, default_value_t = 1.0, help_heading = "Study")]
    pub sample_interval: f64,
    /// Share of the post-warm-up samples, counted from the end, that the median uses.
    #[arg(long, default_value_t = 1.0, help_heading = "Study")]
    pub steady_last: f64,
    /// A name for the study (default: the command).
    #[arg(long, help_heading = "Study")]
    pub name: Option<String>,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub workload_args: WorkloadArgs,
    #[command(flatten)]
    pub power: PowerArgs,
    #[command(flatten)]
    pub session: SessionArgs,
    /// Seconds a lost server has to come back before a step fails (as `run`'s).
    #[arg(long, value_name = "SECONDS", default_value_t = crate::exec::DEFAULT_SERVER_LOST_TIMEOUT, allow_negative_numbers = true)]
    pub server_lost_timeout: f64,
    /// Seconds one transaction may wait for the server before a step fails as stalled
    /// (as `run`'s).
    #[arg(long, value_name = "SECONDS", default_value_t = crate::exec::DEFAULT_STATEMENT_TIMEOUT, allow_negative_numbers = true)]
    pub statement_timeout: f64,
    /// How missing tables are loaded (as `sizeup prepare --load-method`).
    #[arg(long, value_enum, default_value_t)]
    pub load_method: crate::options::LoadMethod,
    /// Let the steps write to tables sizeup did not create (as `sizeup run
    /// --write-foreign-tables`): a replayed capture's, sysbench's.
    #[arg(long)]
    pub write_foreign_tables: bool,
}

impl StudyArgs {
    /// The run options every step shares, as a study stores them.
    pub fn run_options(&self) -> RunOptions {
        RunOptions {
            target: self.target.clone(),
            workload: self.workload_args.clone(),
            session: self.session.clone(),
            server_lost_timeout: self.server_lost_timeout,
            statement_timeout: self.statement_timeout,
            load_method: self.load_method,
            write_foreign_tables: self.write_foreign_tables,
            ..RunOptions::default()
        }
    }
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Workload name: tpcc, an OLTP workload such as oltp_read_write, or a sysbench Lua
    /// script (./my_test.lua).
    pub workload: String,
    /// Levels: 1,2,4,8 or 32..256+32 (start..max+step) or 1..128x2 (start..max x factor).
    #[arg(long, alias = "users", value_name = "LEVELS")]
    pub threads: String,
    #[command(flatten)]
    pub study: StudyArgs,
}

#[derive(Args, Debug)]
pub struct CapacityArgs {
    /// Workload name: tpcc, an OLTP workload such as oltp_read_write, or a sysbench Lua
    /// script (./my_test.lua).
    #[arg(required_unless_present = "replay")]
    pub workload: Option<String>,
    /// Your own traffic: a capture (`sizeup capture`) replayed at rising speeds, on a
    /// copy of its data. The search starts at its captured rate; rates are statements
    /// a second.
    #[arg(long, value_name = "CAPTURE", conflicts_with = "workload", help_heading = "Capacity")]
    pub replay: Option<std::path::PathBuf>,
    /// The latency objective(s), all to be met: p99<20ms, p99.9<100ms, p90[delivery]<5s;
    /// several with commas or given again.
    #[arg(long, value_name = "OBJECTIVE", help_heading = "Capacity", required = true, action = clap::ArgAction::Append)]
    pub latency: Vec<String>,
    /// Rates to run (tps), as levels are written (500,1000,2000 or 500..4000+500);
    /// `auto` finds them from a short closed-loop probe.
    #[arg(long, default_value = "auto", value_name = "RATES", help_heading = "Capacity")]
    pub rates: String,
    /// How close the search brackets the capacity, in percent of the rate.
    #[arg(long, value_name = "PCT", help_heading = "Capacity")]
    pub resolution: Option<f64>,
    /// Connections each level opens (default: twice what the objective needs in flight
    /// at its rate, plus one per CPU, within the server's limits).
    #[arg(long, help_heading = "Capacity")]
    pub connections: Option<u32>,
    /// The most rate levels the search runs.
    #[arg(long, help_heading = "Capacity")]
    pub max_levels: Option<usize>,
    /// Connections of the closed-loop probe (default 4 per CPU).
    #[arg(long, help_heading = "Capacity")]
    pub probe_threads: Option<u32>,
    #[command(flatten)]
    pub study: StudyArgs,
}

#[derive(Args, Debug)]
pub struct MemoryArgs {
    /// Workload name: tpcc, an OLTP workload such as oltp_read_only, or a sysbench Lua
    /// script (./my_test.lua; pool levels only: a script sizes its own data).
    pub workload: String,
    /// The levels: buffer pools (128M,64M,32M, or `auto`: from 1.25x the data down by
    /// halves), or with --vary data the data sizes (rows per table, or warehouses).
    #[arg(long, alias = "pools", default_value = "auto", value_name = "LEVELS", help_heading = "Memory")]
    pub levels: String,
    /// What the levels are: pool (buffer-pool sizes, the data fixed) or data (data
    /// sizes, the pool fixed).
    #[arg(long, default_value = "pool", help_heading = "Memory", value_parser = vary_values())]
    pub vary: crate::study::spec::Vary,
    /// With --vary data: the buffer pool every level runs with.
    #[arg(long, value_name = "SIZE", help_heading = "Memory")]
    pub buffer_pool: Option<String>,
    /// Connections of every level (default 8).
    #[arg(long, help_heading = "Memory")]
    pub threads: Option<u32>,
    /// The longest a level's warm-up waits for the hit ratio to settle, in seconds
    /// (default 300).
    #[arg(long, value_name = "SECONDS", help_heading = "Memory", allow_negative_numbers = true)]
    pub max_warmup: Option<f64>,
    #[command(flatten)]
    pub study: StudyArgs,
}

impl MemoryArgs {
    /// "pools" or "data sizes", for the study's name.
    pub fn vary_word(&self) -> &'static str {
        match self.vary {
            crate::study::spec::Vary::Pool => "pools",
            crate::study::spec::Vary::Data => "data sizes",
        }
    }
}

#[derive(Args, Debug)]
pub struct ScaleArgs {
    pub workload: String,
    /// Instance counts: 1..8, 1,2,4 (as sweep levels).
    #[arg(long, value_name = "LEVELS")]
    pub instances: String,
    /// Each instance's client group size.
    #[arg(long, help_heading = "Scale")]
    pub threads_per_instance: Option<u32>,
    /// Or a total number of threads (users) divided over the instances.
    #[arg(long, alias = "users", help_heading = "Scale")]
    pub threads: Option<u32>,
    /// Buffer pool of each managed instance.
    #[arg(long, value_name = "SIZE", help_heading = "Scale")]
    pub buffer_pool_per_instance: Option<String>,
    /// Split-data variant: divide the data (--warehouses, or --table-size) and
    /// --buffer-pool over the instances.
    #[arg(long, help_heading = "Scale")]
    pub split: bool,
    /// With --split: the buffer pool to divide.
    #[arg(long, value_name = "SIZE", help_heading = "Scale")]
    pub buffer_pool: Option<String>,
    /// Further server options for the managed instances (name=value, repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE", help_heading = "Scale")]
    pub set: Vec<String>,
    /// A server sizeup does not manage (host:port or a socket path), repeatable:
    /// used instead of managed instances.
    #[arg(long = "target", value_name = "HOST:PORT", help_heading = "Scale")]
    pub targets: Vec<String>,
    #[command(flatten)]
    pub study: StudyArgs,
}

#[derive(Args, Debug)]
pub struct ScaleOutArgs {
    pub workload: String,
    /// Node counts: 1..3, 1,2,4 (as sweep levels).
    #[arg(long, value_name = "LEVELS")]
    pub nodes: String,
    /// A node of the cluster (host:port or a socket path), repeatable, node 0 first
    /// (the primary: the data is loaded there and reaches the others by replication).
    #[arg(long = "target", value_name = "HOST:PORT", help_heading = "Scale-out")]
    pub targets: Vec<String>,
    /// Each node's client group size (the same load per node at every count).
    #[arg(long, default_value_t = 8, help_heading = "Scale-out")]
    pub threads_per_node: u32,
    /// every-node: each node reads and writes, a client group per node (Galera); split:
    /// reads to the replicas, writes to the primary (a proxy's read/write split);
    /// round-robin: one group of N x --threads-per-node connections dealt over the N
    /// nodes in turn (a connection pool, or a proxy in round-robin mode).
    #[arg(long, default_value = "every-node", value_parser = route, help_heading = "Scale-out")]
    pub route: crate::study::spec::Route,
    /// With --route split: the primary's workload.
    #[arg(long, default_value = "oltp_write_only", help_heading = "Scale-out")]
    pub write_workload: String,
    /// With --route split: the primary's client group size (default --threads-per-node).
    #[arg(long, help_heading = "Scale-out")]
    pub write_threads: Option<u32>,
    #[command(flatten)]
    pub study: StudyArgs,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Runs and studies: 12 or run:12 for a run, s3 or study:3 for a study.
    #[arg(required = true)]
    pub items: Vec<String>,
    /// The HTML file to write.
    #[arg(long, value_name = "FILE")]
    pub html: PathBuf,
    /// Add a sizing table to each scale study: servers needed for this throughput.
    #[arg(long, allow_negative_numbers = true)]
    pub target_tps: Option<f64>,
    /// Scale-out efficiency for the sizing table.
    #[arg(long, default_value_t = 0.9, requires = "target_tps", allow_negative_numbers = true)]
    pub efficiency: f64,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Baseline: a run (12, run:12) or a study (s3, study:3).
    pub a: String,
    /// The other, of the same kind.
    pub b: String,
    /// Also draw the comparison into this HTML file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum ModelCommand {
    /// Fit X(N) = λN / (1 + σ(N−1) + κN(N−1)) to points or to a study's series.
    Usl {
        /// Points measured by any tool: N:throughput,... e.g. "1:277,2:1469,4:1450".
        #[arg(long, conflicts_with = "from")]
        points: Option<String>,
        /// A stored study (s3 or study:3): each series' levels and steady throughput.
        #[arg(long)]
        from: Option<String>,
    },
}

#[derive(Args, Debug)]
pub struct SizeArgs {
    /// The throughput to provide (tps, or NOPM for TPC-C studies).
    #[arg(long, allow_negative_numbers = true)]
    pub target_tps: f64,
    /// Studies to size from (s3 or study:3), repeatable: scale studies give
    /// instances per server and servers needed; a scale-out study gives e(N) for
    /// --efficiency measured; sweeps answer --at-connections.
    #[arg(long = "from", required = true)]
    pub from: Vec<String>,
    /// Latency objective(s) each level must meet, as `capacity --latency` writes them:
    /// p95<50ms, p99<20ms, p90[delivery]<5s (several: comma-separated); a bare number
    /// is milliseconds (p95<50).
    #[arg(long)]
    pub latency: Option<String>,
    /// Scale-out efficiency E (0..1]: the share of one server's throughput each added
    /// server keeps; or `measured`: e(N) from a scale-out study among --from, at the
    /// server count being planned (measured, interpolated, or past the last count
    /// from its USL fit or trend; the output says which).
    #[arg(long, default_value = "0.9")]
    pub efficiency: String,
    /// Check "target at N connections" against sweep studies (SPEC study 1's question).
    #[arg(long)]
    pub at_connections: Option<u32>,
    /// Cost inputs for TCO (instead of the study's [cost]): server_capex=9000,devices=8,
    /// device_capex=250,power_price_kwh=0.15,cooling_factor=1.5,years=4
    #[arg(long, value_name = "KEY=VALUE,...")]
    pub cost: Option<String>,
    /// Price of a GiB of server memory: with a memory study among --from, each pool's
    /// plan is priced with its memory on top of server_capex, and the cheaper of more
    /// memory per server and more servers is named.
    #[arg(long, value_name = "PRICE")]
    pub memory_price: Option<f64>,
}

#[derive(Subcommand, Debug)]
pub enum StudyCommand {
    /// Run a study file (TOML) end to end.
    Run { file: PathBuf },
    /// Continue an interrupted study from its first unfinished step.
    Resume { id: i64 },
    /// A stored study's tables (default: the latest).
    Show {
        id: Option<i64>,
        /// Print the stored study as JSON.
        #[arg(long)]
        json: bool,
    },
    /// One line per stored study.
    List,
    /// Write a stored study's levels as JSON, CSV (one row per level) or Markdown.
    Export(ExportArgs),
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Seconds per thread level.
    #[arg(long, default_value_t = 5.0, allow_negative_numbers = true)]
    pub step_time: f64,
    /// Rows per table (4 tables).
    #[arg(long, default_value_t = 50_000)]
    pub table_size: u32,
}

/// `--vary`'s values, each with its meaning in `--help`.
fn vary_values() -> impl clap::builder::TypedValueParser<Value = crate::study::spec::Vary> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new([
        PossibleValue::new("pool").help("Buffer-pool sizes (`128M,64M,32M` or `auto`), the data fixed"),
        PossibleValue::new("data").help(
            "Data sizes in the workload's size option (rows per table, warehouses), the pool fixed; each size in a database of its own",
        ),
    ])
    .map(|s| s.parse().expect("one of the values listed"))
}

/// `--cluster`: one of the choices' names, listed in the help.
fn cluster(word: &str) -> Result<crate::plan::ClusterChoice, String> {
    use crate::plan::ClusterChoice;
    ClusterChoice::named(word).ok_or_else(|| format!("give one of {}", ClusterChoice::NAMES.join(", ")))
}

/// `--route`: one of the routes' names, listed in the help.
fn route(word: &str) -> Result<crate::study::spec::Route, String> {
    use crate::study::spec::Route;
    Route::named(word).ok_or_else(|| format!("give one of {}", Route::NAMES.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_of_the_other_workload_kind_are_named() {
        // `run tpcc --tables 4` and `run oltp_read_write --mix ...` ran without a word.
        use clap::CommandFactory;
        let ignored = |args: &[&str]| {
            let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
            options_the_workload_ignores(&Cli::command(), &args)
        };
        let n = ignored(&["sizeup", "run", "tpcc", "--tables=4", "--users", "8", "--rand-seed=3", "--tables", "2"]);
        assert_eq!(n, ["--tables is an option of OLTP workloads; tpcc does not use it"]);
        let n = ignored(&["sizeup", "--home", "h", "run", "oltp_read_write", "--mix", "1,1,1,1,1", "--users=2"]);
        assert_eq!(n, ["--mix is an option of TPC-C workloads; oltp_read_write does not use it"]);
        assert!(ignored(&["sizeup", "run", "oltp_read_write", "--tables=2", "--rand-type=pareto"]).is_empty());
        assert!(ignored(&["sizeup", "prepare", "tpcc", "--warehouses=2", "--threads=2"]).is_empty());
    }

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn sysbench_spellings_are_accepted() {
        let cli = parse(&[
            "sizeup",
            "run",
            "oltp_read_write",
            "--table_size=5000",
            "--tables=4",
            "--mysql-socket=/tmp/s",
            "--skip_trx=on",
            "--max-time=30",
            "--rand-type=uniform",
            "--range_selects=off",
        ]);
        let Command::Run(RunArgs { options: r, .. }) = cli.command else { panic!() };
        let oltp = &r.workload.oltp;
        assert_eq!(oltp.table_size, 5000);
        assert_eq!(oltp.tables, 4);
        assert_eq!(r.target.socket, Some(PathBuf::from("/tmp/s")));
        assert!(oltp.skip_trx);
        assert!(!oltp.range_selects);
        assert_eq!(r.time, 30.0);
        assert_eq!(oltp.rand_type, "uniform");
    }

    #[test]
    fn defaults_are_sysbench_defaults() {
        let Command::Run(r) = parse(&["sizeup", "run", "oltp_read_only"]).command else { panic!() };
        let o = &r.options.workload.oltp;
        assert_eq!((o.tables, o.table_size, o.range_size), (1, 10_000, 100));
        assert!(o.range_selects && o.auto_inc && o.create_secondary && !o.skip_trx);
        assert_eq!(o.rand_type, "special");
        assert_eq!(r.options, RunOptions { target: r.options.target.clone(), ..RunOptions::default() });
        let Command::Run(r) = parse(&["sizeup", "run", "x", "--skip-trx"]).command else { panic!() };
        assert!(r.options.workload.oltp.skip_trx);
    }

    #[test]
    fn a_repeated_option_takes_the_last_value() {
        let Command::Run(r) =
            parse(&["sizeup", "run", "x", "--threads=2", "--threads=8", "--time", "5", "--time=7"]).command
        else {
            panic!()
        };
        assert_eq!((r.options.threads, r.options.time), (8, 7.0));
    }

    #[test]
    fn sysbench_order_parses() {
        let args = ["sizeup", "oltp_read_write", "--threads=3", "--threads=4", "run"].map(std::ffi::OsString::from);
        let Command::Run(r) = Cli::parse_args(args.to_vec()).unwrap().command else { panic!() };
        assert_eq!((r.workload.as_str(), r.options.threads), ("oltp_read_write", 4));
    }

    /// a_resumed_plan_ignored_its_options: `plan --resume N --budget 99h --workload ...`
    /// silently ran the stored plan without them.
    #[test]
    fn a_resumed_plan_ignored_its_options() {
        let parse = |s: &str| Cli::parse_args(s.split(' ').map(std::ffi::OsString::from).collect());
        let e = parse("sizeup plan --resume 3 --budget 99h --workload=tpcc --tables 2").unwrap_err();
        assert_eq!(
            e,
            Invalid::Conflict(
                "--resume takes the plan as it was stored: leave out --budget, --workload, --tables (a new plan takes them)"
                    .into()
            )
        );
        let e = parse("sizeup plan --file p.toml --latency p99<1ms").unwrap_err();
        assert!(matches!(&e, Invalid::Conflict(m) if m.contains("leave out --latency")), "{e}");
        // The connection is not stored (a password never is): it is taken.
        assert!(parse("sizeup plan --resume 3 --password x --socket /tmp/s --html p.html").is_ok());
        assert!(parse("sizeup plan --target-tps 100 --budget 1h --tables 2").is_ok());
    }

    #[test]
    fn bad_switch_is_rejected() {
        assert!(Cli::try_parse_from(["sizeup", "run", "x", "--skip-trx=maybe"]).is_err());
    }
}
