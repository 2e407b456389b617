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
pub(crate) struct Line {
    pub(crate) kind: &'static str,
    pub(crate) name: String,
    pub(crate) stack_or_backend: String,
    pub(crate) mean: f64,
    pub(crate) median: f64,
    pub(crate) p95: f64,
    pub(crate) p99: f64,
    pub(crate) iterations: Option<usize>,
    pub(crate) ci: Option<(f64, f64)>,
    pub(crate) precision: Option<crate::results::Precision>,
}

pub(crate) const HEADER: [&str; 12] = [
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
    "half_width_pct",
    "stopped",
];

pub(crate) fn lines(r: &Results) -> Vec<Line> {
    let phases = r.phases.iter().map(|p| Line {
        kind: "phase",
        name: p.id().short(),
        stack_or_backend: p.backend.clone(),
        mean: p.stats.mean_ns,
        median: p.stats.median_ns,
        p95: p.stats.p95_ns,
        p99: p.stats.p99_ns,
        iterations: Some(p.stats.iterations),
        ci: p.median_ci95_ns,
        precision: p.precision.clone(),
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
        precision: None,
    });
    phases.chain(suites).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Every committed results file (results/ and results/archive/).
    fn committed() -> Vec<std::path::PathBuf> {
        crate::results::committed(true)
    }

    #[test]
    fn no_two_rows_of_an_export_share_a_key() {
        let files = committed();
        assert!(!files.is_empty(), "no committed results to export");
        for f in files {
            let r = crate::results::read(&f).unwrap();
            let mut keys = BTreeSet::new();
            for l in lines(&r) {
                let key = (l.kind, l.name.clone(), l.stack_or_backend.clone());
                assert!(
                    keys.insert(key.clone()),
                    "{}: two rows {key:?}",
                    f.display()
                );
            }
            // Both forms of a phase are there, told apart by name.
            if r.phases
                .iter()
                .any(|p| p.form == crate::results::Form::Primitive)
            {
                assert!(keys.iter().any(|(_, n, _)| n.ends_with(" (primitive)")));
            }
        }
    }
}
