//! `pqprof check`: every figure a results file stores, recomputed from its raw data, and every
//! identity verified (the suites' composed intervals of a sample of the dear ones unless every
//! one is asked for: `Intervals`). One file per section; each returns the problems it found, in words.

pub mod capacity;
mod crosscheck;
mod emulated;
mod flows;
mod handshakes;
mod instructions;
mod memory;
pub mod network;
mod phases;
mod precision;
pub mod probe;
mod problem;

pub use problem::{Kind, Problem};

use crate::results::Results;

/// The identity's tolerance, percent (0.002%).
pub const TOLERANCE_PCT: f64 = 0.002;

/// Adds a problem when a stored figure and its recomputation differ by more than the tolerance.
pub(crate) fn differs(problems: &mut Vec<Problem>, what: String, stored: f64, recomputed: f64) {
    if !crate::stats::agrees(stored, recomputed, TOLERANCE_PCT) {
        problems.push(Problem::recomputed(format!(
            "{what}: stored {stored} but the raw data give {recomputed}"
        )));
    }
}

/// A section a producer adds to a results file whose phases were checked when they were written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Crosscheck,
    Handshakes,
    Capacity,
    Network,
    Memory,
}

impl Section {
    /// Its key in the results file.
    pub fn name(self) -> &'static str {
        match self {
            Section::Crosscheck => "crosscheck",
            Section::Handshakes => "handshakes",
            Section::Capacity => "capacity",
            Section::Network => "network",
            Section::Memory => "memory",
        }
    }
}

/// What `check` says of one section alone. A producer checks the section it adds and no more: the
/// phases' recomputation (every bootstrap interval again: about 7 s here) was done when the phases
/// were written, and the whole file is checked once more at the end of `make run`.
pub fn check_section(results: &Results, section: Section) -> Vec<Problem> {
    let problems = match section {
        Section::Crosscheck => crosscheck::check(results),
        Section::Handshakes => handshakes::check(results),
        Section::Capacity => capacity::check(results),
        Section::Network => network::check(results),
        Section::Memory => memory::check(results),
    };
    placed(section.name(), problems)
}

/// `problems`, each placed in `section`.
fn placed(section: &'static str, problems: Vec<Problem>) -> Vec<Problem> {
    problems
        .into_iter()
        .map(|p| p.in_section(section))
        .collect()
}

/// Which suites' composed intervals `check` resamples (1,000 worlds of 1,000 draws each, every
/// call of every phase drawn: the whole of a default run's takes tens of seconds of two cores,
/// almost all of it the full handshakes' hundreds of hash blocks per draw).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intervals {
    /// None: `run` resampled them from these phases a moment before (`compose::intervals`, the
    /// function `check` would call), so a second pass could only repeat it.
    None,
    /// Every suite whose draw is cheap, and of the others those the seed picks, as many as a
    /// few seconds hold (`phases::sampled_suites`): each resampled exactly as the whole run's
    /// resampling gives it. `pqprof check` draws a new seed each time and prints it.
    Sampled { seed: u64 },
    /// Every suite.
    All,
}

/// Every way a results file disagrees with its own raw data; empty means it holds. The composed
/// intervals of a sample of the suites are resampled (`Intervals::Sampled`, seed 0; `check_with`
/// takes another seed, or every suite).
pub fn check(results: &Results) -> Vec<Problem> {
    check_with(results, Intervals::Sampled { seed: 0 })
}

/// `check`, less the composed intervals' resampling, for the results `run` has just composed.
pub fn check_just_composed(results: &Results) -> Vec<Problem> {
    check_with(results, Intervals::None)
}

/// How many suites' composed intervals `check_with` resamples (an emulated run has no samples
/// to resample).
pub fn resampled_suites(results: &Results, intervals: Intervals) -> usize {
    if results.run.host.is_emulated() {
        return 0;
    }
    match intervals {
        Intervals::None => 0,
        Intervals::All => results.suites.len(),
        Intervals::Sampled { seed } => phases::sampled_suites(results, seed)
            .iter()
            .filter(|w| **w)
            .count(),
    }
}

/// `check`, with the composed intervals `intervals` names resampled.
pub fn check_with(results: &Results, intervals: Intervals) -> Vec<Problem> {
    // An emulated run holds counts only: its phases have no samples to recompute.
    let mut problems = placed(
        "phases",
        if results.run.host.is_emulated() {
            emulated::check(results)
        } else {
            phases::check(results, intervals)
        },
    );
    problems.extend(placed("suites", flows::check(results)));
    for section in [
        Section::Handshakes,
        Section::Crosscheck,
        Section::Capacity,
        Section::Network,
        Section::Memory,
    ] {
        problems.extend(check_section(results, section));
    }
    let mut run = Vec::new();
    if let Some(c) = &results.run.calibration {
        let fresh = crate::figures::calibration(
            &c.workload,
            c.samples_ns.clone(),
            c.per_round,
            c.pinned_ns,
        );
        differs(
            &mut run,
            "calibration median_ns".into(),
            c.median_ns,
            fresh.median_ns,
        );
        differs(
            &mut run,
            "calibration factor".into(),
            c.factor,
            fresh.factor,
        );
        differs(
            &mut run,
            "calibration drift_pct".into(),
            c.drift_pct,
            fresh.drift_pct,
        );
        if fresh.round_medians_ns.len() != c.round_medians_ns.len() {
            run.push(Problem::incomplete(format!(
                "calibration: {} round medians stored, the samples make {}",
                c.round_medians_ns.len(),
                fresh.round_medians_ns.len()
            )));
        } else {
            for (k, (a, b)) in c
                .round_medians_ns
                .iter()
                .zip(&fresh.round_medians_ns)
                .enumerate()
            {
                differs(
                    &mut run,
                    format!("calibration round_medians_ns[{k}]"),
                    *a,
                    *b,
                );
            }
        }
    }
    let mut go = Vec::new();
    if let Some(g) = &results.go {
        for r in &g.raw {
            let name = format!("go raw {}", r.name);
            let medians = crate::stats::chunk_medians(&r.samples_ns, r.per_sample);
            if medians.len() != r.sample_medians_ns.len() {
                go.push(Problem::incomplete(format!(
                    "{name}: {} sample medians stored, the samples make {}",
                    r.sample_medians_ns.len(),
                    medians.len()
                )));
                continue;
            }
            for (k, (a, b)) in r.sample_medians_ns.iter().zip(&medians).enumerate() {
                differs(&mut go, format!("{name}: sample_medians_ns[{k}]"), *a, *b);
            }
            differs(
                &mut go,
                format!("{name}: median_ns"),
                r.median_ns,
                crate::stats::median(&medians),
            );
        }
    }
    problems.extend(placed("run", run));
    problems.extend(placed("go", go));
    problems
}
