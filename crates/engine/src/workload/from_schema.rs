//! A capture's tables made from its recorded schema when no copy of the data exists
//! (`sizeup replay CAPTURE --prepare-from-schema`): each table created from its
//! `SHOW CREATE TABLE`, marked as sizeup's, and filled with its captured row count of
//! rows of the right types (`sizeup_model::capture::rows`). Only tables that do not
//! exist are made; the data is not the captured data, and replays on it say so.

use super::ownership::{self, MARK};
use crate::target::{literal, quote_ident, Target};
use crate::workload::DataError;
use mysql_async::prelude::Queryable;
use rand::{Rng, SeedableRng};
use sizeup_model::capture::file::Table;
use sizeup_model::capture::rows::{self, Column};
use sizeup_model::capture::OWN_MARK as OWN;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a made table's comment says after sizeup's mark: replays find their data so.
pub const MADE: &str = "made from the captured schema";
/// Rows a statement inserts.
const BATCH: u64 = 500;

/// Creates and fills every captured table; says what it made.
pub async fn make(target: &Target, tables: &[Table], seed: u64, done: &AtomicU64) -> Result<String, DataError> {
    if tables.is_empty() {
        return Err(DataError::Data(
            "this capture recorded no table definitions (a capture from a slow-log file has none; `sizeup capture \
             --for` records them): restore a copy of the data instead"
                .into(),
        ));
    }
    let mut conn = target.connect_server().await?;
    let sql = |what: String| move |e: mysql_async::Error| DataError::sql(what, &e);
    for t in tables {
        let exists: Option<u64> = conn
            .query_first(format!(
                "{OWN} SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = {} AND TABLE_NAME = {}",
                literal(&t.schema),
                literal(&t.name)
            ))
            .await
            .map_err(sql(format!("looking for {}.{}", t.schema, t.name)))?;
        if exists.unwrap_or(0) > 0 {
            return Err(DataError::NotOurs(format!(
                "{}.{} exists: --prepare-from-schema makes only tables that are not there (replay on the data you \
                 have without it, or drop the tables first)",
                t.schema, t.name
            )));
        }
    }
    conn.query_drop("SET SESSION foreign_key_checks = 0")
        .await
        .map_err(sql("turning foreign key checks off".into()))?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let (mut made, mut rows, mut left) = (0usize, 0u64, Vec::new());
    for t in tables {
        let db = quote_ident(&t.schema);
        conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS {db}"))
            .await
            .map_err(sql(format!("creating database {}", t.schema)))?;
        conn.query_drop(format!("USE {db}")).await.map_err(sql(format!("using {}", t.schema)))?;
        conn.query_drop(&t.create).await.map_err(sql(format!("creating {}.{} as captured", t.schema, t.name)))?;
        let mark = format!("COMMENT='{MARK} ({MADE})'");
        conn.query_drop(format!("ALTER TABLE {} {mark}", quote_ident(&t.name)))
            .await
            .map_err(sql(format!("marking {}.{}", t.schema, t.name)))?;
        ownership::keep_marks(&mut conn, &t.schema, std::slice::from_ref(&t.name), |_| mark.clone()).await?;
        made += 1;
        let columns = columns(&mut conn, t).await?;
        let Some(columns) = columns.filter(|c| !c.is_empty()) else {
            left.push(format!("{}.{} (a column of a type sizeup cannot make)", t.schema, t.name));
            continue;
        };
        let names: Vec<String> = columns.iter().map(|c| quote_ident(&c.name)).collect();
        let mut i = 0;
        while i < t.rows {
            let n = BATCH.min(t.rows - i);
            let values: Vec<String> = (i..i + n)
                .map(|r| {
                    let v: Vec<String> =
                        columns.iter().map(|c| rows::value(c, r, rng.random()).expect("checked")).collect();
                    format!("({})", v.join(","))
                })
                .collect();
            // IGNORE: a drawn value that collides with a unique key loses its row.
            let insert = format!(
                "INSERT IGNORE INTO {} ({}) VALUES {}",
                quote_ident(&t.name),
                names.join(","),
                values.join(",")
            );
            conn.query_drop(insert).await.map_err(sql(format!("filling {}.{}", t.schema, t.name)))?;
            rows += conn.affected_rows();
            done.fetch_add(n, Ordering::Relaxed);
            i += n;
        }
    }
    let _ = conn.disconnect().await;
    let mut said = format!(
        "made {made} table(s) from the capture's schema with {rows} rows of drawn values (not the captured data: \
         replays on it say so)"
    );
    if !left.is_empty() {
        said += &format!("; left empty: {}", left.join(", "));
    }
    Ok(said)
}

/// The columns a row needs values for (generated ones left out); None where one has a
/// type sizeup cannot make and no NULL.
async fn columns(conn: &mut mysql_async::Conn, t: &Table) -> Result<Option<Vec<Column>>, DataError> {
    type Described = (String, String, String, u64, u64, String, String, String);
    let all: Vec<Described> = conn
        .query(format!(
            "{OWN} SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, COALESCE(CHARACTER_MAXIMUM_LENGTH, 0), \
             COALESCE(NUMERIC_SCALE, 0), COLUMN_KEY, EXTRA, IS_NULLABLE FROM information_schema.COLUMNS WHERE \
             TABLE_SCHEMA = {} AND TABLE_NAME = {} ORDER BY ORDINAL_POSITION",
            literal(&t.schema),
            literal(&t.name)
        ))
        .await
        .map_err(|e| DataError::sql(format!("reading {}.{}'s columns", t.schema, t.name), &e))?;
    let columns: Vec<Column> = all
        .into_iter()
        .map(|(name, data_type, column_type, max_len, scale, key, extra, nullable)| Column {
            name,
            data_type,
            column_type,
            max_len,
            scale,
            key,
            extra,
            nullable: nullable == "YES",
        })
        .filter(|c| !c.generated())
        .collect();
    Ok(columns.iter().all(|c| rows::value(c, 0, 1).is_some()).then_some(columns))
}

/// Whether the tables a capture names were made from its schema (by their mark), not
/// copied: every answer on them says so.
pub async fn made_from_schema(conn: &mut mysql_async::Conn, tables: &[Table]) -> bool {
    let schemas: std::collections::BTreeSet<&str> = tables.iter().map(|t| t.schema.as_str()).collect();
    if schemas.is_empty() {
        return false;
    }
    let list: Vec<String> = schemas.iter().map(|s| literal(s)).collect();
    let sql = format!(
        "{OWN} SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA IN ({}) AND TABLE_COMMENT LIKE {}",
        list.join(","),
        literal(&format!("%{MADE}%"))
    );
    conn.query_first::<u64, _>(sql).await.ok().flatten().unwrap_or(0) > 0
}
