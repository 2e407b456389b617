//! A real handshake scenario's median and how precise it is, from its connections: the one
//! computation `pqprof handshake` stores and `check` repeats. The samples of a scenario are rounds
//! of connections made in turn with every other scenario, so the interval resamples the rounds
//! first and the connections within them, widened to the t-interval of the round medians where
//! that is wider (`stats::grouped_median_ci95`): a slow stretch of the shared host moves a round,
//! and the interval holds it. The same file pairs two scenarios' connections block by block into
//! their difference (`paired_connections`), the other figure `check` repeats.

use crate::results::{DeltaForm, Handshakes, Results, Scenario};
use crate::stats;

/// The paired difference of two real handshake scenarios and its 95% interval: block by block
/// (`figures::handshake::paired_connections`) in files of the paired design, round by round
/// (`paired_delta`) before it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedDelta {
    /// The difference, nanoseconds: the median of the pairs' (changed - baseline), or in the
    /// relative form of their shares times the baseline's median.
    pub median_ns: f64,
    pub lo95_ns: f64,
    pub hi95_ns: f64,
    /// How many pairs: blocks of `block` connections each, or rounds where `block` is 0.
    pub pairs: usize,
    pub(crate) block: usize,
    /// How the pairs made the difference (`Absolute` for rounds).
    pub(crate) form: DeltaForm,
    /// In the relative form, the median share of the baseline and its 95% interval, which the
    /// nanoseconds above are times the baseline's median: the figure the host's speed cancels in,
    /// and so the one two runs on a drifting host can agree on.
    pub(crate) share: Option<(f64, f64, f64)>,
}

/// A scenario's median over every connection, its 95% interval and the median of each sample.
#[derive(Debug, Clone, PartialEq)]
pub struct MedianFigures {
    pub median_ns: f64,
    pub ci95_ns: Option<(f64, f64)>,
    pub(crate) sample_medians_ns: Vec<f64>,
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
    let ci95_ns = median_ci95_over(&groups, &xs, median_ns);
    Some(MedianFigures {
        median_ns,
        ci95_ns,
        sample_medians_ns: groups.iter().map(|g| stats::median(g)).collect(),
    })
}

/// The two scenarios' sample medians of the rounds both ran in, in round order: the pairs a
/// paired difference is taken over (each pair shares the host's state of its round). Files
/// without rounds ran every scenario in every round: their samples pair by position.
pub(crate) fn common_rounds(a: &Scenario, b: &Scenario) -> (Vec<f64>, Vec<f64>) {
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

/// One scenario's connections as `pqprof handshake` stores them: every connection's total in the
/// order made, the connections of each sample and the round each sample ran in.
#[derive(Debug, Clone, Copy)]
pub struct Connections<'a> {
    pub totals_ns: &'a [u64],
    pub sizes: &'a [usize],
    pub rounds: &'a [usize],
}

impl<'a> Connections<'a> {
    pub fn of(s: &'a Scenario) -> Connections<'a> {
        Connections {
            totals_ns: &s.totals_ns,
            sizes: &s.sample_sizes,
            rounds: &s.sample_rounds,
        }
    }
}

/// How a file of the paired design takes a difference: `block` connections a turn, and the form
/// (`results::DeltaForm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeltaPairing {
    pub block: usize,
    pub form: DeltaForm,
}

impl DeltaPairing {
    /// The handshakes' pairing, where they used the paired design.
    pub(crate) fn of(h: &Handshakes) -> Option<DeltaPairing> {
        h.pair_block.map(|block| DeltaPairing {
            block,
            form: h.delta_form,
        })
    }

    /// The run's pairing, where its real handshakes used the paired design.
    pub(crate) fn of_run(r: &Results) -> Option<DeltaPairing> {
        r.handshakes.as_ref().and_then(DeltaPairing::of)
    }
}

/// The rounds two scenarios of the paired design both ran in with as many connections each, in the
/// changed scenario's round order: (changed's connections, baseline's). `None` where the stored
/// connections do not make their samples.
fn shared_rounds<'a>(
    changed: Connections<'a>,
    baseline: Connections<'a>,
) -> Option<Vec<(&'a [u64], &'a [u64])>> {
    if changed.rounds.len() != changed.sizes.len() || baseline.rounds.len() != baseline.sizes.len()
    {
        return None;
    }
    let (a, b) = (
        stats::groups(changed.totals_ns, changed.sizes)?,
        stats::groups(baseline.totals_ns, baseline.sizes)?,
    );
    let mut out = Vec::new();
    for (i, r) in changed.rounds.iter().enumerate() {
        let Some(j) = baseline.rounds.iter().position(|x| x == r) else {
            continue;
        };
        if a[i].len() == b[j].len() && !a[i].is_empty() {
            out.push((a[i], b[j]));
        }
    }
    Some(out)
}

/// The median of the baseline's connections in the rounds both scenarios share: what a relative
/// difference's share is times (`paired_connections`).
pub(crate) fn shared_baseline_median(changed: Connections, baseline: Connections) -> Option<f64> {
    let shared: Vec<u64> = shared_rounds(changed, baseline)?
        .iter()
        .flat_map(|(_, b)| b.iter().copied())
        .collect();
    (!shared.is_empty()).then(|| median_u64(&shared))
}

fn median_u64(xs: &[u64]) -> f64 {
    stats::median(&xs.iter().map(|&x| x as f64).collect::<Vec<_>>())
}

/// The paired design's blocks, round by round (files whose `Handshakes::pair_block` is set): in
/// every round the scenarios of one stack took turns, `block` connections at a time, so the j-th
/// block of `changed` in a round ran next to the j-th block of `baseline` in that round. Each pair
/// gives its two blocks' medians (changed, baseline), in block order; a round gives its pairs, in
/// round order (`shared_rounds`: rounds only one of the two ran in, or in which they made
/// different numbers of connections, pair nothing). `None` where the stored connections do not
/// make their samples or `block` is 0.
pub(crate) fn block_pairs(
    changed: Connections,
    baseline: Connections,
    block: usize,
) -> Option<Vec<Vec<(f64, f64)>>> {
    if block == 0 {
        return None;
    }
    let rounds = shared_rounds(changed, baseline)?;
    Some(
        rounds
            .iter()
            .map(|(a, b)| {
                let pairs = a.chunks(block).zip(b.chunks(block));
                pairs.map(|(x, y)| (median_u64(x), median_u64(y))).collect()
            })
            .collect(),
    )
}

/// The paired difference of two scenarios of the paired design, in the file's form:
/// - `Absolute`: the median of the pairs' differences of block medians (`block_pairs`) with its
///   percentile-bootstrap interval over the pairs (`stats::median_interval`, the phases'
///   resamples and seed). A slow stretch of the shared host that lasts longer than two blocks
///   moves both blocks of a pair and cancels in their difference.
/// - `Relative`: each pair's difference over its baseline block, the median of those shares and
///   its 95% interval as a median's over rounds (`stats::grouped_median_ci95`: the two-stage
///   bootstrap over the rounds and their pairs, widened to the t-interval of the rounds' medians;
///   with one round shared, the bootstrap over its pairs alone), each times the baseline's median
///   over its connections of the shared rounds (a round only the baseline ran in, as the partner
///   of another scenario, says nothing of this pair). On the Zen 5 VM's make run of 2026-12-02
///   14:05 (a host that drifted 15% between processes) the baseline's round medians moved by up
///   to 30% from one round to the next, and a pair's difference moved with its blocks, so the
///   differences varied between rounds far more than within one and a bootstrap over the blocks
///   alone was 2-4 times too narrow; the share cancels the host's speed, and resampling rounds
///   keeps what still differs between them. A baseline block of no time has no share: the pair
///   is left out.
///
/// `None` with fewer than two pairs.
pub fn paired_connections(
    changed: Connections,
    baseline: Connections,
    pairing: DeltaPairing,
) -> Option<PairedDelta> {
    let rounds = block_pairs(changed, baseline, pairing.block)?;
    let (median_ns, lo95_ns, hi95_ns, pairs, share) = match pairing.form {
        DeltaForm::Absolute => {
            let d: Vec<f64> = rounds.iter().flatten().map(|(a, b)| a - b).collect();
            let (m, lo, hi) = crate::derived::median_interval(&d)?;
            (m, lo, hi, d.len(), None)
        }
        DeltaForm::Relative => {
            let shares: Vec<Vec<f64>> = rounds
                .iter()
                .map(|r| {
                    r.iter()
                        .filter(|(_, b)| *b > 0.0)
                        .map(|(a, b)| (a - b) / b)
                        .collect::<Vec<_>>()
                })
                .filter(|r| !r.is_empty())
                .collect();
            let all: Vec<f64> = shares.iter().flatten().copied().collect();
            if all.len() < 2 {
                return None;
            }
            let share = stats::median(&all);
            let groups: Vec<&[f64]> = shares.iter().map(Vec::as_slice).collect();
            let (lo, hi) = median_ci95_over(&groups, &all, share)?;
            let base = shared_baseline_median(changed, baseline)?;
            (
                share * base,
                lo.min(share) * base,
                hi.max(share) * base,
                all.len(),
                Some((share, lo.min(share), hi.max(share))),
            )
        }
    };
    Some(PairedDelta {
        median_ns,
        lo95_ns,
        hi95_ns,
        pairs,
        block: pairing.block,
        form: pairing.form,
        share,
    })
}

/// The 95% interval of the median `median` of `all`, measured in `groups` (rounds): over the
/// groups where there are two or more (`stats::grouped_median_ci95`), else the bootstrap's.
fn median_ci95_over(groups: &[&[f64]], all: &[f64], median: f64) -> Option<(f64, f64)> {
    match groups.len() {
        1 => crate::derived::median_ci95(all),
        _ => crate::derived::grouped_median_ci95(groups, median),
    }
}

/// What the composition predicts of a scenario's difference from the one it is against, along the
/// critical path where the suites have a flow (`compose::predicted_difference`): a new
/// authentication's full handshake against the baseline's; a resumption, the two groups' resumed
/// handshakes (suites/tls13-resumed.toml) where the run composed them, and nothing against the
/// ECDSA chain (a resumption sends none); else the two groups' key exchanges. `check` recomputes
/// it from the same rule.
pub fn composed_delta(
    r: &crate::results::Results,
    s: &Scenario,
    against: &crate::results::Against,
    baseline_auth: &str,
) -> Option<f64> {
    let other_auth = s.auth_name().filter(|x| *x != baseline_auth);
    if s.mode == crate::results::Mode::Resumed && other_auth.is_some() {
        return None;
    }
    let composed = |n: &str| r.suite(n, &s.composed_stack);
    let resumed = crate::auth::resumed_suite;
    let (ours, theirs) = match other_auth {
        Some(x) => (
            format!("{} + {x} full handshake", s.suite),
            format!("{} full handshake", against.suite),
        ),
        None if s.mode == crate::results::Mode::Resumed
            && composed(&resumed(&s.suite)).is_some()
            && composed(&resumed(&against.suite)).is_some() =>
        {
            (resumed(&s.suite), resumed(&against.suite))
        }
        None => (s.suite.clone(), against.suite.clone()),
    };
    Some(crate::compose::predicted_difference(
        composed(&ours)?,
        composed(&theirs)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn absolute(block: usize) -> DeltaPairing {
        DeltaPairing {
            block,
            form: DeltaForm::Absolute,
        }
    }

    fn block_differences(a: Connections, b: Connections, block: usize) -> Option<Vec<f64>> {
        Some(
            block_pairs(a, b, block)?
                .iter()
                .flatten()
                .map(|(x, y)| x - y)
                .collect(),
        )
    }

    fn relative(block: usize) -> DeltaPairing {
        DeltaPairing {
            block,
            form: DeltaForm::Relative,
        }
    }

    #[test]
    fn the_relative_form_cancels_a_host_speed_that_scales_both_blocks() {
        // Round 0 at speed 1: the baseline's blocks take 100, the change 10% more; round 1 at a
        // third of the speed: 300 and 330. Every pair's share is 0.1; the baseline's median over
        // its five connections is 100, so the difference is 10, exactly, whatever is resampled.
        let changed = Connections {
            totals_ns: &[110, 110, 110, 330, 330],
            sizes: &[3, 2],
            rounds: &[0, 1],
        };
        let baseline = Connections {
            totals_ns: &[100, 100, 100, 300, 300],
            sizes: &[3, 2],
            rounds: &[0, 1],
        };
        let d = paired_connections(changed, baseline, relative(1)).unwrap();
        assert!((d.median_ns - 10.0).abs() < 1e-9, "{d:?}");
        assert!((d.lo95_ns - 10.0).abs() < 1e-9 && (d.hi95_ns - 10.0).abs() < 1e-9);
        assert_eq!((d.pairs, d.block), (5, 1));
        // The absolute form takes the differences as they are, 10, 10, 10, 30, 30: its interval
        // reaches the slow round's 30.
        let a = paired_connections(changed, baseline, absolute(1)).unwrap();
        assert_eq!(a.median_ns, 10.0);
        assert_eq!(a.hi95_ns, 30.0);
    }

    #[test]
    fn the_relative_form_holds_what_differs_between_rounds() {
        // Three rounds of ten pairs; in two the change costs 10% of the baseline's 100, in the
        // third 30%. A bootstrap over the 30 pairs alone almost never draws a median of 0.3
        // (it needs 15 of 30 draws from a third of them). Over rounds: the round medians 0.1,
        // 0.1 and 0.3 have a standard deviation of 0.11547, so with three rounds the t-interval
        // around the median 0.1 is 0.1 -+ 4.303 x 0.11547 / sqrt 3 = 0.1 -+ 0.28686, times the
        // baseline's 100.
        let base = [100u64; 30];
        let mut changed = [110u64; 30];
        changed[20..].fill(130);
        let sizes = [10, 10, 10];
        let rounds = [0, 1, 2];
        let c = |t: &'static [u64]| Connections {
            totals_ns: t,
            sizes: &sizes,
            rounds: &rounds,
        };
        let (a, b): (&'static [u64], &'static [u64]) =
            (Box::leak(Box::new(changed)), Box::leak(Box::new(base)));
        let d = paired_connections(c(a), c(b), relative(1)).unwrap();
        assert!((d.median_ns - 10.0).abs() < 1e-9, "{d:?}");
        let half = 4.303 * (0.04f64 / 3.0).sqrt() / 3f64.sqrt() * 100.0;
        assert!((d.lo95_ns - (10.0 - half)).abs() < 1e-6, "{d:?} {half}");
        assert!((d.hi95_ns - (10.0 + half)).abs() < 1e-6, "{d:?} {half}");
        // A baseline block of no time has no share: that pair is left out, and with every block
        // so, there is no difference rather than an infinite one.
        let mut one = base;
        one[0] = 0;
        let o: &'static [u64] = Box::leak(Box::new(one));
        let d = paired_connections(c(a), c(o), relative(1)).unwrap();
        assert_eq!(d.pairs, 29);
        let zero = [0u64; 30];
        let z: &'static [u64] = Box::leak(Box::new(zero));
        assert_eq!(paired_connections(c(a), c(z), relative(1)), None);
    }

    #[test]
    fn the_relative_form_scales_by_the_baselines_median_of_the_shared_rounds() {
        // The baseline also ran round 7 (as another scenario's partner) at 1,000 a connection;
        // the pair shares rounds 0 and 1 only, where the baseline's median is 100: the change's
        // 10% is 10, not 10% of the median over all seven connections (the 1,000s are 3 of 7).
        let changed = Connections {
            totals_ns: &[110, 110, 110, 110],
            sizes: &[2, 2],
            rounds: &[0, 1],
        };
        let baseline = Connections {
            totals_ns: &[100, 100, 100, 100, 1000, 1000, 1000],
            sizes: &[2, 2, 3],
            rounds: &[0, 1, 7],
        };
        let d = paired_connections(changed, baseline, relative(1)).unwrap();
        assert!((d.median_ns - 10.0).abs() < 1e-9, "{d:?}");
        assert_eq!(d.pairs, 4);
    }

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

    #[test]
    fn blocks_pair_within_the_rounds_both_ran_in() {
        // The changed scenario ran in rounds 0, 1 and 3, the baseline in 0, 1 and 2; blocks of 2.
        let changed = Connections {
            totals_ns: &[110, 130, 150, 170, 500, 520, 900, 910],
            sizes: &[4, 2, 2],
            rounds: &[0, 1, 3],
        };
        let baseline = Connections {
            totals_ns: &[100, 120, 100, 140, 480, 500, 10, 10, 10, 10],
            sizes: &[4, 2, 4],
            rounds: &[0, 1, 2],
        };
        // Round 0: blocks (110, 130) - (100, 120) = 120 - 110 = 10 and (150, 170) - (100, 140)
        // = 160 - 120 = 40; round 1: 510 - 490 = 20; rounds 2 and 3 pair nothing.
        assert_eq!(
            block_differences(changed, baseline, 2),
            Some(vec![10.0, 40.0, 20.0])
        );
        let d = paired_connections(changed, baseline, absolute(2)).unwrap();
        assert_eq!((d.median_ns, d.pairs, d.block), (20.0, 3, 2));
        assert!(d.lo95_ns >= 10.0 && d.hi95_ns <= 40.0, "{d:?}");
        // A round in which the two made different numbers of connections pairs nothing.
        let short = Connections {
            totals_ns: &[100, 120, 100, 480, 500],
            sizes: &[3, 2],
            rounds: &[0, 1],
        };
        assert_eq!(block_differences(changed, short, 2), Some(vec![20.0]));
        assert_eq!(paired_connections(changed, short, absolute(2)), None);
        // No block size, or samples the connections do not make: nothing.
        assert_eq!(block_differences(changed, baseline, 0), None);
        let broken = Connections {
            sizes: &[4, 2, 3],
            ..changed
        };
        assert_eq!(block_differences(broken, baseline, 2), None);
    }

    #[test]
    fn a_drift_both_blocks_share_cancels() {
        // The host slows from 100 to 1,000 over the blocks; the change adds 5 to every connection.
        let base: Vec<u64> = (1..=8).map(|k| k * 100).collect();
        let changed: Vec<u64> = base.iter().map(|x| x + 5).collect();
        let c = |t: &'static [u64]| Connections {
            totals_ns: t,
            sizes: &[8],
            rounds: &[0],
        };
        let (b, a): (&'static [u64], &'static [u64]) = (base.leak(), changed.leak());
        let d = paired_connections(c(a), c(b), absolute(1)).unwrap();
        assert_eq!((d.median_ns, d.lo95_ns, d.hi95_ns), (5.0, 5.0, 5.0));
    }
}
