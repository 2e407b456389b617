//! Suite figures from phase figures, and the identity that ties them together.
//!
//! Composed mean = sum over phases of count x phase mean. That is the identity `check` enforces.
//! Composed median and percentiles cannot be summed, so they come from resampled handshakes: each
//! draw picks, for every occurrence of every phase (count times), one of that phase's recorded
//! samples uniformly at random, and adds them up. With a fixed seed anyone can recompute them from
//! the raw samples in the JSON.

use crate::results::{Composed, Operation, Phase, SuitePhase, SuiteResult};
use crate::stats::{self, SplitMix64};
use anyhow::{anyhow, Result};

pub(crate) const RESAMPLES: usize = 10_000;
pub(crate) const SEED: u64 = 0x7071_7072_6f66; // "pqprof"

/// A suite's composed mean term by term, as the identity adds it: each part it lists with the
/// measured phase it is made of (looked up in `phases`); none where a part's phase is missing.
pub fn identity_terms<'a>(
    parts: &'a [SuitePhase],
    phases: &'a [Phase],
) -> Option<Vec<(&'a SuitePhase, &'a Phase)>> {
    parts
        .iter()
        .map(|p| crate::results::find_phase(phases, &p.id()).map(|q| (p, q)))
        .collect()
}

/// One term of the identity: a part's count times its phase's mean, ns.
pub fn identity_term(part: &SuitePhase, phase: &Phase) -> f64 {
    f64::from(part.count) * phase.stats.mean_ns
}

/// Composes a suite from its phases (looked up in `phases`).
pub fn compose(parts: &[SuitePhase], phases: &[Phase]) -> Result<Composed> {
    let found: Vec<(&Phase, u32)> = parts
        .iter()
        .map(|p| {
            crate::results::find_phase(phases, &p.id())
                .map(|q| (q, p.count))
                .ok_or_else(|| anyhow!("no measured phase {}", p.id()))
        })
        .collect::<Result<_>>()?;
    let mean_ns = found
        .iter()
        .map(|(q, c)| f64::from(*c) * q.stats.mean_ns)
        .sum();
    let draws = resample(&found, RESAMPLES, SEED);
    let sorted = stats::sorted(&draws);
    Ok(Composed {
        mean_ns,
        median_ns: stats::percentile_sorted(&sorted, 50.0),
        p95_ns: stats::percentile_sorted(&sorted, 95.0),
        p99_ns: stats::percentile_sorted(&sorted, 99.0),
        resamples: RESAMPLES,
        seed: SEED,
        median_ci95_ns: None,
        ci_worlds: CI_RESAMPLES,
        ci_draws: CI_DRAWS,
        ci_by_process: true,
    })
}

/// Composed instructions: sum of count x instructions per call, if every phase was counted.
pub fn instructions(parts: &[SuitePhase], phases: &[Phase]) -> Option<f64> {
    parts
        .iter()
        .map(|p| {
            crate::results::find_phase(phases, &p.id())
                .and_then(|q| q.instructions.as_ref()?.ir())
                .map(|ir| f64::from(p.count) * ir)
        })
        .sum()
}

/// Instructions per call of a phase and its 95% half-width from the per-call counts (`None`
/// without them: results counted before per-call dumps).
pub(crate) fn phase_instructions_half95(p: &Phase) -> Option<(f64, f64)> {
    let ins = p.instructions.as_ref()?;
    let xs: Vec<f64> = ins.ir_calls.iter().map(|&x| x as f64).collect();
    stats::mean_half95(&xs)
}

/// The half-width of composed instructions' 95% interval: the phases' half-widths times their
/// counts, in quadrature (the phases are counted independently). `None` if a phase lacks per-call counts.
pub(crate) fn instructions_half95(parts: &[SuitePhase], phases: &[Phase]) -> Option<f64> {
    let sq: Option<f64> = parts
        .iter()
        .map(|p| {
            crate::results::find_phase(phases, &p.id())
                .and_then(phase_instructions_half95)
                .map(|(_, h)| (f64::from(p.count) * h).powi(2))
        })
        .sum();
    sq.map(f64::sqrt)
}

fn resample(parts: &[(&Phase, u32)], n: usize, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64(seed);
    (0..n)
        .map(|_| {
            let mut sum = 0u64;
            for (phase, count) in parts {
                for _ in 0..*count {
                    let s = &phase.samples_ns;
                    if !s.is_empty() {
                        sum += s[rng.below(s.len())];
                    }
                }
            }
            sum as f64
        })
        .collect()
}

/// The 95% half-width of the composed difference `a - b` (two suites of one stack): the phases
/// both use equally cancel, and each phase whose count differs adds its median's half-width
/// (`Phase::median_ci95_ns`, which holds the spread between the run's processes) times the
/// difference in count, in quadrature. Quadrature treats the phases as independent; a drift of
/// the host that moves a phase of `a` and one of `b` alike would partly cancel, so the interval
/// errs wide. With `in_state` (the difference along the flows' critical paths), each phase's
/// interval is that of the calls the flow composes (`flow::in_state`: in a handshake's state where
/// the run timed them so). `None` where a differing phase is missing or has no interval.
pub(crate) fn delta_half95_ns(
    a: &[SuitePhase],
    b: &[SuitePhase],
    phases: &[Phase],
    in_state: bool,
) -> Option<f64> {
    let mut counts: Vec<(crate::results::PhaseId, f64)> = Vec::new();
    for (parts, sign) in [(a, 1.0), (b, -1.0)] {
        for p in parts {
            let id = p.id();
            match counts.iter_mut().find(|(x, _)| *x == id) {
                Some(c) => c.1 += sign * f64::from(p.count),
                None => counts.push((id, sign * f64::from(p.count))),
            }
        }
    }
    let mut sq = 0.0;
    for (id, n) in counts.iter().filter(|(_, n)| *n != 0.0) {
        let p = crate::results::find_phase(phases, id)?;
        let (lo, hi) = if in_state {
            crate::flow::in_state(p).1?
        } else {
            p.median_ci95_own_ns.or(p.median_ci95_ns)?
        };
        sq += (n * (hi - lo) / 2.0).powi(2);
    }
    Some(sq.sqrt())
}

/// What the composition predicts of a connection's difference between two suites of one stack:
/// along the critical path where both have a flow (`SuiteResult::flow`), else the difference of
/// the composed medians (both sides' calls together).
pub fn predicted_difference(a: &SuiteResult, b: &SuiteResult) -> f64 {
    match (&a.flow, &b.flow) {
        (Some(x), Some(y)) => x.latency_ns - y.latency_ns,
        _ => a.composed.median_ns - b.composed.median_ns,
    }
}

/// Bootstrap worlds and draws per world behind the composed intervals. 1,000 worlds put 25 of
/// them beyond each 95% bound (200 gave 5). The draws (every call of every suite, per world) are
/// most of `check`'s time and of the run step's pooling, which keeps their time out of its
/// measuring (`intervals_seconds`). The draws add their own noise to each world's median, so the
/// interval errs wide, not narrow.
pub(crate) const CI_RESAMPLES: usize = 1000;
pub(crate) const CI_DRAWS: usize = 1000;

/// Per suite, the composed median of every bootstrap world: in world `b` every phase is
/// resampled with replacement once (shared by all suites, so a suite and its baseline move
/// together), then `CI_DRAWS` handshakes are drawn from the resampled phases. Each world has its
/// own seed, so the result does not depend on how many threads share the work.
///
/// `wanted` picks the suites to resample, as in `bootstrap_medians_by_process`.
pub(crate) fn bootstrap_medians(
    suites: &[SuiteResult],
    phases: &[Phase],
    worlds: usize,
    draws_per_world: usize,
    wanted: Option<&[bool]>,
) -> Vec<Vec<f64>> {
    let (index, used) = suite_index(suites, phases);
    let Subset {
        wanted,
        needed,
        steps_per_draw,
    } = Subset::of(&index, phases, wanted);
    let world_medians = |b: usize, world: &mut Vec<Vec<u64>>, draws: &mut Vec<f64>| -> Vec<f64> {
        let mut rng = SplitMix64(stats::BOOTSTRAP_SEED ^ (b as u64).wrapping_mul(0x9E37_79B9));
        for (((w, p), u), need) in world.iter_mut().zip(phases).zip(&used).zip(&needed) {
            if !*u {
                continue;
            }
            // Measured in several processes: the processes are drawn first, then each drawn one's
            // samples (stats::bootstrap_medians_grouped), so a world moves as a next run would.
            match crate::stats::groups(&p.samples_ns, &p.processes) {
                Some(g) if g.len() > 1 && g.iter().all(|x| !x.is_empty()) => {
                    w.clear();
                    for _ in 0..g.len() {
                        let one = g[rng.below(g.len())];
                        if !*need {
                            rng.skip(one.len() as u64);
                            continue;
                        }
                        for _ in 0..one.len() {
                            w.push(one[rng.below(one.len())]);
                        }
                    }
                }
                _ if !*need => rng.skip(w.len() as u64),
                _ => {
                    for x in w.iter_mut() {
                        *x = p.samples_ns[rng.below(p.samples_ns.len())];
                    }
                }
            }
        }
        index
            .iter()
            .zip(&wanted)
            .zip(&steps_per_draw)
            .map(|((parts, want), steps)| {
                if !*want {
                    rng.skip(steps * draws.len() as u64);
                    return f64::NAN;
                }
                for d in draws.iter_mut() {
                    *d = draw(parts, |pi| world[pi].as_slice(), &mut rng);
                }
                stats::median_in_place(draws)
            })
            .collect()
    };
    let fresh =
        || -> Vec<Vec<u64>> { phases.iter().map(|p| vec![0; p.samples_ns.len()]).collect() };
    let mut out = per_suite(suites.len(), worlds, draws_per_world, fresh, &world_medians);
    Subset::clear_unwanted(&mut out, &wanted);
    out
}

/// Which suites a resampling computes (`wanted`, one per suite: all where none is given), the
/// phases those draw from (`needed`: the others' resamples are stepped over), and the
/// generator's steps one draw of each suite takes (one per call of a phase with samples), to step
/// over the suites not wanted.
struct Subset {
    wanted: Vec<bool>,
    needed: Vec<bool>,
    steps_per_draw: Vec<u64>,
}

impl Subset {
    fn of(index: &[Vec<(usize, u32)>], phases: &[Phase], wanted: Option<&[bool]>) -> Subset {
        let wanted: Vec<bool> = (0..index.len())
            .map(|i| wanted.is_none_or(|w| w.get(i).copied().unwrap_or(false)))
            .collect();
        let needed = (0..phases.len())
            .map(|i| {
                index
                    .iter()
                    .zip(&wanted)
                    .any(|(parts, w)| *w && parts.iter().any(|(pi, _)| *pi == i))
            })
            .collect();
        let steps_per_draw = index
            .iter()
            .map(|parts| {
                parts
                    .iter()
                    .filter(|(pi, _)| !phases[*pi].samples_ns.is_empty())
                    .map(|(_, count)| u64::from(*count))
                    .sum()
            })
            .collect();
        Subset {
            wanted,
            needed,
            steps_per_draw,
        }
    }

    /// The lists of the suites not wanted emptied (their worlds hold placeholders).
    fn clear_unwanted(out: &mut [Vec<f64>], wanted: &[bool]) {
        for (list, want) in out.iter_mut().zip(wanted) {
            if !*want {
                list.clear();
            }
        }
    }
}

/// One composed handshake: every call of every phase (`parts`: index, count) drawn from that
/// phase's samples in the world.
fn draw<'a>(
    parts: &[(usize, u32)],
    samples: impl Fn(usize) -> &'a [u64],
    rng: &mut SplitMix64,
) -> f64 {
    let mut sum = 0u64;
    for &(pi, count) in parts {
        let w = samples(pi);
        // The draws dominate `check` (hash.block counts run to hundreds), so the loop holds no
        // test per draw; an empty phase draws nothing, as before.
        let n = w.len();
        if n == 0 {
            continue;
        }
        for _ in 0..count {
            sum += w[rng.below(n)];
        }
    }
    sum as f64
}

/// Each suite's phases as (index into `phases`, count), a phase not measured left out; and which
/// phases some suite uses (the others are not resampled).
fn suite_index(suites: &[SuiteResult], phases: &[Phase]) -> (Vec<Vec<(usize, u32)>>, Vec<bool>) {
    let index: Vec<Vec<(usize, u32)>> = suites
        .iter()
        .map(|s| {
            s.phases
                .iter()
                .filter_map(|sp| {
                    let id = sp.id();
                    phases.iter().position(|q| q.is(&id)).map(|i| (i, sp.count))
                })
                .collect()
        })
        .collect();
    let used = (0..phases.len())
        .map(|i| index.iter().flatten().any(|(pi, _)| *pi == i))
        .collect();
    (index, used)
}

/// Every world's suite medians (`world_medians(b, scratch, draws)`), the worlds shared among the
/// cores, then turned into each suite's list over the worlds. Each world has its own seed, so the
/// result does not depend on how many threads share the work.
fn per_suite<W>(
    suites: usize,
    worlds: usize,
    draws_per_world: usize,
    fresh: impl Fn() -> W + Sync,
    world_medians: &(impl Fn(usize, &mut W, &mut Vec<f64>) -> Vec<f64> + Sync),
) -> Vec<Vec<f64>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let fresh = &fresh;
    let per_world: Vec<Vec<f64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let mut world = fresh();
                    let mut draws = vec![0.0; draws_per_world];
                    (t..worlds)
                        .step_by(threads)
                        .map(|b| (b, world_medians(b, &mut world, &mut draws)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<(usize, Vec<f64>)> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect();
        all.sort_by_key(|(b, _)| *b);
        all.into_iter().map(|(_, m)| m).collect()
    });
    (0..suites)
        .map(|si| per_world.iter().map(|w| w[si]).collect())
        .collect()
}

/// `bootstrap_medians` with the run's processes drawn once per world for every phase, and each
/// drawn handshake made in one of them (files from 2026-12-03 on, `Composed::ci_by_process`).
///
/// A world draws K of the K processes some suite's phase was measured in, with replacement; each
/// phase's samples are resampled
/// within each drawn process (a phase not measured in one, a precision batch's, takes one of its
/// own processes instead). A handshake draw then picks one of the K slots, the same slot for every
/// suite at the same draw, and draws every call of every phase from that slot. So a slow process
/// slows a suite and its baseline alike in the same draws, and the host's common mode cancels in
/// their difference, which the independent draws of `bootstrap_medians` left in it (a run whose
/// every process is one speed times another gave 198-202% for an exact +200%).
///
/// `wanted` (one per suite; none: every suite) picks the suites to resample: each world's
/// generator steps over the others' draws and the phases only they use (`SplitMix64::skip`), so
/// a wanted suite's medians are bit for bit those of the whole run's resampling, and the others'
/// lists are empty.
pub(crate) fn bootstrap_medians_by_process(
    suites: &[SuiteResult],
    phases: &[Phase],
    worlds: usize,
    draws_per_world: usize,
    wanted: Option<&[bool]>,
) -> Vec<Vec<f64>> {
    let (index, used) = suite_index(suites, phases);
    let Subset {
        wanted,
        needed,
        steps_per_draw,
    } = Subset::of(&index, phases, wanted);
    // Each phase's samples by process, with the run's process index of each (one group of every
    // sample where the phase has no processes recorded, or an empty one).
    let grouped: Vec<(Vec<&[u64]>, Vec<usize>)> = phases
        .iter()
        .map(
            |p| match crate::stats::groups(&p.samples_ns, &p.processes) {
                Some(g)
                    if g.len() > 1
                        && g.len() == p.process_ids.len()
                        && g.iter().all(|x| !x.is_empty()) =>
                {
                    (g, p.process_ids.clone())
                }
                _ => (vec![p.samples_ns.as_slice()], Vec::new()),
            },
        )
        .collect();
    // The processes drawn from: those some used phase was measured in (a file's ids are data, so
    // their count, not their largest value, sizes the draws).
    let mut ids: Vec<usize> = grouped
        .iter()
        .zip(&used)
        .filter(|(_, u)| **u)
        .flat_map(|((_, ids), _)| ids.iter().copied())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        ids.push(0);
    }
    let k = ids.len();
    let world_medians = |b: usize, world: &mut Vec<Vec<Vec<u64>>>, draws: &mut Vec<f64>| {
        let seed = stats::BOOTSTRAP_SEED ^ (b as u64).wrapping_mul(0x9E37_79B9);
        let mut rng = SplitMix64(seed);
        let picks: Vec<usize> = (0..k).map(|_| ids[rng.below(k)]).collect();
        for (((w, (groups, ids)), u), need) in
            world.iter_mut().zip(&grouped).zip(&used).zip(&needed)
        {
            if !*u {
                continue;
            }
            for (slot, &id) in w.iter_mut().zip(&picks) {
                let one = match ids.iter().position(|&x| x == id) {
                    Some(i) => groups[i],
                    None => groups[rng.below(groups.len())],
                };
                slot.clear();
                if !*need {
                    rng.skip(one.len() as u64);
                    continue;
                }
                for _ in 0..one.len() {
                    slot.push(one[rng.below(one.len())]);
                }
            }
        }
        index
            .iter()
            .zip(&wanted)
            .zip(&steps_per_draw)
            .map(|((parts, want), steps)| {
                if !*want {
                    rng.skip(steps * draws.len() as u64);
                    return f64::NAN;
                }
                // The slots' sequence is the world's, the same for every suite.
                let mut slots = SplitMix64(seed ^ 0x736c_6f74);
                for d in draws.iter_mut() {
                    let slot = slots.below(k);
                    *d = draw(parts, |pi| world[pi][slot].as_slice(), &mut rng);
                }
                stats::median_in_place(draws)
            })
            .collect()
    };
    let fresh = || -> Vec<Vec<Vec<u64>>> { phases.iter().map(|_| vec![Vec::new(); k]).collect() };
    let mut out = per_suite(suites.len(), worlds, draws_per_world, fresh, &world_medians);
    Subset::clear_unwanted(&mut out, &wanted);
    out
}

/// Worlds timed by `intervals_seconds`: enough that the probe (about half a second of the Xeon
/// model 207's 2 cores) spans a shared host's shorter bursts rather than falling in one; with 16
/// (0.2 s) a make run under `tools/noise.sh` pooled in 14.5 s against 11.1 s estimated.
const PROBE_WORLDS: usize = 48;

/// How long `intervals` takes for these suites, seconds, from timing `PROBE_WORLDS` of its
/// worlds on `phases`. A world's cost is mostly its draws (every call of every phase of every
/// suite, `CI_DRAWS` times), which the samples' values do not change, so the first process's
/// phases time most of what the pooled ones will take (resampling each process's samples into
/// the world adds a little with the processes).
pub fn intervals_seconds(suites: &[SuiteResult], phases: &[Phase]) -> f64 {
    let t = std::time::Instant::now();
    let _ = bootstrap_medians_by_process(suites, phases, PROBE_WORLDS, CI_DRAWS, None);
    t.elapsed().as_secs_f64() * CI_RESAMPLES as f64 / PROBE_WORLDS as f64
}

/// A 95% interval (low, high), where there is one.
pub(crate) type Interval = Option<(f64, f64)>;

/// Where suite `i`'s baseline (the suite of its baseline's name on the same stack) is in
/// `suites`; none for a baseline itself or one the run lacks.
pub(crate) fn baseline_of(suites: &[SuiteResult], i: usize) -> Option<usize> {
    let s = &suites[i];
    s.baseline.as_ref().filter(|b| **b != s.name).and_then(|b| {
        suites
            .iter()
            .position(|x| &x.name == b && x.stack == s.stack)
    })
}

/// 95% intervals per suite: (composed median, delta vs baseline in the same stack).
/// Worlds and draws as recorded in the suites (all suites of a run share them).
pub fn intervals(suites: &[SuiteResult], phases: &[Phase]) -> Vec<(Interval, Interval)> {
    intervals_of(suites, phases, None)
        .into_iter()
        .map(|x| x.unwrap_or((None, None)))
        .collect()
}

/// `intervals` of the `wanted` suites alone (one per suite; none: all), each exactly as the whole
/// run's resampling gives it; `None` for the others. A wanted suite's baseline is resampled with
/// it, for the difference.
pub fn intervals_of(
    suites: &[SuiteResult],
    phases: &[Phase],
    wanted: Option<&[bool]>,
) -> Vec<Option<(Interval, Interval)>> {
    let (w, d, by_process) = suites.first().map_or((CI_RESAMPLES, CI_DRAWS, true), |s| {
        (
            s.composed.ci_worlds,
            s.composed.ci_draws,
            s.composed.ci_by_process,
        )
    });
    let baseline = |i: usize| baseline_of(suites, i);
    let is_wanted = |i: usize| wanted.is_none_or(|w| w.get(i).copied().unwrap_or(false));
    let mut resampled: Vec<bool> = (0..suites.len()).map(is_wanted).collect();
    for i in 0..suites.len() {
        if is_wanted(i) {
            if let Some(j) = baseline(i) {
                resampled[j] = true;
            }
        }
    }
    let worlds = if by_process {
        bootstrap_medians_by_process(suites, phases, w, d, Some(&resampled))
    } else {
        bootstrap_medians(suites, phases, w, d, Some(&resampled))
    };
    suites
        .iter()
        .enumerate()
        .map(|(i, _)| {
            if !is_wanted(i) {
                return None;
            }
            let base = baseline(i);
            let delta = base.and_then(|j| {
                let d: Vec<f64> = worlds[i]
                    .iter()
                    .zip(&worlds[j])
                    .map(|(a, b)| delta_pct(*a, *b))
                    .collect();
                stats::interval95(&d)
            });
            Some((stats::interval95(&worlds[i]), delta))
        })
        .collect()
}

/// The share of a full TLS 1.3 handshake's phase that runs on the server: it encapsulates and
/// signs, the client generates the KEM key, decapsulates and verifies; each side makes one
/// classical key share and derives once, and each runs the key schedule, transcript hash and
/// record keys over the same bytes (half of a full suite's counts each).
pub(crate) fn server_share(op: Operation) -> f64 {
    match op {
        Operation::KemEncaps | Operation::SigSign => 1.0,
        Operation::KemKeygen
        | Operation::KemDecaps
        | Operation::SigVerify
        | Operation::SigKeygen => 0.0,
        _ => 0.5,
    }
}

/// The server side of a full-handshake suite composed from phase medians:
/// sum over phases of count x server share x median.
pub(crate) fn server_side_median_ns(suite: &SuiteResult, phases: &[Phase]) -> Option<f64> {
    let mut total = 0.0;
    for part in &suite.phases {
        let p = crate::results::find_phase(phases, &part.id())?;
        total += part.count as f64 * server_share(part.operation) * p.stats.median_ns;
    }
    Some(total)
}

/// Percent difference of `value` against `baseline`.
pub fn delta_pct(value: f64, baseline: f64) -> f64 {
    (value / baseline - 1.0) * 100.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::Operation;

    fn phase(op: Operation, samples: &[u64]) -> Phase {
        let xs: Vec<f64> = samples.iter().map(|&x| x as f64).collect();
        let s = stats::summarize(&xs).unwrap();
        Phase {
            backend: "b".into(),
            algorithm: "X25519".into(),
            operation: op,
            ops_per_sec: stats::ops_per_sec(s.mean_ns),
            stats: s,
            steal_pct: None,
            iterations_reason: crate::results::Reason::Default,
            warmup: 0,
            verified: 1,
            includes: String::new(),
            samples_ns: samples.to_vec(),
            cycles: None,
            median_ci95_ns: None,
            median_ci95_own_ns: None,
            processes: Vec::new(),
            process_ids: Vec::new(),
            precision: None,
            rsd_pct: 0.0,
            outliers: Default::default(),
            form: crate::results::Form::Handshake,
            batch: 1,
            run_delay_pct: None,
            timed_ms: None,
            instructions: None,
            situ: None,
        }
    }

    #[test]
    fn composed_mean_is_count_times_phase_means() {
        let phases = [
            phase(Operation::DhKeygen, &[10, 20, 30]),
            phase(Operation::DhDerive, &[100, 100, 100]),
        ];
        let parts = [
            SuitePhase {
                backend: "b".into(),
                algorithm: "X25519".into(),
                operation: Operation::DhKeygen,
                count: 2,
            },
            SuitePhase {
                backend: "b".into(),
                algorithm: "X25519".into(),
                operation: Operation::DhDerive,
                count: 2,
            },
        ];
        let c = compose(&parts, &phases).unwrap();
        assert_eq!(c.mean_ns, 2.0 * 20.0 + 2.0 * 100.0);
        // Every draw is two keygen samples (20..60) plus 200: the percentiles lie in 220..=260.
        assert!(
            (220.0..=260.0).contains(&c.median_ns) && c.p99_ns <= 260.0 && c.p95_ns >= c.median_ns
        );
        // Deterministic: the same seed gives the same figures.
        assert_eq!(compose(&parts, &phases).unwrap().median_ns, c.median_ns);
    }

    #[test]
    fn a_composed_difference_carries_the_phases_that_differ() {
        let mut keygen = phase(Operation::DhKeygen, &[10, 20, 30]);
        keygen.median_ci95_ns = Some((18.0, 22.0));
        let mut kem = phase(Operation::KemKeygen, &[50, 60]);
        kem.median_ci95_ns = Some((54.0, 60.0));
        let mut derive = phase(Operation::DhDerive, &[7]);
        derive.median_ci95_ns = Some((0.0, 100.0));
        let phases = [keygen, kem, derive];
        let part = |op: Operation, count: u32| SuitePhase {
            backend: "b".into(),
            algorithm: "X25519".into(),
            operation: op,
            count,
        };
        // a: 2 keygens, 1 KEM keygen, 2 derives; b: 1 keygen, 2 derives. The derives cancel
        // (however wide); one keygen (half-width 2) and one KEM keygen (3) remain: sqrt(4 + 9).
        let a = [
            part(Operation::DhKeygen, 2),
            part(Operation::KemKeygen, 1),
            part(Operation::DhDerive, 2),
        ];
        let b = [part(Operation::DhKeygen, 1), part(Operation::DhDerive, 2)];
        assert_eq!(delta_half95_ns(&a, &b, &phases, false), Some(13f64.sqrt()));
        assert_eq!(delta_half95_ns(&b, &a, &phases, false), Some(13f64.sqrt()));
        assert_eq!(delta_half95_ns(&a, &a, &phases, false), Some(0.0));
        // Along the flows, the KEM keygen's calls in a handshake's state: their interval (from
        // their samples) in place of the loop's half-width of 3.
        let mut state = phases.clone();
        state[1].situ = crate::figures::situ(1 << 20, 100_000, vec![50, 54], Vec::new());
        let (lo, hi) = state[1].situ.as_ref().unwrap().median_ci95_ns.unwrap();
        let want = (4.0 + ((hi - lo) / 2.0).powi(2)).sqrt();
        assert_eq!(delta_half95_ns(&a, &b, &state, true), Some(want));
        assert_eq!(delta_half95_ns(&a, &b, &state, false), Some(13f64.sqrt()));
        // A differing phase without an interval, or not measured: none.
        let mut bare = phases.clone();
        bare[1].median_ci95_ns = None;
        assert_eq!(delta_half95_ns(&a, &b, &bare, false), None);
        assert_eq!(delta_half95_ns(&a, &b, &phases[..1], false), None);
    }

    #[test]
    fn a_missing_phase_is_an_error() {
        let parts = [SuitePhase {
            backend: "x".into(),
            algorithm: "X25519".into(),
            operation: Operation::DhKeygen,
            count: 1,
        }];
        assert!(compose(&parts, &[]).is_err());
    }

    #[test]
    fn delta() {
        assert!((delta_pct(133.0, 100.0) - 33.0).abs() < 1e-9);
        assert!((delta_pct(50.0, 100.0) + 50.0).abs() < 1e-9);
    }
}

#[cfg(test)]
mod subset_tests {
    use super::{bootstrap_medians, bootstrap_medians_by_process};

    /// A committed run's suites resampled as a whole and a few at a time: each wanted suite's
    /// world medians are bit for bit the whole resampling's, whichever others are left out.
    #[test]
    fn a_subset_of_suites_resamples_exactly_as_the_whole_run() {
        // The Xeon's make run of 2026-12-06 (results/ or, once a newer run replaces it, archive/).
        let path = crate::results::committed(true)
            .into_iter()
            .find(|p| p.to_string_lossy().contains("20261206T044626Z-5d798a"))
            .expect("the committed run of 2026-12-06 04:46");
        let r = crate::results::read(&path).unwrap();
        // The cheaper suites and few worlds: the property is the generator's, not the count's.
        let suites: Vec<_> = r
            .suites
            .iter()
            .filter(|s| s.phases.iter().map(|p| p.count).sum::<u32>() < 100)
            .take(24)
            .cloned()
            .collect();
        assert!(suites.len() >= 10, "{} suites", suites.len());
        // Every other phase as if measured in one process: each is resampled as one group.
        let mut phases = r.phases.clone();
        for p in phases.iter_mut().step_by(2) {
            p.processes.clear();
            p.process_ids.clear();
        }
        // And a phase some suite uses with no samples at all: it draws nothing, in either way.
        let used = &suites[3].phases[0];
        let p = phases.iter_mut().find(|p| p.is(&used.id())).unwrap();
        p.samples_ns.clear();
        p.processes.clear();
        p.process_ids.clear();
        // Both ways of resampling: by process (files from 2026-12-03 on) and the older one.
        type Resample = fn(
            &[crate::results::SuiteResult],
            &[crate::results::Phase],
            usize,
            usize,
            Option<&[bool]>,
        ) -> Vec<Vec<f64>>;
        for resample in [bootstrap_medians_by_process as Resample, bootstrap_medians] {
            let all = resample(&suites, &phases, 12, 50, None);
            for pattern in [
                |i: usize| i % 3 == 0,
                |i: usize| i % 3 != 0,
                |i: usize| i == 7,
                |i: usize| i >= 12,
            ] {
                let wanted: Vec<bool> = (0..suites.len()).map(pattern).collect();
                let some = resample(&suites, &phases, 12, 50, Some(&wanted));
                for (i, want) in wanted.iter().enumerate() {
                    if *want {
                        assert_eq!(some[i], all[i], "suite {i}");
                        assert_eq!(some[i].len(), 12);
                    } else {
                        assert!(some[i].is_empty(), "suite {i}");
                    }
                }
            }
        }
    }
}
