//! The bench scripts run for most of an hour before they print their table, so a name
//! error in the printing is found late. These checks find it without a server.
use std::process::Command;

/// Session 19: `lead()` bound `floor` in a loop, which made the floor runner a local name
/// of the whole function, and the first point-select cell died with NameError after the
/// prepare rounds had run for ten minutes.
#[test]
fn bench_lead_table_does_not_shadow_the_floor_runner() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/bench/check_names.py"))
        .arg(format!("{root}/bench/vs_sysbench.py"))
        .arg(format!("{root}/bench/tpcc.py"))
        .arg(format!("{root}/bench/variants.py"))
        .output()
        .expect("python3 runs the bench scripts; it must be installed");
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}
