//! The in-situ timers' cost, summarised from paired block medians: what `pqprof handshake` stores
//! and what `check` recomputes, derived the same way by both.

use crate::results::{PairedMedian, PairedOverhead};
use crate::stats::Sample;

/// The summary of paired blocks (each series one median per block, the variants' blocks in step)
/// over the scenario's plain loopback median: the mean difference with its t-interval, and the
/// median difference with its bootstrap interval. `None` with fewer than two blocks or series out
/// of step.
pub fn summarise(
    per_block: usize,
    plain_ns: Vec<f64>,
    wrapped_ns: Vec<f64>,
    timed_ns: Vec<f64>,
    median_ns: f64,
) -> Option<PairedOverhead> {
    if timed_ns.len() != plain_ns.len()
        || !(wrapped_ns.is_empty() || wrapped_ns.len() == plain_ns.len())
    {
        return None;
    }
    let mut p = PairedOverhead {
        per_block,
        plain_ns,
        wrapped_ns,
        timed_ns,
        delta_ns: 0.0,
        delta_half95_ns: 0.0,
        pct: 0.0,
        pct_hi95: 0.0,
        wrapper_ns: None,
        median: None,
    };
    let (timers, wrapper) = p.differences();
    let timers = Sample::new(&timers).ok()?;
    // No wrapped variant: an empty series, no figure.
    let wrapper = Sample::new(&wrapper).ok();
    let (d, half) = timers.mean_half95()?;
    (p.delta_ns, p.delta_half95_ns) = (d, half);
    (p.pct, p.pct_hi95) = (d / median_ns * 100.0, (d + half) / median_ns * 100.0);
    p.wrapper_ns = wrapper.map(Sample::mean);
    p.median = timers.median_interval().map(|(m, lo, hi)| PairedMedian {
        delta_ns: m,
        lo95_ns: lo,
        hi95_ns: hi,
        pct: m / median_ns * 100.0,
        pct_hi95: hi / median_ns * 100.0,
        wrapper_ns: wrapper.map(Sample::median),
    });
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_median_of_the_block_differences() {
        // Differences timed - plain: 2, 4, 3, 103 (one stalled block); wrapped - plain: 1, 1, 2, 0.
        let plain = vec![100.0, 100.0, 100.0, 100.0];
        let p = summarise(
            4,
            plain,
            vec![101.0, 101.0, 102.0, 100.0],
            vec![102.0, 104.0, 103.0, 203.0],
            1000.0,
        )
        .unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert_eq!(p.delta_ns, 28.0);
        assert!(close(p.pct, 2.8));
        assert_eq!(p.wrapper_ns, Some(1.0));
        let m = p.median.unwrap();
        // The median of 2, 3, 4, 103 is 3.5: the stall moves the mean to 28 but not the median.
        assert_eq!(m.delta_ns, 3.5);
        assert!(close(m.pct, 0.35) && close(m.pct_hi95, m.hi95_ns / 10.0));
        assert!(m.lo95_ns <= 3.5 && m.hi95_ns >= 3.5);
        assert_eq!(m.wrapper_ns, Some(1.0));
        // OpenSSL: no wrapped series.
        assert!(
            summarise(4, vec![1.0, 2.0], Vec::new(), vec![2.0, 3.0], 10.0)
                .unwrap()
                .median
                .unwrap()
                .wrapper_ns
                .is_none()
        );
        assert!(
            summarise(4, vec![1.0, 2.0], Vec::new(), vec![2.0], 10.0).is_none(),
            "out of step"
        );
        assert!(
            summarise(4, vec![1.0], Vec::new(), vec![2.0], 10.0).is_none(),
            "one block"
        );
    }
}
