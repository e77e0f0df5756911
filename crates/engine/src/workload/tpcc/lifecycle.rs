//! TPC-C's lifecycle: its options checked, the load (clause 4.3), the check before a
//! run (warehouses and the load's C_LAST constant read from the database), the
//! consistency conditions (clause 3.3.2) and cleanup.

use super::{check, load, parse_mix, schema, Tpcc, TpccOptions};
use crate::error::Invalid;
use crate::exec::RunSpec;
use crate::options::WorkloadArgs;
use crate::stats::{Interval, Summary};
use crate::target::{short_error, Target};
use crate::workload::DataError;
use crate::workload::{
    CheckOutcome, CleanupReport, DataSize, Kind, Optional, Ready, Runnable, SizeCheck, Unit, Workload,
};
use crate::Error;
use futures_util::future::BoxFuture;
use mysql_async::prelude::Queryable;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

pub struct TpccKind;
pub static TPCC: TpccKind = TpccKind;

/// The most warehouses a prepare loads (about 100 GB each way past any box sizeup runs on).
const MAX_WAREHOUSES: u32 = 100_000;

impl Kind for TpccKind {
    fn names(&self) -> Vec<&'static str> {
        vec![super::NAME]
    }
    fn accepts(&self, name: &str) -> bool {
        name == super::NAME
    }
    fn default_database(&self) -> &'static str {
        super::NAME
    }
    fn unit(&self) -> Unit {
        Unit::Nopm
    }
    fn level_name(&self) -> &'static str {
        "users"
    }
    fn transaction_types(&self, _name: &str) -> Vec<String> {
        super::TRANSACTIONS.iter().map(|s| s.to_string()).collect()
    }
    fn throughput(&self, iv: &Interval) -> f64 {
        super::interval_nopm(iv)
    }
    fn add_figures(&self, summary: &mut Summary) {
        super::add_figures(summary)
    }
    fn data_size(&self) -> Option<DataSize> {
        Some(DataSize { option: "warehouses", default: 1, tag: "w" })
    }
    fn build(&self, _name: &str, options: &WorkloadArgs) -> Result<Box<dyn Workload>, Invalid> {
        if options.db_ps_mode == "disable" {
            return Err(Invalid::Value(
                "--db-ps-mode disable applies to the OLTP workloads; tpcc prepares its statements".into(),
            ));
        }
        let t = &options.tpcc;
        let warehouses = t.warehouses.unwrap_or(1);
        if warehouses == 0 || warehouses > MAX_WAREHOUSES {
            return Err(Invalid::Value(format!("--warehouses {warehouses}: give 1 to {MAX_WAREHOUSES}")));
        }
        Ok(Box::new(TpccWorkload {
            warehouses,
            asked: t.warehouses,
            mix: parse_mix(&t.mix)?,
            all_warehouses: t.all_warehouses,
            think_time: t.think_time == "spec",
        }))
    }
}

pub struct TpccWorkload {
    /// Warehouses to load.
    warehouses: u32,
    /// What the user asked for: a run uses what the database holds.
    asked: Option<u32>,
    mix: [u32; 5],
    all_warehouses: bool,
    think_time: bool,
}

impl Workload for TpccWorkload {
    fn name(&self) -> &str {
        super::NAME
    }
    fn judge(&self, summary: &mut Summary, connections: u32) {
        if let Some(note) = super::mix_missed(summary, &self.mix, connections) {
            summary.observed.notes.push(note);
        }
    }
    fn kind(&self) -> &'static dyn Kind {
        &TPCC
    }
    fn data(&self) -> String {
        format!("{} warehouse(s)", self.warehouses)
    }
    fn rows_to_load(&self) -> u64 {
        load::ROWS_PER_WAREHOUSE * self.warehouses as u64 + load::ITEMS as u64
    }
    fn tables(&self) -> Vec<String> {
        schema::TABLES.iter().map(|t| t.to_string()).collect()
    }
    fn size_check(&self) -> Option<SizeCheck> {
        let want = self.asked? as u64;
        Some(SizeCheck { want, what: "warehouses", sql: "/* sizeup */ SELECT COUNT(*) FROM warehouse", confirm: None })
    }
    fn prepare_hint(&self) -> String {
        "sizeup prepare tpcc --warehouses W".into()
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
            let r = load::prepare(target, self.warehouses, loaders, load, seed, rows).await?;
            Ok(format!(
                "prepared tpcc: {} warehouse(s), {} rows, {:.0} MB of row text in {:.1} s ({:.0} rows/s, {})",
                r.warehouses,
                r.rows,
                r.bytes as f64 / 1e6,
                r.seconds,
                r.rows_per_second,
                r.method
            ))
        })
    }
    fn cleanup<'a>(&'a self, target: &'a Target, _threads: u32) -> BoxFuture<'a, Result<CleanupReport, DataError>> {
        Box::pin(load::cleanup(target))
    }
    fn supports(&self, step: Optional) -> bool {
        step == Optional::Check
    }
    fn check<'a>(&'a self, target: &'a Target, every: Duration) -> BoxFuture<'a, Result<Vec<CheckOutcome>, DataError>> {
        Box::pin(check::check(target, every))
    }
    fn check_run(&self, spec: &RunSpec) -> Result<(), Invalid> {
        if self.think_time && spec.rate.is_some() {
            return Err(Invalid::Value(
                "--think-time spec paces each user itself; leave out --rate (or use --think-time none)".into(),
            ));
        }
        if self.think_time && spec.delay.is_some() {
            return Err(Invalid::Value(
                "--think-time spec paces each user itself; leave out --delay (or use --think-time none)".into(),
            ));
        }
        Ok(())
    }
    fn start<'a>(
        &'a self,
        conn: &'a mut mysql_async::Conn,
        database: &'a str,
        spec: &'a RunSpec,
        warn: bool,
    ) -> BoxFuture<'a, Result<Box<dyn Runnable>, Error>> {
        Box::pin(async move {
            // Each step named: a server that cannot do one says which.
            let failed =
                |step: &'static str| move |e: mysql_async::Error| Error::Failed(format!("{step}: {}", short_error(&e)));
            let tables = crate::workload::ownership::comments(conn, database)
                .await
                .map_err(failed("reading the TPC-C tables' comments"))?;
            if let Some(missing) = schema::TABLES.iter().find(|t| !tables.iter().any(|(n, _)| n == *t)) {
                return Err(Error::Usage(format!(
                    "{database}.{missing} does not exist: run `sizeup prepare tpcc --warehouses W` first"
                )));
            }
            // Clause 2.1.6.1: the run's C_LAST constant keeps a set distance from the load's.
            let mut c_last = tables.iter().find(|(n, _)| n == "item").and_then(|(_, c)| schema::c_last_from_comment(c));
            let mut source = "the load's table comment";
            if c_last.is_none() {
                // Data sizeup did not load: estimate the load's constant from the names.
                let names: Vec<String> = conn
                    .query("SELECT c_last FROM customer WHERE c_w_id = 1 AND c_id > 1000")
                    .await
                    .map_err(failed("reading customers' last names (the load's C_LAST constant)"))?;
                let numbers: Vec<u32> = names.iter().filter_map(|n| super::random::last_name_value(n)).collect();
                c_last = super::random::estimate_load_c_last(&numbers);
                source = if c_last.is_some() { "estimated from the customers' last names" } else { "unknown" };
                if c_last.is_none() && warn {
                    eprintln!(
                        "warning: the load's C_LAST constant is unknown (too few customers to estimate it): \
                         the run's is drawn without the spec's distance from it (clause 2.1.6.1)"
                    );
                }
            }
            let warehouses: Option<u32> =
                conn.query_first("SELECT COUNT(*) FROM warehouse").await.map_err(failed("counting warehouses"))?;
            let warehouses = warehouses.unwrap_or(0);
            if warehouses == 0 {
                return Err(Error::Usage(format!(
                    "{database}.warehouse is empty: run `sizeup prepare tpcc --warehouses W` first"
                )));
            }
            if let Some(w) = self.asked.filter(|&w| w != warehouses && warn) {
                eprintln!("warning: --warehouses {w} ignored: {database} holds {warehouses} warehouse(s)");
            }
            let mut rng = crate::random::rng_from_seed(spec.seed ^ 0x7cc);
            let constants = super::random::Constants::for_run(&mut rng, c_last);
            let options = TpccOptions {
                warehouses,
                users: spec.run_connections.unwrap_or(spec.threads),
                mix: self.mix,
                all_warehouses: self.all_warehouses,
                think_time: self.think_time,
                constants,
                load_c_last: c_last,
                load_c_last_source: source,
            };
            let recorded = serde_json::to_value(&options).expect("serialisable");
            let ready: Box<dyn Runnable> =
                Box::new(Ready { sessions: Tpcc { options: Arc::new(options) }, options: recorded });
            Ok(ready)
        })
    }
}
