//! Statistics over timing samples: pure functions, tested against hand-computed values and, for
//! the properties every input must keep (an interval holds its estimate, order does not matter
//! where it should not), against generated ones (`properties`).
//!
//! `Sample` is a slice that cannot be empty or hold a NaN or an infinity, and the summary and the
//! median's and the mean's intervals are its methods. The functions over plain slices stay for the
//! measuring crate's many callers: `summarize`, `median_ci95`, `median_interval` and `mean_half95`
//! go through `Sample` and give `None` for what it refuses; the others keep their answers for no
//! samples (`mean` and `median` NaN, `stdev` 0).

#[cfg(test)]
mod properties;
mod sample;

pub use crate::results::{Outliers, Summary};
pub use sample::{Sample, SampleError};

pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample standard deviation (n - 1 in the denominator); 0 for fewer than two samples.
pub(crate) fn stdev(xs: &[f64]) -> f64 {
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

/// The full summary (`Sample::summary`); `None` for no samples or a value that is not finite.
#[cfg(test)]
pub(crate) fn summarize(xs: &[f64]) -> Option<Summary> {
    Sample::new(xs).ok().map(Sample::summary)
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
pub(crate) fn agrees(a: f64, b: f64, tol_pct: f64) -> bool {
    let scale = a.abs().max(b.abs());
    scale == 0.0 || (a - b).abs() / scale * 100.0 <= tol_pct
}

/// Median of `xs` without sorting all of it (reorders `xs`).
pub(crate) fn median_in_place(xs: &mut [f64]) -> f64 {
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    let (_, hi, _) = xs.select_nth_unstable_by(n / 2, f64::total_cmp);
    let hi = *hi;
    if n % 2 == 1 {
        return hi;
    }
    let lo = xs[..n / 2]
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    (lo + hi) / 2.0
}

/// Bootstrap resamples for confidence intervals (Efron & Tibshirani 1993, percentile method).
pub const BOOTSTRAP_RESAMPLES: usize = 1000;
pub const BOOTSTRAP_SEED: u64 = 0x626f_6f74; // "boot"

/// The medians of `resamples` bootstrap resamples of `xs` (with replacement, drawn with SplitMix64
/// from `seed`): the one bootstrap behind every interval of a single phase.
pub(crate) fn bootstrap_medians(xs: &[f64], resamples: usize, seed: u64) -> Vec<f64> {
    if xs.len() < 2 {
        return Vec::new();
    }
    let mut rng = SplitMix64(seed);
    let mut buf = vec![0.0; xs.len()];
    (0..resamples)
        .map(|_| {
            for b in buf.iter_mut() {
                *b = xs[rng.below(xs.len())];
            }
            median_in_place(&mut buf)
        })
        .collect()
}

/// Medians of two-stage bootstrap resamples of values in groups (Davison & Hinkley 1997, "Bootstrap
/// Methods and their Application", section 3.8): draw as many groups as there are, with
/// replacement, then each drawn group's values with replacement, and take the median of the pooled
/// draw. The groups are processes: what differs between two processes (code and data placement,
/// pages, the host's state) is inside the spread, which a flat resample of pooled values leaves
/// out. One group is `bootstrap_medians` of it, the same random stream.
pub(crate) fn bootstrap_medians_grouped(
    groups: &[&[f64]],
    resamples: usize,
    seed: u64,
) -> Vec<f64> {
    match groups {
        [] => Vec::new(),
        [one] => bootstrap_medians(one, resamples, seed),
        _ => {
            let n: usize = groups.iter().map(|g| g.len()).sum();
            if n < 2 || groups.iter().any(|g| g.is_empty()) {
                return Vec::new();
            }
            let mut rng = SplitMix64(seed);
            let mut buf = Vec::with_capacity(n);
            (0..resamples)
                .map(|_| {
                    buf.clear();
                    for _ in 0..groups.len() {
                        let g = groups[rng.below(groups.len())];
                        for _ in 0..g.len() {
                            buf.push(g[rng.below(g.len())]);
                        }
                    }
                    median_in_place(&mut buf)
                })
                .collect()
        }
    }
}

/// The 95% interval of the median of samples measured in groups (processes, rounds): the
/// two-stage bootstrap's (`bootstrap_medians_grouped`), widened where needed to the t-interval of
/// the groups' medians around `median`, t with (groups - 1) degrees of freedom. With few groups a
/// percentile bootstrap over them is too narrow (three processes give at most three distinct
/// levels to resample); the t critical value is the usual correction for few clusters (Cameron &
/// Miller 2015, "A Practitioner's Guide to Cluster-Robust Inference", J. Human Resources 50(2),
/// section VI). `None` unless there are two groups with samples.
pub(crate) fn grouped_median_ci95(groups: &[&[f64]], median: f64) -> Option<(f64, f64)> {
    if groups.len() < 2 || groups.iter().any(|g| g.is_empty()) {
        return None;
    }
    let (lo, hi) = interval95(&bootstrap_medians_grouped(
        groups,
        BOOTSTRAP_RESAMPLES,
        BOOTSTRAP_SEED,
    ))?;
    let medians: Vec<f64> = groups.iter().map(|g| self::median(g)).collect();
    let k = medians.len();
    let half = t95(k - 1) * stdev(&medians) / (k as f64).sqrt();
    Some((lo.min(median - half), hi.max(median + half)))
}

/// Splits samples into the groups `sizes` gives (in order); `None` unless the sizes add up.
pub(crate) fn groups<'a, T>(xs: &'a [T], sizes: &[usize]) -> Option<Vec<&'a [T]>> {
    if sizes.iter().sum::<usize>() != xs.len() {
        return None;
    }
    let mut out = Vec::with_capacity(sizes.len());
    let mut at = 0;
    for &n in sizes {
        out.push(&xs[at..at + n]);
        at += n;
    }
    Some(out)
}

/// The distribution-free 95% interval of the `p`-th percentile of sorted samples: the order
/// statistics X(l) and X(u) whose ranks hold np ± 1.96 sqrt(np(1-p)) (the normal approximation to
/// the binomial count below the percentile; Conover, "Practical Nonparametric Statistics", 3rd ed.
/// 1999, §3.2). `None` where those ranks fall outside the sample: too few samples for that
/// percentile (a p95 needs about 75).
pub(crate) fn percentile_ci95(sorted: &[f64], p: f64) -> Option<(f64, f64)> {
    let n = sorted.len() as f64;
    let q = p / 100.0;
    if sorted.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let half = 1.96 * (n * q * (1.0 - q)).sqrt();
    // 1-based ranks.
    let l = (n * q - half).floor();
    let u = (n * q + half).ceil() + 1.0;
    (l >= 1.0 && u <= n).then(|| (sorted[l as usize - 1], sorted[u as usize - 1]))
}

/// Half the width of an interval, percent of `centre` (`None` where the centre is not positive).
pub fn half_width_pct(interval: (f64, f64), centre: f64) -> Option<f64> {
    (centre > 0.0).then(|| (interval.1 - interval.0) / 2.0 / centre * 100.0)
}

/// The half-width, percent, of the interval around a figure that should hold the next run's
/// figure 95% of the time, from this run's 95% half-width `half_width_pct` and the host's drift
/// between processes `drift_pct` (a relative standard deviation, percent).
///
/// A 95% interval holds the true value 95% of the time, but the next run's figure carries an
/// error of its own as large as this one's, so the difference of the two has sqrt 2 times the
/// spread of either: a calibrated interval holds another run's figure only about 83% of the time
/// (|Z| < 1.96 / sqrt 2). And the host's speed moves between runs as it moves between processes,
/// for every figure at once, but a run only averages its own processes' states, never the next
/// run's: so each run adds a drift of `drift_pct` (as a 95% term, 1.96 times it) of its own.
/// sqrt(2 (h^2 + (1.96 d)^2)).
pub(crate) fn next_run_half_width_pct(half_width_pct: f64, drift_pct: f64) -> f64 {
    let d = 1.96 * drift_pct;
    (2.0 * (half_width_pct * half_width_pct + d * d)).sqrt()
}

/// The 2.5th and 97.5th percentiles of bootstrap estimates; `None` without estimates or with a
/// non-finite one.
pub(crate) fn interval95(estimates: &[f64]) -> Option<(f64, f64)> {
    if estimates.is_empty() || estimates.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let s = sorted(estimates);
    Some((percentile_sorted(&s, 2.5), percentile_sorted(&s, 97.5)))
}

/// `Sample::median_ci95` of a slice; `None` where it is not a `Sample`.
pub fn median_ci95(xs: &[f64], resamples: usize, seed: u64) -> Option<(f64, f64)> {
    Sample::new(xs).ok()?.median_ci95(resamples, seed)
}

/// `Sample::median_interval` of a slice; `None` where it is not a `Sample`.
pub fn median_interval(xs: &[f64]) -> Option<(f64, f64, f64)> {
    Sample::new(xs).ok()?.median_interval()
}

/// Every statistic of one phase that is computed from its samples alone: what `run`, `--samples`
/// pooling and `check` all derive the same way.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleFigures {
    pub summary: Summary,
    pub(crate) median_ci95: Option<(f64, f64)>,
    pub(crate) rsd_pct: f64,
    pub(crate) outliers: Outliers,
    pub(crate) ops_per_sec: f64,
}

impl SampleFigures {
    /// The figures of a phase with no samples (it failed before its first timed call).
    pub(crate) fn empty() -> SampleFigures {
        let summary = Summary {
            mean_ns: 0.0,
            median_ns: 0.0,
            p95_ns: 0.0,
            p99_ns: 0.0,
            stdev_ns: 0.0,
            min_ns: 0.0,
            max_ns: 0.0,
            iterations: 0,
        };
        SampleFigures {
            summary,
            median_ci95: None,
            rsd_pct: 0.0,
            outliers: Outliers::default(),
            ops_per_sec: 0.0,
        }
    }
}

pub fn figures(samples_ns: &[u64]) -> Option<SampleFigures> {
    figures_grouped(samples_ns, &[])
}

/// `figures` of samples measured in several processes (`processes`: how many samples each gave,
/// in order; empty or one: a single process): the median's interval is the two-stage bootstrap's.
pub(crate) fn figures_grouped(samples_ns: &[u64], processes: &[usize]) -> Option<SampleFigures> {
    let xs: Vec<f64> = samples_ns.iter().map(|&x| x as f64).collect();
    let sample = Sample::new(&xs).ok()?;
    let summary = sample.summary();
    let median_ci95 = match groups(&xs, processes) {
        Some(g) if g.len() > 1 => grouped_median_ci95(&g, summary.median_ns),
        _ => sample.median_ci95(BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED),
    };
    Some(SampleFigures {
        median_ci95,
        rsd_pct: rsd_pct(&xs),
        outliers: tukey(&xs),
        ops_per_sec: ops_per_sec(summary.mean_ns),
        summary,
    })
}

/// Tukey's fences (Tukey 1977, "Exploratory Data Analysis"): outside Q1 - 1.5 IQR / Q3 + 1.5 IQR is
/// mild, outside 3 IQR severe. Outliers are counted, never dropped.
pub(crate) fn tukey(xs: &[f64]) -> Outliers {
    let s = sorted(xs);
    let (q1, q3) = (percentile_sorted(&s, 25.0), percentile_sorted(&s, 75.0));
    let iqr = q3 - q1;
    let mut o = Outliers::default();
    for &x in xs {
        if x < q1 - 3.0 * iqr {
            o.low_severe += 1;
        } else if x < q1 - 1.5 * iqr {
            o.low_mild += 1;
        } else if x > q3 + 3.0 * iqr {
            o.high_severe += 1;
        } else if x > q3 + 1.5 * iqr {
            o.high_mild += 1;
        }
    }
    o
}

/// Relative standard deviation (sample stdev / mean), percent.
pub fn rsd_pct(xs: &[f64]) -> f64 {
    let m = mean(xs);
    if m == 0.0 || xs.len() < 2 {
        return 0.0;
    }
    stdev(xs) / m * 100.0
}

/// The median of each consecutive group of `per` samples (the last group may be short).
pub fn chunk_medians(samples_ns: &[u64], per: usize) -> Vec<f64> {
    samples_ns
        .chunks(per.max(1))
        .map(|c| median(&c.iter().map(|&x| x as f64).collect::<Vec<_>>()))
        .collect()
}

/// Two-sided 95% quantile of Student's t with `df` degrees of freedom (standard tables, e.g.
/// NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.2); the normal 1.96 beyond 30.
pub(crate) fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        d if d <= 30 => T[d - 1],
        _ => 1.96,
    }
}

/// `Sample::mean_half95` of a slice: `None` with fewer than two values or one not finite.
pub fn mean_half95(xs: &[f64]) -> Option<(f64, f64)> {
    Sample::new(xs).ok()?.mean_half95()
}

/// Ours against theirs, paired in time: each of their runs sits between two of ours
/// (`ours.len() == theirs.len() + 1`), so the ratio of round i is mean(ours[i], ours[i + 1]) /
/// theirs[i], which cancels drift slower than a round. Returns the geometric mean of the ratios and
/// its 95% t-interval on the log scale (`None` with fewer than two rounds).
pub fn paired_ratio(ours: &[f64], theirs: &[f64]) -> Option<(f64, Option<(f64, f64)>)> {
    if theirs.is_empty() || ours.len() != theirs.len() + 1 {
        return None;
    }
    let logs: Vec<f64> = theirs
        .iter()
        .enumerate()
        .map(|(i, t)| ((ours[i] + ours[i + 1]) / 2.0 / t).ln())
        .collect();
    if logs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let ci = mean_half95(&logs).map(|(m, half)| ((m - half).exp(), (m + half).exp()));
    Some((mean(&logs).exp(), ci))
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny deterministic generator, so resampled figures are
/// reproducible from the raw samples by anyone with the seed.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64(pub u64);

impl SplitMix64 {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Moves the generator on by `steps` outputs at once, as `steps` calls of `next_u64` would:
    /// its state only ever grows by the same constant.
    pub(crate) fn skip(&mut self, steps: u64) {
        self.0 = self
            .0
            .wrapping_add(0x9E37_79B9_7F4A_7C15_u64.wrapping_mul(steps));
    }

    /// Uniform index in 0..n (n > 0), by Lemire's multiply-shift (bias below 2^-32 for our n).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skipping_lands_where_stepping_does() {
        for steps in [0u64, 1, 2, 7, 1000, 123_457] {
            let (mut a, mut b) = (SplitMix64(42), SplitMix64(42));
            for _ in 0..steps {
                a.next_u64();
            }
            b.skip(steps);
            assert_eq!(a.next_u64(), b.next_u64(), "{steps}");
        }
    }

    #[test]
    fn few_groups_widen_to_the_t_interval_of_their_medians() {
        // Medians 1, 2, 3: sd 1, t(2) = 4.303, half 4.303 / sqrt 3 = 2.4843; the bootstrap over
        // three levels stays within [1, 3], so the t-interval is the one.
        let g = [[1.0; 3], [2.0; 3], [3.0; 3]];
        let refs: Vec<&[f64]> = g.iter().map(|x| &x[..]).collect();
        let (lo, hi) = grouped_median_ci95(&refs, 2.0).unwrap();
        let half = 4.303 / 3f64.sqrt();
        assert!((lo - (2.0 - half)).abs() < 1e-12 && (hi - (2.0 + half)).abs() < 1e-12);
        // Groups that agree: the t-interval is a point, the bootstrap's spread within them stays.
        let g = [[1.0, 3.0], [1.0, 3.0]];
        let refs: Vec<&[f64]> = g.iter().map(|x| &x[..]).collect();
        let (lo, hi) = grouped_median_ci95(&refs, 2.0).unwrap();
        assert!(lo >= 1.0 && hi <= 3.0 && lo < hi);
        assert_eq!(grouped_median_ci95(&refs[..1], 2.0), None);
    }

    #[test]
    fn the_next_runs_half_width_adds_both_runs_errors_and_drifts() {
        // No drift: sqrt 2 times, 3% gives 4.2426%.
        assert!((next_run_half_width_pct(3.0, 0.0) - 4.2426).abs() < 1e-4);
        // 1% and a drift of 0.5%: 1.96 * 0.5 = 0.98; sqrt(2 (1 + 0.9604)) = 1.98010.
        assert!((next_run_half_width_pct(1.0, 0.5) - 1.9801).abs() < 1e-4);
        // Drift alone: sqrt 2 * 1.96 * 1 = 2.7719.
        assert!((next_run_half_width_pct(0.0, 1.0) - 2.7719).abs() < 1e-4);
    }

    #[test]
    fn a_percentiles_interval_is_the_textbooks_order_statistics() {
        // n = 100, the median: ranks 50 -+ 9.8 give X(40) and X(61) (Conover's table A3 gives
        // the same pair); the sample is 1..=100, so the values are the ranks.
        let xs: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile_ci95(&xs, 50.0), Some((40.0, 61.0)));
        // The 95th: 95 -+ 4.27 gives X(90) and X(101): beyond the sample, so none.
        assert_eq!(percentile_ci95(&xs, 95.0), None);
        let ys: Vec<f64> = (1..=200).map(f64::from).collect();
        // n = 200: 190 -+ 6.04 gives ranks 183 and 197 + 1 = 198.
        assert_eq!(percentile_ci95(&ys, 95.0), Some((183.0, 198.0)));
        assert_eq!(percentile_ci95(&[], 50.0), None);
    }

    #[test]
    fn a_two_stage_bootstrap_holds_the_spread_between_groups() {
        // Three processes, each tight around its own level (100, 103, 106): a flat resample of
        // the 600 pooled values keeps the median's interval within the middle process (a
        // resample's median leaves it only if 300 of 600 draws come from one side), the
        // two-stage one spans the levels (7 of 27 draws of three processes have two or three
        // from the lowest).
        let g: Vec<Vec<f64>> = [100.0, 103.0, 106.0]
            .iter()
            .map(|&c| (0..200).map(|i| c + f64::from(i) * 0.001).collect())
            .collect();
        let refs: Vec<&[f64]> = g.iter().map(Vec::as_slice).collect();
        let pooled: Vec<f64> = g.concat();
        let flat = median_ci95(&pooled, 1000, 7).unwrap();
        let two = interval95(&bootstrap_medians_grouped(&refs, 1000, 7)).unwrap();
        assert!(flat.0 >= 103.0 && flat.1 <= 103.2, "{flat:?}");
        assert!(two.0 <= 100.2 && two.1 >= 106.0, "{two:?}");
        // One group: exactly the one-stage bootstrap.
        assert_eq!(
            bootstrap_medians_grouped(&refs[..1], 50, 3),
            bootstrap_medians(refs[0], 50, 3)
        );
        assert!(bootstrap_medians_grouped(&[&[1.0][..], &[][..]], 10, 1).is_empty());
    }

    #[test]
    fn groups_split_by_their_sizes() {
        let xs = [1, 2, 3, 4, 5];
        assert_eq!(
            groups(&xs, &[2, 3]).unwrap(),
            vec![&[1, 2][..], &[3, 4, 5][..]]
        );
        assert_eq!(groups(&xs, &[2, 2]), None);
        assert_eq!(groups(&xs, &[]), None);
        assert_eq!(half_width_pct((99.0, 101.0), 100.0), Some(1.0));
        assert_eq!(half_width_pct((0.0, 1.0), 0.0), None);
    }

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
        assert_eq!(
            (one.mean_ns, one.median_ns, one.p99_ns, one.stdev_ns),
            (7.0, 7.0, 7.0, 0.0)
        );
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
    fn median_in_place_matches_sorting() {
        assert_eq!(median_in_place(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_in_place(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median_in_place(&mut []).is_nan());
    }

    #[test]
    fn bootstrap_interval_brackets_the_median_and_is_deterministic() {
        let xs: Vec<f64> = (1..=101).map(f64::from).collect();
        let (lo, hi) = median_ci95(&xs, 500, 1).unwrap();
        assert!(
            lo <= 51.0 && 51.0 <= hi && lo >= 40.0 && hi <= 62.0,
            "{lo} {hi}"
        );
        assert_eq!(median_ci95(&xs, 500, 1), Some((lo, hi)));
        // Constant data: the interval collapses; one sample: no interval.
        assert_eq!(median_ci95(&[5.0; 20], 100, 1), Some((5.0, 5.0)));
        // The median, and an interval around it that one stall cannot widen: 99 values near 1 and
        // one of 1,000 move the median's interval by at most one rank.
        let mut v: Vec<f64> = (0..99).map(|i| 1.0 + f64::from(i) / 1000.0).collect();
        let (m, lo, hi) = median_interval(&v).unwrap();
        assert_eq!(m, 1.049);
        assert!(lo <= m && m <= hi && hi - lo < 0.03, "{lo} {hi}");
        v.push(1000.0);
        let (m2, lo2, hi2) = median_interval(&v).unwrap();
        assert_eq!(m2, 1.0495);
        assert!(hi2 < 1.1 && lo2 >= lo, "{lo2} {hi2}");
        assert_eq!(median_interval(&[1.0]), None);
        assert_eq!(median_ci95(&[5.0], 100, 1), None);
    }

    #[test]
    fn tukey_fences_by_hand() {
        // 1..=8 and 100: Q1 = 3, Q3 = 7, IQR = 4; mild above 13, severe above 19: 100 is severe.
        // With 16 and -20 added: Q1 = 2.5, Q3 = 7.5, IQR = 5; 16 > 15 is mild, -20 < -12.5 severe.
        let mut xs: Vec<f64> = (1..=8).map(f64::from).collect();
        xs.push(100.0);
        let o = tukey(&xs);
        assert_eq!((o.high_severe, o.high_mild, o.total()), (1, 0, 1));
        xs.extend([16.0, -20.0]);
        let o = tukey(&xs);
        assert_eq!(o.total(), 3, "{o:?}");
        // Degenerate: IQR = 0, nothing else differs.
        assert_eq!(tukey(&[2.0; 10]).total(), 0);
        assert!((rsd_pct(&[9.0, 11.0]) - (2.0f64.sqrt() / 10.0 * 100.0)).abs() < 1e-9);
    }

    #[test]
    fn paired_ratios_by_hand() {
        // Rounds: ours 10, 12, 14 around theirs 11, 13: ratios (11/11, 13/13) = 1, interval [1, 1].
        let (r, ci) = paired_ratio(&[10.0, 12.0, 14.0], &[11.0, 13.0]).unwrap();
        assert!(close(r, 1.0) && ci == Some((1.0, 1.0)), "{r} {ci:?}");
        // Ratios 1.1 and 0.9: ln mean = (ln 1.1 + ln 0.9) / 2; sd of the two logs; t(1) = 12.706.
        let (r, ci) = paired_ratio(&[11.0, 11.0, 9.0], &[10.0, 11.111_111_111_111_11]).unwrap();
        let (a, b) = (1.1f64.ln(), 0.9f64.ln());
        assert!(close(r, ((a + b) / 2.0).exp()));
        let half = 12.706 * ((a - b).abs() / 2f64.sqrt()) / 2f64.sqrt();
        let (lo, hi) = ci.unwrap();
        assert!(
            (lo - ((a + b) / 2.0 - half).exp()).abs() < 1e-6
                && (hi - ((a + b) / 2.0 + half).exp()).abs() < 1e-6
        );
        assert!(paired_ratio(&[1.0], &[1.0]).is_none());
        assert_eq!(paired_ratio(&[1.0, 1.0], &[2.0]).unwrap().1, None);
        assert_eq!((t95(1), t95(4), t95(100)), (12.706, 2.776, 1.96));
    }

    #[test]
    fn splitmix_is_deterministic_and_in_range() {
        // First output for seed 0 from the reference implementation (Vigna, splitmix64.c).
        assert_eq!(SplitMix64(0).next_u64(), 0xE220_A839_7B1D_CDAF);
        let mut r = SplitMix64(42);
        assert!((0..10_000).all(|_| r.below(7) < 7));
    }

    #[test]
    fn mean_half95_is_a_t_interval_and_zero_for_equal_values() {
        // 1, 2, 3: mean 2, sample sd 1, t(2) = 4.303: half = 4.303 / sqrt(3) = 2.4843.
        let (m, h) = mean_half95(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(m, 2.0);
        assert!((h - 4.303 / 3f64.sqrt()).abs() < 1e-12, "{h}");
        assert_eq!(mean_half95(&[7.0, 7.0, 7.0]), Some((7.0, 0.0)));
        assert_eq!(mean_half95(&[7.0]), None);
    }
}
