//! `pqprof check`: every figure a results file stores, recomputed from its raw data, and every
//! identity verified. One file per section; each returns the problems it found, in words.

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

/// Every way a results file disagrees with its own raw data; empty means it holds.
pub fn check(results: &Results) -> Vec<Problem> {
    check_with(results, true)
}

/// `check`, less the composed intervals' resampling, for the results `run` has just composed:
/// this process resampled them from these phases a moment before (`compose::intervals`, the
/// function `check` would call), so a second pass could only repeat it, at about 10 s of two
/// cores (1,000 worlds of 1,000 draws per suite). `pqprof check`, and `make run`'s last step,
/// resample them from the file.
pub fn check_just_composed(results: &Results) -> Vec<Problem> {
    check_with(results, false)
}

fn check_with(results: &Results, intervals: bool) -> Vec<Problem> {
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
