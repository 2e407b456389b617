//! Which phases of a run deserve a warning: the thresholds and the test, one place for `run`,
//! `run --samples` and anything that re-derives them.

use crate::results::{Operation, Phase, Reason, Settings, Warning};

/// RSD above this, percent, earns a warning.
pub(crate) const RSD_WARN_PCT: f64 = 10.0;
/// CPU steal above this, percent.
pub(crate) const STEAL_WARN_PCT: f64 = 1.0;
/// Severe outliers above this share of samples, percent.
pub(crate) const OUTLIER_WARN_PCT: f64 = 2.0;
/// Run-queue wait above this share of a phase's timed wall time, percent.
pub(crate) const RUN_DELAY_WARN_PCT: f64 = 1.0;
/// A budget-limited phase whose timed calls overran its budget by more than this, percent.
pub(crate) const BUDGET_OVERRUN_PCT: f64 = 20.0;
/// Process samples whose medians differ by more than this RSD, percent.
pub const PROCESS_SPREAD_WARN_PCT: f64 = RSD_WARN_PCT / 2.0;

/// What in a run's phases deserves caution.
pub fn phase_warnings(phases: &[Phase], settings: &Settings) -> Vec<Warning> {
    let mut w = Vec::new();
    for p in phases {
        if p.rsd_pct > RSD_WARN_PCT {
            w.push(Warning::Spread {
                phase: p.id(),
                rsd_pct: p.rsd_pct,
                rejection_loop: p.operation == Operation::SigSign
                    && p.algorithm.starts_with("ML-DSA"),
            });
        }
        if let Some(steal_pct) = p.steal_pct.filter(|s| *s > STEAL_WARN_PCT) {
            w.push(Warning::Steal {
                phase: p.id(),
                steal_pct,
            });
        }
        if let Some(delay_pct) = p.run_delay_pct.filter(|d| *d > RUN_DELAY_WARN_PCT) {
            w.push(Warning::RunDelay {
                phase: p.id(),
                delay_pct,
            });
        }
        let severe = p.outliers.low_severe + p.outliers.high_severe;
        let samples = p.stats.iterations;
        if samples > 0 && severe as f64 * 100.0 / samples as f64 > OUTLIER_WARN_PCT {
            w.push(Warning::Outliers {
                phase: p.id(),
                severe,
                samples,
            });
        }
        if let (Some(timed_ms), Reason::Budget) = (p.timed_ms, p.iterations_reason) {
            let over = (timed_ms / settings.budget_ms as f64 - 1.0) * 100.0;
            if over > BUDGET_OVERRUN_PCT {
                w.push(Warning::BudgetOverrun {
                    phase: p.id(),
                    timed_ms,
                    budget_ms: settings.budget_ms,
                });
            }
        }
    }
    w
}

/// Whether a warning is one `phase_warnings` derives (and so is derived again from pooled phases).
pub fn is_phase_warning(w: &Warning) -> bool {
    w.phase().is_some()
}
