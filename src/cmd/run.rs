//! `sizeup run`: one measured run. The plan validates the options into a request; the
//! runner does the rest (see `crate::runner`).

use super::Context;
use crate::cli::RunArgs;
use crate::exec::Ended;
use crate::runner;
use crate::{request, Error};

/// `sysbench`: the command line was sysbench's, and so is the output.
pub fn run(cx: &Context, a: &RunArgs, sysbench: bool) -> Result<i32, Error> {
    let mut request = request::run_request(&a.workload, &a.options).map_err(Error::from)?;
    request.output.sysbench = sysbench;
    if a.options.load_method != crate::options::LoadMethod::Auto {
        // Shared with the studies' steps, which load missing tables themselves.
        eprintln!(
            "note: --load-method is for the tables sizeup loads itself (prepare, sweep, scale, studies); \
             run uses the tables as they are"
        );
    }
    let observer = runner::observe::for_output(&request.output);
    let (doc, ended) = runner::measure(&cx.manager, &cx.results, request, observer.as_ref())?;
    if ended == Ended::Failed {
        eprintln!("error: the run stopped: {}", doc.error.unwrap_or_default());
    }
    Ok(ended.exit_code())
}
