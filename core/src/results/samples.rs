//! The `process_samples` section (`run --samples K`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProcessSamples {
    pub count: usize,
    pub phases: Vec<SampleSpread>,
    pub suites: Vec<SampleSpread>,
    /// Each process's speed against the run, by its index (`figures::drift::host_drift`): the
    /// median, over the phases it measured, of its median against the phase's median of process
    /// medians; null for a process with too few phases to say. Absent in files before
    /// 2026-12-01's sixth session.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_factors: Vec<Option<f64>>,
    /// Their relative standard deviation, percent: how much the host's speed moved from one
    /// process to the next, for every phase at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_drift_pct: Option<f64>,
    /// The 95% half-width of the run's common mode, percent (`figures::drift::host_half95_pct`):
    /// the host's part of every absolute figure, kept apart from each phase's own
    /// (`Phase::median_ci95_own_ns`). Files from 2026-12-02 on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_half95_pct: Option<f64>,
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
