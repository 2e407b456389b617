//! A sample the statistics can rely on: at least one value, and every value a finite number.
//!
//! criterion.rs's `Sample` holds the same invariants but asserts them; here the constructor returns
//! an error instead, because samples reach the statistics from results files that a user hands to
//! `check` and `render`, and a bad file must become a reported problem, not a crash. Past the
//! constructor nothing needs to check again: the median of a `Sample` is never NaN, its summary
//! always exists, and a NaN cannot sort to one end (`f64::total_cmp`) and silently move a
//! percentile or a bootstrap interval.

use super::{
    bootstrap_medians, interval95, mean, percentile_sorted, sorted, stdev, t95, Summary,
    BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED,
};

/// Why a slice of values is not a `Sample`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SampleError {
    #[error("no samples")]
    Empty,
    /// The first value that is NaN or infinite, by its position in the slice.
    #[error("sample {index} is not a finite number")]
    NotFinite { index: usize },
}

/// A non-empty slice of finite values, in the order they were measured (the bootstrap draws by
/// position, so the order is kept: a stored interval is recomputed from the stored order).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample<'a>(&'a [f64]);

impl<'a> Sample<'a> {
    /// The sample of `xs`, or why it is not one: empty, or the first NaN or infinity. An infinity
    /// is refused as well as a NaN: a mean or a standard deviation with one is no figure, and it
    /// takes an end of every sorted order just as a NaN does.
    pub(crate) fn new(xs: &'a [f64]) -> Result<Sample<'a>, SampleError> {
        if xs.is_empty() {
            return Err(SampleError::Empty);
        }
        match xs.iter().position(|x| !x.is_finite()) {
            Some(index) => Err(SampleError::NotFinite { index }),
            None => Ok(Sample(xs)),
        }
    }

    #[cfg(test)]
    pub(crate) fn as_slice(self) -> &'a [f64] {
        self.0
    }

    pub(crate) fn mean(self) -> f64 {
        mean(self.0)
    }

    pub(crate) fn median(self) -> f64 {
        percentile_sorted(&sorted(self.0), 50.0)
    }

    /// The full summary: mean, median, p95, p99, standard deviation, extremes and count.
    pub(crate) fn summary(self) -> Summary {
        let s = sorted(self.0);
        Summary {
            mean_ns: mean(self.0),
            median_ns: percentile_sorted(&s, 50.0),
            p95_ns: percentile_sorted(&s, 95.0),
            p99_ns: percentile_sorted(&s, 99.0),
            stdev_ns: stdev(self.0),
            min_ns: s[0],
            max_ns: s[s.len() - 1],
            iterations: self.0.len(),
        }
    }

    /// 95% percentile-bootstrap interval of the median (`bootstrap_medians`); `None` for a
    /// single value (nothing to resample) or no resamples.
    pub(crate) fn median_ci95(self, resamples: usize, seed: u64) -> Option<(f64, f64)> {
        if resamples == 0 {
            return None;
        }
        interval95(&bootstrap_medians(self.0, resamples, seed))
    }

    /// The median and its 95% bootstrap interval, with the phases' resamples and seed: for
    /// paired differences whose noise has heavy tails (a shared host's stalls), where a mean's
    /// t-interval is as wide as the stalls. `None` for a single value.
    pub(crate) fn median_interval(self) -> Option<(f64, f64, f64)> {
        let (lo, hi) = self.median_ci95(BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)?;
        Some((self.median(), lo, hi))
    }

    /// The mean and its 95% t-interval half-width; `None` for a single value.
    pub(crate) fn mean_half95(self) -> Option<(f64, f64)> {
        let n = self.0.len();
        (n >= 2).then(|| (mean(self.0), t95(n - 1) * stdev(self.0) / (n as f64).sqrt()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_constructor_refuses_empty_and_non_finite_slices() {
        assert_eq!(Sample::new(&[]), Err(SampleError::Empty));
        // The first bad value is named, by position, whichever kind it is.
        assert_eq!(
            Sample::new(&[1.0, f64::NAN, f64::INFINITY]),
            Err(SampleError::NotFinite { index: 1 })
        );
        assert_eq!(
            Sample::new(&[f64::NEG_INFINITY, 2.0]),
            Err(SampleError::NotFinite { index: 0 })
        );
        assert_eq!(
            Sample::new(&[0.0, -f64::NAN]),
            Err(SampleError::NotFinite { index: 1 })
        );
        // The extremes of the finite numbers, zero of either sign and one value are samples.
        let xs = [f64::MAX, -f64::MAX, f64::MIN_POSITIVE, -0.0, 0.0];
        assert_eq!(Sample::new(&xs).map(Sample::as_slice), Ok(&xs[..]));
        assert_eq!(Sample::new(&[7.0]).map(Sample::median), Ok(7.0));
        assert_eq!(
            SampleError::NotFinite { index: 3 }.to_string(),
            "sample 3 is not a finite number"
        );
    }

    #[test]
    fn a_sample_keeps_its_order_and_its_figures_by_hand() {
        // 9, 2, 4, 5, 4, 7, 4, 5, 2: sorted 2, 2, 4, 4, 4, 5, 5, 7, 9; median the 5th, 4; mean
        // 42 / 9 = 4.6667.
        let xs = [9.0, 2.0, 4.0, 5.0, 4.0, 7.0, 4.0, 5.0, 2.0];
        let s = Sample::new(&xs).unwrap();
        assert_eq!(s.as_slice(), &xs[..]);
        assert_eq!(s.median(), 4.0);
        assert!((s.mean() - 42.0 / 9.0).abs() < 1e-12);
        let sum = s.summary();
        assert_eq!((sum.min_ns, sum.max_ns, sum.iterations), (2.0, 9.0, 9));
        // One value: a summary, but nothing to resample and no spread to take an interval of.
        let one = Sample::new(&[3.0]).unwrap();
        assert_eq!((one.summary().p99_ns, one.summary().stdev_ns), (3.0, 0.0));
        assert_eq!(one.median_interval(), None);
        assert_eq!(one.mean_half95(), None);
        // 1, 2, 3: mean 2, sample sd 1, t(2) = 4.303: half = 4.303 / sqrt(3).
        let (m, h) = Sample::new(&[1.0, 2.0, 3.0])
            .unwrap()
            .mean_half95()
            .unwrap();
        assert_eq!(m, 2.0);
        assert!((h - 4.303 / 3f64.sqrt()).abs() < 1e-12, "{h}");
    }
}
