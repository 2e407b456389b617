//! Independent process samples (`run --samples K`): the measurement runs in K child processes, one
//! after another, each starting its round-robin at a different phase; their samples are pooled into
//! one results file (so the identity still holds) and each sample's median is kept beside it.

use crate::cli::RunArgs;
use crate::results::{self, Phase, ProcessSamples, Results, SampleSpread};
use crate::{backend, compose, plan, run, stats, suite};
use anyhow::{bail, Context, Result};
use std::process::Command;

pub fn run_samples(args: &RunArgs) -> Result<Results> {
    let k = args.samples as usize;
    let suites = suite::load(&args.suites, &backend::NAMES)?;
    let n = plan::plan(&suites, &backend::all(), &plan::stacks())?
        .phases
        .len()
        .max(1);
    let dir = std::env::temp_dir().join(format!("pqprof-samples-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let exe = std::env::current_exe().context("cannot find the pqprof binary to start samples")?;
    let mut runs = Vec::new();
    for i in 0..k {
        let file = dir.join(format!("sample-{i}.json"));
        let mut cmd = Command::new(&exe);
        cmd.arg("run")
            .arg("--suites")
            .arg(&args.suites)
            .arg("--out")
            .arg(&file)
            .arg("--quiet");
        cmd.args([
            "--budget-ms",
            &args.budget_ms.to_string(),
            "--rounds",
            &args.rounds.to_string(),
        ]);
        cmd.args(["--rotate", &(i * n / k).to_string()]);
        if let Some(it) = args.iterations {
            cmd.args(["--iterations", &it.to_string()]);
        }
        for b in &args.backends {
            cmd.args(["--backend", b]);
        }
        if !args.quiet {
            eprintln!("sample {}/{k} ...", i + 1);
        }
        let status = wait(crate::interrupt::die_with_parent(&mut cmd))
            .with_context(|| format!("sample {i}"))?;
        // A sample whose phases partly failed still wrote what it measured; a sample that wrote
        // nothing ends the run.
        if !file.exists() {
            bail!("sample {i} wrote no results (exit status {status})");
        }
        runs.push(results::read(&file)?);
    }
    let _ = std::fs::remove_dir_all(&dir);
    aggregate(runs)
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

/// Pools samples phase by phase and recomposes every suite from the pooled phases.
pub fn aggregate(runs: Vec<Results>) -> Result<Results> {
    let Some(first) = runs.first().cloned() else {
        bail!("no samples")
    };
    let first_components = first.components.clone();
    let count = runs.len();
    let mut phases: Vec<Phase> = Vec::new();
    let mut phase_spreads = Vec::new();
    for p in &first.phases {
        let same: Vec<&Phase> = runs
            .iter()
            .filter_map(|r| r.phase_form(&p.backend, &p.algorithm, p.operation, p.form))
            .collect();
        if same.len() != count {
            continue; // failed in some sample: listed under that sample's failures
        }
        let samples: Vec<u64> = same
            .iter()
            .flat_map(|q| q.samples_ns.iter().copied())
            .collect();
        let Some(f) = stats::figures(&samples) else {
            continue;
        };
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
        phases.push(Phase {
            ops_per_sec: f.ops_per_sec,
            steal_pct: (!steal.is_empty()).then(|| stats::mean(&steal)),
            warmup: same.iter().map(|q| q.warmup).sum(),
            verified: same.iter().map(|q| q.verified).sum(),
            median_ci95_ns: f.median_ci95,
            rsd_pct: f.rsd_pct,
            outliers: f.outliers,
            stats: f.summary,
            samples_ns: samples,
            cycles,
            run_delay_pct: (!delay.is_empty()).then(|| stats::mean(&delay)),
            timed_ms: same.iter().map(|q| q.timed_ms).sum(),
            // Each sample chose its batch from its own warm-up; a sample is the mean of the largest.
            batch: same.iter().map(|q| q.batch).max().unwrap_or(1),
            ..p.clone()
        });
    }
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
    out.warnings = run::warnings(&phases, &out.run.iterations_policy);
    for sp in phase_spreads.iter().chain(&suite_spreads) {
        if sp.rsd_pct > run::RSD_WARN_PCT / 2.0 {
            out.warnings.push(format!(
                "{}: medians differ by {:.1}% RSD between process samples: this figure does not hold from run to run here; compare runs with `pqprof compare`, not by eye",
                sp.name, sp.rsd_pct
            ));
        }
    }
    // The setup components again, from the pooled phases.
    out.components = first_components
        .into_iter()
        .filter_map(|c| {
            let median = |form| {
                phases
                    .iter()
                    .find(|p| {
                        p.form == form
                            && p.backend == c.backend
                            && p.algorithm == c.algorithm
                            && p.operation == c.operation
                    })
                    .map(|p| p.stats.median_ns)
            };
            let (h, p) = (
                median(results::Form::Handshake)?,
                median(results::Form::Primitive)?,
            );
            Some(results::Component {
                handshake_median_ns: h,
                primitive_median_ns: p,
                setup_ns: h - p,
                ..c
            })
        })
        .collect();
    out.phases = phases;
    out.suites = suites;
    out.process_samples = Some(ProcessSamples {
        count,
        phases: phase_spreads,
        suites: suite_spreads,
    });
    Ok(out)
}
