//! Load levels of a sweep: `1,2,4,8` (a list), `32..256+32` (start, maximum, step) or
//! `1..128x2` (start, maximum, factor).

/// The levels a `--threads`/`--users`/`--instances` value names, ascending as given.
pub fn parse(s: &str) -> Result<Vec<u32>, String> {
    let s = s.trim();
    let bad = || format!("'{s}' is not a list of levels: write 1,2,4,8 or 32..256+32 (step) or 1..128x2 (factor)");
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
            return Err(format!("'{s}': the range must start at 1 or more, end at or above its start, and grow"));
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
        s.split(',').map(|p| p.trim().parse::<u32>().map_err(|_| bad())).collect::<Result<_, _>>()?
    };
    if levels.is_empty() || levels.contains(&0) {
        return Err(format!("'{s}': levels must be 1 or more"));
    }
    // Steps are stored and shown by level: a level twice would run twice and show one
    // figure for both (steps_sharing_a_level_collide).
    if let Some(twice) = levels.iter().enumerate().find(|(i, l)| levels[..*i].contains(l)).map(|(_, l)| l) {
        return Err(format!("'{s}' names level {twice} twice: give each level once"));
    }
    if levels.len() > 1000 {
        return Err(format!("'{s}' names {} levels; at most 1000", levels.len()));
    }
    Ok(levels)
}

#[cfg(test)]
mod tests {
    use super::parse;

    /// steps_sharing_a_level_collide: `levels = [2, 1, 2]` ran three steps and showed the
    /// first level 2's figure twice, as the peak.
    #[test]
    fn steps_sharing_a_level_collide() {
        assert!(parse("2,1,2").unwrap_err().contains("names level 2 twice"));
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
        assert!(parse("1,two").unwrap_err().contains("32..256+32"));
        assert!(parse("0,1").unwrap_err().contains("1 or more"));
        assert!(parse("8..4+1").unwrap_err().contains("grow"));
        assert!(parse("1..8x1").unwrap_err().contains("grow"));
        assert!(parse("1..100000+1").unwrap_err().contains("at most"));
    }
}
