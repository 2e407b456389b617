//! Independent process samples (`run --samples K`): the measurement runs in K child processes, one
//! after another, each starting its round-robin at a different phase; their samples are pooled into
//! one results file (so the identity still holds) and each sample's median is kept beside it.

use crate::results::{self, Phase, ProcessSamples, Results, SampleSpread, Warning};
use crate::{backend, compose, plan, run, stats, suite};
use anyhow::{bail, Context, Result};
use std::process::Command;

/// What `run --samples K` passes on to each child.
pub struct Options {
    pub samples: usize,
    pub suites: std::path::PathBuf,
    pub budget_ms: u64,
    pub rounds: u32,
    pub iterations: Option<u32>,
    pub backends: Vec<String>,
    pub quiet: bool,
}

pub fn run_samples(args: &Options) -> Result<Results> {
    let k = args.samples;
    let suites = suite::load(&args.suites, &backend::names())?;
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
        let same: Vec<&Phase> = runs.iter().filter_map(|r| r.phase(&p.id())).collect();
        if same.len() != count {
            continue; // failed in some sample: listed under that sample's failures
        }
        let samples: Vec<u64> = same
            .iter()
            .flat_map(|q| q.samples_ns.iter().copied())
            .collect();
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
            ..p.clone()
        };
        crate::figures::set_sample_figures(&mut pooled);
        phases.push(pooled);
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
    out.process_samples = Some(ProcessSamples {
        count,
        phases: phase_spreads,
        suites: suite_spreads,
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A committed results file, as a child's output.
    fn child() -> Results {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .max()
            .expect("a committed results file");
        results::read(&file).unwrap()
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
