//! sysbench command lines, rewritten into sizeup's before clap reads them: sysbench's
//! verb order (`sizeup oltp_read_write --threads=8 run`) and 0.4's `--test=oltp`
//! with `--oltp-test-mode` and `--oltp-nontrx-mode`. Everything else sysbench spells
//! differently is an alias on the option itself (`crate::options`).
//!
//! A rewrite of the arguments only: what they mean is still checked by clap and
//! `plan`, and a sizeup command line passes through unchanged.

use std::ffi::OsString;

/// The verbs sysbench takes last, and sizeup first (`help` lists a script's options).
const VERBS: [&str; 5] = ["run", "prepare", "cleanup", "prewarm", "help"];

/// Options that take a value in the next argument when written without `=`, so their
/// value is not taken for a workload or a verb.
pub(crate) const GLOBAL_WITH_VALUE: [&str; 2] = ["--home", "--results"];

/// sizeup's argument list for a sysbench-style one (unchanged otherwise).
pub fn rewrite(args: Vec<OsString>, subcommands: &[&str]) -> Result<Vec<OsString>, String> {
    let Some(text): Option<Vec<String>> = args.iter().map(|a| a.to_str().map(str::to_string)).collect() else {
        return Ok(args); // not UTF-8: clap will say what is wrong
    };
    let mut positional = Vec::new(); // (index, value)
    let mut skip_next = false;
    for (i, a) in text.iter().enumerate().skip(1) {
        if skip_next {
            skip_next = false;
            continue;
        }
        if a.starts_with('-') {
            skip_next = GLOBAL_WITH_VALUE.contains(&a.as_str());
            continue;
        }
        positional.push((i, a.clone()));
    }
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
            let verb =
                positional.iter().rev().find(|(_, p)| VERBS.contains(&p.as_str())).cloned().ok_or_else(|| {
                    let given = positional.first().map_or("", |(_, p)| p.as_str());
                    format!(
                    "'{given}' is not a command; sysbench's order needs a verb at the end (run, prepare, cleanup), \
                     or write `sizeup run {given} ...`"
                )
                })?;
            let workload = match test {
                Some(_) => test_workload(&text)?,
                None => positional.iter().find(|(i, _)| *i != verb.0).map(|(_, p)| p.clone()).ok_or(
                    "name the workload, e.g. `sizeup run oltp_read_write` (or sysbench's `sizeup oltp_read_write run`)",
                )?,
            };
            let mut rest = text.clone();
            // Drop the workload's own position when it was given as a word.
            if test.is_none() {
                if let Some((i, _)) = positional.iter().find(|(i, p)| *i != verb.0 && *p == workload) {
                    rest[*i] = String::new();
                }
            }
            Ok(build(&rest, verb.0, &verb.1, &workload))
        }
    }
}

/// `prog globals... verb workload options...`, leaving out `--test` and 0.4's modes.
fn build(text: &[String], verb_at: usize, verb: &str, workload: &str) -> Vec<OsString> {
    let mut out: Vec<OsString> = vec![text[0].clone().into()];
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

/// The workload `--test` names: a script name or path (`oltp_read_write`,
/// `/usr/share/sysbench/oltp_read_write.lua`), or 0.4's `oltp` with its modes.
fn test_workload(text: &[String]) -> Result<String, String> {
    let test = option_value(text, "--test").unwrap_or_default();
    let name = test.rsplit('/').next().unwrap_or(&test).trim_end_matches(".lua");
    if name != "oltp" {
        // A built-in's script stands for the built-in; any other script runs as itself.
        let builtin = crate::workload::oltp::Variant::from_name(name).is_some();
        return Ok(if builtin || !test.ends_with(".lua") { name } else { &test }.to_string());
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
                return Err(format!(
                    "--oltp-nontrx-mode={other}: sysbench 0.4 knew select, update_key, update_nokey, insert, delete"
                ))
            }
        },
        other => return Err(format!("--oltp-test-mode={other}: sysbench 0.4 knew complex, simple, nontrx")),
    }
    .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUBS: [&str; 6] = ["run", "prepare", "cleanup", "prewarm", "server", "sweep"];

    fn rw(args: &str) -> Result<String, String> {
        let v: Vec<OsString> = args.split(' ').map(OsString::from).collect();
        rewrite(v, &SUBS).map(|o| o.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" "))
    }

    #[test]
    fn sysbench_verb_order_becomes_sizeups() {
        assert_eq!(rw("sizeup oltp_read_write --threads=8 run").unwrap(), "sizeup run oltp_read_write --threads=8");
        assert_eq!(
            rw("sizeup --home /h oltp_point_select --tables=2 prepare").unwrap(),
            "sizeup --home /h prepare oltp_point_select --tables=2"
        );
        assert_eq!(rw("sizeup run oltp_read_write --threads=8").unwrap(), "sizeup run oltp_read_write --threads=8");
        assert_eq!(rw("sizeup server start").unwrap(), "sizeup server start");
        assert!(rw("sizeup oltp_read_write --threads=8").unwrap_err().contains("verb at the end"));
    }

    #[test]
    fn test_option_names_the_workload() {
        assert_eq!(
            rw("sizeup --test=/usr/share/sysbench/oltp_read_only.lua --threads=2 run").unwrap(),
            "sizeup run oltp_read_only --threads=2"
        );
        assert_eq!(
            rw("sizeup --test=oltp --oltp-tables-count=4 prepare").unwrap(),
            "sizeup prepare oltp_complex --oltp-tables-count=4"
        );
        assert_eq!(rw("sizeup --test oltp --oltp-test-mode simple run").unwrap(), "sizeup run oltp_point_select");
        assert_eq!(
            rw("sizeup --test=oltp --oltp-test-mode=nontrx --oltp-nontrx-mode=update_key run").unwrap(),
            "sizeup run oltp_update_index"
        );
        assert_eq!(rw("sizeup run --test=oltp --max-time=5").unwrap(), "sizeup run oltp_complex --max-time=5");
        assert!(rw("sizeup --test=oltp --oltp-test-mode=weird run").unwrap_err().contains("complex, simple, nontrx"));
    }
}
