//! Connection settings read as the mysql client reads them: `~/.my.cnf`,
//! `--defaults-file`, and the MYSQL_* environment, against a real private server. The
//! binary runs as a child process so each test has its own HOME and environment.

use crate::common;
use common::*;
use std::path::Path;
use std::process::{Command, Output};

/// sizeup with a state directory of its own (no managed instance) and `home` as HOME.
fn sizeup_in(state: &Path, home: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sizeup"));
    cmd.arg("--home").arg(state).args(args).env("HOME", home);
    for k in ["MYSQL_HOST", "MYSQL_TCP_PORT", "MYSQL_UNIX_PORT", "MYSQL_PWD"] {
        cmd.env_remove(k);
    }
    cmd.envs(env.iter().copied());
    cmd.output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

#[test]
fn my_cnf_defaults_file_and_environment_name_the_server() {
    let s = TestServer::start();
    s.sql(
        "CREATE USER 'cnf'@'127.0.0.1' IDENTIFIED BY 'cnf-pw-123'; GRANT ALL ON *.* TO 'cnf'@'127.0.0.1'; \
         CREATE USER 'cnf'@'localhost' IDENTIFIED BY 'cnf-pw-123'; GRANT ALL ON *.* TO 'cnf'@'localhost'",
    );
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();

    // ~/.my.cnf: [client] names the server by TCP with a password; [sizeup] the database.
    std::fs::write(
        home.join(".my.cnf"),
        format!(
            "[client]\nhost = 127.0.0.1\nport = {}\nuser = cnf\npassword = \"cnf-pw-123\"\n[sizeup]\ndatabase = cnfdb\n",
            s.port
        ),
    )
    .unwrap();
    let json = dir.path().join("a.json");
    let json_arg = format!("--json={}", json.display());
    ok(&sizeup_in(&state, &home, &[], &["prepare", "oltp_point_select", "--table-size=300"]));
    let out =
        ok(&sizeup_in(&state, &home, &[], &["run", "oltp_point_select", "--table-size=300", "--time=1", &json_arg]));
    assert!(!out.contains("starting managed"), "{out}");
    let doc = read_json(&json);
    assert_eq!(doc["config"]["target"]["port"], s.port);
    assert_eq!(doc["config"]["target"]["user"], "cnf");
    assert_eq!(doc["config"]["target"]["database"], "cnfdb");
    assert!(!std::fs::read_to_string(&json).unwrap().contains("cnf-pw-123"));
    assert!(!state.join("instances").exists(), "no managed instance was started");

    // --defaults-file replaces ~/.my.cnf: here the socket, as root.
    let file = dir.path().join("other.cnf");
    std::fs::write(&file, format!("[client]\nsocket = {}\nuser = root\n", s.socket.display())).unwrap();
    let df = format!("--defaults-file={}", file.display());
    let out = ok(&sizeup_in(
        &state,
        &home,
        &[],
        &["run", "oltp_point_select", "--table-size=300", "--time=1", &df, "--database=cnfdb", &json_arg],
    ));
    assert!(!out.contains("starting managed"), "{out}");
    assert_eq!(read_json(&json)["config"]["target"]["socket"], s.socket.display().to_string());

    // The environment, with no option file read; the command line beats it.
    let sock = s.socket.display().to_string();
    let env = [("MYSQL_UNIX_PORT", sock.as_str())];
    let out = ok(&sizeup_in(
        &state,
        &home,
        &env,
        &[
            "run",
            "oltp_point_select",
            "--no-defaults",
            "--user=root",
            "--database=cnfdb",
            "--table-size=300",
            "--time=1",
            &json_arg,
        ],
    ));
    assert!(!out.contains("starting managed"), "{out}");
    assert_eq!(read_json(&json)["config"]["target"]["socket"], sock);

    // A defaults file that is not there is an error, not a silent fallback.
    let out = sizeup_in(&state, &home, &[], &["run", "oltp_point_select", "--defaults-file=/nonexistent.cnf"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent.cnf"));
    assert!(!state.join("instances").exists(), "still no managed instance");
}
