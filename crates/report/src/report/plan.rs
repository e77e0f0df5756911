//! A purchase plan in words: two sentences (the plan, then what it rests on and what
//! it beat), the ways to build that were weighed, each stage run or skipped and why,
//! and what qualifies the answer; the HTML report puts the studies' own sections under
//! it, each figure naming the study it came from.

use super::svg::esc;
use crate::plan::purchase::{Candidate, Purchase};
use crate::plan::{Host, PlanSpec, PlanState};
use std::fmt::Write;

fn n(v: f64) -> String {
    let whole = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

fn plural(k: u64, one: &str, many: &str) -> String {
    format!("{k} {}", if k == 1 { one } else { many })
}

/// "3 servers (range 3-4) x 1 instance".
fn shape(c: &Candidate) -> String {
    let p = &c.plan;
    let range = match p.servers_range {
        (Some(a), Some(b)) if a == p.servers && b == p.servers => String::new(),
        (a, b) => format!(
            " (range {}-{})",
            a.map_or("?".into(), |v| v.to_string()),
            b.map_or("more".into(), |v| v.to_string())
        ),
    };
    let pool = c
        .pool_bytes
        .filter(|_| p.name.contains("pool"))
        .map_or(String::new(), |b| format!(" with a {} MiB pool each", b >> 20));
    format!(
        "{}{range} x {}{pool}",
        plural(p.servers, "server", "servers"),
        plural(p.instances_per_server as u64, "instance", "instances")
    )
}

fn cost_words(c: &Candidate, years: Option<f64>) -> Option<String> {
    let k = c.cost.as_ref()?;
    let range = match k.range {
        (Some(a), Some(b)) if (a - k.total).abs() > 0.5 || (b - k.total).abs() > 0.5 => {
            format!(" (range {}{}-{})", k.currency, n(a), n(b))
        }
        _ => String::new(),
    };
    let what = match (k.energy, k.memory) {
        (true, true) => "servers, memory, power and cooling",
        (true, false) => "servers, power and cooling",
        (false, true) => "servers and memory; energy not counted",
        (false, false) => "servers; energy not counted",
    };
    Some(format!(
        "{}{}{range} over {} years ({what})",
        k.currency,
        n(k.total),
        years.map_or("the".into(), |y| format!("{y}"))
    ))
}

/// The plan in two sentences.
pub fn headline(spec: &PlanSpec, p: &Purchase) -> [String; 2] {
    let c = &p.chosen;
    let at = spec.latency.as_deref().map_or(String::new(), |l| format!(" at {l}"));
    let years = spec.cost.as_ref().map(|c| c.years);
    let verb = if c.plan.servers == 1 { "carries" } else { "carry" };
    let growth = spec.growth.map_or(String::new(), |g| format!(" ({g}x the captured traffic)"));
    let mut first =
        format!("Plan: {} {verb} {} {}{growth} of {}{at}", shape(c), n(spec.target_tps), p.unit, spec.workload);
    if let Some(w) = cost_words(c, years) {
        let _ = write!(first, ", {w}");
    }
    if let Some(w) = c.plan.watts {
        let _ = write!(first, ", drawing about {} W a server", n(w));
    }
    first.push('.');
    let (lo, hi) = c.plan.per_server_range;
    let range = if n(lo) == n(hi) { String::new() } else { format!(" (range {}-{})", n(lo), n(hi)) };
    let mut second = format!(
        "Each server carries {} {}{range} {} — {}",
        n(c.plan.per_server),
        p.unit,
        if p.at_objective { "at the objective" } else { "at its closed-loop peak" },
        c.basis
    );
    match p.ran_out.as_slice() {
        [] if !p.watched => {
            let _ = write!(
                second,
                "; what ran out at one instance's peak is not known: the server's CPU and disks were not watched (a \
                 server sizeup does not manage; study {})",
                p.sweep_study
            );
        }
        [] => {
            let _ = write!(second, "; at one instance's peak nothing measured ran out (study {})", p.sweep_study);
        }
        all => {
            let _ = write!(second, "; at one instance's peak {} ran out (study {})", all.join(" and "), p.sweep_study);
        }
    }
    match p.beaten.as_slice() {
        [] => second.push_str("; no other way to build was measured."),
        beaten => {
            // The two cheapest in the sentence; the table has them all.
            let more = beaten.len().saturating_sub(2);
            let mut alts: Vec<String> = beaten
                .iter()
                .take(2)
                .map(|b| match cost_words(b, years) {
                    Some(_) => format!(
                        "{} ({}{})",
                        shape(b),
                        b.cost.as_ref().expect("costed").currency,
                        n(b.cost.as_ref().expect("costed").total)
                    ),
                    None => shape(b),
                })
                .collect();
            if more > 0 {
                alts.push(format!("{more} more in the table"));
            }
            let _ = write!(second, "; it beat {}.", alts.join(" and "));
        }
    }
    [first, second]
}

fn gib(b: u64) -> String {
    let g = b as f64 / (1u64 << 30) as f64;
    if g >= 1.0 {
        format!("{g:.1} GiB")
    } else {
        format!("{:.0} MiB", b as f64 / (1u64 << 20) as f64)
    }
}

/// What the plan counts, in a sentence or two after the headline: the measured
/// server's hardware, the data against its pool (warned when tiny or a default), the
/// connection path, and the load generator's share of the host with what a server
/// without it could carry.
pub fn measured_on(spec: &PlanSpec, host: Option<&Host>, p: &Purchase) -> Vec<String> {
    let Some(h) = host else { return Vec::new() };
    let mut out = Vec::new();
    let mut hw = vec![format!("{} CPUs", h.cpus)];
    if let Some(m) = h.memory_bytes {
        hw.push(format!("{} of memory", gib(m)));
    }
    if let Some(s) = &h.storage {
        hw.push(format!("data on {s}"));
    }
    let what = if h.managed {
        format!("Each server counted is one like the host measured: {}", hw.join(", "))
    } else {
        format!(
            "Each server counted is one like the server measured, on a host sizeup did not see (this client host: {})",
            hw.join(", ")
        )
    };
    let data = match (h.data_bytes, h.pool_bytes) {
        (Some(d), Some(pool)) => format!("; {} of data in a {} buffer pool", gib(d), gib(pool)),
        (Some(d), None) => match &h.pool_unused {
            Some(why) => format!("; {} of data, no buffer pool under it ({why})", gib(d)),
            None => format!("; {} of data", gib(d)),
        },
        _ => String::new(),
    };
    let path = h.path.as_deref().map_or(String::new(), |p| format!(", reached over {p}"));
    out.push(format!("{what}{data}{path}."));
    // A capture replays on a copy of its own data: the size is the application's.
    let sized = spec.replays()
        || ["tables", "table-size", "table_size", "warehouses"].iter().any(|k| spec.options.contains_key(*k));
    if !sized {
        out.push(
            "Warning: the data was the workload's default size, unlike any real application's: give --tables and \
             --table-size (--warehouses for TPC-C) of your data's size."
                .into(),
        );
    } else if let (Some(d), Some(pool)) = (h.data_bytes, h.pool_bytes) {
        if d * 10 < pool {
            out.push(format!(
                "Warning: the data ({}) is a tenth of the buffer pool ({}) or less: every read is a memory hit, so \
                 the figure holds only for data that small against memory.",
                gib(d),
                gib(pool)
            ));
        }
    }
    // The load generator shared the host: a dedicated server of this kind carries up to
    // its CPU more, when the CPU ran out.
    if let Some(o) = p.at_peak.as_ref().filter(|_| h.managed) {
        if let (Some(server), Some(busy)) = (o.server_cores.filter(|s| *s > 0.0), o.busy()) {
            let mut t = format!(
                "The load generator ran on the same host: {:.2} of its {} cores at the sweep's peak (server {:.2})",
                o.client_cores, h.cpus, server
            );
            if busy >= crate::study::bottleneck::CPU_BUSY {
                let up = (server + o.client_cores) / server;
                let c = &p.chosen.plan;
                let dedicated = crate::model::sizing::servers_needed(spec.target_tps, c.per_server * up, c.efficiency)
                    .map_or(c.servers, |s| s.min(c.servers));
                let _ = write!(
                    t,
                    "; with the CPU spent, a dedicated server could carry up to {:.0} % more ({}-{} {} a server), \
                     so the count is of servers that each also ran their client{}",
                    (up - 1.0) * 100.0,
                    n(c.per_server),
                    n(c.per_server * up),
                    p.unit,
                    match c.servers - dedicated {
                        0 => String::new(),
                        k => format!("; dedicated ones may need up to {k} fewer"),
                    }
                );
            }
            t.push('.');
            out.push(t);
        }
    }
    out
}

/// The terminal form: the headline, the ways weighed, the stages, the caveats.
pub fn text(
    id: i64,
    status: crate::store::Status,
    spec: &PlanSpec,
    state: &PlanState,
    answer: &Result<Purchase, crate::model::sizing::NoPlan>,
) -> String {
    let mut out = format!("\nplan {id} — {} — {status}\n", spec.name);
    match answer {
        Ok(p) => {
            for s in headline(spec, p) {
                let _ = writeln!(out, "{s}");
            }
            for s in measured_on(spec, state.host.as_ref(), p) {
                let _ = writeln!(out, "{s}");
            }
            let _ = writeln!(
                out,
                "\n  {:<44} {:>14} {:>18} {:>18}  cost",
                "way to build",
                format!("{}/server", p.unit),
                "servers",
                "watts/server"
            );
            for (c, tag) in std::iter::once((&p.chosen, "chosen")).chain(p.beaten.iter().map(|b| (b, ""))) {
                let _ = writeln!(
                    out,
                    "  {:<44} {:>14} {:>18} {:>18}  {}{}",
                    c.plan.name,
                    n(c.plan.per_server),
                    c.plan.servers_text(),
                    c.plan.watts.map_or("-".into(), n),
                    c.cost.as_ref().map_or("-".into(), |k| format!("{}{}", k.currency, n(k.total))),
                    if tag.is_empty() { String::new() } else { format!("  <- {tag}") }
                );
            }
            let _ = writeln!(out, "  scale-out efficiency: {}", p.efficiency_words);
            let mut weak: Vec<&String> = p.chosen.plan.weak.iter().collect();
            weak.dedup();
            for w in weak {
                let _ = writeln!(out, "  weak: {w}");
            }
            for c in &p.caveats {
                let _ = writeln!(out, "  note: {c}");
            }
        }
        Err(why) => {
            let _ = writeln!(out, "No plan: {why}.");
        }
    }
    out.push_str("\nstudies:\n");
    for r in &state.stages {
        let what = match r.study {
            Some(s) => format!("study {s}, {:.0} s", r.seconds),
            None => "skipped".into(),
        };
        let _ = writeln!(out, "  {} ({what}): {}", r.stage.name(), r.why);
    }
    if let Some(e) = &state.error {
        let _ = writeln!(out, "  it stopped on an error: {e}");
    }
    let _ = writeln!(out, "  {:.0} s of the {:.0} s budget spent", state.spent_s(), spec.budget_s);
    out
}

/// The HTML that opens the plan's report, above the studies' sections.
pub fn html(
    id: i64,
    status: crate::store::Status,
    spec: &PlanSpec,
    state: &PlanState,
    answer: &Result<Purchase, crate::model::sizing::NoPlan>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "<section class=\"answer\"><h2>Plan {id} — {}</h2>", esc(&spec.name));
    match answer {
        Ok(p) => {
            for s in headline(spec, p).into_iter().chain(measured_on(spec, state.host.as_ref(), p)) {
                let _ = writeln!(out, "<p>{}</p>", esc(&s));
            }
        }
        Err(why) => {
            let _ = writeln!(out, "<p>No plan: {}.</p>", esc(&why.to_string()));
        }
    }
    out.push_str("</section>\n");
    if let Ok(p) = answer {
        out.push_str("<h3>Ways to build that were weighed</h3><table><tr><th class=\"l\">way</th>");
        let _ = write!(
            out,
            "<th>{}/server</th><th>range</th><th>servers</th><th>watts/server</th><th>cost</th><th class=\"l\">from</th></tr>",
            esc(&p.unit)
        );
        for c in std::iter::once(&p.chosen).chain(&p.beaten) {
            let (lo, hi) = c.plan.per_server_range;
            let _ = writeln!(
                out,
                "<tr><td class=\"l\">{}{}</td><td>{}</td><td>{}-{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
                esc(&c.plan.name),
                if std::ptr::eq(c, &p.chosen) { " (chosen)" } else { "" },
                n(c.plan.per_server),
                n(lo),
                n(hi),
                esc(&c.plan.servers_text()),
                c.plan.watts.map_or("—".into(), n),
                c.cost.as_ref().map_or("—".into(), |k| format!("{}{}", esc(&k.currency), n(k.total))),
                esc(&c.basis)
            );
        }
        out.push_str("</table>\n");
        let _ = writeln!(out, "<p class=\"muted\">Scale-out efficiency: {}.</p>", esc(&p.efficiency_words));
        let mut notes: Vec<String> = p.chosen.plan.weak.clone();
        notes.extend(p.caveats.iter().cloned());
        if !notes.is_empty() {
            out.push_str("<ul class=\"warnings\">");
            for w in notes {
                let _ = write!(out, "<li>{}</li>", esc(&w));
            }
            out.push_str("</ul>\n");
        }
    }
    out.push_str("<h3>The studies, in the order the plan ran them</h3><ul>");
    for r in &state.stages {
        match r.study {
            Some(s) => {
                let _ = write!(
                    out,
                    "<li><b>{}</b>: <a href=\"#study-{s}\">study {s}</a> ({:.0} s) — {}</li>",
                    esc(r.stage.name()),
                    r.seconds,
                    esc(&r.why)
                );
            }
            None => {
                let _ = write!(out, "<li><b>{}</b>: skipped — {}</li>", esc(r.stage.name()), esc(&r.why));
            }
        }
    }
    let _ = writeln!(
        out,
        "</ul><p class=\"muted\">Plan {status}; {:.0} s of the {:.0} s budget spent.</p>",
        state.spent_s(),
        spec.budget_s
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::fixtures::{cpu_bound, found, lock_bound, plan};
    use crate::plan::purchase::purchase;
    use crate::study::capacity::{RateFigures, Verdict};
    use crate::study::figures::fixtures::fixture;

    fn capacity(f: &mut crate::plan::Findings) {
        let missed = Verdict::Missed { objective: "p99".into(), ms: 80.0, below_ms: 50.0 };
        let levels = [(900, Verdict::Met), (1800, missed.clone()), (1350, Verdict::Met), (1575, missed)];
        f.capacity = Some(crate::plan::Found {
            study: 2,
            status: crate::store::Status::Completed,
            rates: levels.into_iter().map(|(r, v)| (r, RateFigures::default(), v)).collect(),
            ..Default::default()
        });
    }

    #[test]
    fn the_plan_in_two_sentences_names_its_range_its_evidence_and_what_ran_out() {
        let mut f = cpu_bound();
        capacity(&mut f);
        let p = purchase(&plan(), &f, &[], None).unwrap();
        let [a, b] = headline(&plan(), &p);
        assert_eq!(a, "Plan: 5 servers (range 4-5) x 1 instance carry 5,000 tps of oltp_read_write at p99<50ms.");
        assert_eq!(
            b,
            "Each server carries 1,350 tps (range 1,350-1,575) at the objective — study 2: the highest rate that met \
             p99<50ms was 1350 tps (1575 broke it); at one instance's peak the host's CPU ran out (study 1); no other \
             way to build was measured."
        );
    }

    /// the_plan_names_what_it_counts (issue 61, 6): "Each server carries 663 tps" for a
    /// 2-vCPU VM that also ran the load generator, on 3 MiB of default data, over a unix
    /// socket, priced as a $9,000 server; E = 0.9 called given; --memory-price unused
    /// and unsaid.
    #[test]
    fn the_plan_names_what_it_counts() {
        let mut f = cpu_bound();
        capacity(&mut f);
        let spec = PlanSpec { memory_price: Some(10.0), ..plan() };
        let skipped = crate::plan::StageRecord {
            stage: crate::plan::Stage::Memory,
            study: None,
            why: "the data (3 MiB) fits the buffer pool (1.0 GiB)".into(),
            for_time: false,
            seconds: 0.0,
        };
        let p = purchase(&spec, &f, std::slice::from_ref(&skipped), None).unwrap();
        let host = Host {
            memory_bytes: Some(24 << 30),
            storage: Some("vda, 100 GiB, not rotational (SSD, NVMe or virtual)".into()),
            path: Some("a unix socket (no network round trip)".into()),
            data_bytes: Some(3 << 20),
            ..crate::plan::fixtures::host()
        };
        let s = measured_on(&spec, Some(&host), &p);
        assert_eq!(
            s[0],
            "Each server counted is one like the host measured: 2 CPUs, 24.0 GiB of memory, data on vda, 100 GiB, \
             not rotational (SSD, NVMe or virtual); 3 MiB of data in a 1.0 GiB buffer pool, reached over a unix \
             socket (no network round trip)."
        );
        assert!(s[1].starts_with("Warning: the data was the workload's default size"), "{}", s[1]);
        // At the peak (99 % busy) sizeup took 0.36 of the 2 cores beside the server's 1.58.
        assert!(s[2].starts_with("The load generator ran on the same host: 0.35 of its 2 cores"), "{}", s[2]);
        assert!(s[2].contains("a dedicated server could carry up to 22 % more (1,350-1,654 tps a server)"), "{}", s[2]);
        assert!(s[2].ends_with("each also ran their client; dedicated ones may need up to 1 fewer."), "{}", s[2]);
        // Data given, but tiny against the pool.
        let sized = PlanSpec { options: [("tables".to_string(), 1.into())].into_iter().collect(), ..spec.clone() };
        assert!(measured_on(&sized, Some(&host), &p)[1].starts_with("Warning: the data (3 MiB) is a tenth"));
        // E assumed, not given; the memory price said unused.
        assert_eq!(p.efficiency_words, "0.9, assumed (none was measured or given)");
        assert_eq!(p.chosen.plan.efficiency_source, "assumed");
        assert!(p.caveats.iter().any(|c| c.starts_with("--memory-price was not used: the memory study was skipped")));
        let t = text(
            1,
            crate::store::Status::Completed,
            &spec,
            &PlanState { host: Some(host), ..Default::default() },
            &Ok(p),
        );
        assert!(t.contains("reached over a unix socket"), "{t}");
    }

    #[test]
    fn the_alternatives_beaten_are_named_with_their_cost() {
        let mut f = lock_bound();
        capacity(&mut f);
        f.scale_up = Some(found(3, fixture(&[(1, 1500.0, 0.02, 55.0), (2, 2400.0, 0.02, 90.0)], "")));
        let cost = crate::cost::CostInputs::parse("server_capex=9000,power_price_kwh=0.15,years=4").unwrap();
        let spec = PlanSpec { cost: Some(cost), ..plan() };
        let p = purchase(&spec, &f, &[], None).unwrap();
        let [a, b] = headline(&spec, &p);
        // 2160 tps a server, 1350 x 1.51 to 1575 x 1.69 by the two ranges: 3 at both ends.
        assert!(a.starts_with("Plan: 3 servers x 2 instances carry 5,000 tps"), "{a}");
        assert!(a.contains("$27,000 over 4 years (servers; energy not counted)"), "{a}");
        assert!(b.contains("row locks ran out (study 1)"), "{b}");
        assert!(b.ends_with("it beat 5 servers (range 4-5) x 1 instance ($45,000)."), "{b}");
        let t = text(1, crate::store::Status::Completed, &spec, &Default::default(), &Ok(p));
        assert!(t.contains("2 instances per server") && t.contains("<- chosen"), "{t}");
    }

    #[test]
    fn no_plan_says_why() {
        let mut f = cpu_bound();
        let missed = Verdict::Missed { objective: "p99".into(), ms: 80.0, below_ms: 50.0 };
        f.capacity = Some(crate::plan::Found {
            study: 2,
            status: crate::store::Status::Completed,
            rates: vec![(400, RateFigures::default(), missed)],
            ..Default::default()
        });
        let answer = purchase(&plan(), &f, &[], None);
        let t = text(1, crate::store::Status::Completed, &plan(), &Default::default(), &answer);
        assert!(t.contains("No plan: no rate met p99<50ms (study 2; the lowest tried, 400 tps, broke it)"), "{t}");
        let h = html(1, crate::store::Status::Completed, &plan(), &Default::default(), &answer);
        assert!(h.contains("No plan: no rate met p99&lt;50ms"), "{h}");
    }
}
