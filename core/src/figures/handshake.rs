//! A real handshake scenario's median and how precise it is, from its connections: the one
//! computation `pqprof handshake` stores and `check` repeats. The samples of a scenario are rounds
//! of connections made in turn with every other scenario, so the interval resamples the rounds
//! first and the connections within them, widened to the t-interval of the round medians where
//! that is wider (`stats::grouped_median_ci95`): a slow stretch of the shared host moves a round,
//! and the interval holds it.

use crate::results::Scenario;
use crate::stats;

/// A scenario's median over every connection, its 95% interval and the median of each sample.
#[derive(Debug, Clone, PartialEq)]
pub struct MedianFigures {
    pub median_ns: f64,
    pub ci95_ns: Option<(f64, f64)>,
    pub sample_medians_ns: Vec<f64>,
}

/// The figures of connections `totals_ns` made in samples of `sizes` (in order); `None` unless
/// the sizes add up and every sample has a connection.
pub fn median_figures(totals_ns: &[u64], sizes: &[usize]) -> Option<MedianFigures> {
    let xs: Vec<f64> = totals_ns.iter().map(|&x| x as f64).collect();
    let groups = stats::groups(&xs, sizes)?;
    if groups.is_empty() || groups.iter().any(|g| g.is_empty()) {
        return None;
    }
    let median_ns = stats::median(&xs);
    let ci95_ns = match groups.len() {
        1 => stats::median_ci95(&xs, stats::BOOTSTRAP_RESAMPLES, stats::BOOTSTRAP_SEED),
        _ => stats::grouped_median_ci95(&groups, median_ns),
    };
    Some(MedianFigures {
        median_ns,
        ci95_ns,
        sample_medians_ns: groups.iter().map(|g| stats::median(g)).collect(),
    })
}

/// The two scenarios' sample medians of the rounds both ran in, in round order: the pairs a
/// paired difference is taken over (each pair shares the host's state of its round). Files
/// without rounds ran every scenario in every round: their samples pair by position.
pub fn common_rounds(a: &Scenario, b: &Scenario) -> (Vec<f64>, Vec<f64>) {
    let rounds = |s: &Scenario| -> Vec<usize> {
        if s.sample_rounds.len() == s.sample_medians_ns.len() {
            s.sample_rounds.clone()
        } else {
            (0..s.sample_medians_ns.len()).collect()
        }
    };
    let (ra, rb) = (rounds(a), rounds(b));
    let mut out = (Vec::new(), Vec::new());
    for (i, r) in ra.iter().enumerate() {
        if let Some(j) = rb.iter().position(|x| x == r) {
            out.0.push(a.sample_medians_ns[i]);
            out.1.push(b.sample_medians_ns[j]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_every_connections_and_the_samples_keep_their_own() {
        // Two samples: [10, 20, 30] and [40, 50]; all five sorted give 30.
        let f = median_figures(&[10, 20, 30, 40, 50], &[3, 2]).unwrap();
        assert_eq!(f.median_ns, 30.0);
        assert_eq!(f.sample_medians_ns, vec![20.0, 45.0]);
        // Two rounds: the t-interval of their medians is the wider, 30 -+ t(1) sd / sqrt 2 with
        // sd (20, 45) = 25 / sqrt 2, so 30 -+ 12.706 x 12.5.
        let (lo, hi) = f.ci95_ns.unwrap();
        let half = 12.706 * 12.5;
        assert!((lo - (30.0 - half)).abs() < 1e-9 && (hi - (30.0 + half)).abs() < 1e-9);
        // One round: the connections' own bootstrap, within them.
        let one = median_figures(&[10, 20, 30, 40, 50], &[5]).unwrap();
        let (lo, hi) = one.ci95_ns.unwrap();
        assert!(lo >= 10.0 && hi <= 50.0 && lo <= 30.0 && hi >= 30.0);
        // Sizes that do not add up, or an empty sample, give nothing.
        assert_eq!(median_figures(&[1, 2, 3], &[2, 2]), None);
        assert_eq!(median_figures(&[1, 2], &[2, 0]), None);
    }
}
