//! `sizeup runs list|show|export`: stored runs.

use super::{write_out, Context};
use crate::cli::{ExportArgs, RunsCommand};
use crate::result::RunDocument;
use crate::workload::Unit;
use crate::{report, store, Error};

pub fn run(cx: &Context, cmd: RunsCommand) -> Result<i32, Error> {
    let store = store::Store::open_read_only(&cx.results)?;
    match cmd {
        RunsCommand::List => crate::out!("{}", report::runs_table(&store.list_runs()?)),
        RunsCommand::Export(ExportArgs { id, format, output }) => {
            write_out(output.as_deref(), &report::export::run(&store.load_run(id)?, format))?
        }
        RunsCommand::Show { id, json } => {
            let doc = store.load_run(id)?;
            if json {
                crate::outln!("{}", serde_json::to_string_pretty(&doc).expect("serialisable"));
            } else {
                print_document(&doc);
            }
        }
    }
    Ok(0)
}

fn print_document(doc: &RunDocument) {
    crate::outln!("run {} — {} — {}", doc.id.unwrap_or(0), doc.config.workload, doc.status);
    if let Some(e) = &doc.error {
        crate::outln!("stopped by: {e}");
    }
    let open_loop = doc.config.run.rate.is_some();
    let nopm = doc.config.unit() == Unit::Nopm;
    // Tagged as they were live (runs_show_drops_the_fault_tag), the last partial
    // interval too: a stall after --time is in it.
    for iv in &doc.intervals {
        let line = if nopm { report::tpcc_interval_line(iv) } else { report::interval_line(iv, open_loop) };
        crate::outln!("{line}{}", report::fault_tag(iv));
    }
    if let Some(s) = &doc.summary {
        crate::out!("{}", report::summary_table(s, "summary"));
    }
    if let Some(d) = report::answer::data_vs_pool(&doc.config) {
        crate::outln!("data: {d}");
    }
}
