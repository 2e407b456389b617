//! The `process_samples` section (`run --samples K`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProcessSamples {
    pub count: usize,
    pub phases: Vec<SampleSpread>,
    pub suites: Vec<SampleSpread>,
}

/// One phase or suite across process samples: each sample's median, their median and spread.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SampleSpread {
    /// "backend algorithm operation" for a phase, "suite [stack]" for a suite.
    pub name: String,
    pub medians_ns: Vec<f64>,
    pub median_of_medians_ns: f64,
    pub rsd_pct: f64,
}
