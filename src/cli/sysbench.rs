//! sysbench command lines, rewritten into sizeup's before clap reads them: sysbench's
//! verb order (`sizeup oltp_read_write --threads=8 run`) and 0.4's `--test=oltp`
//! with `--oltp-test-mode` and `--oltp-nontrx-mode`. Everything else sysbench spells
//! differently is an alias on the option itself (`crate::options`).
//!
//! A rewrite of the arguments only: what they mean is still checked by clap and
//! `request`, and a sizeup command line passes through unchanged.

use crate::error::Invalid;
use std::ffi::OsString;

/// The verbs sysbench takes last, and sizeup first (`help` lists a script's options).
pub(crate) const VERBS: [&str; 5] = ["run", "prepare", "cleanup", "prewarm", "help"];

/// Options that take a value in the next argument when written without `=`, so their
/// value is not taken for a workload or a verb.
pub(crate) const GLOBAL_WITH_VALUE: [&str; 2] = ["--home", "--results"];

/// sizeup's argument list for a sysbench-style one (unchanged otherwise).
pub fn rewrite(args: Vec<OsString>, subcommands: &[&str]) -> Result<Vec<OsString>, Invalid> {
    let Some(text): Option<Vec<String>> = args.iter().map(|a| a.to_str().map(str::to_string)).collect() else {
        return Ok(args); // not UTF-8: clap will say what is wrong
    };
    let positional = positionals(&text);
    let test = option_value(&text, "--test");
    match positional.first() {
        // sizeup's order: a subcommand first. 0.4's --test may stand for the workload.
        Some((_, first)) if subcommands.contains(&first.as_str()) => {
            if test.is_some() && VERBS.contains(&first.as_str()) && positional.len() == 1 {
                let (i, verb) = positional[0].clone();
                return Ok(build(&text, i, &verb, &test_workload(&text)?));
            }
            Ok(args)
        }
        None if test.is_none() => Ok(args),
        _ => {
            // sysbench's order: [workload] options... verb
            // A script's own command (sysbench-tpcc's `check`): the last word after a
            // script, run by prewarm's machinery as that command.
            if let [(_, first), .., (at, command)] = &positional[..] {
                let script = workload_named(first);
                if test.is_none()
                    && !VERBS.contains(&command.as_str())
                    && crate::workload::script::is_script(&script)
                    && !positional.iter().any(|(_, p)| VERBS.contains(&p.as_str()))
                {
                    let mut rest = text.clone();
                    rest[positional[0].0] = String::new();
                    let mut out = build(&rest, *at, "prewarm", &script);
                    out.push(format!("--script-command={command}").into());
                    return Ok(out);
                }
            }
            let verb =
                positional.iter().rev().find(|(_, p)| VERBS.contains(&p.as_str())).cloned().ok_or_else(|| {
                    let given = positional.first().map_or("", |(_, p)| p.as_str());
                    Invalid::Value(format!(
                        "'{given}' is not a command; sysbench's order needs a verb at the end (run, prepare, cleanup), \
                         or write `sizeup run {given} ...`"
                    ))
                })?;
            let workload = match test {
                Some(_) => test_workload(&text)?,
                None => positional.iter().find(|(i, _)| *i != verb.0).map(|(_, p)| p.clone()).ok_or_else(|| {
                    Invalid::Missing(
                        "name the workload, e.g. `sizeup run oltp_read_write` (or sysbench's `sizeup oltp_read_write run`)"
                            .into(),
                    )
                })?,
            };
            let mut rest = text.clone();
            // Drop the workload's own position when it was given as a word.
            if test.is_none() {
                if let Some((i, _)) = positional.iter().find(|(i, p)| *i != verb.0 && *p == workload) {
                    rest[*i] = String::new();
                }
            }
            Ok(build(&rest, verb.0, &verb.1, &workload_named(&workload)))
        }
    }
}

/// A workload word of a sysbench command line: sizeup's own workloads by name, else a
/// script as sysbench looks for `NAME.lua` (the current directory, then its own
/// scripts' directory): `sizeup select_random_points run` runs sysbench's script.
pub fn workload_named(name: &str) -> String {
    if name.contains('/') || name.ends_with(".lua") || crate::workload::kind(name).is_ok() {
        return name.to_string();
    }
    ["./", "/usr/share/sysbench/"]
        .iter()
        .map(|dir| format!("{dir}{name}.lua"))
        .find(|p| std::path::Path::new(p).is_file())
        .unwrap_or_else(|| name.to_string())
}

/// The words of a command line that are not options (nor a global option's value),
/// with their positions; the program's name left out.
fn positionals(text: &[String]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut skip_next = false;
    for (i, a) in text.iter().enumerate().skip(1) {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if a.starts_with('-') {
            skip_next = GLOBAL_WITH_VALUE.contains(&a.as_str());
            continue;
        }
        out.push((i, a.clone()));
    }
    out
}

/// A script named with no verb and no sizeup command (`sizeup ./my.lua --opt=1`):
/// sysbench loads such a script and stops.
pub fn script_alone(args: &[OsString], subcommands: &[&str]) -> Option<String> {
    let text: Vec<String> = args.iter().map(|a| a.to_str().map(str::to_string)).collect::<Option<_>>()?;
    match &positionals(&text)[..] {
        [(_, script)] if !subcommands.contains(&script.as_str()) && !VERBS.contains(&script.as_str()) => {
            let script = workload_named(script);
            (crate::workload::script::is_script(&script) && std::path::Path::new(&script).is_file()).then_some(script)
        }
        _ => None,
    }
}

/// `prog globals... verb workload options...`, leaving out `--test` and 0.4's modes,
/// marked as sysbench's (`--sysbench-output`): its output is sysbench's, and a run
/// prints interval lines only when `--report-interval` asks, as sysbench does.
fn build(text: &[String], verb_at: usize, verb: &str, workload: &str) -> Vec<OsString> {
    let mut out: Vec<OsString> = vec![text[0].clone().into(), "--sysbench-output".into()];
    let mut globals = Vec::new();
    let mut options = Vec::new();
    let mut iter = text.iter().enumerate().skip(1).peekable();
    while let Some((i, a)) = iter.next() {
        if i == verb_at || a.is_empty() {
            continue;
        }
        let name = a.split('=').next().unwrap_or("");
        if ["--test", "--oltp-test-mode", "--oltp-nontrx-mode"].contains(&name) {
            if !a.contains('=') {
                iter.next();
            }
            continue;
        }
        if GLOBAL_WITH_VALUE.contains(&name) {
            globals.push(a.clone());
            if !a.contains('=') {
                if let Some((_, v)) = iter.next() {
                    globals.push(v.clone());
                }
            }
            continue;
        }
        options.push(a.clone());
    }
    out.extend(globals.into_iter().map(OsString::from));
    out.push(verb.into());
    out.push(workload.into());
    out.extend(options.into_iter().map(OsString::from));
    if verb == "run" && option_value(text, "--report-interval").is_none() {
        out.push("--report-interval=0".into());
    }
    out
}

/// The value of `--name=v` or `--name v`.
fn option_value(text: &[String], name: &str) -> Option<String> {
    let mut found = None;
    for (i, a) in text.iter().enumerate() {
        if let Some(v) = a.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
            found = Some(v.to_string());
        } else if a == name {
            found = text.get(i + 1).cloned();
        }
    }
    found // the last one, as sysbench takes it
}

/// The workload `--test` names: a script's path, which always runs that file
/// (`--test=/usr/share/sysbench/oltp_read_write.lua`, a modified `oltp.lua`), a name
/// (`oltp_read_write`, or a script found as sysbench finds it, see [`workload_named`]),
/// or 0.4's `oltp` with its modes.
fn test_workload(text: &[String]) -> Result<String, Invalid> {
    let test = option_value(text, "--test").unwrap_or_default();
    if test.contains('/') || test.ends_with(".lua") {
        return Ok(test);
    }
    if test != "oltp" {
        return Ok(workload_named(&test));
    }
    // sysbench 0.4: --oltp-test-mode=complex (default) | simple | nontrx.
    let mode = option_value(text, "--oltp-test-mode").unwrap_or_else(|| "complex".into());
    Ok(match mode.as_str() {
        "complex" => "oltp_complex",
        "simple" => "oltp_point_select",
        "nontrx" => match option_value(text, "--oltp-nontrx-mode").unwrap_or_else(|| "select".into()).as_str() {
            "select" => "oltp_point_select",
            "update_key" => "oltp_update_index",
            "update_nokey" => "oltp_update_non_index",
            "insert" => "oltp_insert",
            "delete" => "oltp_delete",
            other => {
                return Err(Invalid::Value(format!(
                    "--oltp-nontrx-mode={other}: sysbench 0.4 knew select, update_key, update_nokey, insert, delete"
                )))
            }
        },
        other => {
            return Err(Invalid::Value(format!("--oltp-test-mode={other}: sysbench 0.4 knew complex, simple, nontrx")))
        }
    }
    .to_string())
}

/// Every option sysbench 1.0.20 takes (`sysbench --help`, the MySQL and PostgreSQL
/// drivers, oltp_common.lua's options) and the 0.4/0.5 spellings old command lines
/// still carry: name, whether it is an on/off switch, and, for one whose behaviour
/// sizeup cannot give, what a user should hear when it asks for it.
///
/// sysbench takes each of them on every verb and ignores what the verb has no use for
/// (`--time` on prepare, `--tables` on cleanup of a script that drops what it made),
/// so a script's three command lines can share their options. A verb of sizeup's that
/// knows an option reads it; these are the rest, taken out before clap reads the line.
const SYSBENCH_OPTIONS: &[(&str, bool, Option<&str>)] = &[
    // General options.
    ("threads", false, None),
    ("events", false, None),
    ("time", false, None),
    ("forced-shutdown", false, None),
    ("thread-stack-size", false, None),
    ("rate", false, None),
    ("report-interval", false, None),
    (
        "report-checkpoints",
        false,
        Some("sizeup prints no checkpoint reports; every interval is stored (`sizeup runs export ID --format csv`)"),
    ),
    ("debug", true, Some("sizeup prints no debug trace")),
    ("validate", true, Some("sizeup runs no validation checks (for TPC-C, `sizeup check tpcc`)")),
    ("config-file", false, None),
    ("tx-rate", false, None),
    ("max-requests", false, None),
    ("max-time", false, None),
    ("num-threads", false, None),
    ("warmup-time", false, None),
    // Random numbers.
    ("rand-type", false, None),
    ("rand-spec-iter", false, None),
    ("rand-spec-pct", false, None),
    ("rand-spec-res", false, None),
    ("rand-seed", false, None),
    ("rand-pareto-h", false, None),
    ("rand-zipfian-exp", false, None),
    // Logging and reports.
    ("verbosity", false, None),
    ("percentile", false, None),
    ("histogram", true, None),
    // Database drivers.
    ("db-driver", false, None),
    ("db-ps-mode", false, None),
    ("db-debug", true, Some("sizeup prints no database debug trace")),
    ("mysql-host", false, None),
    ("mysql-port", false, None),
    ("mysql-socket", false, None),
    ("mysql-user", false, None),
    ("mysql-password", false, None),
    ("mysql-db", false, None),
    ("mysql-ssl", false, None),
    ("mysql-ssl-ca", false, None),
    ("mysql-ssl-cert", false, None),
    ("mysql-ssl-key", false, None),
    ("mysql-ssl-cipher", false, Some("sizeup's TLS (rustls) chooses the cipher; --mysql-ssl-cipher is not applied")),
    ("mysql-compression", true, Some("sizeup's connections are not compressed")),
    ("mysql-debug", true, Some("sizeup prints no client library trace")),
    ("mysql-ignore-errors", false, None),
    ("mysql-dry-run", true, Some("sizeup sends every statement to the server; --mysql-dry-run is not done")),
    ("pgsql-host", false, None),
    ("pgsql-port", false, None),
    ("pgsql-user", false, None),
    ("pgsql-password", false, None),
    ("pgsql-db", false, None),
    ("pgsql-variant", false, None),
    // oltp_common.lua.
    ("tables", false, None),
    ("table-size", false, None),
    ("range-size", false, None),
    ("point-selects", false, None),
    ("simple-ranges", false, None),
    ("sum-ranges", false, None),
    ("order-ranges", false, None),
    ("distinct-ranges", false, None),
    ("index-updates", false, None),
    ("non-index-updates", false, None),
    ("delete-inserts", false, None),
    ("range-selects", true, None),
    ("auto-inc", true, None),
    ("skip-trx", true, None),
    ("secondary", true, None),
    ("create-secondary", true, None),
    ("mysql-storage-engine", false, None),
    // sysbench 0.4 and 0.5 (the legacy oltp.lua's globals and the built-in oltp test).
    ("oltp-tables-count", false, None),
    ("oltp-table-size", false, None),
    ("oltp-table-name", false, None),
    ("oltp-test-mode", false, None),
    ("oltp-nontrx-mode", false, None),
    ("oltp-read-only", true, None),
    ("oltp-skip-trx", true, None),
    ("oltp-auto-inc", true, None),
    ("oltp-secondary", true, None),
    ("oltp-range-size", false, None),
    ("oltp-point-selects", false, None),
    ("oltp-simple-ranges", false, None),
    ("oltp-sum-ranges", false, None),
    ("oltp-order-ranges", false, None),
    ("oltp-distinct-ranges", false, None),
    ("oltp-index-updates", false, None),
    ("oltp-non-index-updates", false, None),
    ("oltp-delete-inserts", false, None),
    ("oltp-dist-type", false, None),
    ("oltp-dist-iter", false, None),
    ("oltp-dist-pct", false, None),
    ("oltp-dist-res", false, None),
    ("oltp-connect-delay", false, None),
    ("oltp-user-delay-min", false, None),
    ("oltp-user-delay-max", false, None),
    ("oltp-reconnect-mode", false, None),
    ("oltp-reconnect", true, None),
    ("mysql-table-engine", false, None),
    ("mysql-table-type", false, None),
    ("mysql-engine-trx", false, None),
    ("myisam-max-rows", false, None),
    ("init-rng", false, None),
    ("seed-rng", false, None),
];

/// The sysbench option `--name`, by either spelling (`table_size`, `table-size`).
fn sysbench_option(name: &str) -> Option<&'static (&'static str, bool, Option<&'static str>)> {
    let name = name.replace('_', "-");
    SYSBENCH_OPTIONS.iter().find(|(n, _, _)| *n == name)
}

/// Takes out of `args` (after the verb) the sysbench options the command does not
/// know (`known` says which it does), as sysbench ignores them; returns what is left
/// and a note for each that asked for something sizeup does not do. `--db-driver`
/// naming another driver is refused: nothing could run.
pub fn drop_unused(args: Vec<OsString>, known: &dyn Fn(&str) -> bool) -> Result<(Vec<OsString>, Vec<String>), Invalid> {
    let mut out = Vec::with_capacity(args.len());
    let mut notes = Vec::new();
    let mut args = args.into_iter().peekable();
    while let Some(arg) = args.next() {
        let Some(body) = arg.to_str().and_then(|a| a.strip_prefix("--")) else {
            out.push(arg);
            continue;
        };
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (body.to_string(), None),
        };
        // `--tables 2` as `--tables=2`: an option this verb does not use takes its value
        // along when dropped (sysbench_options_take_both_spellings).
        let takes_value = sysbench_option(&name).is_some_and(|o| !o.1) && !known(&name);
        let value = match value {
            None if takes_value && args.peek().and_then(|a| a.to_str()).is_some_and(|a| !a.starts_with("--")) => {
                args.next().map(|a| a.to_string_lossy().into_owned())
            }
            v => v,
        };
        let (name, value) = (name.as_str(), value.as_deref());
        // An empty server list (`--mysql-socket=`, as scripts that build command lines
        // write it) is sysbench's default: none given.
        if value == Some("") && ["mysql-socket", "mysql-host", "mysql-port"].contains(&name.replace('_', "-").as_str())
        {
            continue;
        }
        let Some(&(canonical, switch, note)) = sysbench_option(name).filter(|_| !known(name)) else {
            out.push(arg);
            continue;
        };
        if canonical == "db-driver" && value.is_some_and(|v| v != "mysql") {
            return Err(Invalid::Value(format!(
                "--db-driver={}: sizeup speaks the MySQL protocol only (MySQL, MariaDB, Percona, Galera); \
                 leave --db-driver out",
                value.unwrap_or_default()
            )));
        }
        // A note only when the option asks for what sizeup does not do.
        let asked = match (switch, value) {
            (true, None) => true,
            (true, Some(v)) => crate::options::parse_switch(v).unwrap_or(true),
            (false, v) => v.is_some_and(|v| !v.is_empty()),
        };
        if let Some(note) = note.filter(|_| asked) {
            notes.push(format!("--{name}: {note}"));
        }
    }
    Ok((out, notes))
}

/// sysbench's `--config-file=FILE`: each `name=value` line of the file (values may be
/// quoted, `#` starts a comment) is an option given where the file was named, so
/// later options override it.
pub fn expand_config_files(args: Vec<OsString>) -> Result<Vec<OsString>, Invalid> {
    let mut out = Vec::with_capacity(args.len());
    for arg in args {
        let Some(path) =
            arg.to_str().and_then(|a| a.strip_prefix("--config-file=").or(a.strip_prefix("--config_file=")))
        else {
            out.push(arg);
            continue;
        };
        let text = crate::user_file::read_to_string(
            std::path::Path::new(path),
            crate::user_file::TEXT_LIMIT,
            "a config file is a few KiB",
        )
        .map_err(|e| Invalid::File(format!("--config-file={path}: {e}")))?;
        for (n, line) in text.lines().enumerate() {
            let Some((name, value)) = line.split_once('=') else { continue };
            let name = name.trim();
            if name.is_empty() || name.starts_with('#') {
                continue;
            }
            let value = value.trim_start();
            let value = match value.chars().next() {
                Some(q @ ('\'' | '"')) => match value[1..].find(q) {
                    Some(end) => &value[1..1 + end],
                    // The key and line only: the value may be a password
                    // (secrets_kept_out_of_option_file_errors).
                    None => {
                        return Err(Invalid::File(format!(
                            "--config-file={path} line {}: {name}'s value has an unclosed quote",
                            n + 1
                        )))
                    }
                },
                _ => value.split('#').next().unwrap_or("").trim_end(),
            };
            out.push(format!("--{name}={value}").into());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUBS: [&str; 6] = ["run", "prepare", "cleanup", "prewarm", "server", "sweep"];

    fn rw(args: &str) -> Result<String, Invalid> {
        let v: Vec<OsString> = args.split(' ').map(OsString::from).collect();
        rewrite(v, &SUBS).map(|o| o.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" "))
    }

    #[test]
    fn sysbench_verb_order_becomes_sizeups() {
        // Marked as sysbench's; a run prints interval lines only when asked, as sysbench.
        assert_eq!(
            rw("sizeup oltp_read_write --threads=8 run").unwrap(),
            "sizeup --sysbench-output run oltp_read_write --threads=8 --report-interval=0"
        );
        assert_eq!(
            rw("sizeup oltp_read_write --report-interval=2 run").unwrap(),
            "sizeup --sysbench-output run oltp_read_write --report-interval=2"
        );
        assert_eq!(
            rw("sizeup --home /h oltp_point_select --tables=2 prepare").unwrap(),
            "sizeup --sysbench-output --home /h prepare oltp_point_select --tables=2"
        );
        assert_eq!(rw("sizeup run oltp_read_write --threads=8").unwrap(), "sizeup run oltp_read_write --threads=8");
        assert_eq!(rw("sizeup server start").unwrap(), "sizeup server start");
        assert!(
            matches!(rw("sizeup oltp_read_write --threads=8"), Err(Invalid::Value(m)) if m.contains("verb at the end"))
        );
        // A script's own command.
        assert_eq!(
            rw("sizeup ./tpcc.lua --scale=2 check").unwrap(),
            "sizeup --sysbench-output prewarm ./tpcc.lua --scale=2 --script-command=check"
        );
    }

    #[test]
    fn sysbench_options_a_verb_has_no_use_for_are_dropped_with_notes() {
        let args = |s: &str| s.split(' ').map(OsString::from).collect::<Vec<_>>();
        let known = |n: &str| n == "threads";
        let (out, notes) = drop_unused(
            args("--threads=2 --time=5 --mysql-socket= --mysql-dry-run --mysql-compression=off --x=1 word"),
            &known,
        )
        .unwrap();
        let out: Vec<_> = out.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(out, ["--threads=2", "--x=1", "word"], "unknown to sysbench too: left for clap to refuse");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("--mysql-dry-run: sizeup sends every statement"), "{notes:?}");
        assert!(
            matches!(drop_unused(args("--db-driver=pgsql"), &known), Err(Invalid::Value(m)) if m.contains("MySQL protocol only"))
        );
        assert!(drop_unused(args("--db-driver=mysql"), &known).unwrap().0.is_empty());
    }

    /// sysbench_options_take_both_spellings: `cleanup W --tables 2` was a parse error
    /// ("unexpected argument '2' found") where `--tables=2` worked.
    #[test]
    fn sysbench_options_take_both_spellings() {
        let args = |s: &str| s.split(' ').map(OsString::from).collect::<Vec<_>>();
        let known = |n: &str| n == "threads";
        for given in ["--tables 2 --table-size 10 --threads 3", "--tables=2 --table_size=10 --threads 3"] {
            let (out, _) = drop_unused(args(given), &known).unwrap();
            assert_eq!(out, args("--threads 3"), "{given}");
        }
        // A switch takes no value; an option followed by an option has none.
        let (out, _) = drop_unused(args("--mysql-dry-run word --tables --threads=2"), &known).unwrap();
        assert_eq!(out, args("word --threads=2"));
    }

    #[test]
    fn config_file_options_stand_where_the_file_was_named() {
        let dir = std::env::temp_dir().join(format!("sizeup-cfg-{}", std::process::id()));
        std::fs::write(&dir, "threads=4\nmysql-db = 'my db'\n# a comment\ntime=5 # five\nnot an option\n").unwrap();
        let given =
            vec![OsString::from("sizeup"), format!("--config-file={}", dir.display()).into(), "--time=7".into()];
        let out: Vec<_> =
            expand_config_files(given).unwrap().iter().map(|a| a.to_string_lossy().into_owned()).collect();
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(out, ["sizeup", "--threads=4", "--mysql-db=my db", "--time=5", "--time=7"]);
    }

    /// secrets_kept_out_of_option_file_errors: a `--config-file=` line
    /// `mysql-password='S3cretPW` gave "an unclosed quote in `mysql-password='S3cretPW`".
    #[test]
    fn secrets_kept_out_of_config_file_errors() {
        let file = std::env::temp_dir().join(format!("sizeup-cfg-secret-{}", std::process::id()));
        std::fs::write(&file, "threads=4\nmysql-password='S3cretPW\n").unwrap();
        let given = vec![OsString::from("sizeup"), format!("--config-file={}", file.display()).into()];
        let e = expand_config_files(given).unwrap_err();
        std::fs::remove_file(&file).unwrap();
        assert!(!e.to_string().contains("S3cretPW"), "{e}");
        assert!(
            matches!(&e, Invalid::File(m) if m.ends_with("line 2: mysql-password's value has an unclosed quote")),
            "{e}"
        );
    }

    #[test]
    fn test_option_names_the_workload() {
        let sb = |rest: &str| format!("sizeup --sysbench-output {rest}");
        // test_path_runs_the_file: a script named like a built-in is still that file.
        assert_eq!(
            rw("sizeup --test=/usr/share/sysbench/oltp_read_only.lua --threads=2 prepare").unwrap(),
            sb("prepare /usr/share/sysbench/oltp_read_only.lua --threads=2")
        );
        assert_eq!(
            rw("sizeup --test=/opt/sb/tests/db/oltp.lua --oltp-tables-count=8 prepare").unwrap(),
            sb("prepare /opt/sb/tests/db/oltp.lua --oltp-tables-count=8")
        );
        assert_eq!(
            rw("sizeup --test=oltp_read_only --threads=2 prepare").unwrap(),
            sb("prepare oltp_read_only --threads=2")
        );
        assert_eq!(
            rw("sizeup --test=oltp --oltp-tables-count=4 prepare").unwrap(),
            sb("prepare oltp_complex --oltp-tables-count=4")
        );
        assert_eq!(
            rw("sizeup --test oltp --oltp-test-mode simple run").unwrap(),
            sb("run oltp_point_select --report-interval=0")
        );
        assert_eq!(
            rw("sizeup --test=oltp --oltp-test-mode=nontrx --oltp-nontrx-mode=update_key prepare").unwrap(),
            sb("prepare oltp_update_index")
        );
        assert_eq!(
            rw("sizeup run --test=oltp --max-time=5").unwrap(),
            sb("run oltp_complex --max-time=5 --report-interval=0")
        );
        assert!(
            matches!(rw("sizeup --test=oltp --oltp-test-mode=weird run"), Err(Invalid::Value(m)) if m.contains("complex, simple, nontrx"))
        );
    }
}
