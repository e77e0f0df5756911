//! The OLTP workloads' lifecycle: their options validated, prepare, prewarm, the check
//! before a run, cleanup. Every oltp_* name is one [`Kind`]; the variant picks the mix.

use super::session::Oltp;
use super::{OltpOptions, Variant};
use crate::error::Invalid;
use crate::exec::RunSpec;
use crate::options::{OltpArgs, WorkloadArgs};
use crate::random::{RandOptions, RandType};
use crate::target::Target;
use crate::workload::DataError;
use crate::workload::{CleanupReport, DataSize, Kind, Optional, Ready, Runnable, SizeCheck, Workload};
use crate::Error;
use futures_util::future::BoxFuture;
use mysql_async::prelude::Queryable;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

pub struct OltpKind;
pub static OLTP: OltpKind = OltpKind;

impl Kind for OltpKind {
    fn names(&self) -> Vec<&'static str> {
        Variant::ALL.iter().map(|(n, _)| *n).collect()
    }
    fn accepts(&self, name: &str) -> bool {
        Variant::from_name(name).is_some()
    }
    fn default_database(&self) -> &'static str {
        "sbtest"
    }
    fn transaction_types(&self, name: &str) -> Vec<String> {
        Variant::from_name(name).map(|v| vec![v.name().to_string()]).unwrap_or_default()
    }
    fn data_size(&self) -> Option<DataSize> {
        Some(DataSize { option: "table-size", default: 10_000, tag: "r" })
    }
    fn build(&self, name: &str, options: &WorkloadArgs) -> Result<Box<dyn Workload>, Invalid> {
        let variant = Variant::from_name(name).ok_or_else(|| Invalid::Value(format!("unknown workload '{name}'")))?;
        if options.oltp.read_only && variant != Variant::Complex {
            return Err(Invalid::Value(format!(
                "--oltp-read-only is sysbench 0.4's switch for its complex mode (oltp_complex); \
                 for reads only run oltp_read_only instead of {name}"
            )));
        }
        let mut o = options_of(&options.oltp)?;
        o.text_protocol = options.db_ps_mode == "disable";
        Ok(Box::new(OltpWorkload { variant, options: o }))
    }
}

/// sysbench's option values checked, as its scripts would refuse them.
pub fn options_of(a: &OltpArgs) -> Result<OltpOptions, Invalid> {
    let rand_type: RandType = a.rand_type.parse()?;
    if a.tables == 0 {
        return Err(Invalid::Value("--tables must be at least 1".into()));
    }
    if a.table_size > i32::MAX as u32 {
        return Err(Invalid::Value(format!("--table-size {} is larger than an INT id can hold", a.table_size)));
    }
    if !(0.0..1.0).contains(&a.rand_pareto_h) || a.rand_pareto_h == 0.0 {
        return Err(Invalid::Value("--rand-pareto-h must be between 0 and 1".into()));
    }
    if a.rand_spec_res >= 100 || a.rand_spec_pct > 100 {
        return Err(Invalid::Value("--rand-spec-res must be below 100 and --rand-spec-pct at most 100".into()));
    }
    if a.rand_zipfian_exp <= 0.0 {
        return Err(Invalid::Value("--rand-zipfian-exp must be above 0".into()));
    }
    let engine = a.mysql_storage_engine.trim();
    if engine.is_empty() || !engine.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(Invalid::Value(format!("--mysql-storage-engine '{engine}' is not an engine name")));
    }
    Ok(OltpOptions {
        tables: a.tables,
        table_size: a.table_size,
        range_size: a.range_size,
        point_selects: a.point_selects,
        simple_ranges: a.simple_ranges,
        sum_ranges: a.sum_ranges,
        order_ranges: a.order_ranges,
        distinct_ranges: a.distinct_ranges,
        index_updates: a.index_updates,
        non_index_updates: a.non_index_updates,
        delete_inserts: a.delete_inserts,
        range_selects: a.range_selects,
        auto_inc: a.auto_inc,
        skip_trx: a.skip_trx,
        secondary: a.secondary,
        create_secondary: a.create_secondary,
        storage_engine: engine.to_string(),
        read_only: a.read_only,
        text_protocol: false,
        rand: RandOptions {
            rand_type,
            spec_iter: a.rand_spec_iter.max(1),
            spec_pct: a.rand_spec_pct,
            spec_res: a.rand_spec_res,
            pareto_h: a.rand_pareto_h,
            zipfian_exp: a.rand_zipfian_exp,
        },
    })
}

pub struct OltpWorkload {
    pub variant: Variant,
    pub options: OltpOptions,
}

impl Workload for OltpWorkload {
    fn name(&self) -> &str {
        self.variant.name()
    }
    fn kind(&self) -> &'static dyn Kind {
        &OLTP
    }
    fn data(&self) -> String {
        format!("{} table(s) x {} rows", self.options.tables, self.options.table_size)
    }
    fn rows_to_load(&self) -> u64 {
        self.options.tables as u64 * self.options.table_size as u64
    }
    fn tables(&self) -> Vec<String> {
        (1..=self.options.tables).map(|i| format!("sbtest{i}")).collect()
    }
    fn size_check(&self) -> Option<SizeCheck> {
        Some(SizeCheck {
            want: self.options.table_size as u64,
            what: "rows per table",
            sql: "/* sizeup */ SELECT MAX(id) FROM sbtest1",
            confirm: Some("/* sizeup */ SELECT COUNT(*) FROM sbtest1"),
        })
    }
    fn prepare_hint(&self) -> String {
        format!("sizeup prepare {} --tables {}", self.name(), self.options.tables)
    }
    fn statements_per_connection(&self) -> u32 {
        let per_table = super::Plan::new(self.variant, &self.options).statements().len() as u32;
        per_table * self.options.tables
    }
    fn prepare<'a>(
        &'a self,
        target: &'a Target,
        loaders: u32,
        load: crate::workload::bulk::LoadSettings,
        seed: u64,
        rows: Arc<AtomicU64>,
    ) -> BoxFuture<'a, Result<String, DataError>> {
        Box::pin(async move {
            let r = super::prepare::prepare(target, &self.options, loaders, load, seed, rows).await?;
            Ok(format!(
                "prepared {} table(s), {} rows in {:.1} s ({:.0} rows/s, {})",
                r.tables, r.rows, r.seconds, r.rows_per_second, r.method
            ))
        })
    }
    fn cleanup<'a>(&'a self, target: &'a Target, _threads: u32) -> BoxFuture<'a, Result<CleanupReport, DataError>> {
        Box::pin(super::prepare::cleanup(target))
    }
    fn supports(&self, step: Optional) -> bool {
        step == Optional::Prewarm
    }
    fn writes(&self) -> bool {
        !matches!(self.variant, super::Variant::ReadOnly | super::Variant::PointSelect)
    }
    fn prewarm<'a>(
        &'a self,
        target: &'a Target,
        threads: u32,
        every: Duration,
    ) -> BoxFuture<'a, Result<(), DataError>> {
        Box::pin(super::prepare::prewarm(target, self.options.tables, self.options.table_size, threads, every))
    }
    fn start<'a>(
        &'a self,
        conn: &'a mut mysql_async::Conn,
        database: &'a str,
        _spec: &'a RunSpec,
        warn: bool,
    ) -> BoxFuture<'a, Result<Box<dyn Runnable>, Error>> {
        Box::pin(async move {
            let tables = self.options.tables;
            // Every workload but oltp_insert draws ids from 1..--table-size.
            if self.options.table_size == 0 && self.variant != super::Variant::Insert {
                return Err(Error::Usage(format!(
                    "--table-size 0 leaves {} no ids to draw: pass the --table-size the tables were prepared with",
                    self.name()
                )));
            }
            let present: Vec<String> = conn
                .query(format!(
                    "/* sizeup */ SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = {} AND TABLE_NAME LIKE 'sbtest%'",
                    crate::target::literal(database)
                ))
                .await
                .map_err(|e| Error::Failed(crate::target::short_error(&e)))?;
            if let Some(missing) = self.tables().into_iter().find(|t| !present.contains(t)) {
                return Err(Error::Usage(format!(
                    "{database}.{missing} does not exist: run `sizeup prepare {} --tables {tables}` (with the same --table-size) first",
                    self.name()
                )));
            }
            // A --table-size that differs from the data prepared is a silent error in
            // sysbench: ids are drawn from 1..table-size whatever the table holds. Say so.
            let max_id: Option<Option<u64>> =
                conn.query_first("/* sizeup */ SELECT MAX(id) FROM sbtest1").await.unwrap_or(None);
            // An empty table (prepared with --table-size 0, or emptied by DELETE) answers
            // every lookup with nothing, fast: a figure of empty lookups, not of the workload.
            if max_id == Some(None) && self.variant != super::Variant::Insert {
                return Err(Error::Usage(format!(
                    "{database}.sbtest1 holds no rows, so every id {} draws finds nothing and its figures would \
                     measure empty lookups: prepare the tables again (`sizeup cleanup {}`, then `sizeup prepare {} \
                     --table-size N`), or run oltp_insert",
                    self.name(),
                    self.name(),
                    self.name()
                )));
            }
            // The rule a study's data check follows too (SizeCheck::judge); oltp_insert
            // draws no ids from the rows there.
            if let (Some(Some(max_id)), Some(size)) = (max_id, self.size_check()) {
                match size.judge_on(conn, max_id, database, self.name()).await {
                    Err(refused) if self.variant != super::Variant::Insert => return Err(Error::Usage(refused)),
                    Err(_) => {}
                    Ok(Some(note)) if warn => eprintln!("note: {note}"),
                    Ok(_) => {}
                }
            }
            let options = serde_json::to_value(&self.options).expect("serialisable");
            let ready: Box<dyn Runnable> =
                Box::new(Ready { sessions: Oltp::new(self.variant, self.options.clone()), options });
            Ok(ready)
        })
    }
}
