//! Connection settings the way the mysql client reads them: option files (`~/.my.cnf`,
//! `--defaults-file`, `--defaults-extra-file`; groups `[client]` and `[sizeup]`) and
//! the environment (`MYSQL_HOST`, `MYSQL_TCP_PORT`, `MYSQL_UNIX_PORT`, `MYSQL_PWD`).
//! Precedence as the mysql client's: the command line, then option files (a later
//! file and the `[sizeup]` group win), then the environment.
//!
//! Deliberately not read: the system-wide files (`/etc/my.cnf`, `/etc/mysql/my.cnf`).
//! On Debian they name the system service's socket, and sizeup must never measure the
//! system service because a package put a file there; name it with `--socket` or
//! `--defaults-file /etc/mysql/my.cnf` to use it.

use crate::error::Invalid;
use crate::options::TargetArgs;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The groups sizeup reads, in order (later wins).
const GROUPS: [&str; 2] = ["client", "sizeup"];

/// Settings found in option files: key (with `_` written `-`) to value.
pub type Settings = BTreeMap<String, String>;

/// Reads the option files the target options name (or `~/.my.cnf` by default).
pub fn read(t: &TargetArgs, home: Option<&Path>) -> Result<Settings, Invalid> {
    let mut files: Vec<(PathBuf, bool)> = Vec::new(); // (path, must exist)
    if t.no_defaults {
        return Ok(Settings::new());
    }
    match &t.defaults_file {
        Some(f) => files.push((f.clone(), true)),
        None => {
            if let Some(f) = &t.defaults_extra_file {
                files.push((f.clone(), true));
            }
            if let Some(h) = home {
                files.push((h.join(".my.cnf"), false));
            }
        }
    }
    let mut out = Settings::new();
    for (path, must) in files {
        match read_file(&path) {
            Ok(text) => merge(&mut out, &path, &text, 0)?,
            Err(e) if must || e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Invalid::File(format!("cannot read option file {}: {e}", path.display())))
            }
            Err(_) => {}
        }
    }
    Ok(out)
}

/// An option file, bounded (`--defaults-file /dev/zero` is refused, not read forever).
fn read_file(path: &Path) -> std::io::Result<String> {
    crate::user_file::read_to_string(path, crate::user_file::TEXT_LIMIT, "an option file is a few KiB")
}

/// Adds the settings of one file's `[client]` and `[sizeup]` groups to `out`, following
/// `!include FILE` and `!includedir DIR` (files ending .cnf, in name order).
fn merge(out: &mut Settings, path: &Path, text: &str, depth: u32) -> Result<(), Invalid> {
    if depth > 10 {
        return Err(Invalid::File(format!("option file {}: includes nest too deep", path.display())));
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    // Per group, so [sizeup] wins over [client] whatever their order in the file.
    let mut by_group: [Settings; 2] = Default::default();
    let mut group: Option<usize> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(rest) = line.strip_prefix("!includedir") {
            let d = dir.join(rest.trim());
            let mut names: Vec<PathBuf> = std::fs::read_dir(&d)
                .map_err(|e| {
                    Invalid::File(format!("option file {}: !includedir {}: {e}", path.display(), d.display()))
                })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "cnf"))
                .collect();
            names.sort();
            for p in names {
                let text = read_file(&p).map_err(|e| Invalid::File(format!("cannot read {}: {e}", p.display())))?;
                merge(out, &p, &text, depth + 1)?;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("!include") {
            let p = dir.join(rest.trim());
            let text = read_file(&p)
                .map_err(|e| Invalid::File(format!("option file {}: !include {}: {e}", path.display(), p.display())))?;
            merge(out, &p, &text, depth + 1)?;
            continue;
        }
        if let Some(name) = line.strip_prefix('[') {
            // As the mysql client: "Wrong group definition in config file".
            let Some((name, _)) = name.split_once(']') else {
                return Err(Invalid::File(format!(
                    "option file {} line {} is not a group header like [client] (no closing `]`)",
                    path.display(),
                    n + 1
                )));
            };
            let name = name.trim().to_ascii_lowercase();
            group = GROUPS.iter().position(|g| *g == name);
            continue;
        }
        let Some(g) = group else { continue };
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), unquote(strip_comment(v.trim()))),
            None => (line, String::new()),
        };
        // An option name is letters, digits, - and _: a line of words is no option, and
        // the mysql client refuses it too (garbage_option_file_lines_are_ignored_silently).
        let name_ok = |k: &str| k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if key.is_empty() || !name_ok(strip_comment(key).trim()) {
            // Named by its line and first word only: the line may hold a password
            // (secrets_kept_out_of_option_file_errors).
            let word: String =
                key.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect();
            let starts = if word.is_empty() { String::new() } else { format!(" (it starts with `{word}`)") };
            return Err(Invalid::File(format!(
                "option file {} line {}{starts} is not key = value",
                path.display(),
                n + 1
            )));
        }
        let key = strip_comment(key).trim();
        by_group[g].insert(key.to_ascii_lowercase().replace('_', "-"), value);
    }
    for g in by_group {
        out.extend(g);
    }
    Ok(())
}

/// A value's trailing `# comment` (outside quotes).
fn strip_comment(v: &str) -> &str {
    if v.starts_with('"') || v.starts_with('\'') {
        return v;
    }
    v.split(" #").next().unwrap_or(v).trim_end()
}

fn unquote(v: &str) -> String {
    let q = v.chars().next();
    if matches!(q, Some('"') | Some('\'')) && v.len() >= 2 && v.ends_with(q.unwrap()) {
        v[1..v.len() - 1].replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")
    } else {
        v.to_string()
    }
}

/// The environment variables the mysql client reads, by name.
pub fn environment() -> BTreeMap<&'static str, String> {
    ["MYSQL_HOST", "MYSQL_TCP_PORT", "MYSQL_UNIX_PORT", "MYSQL_PWD"]
        .into_iter()
        .filter_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()).map(|v| (k, v)))
        .collect()
}

/// The command line's target completed from option files, then the environment.
/// Pure: `files` and `env` are what [`read`] and [`environment`] return.
pub fn complete(t: &TargetArgs, files: &Settings, env: &BTreeMap<&str, String>) -> Result<TargetArgs, Invalid> {
    let mut out = t.clone();
    let file = |k: &str| files.get(k).cloned();
    let env = |k: &str| env.get(k).cloned();
    let port = |v: String, from: &str| {
        v.trim()
            .parse::<u16>()
            .map_err(|_| Invalid::Value(format!("{from}: port '{v}' is not a port number (1-65535)")))
    };
    out.host = out.host.or_else(|| file("host")).or_else(|| env("MYSQL_HOST"));
    out.port = match out.port {
        Some(p) => Some(p),
        None => match (file("port"), env("MYSQL_TCP_PORT")) {
            (Some(p), _) => Some(port(p, "option file")?),
            (None, Some(p)) => Some(port(p, "MYSQL_TCP_PORT")?),
            (None, None) => None,
        },
    };
    out.socket =
        out.socket.or_else(|| file("socket").map(PathBuf::from)).or_else(|| env("MYSQL_UNIX_PORT").map(PathBuf::from));
    out.user = out.user.or_else(|| file("user"));
    out.password = out.password.or_else(|| file("password")).or_else(|| env("MYSQL_PWD"));
    out.database = out.database.or_else(|| file("database"));
    out.ssl_mode = out.ssl_mode.or_else(|| file("ssl-mode"));
    out.ssl_ca = out.ssl_ca.or_else(|| file("ssl-ca").map(PathBuf::from));
    out.ssl_cert = out.ssl_cert.or_else(|| file("ssl-cert").map(PathBuf::from));
    out.ssl_key = out.ssl_key.or_else(|| file("ssl-key").map(PathBuf::from));
    out.server_public_key_path =
        out.server_public_key_path.or_else(|| file("server-public-key-path").map(PathBuf::from));
    out.get_server_public_key |= files.contains_key("get-server-public-key");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Settings {
        let mut s = Settings::new();
        merge(&mut s, Path::new("/x/my.cnf"), text, 0).unwrap();
        s
    }

    #[test]
    fn client_and_sizeup_groups_are_read_sizeup_winning() {
        let s = parse(
            "# comment\n[sizeup]\nport=3307\n[mysqld]\nport = 1\n[client]\nhost = db1 # primary\nport = 3306\n\
             user='app'\npassword = \"p#ss word\"\nsocket=/run/x.sock\nskip_ssl\n[mysql]\nuser = other\n",
        );
        assert_eq!(s.get("host").map(String::as_str), Some("db1"));
        assert_eq!(s.get("port").map(String::as_str), Some("3307"), "[sizeup] wins");
        assert_eq!(s.get("user").map(String::as_str), Some("app"));
        assert_eq!(s.get("password").map(String::as_str), Some("p#ss word"));
        assert_eq!(s.get("skip-ssl").map(String::as_str), Some(""));
    }

    /// secrets_kept_out_of_option_file_errors: a line `password: S3cretPW` was shown
    /// whole, "'password: S3cretPW' is not key = value".
    #[test]
    fn secrets_kept_out_of_option_file_errors() {
        for text in ["[client]\npassword: S3cretPW\n", "[client]\npassword S3cretPW\n", "[client S3cretPW\n"] {
            let e = merge(&mut Settings::new(), Path::new("/x/my.cnf"), text, 0).unwrap_err();
            assert!(!e.to_string().contains("S3cretPW"), "{e}");
            assert!(matches!(&e, Invalid::File(m) if m.contains("/x/my.cnf line")), "{e}");
        }
        let e = merge(&mut Settings::new(), Path::new("/x/my.cnf"), "[client]\npassword: S3cretPW\n", 0).unwrap_err();
        assert_eq!(
            e,
            Invalid::File("option file /x/my.cnf line 2 (it starts with `password`) is not key = value".into())
        );
    }

    #[test]
    fn broken_group_header_is_refused() {
        // `[x` was read as a group and the file accepted.
        let mut s = Settings::new();
        let e = merge(&mut s, Path::new("/x/my.cnf"), "[client]\nport=1\n[x\nuser=a\n", 0).unwrap_err();
        assert!(
            matches!(&e, Invalid::File(m) if m.contains("line 3"))
                && matches!(&e, Invalid::File(m) if m.contains("group header")),
            "{e}"
        );
    }

    /// garbage_option_file_lines_are_ignored_silently: a line of words in [client] was
    /// read as an option nobody uses, and the file accepted.
    #[test]
    fn garbage_option_file_lines_are_ignored_silently() {
        let mut s = Settings::new();
        let e = merge(&mut s, Path::new("/x/my.cnf"), "[client]\nport=1\nthis is junk\n", 0).unwrap_err();
        assert!(
            matches!(&e, Invalid::File(m) if m.contains("line 3"))
                && matches!(&e, Invalid::File(m) if m.contains("not key = value")),
            "{e}"
        );
        // Groups sizeup does not read are not its business; a switch with a comment is fine.
        let mut s = Settings::new();
        merge(&mut s, Path::new("/x/my.cnf"), "[mysqld]\nthis is junk\n[client]\nskip-ssl # off\n", 0).unwrap();
        assert_eq!(s.get("skip-ssl").map(String::as_str), Some(""));
    }

    #[test]
    fn includes_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("conf.d")).unwrap();
        std::fs::write(dir.path().join("conf.d/b.cnf"), "[client]\nuser = b\n").unwrap();
        std::fs::write(dir.path().join("conf.d/a.cnf"), "[client]\nuser = a\nhost = h\n").unwrap();
        std::fs::write(dir.path().join("conf.d/skip.txt"), "[client]\nhost = no\n").unwrap();
        std::fs::write(dir.path().join("extra.cnf"), "[client]\nport = 4000\n").unwrap();
        let main = dir.path().join("my.cnf");
        std::fs::write(&main, "!includedir conf.d\n!include extra.cnf\n").unwrap();
        let t = TargetArgs { defaults_file: Some(main), ..Default::default() };
        let s = read(&t, None).unwrap();
        assert_eq!((s["user"].as_str(), s["host"].as_str(), s["port"].as_str()), ("b", "h", "4000"));
    }

    #[test]
    fn the_command_line_beats_files_which_beat_the_environment() {
        let files: Settings = [("host".into(), "filehost".into()), ("password".into(), "filepw".into())].into();
        let env: BTreeMap<&str, String> = [
            ("MYSQL_HOST", "envhost".to_string()),
            ("MYSQL_TCP_PORT", "3310".into()),
            ("MYSQL_PWD", "envpw".into()),
            ("MYSQL_UNIX_PORT", "/e.sock".into()),
        ]
        .into();
        let t = complete(&TargetArgs::default(), &files, &env).unwrap();
        assert_eq!(t.host.as_deref(), Some("filehost"));
        assert_eq!(t.password.as_deref(), Some("filepw"));
        assert_eq!(t.port, Some(3310));
        assert_eq!(t.socket, Some(PathBuf::from("/e.sock")));
        let cli = TargetArgs { host: Some("clihost".into()), port: Some(1), ..Default::default() };
        let t = complete(&cli, &files, &env).unwrap();
        assert_eq!((t.host.as_deref(), t.port), (Some("clihost"), Some(1)));
        let bad = complete(&TargetArgs::default(), &[("port".to_string(), "x".to_string())].into(), &env);
        assert!(matches!(bad, Err(Invalid::Value(m)) if m.contains("not a port")));
    }

    #[test]
    fn a_named_defaults_file_must_exist_and_no_defaults_reads_none() {
        let t = TargetArgs { defaults_file: Some("/nonexistent/my.cnf".into()), ..Default::default() };
        assert!(matches!(read(&t, None), Err(Invalid::File(m)) if m.contains("/nonexistent/my.cnf")));
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join(".my.cnf"), "[client]\nuser = u\n").unwrap();
        assert_eq!(read(&TargetArgs::default(), Some(home.path())).unwrap()["user"], "u");
        let t = TargetArgs { no_defaults: true, ..Default::default() };
        assert!(read(&t, Some(home.path())).unwrap().is_empty());
        assert!(read(&TargetArgs::default(), Some(Path::new("/nonexistent-home"))).unwrap().is_empty());
    }
}
