//! What a study's measurements mean: levels, the steady state, stop conditions, a
//! step's figures, saturation and bottleneck verdicts, the capacity search and the
//! memory study's verdicts. The study file, and running a study, are the binary's.

pub mod bottleneck;
pub mod capacity;
pub mod figures;
pub mod levels;
pub mod memory;
pub mod saturation;
pub mod section;
pub mod steady;
pub mod stop;

/// "0.2ms", "1 ms", "0.001s" in milliseconds.
pub fn parse_ms(v: &str) -> Result<f64, crate::error::Invalid> {
    let bad = || crate::error::Invalid::Time { given: v.to_string() };
    let t = v.trim();
    // Microseconds too: a point select's objective is in them (time_units_include_microseconds).
    let micro = t.strip_suffix("us").or_else(|| t.strip_suffix("µs"));
    let (num, scale) = match (micro, t.strip_suffix("ms"), t.strip_suffix('s')) {
        (Some(n), _, _) => (n, 0.001),
        (None, Some(n), _) => (n, 1.0),
        (None, None, Some(n)) => (n, 1000.0),
        _ => return Err(bad()),
    };
    num.trim().parse::<f64>().ok().filter(|x| *x >= 0.0 && x.is_finite()).map(|x| x * scale).ok_or_else(bad)
}
