//! Bad command lines: each is refused with a one- or two-line message before anything
//! is started or written (no managed instance, no results store).

mod common;
use common::*;

/// Runs `args` in a fresh state directory; returns the error and what the directory holds after.
fn refused(args: &[&str]) -> (String, Vec<String>) {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_string_lossy().into_owned();
    let mut v = vec!["--home", h.as_str()];
    v.extend_from_slice(args);
    let e = match sizeup(&v) {
        Err(e) => e.to_string(),
        Ok(code) => panic!("{args:?} was accepted (exit {code})"),
    };
    let left: Vec<String> = std::fs::read_dir(home.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    (e, left)
}

#[test]
fn refused_check_and_prewarm_start_no_server() {
    for (args, says) in [
        (&["check", "oltp_read_write"][..], "no consistency conditions"),
        (&["prewarm", "tpcc"][..], "knows the OLTP workloads"),
        (&["run", "oltp_read_wrte"][..], "unknown workload"),
        (&["run", "tpcc", "--users", "0"][..], "--users must be at least 1"),
        (&["run", "tpcc", "--think-time", "spec", "--rate", "5"][..], "--think-time spec"),
        (&["prepare", "tpcc", "--warehouses", "0"][..], "--warehouses 0"),
    ] {
        let (e, left) = refused(args);
        assert!(e.contains(says), "{args:?}: {e}");
        assert!(e.lines().count() <= 2, "{args:?}: {e}");
        assert!(left.is_empty(), "{args:?} left {left:?} in the state directory");
    }
}
