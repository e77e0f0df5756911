//! Charts as inline SVG: no script, no fetch, so a report opens offline in any browser
//! and its numbers can be read back from the markup (each series and point carries
//! `data-` attributes, which the tests parse). Pure string building.

use std::fmt::Write;

const W: f64 = 720.0;
const H: f64 = 340.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 70.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 70.0;
/// Height of one line of band or mark labels.
const LABEL_LINE: f64 = 13.0;
pub const COLOURS: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Round tick steps (1, 2, 5 x 10^k) covering 0..max with about 5 ticks.
pub fn ticks(max: f64) -> Vec<f64> {
    if max.is_nan() || max <= 0.0 || !max.is_finite() {
        return vec![0.0, 1.0];
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    let n = (max / step).ceil() as usize;
    (0..=n).map(|i| i as f64 * step).collect()
}

fn fmt_tick(v: f64) -> String {
    if v.abs() >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
}

pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub side: Side,
    pub dashed: bool,
}

/// A vertical mark at an x value (peak, saturation) with its label.
pub struct Mark {
    pub x: f64,
    pub label: String,
}

/// A shaded x range (warm-up, steady-state window).
pub struct Band {
    pub from: f64,
    pub to: f64,
    pub label: String,
    pub colour: &'static str,
}

pub struct LineChart<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub x_label: &'a str,
    pub left_label: &'a str,
    pub right_label: &'a str,
    /// Levels on a log2 axis (threads 1..128), else linear.
    pub log_x: bool,
    pub lines: Vec<Line>,
    pub marks: Vec<Mark>,
    pub bands: Vec<Band>,
    /// Explicit x tick labels (e.g. percentiles); else derived.
    pub x_ticks: Option<Vec<(f64, String)>>,
}

impl LineChart<'_> {
    pub fn render(&self) -> String {
        let xs: Vec<f64> = self.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).collect();
        let (x0, x1) =
            (xs.iter().copied().fold(f64::INFINITY, f64::min), xs.iter().copied().fold(f64::NEG_INFINITY, f64::max));
        let (x0, x1) = if xs.is_empty() { (0.0, 1.0) } else { (x0, x1) };
        let tx = |v: f64| -> f64 {
            let (a, b, v) =
                if self.log_x { (x0.max(1e-9).log2(), x1.max(1e-9).log2(), v.max(1e-9).log2()) } else { (x0, x1, v) };
            let span = if b > a { b - a } else { 1.0 };
            LEFT + (v - a) / span * (W - LEFT - RIGHT)
        };
        let ymax = |side: Side| {
            self.lines.iter().filter(|l| l.side == side).flat_map(|l| l.points.iter().map(|p| p.1)).fold(0.0, f64::max)
        };
        let (lt, rt) = (ticks(ymax(Side::Left)), ticks(ymax(Side::Right)));
        let ty = |v: f64, t: &[f64]| TOP + (1.0 - v / t.last().copied().unwrap_or(1.0).max(1e-12)) * (H - TOP - BOTTOM);
        let mut s = svg_open(self.id, self.title);
        // Labels of bands, then of marks, each on a line of its own: a short warm-up's
        // band is narrower than its label.
        for (i, b) in self.bands.iter().enumerate() {
            let (a, z) = (tx(b.from.max(x0)), tx(b.to.min(x1)));
            let _ = write!(
                s,
                r#"<rect class="band" data-band="{}" x="{a:.1}" y="{TOP}" width="{:.1}" height="{:.1}" fill="{}" opacity="0.18"/><text x="{:.1}" y="{:.1}" font-size="11" fill="dimgray">{}</text>"#,
                esc(&b.label),
                (z - a).max(0.0),
                H - TOP - BOTTOM,
                b.colour,
                a + 3.0,
                TOP + 12.0 + LABEL_LINE * i as f64,
                esc(&b.label)
            );
        }
        axes(&mut s, &lt, |v| ty(v, &lt), Side::Left, self.left_label);
        if self.lines.iter().any(|l| l.side == Side::Right) {
            axes(&mut s, &rt, |v| ty(v, &rt), Side::Right, self.right_label);
        }
        let xt: Vec<(f64, String)> = match &self.x_ticks {
            Some(t) => t.clone(),
            None => {
                let mut v: Vec<f64> = xs.clone();
                v.sort_by(|a, b| a.total_cmp(b));
                v.dedup();
                if v.len() > 12 || !self.log_x {
                    // ticks() rounds up past the data; the axis ends at the data.
                    ticks(x1)
                        .into_iter()
                        .filter(|t| *t >= x0 && *t <= x1 * (1.0 + 1e-9))
                        .map(|t| (t, fmt_tick(t)))
                        .collect()
                } else {
                    v.into_iter().map(|t| (t, fmt_tick(t))).collect()
                }
            }
        };
        for (v, label) in &xt {
            let x = tx(*v);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#999"/><text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"##,
                H - BOTTOM,
                H - BOTTOM + 5.0,
                H - BOTTOM + 18.0,
                esc(label)
            );
        }
        let x_label = match (self.log_x, &self.x_ticks) {
            (true, None) => format!("{} (log scale)", self.x_label),
            _ => self.x_label.to_string(),
        };
        let _ = write!(
            s,
            r#"<text class="x-label" x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text>"#,
            LEFT + (W - LEFT - RIGHT) / 2.0,
            H - BOTTOM + 36.0,
            esc(&x_label)
        );
        for (i, l) in self.lines.iter().enumerate() {
            let t = if l.side == Side::Left { &lt } else { &rt };
            let colour = COLOURS[i % COLOURS.len()];
            let d: Vec<String> = l
                .points
                .iter()
                .enumerate()
                .map(|(k, p)| format!("{}{:.1},{:.1}", if k == 0 { "M" } else { "L" }, tx(p.0), ty(p.1, t)))
                .collect();
            let _ = write!(
                s,
                r#"<g class="series" data-series="{}" data-axis="{}"><path d="{}" fill="none" stroke="{colour}" stroke-width="2"{}/>"#,
                esc(&l.name),
                if l.side == Side::Left { "left" } else { "right" },
                d.join(" "),
                if l.dashed { r#" stroke-dasharray="6 4""# } else { "" }
            );
            for p in &l.points {
                let _ = write!(
                    s,
                    r#"<circle data-x="{}" data-y="{}" cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"><title>{}: {} at {}</title></circle>"#,
                    p.0,
                    p.1,
                    tx(p.0),
                    ty(p.1, t),
                    esc(&l.name),
                    fmt_tick((p.1 * 100.0).round() / 100.0),
                    fmt_tick(p.0)
                );
            }
            s.push_str("</g>");
        }
        for (i, m) in self.marks.iter().enumerate() {
            let x = tx(m.x);
            // Right of the line in the plot's left half, left of it in the right half,
            // so the label stays inside the plot and off the right axis.
            let (lx, anchor) = if x < (LEFT + W - RIGHT) / 2.0 { (x + 4.0, "start") } else { (x - 4.0, "end") };
            let _ = write!(
                s,
                r##"<g class="mark" data-mark="{}" data-x="{}"><line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#444" stroke-dasharray="3 3"/><text x="{lx:.1}" y="{:.1}" font-size="11" fill="#222" text-anchor="{anchor}">{}</text></g>"##,
                esc(&m.label),
                m.x,
                H - BOTTOM,
                TOP + 14.0 + LABEL_LINE * (self.bands.len() + i) as f64,
                esc(&m.label)
            );
        }
        legend(&mut s, self.lines.iter().map(|l| (l.name.as_str(), l.dashed)).collect());
        s.push_str("</svg></figure>\n");
        s
    }
}

fn svg_open(id: &str, title: &str) -> String {
    format!(
        r#"<figure class="chart" data-chart="{}"><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img"><title>{}</title><text x="{:.1}" y="22" font-size="14" font-weight="bold" text-anchor="middle">{}</text>"#,
        esc(id),
        esc(title),
        W / 2.0,
        esc(title)
    )
}

fn axes(s: &mut String, t: &[f64], ty: impl Fn(f64) -> f64, side: Side, label: &str) {
    let x = if side == Side::Left { LEFT } else { W - RIGHT };
    let _ = write!(s, r##"<line x1="{x}" y1="{TOP}" x2="{x}" y2="{:.1}" stroke="#333"/>"##, H - BOTTOM);
    if side == Side::Left {
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#333"/>"##,
            H - BOTTOM,
            W - RIGHT,
            H - BOTTOM
        );
    }
    for v in t {
        let y = ty(*v);
        let (tx, anchor) = if side == Side::Left { (x - 6.0, "end") } else { (x + 6.0, "start") };
        let _ = write!(
            s,
            r##"<text x="{tx:.1}" y="{:.1}" font-size="11" text-anchor="{anchor}">{}</text>"##,
            y + 4.0,
            fmt_tick(*v)
        );
        if side == Side::Left {
            let _ = write!(s, r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#eee"/>"##, W - RIGHT);
        }
    }
    let (lx, rot) = if side == Side::Left { (18.0, -90) } else { (W - 14.0, 90) };
    let my = TOP + (H - TOP - BOTTOM) / 2.0;
    let _ = write!(
        s,
        r#"<text class="y-label" x="{lx}" y="{my:.1}" font-size="12" text-anchor="middle" transform="rotate({rot} {lx} {my:.1})">{}</text>"#,
        esc(label)
    );
}

fn legend(s: &mut String, items: Vec<(&str, bool)>) {
    s.push_str(r#"<g class="legend">"#);
    let mut x = LEFT;
    for (i, (name, dashed)) in items.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        let y = H - 14.0;
        let _ = write!(
            s,
            r#"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{c}" stroke-width="3"{}/><text x="{:.1}" y="{:.1}" font-size="11">{}</text>"#,
            x + 18.0,
            if *dashed { r#" stroke-dasharray="6 4""# } else { "" },
            x + 22.0,
            y + 4.0,
            esc(name)
        );
        x += 40.0 + 7.0 * name.len() as f64;
    }
    s.push_str("</g>");
}

/// One bar's range (low, high), or none.
pub type ErrorBar = Option<(f64, f64)>;

/// Bars: one group per category, one bar per series (stacked when `stacked`), and an
/// optional line on the right axis over them.
pub struct BarChart<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub y_label: &'a str,
    pub categories: Vec<String>,
    pub series: Vec<(String, Vec<f64>)>,
    pub stacked: bool,
    pub colours: Option<Vec<&'static str>>,
    pub line: Option<(String, Vec<f64>, &'a str)>,
    pub y_max: Option<f64>,
    /// Per series, per category: the range to draw as an error bar (unstacked bars).
    pub errors: Option<Vec<Vec<ErrorBar>>>,
}

impl BarChart<'_> {
    pub fn render(&self) -> String {
        let n = self.categories.len().max(1) as f64;
        let slot = (W - LEFT - RIGHT) / n;
        let top = self.y_max.unwrap_or_else(|| {
            if self.stacked {
                (0..self.categories.len()).map(|i| self.series.iter().map(|s| s.1[i]).sum::<f64>()).fold(0.0, f64::max)
            } else {
                let bars = self.series.iter().flat_map(|s| s.1.iter().copied());
                let tops = self.errors.iter().flatten().flatten().flatten().map(|e| e.1);
                bars.chain(tops).fold(0.0, f64::max)
            }
        });
        let t = ticks(top);
        let tmax = t.last().copied().unwrap_or(1.0).max(1e-12);
        let ty = |v: f64| TOP + (1.0 - v / tmax) * (H - TOP - BOTTOM);
        let mut s = svg_open(self.id, self.title);
        axes(&mut s, &t, ty, Side::Left, self.y_label);
        let colour =
            |i: usize| self.colours.as_ref().and_then(|c| c.get(i).copied()).unwrap_or(COLOURS[i % COLOURS.len()]);
        let per = if self.stacked { 1.0 } else { self.series.len().max(1) as f64 };
        let bar_w = slot * 0.7 / per;
        for (si, (name, values)) in self.series.iter().enumerate() {
            let _ = write!(s, r#"<g class="series" data-series="{}">"#, esc(name));
            for (ci, v) in values.iter().enumerate() {
                let base: f64 = if self.stacked { self.series[..si].iter().map(|s| s.1[ci]).sum() } else { 0.0 };
                let x = LEFT + slot * ci as f64 + slot * 0.15 + if self.stacked { 0.0 } else { bar_w * si as f64 };
                let (y_top, y_bot) = (ty(base + v), ty(base));
                let _ = write!(
                    s,
                    r#"<rect data-category="{}" data-value="{v}" x="{x:.1}" y="{y_top:.1}" width="{bar_w:.1}" height="{:.1}" fill="{}"><title>{}: {} {}</title></rect>"#,
                    esc(&self.categories[ci]),
                    (y_bot - y_top).max(0.0),
                    colour(si),
                    esc(name),
                    esc(&self.categories[ci]),
                    fmt_tick((v * 100.0).round() / 100.0)
                );
                let error = self.errors.as_ref().and_then(|e| *e.get(si)?.get(ci)?);
                if let (Some((lo, hi)), false) = (error, self.stacked) {
                    let cx = x + bar_w / 2.0;
                    let (y0, y1) = (ty(lo.max(0.0)), ty(hi));
                    let _ = write!(
                        s,
                        r##"<path class="error-bar" data-low="{lo}" data-high="{hi}" d="M{cx:.1},{y0:.1}V{y1:.1}M{:.1},{y0:.1}H{:.1}M{:.1},{y1:.1}H{:.1}" stroke="#333" stroke-width="1.2" fill="none"/>"##,
                        cx - 4.0,
                        cx + 4.0,
                        cx - 4.0,
                        cx + 4.0
                    );
                }
            }
            s.push_str("</g>");
        }
        for (ci, c) in self.categories.iter().enumerate() {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"#,
                LEFT + slot * (ci as f64 + 0.5),
                H - BOTTOM + 18.0,
                esc(c)
            );
        }
        let mut names: Vec<(&str, bool)> = self.series.iter().map(|s| (s.0.as_str(), false)).collect();
        if let Some((name, values, label)) = &self.line {
            let lt = ticks(values.iter().copied().fold(0.0, f64::max));
            let lmax = lt.last().copied().unwrap_or(1.0).max(1e-12);
            let ly = |v: f64| TOP + (1.0 - v / lmax) * (H - TOP - BOTTOM);
            axes(&mut s, &lt, ly, Side::Right, label);
            let c = COLOURS[self.series.len() % COLOURS.len()];
            let pts: Vec<String> = values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    format!("{}{:.1},{:.1}", if i == 0 { "M" } else { "L" }, LEFT + slot * (i as f64 + 0.5), ly(*v))
                })
                .collect();
            let _ = write!(
                s,
                r#"<g class="series" data-series="{}" data-axis="right"><path d="{}" fill="none" stroke="{c}" stroke-width="2" stroke-dasharray="6 4"/>"#,
                esc(name),
                pts.join(" ")
            );
            for (i, v) in values.iter().enumerate() {
                let _ = write!(
                    s,
                    r#"<circle data-x="{}" data-y="{v}" cx="{:.1}" cy="{:.1}" r="3" fill="{c}"/>"#,
                    esc(&self.categories[i]),
                    LEFT + slot * (i as f64 + 0.5),
                    ly(*v)
                );
            }
            s.push_str("</g>");
            names.push((name.as_str(), true));
        }
        // Legend colours follow the bars' colours.
        s.push_str(r#"<g class="legend">"#);
        let mut x = LEFT;
        for (i, (name, dashed)) in names.iter().enumerate() {
            let c = if *dashed { COLOURS[self.series.len() % COLOURS.len()] } else { colour(i) };
            let y = H - 14.0;
            let _ = write!(
                s,
                r#"<rect x="{x:.1}" y="{:.1}" width="14" height="10" fill="{c}"/><text x="{:.1}" y="{:.1}" font-size="11">{}</text>"#,
                y - 5.0,
                x + 18.0,
                y + 4.0,
                esc(name)
            );
            x += 40.0 + 7.0 * name.len() as f64;
        }
        s.push_str("</g></svg></figure>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        assert_eq!(ticks(9.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(2971.0), vec![0.0, 1000.0, 2000.0, 3000.0]);
        assert_eq!(ticks(0.0), vec![0.0, 1.0]);
    }

    #[test]
    fn a_line_chart_carries_its_data() {
        let svg = LineChart {
            id: "c",
            title: "T <&>",
            x_label: "threads",
            left_label: "tps",
            right_label: "ms",
            log_x: true,
            lines: vec![
                Line { name: "tps".into(), points: vec![(1.0, 10.0), (2.0, 20.0)], side: Side::Left, dashed: false },
                Line { name: "p95".into(), points: vec![(1.0, 1.5), (2.0, 2.5)], side: Side::Right, dashed: true },
            ],
            marks: vec![Mark { x: 2.0, label: "peak".into() }],
            bands: vec![],
            x_ticks: None,
        }
        .render();
        assert!(svg.contains("T &lt;&amp;&gt;"));
        assert!(svg.contains(r#"data-series="tps" data-axis="left""#));
        assert!(svg.contains(r#"data-series="p95" data-axis="right""#));
        assert!(svg.contains(r#"data-x="2" data-y="20""#));
        assert!(svg.contains(r#"data-mark="peak" data-x="2""#));
        assert_eq!(svg.matches("<circle").count(), 4);
    }
}
