//! Reports built from runs stored by real (small, fast) runs: the HTML is parsed for
//! each expected chart and table with the right series and numbers, a comparison is
//! made, and headless Chromium renders the page: no errors logged, charts not empty.

use crate::common;

use common::TestServer;
use sizeup::store::Store;
use sizeup::study::figures::SeriesResult;

/// The `data-` attributes of each `<circle>` inside the series `name` of chart `chart`.
fn points(html: &str, chart: &str, name: &str) -> Vec<(f64, f64)> {
    let start = html.find(&format!("data-chart=\"{chart}\"")).unwrap_or_else(|| panic!("no chart {chart}"));
    let fig = &html[start..start + html[start..].find("</figure>").unwrap()];
    let at = fig.find(&format!("data-series=\"{name}\"")).unwrap_or_else(|| panic!("{chart} has no series {name}"));
    let group = &fig[at..at + fig[at..].find("</g>").unwrap()];
    group
        .split("<circle ")
        .skip(1)
        .map(|c| {
            let attr = |k: &str| {
                let i = c.find(&format!("{k}=\"")).unwrap() + k.len() + 2;
                c[i..i + c[i..].find('"').unwrap()].parse::<f64>().unwrap()
            };
            (attr("data-x"), attr("data-y"))
        })
        .collect()
}

fn chromium() -> &'static str {
    for c in ["chromium", "chromium-browser", "google-chrome"] {
        if std::process::Command::new("sh").arg("-c").arg(format!("command -v {c}")).output().unwrap().status.success()
        {
            return c;
        }
    }
    panic!("headless Chromium is needed for this test: apt-get install chromium (scripts/setup.sh does)");
}

/// How headless Chromium lays `page` out in a window `width` px wide: the document's
/// width, and the chart labels (SVG text) that overlap another label or leave their
/// chart. A copy of the page gets the measuring script (the report itself has none).
fn layout(page: &std::path::Path, width: u32) -> serde_json::Value {
    const MEASURE: &str = r#"<script>(() => {
  const out = {width: document.documentElement.scrollWidth, overlaps: [], outside: []};
  for (const svg of document.querySelectorAll('svg')) {
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim());
    const r = texts.map(t => t.getBoundingClientRect());
    for (let i = 0; i < r.length; i++) {
      if (r[i].left < box.left - 1 || r[i].right > box.right + 1 || r[i].top < box.top - 1 || r[i].bottom > box.bottom + 1)
        out.outside.push(svg.closest('figure').dataset.chart + ': ' + texts[i].textContent + ' ' + JSON.stringify(r[i]) + ' in ' + JSON.stringify(box));
      for (let j = i + 1; j < r.length; j++) {
        const w = Math.min(r[i].right, r[j].right) - Math.max(r[i].left, r[j].left);
        const h = Math.min(r[i].bottom, r[j].bottom) - Math.max(r[i].top, r[j].top);
        if (w > 1 && h > 1) out.overlaps.push(svg.closest('figure').dataset.chart + ': ' + texts[i].textContent + ' / ' + texts[j].textContent);
      }
    }
  }
  document.body.setAttribute('data-layout', JSON.stringify(out));
})();</script></body>"#;
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("measured.html");
    std::fs::write(&copy, std::fs::read_to_string(page).unwrap().replace("</body>", MEASURE)).unwrap();
    let out = std::process::Command::new(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars"])
        .args(["--disable-background-networking", "--enable-logging=stderr", "--v=0", "--dump-dom"])
        .arg(format!("--window-size={width},1000"))
        .arg(format!("--user-data-dir={}", dir.path().join("profile").display()))
        .arg(format!("file://{}", copy.display()))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE") || l.contains("Uncaught")).collect();
    assert!(console.is_empty(), "the page logged at {width} px: {console:?}");
    let dom = String::from_utf8_lossy(&out.stdout);
    let at = dom.find("data-layout=\"").unwrap_or_else(|| panic!("no layout measured at {width} px: {log}")) + 13;
    let raw = &dom[at..at + dom[at..].find('"').unwrap()];
    let json = raw.replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    serde_json::from_str(&json).unwrap()
}

#[test]
fn reports_and_comparisons_from_real_runs() {
    let s = TestServer::start();
    let sweep = |extra: &str| {
        let mut args = vec![
            "sweep",
            "oltp_read_only",
            "--threads",
            "1,2,4",
            "--step-time",
            "2",
            "--warmup",
            "1",
            "--sample-interval",
            "0.5",
            "--tables",
            "1",
            "--table-size",
            "3000",
            "--watts",
            "100",
        ];
        if !extra.is_empty() {
            args.extend(["--stop-when", extra]);
        }
        assert!(crate::common::answered_or_starved(s.sizeup(&args).unwrap(), &s.results()));
    };
    sweep("");
    sweep("cpu>1");
    let store = Store::open(&s.results()).unwrap();
    let studies = store.list_studies().unwrap();
    let (first, second) = (&studies[0], &studies[1]);
    let run_id = first.steps[1].runs[0];
    let dir = tempfile::tempdir().unwrap();
    let html_path = dir.path().join("report.html");
    let h = html_path.to_str().unwrap();
    let (s1, s2, r) = (format!("s{}", first.id), format!("study:{}", second.id), run_id.to_string());
    assert_eq!(s.sizeup(&["report", &s1, &s2, &r, "--html", h]).unwrap(), 0);
    let html = std::fs::read_to_string(&html_path).unwrap();

    // Self-contained: nothing to fetch.
    assert!(
        !html.contains("http://")
            || html.matches("http://").count() == html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
    assert!(!html.contains("https://") && !html.contains("<script") && !html.contains("<link"));

    // The throughput/latency chart of study 1 holds each level's throughput.
    let series: Vec<SeriesResult> = serde_json::from_value(first.result.clone().unwrap()["series"].clone()).unwrap();
    let levels = &series[0].levels;
    let tps = points(&html, "throughput-latency", "tps");
    assert_eq!(tps.len(), 3);
    for (p, l) in tps.iter().zip(levels) {
        assert_eq!(*p, (l.level as f64, l.throughput.mean));
    }
    let mean_ms = points(&html, "throughput-latency", "mean ms");
    assert_eq!(
        mean_ms.iter().map(|p| p.1).collect::<Vec<_>>(),
        levels.iter().map(|l| l.latency_avg_ms).collect::<Vec<_>>()
    );
    // A study starved at every level (a busy box) has no peak to quote: the report's
    // shape above is what holds then.
    let Some((peak, peak_tps)) = series[0].peak else {
        assert!(series[0].only_starved(), "no peak, and not starved: {:?}", series[0].levels);
        return;
    };
    // The report opens with the answer in words, quoting the stored peak.
    let answer = &html[html.find("<section class=\"answer\">").expect("an answer section")..];
    let answer = &answer[..answer.find("</section>").unwrap()];
    let quoted = if peak_tps >= 100.0 { format!("{peak_tps:.0}") } else { format!("{peak_tps:.1}") };
    assert!(
        answer.contains(&format!("{quoted} tps (range "))
            && answer.contains(&format!(" at {peak} thread{}", if peak == 1 { "" } else { "s" })),
        "the opening sentence quotes the stored peak with its range ({quoted} at {peak}): {answer}"
    );
    // Where it saturates comes from the data, stop condition or none.
    assert!(
        ["was still rising", "peaked at", "carried"].iter().any(|w| answer.contains(w)),
        "a verdict on the series: {answer}"
    );
    assert!(html.find("<section class=\"answer\">").unwrap() < html.find("<section class=\"study\"").unwrap());
    assert!(html.contains("data-mark=\"peak"), "peak marked");
    assert!(html.contains(&format!("data-x=\"{peak}\"")));
    // CPU breakdown: five stacks, three bars each.
    let cpu = &html[html.find("data-chart=\"cpu\"").unwrap()..];
    let cpu = &cpu[..cpu.find("</figure>").unwrap()];
    for k in ["usr", "sys", "iowait", "other", "idle"] {
        let at = cpu.find(&format!("data-series=\"{k}\"")).unwrap();
        assert_eq!(cpu[at..at + cpu[at..].find("</g>").unwrap()].matches("<rect").count(), 3, "{k}");
    }
    // The levels table has the peak in bold and the given watts' tps/W.
    let peak_row = format!("<tr data-level=\"{peak}\">");
    let row = &html[html.find(&peak_row).unwrap()..];
    assert!(row[..row.find("</tr>").unwrap()].contains("<b>"), "peak in bold");
    assert!(html.contains("<dt>power</dt><dd>given</dd>"), "the power source is named");
    assert!(html.contains("<dt>server</dt><dd>10.") || html.contains("<dt>server</dt><dd>11."), "server version");
    assert!(html.contains("warm-up (excluded)"));
    // Study 2 stopped at its first level: the saturation table names the condition.
    assert!(html.contains("class=\"saturation\""));
    assert!(html.contains("stopped: CPU"));
    // The run: intervals over time with warm-up and steady state shaded, percentiles.
    assert!(html.contains("data-band=\"warm-up\"") && html.contains("data-band=\"steady state\""));
    let doc = store.load_run(run_id).unwrap();
    assert_eq!(points(&html, "intervals", "tps").len(), doc.intervals.len());
    assert_eq!(points(&html, "percentiles", "oltp_read_only").len(), 9);
    assert!(html.contains("<table class=\"percentiles\">"));

    // Three levels are too few for the USL: the report says so instead of a curve.
    assert!(html.contains("<pre class=\"usl\" data-fit=\"false\">USL: cannot fit oltp_read_only: 3 distinct"));
    // Six levels through saturation: the fitted curve is drawn over the points, and
    // `model usl --from` prints the same fit.
    let six = [
        "sweep",
        "oltp_read_only",
        "--threads",
        "1..6",
        "--step-time",
        "1",
        "--warmup",
        "0.5",
        "--sample-interval",
        "0.5",
        "--tables",
        "1",
        "--table-size",
        "3000",
    ];
    assert_eq!(s.sizeup(&six).unwrap(), 0);
    let third = store.list_studies().unwrap().pop().unwrap();
    let html6 = dir.path().join("six.html");
    assert_eq!(s.sizeup(&["report", &format!("s{}", third.id), "--html", html6.to_str().unwrap()]).unwrap(), 0);
    let html6_path = html6.clone();
    let html6 = std::fs::read_to_string(&html6).unwrap();
    assert!(html6.contains("<pre class=\"usl\" data-fit=\"true\">USL fit of oltp_read_only (6 points)"), "fit shown");
    assert_eq!(points(&html6, "throughput-latency", "USL fit").len(), 41);
    assert_eq!(s.sizeup(&["model", "usl", "--from", &format!("s{}", third.id)]).unwrap(), 0);

    // compare: two runs of one study level are the same configuration.
    let (a, b) = (first.steps[2].runs[0].to_string(), second.steps[0].runs[0].to_string());
    let cmp = dir.path().join("compare.html");
    assert_eq!(s.sizeup(&["compare", &a, &b, "--html", cmp.to_str().unwrap()]).unwrap(), 0);
    let chtml = std::fs::read_to_string(&cmp).unwrap();
    assert!(chtml.contains("data-metric=\"tps (interval mean)\""));
    assert!(chtml.contains("significant") || chtml.contains("these runs differ"), "a verdict per sampled row");
    // One run a side: the spread between runs is unknown, and the comparison says so.
    assert!(chtml.contains("one run a side: the test sees the samples inside each run"), "the one-run warning");
    // With one run a side no difference is called significant between runs; one the
    // samples show says the spread between runs is unknown. (This read "significant
    // (p=0.0" before, which "not significant (p=0.06)" also contains: a flaky check.)
    assert!(!chtml.contains("significant between runs"), "one run a side says nothing between runs");
    assert!(!chtml.contains("these runs differ") || chtml.contains("run-to-run spread unknown"));
    assert!(chtml.contains("class=\"error-bar\""), "error bars on the comparison chart");
    // Every latency figure is tested against its interval samples.
    for m in ["avg ms", "p50 ms", "p90 ms", "p99 ms", "max ms"] {
        assert!(chtml.contains(&format!("data-metric=\"{m} (interval mean)\"")), "{m}");
    }
    assert!(!chtml.contains("no interval samples"));
    assert!(chtml.contains("data-chart=\"compare\""));
    let e = s.sizeup(&["compare", &a, "s1"]).unwrap_err().to_string();
    assert!(e.contains("two runs or two studies"), "{e}");

    // Read at 800 and 1,400 px: no horizontal scroll, no label over another or off its
    // chart, nothing logged. Every kind of chart is in these two reports: the run's
    // intervals with warm-up and steady-state bands, a sweep's peak and saturation marks,
    // the USL note and curve.
    for page in [&html_path, &html6_path] {
        for width in [800, 1400] {
            let l = layout(page, width);
            assert!(l["width"].as_f64().unwrap() <= width as f64, "{} at {width} px: {l}", page.display());
            assert_eq!(l["overlaps"].as_array().unwrap().len(), 0, "{} at {width} px: {l}", page.display());
            assert_eq!(l["outside"].as_array().unwrap().len(), 0, "{} at {width} px: {l}", page.display());
        }
    }

    // Headless Chromium: the page renders, logs no error, and the charts are not empty.
    let png = dir.path().join("shot.png");
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1000,1600",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html_path.display()))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(png.exists(), "no screenshot: {log}");
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE") || l.contains("Uncaught")).collect();
    assert!(console.is_empty(), "the page logged: {console:?}");
    let decoder = png::Decoder::new(std::fs::File::open(&png).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    // The charts' first series colour (#1f77b4) is drawn, and a fair share of the page
    // is not background.
    let blue = pixels.iter().filter(|p| p[0] == 0x1f && p[1] == 0x77 && p[2] == 0xb4).count();
    let inked = pixels.iter().filter(|p| p[0] < 200 || p[1] < 200 || p[2] < 200).count();
    assert!(blue > 500, "series colour pixels: {blue}");
    assert!(inked * 100 > pixels.len() * 3, "inked {inked} of {}", pixels.len());
}
