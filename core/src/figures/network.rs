//! Network figures a producer stores and `check` recomputes.

use crate::results::Cell;
use crate::stats;

/// The value at each percentile of a set of nanosecond samples (0 where there are none).
pub fn percentiles_ns(samples_ns: &[u64], percentiles: &[f64]) -> Vec<f64> {
    let sorted = stats::sorted(&samples_ns.iter().map(|&x| x as f64).collect::<Vec<_>>());
    percentiles
        .iter()
        .map(|&p| {
            if sorted.is_empty() {
                0.0
            } else {
                stats::percentile_sorted(&sorted, p)
            }
        })
        .collect()
}

/// How far a point's measured RTT may be from its target: max(0.3 ms, 3% of the target).
pub fn tolerance_ns(rtt_ns: f64) -> f64 {
    (rtt_ns * 0.03).max(0.3e6)
}

/// The mean connect-to-complete time of a cell's completed handshakes.
pub fn mean_ns(samples_ns: &[u64]) -> f64 {
    stats::mean(&samples_ns.iter().map(|&x| x as f64).collect::<Vec<_>>())
}

/// Handshakes a cell's counters are divided by: completed and failed.
pub fn handshakes(c: &Cell) -> f64 {
    (c.ready_ns.len() + c.failed).max(1) as f64
}

/// dropped / packets, percent (0 where nothing passed).
pub fn loss_pct(dropped: u64, packets: u64) -> f64 {
    if packets > 0 {
        dropped as f64 / packets as f64 * 100.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn tolerance_is_three_percent_or_a_third_of_a_millisecond() {
        assert_eq!(super::tolerance_ns(5.6e6), 0.3e6);
        assert!((super::tolerance_ns(78.7e6) - 2.361e6).abs() < 1e-3);
        assert_eq!(
            super::percentiles_ns(&[4, 1, 3, 2], &[0.0, 100.0]),
            vec![1.0, 4.0]
        );
        assert_eq!(super::percentiles_ns(&[], &[50.0]), vec![0.0]);
    }
}
