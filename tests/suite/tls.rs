//! TLS and login methods against a real private MariaDB: certificates made here with
//! openssl (a CA, a server certificate for localhost, a client certificate), a server
//! with require_secure_transport=ON, every --ssl-mode in both connection paths (the
//! benchmark client and the control connection), VERIFY_IDENTITY against a wrong host
//! name, a REQUIRE X509 user, a MariaDB ed25519 user and a password user over TCP, each
//! driving a short `sizeup run`.

use crate::common;
use common::*;
use sizeup::client::Conn;
use sizeup::target::{self, Target, Tls, TlsArgs};
use std::path::{Path, PathBuf};

const PASSWORD: &str = "Secret-1";

struct Certs {
    _dir: tempfile::TempDir,
    ca: PathBuf,
    server_cert: PathBuf,
    server_key: PathBuf,
    client_cert: PathBuf,
    client_key: PathBuf,
    /// A CA that signed nothing here.
    other_ca: PathBuf,
}

/// A key and a certificate NAME-key.pem / NAME-cert.pem for CN `cn`, signed by ca.pem
/// in `d`; with `ext` (an openssl extension file) version 3, without it version 1.
fn sign(d: &Path, name: &str, cn: &str, ext: Option<&str>) {
    let (key, csr, cert) = (format!("{name}-key.pem"), format!("{name}.csr"), format!("{name}-cert.pem"));
    let subj = format!("/CN={cn}");
    openssl(d, &["req", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-out", &csr, "-subj", &subj]);
    let mut args = vec!["x509", "-req", "-in", &csr, "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial"];
    args.extend(["-out", &cert, "-days", "2"]);
    if let Some(e) = ext {
        args.extend(["-extfile", e]);
    }
    openssl(d, &args);
}

/// A CA, a server certificate for DNS name localhost only (so 127.0.0.1 is a wrong
/// name for VERIFY_IDENTITY), and a client certificate, all signed by the CA.
fn make_certs() -> Certs {
    let dir = tempfile::Builder::new().prefix("sizeup-tls-").tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("server.ext"), "subjectAltName=DNS:localhost\n").unwrap();
    std::fs::write(d.join("client.ext"), "extendedKeyUsage=clientAuth\n").unwrap();
    for (key, cert, cn) in
        [("ca-key.pem", "ca.pem", "sizeup test CA"), ("other-key.pem", "other-ca.pem", "unrelated CA")]
    {
        self_signed(d, key, cert, &format!("/CN={cn}"), &[]);
    }
    for (name, cn) in [("server", "localhost"), ("client", "sizeup client")] {
        sign(d, name, cn, Some(&format!("{name}.ext")));
    }
    Certs {
        ca: d.join("ca.pem"),
        server_cert: d.join("server-cert.pem"),
        server_key: d.join("server-key.pem"),
        client_cert: d.join("client-cert.pem"),
        client_key: d.join("client-key.pem"),
        other_ca: d.join("other-ca.pem"),
        _dir: dir,
    }
}

fn tls_server(c: &Certs) -> TestServer {
    let set = [
        format!("ssl_cert={}", c.server_cert.display()),
        format!("ssl_key={}", c.server_key.display()),
        format!("ssl_ca={}", c.ca.display()),
        "require_secure_transport=ON".to_string(),
    ];
    let set: Vec<&str> = set.iter().map(String::as_str).collect();
    TestServer::start_with(1, &set)
}

fn target(s: &TestServer, host: &str, user: &str, tls: TlsArgs) -> Target {
    Target {
        host: host.into(),
        port: s.port,
        socket: None,
        user: user.into(),
        password: Some(PASSWORD.into()),
        database: "sbtest".into(),
        tls: Tls::from_args(&tls).unwrap(),
    }
}

fn args(mode: &str, ca: Option<&Path>) -> TlsArgs {
    TlsArgs { ssl_mode: Some(mode.into()), ssl_ca: ca.map(Path::to_path_buf), ..Default::default() }
}

/// Logs in through both paths; on success returns each one's TLS cipher ("" when plain).
async fn both(t: &Target) -> Result<(String, String), String> {
    let bench = Conn::connect(&t.client_options()).await.map_err(|e| format!("benchmark client: {e}"))?;
    let bench_tls = bench.tls().map(|i| i.cipher.clone()).unwrap_or_default();
    bench.close().await;
    let mut control = t.connect().await.map_err(|e| format!("control connection: {e}"))?;
    let control_tls = target::tls_state(&mut control).await.unwrap().map(|i| i.cipher).unwrap_or_default();
    control.disconnect().await.unwrap();
    Ok((bench_tls, control_tls))
}

/// Each path alone, for errors: both must fail.
async fn both_fail(t: &Target) -> (String, String) {
    let bench =
        Conn::connect(&t.client_options()).await.err().expect("the benchmark client must be refused").to_string();
    let control = t.connect().await.expect_err("the control connection must be refused").to_string();
    (bench, control)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

#[test]
fn every_ssl_mode_against_a_tls_only_mariadb() {
    let c = make_certs();
    let s = tls_server(&c);
    s.sql(&format!(
        "CREATE DATABASE sbtest; \
         CREATE USER 'pw'@'localhost' IDENTIFIED BY '{PASSWORD}'; CREATE USER 'pw'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'; \
         GRANT ALL ON sbtest.* TO 'pw'@'localhost'; GRANT ALL ON sbtest.* TO 'pw'@'127.0.0.1'"
    ));
    let ca = Some(c.ca.as_path());
    runtime().block_on(async {
        for (mode, host) in [
            ("PREFERRED", "127.0.0.1"),
            ("REQUIRED", "127.0.0.1"),
            // The certificate names only localhost: VERIFY_CA checks the chain, not the name.
            ("VERIFY_CA", "127.0.0.1"),
            ("VERIFY_IDENTITY", "localhost"),
        ] {
            let t = target(&s, host, "pw", args(mode, ca));
            let (bench, control) = both(&t).await.unwrap_or_else(|e| panic!("{mode}: {e}"));
            assert!(!bench.is_empty() && !control.is_empty(), "{mode}: TLS in both paths ({bench} / {control})");
            // Reconnects use the same settings (the control path's VERIFY_CA name is kept).
            both(&t).await.unwrap_or_else(|e| panic!("{mode}, again: {e}"));
        }
        // The default is PREFERRED: TLS without any option.
        let (bench, _) = both(&target(&s, "127.0.0.1", "pw", TlsArgs::default())).await.unwrap();
        assert!(!bench.is_empty());
        // sysbench's spelling.
        let sb = TlsArgs { mysql_ssl: Some("on".into()), ..Default::default() };
        both(&target(&s, "127.0.0.1", "pw", sb)).await.unwrap();
        // A CA that did not sign the server's certificate.
        let (b, k) = both_fail(&target(&s, "127.0.0.1", "pw", args("VERIFY_CA", Some(&c.other_ca)))).await;
        for e in [&b, &k] {
            assert!(e.contains("certificate"), "{e}");
            assert!(!e.contains(PASSWORD), "{e}");
        }
    });
}

#[test]
fn tls_required_server_names_tls() {
    // MariaDB's require_secure_transport answers a plain login "Access denied ...
    // (using password: YES)": the message must send the user to TLS, not the password.
    let c = make_certs();
    let s = tls_server(&c);
    // MariaDB names a loopback client 'localhost': both accounts, as users make them.
    s.sql(&format!(
        "CREATE USER 'pw'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'; GRANT ALL ON *.* TO 'pw'@'127.0.0.1'; \
         CREATE USER 'pw'@'localhost' IDENTIFIED BY '{PASSWORD}'; GRANT ALL ON *.* TO 'pw'@'localhost'"
    ));
    runtime().block_on(async {
        let (b, k) = both_fail(&target(&s, "127.0.0.1", "pw", args("DISABLED", None))).await;
        for e in [&b, &k] {
            assert!(e.contains("requires TLS") && e.contains("--ssl-mode=REQUIRED"), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
        // A wrong password stays a wrong password.
        let mut t = target(&s, "127.0.0.1", "pw", args("DISABLED", None));
        t.password = Some("wrong".into());
        let (b, k) = both_fail(&t).await;
        for e in [&b, &k] {
            assert!(e.contains("1045") && !e.contains("requires TLS"), "{e}");
        }
    });
    // The whole tool says the same in one line.
    let h = s.home();
    let p = s.port.to_string();
    let code = sizeup(&[
        "--home",
        &h,
        "prepare",
        "oltp_point_select",
        "--host",
        "127.0.0.1",
        "--port",
        &p,
        "--user",
        "pw",
        "--password",
        PASSWORD,
        "--ssl-mode",
        "DISABLED",
        "--table-size",
        "100",
    ]);
    let e = code.expect_err("refused").to_string();
    assert!(e.contains("requires TLS"), "{e}");
}

#[test]
fn verify_identity_wrong_host_names_the_certificate_names() {
    let c = make_certs();
    let s = tls_server(&c);
    s.sql(&format!("CREATE USER 'pw'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'; GRANT ALL ON *.* TO 'pw'@'127.0.0.1'"));
    runtime().block_on(async {
        // 127.0.0.1 reaches the server, but the certificate names only localhost.
        let (b, k) = both_fail(&target(&s, "127.0.0.1", "pw", args("VERIFY_IDENTITY", Some(&c.ca)))).await;
        for e in [&b, &k] {
            assert!(e.contains("localhost") && e.contains("VERIFY_CA"), "{e}");
        }
    });
}

#[test]
fn unix_socket_needs_no_tls_even_when_required() {
    // A socket is a secure transport: REQUIRED is satisfied without TLS, and unix_socket
    // logs root in, on a server that refuses plain TCP.
    let c = make_certs();
    let s = tls_server(&c);
    s.sql("CREATE DATABASE sbtest");
    let mut t = target(&s, "localhost", "root", args("REQUIRED", None));
    t.socket = Some(s.socket.clone());
    t.password = None;
    runtime().block_on(async {
        let (bench, control) = both(&t).await.unwrap();
        assert_eq!((bench.as_str(), control.as_str()), ("", ""), "no TLS over a socket");
    });
}

#[test]
fn client_certificate_user_logs_in_with_ssl_cert_and_key() {
    let c = make_certs();
    let s = tls_server(&c);
    s.sql(&format!(
        "CREATE DATABASE sbtest; CREATE USER 'x509'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}' REQUIRE X509; \
         GRANT ALL ON sbtest.* TO 'x509'@'127.0.0.1'"
    ));
    runtime().block_on(async {
        let (b, k) = both_fail(&target(&s, "127.0.0.1", "x509", args("REQUIRED", None))).await;
        for e in [&b, &k] {
            assert!(e.contains("1045"), "{e}");
        }
        let with_cert = TlsArgs {
            ssl_cert: Some(c.client_cert.clone()),
            ssl_key: Some(c.client_key.clone()),
            ..args("VERIFY_CA", Some(&c.ca))
        };
        both(&target(&s, "127.0.0.1", "x509", with_cert)).await.unwrap();
    });
    // A short run with the client certificate, sysbench's spellings, and the result
    // recording TLS.
    let h = s.home();
    let p = s.port.to_string();
    let (ca, cert, key) =
        (c.ca.display().to_string(), c.client_cert.display().to_string(), c.client_key.display().to_string());
    let json = s.home.path().join("x509.json");
    let j = json.display().to_string();
    let target_args = [
        "--mysql-host",
        "127.0.0.1",
        "--mysql-port",
        &p,
        "--mysql-user",
        "x509",
        "--mysql-password",
        PASSWORD,
        "--mysql-ssl",
        "VERIFY_CA",
        "--mysql-ssl-ca",
        &ca,
        "--mysql-ssl-cert",
        &cert,
        "--mysql-ssl-key",
        &key,
    ];
    let mut prepare = vec!["--home", &h, "prepare", "oltp_point_select", "--table-size", "1000"];
    prepare.extend_from_slice(&target_args);
    assert_eq!(sizeup(&prepare).unwrap(), 0);
    let mut run =
        vec!["--home", &h, "run", "oltp_point_select", "--table-size", "1000", "--threads", "2", "--time", "1"];
    run.extend_from_slice(&["--json", &j]);
    run.extend_from_slice(&target_args);
    assert_eq!(sizeup(&run).unwrap(), 0);
    let doc = read_json(&json);
    assert!(doc["summary"]["transactions"].as_u64().unwrap() > 0);
    let text = doc.to_string();
    assert!(text.contains("\"tls\":\"on\"") && text.contains("tls_cipher"), "the result records TLS");
    assert!(text.contains("VERIFY_CA"), "the result records the ssl mode");
    assert!(!text.contains(PASSWORD), "no password in the result");
    assert!(!text.contains("PRIVATE KEY"), "no key material in the result");
}

fn run_as(s: &TestServer, user: &str, password: &str, extra: &[&str]) -> serde_json::Value {
    let h = s.home();
    let p = s.port.to_string();
    let json = s.home.path().join(format!("{user}.json"));
    let j = json.display().to_string();
    let target_args = ["--host", "127.0.0.1", "--port", &p, "--user", user, "--password", password];
    let mut prepare = vec!["--home", &h, "prepare", "oltp_point_select", "--table-size", "1000"];
    prepare.extend_from_slice(&target_args);
    prepare.extend_from_slice(extra);
    assert_eq!(sizeup(&prepare).unwrap(), 0, "prepare as {user}");
    let mut run =
        vec!["--home", &h, "run", "oltp_point_select", "--table-size", "1000", "--threads", "2", "--time", "1"];
    run.extend_from_slice(&["--json", &j]);
    run.extend_from_slice(&target_args);
    run.extend_from_slice(extra);
    assert_eq!(sizeup(&run).unwrap(), 0, "run as {user}");
    read_json(&json)
}

#[test]
fn ed25519_user_does_not_panic() {
    // Was: exit 101 with a backtrace (mysql_async built without client_ed25519).
    let s = TestServer::start();
    s.sql(
        "INSTALL SONAME 'auth_ed25519'; CREATE DATABASE sbtest; \
         CREATE USER 'ed'@'127.0.0.1' IDENTIFIED VIA ed25519 USING PASSWORD('Ed-pass-1'); \
         CREATE USER 'ed'@'localhost' IDENTIFIED VIA ed25519 USING PASSWORD('Ed-pass-1'); \
         GRANT ALL ON sbtest.* TO 'ed'@'127.0.0.1'; GRANT ALL ON sbtest.* TO 'ed'@'localhost'",
    );
    let doc = run_as(&s, "ed", "Ed-pass-1", &[]);
    assert!(doc["summary"]["transactions"].as_u64().unwrap() > 0);
    // Many logins through both paths: MariaDB's nonce is random, and one in 256 ends
    // in a zero byte (see the control path's retry).
    let mut t = target(&s, "127.0.0.1", "ed", TlsArgs::default());
    t.password = Some("Ed-pass-1".into());
    runtime().block_on(async {
        for _ in 0..40 {
            both(&t).await.unwrap();
        }
        t.password = Some("wrong".into());
        let (b, k) = both_fail(&t).await;
        for e in [&b, &k] {
            assert!(e.contains("1045"), "{e}");
        }
    });
}

#[test]
fn password_user_over_tcp_runs() {
    let s = TestServer::start();
    s.sql(&format!(
        "CREATE DATABASE sbtest; CREATE USER 'pw'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'; \
         CREATE USER 'pw'@'localhost' IDENTIFIED BY '{PASSWORD}'; \
         GRANT ALL ON sbtest.* TO 'pw'@'127.0.0.1'; GRANT ALL ON sbtest.* TO 'pw'@'localhost'"
    ));
    let doc = run_as(&s, "pw", PASSWORD, &["--ssl-mode", "DISABLED"]);
    assert!(doc["summary"]["transactions"].as_u64().unwrap() > 0);
    assert!(doc.to_string().contains("\"tls\":\"off\""));
}

#[test]
fn a_sweep_and_a_scale_study_run_over_tls() {
    let c = make_certs();
    let s = tls_server(&c);
    let h = s.home();
    let p = s.port.to_string();
    let ca = format!("--ssl-ca={}", c.ca.display());
    let tcp = ["--host", "127.0.0.1", "--port", &p, "--user", "root", "--ssl-mode", "VERIFY_CA", &ca];
    let mut sweep = vec!["--home", &h, "sweep", "oltp_point_select", "--threads", "1,2", "--step-time", "1"];
    sweep.extend_from_slice(&["--warmup", "0", "--table-size", "500"]);
    sweep.extend_from_slice(&tcp);
    assert!(answered_or_starved(sizeup(&sweep).unwrap(), &s.results()), "sweep over TLS");
    // A scale study with the same server given as its target (one instance).
    let target = format!("127.0.0.1:{p}");
    let mut scale = vec!["--home", &h, "scale", "oltp_point_select", "--instances", "1", "--target", &target];
    scale.extend_from_slice(&[
        "--threads-per-instance",
        "2",
        "--step-time",
        "1",
        "--warmup",
        "0",
        "--table-size",
        "500",
    ]);
    scale.extend_from_slice(&["--user", "root", "--ssl-mode", "VERIFY_CA", &ca]);
    assert!(answered_or_starved(sizeup(&scale).unwrap(), &s.results()), "scale over TLS");
    // Every stored step ran over TLS.
    let store = sizeup::store::Store::open(&s.results()).unwrap();
    let runs = store.list_runs().unwrap();
    assert_eq!(runs.len(), 3, "two sweep levels and one scale step");
    for r in runs {
        let doc = store.load_run(r.id).unwrap();
        assert_eq!(doc.config.server.tls, Some(true), "run {}", r.id);
        assert_eq!(doc.status, sizeup::store::Status::Completed);
    }
}

/// A server certificate signed without extensions: X.509 version 1, as `openssl x509
/// -req` makes it and as MariaDB 11.4.0-11.4.1 made its own (CN localhost, no other names).
/// webpki cannot read it.
fn version_1_certificate(c: &Certs) -> (PathBuf, PathBuf) {
    let d = c.ca.parent().unwrap();
    sign(d, "v1", "localhost", None);
    (d.join("v1-cert.pem"), d.join("v1-key.pem"))
}

/// Issue 46: the mysql client (OpenSSL) takes a version 1 server certificate; sizeup's
/// rustls (webpki) refused it even unverified. Every mode now connects with TLS in both
/// paths, the chain checked against the CA for VERIFY_CA, and the common name (the
/// certificate has no alternative names) for VERIFY_IDENTITY.
#[test]
fn version_1_server_certificate_works_in_every_mode() {
    let c = make_certs();
    let (cert, key) = version_1_certificate(&c);
    let set = [format!("ssl_cert={}", cert.display()), format!("ssl_key={}", key.display())];
    let s = TestServer::start_with(1, &set.iter().map(String::as_str).collect::<Vec<_>>());
    s.sql(&format!(
        "CREATE DATABASE sbtest; CREATE USER 'pw'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'; \
         GRANT ALL ON *.* TO 'pw'@'127.0.0.1'; CREATE USER 'pw'@'localhost' IDENTIFIED BY '{PASSWORD}'; \
         GRANT ALL ON *.* TO 'pw'@'localhost'"
    ));
    runtime().block_on(async {
        for (mode, host) in [
            ("REQUIRED", "127.0.0.1"),
            ("VERIFY_CA", "127.0.0.1"),
            ("VERIFY_IDENTITY", "localhost"),
            ("PREFERRED", "127.0.0.1"),
        ] {
            let (b, k) =
                both(&target(&s, host, "pw", args(mode, Some(&c.ca)))).await.unwrap_or_else(|e| panic!("{mode}: {e}"));
            assert!(!b.is_empty() && !k.is_empty(), "{mode}: TLS in both paths ({b:?}, {k:?})");
        }
        // The checks still check: the wrong CA, and a name the certificate does not hold.
        let (b, k) = both_fail(&target(&s, "127.0.0.1", "pw", args("VERIFY_CA", Some(&c.other_ca)))).await;
        for e in [&b, &k] {
            assert!(e.contains("not issued by a certificate of --ssl-ca"), "{e}");
        }
        let (b, k) = both_fail(&target(&s, "127.0.0.1", "pw", args("VERIFY_IDENTITY", Some(&c.ca)))).await;
        for e in [&b, &k] {
            assert!(e.contains("not valid for 127.0.0.1"), "{e}");
        }
    });
    // A whole run over TCP records the TLS its own connections negotiated.
    let doc = run_as(&s, "pw", PASSWORD, &["--ssl-mode", "REQUIRED"]);
    assert!(doc["summary"]["transactions"].as_u64().unwrap() > 0, "{doc}");
    assert_eq!(doc["config"]["server"]["tls"], "on", "{}", doc["config"]["server"]);
}

/// Review of issue 46: sizeup's own check of a version 1 certificate must not accept a
/// chain through a certificate that may not issue. Anyone with a certificate of the CA
/// (here the client certificate) could sign a version 1 "localhost" and send both.
#[test]
fn a_version_1_certificate_issued_by_a_non_ca_is_refused() {
    let c = make_certs();
    let d = c.ca.parent().unwrap();
    openssl(
        d,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "forged-key.pem",
            "-out",
            "forged.csr",
            "-subj",
            "/CN=localhost",
        ],
    );
    openssl(
        d,
        &[
            "x509",
            "-req",
            "-in",
            "forged.csr",
            "-CA",
            "client-cert.pem",
            "-CAkey",
            "client-key.pem",
            "-CAcreateserial",
            "-out",
            "forged-cert.pem",
            "-days",
            "2",
        ],
    );
    let chain =
        [std::fs::read_to_string(d.join("forged-cert.pem")).unwrap(), std::fs::read_to_string(&c.client_cert).unwrap()];
    std::fs::write(d.join("forged-chain.pem"), chain.concat()).unwrap();
    let set = [
        format!("ssl_cert={}", d.join("forged-chain.pem").display()),
        format!("ssl_key={}", d.join("forged-key.pem").display()),
    ];
    let s = TestServer::start_with(1, &set.iter().map(String::as_str).collect::<Vec<_>>());
    s.sql(&format!(
        "CREATE DATABASE sbtest; CREATE USER 'pw'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'; GRANT ALL ON *.* TO 'pw'@'127.0.0.1'"
    ));
    runtime().block_on(async {
        for (mode, host) in [("VERIFY_CA", "127.0.0.1"), ("VERIFY_IDENTITY", "localhost")] {
            let (b, k) = both_fail(&target(&s, host, "pw", args(mode, Some(&c.ca)))).await;
            for e in [&b, &k] {
                assert!(e.contains("not issued by a certificate of --ssl-ca"), "{mode}: {e}");
            }
        }
        // Encryption alone (REQUIRED) checks no chain, as the mysql client's.
        let (b, k) = both(&target(&s, "127.0.0.1", "pw", args("REQUIRED", None))).await.unwrap();
        assert!(!b.is_empty() && !k.is_empty());
    });
}

/// Issue 46: a self-signed server certificate marked as a CA, given as its own
/// `--ssl-ca`, works as with the mysql client (webpki: CaUsedAsEndEntity).
#[test]
fn self_signed_server_certificate_as_its_own_ca_verifies() {
    let dir = tempfile::Builder::new().prefix("sizeup-tls-").tempdir().unwrap();
    let d = dir.path();
    self_signed(
        d,
        "key.pem",
        "cert.pem",
        "/CN=localhost",
        &["-addext", "subjectAltName=DNS:localhost", "-addext", "basicConstraints=critical,CA:TRUE"],
    );
    let (cert, key) = (d.join("cert.pem"), d.join("key.pem"));
    let set = [format!("ssl_cert={}", cert.display()), format!("ssl_key={}", key.display())];
    let s = TestServer::start_with(1, &set.iter().map(String::as_str).collect::<Vec<_>>());
    s.sql(&format!(
        "CREATE DATABASE sbtest; CREATE USER 'pw'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'; GRANT ALL ON *.* TO 'pw'@'127.0.0.1'"
    ));
    runtime().block_on(async {
        for (mode, host) in [("VERIFY_CA", "127.0.0.1"), ("VERIFY_IDENTITY", "localhost")] {
            let (b, k) =
                both(&target(&s, host, "pw", args(mode, Some(&cert)))).await.unwrap_or_else(|e| panic!("{mode}: {e}"));
            assert!(!b.is_empty() && !k.is_empty(), "{mode}: TLS in both paths");
        }
    });
}

#[test]
fn version_1_client_certificate_is_named() {
    let c = make_certs();
    let (cert, key) = version_1_certificate(&c);
    let tls =
        TlsArgs { ssl_mode: Some("REQUIRED".into()), ssl_cert: Some(cert), ssl_key: Some(key), ..Default::default() };
    let t = Target {
        host: "127.0.0.1".into(),
        port: 1,
        socket: None,
        user: "u".into(),
        password: None,
        database: "d".into(),
        tls: Tls::from_args(&tls).unwrap(),
    };
    let e = runtime().block_on(async { Conn::connect(&t.client_options()).await.err().unwrap().to_string() });
    assert!(e.contains("--ssl-cert") && e.contains("version 1") && e.contains("version 3"), "{e}");
}
