//! The server's status counters: the types and arithmetic are the model's
//! ([`sizeup_model::monitor::status`]); reading them from a server is here.

use sizeup_model::capture::OWN_MARK as OWN;
pub use sizeup_model::monitor::status::*;

/// Reads the kept counters from one server: [`statement`], or the whole `SHOW GLOBAL
/// STATUS` when the server refuses the filter. The caller bounds the time it may take.
pub async fn read(conn: &mut mysql_async::Conn) -> Result<Reading, mysql_async::Error> {
    use mysql_async::prelude::Queryable;
    let rows: Vec<mysql_async::Row> = match conn.query(statement()).await {
        Err(mysql_async::Error::Server(_)) => conn.query(format!("{OWN} SHOW GLOBAL STATUS")).await?,
        r => r?,
    };
    let text = |r: &mysql_async::Row, i: usize| match r.as_ref(i) {
        Some(mysql_async::Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
        Some(mysql_async::Value::Int(v)) => v.to_string(),
        Some(mysql_async::Value::UInt(v)) => v.to_string(),
        _ => String::new(),
    };
    Ok(Reading::from_rows(rows.iter().filter(|r| r.len() >= 2).map(|r| (text(r, 0), text(r, 1)))))
}
