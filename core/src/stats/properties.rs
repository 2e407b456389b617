//! Properties the statistics keep for every sample, checked on generated ones (proptest): every
//! interval holds its point estimate and stays within the data; what should not depend on the
//! order of the samples does not; what moves with a percentile moves one way.
//!
//! Values lie on a grid of 1/1024 below 10^6 in magnitude, with a quarter of them from {0, 1, 2, 3}
//! so that ties are common. On that grid every difference and every sum of a few hundred values
//! is exact, so a property fails for the statistic and never for the last bit of a rounding.
//!
//! The bootstrap is not tested for order: it draws positions from a fixed seed, so that `check`
//! recomputes a stored interval bit for bit from the samples in their stored order, and a
//! permuted sample is another draw, as valid but not equal. Its properties are those that hold
//! for every order: it holds the median and stays within the extremes.
//!
//! No function takes a confidence level (every interval is 95%); the monotone properties are in
//! the percentile `p`, the number of resamples and the t quantile's degrees of freedom.

use super::*;
use proptest::prelude::*;

fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        1 => (0u8..4).prop_map(f64::from),
        3 => (-1_000_000_000i64..1_000_000_000).prop_map(|k| k as f64 / 1024.0),
    ]
}

fn values(len: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(value(), len)
}

/// A sample and the same values in another order.
fn shuffled(len: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = (Vec<f64>, Vec<f64>)> {
    values(len).prop_flat_map(|xs| (Just(xs.clone()), Just(xs).prop_shuffle()))
}

fn extremes(xs: &[f64]) -> (f64, f64) {
    let s = sorted(xs);
    (s[0], s[s.len() - 1])
}

/// `a` and `b` equal up to rounding, relative to the larger of them (and to 1 near zero).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    // 64 cases of at most a few hundred values and a thousand resamples: the whole module runs in
    // a fraction of a second in release.
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_sample_is_any_finite_slice_and_names_its_first_bad_value(
        xs in values(1..=40),
        at in any::<prop::sample::Index>(),
        bad in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY)],
    ) {
        prop_assert_eq!(Sample::new(&xs).map(Sample::as_slice), Ok(&xs[..]));
        let mut ys = xs.clone();
        let i = at.index(ys.len());
        ys[i] = bad;
        ys.push(f64::NAN);
        prop_assert_eq!(Sample::new(&ys), Err(SampleError::NotFinite { index: i }));
    }

    #[test]
    fn the_bootstrap_interval_holds_the_median_within_the_extremes(
        xs in values(2..=40),
        resamples in 200usize..=1000,
        seed in any::<u64>(),
    ) {
        let s = Sample::new(&xs).unwrap();
        let (min, max) = extremes(&xs);
        let m = s.median();
        let (lo, hi) = s.median_ci95(resamples, seed).unwrap();
        prop_assert!(min <= lo && lo <= m && m <= hi && hi <= max, "{min} {lo} {m} {hi} {max}");
        let (m2, lo2, hi2) = s.median_interval().unwrap();
        prop_assert!(min <= lo2 && lo2 <= m2 && m2 <= hi2 && hi2 <= max);
        prop_assert_eq!(m2, m);
        // The same seed, the same interval: what `check` relies on to recompute it.
        prop_assert_eq!(s.median_ci95(resamples, seed), Some((lo, hi)));
        // Every resample's median is a value of the sample or the mean of two.
        let b = bootstrap_medians(&xs, resamples, seed);
        prop_assert_eq!(b.len(), resamples);
        prop_assert!(b.iter().all(|&x| min <= x && x <= max));
    }

    #[test]
    fn more_resamples_keep_the_interval_within_the_extremes(
        xs in values(2..=40),
        few in 1usize..50,
        more in 50usize..=2000,
        seed in any::<u64>(),
    ) {
        let (min, max) = extremes(&xs);
        for r in [few, more] {
            let (lo, hi) = median_ci95(&xs, r, seed).unwrap();
            prop_assert!(min <= lo && lo <= hi && hi <= max, "{r}: {min} {lo} {hi} {max}");
        }
    }

    #[test]
    fn the_grouped_interval_holds_the_median_and_the_bootstraps_interval(
        groups in prop::collection::vec(values(1..=8), 2..=5),
    ) {
        let refs: Vec<&[f64]> = groups.iter().map(Vec::as_slice).collect();
        let m = median(&groups.concat());
        let (lo, hi) = grouped_median_ci95(&refs, m).unwrap();
        prop_assert!(lo <= m && m <= hi, "{lo} {m} {hi}");
        // The t-interval of the group medians only ever widens the two-stage bootstrap's.
        let (blo, bhi) = interval95(&bootstrap_medians_grouped(
            &refs,
            BOOTSTRAP_RESAMPLES,
            BOOTSTRAP_SEED,
        ))
        .unwrap();
        prop_assert!(lo <= blo && bhi <= hi, "{lo} {blo} {bhi} {hi}");
    }

    #[test]
    fn a_percentiles_order_statistic_interval_holds_it_and_moves_with_p(
        xs in values(1..=300),
        p in 0.0..=100.0f64,
        q in 0.0..=100.0f64,
    ) {
        let s = sorted(&xs);
        let (p, q) = (p.min(q), p.max(q));
        let (at_p, at_q) = (percentile_sorted(&s, p), percentile_sorted(&s, q));
        prop_assert!(at_p <= at_q, "p{p} {at_p} > p{q} {at_q}");
        let (cp, cq) = (percentile_ci95(&s, p), percentile_ci95(&s, q));
        if let Some((lo, hi)) = cp {
            prop_assert!(lo <= at_p && at_p <= hi, "p{p}: {lo} {at_p} {hi}");
        }
        if let Some((lo, hi)) = cq {
            prop_assert!(lo <= at_q && at_q <= hi, "p{q}: {lo} {at_q} {hi}");
        }
        // Where both exist, a higher percentile has neither bound lower.
        if let (Some((lp, hp)), Some((lq, hq))) = (cp, cq) {
            prop_assert!(lp <= lq && hp <= hq, "p{p} ({lp}, {hp}), p{q} ({lq}, {hq})");
        }
    }

    #[test]
    fn order_free_statistics_ignore_the_order((xs, ys) in shuffled(1..=60), p in 0.0..=100.0f64) {
        let (a, b) = (Sample::new(&xs).unwrap(), Sample::new(&ys).unwrap());
        prop_assert_eq!(a.median(), b.median());
        prop_assert_eq!(median_in_place(&mut xs.clone()), median_in_place(&mut ys.clone()));
        let (sa, sb) = (a.summary(), b.summary());
        // Sums on the grid are exact, so the mean is too; the deviations from it are not.
        prop_assert_eq!(
            (sa.mean_ns, sa.median_ns, sa.p95_ns, sa.p99_ns, sa.min_ns, sa.max_ns, sa.iterations),
            (sb.mean_ns, sb.median_ns, sb.p95_ns, sb.p99_ns, sb.min_ns, sb.max_ns, sb.iterations)
        );
        prop_assert!(close(sa.stdev_ns, sb.stdev_ns), "{} {}", sa.stdev_ns, sb.stdev_ns);
        prop_assert_eq!(tukey(&xs), tukey(&ys));
        // The order-statistic interval of a sample is that of its sorted values.
        prop_assert_eq!(percentile_ci95(&sorted(&xs), p), percentile_ci95(&sorted(&ys), p));
        match (a.mean_half95(), b.mean_half95()) {
            (Some((ma, ha)), Some((mb, hb))) => {
                prop_assert_eq!(ma, mb);
                prop_assert!(close(ha, hb), "{ha} {hb}");
            }
            (None, None) => prop_assert_eq!(xs.len(), 1),
            other => prop_assert!(false, "{other:?}"),
        }
    }

    #[test]
    fn a_summary_is_ordered_and_a_t_interval_holds_its_mean(xs in values(1..=60)) {
        let s = Sample::new(&xs).unwrap();
        let sum = s.summary();
        prop_assert!(sum.min_ns <= sum.median_ns && sum.median_ns <= sum.p95_ns);
        prop_assert!(sum.p95_ns <= sum.p99_ns && sum.p99_ns <= sum.max_ns);
        prop_assert!(sum.min_ns <= sum.mean_ns && sum.mean_ns <= sum.max_ns);
        prop_assert!(sum.stdev_ns >= 0.0);
        if let Some((m, half)) = s.mean_half95() {
            prop_assert!(half.is_finite() && half >= 0.0 && m - half <= m && m <= m + half);
        }
    }

    #[test]
    fn a_paired_ratio_lies_within_its_interval(
        ours in prop::collection::vec(1u32..1_000_000, 3..=20),
        scale in prop::collection::vec(0.5..2.0f64, 20),
    ) {
        let ours: Vec<f64> = ours.into_iter().map(f64::from).collect();
        let theirs: Vec<f64> = ours.windows(2).zip(&scale).map(|(w, k)| w[0] * k).collect();
        let (r, ci) = paired_ratio(&ours, &theirs).unwrap();
        let (lo, hi) = ci.unwrap();
        // exp of the mean log and of the mean log -+ the half-width: within a rounding of it.
        prop_assert!(lo <= r * (1.0 + 1e-12) && r <= hi * (1.0 + 1e-12), "{lo} {r} {hi}");
    }

    #[test]
    fn wider_inputs_never_narrow_the_next_runs_interval(
        h in 0.0..50.0f64,
        d in 0.0..10.0f64,
        more in 0.0..10.0f64,
    ) {
        let w = next_run_half_width_pct(h, d);
        prop_assert!(w >= 2f64.sqrt() * h * (1.0 - 1e-12));
        prop_assert!(next_run_half_width_pct(h + more, d) >= w);
        prop_assert!(next_run_half_width_pct(h, d + more) >= w);
    }
}

#[test]
fn the_t_quantile_falls_with_the_degrees_of_freedom() {
    // Every df the tables cover and past them: more freedom, a smaller quantile, down to 1.96.
    assert!((1..=40).all(|df| t95(df) >= t95(df + 1)));
    assert_eq!(t95(31), 1.96);
    assert!(t95(0).is_infinite());
}
