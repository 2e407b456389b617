//! The `phases` and `suites` sections: statistics from the samples, the identity composed mean =
//! sum of count x phase mean, resampled percentiles and bootstrap intervals from the fixed seeds.

use super::differs;
use super::problem::Problem;
use super::Intervals;
use crate::compose::{self, delta_pct};
use crate::figures::drift::HostDrift as Drift;
use crate::results::{Form, Phase, Results, SuiteResult as Suite};
use crate::{stats, suite};

/// Every suite's phase counts that no suite file allows.
fn counts(results: &Results) -> Vec<Problem> {
    let mut problems = Vec::new();
    for s in &results.suites {
        for p in s
            .phases
            .iter()
            .filter(|p| i64::from(p.count) > suite::MAX_COUNT)
        {
            problems.push(Problem::bound(format!(
                "suite {} [{}]: {} count {} is out of range 0..={}",
                s.name,
                s.stack,
                p.id(),
                p.count,
                suite::MAX_COUNT
            )));
        }
    }
    problems
}

/// A phase's calls timed in a handshake's state: a key exchange's or a signature's, in the
/// handshake form, with its statistics as its samples give them.
fn situ(problems: &mut Vec<Problem>, name: &str, p: &Phase, si: &crate::results::Situ) {
    use crate::algorithm::Kind;
    if p.form != Form::Handshake || !matches!(p.operation.kind(), Kind::Kem | Kind::Dh | Kind::Sig)
    {
        problems.push(Problem::recomputed(format!(
            "{name}: calls timed in a handshake's state, which only a key exchange's or a signature's handshake form has"
        )));
    }
    // Taken in every process that timed the phase: as many groups as the phase has.
    if si.processes.len() != p.processes.len() {
        problems.push(Problem::recomputed(format!(
            "{name}: situ samples from {} processes but the phase's from {}",
            si.processes.len().max(1),
            p.processes.len().max(1)
        )));
    }
    let grouped: usize = si.processes.iter().sum();
    if !si.processes.is_empty() && grouped != si.samples_ns.len() {
        problems.push(Problem::recomputed(format!(
            "{name}: situ processes hold {grouped} samples but it has {}",
            si.samples_ns.len()
        )));
    }
    let Some(f) = crate::figures::situ(
        si.evict_bytes,
        si.wait_ns,
        si.samples_ns.clone(),
        si.processes.clone(),
    ) else {
        problems.push(Problem::recomputed(format!(
            "{name}: situ figures without samples"
        )));
        return;
    };
    differs(
        problems,
        format!("{name}: situ median_ns"),
        si.median_ns,
        f.median_ns,
    );
    differs(
        problems,
        format!("{name}: situ mean_ns"),
        si.mean_ns,
        f.mean_ns,
    );
    match (si.median_ci95_ns, f.median_ci95_ns) {
        (Some((lo, hi)), Some((l2, h2))) => {
            differs(problems, format!("{name}: situ median_ci95_ns low"), lo, l2);
            differs(
                problems,
                format!("{name}: situ median_ci95_ns high"),
                hi,
                h2,
            );
        }
        (None, None) => {}
        (a, b) => problems.push(Problem::recomputed(format!(
            "{name}: situ median_ci95_ns: stored {a:?} but the samples give {b:?}"
        ))),
    }
}

/// With the composed intervals `intervals` names resampled too.
pub(crate) fn check(results: &Results, intervals: Intervals) -> Vec<Problem> {
    // A count no suite file allows would make the resampling below run for hours: refuse it first.
    let mut problems = counts(results);
    if !problems.is_empty() {
        return problems;
    }
    // The host's drift between processes, from the phases' process medians; every phase's
    // precision adds the run's.
    let drift = crate::figures::drift::host_drift(&results.phases);
    host(&mut problems, results, drift.as_ref());
    let fresh: Vec<Phase> = results
        .phases
        .iter()
        .filter_map(|p| phase(&mut problems, results, drift.as_ref(), p))
        .collect();
    // Each suite's sums and resampled percentiles on its own, the suites shared among the
    // cores; the problems kept in the suites' order.
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let per = results.suites.len().div_ceil(threads).max(1);
    let fresh_ref = &fresh;
    // Each thread asks for derived figures as this one does (recomputed under `derived::fresh`).
    let under = &crate::derived::inherited();
    let sums: Vec<Vec<Problem>> = std::thread::scope(|scope| {
        let parts: Vec<_> = results
            .suites
            .chunks(per)
            .map(|chunk| {
                scope.spawn(move || {
                    under.run(|| {
                        let mut found = Vec::new();
                        for s in chunk {
                            suite_sum(&mut found, results, fresh_ref, s);
                        }
                        found
                    })
                })
            })
            .collect();
        parts
            .into_iter()
            .map(|p| p.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    problems.extend(sums.into_iter().flatten());
    components(&mut problems, results);
    let wanted = match intervals {
        Intervals::None => return problems,
        Intervals::Sampled { seed } => Some(sampled_suites(results, seed)),
        Intervals::All => None,
    };
    resampled_intervals(&mut problems, results, &fresh, wanted.as_deref());
    problems
}

/// The calls per draw below which a suite's composed interval is always resampled: key
/// exchanges, signatures, primitives and records (a full handshake's hash blocks run to hundreds).
const CHEAP_CALLS: u32 = 50;

/// The calls per draw the sampled full handshakes may add, baselines included: a few seconds of
/// two cores for 1,000 worlds of 1,000 draws.
const SAMPLED_CALLS: u32 = 600;

/// The suites `Intervals::Sampled` resamples: every cheap one (`CHEAP_CALLS`), then the others
/// in an order a hash of the seed and each one's name and stored figures sets, while their calls
/// per draw and those of their baselines fit in `SAMPLED_CALLS`. One seed always picks the same
/// suites; `pqprof check` draws a new one each time, so no suite stays unchecked for long and an
/// edited file cannot be fitted to one sample.
pub(crate) fn sampled_suites(results: &Results, seed: u64) -> Vec<bool> {
    let suites = &results.suites;
    let calls = |s: &Suite| s.phases.iter().map(|p| p.count).sum::<u32>();
    let mut wanted: Vec<bool> = suites.iter().map(|s| calls(s) <= CHEAP_CALLS).collect();
    let baseline = |i: usize| compose::baseline_of(suites, i);
    let mut dear: Vec<(u64, usize)> = (0..suites.len())
        .filter(|&i| !wanted[i])
        .map(|i| (figures_hash(seed, &suites[i]), i))
        .collect();
    dear.sort_unstable();
    let mut spent = 0;
    for (_, i) in dear {
        let with_baseline = baseline(i).filter(|&j| !wanted[j] && j != i);
        let cost = calls(&suites[i]) + with_baseline.map_or(0, |j| calls(&suites[j]));
        // The first in the order is taken whatever it costs, so no suite is out of every sample.
        if spent > 0 && spent + cost > SAMPLED_CALLS {
            continue;
        }
        spent += cost;
        wanted[i] = true;
        if let Some(j) = with_baseline {
            wanted[j] = true;
        }
    }
    wanted
}

/// FNV-1a over the seed and a suite's name, stack and stored figures.
fn figures_hash(seed: u64, s: &Suite) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut add = |bytes: &[u8]| {
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    add(&seed.to_le_bytes());
    add(s.name.as_bytes());
    add(s.stack.as_bytes());
    let c = &s.composed;
    for x in [c.mean_ns, c.median_ns, c.p95_ns, c.p99_ns] {
        add(&x.to_bits().to_le_bytes());
    }
    if let Some((lo, hi)) = c.median_ci95_ns {
        add(&lo.to_bits().to_le_bytes());
        add(&hi.to_bits().to_le_bytes());
    }
    h
}

/// The run's host drift, its factors and its common mode's half-width, from the phases.
fn host(problems: &mut Vec<Problem>, results: &Results, drift: Option<&Drift>) {
    if let Some(ps) = &results.process_samples {
        let stored = (ps.host_drift_pct, &ps.host_factors);
        match (drift, stored) {
            (None, (None, f)) if f.is_empty() => {}
            (Some(d), (Some(pct), f)) => {
                differs(problems, "process_samples host_drift_pct".into(), pct, d.rsd_pct);
                if f.len() != d.factors.len() {
                    problems.push(Problem::incomplete(format!(
                        "process_samples host_factors: {} stored, the phases give {}",
                        f.len(),
                        d.factors.len()
                    )));
                }
                for (i, (a, b)) in f.iter().zip(&d.factors).enumerate() {
                    match (a, b) {
                        (Some(a), Some(b)) => differs(
                            problems,
                            format!("process_samples host_factors[{i}]"),
                            *a,
                            *b,
                        ),
                        (None, None) => {}
                        _ => problems.push(Problem::recomputed(format!(
                            "process_samples host_factors[{i}]: stored {a:?}, the phases give {b:?}"
                        ))),
                    }
                }
            }
            (d, (stored, _)) => problems.push(Problem::recomputed(format!(
                "process_samples host_drift_pct: {stored:?} stored, the phases' processes give {:?}",
                d.map(|d| d.rsd_pct)
            ))),
        }
    }
    if let Some(stored) = results
        .process_samples
        .as_ref()
        .and_then(|ps| ps.host_half95_pct)
    {
        match drift.and_then(|d| crate::figures::drift::host_half95_pct(&d.factors)) {
            Some(h) => differs(
                problems,
                "process_samples host_half95_pct".into(),
                stored,
                h,
            ),
            None => problems.push(Problem::recomputed(format!(
                "process_samples host_half95_pct: {stored} stored, the phases give no common mode"
            ))),
        }
    }
}

/// A phase's processes: their ids, their sample counts, and the run's drift in its precision.
fn processes(problems: &mut Vec<Problem>, results: &Results, drift: Option<&Drift>, p: &Phase) {
    let name = format!("phase {}", p.id());
    if !p.process_ids.is_empty() {
        let count = results.process_samples.as_ref().map_or(0, |ps| ps.count);
        if p.process_ids.len() != p.processes.len() {
            problems.push(Problem::incomplete(format!(
                "{name}: {} process ids for {} processes",
                p.process_ids.len(),
                p.processes.len()
            )));
        }
        if !p.process_ids.windows(2).all(|w| w[0] < w[1])
            || p.process_ids.iter().any(|&i| i >= count)
        {
            problems.push(Problem::bound(format!(
                "{name}: process ids {:?} are not increasing below the run's {count} processes",
                p.process_ids
            )));
        }
    }
    // A phase whose next run's half-width is recorded adds the run's drift, if it has one.
    let run_drift = drift.map(|d| d.rsd_pct);
    if let Some(pr) = p.precision.as_ref().filter(|pr| pr.next_run_pct.is_some()) {
        match (pr.host_drift_pct, run_drift) {
            (Some(a), Some(b)) => {
                differs(problems, format!("{name}: precision host_drift_pct"), a, b);
            }
            (None, None) => {}
            (a, b) => problems.push(Problem::recomputed(format!(
                "{name}: precision host_drift_pct {a:?} is not the run's {b:?}"
            ))),
        }
    }
    if !p.processes.is_empty() && p.processes.iter().sum::<usize>() != p.samples_ns.len() {
        problems.push(Problem::incomplete(format!(
            "{name}: processes add up to {} samples, the phase has {}",
            p.processes.iter().sum::<usize>(),
            p.samples_ns.len()
        )));
    }
}

/// One phase's figures recomputed from its samples; the phase with its fresh statistics, for the
/// suites' identity, unless it has no samples.
fn phase(
    problems: &mut Vec<Problem>,
    results: &Results,
    drift: Option<&Drift>,
    p: &Phase,
) -> Option<Phase> {
    let name = format!("phase {}", p.id());
    // The interval without the host's common mode, from the run's factors.
    if let Some((lo, hi)) = p.median_ci95_own_ns {
        match drift.and_then(|d| crate::figures::drift::own_interval(p, &d.factors)) {
            Some((a, b)) => {
                differs(problems, format!("{name}: median_ci95_own_ns low"), lo, a);
                differs(problems, format!("{name}: median_ci95_own_ns high"), hi, b);
            }
            None => problems.push(Problem::recomputed(format!(
                "{name}: an interval without the host's common mode, which its processes and the run's factors do not give"
            ))),
        }
    }
    processes(problems, results, drift, p);
    if let Some(si) = &p.situ {
        situ(problems, &name, p, si);
    }
    let Some(f) = stats::figures_grouped(&p.samples_ns, &p.processes) else {
        differs(
            problems,
            format!("{name}: iterations"),
            p.stats.iterations as f64,
            0.0,
        );
        return None;
    };
    let (a, s) = (&p.stats, &f.summary);
    for (what, stored, fresh) in [
        ("mean_ns", a.mean_ns, s.mean_ns),
        ("median_ns", a.median_ns, s.median_ns),
        ("p95_ns", a.p95_ns, s.p95_ns),
        ("p99_ns", a.p99_ns, s.p99_ns),
        ("stdev_ns", a.stdev_ns, s.stdev_ns),
        ("min_ns", a.min_ns, s.min_ns),
        ("max_ns", a.max_ns, s.max_ns),
        ("iterations", a.iterations as f64, s.iterations as f64),
        ("ops_per_sec", p.ops_per_sec, f.ops_per_sec),
        ("rsd_pct", p.rsd_pct, f.rsd_pct),
    ] {
        differs(problems, format!("{name}: {what}"), stored, fresh);
    }
    if p.outliers != f.outliers {
        problems.push(Problem::recomputed(format!(
            "{name}: outliers: stored {:?} but the samples give {:?}",
            p.outliers, f.outliers
        )));
    }
    if let (Some((lo, hi)), Some((l2, h2))) = (p.median_ci95_ns, f.median_ci95) {
        differs(problems, format!("{name}: median_ci95_ns low"), lo, l2);
        differs(problems, format!("{name}: median_ci95_ns high"), hi, h2);
    }
    if let Some(pr) = &p.precision {
        super::precision::check(
            problems,
            &name,
            pr,
            f.median_ci95,
            f.summary.median_ns,
            super::precision::Batches {
                count: p.processes.len().max(1),
                what: "processes",
                confirm: crate::figures::confirm_batches(
                    results.run.iterations_policy.processes.unwrap_or(1),
                ),
            },
        );
    }
    if let Some(ins) = &p.instructions {
        problems.extend(super::instructions::check(&name, ins));
    }
    let mut q = p.clone();
    q.stats = f.summary;
    Some(q)
}

/// A suite's identity (composed mean = sum of count x phase mean), its composed percentiles,
/// instructions and difference against its baseline, from the fresh phases.
fn suite_sum(problems: &mut Vec<Problem>, results: &Results, fresh: &[Phase], s: &Suite) {
    let name = format!("suite {} [{}]", s.name, s.stack);
    let Some(terms) = compose::identity_terms(&s.phases, fresh) else {
        problems.push(Problem::incomplete(format!(
            "{name}: a phase it lists is not in phases[]"
        )));
        return;
    };
    let sum: f64 = terms
        .iter()
        .map(|(part, phase)| compose::identity_term(part, phase))
        .sum();
    differs(
        problems,
        format!("{name}: composed mean_ns (identity: sum of count x phase mean)"),
        s.composed.mean_ns,
        sum,
    );
    if let Some(ins) = s.instructions {
        match compose::instructions(&s.phases, fresh) {
            Some(c) => differs(
                problems,
                format!("{name}: instructions (sum of count x instructions per call)"),
                ins,
                c,
            ),
            None => problems.push(Problem::incomplete(format!(
                "{name}: instructions stored but a phase was not counted"
            ))),
        }
    }
    match compose::compose(&s.phases, fresh) {
        Ok(c) => {
            for (what, stored, fresh) in [
                ("composed median_ns", s.composed.median_ns, c.median_ns),
                ("composed p95_ns", s.composed.p95_ns, c.p95_ns),
                ("composed p99_ns", s.composed.p99_ns, c.p99_ns),
                ("ops_per_sec", s.ops_per_sec, stats::ops_per_sec(sum)),
                ("tail", s.tail, c.p99_ns / c.median_ns),
            ] {
                differs(problems, format!("{name}: {what}"), stored, fresh);
            }
        }
        Err(e) => problems.push(Problem::incomplete(format!("{name}: {e}"))),
    }
    if let (Some(base), Some(d)) = (&s.baseline, s.delta_vs_baseline_pct) {
        match results.suite(base, &s.stack) {
            Some(b) => differs(
                problems,
                format!("{name}: delta_vs_baseline_pct"),
                d,
                delta_pct(s.composed.median_ns, b.composed.median_ns),
            ),
            None => problems.push(Problem::incomplete(format!(
                "{name}: baseline {base} is not in this stack"
            ))),
        }
    }
}

/// Each component's handshake and primitive medians and their difference, from the phases.
fn components(problems: &mut Vec<Problem>, results: &Results) {
    for c in &results.components {
        let name = format!("component {}", c.id());
        let hs = results.phase(&c.id());
        let prim = results.phase(&c.id().with_form(Form::Primitive));
        let (Some(h), Some(p)) = (hs, prim) else {
            problems.push(Problem::incomplete(format!(
                "{name}: both forms must be in phases[]"
            )));
            continue;
        };
        for (what, stored, fresh) in [
            (
                "handshake_median_ns",
                c.handshake_median_ns,
                h.stats.median_ns,
            ),
            (
                "primitive_median_ns",
                c.primitive_median_ns,
                p.stats.median_ns,
            ),
            (
                "setup_ns (handshake - primitive)",
                c.setup_ns,
                c.handshake_median_ns - c.primitive_median_ns,
            ),
        ] {
            differs(problems, format!("{name}: {what}"), stored, fresh);
        }
    }
}

/// The wanted suites' composed intervals and their differences' intervals (all where `wanted` is
/// none), resampled from the fresh phases.
fn resampled_intervals(
    problems: &mut Vec<Problem>,
    results: &Results,
    fresh: &[Phase],
    wanted: Option<&[bool]>,
) {
    for (s, found) in
        results
            .suites
            .iter()
            .zip(compose::intervals_of(&results.suites, fresh, wanted))
    {
        let Some((ci, dci)) = found else { continue };
        let name = format!("suite {} [{}]", s.name, s.stack);
        let pairs = [
            ("composed median_ci95_ns", s.composed.median_ci95_ns, ci),
            ("delta_ci95_pct", s.delta_ci95_pct, dci),
        ];
        for (what, stored, fresh) in pairs {
            if let (Some(stored), Some(ci)) = (stored, fresh) {
                differs(problems, format!("{name}: {what} low"), stored.0, ci.0);
                differs(problems, format!("{name}: {what} high"), stored.1, ci.1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Intervals, Problem};
    use crate::check::Kind;
    use crate::results::{Form, Results};

    /// The Xeon's committed make run, with every phase's processes named as the run made them
    /// (the first three processes measured every phase, the fourth every phase it measured).
    fn with_process_ids() -> Results {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../results/archive/vm-20261201T150422Z-5d798a.json"
        );
        let mut r = crate::results::read(std::path::Path::new(path)).unwrap();
        // A dozen phases measured in several processes are enough for every process's factor,
        // and keep each `check` below short (under qemu too); the suites went with the others.
        r.phases.retain(|p| p.processes.len() > 1);
        r.phases.truncate(12);
        r.suites.clear();
        for p in &mut r.phases {
            p.process_ids = (0..p.processes.len()).collect();
        }
        let d = crate::figures::drift::host_drift(&r.phases).unwrap();
        let ps = r.process_samples.as_mut().unwrap();
        ps.host_factors = d.factors.clone();
        ps.host_drift_pct = Some(d.rsd_pct);
        r
    }

    /// The first phase with a precision record, given `drift` and the next-run half-width that
    /// goes with it (consistent in itself, whatever the run's drift).
    fn set_phase_drift(r: &mut Results, drift: Option<f64>) {
        let p = r.phases.iter_mut().find(|p| p.precision.is_some()).unwrap();
        let pr = p.precision.as_mut().unwrap();
        pr.host_drift_pct = drift;
        pr.next_run_pct = Some(crate::stats::next_run_half_width_pct(
            pr.half_width_pct,
            drift.unwrap_or(0.0),
        ));
    }

    fn drift_problems(r: &Results) -> Vec<Problem> {
        super::check(r, Intervals::All)
            .into_iter()
            .filter(|p| p.text.contains("host_") || p.text.contains("process ids"))
            .collect()
    }

    #[test]
    fn the_sampled_check_takes_every_cheap_suite_and_dear_ones_within_their_calls() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../results/archive/vm-20261201T150422Z-5d798a.json"
        );
        let r = crate::results::read(std::path::Path::new(path)).unwrap();
        let calls = |i: usize| r.suites[i].phases.iter().map(|p| p.count).sum::<u32>();
        let wanted = super::sampled_suites(&r, 7);
        assert_eq!(wanted.len(), r.suites.len());
        let dear: Vec<usize> = (0..r.suites.len())
            .filter(|&i| calls(i) > super::CHEAP_CALLS)
            .collect();
        assert!((0..r.suites.len()).all(|i| wanted[i] || calls(i) > super::CHEAP_CALLS));
        let taken: Vec<usize> = dear.iter().copied().filter(|&i| wanted[i]).collect();
        let spent: u32 = taken.iter().map(|&i| calls(i)).sum();
        assert!(
            !taken.is_empty() && taken.len() < dear.len(),
            "{taken:?} of {dear:?}"
        );
        // Within the budget, or the one pair (a suite and its baseline) first in the order.
        let dearest_pair = dear
            .iter()
            .map(|&i| calls(i) + crate::compose::baseline_of(&r.suites, i).map_or(0, calls))
            .max()
            .unwrap();
        assert!(spent <= super::SAMPLED_CALLS.max(dearest_pair), "{spent}");
        // Another seed picks other suites: every dear one is picked by some seed.
        let mut ever = vec![false; r.suites.len()];
        for seed in 0..200 {
            for (e, w) in ever.iter_mut().zip(super::sampled_suites(&r, seed)) {
                *e |= w;
            }
        }
        assert!(dear.iter().all(|&i| ever[i]), "a dear suite no seed picks");
    }

    #[test]
    fn only_the_full_check_resamples_the_composed_intervals() {
        // One suite of the committed run and the phases it is made of: a short check.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../results/archive/vm-20261201T150422Z-5d798a.json"
        );
        let mut r = crate::results::read(std::path::Path::new(path)).unwrap();
        r.suites.truncate(1);
        let ids: Vec<_> = r.suites[0].phases.iter().map(|p| p.id()).collect();
        r.phases.retain(|p| ids.iter().any(|id| p.is(id)));
        let fresh = crate::compose::intervals(&r.suites, &r.phases);
        for (s, (ci, dci)) in r.suites.iter_mut().zip(fresh) {
            (s.composed.median_ci95_ns, s.delta_ci95_pct) = (ci, dci);
        }
        let interval = |ps: &[Problem]| ps.iter().any(|p| p.text.contains("median_ci95_ns"));
        assert!(!interval(&super::check(&r, Intervals::All)));
        let s = &mut r.suites[0];
        s.composed.median_ci95_ns = s.composed.median_ci95_ns.map(|(lo, hi)| (lo, hi * 2.0));
        assert!(interval(&super::check(&r, Intervals::All)));
        assert!(!interval(&super::check(&r, Intervals::None)));
    }

    #[test]
    fn the_host_part_and_each_phases_own_are_recomputed() {
        let mut r = with_process_ids();
        let d = crate::figures::drift::host_drift(&r.phases).unwrap();
        for p in &mut r.phases {
            p.median_ci95_own_ns = crate::figures::drift::own_interval(p, &d.factors);
        }
        r.process_samples.as_mut().unwrap().host_half95_pct =
            crate::figures::drift::host_half95_pct(&d.factors);
        assert_eq!(drift_problems(&r), Vec::<Problem>::new());
        // Taken out, the common mode leaves each phase no wider than it was.
        let narrower = r
            .phases
            .iter()
            .filter(|p| {
                let (own, all) = (p.median_ci95_own_ns.unwrap(), p.median_ci95_ns.unwrap());
                own.1 - own.0 <= all.1 - all.0 + 1e-6
            })
            .count();
        assert!(
            narrower * 2 >= r.phases.len(),
            "{narrower} of {}",
            r.phases.len()
        );
        let mut moved = r.clone();
        moved.phases[0].median_ci95_own_ns.as_mut().unwrap().0 -= 100.0;
        assert!(super::check(&moved, Intervals::All)
            .iter()
            .any(|p| p.is(Kind::Recomputed, "median_ci95_own_ns low")));
        let mut host = r.clone();
        *host
            .process_samples
            .as_mut()
            .unwrap()
            .host_half95_pct
            .as_mut()
            .unwrap() *= 2.0;
        assert!(drift_problems(&host)
            .iter()
            .any(|p| p.is(Kind::Recomputed, "host_half95_pct")));
        // A phase of one process has no interval of its own to store.
        let mut one = r;
        one.phases[0].processes = vec![one.phases[0].samples_ns.len()];
        one.phases[0].process_ids = vec![0];
        assert!(super::check(&one, Intervals::All)
            .iter()
            .any(|p| p.is(Kind::Recomputed, "do not give")));
    }

    #[test]
    fn a_phases_calls_in_a_handshakes_state_are_recomputed_and_kept_to_its_kinds() {
        let r = with_process_ids();
        let situ_problems = |r: &Results| -> Vec<Problem> {
            super::check(r, Intervals::None)
                .into_iter()
                .filter(|p| p.text.contains("situ") || p.text.contains("handshake's state"))
                .collect()
        };
        let i = r
            .phases
            .iter()
            .position(|p| {
                p.form == Form::Handshake
                    && matches!(
                        p.operation.kind(),
                        crate::algorithm::Kind::Kem
                            | crate::algorithm::Kind::Dh
                            | crate::algorithm::Kind::Sig
                    )
            })
            .expect("a key exchange or signature phase");
        // Two calls in state from each of the phase's processes.
        let k = r.phases[i].processes.len();
        assert!(k > 1);
        let samples: Vec<u64> = (0..2 * k as u64).map(|x| 10 + 7 * x % 50).collect();
        let mut good = r.clone();
        good.phases[i].situ = crate::figures::situ(1 << 20, 100_000, samples, vec![2; k]);
        assert_eq!(situ_problems(&good), Vec::<Problem>::new());
        // From fewer processes than the phase's, with their samples as many.
        let mut fewer = good.clone();
        let mut groups = vec![2; k - 2];
        groups.push(4);
        fewer.phases[i].situ.as_mut().unwrap().processes = groups;
        assert!(situ_problems(&fewer).iter().any(|p| p.is(
            Kind::Recomputed,
            &format!("from {} processes but the phase's from {k}", k - 1)
        )));
        let mut moved = good.clone();
        moved.phases[i].situ.as_mut().unwrap().median_ns += 1.0;
        assert!(situ_problems(&moved)
            .iter()
            .any(|p| p.is(Kind::Recomputed, "situ median_ns")));
        let mut short = good.clone();
        let mut groups = vec![2; k];
        groups[0] = 1;
        short.phases[i].situ.as_mut().unwrap().processes = groups;
        assert!(situ_problems(&short).iter().any(|p| p.is(
            Kind::Recomputed,
            &format!("hold {} samples but it has {}", 2 * k - 1, 2 * k)
        )));
        // The primitive form never has them.
        let mut prim = good;
        prim.phases[i].form = Form::Primitive;
        assert!(situ_problems(&prim)
            .iter()
            .any(|p| p.is(Kind::Recomputed, "only a key exchange's or a signature's")));
    }

    #[test]
    fn the_host_drift_is_recomputed_from_the_phases_processes() {
        let r = with_process_ids();
        assert_eq!(drift_problems(&r), Vec::<Problem>::new());
        let mut moved = r.clone();
        *moved
            .process_samples
            .as_mut()
            .unwrap()
            .host_drift_pct
            .as_mut()
            .unwrap() += 0.5;
        assert!(drift_problems(&moved)[0].is(Kind::Recomputed, "host_drift_pct"));
        let mut short = r.clone();
        short.phases[0].process_ids.pop();
        assert!(drift_problems(&short)
            .iter()
            .any(|p| p.is(Kind::Incomplete, "process ids")));
        // A phase whose precision names another drift than the run's.
        let mut other = r;
        set_phase_drift(&mut other, Some(9.0));
        let problems = drift_problems(&other);
        assert!(
            problems
                .iter()
                .any(|p| p.is(Kind::Recomputed, "host_drift_pct")),
            "{problems:?}"
        );
        // A phase whose drift was dropped, its next-run half-width narrowed to match.
        let mut dropped = with_process_ids();
        set_phase_drift(&mut dropped, None);
        let problems = drift_problems(&dropped);
        assert!(
            problems
                .iter()
                .any(|p| p.is(Kind::Recomputed, "is not the run's")),
            "{problems:?}"
        );
        // The run's drift dropped.
        let mut none = with_process_ids();
        none.process_samples.as_mut().unwrap().host_drift_pct = None;
        assert!(!drift_problems(&none).is_empty());
        // Ids out of order.
        let mut order = with_process_ids();
        let q = order
            .phases
            .iter_mut()
            .find(|p| p.process_ids.len() > 1)
            .unwrap();
        q.process_ids.swap(0, 1);
        assert!(drift_problems(&order)
            .iter()
            .any(|p| p.is(Kind::Bound, "not increasing")));
    }
}
