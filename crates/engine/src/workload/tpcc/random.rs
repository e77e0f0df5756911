//! TPC-C's random values (clause 2.1.6 and 4.3.2): NURand with its C constants, the
//! customer last names made of syllables, a-strings, n-strings, zip codes, and data
//! fields of which 10 % carry "ORIGINAL". Pure: the generator is passed in.

use crate::random::WorkerRng;
use rand::RngCore;

/// The run-time constants of NURand (clause 2.1.6): one per A value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Constants {
    /// For C_LAST (A = 255).
    pub c_last: u32,
    /// For C_ID (A = 1023).
    pub c_id: u32,
    /// For OL_I_ID (A = 8191).
    pub ol_i_id: u32,
}

impl Constants {
    /// Fresh constants for loading the database.
    pub fn for_load(rng: &mut WorkerRng) -> Self {
        Constants { c_last: uniform(rng, 0, 255), c_id: uniform(rng, 0, 1023), ol_i_id: uniform(rng, 0, 8191) }
    }

    /// Constants for a run against data loaded with C_LAST = `load_c_last` (clause
    /// 2.1.6.1): the run's C_LAST differs from the load's by 65..=119, but not 96 or 112.
    /// Unknown (tables another tool loaded): any valid constant.
    pub fn for_run(rng: &mut WorkerRng, load_c_last: Option<u32>) -> Self {
        let c_last = match load_c_last {
            Some(load) => loop {
                let c = uniform(rng, 0, 255);
                let delta = c.abs_diff(load);
                if (65..=119).contains(&delta) && delta != 96 && delta != 112 {
                    break c;
                }
            },
            None => uniform(rng, 0, 255),
        };
        Constants { c_last, c_id: uniform(rng, 0, 1023), ol_i_id: uniform(rng, 0, 8191) }
    }
}

/// A uniform integer in `x..=y`.
#[inline]
pub fn uniform(rng: &mut WorkerRng, x: u32, y: u32) -> u32 {
    x + (rng.next_u64() % (y - x + 1) as u64) as u32
}

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x (clause 2.1.6).
#[inline]
pub fn nurand(rng: &mut WorkerRng, a: u32, c: u32, x: u32, y: u32) -> u32 {
    (((uniform(rng, 0, a) | uniform(rng, x, y)) + c) % (y - x + 1)) + x
}

/// A customer id for a transaction: NURand(1023, 1, 3000).
pub fn customer_id(rng: &mut WorkerRng, k: &Constants) -> u32 {
    nurand(rng, 1023, k.c_id, 1, 3000)
}

/// An item id for an order line: NURand(8191, 1, 100000).
pub fn item_id(rng: &mut WorkerRng, k: &Constants) -> u32 {
    nurand(rng, 8191, k.ol_i_id, 1, 100_000)
}

/// A last name number for a transaction (or the load's last 2,000 customers):
/// NURand(255, 0, 999).
pub fn last_name_number(rng: &mut WorkerRng, k: &Constants) -> u32 {
    nurand(rng, 255, k.c_last, 0, 999)
}

const SYLLABLES: [&str; 10] = ["BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"];

/// C_LAST for a number 0..=999: the syllables of its three digits (clause 4.3.2.3).
pub fn last_name(n: u32, out: &mut Vec<u8>) {
    for digit in [n / 100, (n / 10) % 10, n % 10] {
        out.extend_from_slice(SYLLABLES[digit as usize].as_bytes());
    }
}

/// The number 0..=999 a C_LAST spells, if it is one.
pub fn last_name_value(name: &str) -> Option<u32> {
    let mut rest = name;
    let mut n = 0;
    for _ in 0..3 {
        let d = SYLLABLES.iter().position(|s| rest.starts_with(s))?;
        rest = &rest[SYLLABLES[d].len()..];
        n = n * 10 + d as u32;
    }
    rest.is_empty().then_some(n)
}

/// The C constant a load used for C_LAST (clause 2.1.6), estimated from the last-name
/// numbers of customers whose names were drawn by NURand(255, C, 0, 999) (c_id above
/// 1,000; the first thousand are sequential). The most likely of the 256 candidates:
/// each shifts the known shape of `uniform(0,255) | uniform(0,999)`. Needs a few
/// thousand names to be sure; `None` with fewer than 500.
pub fn estimate_load_c_last(numbers: &[u32]) -> Option<u32> {
    if numbers.len() < 500 {
        return None;
    }
    // P(v) for v = a | b, a uniform in 0..=255, b uniform in 0..=999 (v < 1024).
    let mut pv = [0f64; 1024];
    for a in 0..=255u32 {
        for b in 0..=999u32 {
            pv[(a | b) as usize] += 1.0 / (256.0 * 1000.0);
        }
    }
    let mut counts = [0u32; 1000];
    for &n in numbers.iter().filter(|&&n| n < 1000) {
        counts[n as usize] += 1;
    }
    (0..=255u32)
        .map(|c| {
            let mut q = [0f64; 1000];
            for (v, p) in pv.iter().enumerate() {
                q[(v + c as usize) % 1000] += p;
            }
            let ll: f64 =
                counts.iter().zip(q).filter(|(k, _)| **k > 0).map(|(&k, p)| k as f64 * p.max(1e-12).ln()).sum();
            (c, ll)
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(c, _)| c)
}

const ALNUM: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// An a-string of random length `min..=max` (clause 4.3.2.2): letters and digits only,
/// so it needs no escaping anywhere.
pub fn a_string(rng: &mut WorkerRng, min: u32, max: u32, out: &mut Vec<u8>) {
    let len = uniform(rng, min, max);
    let mut bits = rng.next_u64();
    for i in 0..len {
        if i % 10 == 9 {
            bits = rng.next_u64();
        }
        out.push(ALNUM[(bits % 62) as usize]);
        bits /= 62;
    }
}

/// An n-string (digits) of exactly `len` characters.
pub fn n_string(rng: &mut WorkerRng, len: u32, out: &mut Vec<u8>) {
    let mut bits = rng.next_u64();
    for i in 0..len {
        if i % 18 == 17 {
            bits = rng.next_u64();
        }
        out.push(b'0' + (bits % 10) as u8);
        bits /= 10;
    }
}

/// A zip code: 4 random digits then "11111" (clause 4.3.2.7).
pub fn zip(rng: &mut WorkerRng, out: &mut Vec<u8>) {
    n_string(rng, 4, out);
    out.extend_from_slice(b"11111");
}

/// I_DATA / S_DATA: an a-string of 26..=50 characters; for 10 % of rows "ORIGINAL"
/// replaces 8 characters at a random position (clause 4.3.3.1).
pub fn data_field(rng: &mut WorkerRng, out: &mut Vec<u8>) {
    let start = out.len();
    a_string(rng, 26, 50, out);
    if uniform(rng, 1, 10) == 1 {
        let len = out.len() - start;
        let at = start + uniform(rng, 0, (len - 8) as u32) as usize;
        out[at..at + 8].copy_from_slice(b"ORIGINAL");
    }
}

/// A state: two random letters.
pub fn state(rng: &mut WorkerRng, out: &mut Vec<u8>) {
    for _ in 0..2 {
        out.push(b'A' + (rng.next_u64() % 26) as u8);
    }
}

/// A fixed-point number with `scale` decimals, drawn uniformly from `min..=max` in
/// units of the last decimal (e.g. a price 1.00..100.00 is `fixed(rng, 100, 10000, 2)`).
pub fn fixed(rng: &mut WorkerRng, min: u32, max: u32, scale: u32, out: &mut Vec<u8>) {
    write_fixed(uniform(rng, min, max) as u64, scale, out);
}

/// Writes `units` / 10^scale with exactly `scale` decimals.
pub fn write_fixed(units: u64, scale: u32, out: &mut Vec<u8>) {
    let p = 10u64.pow(scale);
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b.format(units / p).as_bytes());
    if scale > 0 {
        out.push(b'.');
        let frac = units % p;
        let s = b.format(frac);
        out.extend(std::iter::repeat_n(b'0', scale as usize - s.len()));
        out.extend_from_slice(s.as_bytes());
    }
}

/// A random permutation of 1..=n (O_C_ID of the initial orders, clause 4.3.3.1).
pub fn permutation(rng: &mut WorkerRng, n: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (1..=n).collect();
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::rng_from_seed;

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut rng = rng_from_seed(1);
        let k = Constants::for_load(&mut rng);
        let mut hits = vec![0u32; 3001];
        for _ in 0..300_000 {
            let c = customer_id(&mut rng, &k);
            assert!((1..=3000).contains(&c));
            hits[c as usize] += 1;
        }
        // Non-uniform: the hottest id is drawn far more often than the 100 a uniform
        // draw would give it; ids with few bits set are rare (the OR of two draws).
        let max = *hits.iter().max().unwrap();
        assert!(max > 300, "hottest customer drawn {max} times");
        assert!(hits[1..].iter().filter(|&&h| h > 0).count() > 2000);
        for _ in 0..10_000 {
            assert!((1..=100_000).contains(&item_id(&mut rng, &k)));
            assert!(last_name_number(&mut rng, &k) <= 999);
        }
    }

    #[test]
    fn run_constant_keeps_the_spec_distance_from_the_load_constant() {
        let mut rng = rng_from_seed(2);
        for load in [0, 100, 200, 255] {
            for _ in 0..200 {
                let delta = Constants::for_run(&mut rng, Some(load)).c_last.abs_diff(load);
                assert!((65..=119).contains(&delta) && delta != 96 && delta != 112, "delta {delta}");
            }
        }
    }

    #[test]
    fn the_load_c_last_is_recovered_from_the_names() {
        for c in [0, 7, 123, 200, 255] {
            let mut rng = rng_from_seed(c as u64 + 1);
            let k = Constants { c_last: c, c_id: 0, ol_i_id: 0 };
            // One warehouse's customers above c_id 1,000: 10 districts x 2,000.
            let names: Vec<u32> = (0..20_000).map(|_| last_name_number(&mut rng, &k)).collect();
            assert_eq!(estimate_load_c_last(&names), Some(c));
        }
        assert_eq!(estimate_load_c_last(&[1, 2, 3]), None, "too few names");
        let mut v = Vec::new();
        last_name(371, &mut v);
        assert_eq!(last_name_value(std::str::from_utf8(&v).unwrap()), Some(371));
        assert_eq!(last_name_value("BARBARBARX"), None);
    }

    #[test]
    fn last_names_are_the_spec_syllables() {
        let name = |n| {
            let mut v = Vec::new();
            last_name(n, &mut v);
            String::from_utf8(v).unwrap()
        };
        assert_eq!(name(0), "BARBARBAR");
        assert_eq!(name(371), "PRICALLYOUGHT"); // the spec's own example
        assert_eq!(name(999), "EINGEINGEING");
        assert_eq!(name(40), "BARPRESBAR");
    }

    #[test]
    fn strings_have_their_lengths_and_alphabets() {
        let mut rng = rng_from_seed(3);
        let mut original = 0;
        for _ in 0..10_000 {
            let mut v = Vec::new();
            a_string(&mut rng, 8, 16, &mut v);
            assert!((8..=16).contains(&v.len()) && v.iter().all(u8::is_ascii_alphanumeric));
            let mut d = Vec::new();
            data_field(&mut rng, &mut d);
            assert!((26..=50).contains(&d.len()));
            original += d.windows(8).any(|w| w == b"ORIGINAL") as u32;
            let mut z = Vec::new();
            zip(&mut rng, &mut z);
            assert!(z.len() == 9 && z.ends_with(b"11111") && z.iter().all(u8::is_ascii_digit));
        }
        assert!((850..1150).contains(&original), "{original} of 10,000 ORIGINAL");
    }

    #[test]
    fn fixed_point_numbers_are_written_exactly() {
        let s = |units, scale| {
            let mut v = Vec::new();
            write_fixed(units, scale, &mut v);
            String::from_utf8(v).unwrap()
        };
        assert_eq!(s(100, 2), "1.00");
        assert_eq!(s(999_999, 2), "9999.99");
        assert_eq!(s(5, 4), "0.0005");
        assert_eq!(s(2000, 4), "0.2000");
        assert_eq!(s(7, 0), "7");
    }

    #[test]
    fn permutation_is_a_permutation() {
        let mut p = permutation(&mut rng_from_seed(4), 3000);
        assert_ne!(p[..10], (1..=10).collect::<Vec<_>>()[..]);
        p.sort();
        assert_eq!(p, (1..=3000).collect::<Vec<_>>());
    }
}
