//! Load levels of a sweep: `1,2,4,8` (a list), `32..256+32` (start, maximum, step) or
//! `1..128x2` (start, maximum, factor).

use crate::error::Invalid;
use serde::{Deserialize, Serialize};

/// Levels as a TOML array or as text (`1,2,4`, `32..256+32`, `1..128x2`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Levels {
    List(Vec<u32>),
    Text(String),
}

impl Levels {
    pub fn resolve(&self) -> Result<Vec<u32>, Invalid> {
        match self {
            // A list is checked as the same list written out (a level twice, too many).
            Levels::List(v) if !v.is_empty() && !v.contains(&0) => {
                parse(&v.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
            }
            Levels::List(_) => Err(Invalid::Value("levels must be a non-empty list of numbers, 1 or more".into())),
            Levels::Text(s) => parse(s),
        }
    }
}

/// The most levels one study runs.
const MOST: usize = 1000;

fn too_many(s: &str, count: u64) -> Invalid {
    let shown: String = s.chars().take(40).collect();
    let more = if shown.len() < s.len() { "..." } else { "" };
    Invalid::Value(format!("'{shown}{more}' names {count} levels; at most {MOST}: use a larger step or factor"))
}

/// The levels a `--threads`/`--users`/`--instances` value names, ascending as given.
pub fn parse(s: &str) -> Result<Vec<u32>, Invalid> {
    let s = s.trim();
    let bad = || {
        Invalid::Value(format!(
            "'{s}' is not a list of levels: write 1,2,4,8 or 32..256+32 (step) or 1..128x2 (factor)"
        ))
    };
    let levels: Vec<u32> = if let Some((from, rest)) = s.split_once("..") {
        let from: u32 = from.trim().parse().map_err(|_| bad())?;
        let (max, op, by) = if let Some((m, b)) = rest.split_once('+') {
            (m, '+', b)
        } else if let Some((m, b)) = rest.split_once(['x', '*']) {
            (m, 'x', b)
        } else {
            (rest, '+', "1")
        };
        let max: u32 = max.trim().parse().map_err(|_| bad())?;
        let by: u32 = by.trim().parse().map_err(|_| bad())?;
        if from == 0 || max < from || (op == '+' && by == 0) || (op == 'x' && by < 2) {
            return Err(Invalid::Value(format!(
                "'{s}': the range must start at 1 or more, end at or above its start, and grow"
            )));
        }
        // Counted before it is written out: `1..4000000000` is refused, not allocated
        // (level_ranges_counted_before_expanded).
        let count = match op {
            '+' => u64::from((max - from) / by) + 1,
            _ => std::iter::successors(Some(u64::from(from)), |l| Some(l * u64::from(by)))
                .take_while(|l| *l <= u64::from(max))
                .count() as u64,
        };
        if count > MOST as u64 {
            return Err(too_many(s, count));
        }
        let mut v = vec![from];
        loop {
            let last = *v.last().expect("not empty");
            let next = if op == '+' { last.checked_add(by) } else { last.checked_mul(by) };
            match next {
                Some(n) if n <= max => v.push(n),
                _ => break,
            }
        }
        v
    } else {
        let count = s.split(',').count();
        if count > MOST {
            return Err(too_many(s, count as u64));
        }
        s.split(',').map(|p| p.trim().parse::<u32>().map_err(|_| bad())).collect::<Result<_, _>>()?
    };
    if levels.is_empty() || levels.contains(&0) {
        return Err(Invalid::Value(format!("'{s}': levels must be 1 or more")));
    }
    // Steps are stored and shown by level: a level twice would run twice and show one
    // figure for both (steps_sharing_a_level_collide).
    let mut seen = std::collections::HashSet::with_capacity(levels.len());
    if let Some(twice) = levels.iter().find(|l| !seen.insert(**l)) {
        return Err(Invalid::Twice(format!("'{s}' names level {twice} twice: give each level once")));
    }
    Ok(levels)
}

#[cfg(test)]
mod tests {
    use super::{parse, Invalid};

    /// steps_sharing_a_level_collide: `levels = [2, 1, 2]` ran three steps and showed the
    /// first level 2's figure twice, as the peak.
    #[test]
    fn steps_sharing_a_level_collide() {
        assert!(matches!(parse("2,1,2"), Err(Invalid::Twice(m)) if m.contains("names level 2 twice")));
        assert_eq!(parse("2,1").unwrap(), [2, 1]);
    }

    #[test]
    fn lists_steps_and_factors() {
        assert_eq!(parse("1,2,4,8").unwrap(), [1, 2, 4, 8]);
        assert_eq!(parse(" 16 ").unwrap(), [16]);
        assert_eq!(parse("32..128+32").unwrap(), [32, 64, 96, 128]);
        assert_eq!(parse("32..150+32").unwrap(), [32, 64, 96, 128]);
        assert_eq!(parse("1..128x2").unwrap(), [1, 2, 4, 8, 16, 32, 64, 128]);
        assert_eq!(parse("1..3").unwrap(), [1, 2, 3]);
    }

    #[test]
    fn bad_levels_say_how_to_write_them() {
        assert!(matches!(parse("1,two"), Err(Invalid::Value(m)) if m.contains("32..256+32")));
        assert!(matches!(parse("0,1"), Err(Invalid::Value(m)) if m.contains("1 or more")));
        assert!(matches!(parse("8..4+1"), Err(Invalid::Value(m)) if m.contains("grow")));
        assert!(matches!(parse("1..8x1"), Err(Invalid::Value(m)) if m.contains("grow")));
        assert!(matches!(parse("1..100000+1"), Err(Invalid::Value(m)) if m.contains("at most")));
    }

    /// level_ranges_counted_before_expanded: `--threads 1..3000000` ran for 20 s and more
    /// (a quadratic duplicate check) and `--rates 1..4000000000` tried to allocate 16 GiB.
    #[test]
    fn level_ranges_counted_before_expanded() {
        let e = parse("1..4000000000").unwrap_err();
        assert!(matches!(&e, Invalid::Value(m) if m.contains("names 4000000000 levels; at most 1000")), "{e}");
        assert!(matches!(parse("1..3000000"), Err(Invalid::Value(m)) if m.contains("names 3000000 levels")));
        assert!(matches!(parse("100..100000000+1"), Err(Invalid::Value(m)) if m.contains("names 99999901 levels")));
        assert_eq!(parse("1..4000000000x2").unwrap().len(), 32);
        let list = (1..=1001).map(|l| l.to_string()).collect::<Vec<_>>().join(",");
        assert!(matches!(parse(&list), Err(Invalid::Value(m)) if m.contains("names 1001 levels")));
        let list = (1..=1000).map(|l| l.to_string()).collect::<Vec<_>>().join(",");
        assert_eq!(parse(&list).unwrap().len(), 1000);
    }
}
