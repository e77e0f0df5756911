//! Managed instances: several on one host, each reachable by other clients with exactly
//! what `sizeup server status` prints, a crash reported as such, and a clean stop.

use crate::common;
use common::*;
use sizeup::server::State;
use std::process::Command;

#[test]
fn instances_start_report_crash_and_stop() {
    let s = TestServer::start_many(2);
    let st = status(s.home.path());
    assert_eq!(st.len(), 2);
    for (i, inst) in st.iter().enumerate() {
        assert_eq!(inst.state, State::Running);
        assert_eq!(inst.port, s.port + i as u16);
        // The mariadb client connects with what status printed: socket and user, and TCP.
        for how in [format!("--socket={}", inst.socket.display()), format!("--host=127.0.0.1 --port={}", inst.port)] {
            let mut cmd = Command::new("mariadb");
            cmd.arg("--no-defaults").arg(format!("-u{}", inst.user)).args(how.split(' ')).args([
                "-N",
                "-e",
                "SELECT @@port",
            ]);
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{how}: {}", String::from_utf8_lossy(&out.stderr));
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), inst.port.to_string());
        }
    }
    // Each has its own datadir and the settings asked for.
    assert_ne!(st[0].datadir, st[1].datadir);
    assert_eq!(s.sql("SELECT @@innodb_buffer_pool_size").trim(), (128 * 1024 * 1024).to_string());
    assert_eq!(s.sql("SELECT @@bind_address").trim(), "127.0.0.1");

    // Starting again is idempotent: running instances are left alone.
    assert_eq!(s.sizeup(&["server", "start", "--instances", "2"]).unwrap(), 0);
    assert_eq!(status(s.home.path())[1].pid, st[1].pid);

    unsafe { libc::kill(st[1].pid.unwrap(), libc::SIGKILL) };
    std::thread::sleep(std::time::Duration::from_millis(300));
    let after = status(s.home.path());
    assert_eq!(after[0].state, State::Running);
    assert_eq!(after[1].state, State::Crashed);

    assert_eq!(s.sizeup(&["server", "stop"]).unwrap(), 0);
    let stopped = status(s.home.path());
    assert!(stopped.iter().all(|i| i.state == State::Stopped));

    // failed_start_is_not_a_crash: a server that never came up was shown CRASHED (and
    // every later run said it had recovered from a crash), and the message quoted the
    // log's last note instead of the error that said why.
    let e = s.sizeup(&["server", "start", "--set", "innodb_bogus_option=1"]).unwrap_err().to_string();
    assert!(e.contains("[ERROR]") && e.contains("unknown variable 'innodb_bogus_option=1'"), "{e}");
    assert_eq!(status(s.home.path())[0].state, State::Stopped);
    assert!(
        !std::path::Path::new(&format!("/proc/{}", st[0].pid.unwrap())).exists() || {
            let stat = std::fs::read_to_string(format!("/proc/{}/stat", st[0].pid.unwrap())).unwrap_or_default();
            stat.contains(") Z")
        }
    );
}

#[test]
fn default_target_is_managed_instance_zero() {
    let home = tempfile::Builder::new().prefix("sizeup-test-").tempdir().unwrap();
    let h = home.path().to_string_lossy().into_owned();
    // No server running and none named: sizeup starts instance 0 itself.
    let port = free_port().to_string();
    assert_eq!(
        sizeup(&[
            "--home",
            &h,
            "server",
            "start",
            "--buffer-pool",
            "128M",
            "--log-file-size",
            "48M",
            "--base-port",
            &port
        ])
        .unwrap(),
        0
    );
    assert_eq!(sizeup(&["--home", &h, "server", "stop"]).unwrap(), 0);
    let code = sizeup(&["--home", &h, "prepare", "oltp_point_select", "--table-size=100"]);
    let st = status(home.path());
    let _ = sizeup(&["--home", &h, "server", "stop", "--purge"]);
    assert_eq!(code.unwrap(), 0);
    assert_eq!(st[0].state, State::Running);
    assert_eq!(st[0].port.to_string(), port, "the remembered port is reused");
}

/// scale_takes_a_free_port_when_base_plus_i_is_taken: another program on instance 0's
/// port + 1 failed the next instance's start ("choose another with --base-port", an
/// option `scale` does not take). Without --base-port the instance takes a free port.
#[test]
fn a_new_instance_skips_a_port_another_program_holds() {
    let s = TestServer::start();
    let holder = match std::net::TcpListener::bind(("127.0.0.1", s.port + 1)) {
        Ok(l) => l,
        // Already held by some other program: the case itself.
        Err(_) => std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap(),
    };
    assert_eq!(s.sizeup(&["server", "start", "--instances", "2"]).unwrap(), 0);
    let st = status(s.home.path());
    assert_eq!((st[0].port, st[1].state), (s.port, State::Running));
    assert_ne!(st[1].port, s.port + 1, "instance 1 on a port another program holds");
    drop(holder);
    assert_eq!(s.sizeup(&["server", "stop"]).unwrap(), 0);
}
