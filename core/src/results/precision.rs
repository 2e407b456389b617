//! How precise a headline figure is and why its measurement stopped (schema 3): the target its
//! 95% interval was measured towards, the half-width it reached, and the reason. Every section
//! that spends time by precision (phases, real handshakes, in-memory capacity, network cells)
//! records one per figure; `check` recomputes the half-width from the stored samples.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Precision {
    /// The 95% half-width asked for, percent of the figure.
    pub target_pct: f64,
    /// The 95% half-width reached, percent of the figure.
    pub half_width_pct: f64,
    pub reason: StopReason,
    /// Independent batches (processes, rounds) the figure was measured in.
    pub batches: usize,
    /// The host's drift between processes, percent (`ProcessSamples::host_drift_pct`), that the
    /// next-run half-width adds; absent where the figure's batches are not the run's processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_drift_pct: Option<f64>,
    /// The half-width, percent, of the interval around this figure that should hold the next
    /// run's figure 95% of the time (`stats::next_run_half_width_pct`). Absent in files before
    /// 2026-12-01's sixth session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run_pct: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The interval reached the target after at least the minimum of batches.
    Target,
    /// More samples were wanted, but the step's time budget was spent.
    Budget,
    /// Each sample costs so much that only the minimum of them fitted: the interval is what they
    /// give.
    Floor,
    /// The figure has a fixed number of samples by design (a forced `--iterations`, one process,
    /// a network cell's handshakes at a grid point): its interval is reported, not chased.
    Fixed,
}

impl StopReason {
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::Target => "target met",
            StopReason::Budget => "budget spent",
            StopReason::Floor => "sample floor",
            StopReason::Fixed => "fixed sample",
        }
    }
}

impl StopReason {
    /// Why a figure that reached `half_width_pct` stopped: a fixed design, the target (once
    /// `confirmed`: measured in enough batches to stop on it), its sample floor (every batch could
    /// time only its minimum), or else the budget (wider than the target, or within it but not
    /// confirmed before the time ran out).
    pub fn after(
        half_width_pct: f64,
        target_pct: f64,
        fixed: bool,
        floor: bool,
        confirmed: bool,
    ) -> StopReason {
        if fixed {
            StopReason::Fixed
        } else if half_width_pct <= target_pct && confirmed {
            StopReason::Target
        } else if floor {
            StopReason::Floor
        } else {
            StopReason::Budget
        }
    }
}

impl Precision {
    /// The reason is consistent with the figures: a target met is within it, a figure stopped
    /// for any other reason is not (or has a fixed sample), unless it had fewer batches than
    /// `confirm`, the batches a figure needs to stop on its target.
    pub fn consistent(&self, confirm: usize) -> bool {
        match self.reason {
            StopReason::Target => self.half_width_pct <= self.target_pct + 1e-9,
            StopReason::Budget | StopReason::Floor => {
                self.half_width_pct > self.target_pct || self.batches < confirm
            }
            StopReason::Fixed => true,
        }
    }
}
