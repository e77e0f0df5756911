//! The script guard (issue 63, items 1-3): statements that would change tables sizeup
//! did not make are refused however they are spelled, against a real private server.

use crate::common;
use common::TestServer;

/// A server whose database `fdb` holds a table sizeup did not make (`fdb.sbtest1`, ids
/// 1-9, each with k = 0), and another database's table (`otherdb.t`) for statements to
/// join.
fn with_foreign() -> TestServer {
    let s = TestServer::start();
    s.sql(
        "CREATE DATABASE fdb; CREATE TABLE fdb.sbtest1 (id INT PRIMARY KEY, k INT NOT NULL); \
         INSERT INTO fdb.sbtest1 VALUES (1,0),(2,0),(3,0),(4,0),(5,0),(6,0),(7,0),(8,0),(9,0); \
         CREATE DATABASE otherdb; CREATE TABLE otherdb.t (id INT PRIMARY KEY, c VARCHAR(10)); \
         INSERT INTO otherdb.t VALUES (1, 'a'), (2, 'b')",
    );
    s
}

/// The k of fdb.sbtest1's row `id`.
fn k(s: &TestServer, id: u32) -> String {
    s.sql(&format!("SELECT k FROM fdb.sbtest1 WHERE id = {id}")).trim().to_string()
}

/// A script whose every event sends `statements` in order on its thread's connection,
/// in `dir`. A statement may hold bytes that are no UTF-8: they are written as Lua's
/// decimal escapes (`\191`), the script itself staying UTF-8.
fn script(dir: &std::path::Path, name: &str, statements: &[&[u8]]) -> String {
    let mut lua =
        String::from("function thread_init()\n  con = sysbench.sql.driver():connect()\nend\nfunction event()\n");
    for sql in statements {
        lua.push_str("  con:query(\"");
        for &b in *sql {
            match b {
                b'\\' | b'"' => lua.extend(['\\', b as char]),
                b' '..=b'~' => lua.push(b as char),
                _ => lua.push_str(&format!("\\{b:03}")),
            }
        }
        lua.push_str("\")\n");
    }
    lua.push_str("end\n");
    let path = dir.join(name);
    std::fs::write(&path, lua).unwrap();
    path.to_str().unwrap().to_string()
}

/// `sizeup run <script> --database fdb --time 1`: its exit code and stderr.
fn run(s: &TestServer, script: &str) -> (i32, String) {
    let (code, _, err) = common::run_in(s, &["run", script, "--database", "fdb", "--time", "1"]);
    (code, err)
}

/// a_multibyte_charset_hides_a_statement_from_the_guard: after `SET NAMES gbk` the
/// server reads `'<0xBF>\'` as a string of one gbk character, so `sbtest1` in
/// `UPDATE otherdb.t m JOIN otherdb.t m2 ON m2.id <> LENGTH('<0xBF>\') JOIN sbtest1 s
/// ON 1=1 SET s.k = 777 WHERE s.id = 5 -- ')` was outside the string for the server
/// and inside it for the guard (which read `\'` as an escape): row 5 changed, exit 0.
/// The same with sjis (0x95), big5 (0xA5) and `SET character_set_client = gbk`. A
/// statement that sets the client character set to one whose characters can end in a
/// backslash or a backtick is now refused.
#[test]
fn a_multibyte_charset_hides_a_statement_from_the_guard() {
    let s = with_foreign();
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[u8], u8, &str); 5] = [
        (b"SET NAMES gbk", 0xBF, "gbk"),
        (b"SET NAMES sjis", 0x95, "sjis"),
        (b"SET NAMES 'big5'", 0xA5, "big5"),
        (b"SET character_set_client = gbk", 0xBF, "gbk"),
        (b"SET @@session.`character_set_client` = 'gbk'", 0xBF, "gbk"),
    ];
    for (i, (set, lead, charset)) in cases.into_iter().enumerate() {
        let update = [
            &b"UPDATE otherdb.t m JOIN otherdb.t m2 ON m2.id <> LENGTH('"[..],
            &[lead, b'\\'],
            b"') JOIN sbtest1 s ON 1=1 SET s.k = 777 WHERE s.id = 5 -- ')",
        ]
        .concat();
        let path = script(dir.path(), &format!("charset{i}.lua"), &[set, &update]);
        let (code, err) = run(&s, &path);
        assert_ne!(code, 0, "{charset}: {err}");
        assert_eq!(k(&s, 5), "0", "{charset}: the foreign row changed: {err}");
        let said = format!("it sets the client character set to {charset}, in which sizeup cannot read statements");
        assert!(err.contains(&said) && err.contains("--write-foreign-tables"), "{charset}: {err}");
    }
}

/// a_backticked_sql_mode_is_seen_by_the_guard: the guard refused a statement naming
/// sql_mode as a bare word only: ``SET SESSION `sql_mode` = 'NO_BACKSLASH_ESCAPES'``
/// passed, and then ``UPDATE otherdb.t m JOIN otherdb.t m2 ON m2.c <> '\' JOIN sbtest1 s
/// ON 1=1 SET s.k = 888 WHERE s.id = 6 -- '`` (a string ending at the backslash for
/// the server, going on to the end for the guard) changed row 6, exit 0. A quoted name
/// is the name.
#[test]
fn a_backticked_sql_mode_is_seen_by_the_guard() {
    let s = with_foreign();
    let dir = tempfile::tempdir().unwrap();
    let update: &[u8] = b"UPDATE otherdb.t m JOIN otherdb.t m2 ON m2.c <> '\\' JOIN sbtest1 s ON 1=1 \
                          SET s.k = 888 WHERE s.id = 6 -- '";
    let sets: [&[u8]; 2] =
        [b"SET SESSION `sql_mode` = 'NO_BACKSLASH_ESCAPES'", b"SET @@SESSION.`SQL_MODE` = 'NO_BACKSLASH_ESCAPES'"];
    for (i, set) in sets.into_iter().enumerate() {
        let path = script(dir.path(), &format!("mode{i}.lua"), &[set, update]);
        let (code, err) = run(&s, &path);
        assert_ne!(code, 0, "{err}");
        assert_eq!(k(&s, 6), "0", "the foreign row changed: {err}");
        assert!(err.contains("it names sql_mode") && err.contains("--write-foreign-tables"), "{err}");
    }
}

/// stored_functions_are_unreadable_to_the_guard: with a stored function `f1()` in the
/// run's database whose body updates `sbtest1`, `SELECT f1()` and `DO f1()` passed the
/// guard and changed the row (`CALL` of a procedure was refused already). A call of a
/// stored function (of any database, however its name is quoted) is now refused: its
/// statements cannot be read.
#[test]
fn stored_functions_are_unreadable_to_the_guard() {
    let s = with_foreign();
    s.sql(
        "SET GLOBAL log_bin_trust_function_creators = 1;\nDELIMITER //\n\
         CREATE FUNCTION fdb.f1() RETURNS INT MODIFIES SQL DATA BEGIN \
         UPDATE fdb.sbtest1 SET k = 999 WHERE id = 7; RETURN 1; END//\n\
         CREATE FUNCTION otherdb.f2() RETURNS INT MODIFIES SQL DATA BEGIN \
         UPDATE fdb.sbtest1 SET k = 998 WHERE id = 8; RETURN 1; END//\nDELIMITER ;",
    );
    let dir = tempfile::tempdir().unwrap();
    let calls: [(&[u8], &str, u32); 4] = [
        (b"SELECT f1()", "f1", 7),
        (b"DO f1 ()", "f1", 7),
        (b"SELECT `otherdb`.`F2`()", "F2", 8),
        (b"SELECT c FROM otherdb.t WHERE id = otherdb.f2 /* x */ ()", "f2", 8),
    ];
    for (i, (call, name, row)) in calls.into_iter().enumerate() {
        let path = script(dir.path(), &format!("call{i}.lua"), &[call]);
        let (code, err) = run(&s, &path);
        assert_ne!(code, 0, "{err}");
        assert_eq!(k(&s, row), "0", "the foreign row changed: {err}");
        let said = format!("it calls {name}(), a stored function");
        assert!(err.contains(&said) && err.contains("--write-foreign-tables"), "{err}");
    }
    // A function the script makes is read as it is made: one whose body changes a
    // foreign table is refused there.
    let make: &[u8] = b"CREATE FUNCTION f3() RETURNS INT MODIFIES SQL DATA BEGIN \
                        UPDATE sbtest1 SET k = 997 WHERE id = 9; RETURN 1; END";
    let path = script(dir.path(), "make.lua", &[make, b"SELECT f3()"]);
    let (code, err) = run(&s, &path);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("it changes fdb.sbtest1, which sizeup did not create"), "{err}");
    assert_eq!(k(&s, 9), "0");
}

/// sysbench's own scripts prepare, run and clean up their tables in a database that
/// holds a table sizeup did not make, beside stored functions: the guard refuses none
/// of their statements, and the foreign table stays as it was.
#[test]
fn sysbench_scripts_run_beside_foreign_tables_and_functions() {
    let s = with_foreign();
    s.sql(
        "CREATE DATABASE sb; CREATE TABLE sb.keep (id INT PRIMARY KEY, k INT NOT NULL); \
         INSERT INTO sb.keep VALUES (1, 0), (2, 0); SET GLOBAL log_bin_trust_function_creators = 1; \
         CREATE FUNCTION sb.f4() RETURNS INT DETERMINISTIC RETURN 4",
    );
    let script = |name: &str| format!("/usr/share/sysbench/{name}.lua");
    let ok = |args: &[&str]| {
        let (code, out, err) = common::run_in(&s, &[args, &["--database", "sb"][..]].concat());
        assert_eq!(code, 0, "{args:?}: {out}{err}");
    };
    let size = ["--tables=2", "--table-size=200"];
    ok(&[&["prepare", script("oltp_read_write").as_str()][..], &size].concat());
    for name in [
        "oltp_read_write",
        "oltp_read_only",
        "oltp_write_only",
        "oltp_point_select",
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_insert",
        "oltp_delete",
        "select_random_points",
        "select_random_ranges",
    ] {
        ok(&[&["run", script(name).as_str(), "--time", "1"][..], &size].concat());
    }
    ok(&[&["cleanup", script("oltp_read_write").as_str()][..], &size].concat());
    ok(&["prepare", script("bulk_insert").as_str(), "--threads", "2"]);
    ok(&["run", script("bulk_insert").as_str(), "--threads", "2", "--time", "1"]);
    ok(&["cleanup", script("bulk_insert").as_str(), "--threads", "2"]);
    assert_eq!(s.sql("SELECT SUM(k) FROM sb.keep").trim(), "0");
    let left = "SELECT GROUP_CONCAT(TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sb'";
    assert_eq!(s.sql(left).trim(), "keep");
}
