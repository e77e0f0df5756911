//! The lean benchmark client against a real MariaDB: login, text and prepared
//! statements, rows decoded (including repeats where the server skips metadata),
//! parameter types reused across executes, and server errors with their codes.

use crate::common;
use common::*;
use sizeup::client::{Conn, ConnectOptions, Error, Param, Value};

fn opts(s: &TestServer, tcp: bool, user: &str, password: Option<&str>) -> ConnectOptions {
    ConnectOptions {
        socket: (!tcp).then(|| s.socket.clone()),
        host: "127.0.0.1".into(),
        port: s.port,
        user: user.into(),
        password: password.map(str::to_string),
        database: Some("t".into()),
        ..Default::default()
    }
}

#[test]
fn the_benchmark_client_speaks_to_mariadb() {
    let s = TestServer::start();
    s.sql(
        "CREATE DATABASE t; CREATE TABLE t.x (id INT PRIMARY KEY, big BIGINT, d DOUBLE, c CHAR(10), n INT NULL, dec1 DECIMAL(6,2)); \
         INSERT INTO t.x VALUES (1, 5000000000, 1.5, 'one', NULL, 12.34), (2, -7, 0.25, 'two', 9, 0.5); \
         CREATE USER 'pw'@'127.0.0.1' IDENTIFIED BY 'Secret-1'; GRANT ALL ON t.* TO 'pw'@'127.0.0.1'",
    );
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        for (tcp, user, pw) in [(false, "root", None), (true, "pw", Some("Secret-1"))] {
            let mut c = Conn::connect(&opts(&s, tcp, user, pw)).await.unwrap();
            assert!(c.server_version().contains("MariaDB"));
            assert!(c.caches_metadata(), "MariaDB 10.6+ offers metadata caching; we take it");

            let sel = c.prepare("SELECT id, big, d, c, n, dec1 FROM x WHERE id >= ? ORDER BY id").await.unwrap();
            // Twice: the second execute may come without metadata and must decode the same.
            for _ in 0..2 {
                let mut rows = Vec::new();
                let out = c.exec_rows(&sel, &[Param::Int(1)], &mut |r| rows.push(r.to_vec())).await.unwrap();
                assert_eq!(out.rows, 2);
                assert_eq!(rows[0][0], Value::Int(1));
                assert_eq!(rows[0][1], Value::Int(5_000_000_000));
                assert_eq!(rows[0][2], Value::Float(1.5));
                assert_eq!(rows[0][3].as_bytes(), Some(&b"one"[..]));
                assert_eq!(rows[0][4], Value::Null);
                assert_eq!(rows[0][5].as_f64(), Some(12.34));
                assert_eq!(rows[1][4], Value::Int(9));
            }
            // Rows skipped in place still count.
            assert_eq!(c.exec_drop(&sel, &[Param::Int(2)]).await.unwrap().rows, 1);

            // Parameter types sent once are reused; a changed type is sent again.
            let upd = c.prepare("UPDATE x SET c = ?, big = ? WHERE id = ?").await.unwrap();
            for (i, big) in [(1, 10i64), (2, 6_000_000_000)] {
                let out = c.exec_drop(&upd, &[Param::Bytes(b"new"), Param::Int(big), Param::Int(i)]).await.unwrap();
                assert_eq!(out.affected, 1);
            }
            let first = c.exec_first(&sel, &[Param::Int(2)]).await.unwrap().unwrap();
            assert_eq!(first[1], Value::Int(6_000_000_000));
            assert_eq!(first[3].as_bytes(), Some(&b"new"[..]));

            // Text protocol, transactions, and server errors with their codes.
            c.query_drop("BEGIN").await.unwrap();
            c.query_drop("UPDATE x SET n = n + 1 WHERE id = 2").await.unwrap();
            c.query_drop("ROLLBACK").await.unwrap();
            assert_eq!(c.query_drop("SELECT * FROM x").await.unwrap().rows, 2);
            match c.query_drop("SELECT * FROM missing").await {
                Err(Error::Server { code: 1146, .. }) => {}
                other => panic!("expected error 1146, got {other:?}"),
            }
            // The connection is still usable after an error.
            assert_eq!(c.exec_drop(&sel, &[Param::Int(0)]).await.unwrap().rows, 2);
            s.sql("UPDATE t.x SET c = 'one', big = 5000000000 WHERE id = 1; UPDATE t.x SET c = 'two', big = -7 WHERE id = 2");
            c.close().await;
        }

        let bad = Conn::connect(&opts(&s, true, "pw", Some("wrong"))).await.err().unwrap();
        assert!(matches!(bad, Error::Server { code: 1045, .. }), "{bad:?}");
        let gone = Conn::connect(&ConnectOptions { socket: Some("/nonexistent.sock".into()), ..opts(&s, false, "root", None) })
            .await
            .err()
            .unwrap();
        assert!(matches!(gone, Error::Io(_)), "{gone:?}");
    });
}

#[test]
fn array_binding_inserts_every_row_in_commands_of_the_given_size() {
    let s = TestServer::start();
    s.sql(
        "CREATE DATABASE t; CREATE TABLE t.b (id INT PRIMARY KEY, c CHAR(20), n INT NULL, d DECIMAL(6,2), t DATETIME)",
    );
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let mut c = Conn::connect(&opts(&s, false, "root", None)).await.unwrap();
        assert!(c.bulk(), "MariaDB offers COM_STMT_BULK_EXECUTE; we take it");
        let ins = c.prepare("INSERT INTO b VALUES (?, ?, ?, ?, ?)").await.unwrap();
        // Values as strings, converted by the server as literals; None is NULL.
        let ids: Vec<String> = (1..=1000).map(|i| i.to_string()).collect();
        let rows = ids.iter().map(|id| {
            // NULL but for the 91 ids of 2 or 4 digits.
            let n = (id.len() % 2 == 0).then_some(&b"7"[..]);
            [Some(id.as_bytes()), Some(&b"row"[..]), n, Some(&b"12.5"[..]), Some(&b"2026-11-23 10:00:00"[..])]
                .into_iter()
        });
        // Commands close at 1000 bytes: a 21-byte head (packet header, command, statement,
        // flags, five types), then per value an indicator, a length and the bytes.
        let (mut want, mut size) = (0, 0);
        for row in rows.clone() {
            if size == 0 {
                (want, size) = (want + 1, 21);
            }
            size += row.map(|v| v.map_or(1, |v| 2 + v.len())).sum::<usize>();
            if size >= 1000 {
                size = 0;
            }
        }
        assert!(want > 30, "{want}");
        let before = executes(&mut c).await;
        assert_eq!(c.exec_bulk(&ins, rows, 1000).await.unwrap(), 1000);
        assert_eq!(executes(&mut c).await - before, want, "one execute per command");
        // A row with the wrong number of values is refused before anything is sent.
        let short = std::iter::once([Some(&b"1001"[..])].into_iter());
        assert!(matches!(c.exec_bulk(&ins, short, 1000).await, Err(Error::Protocol(_))));
        // A duplicate key is the server's error, with its code.
        let dup = std::iter::once([Some(&b"5"[..]), None, None, None, None].into_iter());
        assert!(matches!(c.exec_bulk(&ins, dup, 1000).await, Err(Error::Server { code: 1062, .. })));
        c.close().await;
    });
    assert_eq!(
        s.sql("SELECT COUNT(*), SUM(id), COUNT(n), SUM(n), MIN(c), SUM(d), MIN(t) FROM t.b").trim(),
        "1000\t500500\t91\t637\trow\t12500.00\t2026-11-23 10:00:00"
    );
}

/// The session's executes of prepared statements so far.
async fn executes(c: &mut Conn) -> u64 {
    let mut n = 0;
    c.query_rows("SHOW SESSION STATUS LIKE 'Com_stmt_execute'", &mut |r| {
        n = std::str::from_utf8(r[1].as_bytes().unwrap()).unwrap().parse().unwrap()
    })
    .await
    .unwrap();
    n
}
