//! sysbench drop-in, checked against the sysbench binary of the test machine: every
//! option its own `--help` lists taken on every verb, the output of a command line in
//! sysbench's order line for line, `--test=<path>` running that file, and the Lua API
//! public scripts use (sysbench's C counters through ffi, the 0.5 globals, dashed
//! option names, option defaults, results of statements without rows, scripts loaded
//! alone, a script's own help()), each with a script of these tests' own run by both.

use crate::common;
use common::*;
use std::ffi::OsString;
use std::process::{Command, Output};

/// The options a sysbench help text lists: name and a value it takes (its default
/// where it shows one, else one of its type).
fn listed_options(help: &str, file: &std::path::Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in help.lines() {
        let Some(body) = line.trim_start().strip_prefix("--") else { continue };
        let token = body.split_whitespace().next().unwrap_or("");
        let cut = token.find(['=', '[']).unwrap_or(token.len());
        let (name, placeholder) = token.split_at(cut);
        let default = line.trim_end().strip_suffix(']').and_then(|l| l.rsplit_once(" [")).map(|(_, d)| d.to_string());
        let value = match (default, placeholder) {
            (Some(d), _) if !d.is_empty() => d,
            (_, "[=on|off]") => "on".into(),
            (_, "=N") => "1".into(),
            (_, "=SIZE") => "64K".into(),
            (_, "=FILENAME") => file.display().to_string(),
            (_, "=[LIST,...]") => "1".into(),
            _ => "x".into(),
        };
        out.push((name.to_string(), value));
    }
    out
}

fn sysbench_help(args: &[&str]) -> String {
    let out = Command::new("sysbench").args(args).output().expect("sysbench is installed (scripts/setup.sh)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every option of `sysbench --help` and of `sysbench oltp_read_write help` on
/// prepare, run and cleanup: sysbench takes each on every verb, so a script's three
/// command lines can share their options (cleanup refused --tables; prepare refused
/// --db-driver, so PerfKitBenchmarker's prepare line failed).
#[test]
fn every_option_sysbench_lists_is_taken_on_every_verb() {
    let config = std::env::temp_dir().join(format!("sizeup-sb-config-{}", std::process::id()));
    std::fs::write(&config, "# nothing\n").unwrap();
    let mut options = listed_options(&sysbench_help(&["--help"]), &config);
    options.extend(listed_options(&sysbench_help(&["oltp_read_write", "help"]), &config));
    // Printing help or the version ends sysbench before any verb.
    options.retain(|(n, _)| n != "help" && n != "version");
    assert!(options.len() > 60, "sysbench's help lists its options: {options:?}");
    let mut refused = Vec::new();
    for verb in ["prepare", "run", "cleanup"] {
        for (name, value) in &options {
            let option = format!("--{name}={value}");
            let args: Vec<OsString> = ["sizeup", "oltp_read_write", &option, verb].map(OsString::from).to_vec();
            if let Err(e) = sizeup::cli::Cli::parse_args(args) {
                refused.push(format!("{verb} {option}: {}", e.to_string().lines().next().unwrap_or("")));
            }
        }
    }
    // Command lines from published studies, whole.
    for line in [
        // PerfKitBenchmarker's prepare.
        "sizeup oltp_read_write --db-driver=mysql --tables=2 --table_size=1000 --report-interval=10 --threads=2 \
         --mysql-socket=/tmp/x.sock --mysql-user=u --mysql-db=sbtest prepare",
        // A 2008 sizing guide's sysbench 0.4 line.
        "sizeup --test=oltp --mysql-table-engine=innodb --oltp-table-size=1000 --mysql-engine-trx=yes \
         --init-rng=on --max-requests=0 --max-time=60 --num-threads=16 --oltp-read-only=off run",
        // A script's cleanup given its prepare options.
        "sizeup oltp_read_write --tables=4 --table-size=1000 --oltp-tables-count=4 --mysql-socket= cleanup",
    ] {
        let args: Vec<OsString> = line.split_whitespace().map(OsString::from).collect();
        if let Err(e) = sizeup::cli::Cli::parse_args(args) {
            refused.push(format!("{line}: {e}"));
        }
    }
    std::fs::remove_file(&config).unwrap();
    assert!(refused.is_empty(), "refused where sysbench takes them:\n{}", refused.join("\n"));

    // `sizeup oltp_read_write help` was an unrecognised subcommand; it lists the
    // options as sysbench does.
    let ours = Command::new(env!("CARGO_BIN_EXE_sizeup")).args(["oltp_read_write", "help"]).output().unwrap();
    assert!(ours.status.success(), "{}", String::from_utf8_lossy(&ours.stderr));
    let theirs = sysbench_help(&["oltp_read_write", "help"]);
    let ours = String::from_utf8_lossy(&ours.stdout);
    assert_eq!(ours.lines().skip(1).collect::<Vec<_>>(), theirs.lines().skip(1).collect::<Vec<_>>(), "{ours}");
}

/// sysbench's stdout, digits folded and its first line (the version) and histogram
/// rows left out, to compare two tools' output by layout.
fn layout(out: &str) -> Vec<String> {
    out.lines()
        .skip(1)
        .filter(|l| !(l.contains(" |") && l.trim_start().starts_with(|c: char| c.is_ascii_digit())))
        .map(crate::sysbench_output::fold)
        .collect()
}

fn sysbench_on(s: &TestServer, database: &str, args: &[&str]) -> Output {
    let socket = format!("--mysql-socket={}", s.socket.display());
    Command::new("sysbench")
        .args(args)
        .args([socket.as_str(), "--mysql-user=root", &format!("--mysql-db={database}")])
        .output()
        .expect("sysbench is installed")
}

fn sizeup_on(s: &TestServer, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sizeup")).args(["--home", &s.home()]).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Started the sysbench way, sizeup prints what sysbench prints, line for line: its
/// header, no interval lines unless --report-interval asks (sizeup printed one a
/// second), the histogram before the closing block with sysbench's buckets (sizeup
/// printed it after its own summary, in 10 % buckets), and nothing else on stdout.
#[test]
fn sysbench_command_lines_print_sysbench_output_line_for_line() {
    let s = TestServer::start();
    s.sql("CREATE DATABASE sbt");
    let data = ["oltp_point_select", "--tables=1", "--table-size=500"];
    stdout(&sysbench_on(&s, "sbt", &[&data[..], &["prepare"]].concat()));
    let prepared = stdout(&sizeup_on(&s, &[&data[..], &["prepare"]].concat()));
    assert!(prepared.starts_with("sysbench 1.0.20 ("), "sysbench's header on prepare too: {prepared}");

    let quiet = [&data[..], &["--time=2", "--histogram", "run"]].concat();
    let (theirs, ours) = (stdout(&sysbench_on(&s, "sbt", &quiet)), stdout(&sizeup_on(&s, &quiet)));
    assert!(ours.starts_with("sysbench 1.0.20 (sizeup "), "{ours}");
    assert_eq!(layout(&ours), layout(&theirs), "sizeup:\n{ours}\nsysbench:\n{theirs}");
    assert!(!ours.contains("[ 1s ]"), "no interval lines unless asked: {ours}");
    let rows =
        |out: &str| out.lines().filter(|l| l.contains(" |") && l.trim_start().starts_with(char::is_numeric)).count();
    // sysbench's buckets are 1.8 % wide: a run of thousands of point selects fills
    // more than ten of them (sizeup's 10 % buckets gave a handful).
    assert!(rows(&ours) > 10, "{ours}");
    let at = |out: &str, line: &str| out.lines().position(|l| l.starts_with(line)).unwrap_or(usize::MAX);
    assert!(at(&ours, "Latency histogram") < at(&ours, "SQL statistics:"), "{ours}");

    // With --report-interval: its lines, and the header says so.
    let lines = [&data[..], &["--time=2", "--report-interval=1", "run"]].concat();
    let (theirs, ours) = (stdout(&sysbench_on(&s, "sbt", &lines)), stdout(&sizeup_on(&s, &lines)));
    assert!(ours.contains("Report intermediate results every 1 second(s)\n"), "{ours}");
    assert!(ours.lines().any(|l| l.starts_with("[ 1s ] thds: 1 tps: ")), "{ours}");
    let steady = |out: &str| layout(out).into_iter().filter(|l| !l.starts_with("[ N")).collect::<Vec<_>>();
    assert_eq!(steady(&ours), steady(&theirs), "sizeup:\n{ours}\nsysbench:\n{theirs}");

    // Started the sizeup way, sizeup's own output stays.
    let own = stdout(&sizeup_on(&s, &["run", "oltp_point_select", "--tables=1", "--table-size=500", "--time=1"]));
    assert!(own.contains("oltp_point_select summary (run "), "{own}");
    assert!(!own.starts_with("sysbench 1.0.20"), "{own}");
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn field(out: &str, label: &str) -> f64 {
    let line = out.lines().find(|l| l.trim_start().starts_with(label)).unwrap_or_else(|| panic!("no {label} in {out}"));
    line.split_whitespace().nth(label.split_whitespace().count()).unwrap().parse().unwrap()
}

/// sysbench's C counters as public scripts reach them (Percona-Lab's sysbench-tpcc
/// declares `void sb_counter_inc(int, sb_counter_type)` and counts its intended
/// rollbacks as errors): sizeup failed to load such a script ("declaration specifier
/// expected near 'sb_counter_type'"). Counted under both tools alike.
#[test]
fn scripts_count_through_sysbenchs_c_counters_as_under_sysbench() {
    let s = TestServer::start();
    s.sql("CREATE DATABASE sbt");
    s.sql("CREATE DATABASE sbtest");
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "counters.lua",
        r#"ffi = require("ffi")
ffi.cdef[[
void sb_counter_inc(int, sb_counter_type);
typedef uint32_t useconds_t;
int usleep(useconds_t useconds);
]]
function thread_init()
   con = sysbench.sql.driver():connect()
end
function event()
   con:query("SELECT 1")
   ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR)
   ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_WRITE)
   ffi.C.usleep(100)
end
"#,
    );
    let run = [script.as_str(), "--events=40", "--time=0", "--threads=2", "run"];
    let (theirs, ours) = (stdout(&sysbench_on(&s, "sbt", &run)), stdout(&sizeup_on(&s, &run)));
    for label in ["read:", "write:", "ignored errors:", "total number of events:"] {
        assert_eq!(field(&ours, label), field(&theirs, label), "{label}\nsizeup:\n{ours}\nsysbench:\n{theirs}");
    }
    assert_eq!(field(&ours, "ignored errors:"), 40.0, "{ours}");
}

/// The globals sysbench 0.5 scripts read (num_threads, max_requests, max_time,
/// tx_rate were nil under sizeup, so sysbench's legacy scripts failed), for a script
/// without an options table, and for one with: a dashed name read with `_`, options
/// declared without a default, what a statement without rows returns, a script loaded
/// with no command, and its own help().
#[test]
fn the_lua_api_old_and_public_scripts_use_matches_sysbench() {
    let s = TestServer::start();
    s.sql("CREATE DATABASE sbt");
    s.sql("CREATE DATABASE sbtest");
    let dir = tempfile::tempdir().unwrap();
    let legacy = write(
        dir.path(),
        "legacy.lua",
        r#"function init()
   print("globals", num_threads, max_requests, max_time, tx_rate, my_opt)
end
function event() end
"#,
    );
    let run =
        [legacy.as_str(), "--num-threads=2", "--max-requests=7", "--max-time=3", "--tx-rate=0", "--my-opt=x", "run"];
    let line = |out: &str, head: &str| out.lines().find(|l| l.starts_with(head)).map(str::to_string);
    let (theirs, ours) = (stdout(&sysbench_on(&s, "sbt", &run)), stdout(&sizeup_on(&s, &run)));
    assert_eq!(line(&ours, "globals"), Some("globals\t2\t7\t3\t0\tx".into()), "{ours}");
    assert_eq!(line(&ours, "globals"), line(&theirs, "globals"));

    let options = write(
        dir.path(),
        "options.lua",
        r#"sysbench.cmdline.options = {
   ["dash-opt"] = {"a dashed option", 5},
   flag = {"a switch without a default", nil, sysbench.cmdline.ARG_BOOL},
   num = {"a number without a default", nil, sysbench.cmdline.ARG_INT},
}
print("loaded", sysbench.cmdline.command)
function help()
   print("the script's own help")
end
function prepare()
   local con = sysbench.sql.driver():connect()
   con:query("CREATE TABLE t_exec (id INT PRIMARY KEY, v INT)")
   con:query("INSERT INTO t_exec VALUES (1, 0)")
   local rs = con:prepare("UPDATE t_exec SET v = v + 1 WHERE id = 1"):execute()
   local q = con:query("UPDATE t_exec SET v = v + 1 WHERE id = 1")
   print("options", sysbench.opt.dash_opt, sysbench.opt.flag, sysbench.opt.num,
         type(rs), rs == nil, rs and "true" or "false", type(q), q == nil)
   con:query("DROP TABLE t_exec")
end
"#,
    );
    let prepare = [options.as_str(), "--dash-opt=7", "prepare"];
    let (theirs, ours) = (stdout(&sysbench_on(&s, "sbt", &prepare)), stdout(&sizeup_on(&s, &prepare)));
    assert_eq!(line(&ours, "options"), Some("options\t7\ttrue\t0\tcdata\ttrue\ttrue\tcdata\ttrue".into()), "{ours}");
    assert_eq!(line(&ours, "options"), line(&theirs, "options"));

    // Named alone, a script is loaded (its command nil) and nothing more; `help` calls
    // its help().
    for args in [&[options.as_str()][..], &[options.as_str(), "help"][..]] {
        let (theirs, ours) = (stdout(&sysbench_on(&s, "sbt", args)), stdout(&sizeup_on(&s, args)));
        assert_eq!(ours.lines().skip(1).collect::<Vec<_>>(), theirs.lines().skip(1).collect::<Vec<_>>(), "{args:?}");
    }
    assert!(stdout(&sizeup_on(&s, &[options.as_str(), "help"])).contains("the script's own help"));

    // A command of the script's own, given as sysbench's verb (sysbench-tpcc's `check`),
    // runs in --threads states; sizeup said it was not a command.
    let commands = write(
        dir.path(),
        "commands.lua",
        r#"function hello()
   print("hello from", sysbench.tid, sysbench.cmdline.command)
end
sysbench.cmdline.commands = { hello = {hello, sysbench.cmdline.PARALLEL_COMMAND} }
"#,
    );
    let hello = [commands.as_str(), "--threads=3", "hello"];
    let said = |out: &str| {
        let mut l: Vec<String> = out.lines().filter(|l| l.starts_with("hello")).map(str::to_string).collect();
        l.sort();
        l
    };
    let (theirs, ours) = (stdout(&sysbench_on(&s, "sbt", &hello)), stdout(&sizeup_on(&s, &hello)));
    assert_eq!(said(&ours), ["hello from\t0\thello", "hello from\t1\thello", "hello from\t2\thello"], "{ours}");
    // sysbench's threads print at once, and their lines sometimes interleave mid-line
    // (CI saw "hello from\t0hello from\t1..."): count its greetings instead.
    assert_eq!(theirs.matches("hello from").count(), 3, "{theirs}");
}

/// `--test=<path>` runs that file even when it is named like a built-in: a modified
/// oltp_point_select.lua with a second SELECT ran as the built-in under sizeup (one
/// read per event), as written under sysbench (two).
#[test]
fn a_script_named_like_a_built_in_runs_as_written() {
    let s = TestServer::start();
    s.sql("CREATE DATABASE sbt");
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read_to_string("/usr/share/sysbench/oltp_point_select.lua").unwrap();
    let modified =
        original.replacen("execute_point_selects()", "execute_point_selects()\n   con:query(\"SELECT 1\")", 1);
    assert_ne!(original, modified, "the event() of sysbench's script calls execute_point_selects()");
    let path = write(dir.path(), "oltp_point_select.lua", &modified);
    let data = ["--tables=1", "--table-size=100"];
    let test = format!("--test={path}");
    stdout(&sysbench_on(&s, "sbt", &["oltp_point_select", data[0], data[1], "prepare"]));
    stdout(&sizeup_on(&s, &["oltp_point_select", data[0], data[1], "prepare"]));
    let run = [test.as_str(), data[0], data[1], "--events=30", "--time=0", "run"];
    let (theirs, ours) = (stdout(&sysbench_on(&s, "sbt", &run)), stdout(&sizeup_on(&s, &run)));
    assert_eq!(field(&theirs, "read:"), 60.0, "{theirs}");
    assert_eq!(field(&ours, "read:"), 60.0, "{ours}");
}
