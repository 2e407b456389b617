//! Statistics over timing samples: pure functions, tested against hand-computed values.

use serde::{Deserialize, Serialize};

/// Summary of one phase's samples, in nanoseconds (means and spreads are not rounded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub mean_ns: f64,
    pub median_ns: f64,
    pub p95_ns: f64,
    pub p99_ns: f64,
    pub stdev_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub iterations: usize,
}

pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample standard deviation (n - 1 in the denominator); 0 for fewer than two samples.
pub fn stdev(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
}

/// Percentile `p` in [0, 100] of sorted data, interpolating linearly between the two nearest ranks
/// (Hyndman & Fan definition 7, the default of numpy and R). `p = 50` is the median.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let rank = (p.clamp(0.0, 100.0) / 100.0) * (n - 1) as f64;
            let lo = rank.floor() as usize;
            let hi = rank.ceil() as usize;
            sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
        }
    }
}

pub fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

pub fn median(xs: &[f64]) -> f64 {
    percentile_sorted(&sorted(xs), 50.0)
}

/// The full summary; `None` for no samples.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    if xs.is_empty() {
        return None;
    }
    let s = sorted(xs);
    Some(Summary {
        mean_ns: mean(xs),
        median_ns: percentile_sorted(&s, 50.0),
        p95_ns: percentile_sorted(&s, 95.0),
        p99_ns: percentile_sorted(&s, 99.0),
        stdev_ns: stdev(xs),
        min_ns: s[0],
        max_ns: s[s.len() - 1],
        iterations: xs.len(),
    })
}

/// Operations per second for a mean time in nanoseconds.
pub fn ops_per_sec(mean_ns: f64) -> f64 {
    if mean_ns > 0.0 {
        1e9 / mean_ns
    } else {
        0.0
    }
}

/// Relative difference in percent: within `tol_pct` of each other?
pub fn agrees(a: f64, b: f64, tol_pct: f64) -> bool {
    let scale = a.abs().max(b.abs());
    scale == 0.0 || (a - b).abs() / scale * 100.0 <= tol_pct
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny deterministic generator, so resampled figures are
/// reproducible from the raw samples by anyone with the seed.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform index in 0..n (n > 0), by Lemire's multiply-shift (bias below 2^-32 for our n).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() >> 32) * n as u64 >> 32) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn hand_computed_summary() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 40/8 = 5; squared deviations 9+1+1+1+0+0+4+16 = 32,
        // sample variance 32/7, stdev 2.138089935...; median (4+5)/2 = 4.5.
        let s = summarize(&[9.0, 2.0, 4.0, 5.0, 4.0, 7.0, 4.0, 5.0]).unwrap();
        assert!(close(s.mean_ns, 5.0));
        assert!(close(s.stdev_ns, (32.0f64 / 7.0).sqrt()));
        assert!(close(s.median_ns, 4.5));
        assert_eq!((s.min_ns, s.max_ns, s.iterations), (2.0, 9.0, 8));
        // p95: rank 0.95 * 7 = 6.65 -> 7 + 0.65 * (9 - 7) = 8.3; p99: rank 6.93 -> 8.86.
        assert!(close(s.p95_ns, 8.3));
        assert!(close(s.p99_ns, 8.86));
    }

    #[test]
    fn percentiles_of_one_to_hundred_and_one() {
        let xs: Vec<f64> = (1..=101).map(f64::from).collect();
        assert!(close(percentile_sorted(&xs, 50.0), 51.0));
        assert!(close(percentile_sorted(&xs, 95.0), 96.0));
        assert!(close(percentile_sorted(&xs, 99.0), 100.0));
        assert!(close(percentile_sorted(&xs, 0.0), 1.0));
        assert!(close(percentile_sorted(&xs, 100.0), 101.0));
    }

    #[test]
    fn degenerate_inputs() {
        assert!(summarize(&[]).is_none());
        let one = summarize(&[7.0]).unwrap();
        assert_eq!((one.mean_ns, one.median_ns, one.p99_ns, one.stdev_ns), (7.0, 7.0, 7.0, 0.0));
        let flat = summarize(&[3.0; 10]).unwrap();
        assert_eq!((flat.stdev_ns, flat.p95_ns), (0.0, 3.0));
        assert!(mean(&[]).is_nan());
        assert_eq!(ops_per_sec(0.0), 0.0);
        assert!(close(ops_per_sec(250_000.0), 4000.0));
    }

    #[test]
    fn agreement_tolerance() {
        assert!(agrees(100.0, 100.001, 0.002));
        assert!(!agrees(100.0, 100.01, 0.002));
        assert!(agrees(0.0, 0.0, 0.0));
    }

    #[test]
    fn splitmix_is_deterministic_and_in_range() {
        // First output for seed 0 from the reference implementation (Vigna, splitmix64.c).
        assert_eq!(SplitMix64(0).next_u64(), 0xE220_A839_7B1D_CDAF);
        let mut r = SplitMix64(42);
        assert!((0..10_000).all(|_| r.below(7) < 7));
    }
}
