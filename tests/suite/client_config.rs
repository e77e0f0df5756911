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

fn fails(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "expected a refusal: {text}");
    text
}

/// Issue 62, 1: a MariaDB named by `MYSQL_UNIX_PORT` was taken for the managed
/// instance: a memory study labelled its rows "32 MiB pool" and "16 MiB pool" while the
/// server's pool stayed as it was, and a scale study ran 2 client groups on the one
/// server as "2 instances". Whether a study may restart, resize or multiply a server
/// is decided from the server it reaches. Named by `--defaults-file` too.
#[test]
fn an_environment_named_server_is_not_resized() {
    let s = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (state, home) = (dir.path().join("state"), dir.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let pool = || s.sql("SELECT @@innodb_buffer_pool_size").trim().to_string();
    let before = pool();
    let socket = s.socket.display().to_string();
    let env = [("MYSQL_UNIX_PORT", socket.as_str())];
    let memory = [
        "memory",
        "oltp_read_only",
        "--levels",
        "32M,16M",
        "--tables",
        "1",
        "--table-size",
        "300",
        "--step-time",
        "1",
        "--warmup",
        "0",
        "--max-warmup",
        "1",
    ];
    let out = fails(&sizeup_in(&state, &home, &env, &memory));
    assert!(out.contains("pool levels restart a managed instance"), "{out}");
    assert!(out.contains("MYSQL_UNIX_PORT in the environment names a server; unset it"), "{out}");
    let out = fails(&sizeup_in(
        &state,
        &home,
        &env,
        &["scale", "oltp_read_only", "--instances", "1,2", "--table-size", "300", "--step-time", "1"],
    ));
    assert!(out.contains("a scale study starts 1 to N managed instances"), "{out}");
    // The same server named by an option file.
    let cnf = dir.path().join("named.cnf");
    std::fs::write(&cnf, format!("[client]\nsocket = {socket}\nuser = root\n")).unwrap();
    let defaults = format!("--defaults-file={}", cnf.display());
    let mut by_file = vec![memory[0], defaults.as_str()];
    by_file.extend_from_slice(&memory[1..]);
    let out = fails(&sizeup_in(&state, &home, &[], &by_file));
    assert!(out.contains("an option file (~/.my.cnf, --defaults-file"), "{out}");
    // Nothing was restarted or resized, and no managed instance was started.
    assert_eq!(pool(), before);
    assert!(!state.join("instances").exists(), "no managed instance was started");
}
