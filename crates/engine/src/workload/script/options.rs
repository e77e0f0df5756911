//! A script's own command-line options (`sysbench.cmdline.options`) and what
//! `sysbench.opt` holds: the script's options with their values, and sysbench's own
//! (threads, time, rand-type, mysql-*, ...) filled in from sizeup's.
//!
//! sysbench's rules: names are written with `_` or `-` alike; `--name=value`, or a bare
//! `--name` for an on/off option; the type comes from the definition's third field or
//! else from its default (boolean, number, string, list). Unlike sysbench, a value that
//! does not read as its type is refused rather than taken as 0.

use crate::error::Invalid;
use serde::Serialize;
use std::collections::BTreeMap;

/// sysbench's option types (`sb_arg_type_t`), numbered as `sysbench.cmdline.ARG_*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgType {
    Bool = 1,
    Int = 2,
    Size = 3,
    Double = 4,
    String = 5,
    List = 6,
    File = 7,
}

impl ArgType {
    pub fn from_number(n: i64) -> Option<ArgType> {
        Some(match n {
            1 => ArgType::Bool,
            2 => ArgType::Int,
            3 => ArgType::Size,
            4 => ArgType::Double,
            0 | 5 => ArgType::String,
            6 => ArgType::List,
            7 => ArgType::File,
            _ => return None,
        })
    }

    /// How help shows the value.
    fn placeholder(self) -> &'static str {
        match self {
            ArgType::Bool => "[=on|off]",
            ArgType::Int | ArgType::Double => "=N",
            ArgType::Size => "=SIZE",
            ArgType::String => "=STRING",
            ArgType::List => "=[LIST,...]",
            ArgType::File => "=FILENAME",
        }
    }
}

/// One entry of `sysbench.cmdline.options`.
#[derive(Clone, Debug, PartialEq)]
pub struct OptionDef {
    pub name: String,
    pub description: String,
    /// The default as sysbench keeps it: text (`on`, `10000`, `a,b`), or none.
    pub default: Option<String>,
    pub kind: ArgType,
}

/// A value in `sysbench.opt`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum OptValue {
    Bool(bool),
    /// Stored as an integer when it is one (`"rows": 2000`, not 2000.0).
    Number(#[serde(serialize_with = "whole_as_integer")] f64),
    Text(String),
    List(Vec<String>),
    /// A file option: sysbench exports nothing for it.
    Nil,
}

fn whole_as_integer<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        s.serialize_i64(*v as i64)
    } else {
        s.serialize_f64(*v)
    }
}

/// `--name` as sysbench stores it: dashes become underscores.
pub fn normalise(name: &str) -> String {
    name.replace('-', "_")
}

/// Reads `text` as an option of type `kind`.
pub fn parse(kind: ArgType, text: &str) -> Result<OptValue, Invalid> {
    let number = |t: &str| t.trim().parse::<f64>().ok().filter(|v| v.is_finite());
    Ok(match kind {
        ArgType::Bool => OptValue::Bool(crate::options::parse_switch(text)?),
        ArgType::Int => OptValue::Number(
            text.trim().parse::<i64>().map_err(|_| Invalid::Value(format!("'{text}' is not a whole number")))? as f64,
        ),
        ArgType::Double => {
            OptValue::Number(number(text).ok_or_else(|| Invalid::Value(format!("'{text}' is not a number")))?)
        }
        ArgType::Size => OptValue::Number(
            size(text).ok_or_else(|| Invalid::Value(format!("'{text}' is not a size (e.g. 64K, 2M)")))?,
        ),
        ArgType::String => OptValue::Text(text.to_string()),
        ArgType::List => {
            OptValue::List(if text.is_empty() { Vec::new() } else { text.split(',').map(str::to_string).collect() })
        }
        ArgType::File => OptValue::Nil,
    })
}

/// A size with sysbench's suffixes (b, K, M, G, T; powers of 1024).
fn size(text: &str) -> Option<f64> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return None,
    };
    Some((digits.parse::<u64>().ok()? << shift) as f64)
}

/// The script's options with the values given (by sysbench name) over the defaults.
/// A `legacy` script (no `sysbench.cmdline.options`, sysbench 0.5 style) takes any
/// option, as text: sysbench keeps options it does not know as strings.
pub fn values(
    script: &str,
    defs: &[OptionDef],
    legacy: bool,
    given: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, OptValue>, String> {
    let mut out = BTreeMap::new();
    for (name, value) in given {
        if !defs.iter().any(|d| d.name == normalise(name)) {
            if !legacy {
                return Err(unknown(script, name, defs));
            }
            out.insert(normalise(name), OptValue::Text(value.clone()));
        }
    }
    for d in defs {
        let given = given.iter().find(|(k, _)| normalise(k) == d.name).map(|(_, v)| v);
        let value = match given.or(d.default.as_ref()) {
            Some(text) => parse(d.kind, text).map_err(|e| format!("--{}: {e} ({script} option)", d.name))?,
            // What sysbench exports for an option declared without a default: "" for
            // a string, an empty list, 0 for a number, true for a switch.
            None => match d.kind {
                ArgType::String => OptValue::Text(String::new()),
                ArgType::List => OptValue::List(Vec::new()),
                ArgType::Bool => OptValue::Bool(true),
                ArgType::Int | ArgType::Double | ArgType::Size => OptValue::Number(0.0),
                ArgType::File => OptValue::Nil,
            },
        };
        out.insert(d.name.clone(), value);
    }
    Ok(out)
}

fn unknown(script: &str, name: &str, defs: &[OptionDef]) -> String {
    let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    if names.is_empty() {
        format!("--{name}: {script} defines no options of its own")
    } else {
        format!("--{name} is not an option of {script}; it has: {}", names.join(", "))
    }
}

/// sizeup's own option names for a command, normalised (`table_size`): those that are
/// sysbench's too or sizeup's alone (threads, time, mysql_*, rand_*, json, ...), and
/// those of the built-in workloads (tables, table_size, warehouses, ...), which in
/// sysbench are oltp_common.lua's options, not its own.
#[derive(Debug, Default)]
pub struct SizeupOptions {
    pub general: std::collections::HashSet<String>,
    pub workload: std::collections::HashSet<String>,
}

/// Takes the script's own options out of a command line (`--name=value`, or `--name`
/// for an on/off option), leaving sizeup's in order for clap. A `legacy` script (no
/// `sysbench.cmdline.options`) takes, as sysbench does, every option that is not
/// sysbench's or sizeup's general one; a script with options is refused a built-in
/// workload's option it does not define (it would be ignored).
pub fn split(
    script: &str,
    args: &[String],
    defs: &[OptionDef],
    legacy: bool,
    sizeup: &SizeupOptions,
) -> Result<(Vec<String>, BTreeMap<String, String>), String> {
    let mut rest = Vec::new();
    let mut ours = BTreeMap::new();
    for a in args {
        let Some(body) = a.strip_prefix("--") else {
            rest.push(a.clone());
            continue;
        };
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let Some(def) = defs.iter().find(|d| d.name == normalise(name)) else {
            let key = normalise(name);
            if legacy && !key.is_empty() && !sizeup.general.contains(&key) {
                // sysbench keeps a bare unknown `--name` as an empty string.
                ours.insert(key, value.unwrap_or("").to_string());
            } else if !legacy && sizeup.workload.contains(&key) {
                return Err(unknown(script, name, defs));
            } else {
                rest.push(a.clone());
            }
            continue;
        };
        let value = match (value, def.kind) {
            (Some(v), _) => v.to_string(),
            (None, ArgType::Bool) => "on".to_string(),
            (None, _) => return Err(format!("--{name} needs a value: --{name}=VALUE ({script} option)")),
        };
        ours.insert(def.name.clone(), value);
    }
    Ok((rest, ours))
}

/// The script's options as sysbench's `help` command lists them (sb_print_options):
/// the script's file name, then one line per option, names padded to the longest.
pub fn help(script: &str, defs: &[OptionDef]) -> String {
    let name = script.rsplit('/').next().unwrap_or(script);
    if defs.is_empty() {
        return format!("{name} defines no options of its own\n");
    }
    let mut out = format!("{name} options:\n");
    let width = defs.iter().map(|d| d.name.len() + d.kind.placeholder().len()).max().unwrap_or(0) + 3;
    for d in defs {
        let left = format!("--{}{}", d.name, d.kind.placeholder());
        let default = d.default.as_deref().map_or(String::new(), |v| format!(" [{v}]"));
        out.push_str(&format!("  {left:<width$}{}{default}\n", d.description));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(name: &str, default: Option<&str>, kind: ArgType) -> OptionDef {
        OptionDef { name: name.into(), description: format!("the {name}"), default: default.map(Into::into), kind }
    }

    #[test]
    fn values_take_sysbench_types_and_defaults() {
        let defs = [
            def("table_size", Some("10000"), ArgType::Double),
            def("skip_trx", Some("off"), ArgType::Bool),
            def("engine", None, ArgType::String),
            def("hosts", Some("a,b"), ArgType::List),
            def("stack", Some("64K"), ArgType::Size),
            def("n", Some("3"), ArgType::Int),
        ];
        let given = [("table-size".to_string(), "500".to_string()), ("skip_trx".into(), "on".into())].into();
        let v = values("t.lua", &defs, false, &given).unwrap();
        assert_eq!(v["table_size"], OptValue::Number(500.0));
        assert_eq!(v["skip_trx"], OptValue::Bool(true));
        assert_eq!(v["engine"], OptValue::Text(String::new()));
        assert_eq!(v["hosts"], OptValue::List(vec!["a".into(), "b".into()]));
        assert_eq!(v["stack"], OptValue::Number(65536.0));
        assert_eq!(v["n"], OptValue::Number(3.0));
        // script_integer_options_are_stored_as_integers: `"rows": 2000.0`.
        assert_eq!(serde_json::to_string(&v["n"]).unwrap(), "3");
        assert_eq!(serde_json::to_string(&OptValue::Number(0.5)).unwrap(), "0.5");

        let bad =
            |k: &str, val: &str| values("t.lua", &defs, false, &[(k.to_string(), val.to_string())].into()).unwrap_err();
        assert!(bad("table_size", "many").contains("--table_size: 'many' is not a number (t.lua option)"));
        assert!(bad("skip_trx", "maybe").contains("on/off"));
        assert!(bad("n", "1.5").contains("whole number"));
        assert!(bad("tabel_size", "1").contains("not an option of t.lua; it has: table_size, skip_trx"));
    }

    #[test]
    fn split_takes_the_scripts_options_only() {
        let defs = [def("table_size", Some("1"), ArgType::Double), def("skip_trx", Some("off"), ArgType::Bool)];
        let args: Vec<String> =
            ["--table-size=5", "--threads", "4", "--skip_trx", "--time=3"].iter().map(|s| s.to_string()).collect();
        let sizeup = SizeupOptions::default();
        let (rest, ours) = split("t.lua", &args, &defs, false, &sizeup).unwrap();
        assert_eq!(rest, ["--threads", "4", "--time=3"]);
        assert_eq!(ours, [("skip_trx".to_string(), "on".to_string()), ("table_size".into(), "5".into())].into());
        let e = split("t.lua", &["--table_size".to_string()], &defs, false, &sizeup).unwrap_err();
        assert!(e.contains("--table_size needs a value"), "{e}");
    }

    /// sysbench 0.5-style scripts read their options as globals: `--table-size=123`
    /// reached such a script as nil (sizeup kept it for its OLTP options) and an option
    /// sizeup did not know (`--myval=7`) was refused.
    #[test]
    fn legacy_script_takes_every_option_but_sizeups_general_ones() {
        let sizeup = SizeupOptions {
            general: ["threads", "time"].map(String::from).into(),
            workload: ["table_size", "tables", "oltp_tables_count"].map(String::from).into(),
        };
        let args: Vec<String> = ["--table-size=123", "--threads=2", "--oltp-tables-count=5", "--myval=7", "--flag"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (rest, ours) = split("old.lua", &args, &[], true, &sizeup).unwrap();
        assert_eq!(rest, ["--threads=2"]);
        let want: BTreeMap<String, String> =
            [("table_size", "123"), ("oltp_tables_count", "5"), ("myval", "7"), ("flag", "")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into();
        assert_eq!(ours, want);
        let v = values("old.lua", &[], true, &ours).unwrap();
        assert_eq!(v["table_size"], OptValue::Text("123".into()), "sysbench keeps them as strings");
        // A script with options of its own is refused a built-in workload's option it
        // does not define, instead of ignoring it.
        let defs = [def("rows", Some("1"), ArgType::Int)];
        let e = split("new.lua", &args[..1], &defs, false, &sizeup).unwrap_err();
        assert!(e.contains("--table-size is not an option of new.lua; it has: rows"), "{e}");
        let (rest, _) = split("new.lua", &args[1..2], &defs, false, &sizeup).unwrap();
        assert_eq!(rest, ["--threads=2"]);
    }

    #[test]
    fn help_lists_every_option_with_its_default() {
        let h = help("t.lua", &[def("table_size", Some("10000"), ArgType::Double), def("x", None, ArgType::Bool)]);
        assert!(h.starts_with("t.lua options:\n"));
        // As sysbench pads: the longest name and its placeholder, then one space.
        assert!(h.contains("  --table_size=N the table_size [10000]\n  --x[=on|off]   the x\n"), "{h}");
        assert!(h.contains("--table_size=N") && h.contains("the table_size [10000]"));
        assert!(h.contains("--x[=on|off]"));
    }
}
