//! How a window without loss shares its time among its cells: the cells that feed the answer
//! table (`figures::answer::in_answer`) get the handshakes the difference between two of them
//! needs for its interval to reach its target (`figures::network::extra_target_ns`: ±0.2 ms at
//! 5.6 ms, ±1 ms at 78.7 ms, #38), and never fewer than an even share of the window gives them;
//! the other cells share what is left evenly, as every cell did before.
//!
//! With an even share, the cells that compute most got fewest: a cell starts a handshake every
//! few times its own compute (`pace`, 10% of a core by default), and on the Xeon (model 207,
//! 4769b0) make run of 2026-12-05 00:17 quic-go's and Go's ML-DSA-65 cells at 5.6 ms had 18-23
//! handshakes, which left the answer table's extra time for that chain at ±0.46 and ±0.26 ms.
//! Weighting every cell by its spread instead (tried on a copy of that run's file, 01:15) gave
//! the slow cells all they asked and left 50 of the 82 cells at 5.6 ms their least, 12: 9 cells
//! missed their model where 2 had.
//!
//! How many a cell needs follows from its spread: the 95% interval of a median of n handshakes
//! is about 1.96 x 1.2533 x sigma / sqrt(n) wide each way (the normal's, sigma the interquartile
//! range / 1.349), and a difference of two cells adds the two in quadrature, so each needs its
//! own half-width within target / sqrt(2) (`needed`). Where the answer's cells together would
//! take more than `ANSWER_SHARE` of the window, the largest needs are cut to a common level first
//! (`counts`): in the make run of 2026-12-05 02:27 (Xeon model 207) a cut in proportion left Go's
//! ML-DSA-65 cell 41 of the 55 it needed, beside quic-go's 184, and that row at ±0.27 ms. The
//! share was half. The first round's needs come from the zero point's spread, which the network
//! outgrows (quinn's hybrid + ML-DSA-65 chain: quartiles 0.13 ms apart at the zero point, 0.55
//! ms at 5.6 ms, in the Zen 5 VM's make run of 07:53, 38df4d), so the later rounds make up most
//! of the answer's handshakes; that run's 5.6 ms rows of quinn's and quic-go's chain read ±0.22
//! and ±0.37 ms. With three quarters, a later round's catch-up up to the cell's whole count
//! (`Want::asked`) and the servers' stats asked at once (which gave the later rounds their
//! time), a network step on a copy of that run read every 5.6 ms row within ±0.20 ms and every
//! 78.7 ms row within ±0.72 ms. The spread is the
//! zero point's, or once a round has run at the point the wider of that and the point's own (the
//! network adds to the compute's: rustls's ML-DSA-65 cell's quartiles at 5.6 ms were 0.52 ms
//! apart in that run where its zero point's were 0.15 ms), and the later rounds make up what the
//! first fell short of. Only the spread decides, never where the handshakes fell.
//!
//! Sharing a row's error between its two cells at least cost (n in proportion to spread /
//! sqrt(time a handshake costs)) asks a slow, wide cell beside a quick baseline for about 60% of
//! this; tried twice on copies of make runs' files, it left Go's ML-DSA-65 row at ±0.27 and
//! ±0.61 ms with 42 and 30 handshakes: the spread at the point outgrew the estimate, and half the
//! error each keeps a margin for that.

use std::time::Duration;

/// One cell's part in the sharing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Want {
    /// How often it starts a handshake (`start_interval`): what each handshake costs the window.
    pub(crate) interval: Duration,
    /// What an even share of the window gives it (`starts_within`).
    pub(crate) even: usize,
    /// A cell of the answer table: the handshakes its difference needs of this round (`needed`,
    /// less what it has had, over the rounds left).
    pub(crate) need: Option<usize>,
    pub(crate) least: usize,
    /// The most it may have: its round's share of the point's handshakes, or for a cell of the
    /// answer in a later round what is left of them all (`Bench::plan`).
    pub(crate) asked: usize,
}

/// The most of a window the answer's cells take together, as a fraction.
pub(crate) const ANSWER_SHARE: (u128, u128) = (3, 4);

/// The median's 95% half-width per unit of interquartile range, times sqrt(n): 1.96 x 1.2533 /
/// 1.349 (a normal's).
const HALF_PER_IQR: f64 = 1.96 * 1.2533 / 1.349;

/// The handshakes a cell whose handshakes spread by `spread_ns` (interquartile range) needs for a
/// difference of two such cells to have a 95% interval within ±`target_ns`: the least n with
/// HALF_PER_IQR x spread / sqrt(n) <= target / sqrt(2).
pub(crate) fn needed(spread_ns: f64, target_ns: f64) -> usize {
    // NaN, zero or negative: nothing to size by.
    if target_ns.is_nan() || spread_ns.is_nan() || target_ns <= 0.0 || spread_ns <= 0.0 {
        return 0;
    }
    let r = HALF_PER_IQR * spread_ns * std::f64::consts::SQRT_2 / target_ns;
    (r * r).ceil().min(1e9) as usize
}

/// Each cell's handshakes within `total`, the window's time (each handshake costing its
/// interval): the answer's cells what they need, at least their even share, between their least
/// and what they asked, all of them together at most `ANSWER_SHARE` of the window (else the
/// largest needs cut to a common level, as far as fits, none below its even share: so the rows
/// that need least keep what they need); the other cells an even share of the rest, as
/// `starts_within` gives it.
/// A cell back to back (no interval) gets what it asked.
pub(crate) fn counts(wants: &[Want], total: Duration) -> Vec<usize> {
    let lo = |w: &Want| w.least.min(w.asked);
    let floor = |w: &Want| w.even.clamp(lo(w), w.asked);
    let answer = |w: &Want| w.need.is_some() && !w.interval.is_zero();
    let mut n: Vec<usize> = wants
        .iter()
        .map(|w| match w.need {
            _ if w.interval.is_zero() => w.asked,
            Some(need) => need.clamp(floor(w), w.asked),
            None => 0,
        })
        .collect();
    let spent = |n: &[usize]| -> u128 {
        wants
            .iter()
            .zip(n)
            .filter(|(w, _)| answer(w))
            .map(|(w, &n)| w.interval.as_nanos() * n as u128)
            .sum()
    };
    let cap = total.as_nanos() * ANSWER_SHARE.0 / ANSWER_SHARE.1;
    if spent(&n) > cap {
        let at = |level: usize| -> Vec<usize> {
            wants
                .iter()
                .zip(&n)
                .map(|(w, &k)| {
                    if answer(w) {
                        k.min(level).max(floor(w))
                    } else {
                        k
                    }
                })
                .collect()
        };
        // The highest level that fits (the floors alone if none does).
        let (mut fits, mut over) = (0usize, n.iter().copied().max().unwrap_or(0));
        while fits + 1 < over {
            let mid = fits + (over - fits) / 2;
            if spent(&at(mid)) <= cap {
                fits = mid;
            } else {
                over = mid;
            }
        }
        n = at(fits);
    }
    let others = wants
        .iter()
        .filter(|w| w.need.is_none() && !w.interval.is_zero())
        .count();
    let each = total.as_nanos().saturating_sub(spent(&n)) / others.max(1) as u128;
    for (w, n) in wants.iter().zip(n.iter_mut()) {
        if w.need.is_none() && !w.interval.is_zero() {
            let fit = usize::try_from(each / w.interval.as_nanos())
                .unwrap_or(usize::MAX)
                .saturating_add(1);
            *n = fit.clamp(lo(w), w.asked);
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::{counts, needed, Want};
    use std::time::Duration;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn want(interval_ms: u64, even: usize, need: Option<usize>) -> Want {
        Want {
            interval: ms(interval_ms),
            even,
            need,
            least: 4,
            asked: 60,
        }
    }

    #[test]
    fn a_cell_needs_the_square_of_its_spread_over_the_target() {
        // HALF_PER_IQR = 1.96 x 1.2533 / 1.349 = 1.82096; a spread of 0.2 ms against 0.2 ms:
        // (1.82096 x sqrt 2)^2 = 6.632, 7 handshakes.
        assert_eq!(needed(0.2e6, 0.2e6), 7);
        // Twice the spread, four times as many: 26.53, 27.
        assert_eq!(needed(0.4e6, 0.2e6), 27);
        assert_eq!(needed(0.0, 0.2e6), 0);
        assert_eq!(needed(0.2e6, 0.0), 0);
    }

    #[test]
    fn the_answers_cells_get_what_they_need_and_the_others_share_the_rest() {
        // 1 s, three cells at 10 ms a handshake: the answer's needs 30 (300 ms) over its even
        // 20; the two others share 700 ms: 350 each, 35 + 1 starts (the first at 0).
        let w = [
            want(10, 20, Some(30)),
            want(10, 20, None),
            want(10, 20, None),
        ];
        assert_eq!(counts(&w, ms(1000)), vec![30, 36, 36]);
        // One that needs fewer than its even share keeps the even share.
        let w = [want(10, 20, Some(5)), want(10, 20, None)];
        assert_eq!(counts(&w, ms(400)), vec![20, 21]);
    }

    #[test]
    fn the_answers_cells_take_at_most_three_quarters_of_the_window() {
        // Two answer cells needing 60 each (1.2 s) in 1.1 s: cut to the level that fits three
        // quarters of it (825 ms), 41 each (820 ms; 42 would take 840); the other gets the 280 ms
        // left, 28 + 1 starts.
        let w = [
            want(10, 10, Some(60)),
            want(10, 10, Some(60)),
            want(10, 10, None),
        ];
        assert_eq!(counts(&w, ms(1100)), vec![41, 41, 29]);
        // The largest need is cut first: 90 and 20 in 750 ms of 1 s, level 55 (550 + 200 ms);
        // the 20 keeps all it needs, where cutting both in proportion would leave it 13.
        let w = [
            Want {
                asked: 100,
                ..want(10, 10, Some(90))
            },
            want(10, 10, Some(20)),
            want(10, 10, None),
        ];
        assert_eq!(counts(&w, ms(1000)), vec![55, 20, 26]);
        // Not below the even share nor the least, whatever the cut.
        let w = [want(10, 40, Some(60)), want(10, 10, None)];
        assert_eq!(counts(&w, ms(200)), vec![40, 4]);
    }

    #[test]
    fn a_cell_back_to_back_gets_what_it_asked_and_costs_nothing() {
        let w = [
            Want {
                interval: Duration::ZERO,
                even: 60,
                need: None,
                least: 4,
                asked: 60,
            },
            want(10, 20, None),
        ];
        assert_eq!(counts(&w, ms(300)), vec![60, 31]);
    }
}
