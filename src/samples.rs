//! Measurement in independent processes, spent by precision (`run --samples K --precision PCT
//! --budget-s S`). Every phase is measured in K child processes first (each with a K-th of the
//! iterations and budget, its round-robin starting at another phase); then, while the run's budget
//! lasts, one more process at a time measures the phases whose median's 95% interval (the
//! two-stage bootstrap over processes, `stats::bootstrap_medians_grouped`) is still wider than the
//! target, the widest against the target first. A process is a fixed-size batch: the interval is
//! recomputed over all of them, no phase stops on its target before K + 1, and a lucky process
//! cannot stop one on its own (its interval holds every process). The samples are pooled into one
//! results file (so the identity still holds), each phase keeping how many came from each
//! process.

use crate::results::{
    self, Phase, ProcessSamples, Reason, Results, SampleSpread, StopReason, Warning,
};
use crate::{backend, compose, plan, run, stats, suite};
use anyhow::{bail, Context, Result};
use std::process::Command;
use std::time::{Duration, Instant};

/// What `run --samples K` passes on to each child, and how the parent spends its budget.
pub(crate) struct Options {
    pub(crate) samples: usize,
    pub(crate) suites: std::path::PathBuf,
    pub(crate) budget_ms: u64,
    pub(crate) rounds: u32,
    pub(crate) iterations: Option<u32>,
    pub(crate) backends: Vec<String>,
    pub(crate) quiet: bool,
    /// The 95% half-width to reach, percent of each phase's median.
    pub(crate) precision_pct: f64,
    /// The whole run's time; none: until every phase meets the target or `MAX_PROCESSES`.
    pub(crate) budget: Option<Duration>,
}

/// The share of one process's default iterations and per-phase budget the first K processes take
/// together: the rest of the run's time goes to the phases still wider than the target (the
/// spread between processes, not the samples within one, is what narrows an interval most).
const FIRST_SHARE: f64 = 0.5;

/// The iterations of a phase the first K processes take together.
fn first_iterations() -> usize {
    (results::Settings::default().default_iterations as f64 * FIRST_SHARE) as usize
}

/// A child's warm-up per phase, milliseconds: enough for its caches and predictors and for the
/// estimate that sizes its samples (1,000 calls of a 10 µs phase, two of a 5 ms one; a call slower
/// than this is warmed by one call), and no more, since every process pays it again for every
/// phase (and every chunk has its own lead-in, `measure::LEAD_IN_NS`).
const WARMUP_MS: u64 = 10;

/// The first processes that measure the phases on their floor (calls of seconds: SLH-DSA-128s
/// signing and its keygen, whose checks sign too), their 10 calls split 4 + 3 + 3. The first K
/// processes beyond these leave those phases out: on the Zen 4 VM a process spent 21 of its 29 s
/// in SLH-DSA-128s (perf: Keccak), 14 of them untimed (warm-up calls, checks, set-up keys and
/// signatures), so five processes that all measured it took 171 s against three's 127 s.
const FLOOR_PROCESSES: usize = 3;

/// A first process past `FLOOR_PROCESSES` against a full one, as a share of its time outside its
/// timed calls (warm-ups, set-up, checks, its start): on the Xeon model 207 on 2026-12-04 one
/// without the phases on their floor spent 7.8-8.5 s so, against a full one's 16.8-18.8 s.
const LIGHT_SHARE: f64 = 0.45;

/// The smallest share of their timed calls the first processes are shrunk to on a slow host.
const MIN_SCALE: f64 = 0.25;

/// What the first K processes after the first will take, seconds, from the first one: what no
/// scale shrinks (each one's time outside its timed calls, `LIGHT_SHARE` of it past
/// `FLOOR_PROCESSES`, and before them its part of the floor phases' calls) and what it does (the
/// other timed calls, at scale 1).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rest {
    fixed_s: f64,
    scalable_s: f64,
}

impl Rest {
    fn of(first: &Batch, k: usize) -> Rest {
        let floor_s = first
            .results
            .phases
            .iter()
            .filter(|p| p.iterations_reason == Reason::Floor)
            .filter_map(|p| p.timed_ms)
            .sum::<f64>()
            / 1e3;
        let timed = timed_s(&first.results);
        let untimed = (first.wall_s - timed).max(0.0);
        let other = (timed - floor_s).max(0.0);
        // The floor's calls are split like a forced count (`child`'s --worker-floor).
        let (calls, floors) = (
            results::Settings::default().min_iterations,
            k.min(FLOOR_PROCESSES),
        );
        let part = |i: usize| share(calls, floors, i) as f64 / share(calls, floors, 0) as f64;
        let fixed_s = (1..k)
            .map(|i| match i < FLOOR_PROCESSES {
                true => untimed + floor_s * part(i),
                false => LIGHT_SHARE * untimed,
            })
            .sum();
        Rest {
            fixed_s,
            scalable_s: other * k.saturating_sub(1) as f64,
        }
    }

    /// Seconds at `scale`.
    fn at(&self, scale: f64) -> f64 {
        self.fixed_s + self.scalable_s * scale
    }
}

/// The share of their timed calls off the floor the first processes after the first are made to
/// take, so that all K fit in the `left_s` seconds left (`Rest`). 1 where they fit as they are;
/// at least `MIN_SCALE`, where even that does not fit (the run then takes longer than its budget,
/// which `run_samples` says, and its intervals say so).
fn first_scale(rest: &Rest, left_s: f64) -> f64 {
    if rest.at(1.0) <= left_s {
        return 1.0;
    }
    if rest.scalable_s <= 0.0 {
        return MIN_SCALE;
    }
    ((left_s - rest.fixed_s) / rest.scalable_s).clamp(MIN_SCALE, 1.0)
}

/// `first_scale` for the processes after the first, said on stderr where they shrink, and where
/// even the least does not fit what is `left`.
fn shrink(args: &Options, first: &Batch, k: usize, left: f64) -> f64 {
    let rest = Rest::of(first, k);
    let scale = first_scale(&rest, left);
    if scale < 1.0 && !args.quiet {
        eprintln!(
            "run: the first process took {:.0} s; the other {} are made {:.0}% as long in their \
             timed calls off the floor to keep to the budget (the floor and the warm-ups stay)",
            first.wall_s,
            k - 1,
            scale * 100.0
        );
    }
    if rest.at(scale) > left && !args.quiet {
        eprintln!(
            "run: even so they will take about {:.0} s of the {:.0} s left: the step runs over \
             its budget (the floor phases and the warm-ups alone take {:.0} s)",
            rest.at(scale),
            left.max(0.0),
            rest.fixed_s
        );
    }
    scale
}

/// Says how long the last process took, and how much of it its timed calls (the rest does not
/// shrink with the budget: warm-ups, set-up, checks, start).
fn took(args: &Options, batches: &[Batch], which: &str) {
    if let (false, Some(b)) = (args.quiet, batches.last()) {
        eprintln!(
            "run: process {which} took {:.1} s, {:.1} s of it in timed calls",
            b.wall_s,
            timed_s(&b.results)
        );
    }
}

/// A process's time in its timed calls, seconds.
fn timed_s(r: &Results) -> f64 {
    r.phases.iter().filter_map(|p| p.timed_ms).sum::<f64>() / 1e3
}

/// Every phase not on its floor, by id: what a first process past `FLOOR_PROCESSES` measures.
fn off_the_floor(phases: &[Phase]) -> Vec<String> {
    phases
        .iter()
        .filter(|p| p.iterations_reason != Reason::Floor)
        .map(|p| p.id().to_string())
        .collect()
}

/// No phase is measured in more processes than this, whatever the budget.
pub(crate) const MAX_PROCESSES: usize = 12;

/// One child's results and how long it took, start to end.
struct Batch {
    results: Results,
    wall_s: f64,
}

pub(crate) fn run_samples(args: &Options) -> Result<Results> {
    let started = Instant::now();
    let k = args.samples.max(1);
    let suites = suite::load(&args.suites, &backend::names())?;
    let n = plan::plan(&suites, &backend::all(), &plan::stacks())?
        .phases
        .len()
        .max(1);
    let dir = std::env::temp_dir().join(format!("pqprof-samples-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = (|| -> Result<Results> {
        let mut batches: Vec<Batch> = Vec::new();
        let mut scale = 1.0;
        // The pooling's and the check's time, kept out of the measuring time (set from the
        // first process).
        let mut pooling_s = 0.0;
        let left_s = |b: Duration, kept: f64| {
            b.as_secs_f64() - crate::budget::process_start().elapsed().as_secs_f64() - kept
        };
        for i in 0..k {
            if i == 1 {
                if let Some(b) = args.budget {
                    scale = shrink(args, &batches[0], k, left_s(b, pooling_s));
                }
            }
            // Past the first FLOOR_PROCESSES, the phases on their floor in the first process
            // stay out: their few calls are split among those processes already.
            let only = (i >= FLOOR_PROCESSES)
                .then(|| batches.first().map(|b| off_the_floor(&b.results.phases)))
                .flatten();
            if !args.quiet {
                eprintln!(
                    "run: process {}/{k}, every phase{} ...",
                    i + 1,
                    if only.is_some() {
                        " but those on their floor"
                    } else {
                        ""
                    }
                );
            }
            batches.push(child(args, &dir, i, i * n / k, only, scale)?);
            took(args, &batches, &format!("{}/{k}", i + 1));
            // A forced count is a fixed design, which no budget shrinks.
            if i == 0 && args.budget.is_some() && args.iterations.is_none() {
                pooling_s = pooling_estimate_s(&batches[0].results, k);
                if !args.quiet {
                    eprintln!(
                        "run: {pooling_s:.1} s of the budget kept for pooling and checking \
                         (timed on this process's phases)"
                    );
                }
            }
        }
        // A forced count is a fixed design: no process beyond the first K.
        while args.iterations.is_none() {
            // No process fits what is left of the budget: the pooling that would choose its
            // phases (every phase's bootstrap, seconds) is left to `aggregate`, once.
            if args.budget.is_some_and(|b| left_s(b, pooling_s) <= START_S) {
                break;
            }
            // The phases' intervals only: the suites are composed once, at the end.
            let runs: Vec<Results> = batches.iter().map(|b| b.results.clone()).collect();
            let wide = wide_phases(
                &pool_phases(&runs).0,
                args.precision_pct,
                crate::figures::confirm_batches(k),
            );
            if wide.is_empty() {
                break;
            }
            let left = args.budget.map(|b| left_s(b, pooling_s));
            let chosen = choose(&wide, &batches, left);
            if chosen.is_empty() {
                break;
            }
            if !args.quiet {
                eprintln!(
                    "run: process {}, {} phase(s) wider than ±{}% or not yet confirmed (widest: {} at ±{:.2}%) ...",
                    batches.len() + 1,
                    chosen.len(),
                    args.precision_pct,
                    wide[0].0,
                    wide[0].1
                );
            }
            let i = batches.len();
            batches.push(child(args, &dir, i, i * n / k, Some(chosen), 1.0)?);
            took(args, &batches, &(i + 1).to_string());
        }
        let (pooling, processes) = (Instant::now(), batches.len());
        let mut out = aggregate(batches.into_iter().map(|b| b.results).collect())?;
        if !args.quiet {
            let kept = if pooling_s > 0.0 {
                format!(" ({pooling_s:.1} s kept for it and the check)")
            } else {
                String::new()
            };
            eprintln!(
                "run: the {processes} processes pooled and the suites composed in {:.1} s{kept}",
                pooling.elapsed().as_secs_f64()
            );
        }
        let drift = out
            .process_samples
            .as_ref()
            .and_then(|ps| ps.host_drift_pct);
        set_precision(
            &mut out.phases,
            args.precision_pct,
            args.iterations.is_some(),
            drift,
            crate::figures::confirm_batches(k),
        );
        out.run.wall_seconds = started.elapsed().as_secs_f64();
        out.run.iterations_policy = results::Settings {
            default_iterations: per_process(first_iterations(), k) * k,
            min_iterations: results::Settings::default().min_iterations.max(k),
            budget_ms: args.budget_ms,
            rounds: args.rounds as usize,
            forced: args.iterations.map(|i| i as usize),
            target_pct: Some(args.precision_pct),
            budget_s: args.budget.map(|b| b.as_secs_f64()),
            processes: Some(k),
            first_scale: (scale < 1.0).then_some(scale),
            // Each process's warm-up per phase.
            warmup_ms: WARMUP_MS,
        };
        out.warnings.extend(precision_warnings(&out.phases));
        Ok(out)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// What pooling and the check after it will take for `k` processes, seconds, timed on the first
/// process's phases: the phases' intervals (which grow with the pooled samples, so about `k`
/// times one process's, and which the check recomputes, so twice), then the composed intervals
/// (every suite's handshakes drawn in each of `compose::CI_RESAMPLES` worlds, most of the time),
/// whose draws one process's phases time as well as all of them.
fn pooling_estimate_s(first: &Results, k: usize) -> f64 {
    let t = Instant::now();
    let (phases, _) = pool_phases(std::slice::from_ref(first));
    let phases_s = t.elapsed().as_secs_f64() * k as f64;
    2.0 * phases_s + compose::intervals_seconds(&first.suites, &phases)
}

/// A K-th of `total`, rounded up.
fn per_process(total: usize, k: usize) -> usize {
    total.div_ceil(k.max(1))
}

/// Process `i`'s part of a forced total or of the floor: the K parts add up to it exactly (a
/// precision batch, `i >= k`, takes the part of process `i mod K`).
fn share(total: usize, k: usize, i: usize) -> usize {
    let k = k.max(1);
    (total / k + usize::from(i % k < total % k)).max(1)
}

/// One child process: every phase, or the `only` ones, with a K-th of the iterations and budget.
fn child(
    args: &Options,
    dir: &std::path::Path,
    i: usize,
    rotate: usize,
    only: Option<Vec<String>>,
    scale: f64,
) -> Result<Batch> {
    let k = args.samples.max(1);
    let t0 = Instant::now();
    let file = dir.join(format!("sample-{i}.json"));
    let exe = std::env::current_exe().context("cannot find the pqprof binary to start samples")?;
    let mut cmd = Command::new(&exe);
    cmd.arg("run")
        .arg("--suites")
        .arg(&args.suites)
        .arg("--out")
        .arg(&file)
        .arg("--quiet");
    cmd.args([
        "--budget-ms",
        &((args.budget_ms as f64 * FIRST_SHARE * scale) as u64 / k as u64)
            .max(1)
            .to_string(),
        "--rounds",
        &args.rounds.to_string(),
        "--worker-iterations",
        &((per_process(first_iterations(), k) as f64 * scale).round() as usize)
            .max(1)
            .to_string(),
        // The floor is split like a forced count (4 + 3 + 3 of 10) over the processes that
        // measure the phases on it (`FLOOR_PROCESSES`): a phase on its floor is one whose calls
        // take seconds (SLH-DSA-128s signing), so each call above it is dear.
        "--worker-floor",
        &share(
            results::Settings::default().min_iterations,
            k.min(FLOOR_PROCESSES),
            i,
        )
        .to_string(),
        "--worker-warmup-ms",
        &WARMUP_MS.to_string(),
    ]);
    cmd.args(["--rotate", &rotate.to_string()]);
    // Which process of the run this is, for the tests' deterministic backend alone
    // (`backend::fixed`, whose processes run at known speeds): a real run's children are unchanged.
    if crate::backend::fixed::enabled() {
        cmd.env("PQPROF_PROCESS", i.to_string());
    }
    if let Some(it) = args.iterations {
        cmd.args(["--iterations", &share(it as usize, k, i).to_string()]);
    }
    for b in &args.backends {
        cmd.args(["--backend", b]);
    }
    if let Some(names) = &only {
        let list = dir.join(format!("only-{i}.txt"));
        std::fs::write(&list, names.join("\n"))?;
        cmd.arg("--only").arg(&list);
    }
    let status = wait(crate::interrupt::die_with_parent(&mut cmd))
        .with_context(|| format!("process sample {i}"))?;
    // A sample whose phases partly failed still wrote what it measured; a sample that wrote
    // nothing ends the run.
    if !file.exists() {
        bail!("process sample {i} wrote no results (exit status {status})");
    }
    Ok(Batch {
        results: results::read(&file)?,
        wall_s: t0.elapsed().as_secs_f64(),
    })
}

/// Every phase whose median's interval is wider than the target, or that has fewer than
/// `confirm` processes, and that has processes to spare, with its half-width, widest against the
/// target first. A phase on its sample floor in every process (calls of seconds: SLH-DSA-128s
/// signing) stops there: three more calls a process would cost seconds each and barely narrow it,
/// and it says so (`StopReason::Floor`).
fn wide_phases(phases: &[Phase], target_pct: f64, confirm: usize) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = phases
        .iter()
        .filter(|p| p.processes.len().max(1) < MAX_PROCESSES)
        .filter(|p| p.iterations_reason != Reason::Floor)
        .filter_map(|p| {
            let hw = stats::half_width_pct(p.median_ci95_ns?, p.stats.median_ns)?;
            (hw > target_pct || p.processes.len().max(1) < confirm)
                .then(|| (p.id().to_string(), hw))
        })
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v
}

/// What one more process of `phase` costs, seconds, the most any earlier process that measured
/// it suggests: its timed calls there, a precision batch's warm-up (`WARMUP_MS`, or one call
/// where a call takes longer), and an even share of the rest of that process's time beyond its
/// start and its phases' timed calls and warm-ups (building the cases, checking outputs).
fn cost_s(phase: &str, batches: &[Batch]) -> f64 {
    let timed_s = |p: &Phase| p.timed_ms.unwrap_or(0.0) / 1e3;
    let warm_s = |p: &Phase| p.warmup as f64 * p.stats.median_ns / 1e9;
    batches
        .iter()
        .filter_map(|b| {
            let mine = b
                .results
                .phases
                .iter()
                .find(|p| p.id().to_string() == phase)?;
            let n = b.results.phases.len().max(1) as f64;
            let own: f64 = b
                .results
                .phases
                .iter()
                .map(|p| timed_s(p) + warm_s(p))
                .sum();
            let rest = (b.wall_s - START_S - own).max(0.0) / n;
            let warm = (WARMUP_MS as f64 / 1e3).max(mine.stats.median_ns / 1e9);
            Some(timed_s(mine) + warm + rest)
        })
        .fold(0.0, f64::max)
}

/// A child's fixed cost, seconds: starting, planning, the timer's calibration, the calibration
/// reference.
const START_S: f64 = 2.0;

/// The wide phases one more process measures within the time left: the widest first, while the
/// process's estimated time fits (a process costs its start and setup, from the first one's
/// time outside its phases, besides its phases).
fn choose(wide: &[(String, f64)], batches: &[Batch], left_s: Option<f64>) -> Vec<String> {
    let mut chosen = Vec::new();
    let mut spent = START_S;
    for (name, _) in wide {
        let c = cost_s(name, batches);
        if left_s.is_none_or(|left| spent + c <= left) {
            spent += c;
            chosen.push(name.clone());
        }
    }
    chosen
}

/// Each phase's precision against the target and why its measuring stopped: on the target only
/// with `confirm` processes (`figures::confirm_batches`), else on the budget (the time ran out),
/// its floor, or a fixed design.
pub(crate) fn set_precision(
    phases: &mut [Phase],
    target_pct: f64,
    fixed: bool,
    host_drift_pct: Option<f64>,
    confirm: usize,
) {
    for p in phases.iter_mut() {
        let Some(hw) = p
            .median_ci95_ns
            .and_then(|ci| stats::half_width_pct(ci, p.stats.median_ns))
        else {
            continue;
        };
        // Not chosen for another process (budget): it did not fit the time left, or has the most
        // processes a phase gets.
        let reason = StopReason::after(
            hw,
            target_pct,
            fixed,
            p.iterations_reason == Reason::Floor,
            p.processes.len().max(1) >= confirm,
        );
        p.precision = Some(crate::figures::precision(
            target_pct,
            hw,
            reason,
            p.processes.len().max(1),
            host_drift_pct,
        ));
    }
}

/// The phases left wider than the target, as typed warnings.
pub(crate) fn precision_warnings(phases: &[Phase]) -> Vec<Warning> {
    phases
        .iter()
        .filter_map(|p| {
            let pr = p.precision.as_ref()?;
            (pr.half_width_pct > pr.target_pct).then(|| Warning::Imprecise {
                name: p.id().to_string(),
                half_width_pct: pr.half_width_pct,
                target_pct: pr.target_pct,
                reason: pr.reason,
            })
        })
        .collect()
}

/// Runs a child to its end, or kills it when pqprof is asked to stop.
fn wait(cmd: &mut Command) -> Result<std::process::ExitStatus> {
    let mut child = cmd.spawn().context("cannot start")?;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if let Err(e) = crate::interrupt::check() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e.into());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn spread(name: String, medians: Vec<f64>) -> SampleSpread {
    SampleSpread {
        median_of_medians_ns: stats::median(&medians),
        rsd_pct: stats::rsd_pct(&medians),
        name,
        medians_ns: medians,
    }
}

/// Each phase's samples pooled over the processes that measured it, with its figures from the
/// pool, and the spread of the processes' medians.
fn pool_phases(runs: &[Results]) -> (Vec<Phase>, Vec<SampleSpread>) {
    let Some(first) = runs.first() else {
        return (Vec::new(), Vec::new());
    };
    let mut phases: Vec<Phase> = Vec::new();
    let mut phase_spreads = Vec::new();
    for p in &first.phases {
        // The processes that measured it: every one of the first K, and the precision batches
        // that asked for it (a phase failed in a process is listed under its failures).
        let (ids, same): (Vec<usize>, Vec<&Phase>) = runs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.phase(&p.id()).map(|q| (i, q)))
            .unzip();
        let samples: Vec<u64> = same
            .iter()
            .flat_map(|q| q.samples_ns.iter().copied())
            .collect();
        let processes: Vec<usize> = if same.len() > 1 {
            same.iter().map(|q| q.samples_ns.len()).collect()
        } else {
            Vec::new()
        };
        if samples.is_empty() {
            continue;
        }
        let cycles = same
            .iter()
            .map(|q| q.cycles.clone())
            .collect::<Option<Vec<_>>>()
            .map(|c| results::Cycles {
                mean: stats::mean(&c.iter().map(|x| x.mean).collect::<Vec<_>>()),
                median: stats::median(&c.iter().map(|x| x.median).collect::<Vec<_>>()),
            });
        let steal: Vec<f64> = same.iter().filter_map(|q| q.steal_pct).collect();
        let delay: Vec<f64> = same.iter().filter_map(|q| q.run_delay_pct).collect();
        phase_spreads.push(spread(
            p.name(),
            same.iter().map(|q| q.stats.median_ns).collect(),
        ));
        let mut pooled = Phase {
            steal_pct: (!steal.is_empty()).then(|| stats::mean(&steal)),
            warmup: same.iter().map(|q| q.warmup).sum(),
            verified: same.iter().map(|q| q.verified).sum(),
            samples_ns: samples,
            cycles,
            run_delay_pct: (!delay.is_empty()).then(|| stats::mean(&delay)),
            timed_ms: same.iter().map(|q| q.timed_ms).sum(),
            // Each sample chose its batch from its own warm-up; a sample is the mean of the largest.
            batch: same.iter().map(|q| q.batch).max().unwrap_or(1),
            process_ids: if same.len() > 1 { ids } else { Vec::new() },
            processes,
            // The floor holds if every process could time only its minimum.
            iterations_reason: if same.iter().all(|q| q.iterations_reason == Reason::Floor) {
                Reason::Floor
            } else {
                p.iterations_reason
            },
            ..p.clone()
        };
        pooled.situ = pool_situ(&same);
        crate::figures::set_sample_figures(&mut pooled);
        phases.push(pooled);
    }
    (phases, phase_spreads)
}

/// The calls timed in a handshake's state of every process that has them, in process order.
fn pool_situ(same: &[&Phase]) -> Option<results::Situ> {
    let parts: Vec<&results::Situ> = same.iter().filter_map(|q| q.situ.as_ref()).collect();
    let first = parts.first()?;
    let samples: Vec<u64> = parts
        .iter()
        .flat_map(|s| s.samples_ns.iter().copied())
        .collect();
    let processes = if parts.len() > 1 {
        parts.iter().map(|s| s.samples_ns.len()).collect()
    } else {
        Vec::new()
    };
    crate::figures::situ(first.evict_bytes, first.wait_ns, samples, processes)
}

/// Pools samples phase by phase and recomposes every suite from the pooled phases.
pub(crate) fn aggregate(runs: Vec<Results>) -> Result<Results> {
    let Some(first) = runs.first().cloned() else {
        bail!("no samples")
    };
    let first_components = first.components.clone();
    let count = runs.len();
    let (phases, phase_spreads) = pool_phases(&runs);
    let mut suites = Vec::new();
    let mut suite_spreads = Vec::new();
    for s in &first.suites {
        let Ok(composed) = compose::compose(&s.phases, &phases) else {
            continue;
        };
        let per: Vec<f64> = runs
            .iter()
            .filter_map(|r| {
                r.suites
                    .iter()
                    .find(|x| x.name == s.name && x.stack == s.stack)
            })
            .map(|x| x.composed.median_ns)
            .collect();
        suite_spreads.push(spread(format!("{} [{}]", s.name, s.stack), per));
        suites.push(results::SuiteResult {
            ops_per_sec: stats::ops_per_sec(composed.mean_ns),
            tail: composed.p99_ns / composed.median_ns,
            composed,
            delta_vs_baseline_pct: None,
            delta_ci95_pct: None,
            ..s.clone()
        });
    }
    run::fill_deltas(&mut suites, &phases);
    let mut out = first;
    out.run.wall_seconds = runs.iter().map(|r| r.run.wall_seconds).sum();
    out.failures = runs.iter().flat_map(|r| r.failures.clone()).collect();
    // The phases' warnings again, from the pooled phases; every other warning a child raised
    // (a stack not measured, suites left out) is kept, once.
    let mut warnings =
        crate::figures::warnings::phase_warnings(&phases, &out.run.iterations_policy);
    for w in runs.iter().flat_map(|r| &r.warnings) {
        if !crate::figures::warnings::is_phase_warning(w) && !warnings.contains(w) {
            warnings.push(w.clone());
        }
    }
    for sp in phase_spreads.iter().chain(&suite_spreads) {
        if sp.rsd_pct > crate::figures::warnings::PROCESS_SPREAD_WARN_PCT {
            warnings.push(Warning::ProcessSpread {
                name: sp.name.clone(),
                rsd_pct: sp.rsd_pct,
            });
        }
    }
    out.warnings = warnings;
    // The setup components again, from the pooled phases.
    out.components = crate::figures::components(&phases, |id| {
        first_components
            .iter()
            .find(|c| c.id() == *id)
            .map(|c| c.name.clone())
    });
    out.phases = phases;
    out.suites = suites;
    let drift = crate::figures::drift::host_drift(&out.phases);
    if let Some(d) = &drift {
        for p in out.phases.iter_mut() {
            p.median_ci95_own_ns = crate::figures::drift::own_interval(p, &d.factors);
        }
    }
    // The flow's place for every phase is the first process's; its figures, the pool's (with the
    // phases' own intervals, set just above).
    for s in out.suites.iter_mut() {
        s.flow = s
            .flow
            .take()
            .and_then(|f| crate::flow::figures(f.segments, &f.overlap, &out.phases));
    }
    out.process_samples = Some(ProcessSamples {
        host_half95_pct: drift
            .as_ref()
            .and_then(|d| crate::figures::drift::host_half95_pct(&d.factors)),
        count,
        phases: phase_spreads,
        suites: suite_spreads,
        host_factors: drift
            .as_ref()
            .map(|d| d.factors.clone())
            .unwrap_or_default(),
        host_drift_pct: drift.map(|d| d.rsd_pct),
    });
    Ok(out)
}

/// The results files git tracks, which the tests read (shared with core's tests).
#[cfg(test)]
#[path = "../core/tests/support/committed.rs"]
mod committed;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_processes_shrink_only_their_timed_calls_off_the_floor() {
        // A first process of 30 s: 8 s of calls of a phase on its floor, 4 s of others, 18 s
        // outside its timed calls.
        let mut r = timed_child();
        r.phases.truncate(3);
        for (p, (timed_ms, reason)) in r.phases.iter_mut().zip([
            (Some(8000.0), Reason::Floor),
            (Some(4000.0), Reason::Default),
            (None, Reason::Default),
        ]) {
            p.timed_ms = timed_ms;
            p.iterations_reason = reason;
        }
        let first = Batch {
            results: r,
            wall_s: 30.0,
        };
        // Five processes: the floor's 10 calls are 4 + 3 + 3, so processes 2 and 3 take 18 s and
        // 6 s of floor calls each, 4 and 5 0.45 x 18 s; all four take 4 s of other calls at 1.
        let rest = Rest::of(&first, 5);
        assert!((rest.fixed_s - (2.0 * (18.0 + 6.0) + 2.0 * 0.45 * 18.0)).abs() < 1e-9);
        assert!((rest.scalable_s - 16.0).abs() < 1e-9);
        // 80.2 s fit in 100 as they are; in 72.2, half their calls off the floor.
        assert_eq!(first_scale(&rest, 100.0), 1.0);
        assert!((first_scale(&rest, 72.2) - 0.5).abs() < 1e-9);
        // In 60 s even the least does not fit: 68.2 s, which run_samples says.
        assert_eq!(first_scale(&rest, 60.0), MIN_SCALE);
        assert!((rest.at(MIN_SCALE) - 68.2).abs() < 1e-9);
        // Three processes: no light ones.
        let three = Rest::of(&first, 3);
        assert!((three.fixed_s - 48.0).abs() < 1e-9 && (three.scalable_s - 8.0).abs() < 1e-9);
        // One process only: nothing to scale; nothing that scales: the least.
        assert_eq!(first_scale(&Rest::of(&first, 1), 0.0), 1.0);
        let none = Rest {
            fixed_s: 50.0,
            scalable_s: 0.0,
        };
        assert_eq!(first_scale(&none, 40.0), MIN_SCALE);
    }

    /// A committed results file, as a child's output.
    fn child() -> Results {
        let file = super::committed::tracked_results(false)
            .into_iter()
            .max()
            .expect("a committed results file");
        results::read(&file).unwrap()
    }

    /// The newest committed timed results file measured in several processes.
    fn timed_child() -> Results {
        super::committed::tracked_results(false)
            .iter()
            .rev()
            .map(|f| results::read(f).unwrap())
            .find(|r| r.phases.iter().any(|p| p.processes.len() > 1))
            .expect("a committed results file measured in several processes")
    }

    #[test]
    fn a_phase_on_its_floor_gets_no_precision_batch() {
        let mut phases = timed_child().phases;
        phases.retain(|p| p.median_ci95_ns.is_some() && p.processes.len() < MAX_PROCESSES);
        assert!(phases.len() > 2);
        for p in &mut phases {
            p.iterations_reason = Reason::Default;
        }
        phases[1].iterations_reason = Reason::Floor;
        // A target below zero: every phase is wider than it (even one whose interval is a point),
        // but the one on its floor.
        let wide = wide_phases(&phases, -1.0, 0);
        let floor = phases[1].id().to_string();
        assert_eq!(wide.len(), phases.len() - 1);
        assert!(wide.iter().all(|(n, _)| *n != floor));
        // Widest first.
        assert!(wide.windows(2).all(|w| w[0].1 >= w[1].1));
        // A target every phase meets: only those short of `confirm` processes are still open.
        let k = phases[0].processes.len();
        phases[0].processes = vec![1; k + 1];
        let open = wide_phases(&phases, f64::INFINITY, k + 1);
        assert!(!open.is_empty());
        assert!(open
            .iter()
            .all(|(n, _)| *n != phases[0].id().to_string() && *n != floor));
        assert!(wide_phases(&phases, f64::INFINITY, 0).is_empty());
    }

    #[test]
    fn a_phases_cost_is_its_calls_its_warm_up_and_a_share_of_the_rest() {
        let mut r = timed_child();
        r.phases.truncate(2);
        for (p, timed_ms) in r.phases.iter_mut().zip([1000.0, 3000.0]) {
            p.timed_ms = Some(timed_ms);
            p.warmup = 10;
            p.stats.median_ns = 1e6;
        }
        let name = r.phases[0].id().to_string();
        // Timed 1 + 3 s, warm-ups 10 calls of 1 ms each: 4.02 s; the process took its 2 s start
        // and 2 s more, 1 s a phase. The next warm-up: 10 ms (a call is shorter). 1 + 0.01 + 1.
        let batches = [Batch {
            results: r,
            wall_s: START_S + 4.02 + 2.0,
        }];
        assert!((cost_s(&name, &batches) - 2.01).abs() < 1e-9);
        assert_eq!(cost_s("no such phase", &batches), 0.0);
    }

    #[test]
    fn a_warning_raised_in_a_child_survives_the_pooling() {
        let go = Warning::NotMeasured {
            what: "the Go stack".into(),
            reason: "no Go peer".into(),
        };
        let left_out = Warning::SuitesLeftOut {
            backends: vec!["liboqs".into()],
            suites: vec!["X25519".into()],
        };
        let mut runs = vec![child(), child(), child()];
        for r in &mut runs {
            r.warnings.push(go.clone());
        }
        runs[1].warnings.push(left_out.clone());
        let pooled = aggregate(runs).unwrap();
        let count = |w: &Warning| pooled.warnings.iter().filter(|x| *x == w).count();
        assert_eq!(count(&go), 1, "raised in every child, kept once");
        assert_eq!(count(&left_out), 1, "raised in one child, kept");
        // The phases' own warnings are derived again from the pooled phases, not copied.
        let derived =
            crate::figures::warnings::phase_warnings(&pooled.phases, &pooled.run.iterations_policy);
        for w in pooled.warnings.iter().filter(|w| w.phase().is_some()) {
            assert!(derived.contains(w), "{w}");
        }
    }
}
