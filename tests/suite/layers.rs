//! The layers. Between crates the compiler keeps them: a crate cannot name one that
//! depends on it, and the model crate depends on no client, runtime, store or command
//! line (checked here on `cargo tree`'s whole graph). Within each crate, its top-level
//! modules import one another without a cycle, counting every `crate::` path in the
//! code, function bodies included.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level modules a file's code names: `crate::x` and `crate::{x, y::z}`, outside
/// comments and its unit tests.
fn named(code: &str) -> BTreeSet<String> {
    let code = code.split("#[cfg(test)]\nmod tests").next().unwrap_or(code);
    let code: String = code.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let mut out = BTreeSet::new();
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // A group: its first path segment at every depth-0 comma.
            let mut depth = 0;
            let mut start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && !c.is_whitespace() => {
                        out.insert(ident(&group[j..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out
}

/// Every crate's source directory: the binary's and each member's.
fn crate_sources() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("src")];
    for e in std::fs::read_dir(root.join("crates")).unwrap() {
        dirs.push(e.unwrap().path().join("src"));
    }
    dirs
}

#[test]
fn top_level_modules_import_without_a_cycle() {
    let dirs = crate_sources();
    assert!(dirs.len() >= 5, "the workspace has its crates: {dirs:?}");
    for src in dirs {
        modules_without_a_cycle(&src);
    }
}

fn modules_without_a_cycle(src: &Path) {
    let mut files = Vec::new();
    sources(src, &mut files);
    let top = |p: &Path| {
        let rel = p.strip_prefix(src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().to_string();
        first.trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = files.iter().map(|p| top(p)).filter(|m| m != "lib" && m != "main").collect();
    let mut uses: BTreeMap<String, BTreeSet<String>> = modules.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    for f in &files {
        let from = top(f);
        if !modules.contains(&from) {
            continue;
        }
        // `crate::Error` is lib.rs's re-export of error.rs's.
        let to =
            named(&std::fs::read_to_string(f).unwrap())
                .into_iter()
                .map(|m| if m == "Error" { "error".into() } else { m });
        uses.get_mut(&from).unwrap().extend(to.filter(|m| modules.contains(m) && *m != from));
    }
    if modules.contains("cmd") {
        assert!(uses["cmd"].contains("runner"), "the scan finds the imports: {uses:?}");
    }
    // Peel off modules that import nothing left; whatever cannot be peeled is a cycle.
    let mut left = uses.clone();
    while let Some(leaf) = left.iter().find(|(_, to)| to.iter().all(|t| !left.contains_key(t))).map(|(m, _)| m.clone())
    {
        left.remove(&leaf);
    }
    let cycle: BTreeMap<_, Vec<_>> =
        left.iter().map(|(m, to)| (m, to.iter().filter(|t| left.contains_key(*t)).collect())).collect();
    assert!(
        left.is_empty(),
        "{}: these top-level modules import one another in a cycle (module: what it imports of them): {cycle:?}",
        src.display()
    );
}

/// Every package a workspace crate builds on, directly or not (normal dependencies).
fn dependencies_of(package: &str) -> BTreeSet<String> {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["tree", "--offline", "-p", package, "-e", "normal", "--prefix", "none", "--format", "{p}"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree -p {package}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != package)
        .map(str::to_string)
        .collect()
}

#[test]
fn the_crates_depend_downwards_only() {
    // The model: measurement types and their arithmetic, testable without a server.
    let model = dependencies_of("sizeup-model");
    for banned in ["tokio", "mysql_async", "rusqlite", "mlua", "clap", "sizeup-engine", "sizeup-store", "sizeup"] {
        assert!(!model.contains(banned), "sizeup-model depends on {banned}: {model:?}");
    }
    assert!(model.contains("serde"), "the scan reads cargo tree's lines: {model:?}");
    // The store and the engine stand on the model, not on each other.
    let store = dependencies_of("sizeup-store");
    assert!(store.contains("sizeup-model") && store.contains("rusqlite"), "{store:?}");
    for banned in ["sizeup-engine", "tokio", "mysql_async", "mlua", "clap"] {
        assert!(!store.contains(banned), "sizeup-store depends on {banned}: {store:?}");
    }
    let engine = dependencies_of("sizeup-engine");
    assert!(engine.contains("sizeup-model") && engine.contains("mysql_async"), "{engine:?}");
    for banned in ["sizeup-store", "rusqlite"] {
        assert!(!engine.contains(banned), "sizeup-engine depends on {banned}: {engine:?}");
    }
    // Requests and answers stand on all three, and on no command runner.
    let report = dependencies_of("sizeup-report");
    for needed in ["sizeup-model", "sizeup-store", "sizeup-engine"] {
        assert!(report.contains(needed), "sizeup-report depends on {needed}: {report:?}");
    }
    assert!(!report.contains("sizeup"), "sizeup-report depends on the binary: {report:?}");
}

#[test]
fn the_scan_reads_groups_and_skips_comments_and_tests() {
    let code = "use crate::{a::B, c, d::{e, f}};\n// crate::g\nfn x() { crate::h::y(); }\n#[cfg(test)]\nmod tests { use crate::i; }";
    let found: Vec<String> = named(code).into_iter().collect();
    assert_eq!(found, ["a", "c", "d", "h"]);
}
