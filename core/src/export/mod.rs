//! Exporters: one file per format behind one small trait. Rows are every phase and every suite.

mod csv;
mod markdown;

use crate::results::Results;
use anyhow::Result;

/// The formats `pqprof export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Md,
}

pub trait Exporter {
    fn serialize(&self, results: &Results) -> Result<Vec<u8>>;
}

pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Csv => Box::new(csv::Csv),
        Format::Md => Box::new(markdown::Markdown),
    }
}

/// One exported line: a phase or a suite, in nanoseconds.
pub struct Line {
    pub kind: &'static str,
    pub name: String,
    pub stack_or_backend: String,
    pub mean: f64,
    pub median: f64,
    pub p95: f64,
    pub p99: f64,
    pub iterations: Option<usize>,
    pub ci: Option<(f64, f64)>,
}

pub const HEADER: [&str; 10] = [
    "kind",
    "name",
    "stack_or_backend",
    "mean_ns",
    "median_ns",
    "p95_ns",
    "p99_ns",
    "iterations",
    "median_ci95_low_ns",
    "median_ci95_high_ns",
];

pub fn lines(r: &Results) -> Vec<Line> {
    let phases = r.phases.iter().map(|p| Line {
        kind: "phase",
        name: format!("{} {}", p.algorithm, p.operation),
        stack_or_backend: p.backend.clone(),
        mean: p.stats.mean_ns,
        median: p.stats.median_ns,
        p95: p.stats.p95_ns,
        p99: p.stats.p99_ns,
        iterations: Some(p.stats.iterations),
        ci: p.median_ci95_ns,
    });
    let suites = r.suites.iter().map(|s| Line {
        kind: "suite",
        name: s.name.clone(),
        stack_or_backend: s.stack.clone(),
        mean: s.composed.mean_ns,
        median: s.composed.median_ns,
        p95: s.composed.p95_ns,
        p99: s.composed.p99_ns,
        iterations: None,
        ci: s.composed.median_ci95_ns,
    });
    phases.chain(suites).collect()
}
