//! Everything a producer stores and `check` recomputes, computed once: a phase's figures from its
//! samples, the setup components, the calibration, capacity rates, network percentiles and the
//! warnings. Producers call these; `check` calls the same functions on the stored raw data.

pub mod answer;
pub mod arch;
pub mod auth;
pub mod capacity;
pub mod changes;
pub mod composition;
pub mod drift;
pub mod evidence;
pub mod handshake;
pub(crate) mod memo;
pub mod modes;
pub mod network;
pub mod probe;
pub mod server_cpu;
pub mod server_load;
pub mod timeline;
pub mod warnings;

use crate::results::{Calibration, Component, Cycles, Form, Phase, PhaseId, Reason, Situ};
use crate::stats;

/// What a producer knows of a phase beyond its samples.
#[derive(Debug, Clone)]
pub struct Measured {
    pub iterations_reason: Reason,
    pub warmup: usize,
    pub verified: usize,
    pub includes: String,
    pub steal_pct: Option<f64>,
    pub run_delay_pct: Option<f64>,
    pub timed_ms: Option<f64>,
    pub cycles: Option<Cycles>,
    pub batch: usize,
}

impl Measured {
    /// Nothing recorded beside the samples but one checked call: what a test's phase needs.
    #[cfg(test)]
    pub(crate) fn bare() -> Measured {
        Measured {
            iterations_reason: Reason::Default,
            warmup: 1,
            verified: 1,
            includes: String::new(),
            steal_pct: None,
            run_delay_pct: None,
            timed_ms: None,
            cycles: None,
            batch: 1,
        }
    }
}

/// A measured phase: its samples, what was recorded beside them, and every statistic computed
/// from the samples (`set_sample_figures`).
pub fn measured_phase(id: PhaseId, samples_ns: Vec<u64>, m: Measured) -> Phase {
    let mut p = Phase {
        backend: id.backend,
        algorithm: id.algorithm,
        operation: id.operation,
        form: id.form,
        stats: Default::default(),
        ops_per_sec: 0.0,
        steal_pct: m.steal_pct,
        iterations_reason: m.iterations_reason,
        warmup: m.warmup,
        verified: m.verified,
        includes: m.includes,
        samples_ns,
        cycles: m.cycles,
        median_ci95_ns: None,
        median_ci95_own_ns: None,
        processes: Vec::new(),
        process_ids: Vec::new(),
        precision: None,
        rsd_pct: 0.0,
        outliers: Default::default(),
        batch: m.batch,
        run_delay_pct: m.run_delay_pct,
        timed_ms: m.timed_ms,
        instructions: None,
        situ: None,
    };
    set_sample_figures(&mut p);
    p
}

/// A phase's calls timed in a handshake's state (`Situ`), with their statistics from the samples:
/// what `run` stores, `run --samples` pools and `check` recomputes. `None` without samples.
pub fn situ(
    evict_bytes: u64,
    wait_ns: u64,
    samples_ns: Vec<u64>,
    processes: Vec<usize>,
) -> Option<Situ> {
    let f = stats::figures_grouped(&samples_ns, &processes)?;
    Some(Situ {
        evict_bytes,
        wait_ns,
        median_ns: f.summary.median_ns,
        mean_ns: f.summary.mean_ns,
        median_ci95_ns: f.median_ci95,
        samples_ns,
        processes,
    })
}

/// Sets a phase's statistics from its samples (`samples_ns`): the summary, rate, median interval,
/// RSD and outliers. `run` does it for a measured phase, `run --samples` for pooled ones, `check`
/// to compare.
pub fn set_sample_figures(p: &mut Phase) {
    let f = stats::figures_grouped(&p.samples_ns, &p.processes)
        .unwrap_or_else(stats::SampleFigures::empty);
    p.stats = f.summary;
    p.ops_per_sec = f.ops_per_sec;
    p.median_ci95_ns = f.median_ci95;
    p.rsd_pct = f.rsd_pct;
    p.outliers = f.outliers;
}

/// The setup each handshake-form phase adds to its primitive form, for every primitive phase with
/// a handshake twin and a description of that setup (`setup`, None: not a setup of its own).
pub fn components(phases: &[Phase], setup: impl Fn(&PhaseId) -> Option<String>) -> Vec<Component> {
    phases
        .iter()
        .filter(|p| p.form == Form::Primitive)
        .filter_map(|prim| {
            let id = prim.id().with_form(Form::Handshake);
            let hs = crate::results::find_phase(phases, &id)?;
            Some(Component {
                backend: id.backend.clone(),
                algorithm: id.algorithm.clone(),
                operation: id.operation,
                name: setup(&id)?,
                handshake_median_ns: hs.stats.median_ns,
                primitive_median_ns: prim.stats.median_ns,
                setup_ns: hs.stats.median_ns - prim.stats.median_ns,
            })
        })
        .collect()
}

/// The calibration from the reference workload's samples, `per_round` to a round, against the
/// reference's median on the pinned machine (`pinned_ns`).
pub fn calibration(
    workload: &str,
    samples_ns: Vec<u64>,
    per_round: usize,
    pinned_ns: f64,
) -> Calibration {
    let rounds = stats::chunk_medians(&samples_ns, per_round);
    let all: Vec<f64> = samples_ns.iter().map(|&x| x as f64).collect();
    let median_ns = stats::median(&all);
    let (lo, hi) = rounds
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
            (l.min(*x), h.max(*x))
        });
    Calibration {
        workload: workload.into(),
        per_round,
        samples_ns,
        drift_pct: (hi - lo) / median_ns * 100.0,
        round_medians_ns: rounds,
        median_ns,
        pinned_ns,
        factor: pinned_ns / median_ns,
    }
}

/// The processes a phase of a run measured in `k` first processes needs before it may stop on
/// its target: one past the first K, so an interval that met the target by luck (three processes
/// that happened to agree) is measured once more before it stops. One process: no rule.
pub fn confirm_batches(k: usize) -> usize {
    if k > 1 {
        k + 1
    } else {
        0
    }
}

/// The precision record of a figure whose 95% interval is `half_width_pct` wide (each side,
/// percent), with its next-run half-width from it and the run's host drift (`drift::host_drift`;
/// `None` where the figure's batches are not the run's processes).
pub fn precision(
    target_pct: f64,
    half_width_pct: f64,
    reason: crate::results::StopReason,
    batches: usize,
    host_drift_pct: Option<f64>,
) -> crate::results::Precision {
    crate::results::Precision {
        target_pct,
        half_width_pct,
        reason,
        batches,
        host_drift_pct,
        next_run_pct: Some(stats::next_run_half_width_pct(
            half_width_pct,
            host_drift_pct.unwrap_or(0.0),
        )),
    }
}

/// A figure's precision in a table cell: "±0.42% target met; next run ±0.59%", "±2.30% budget
/// spent (target ±1%); next run ±3.25%".
pub(crate) fn precision_label(p: Option<&crate::results::Precision>) -> String {
    p.map_or(String::new(), |p| {
        let mut s = format!("±{:.2}% {}", p.half_width_pct, p.reason.describe());
        if p.half_width_pct > p.target_pct {
            s += &format!(" (target ±{}%)", p.target_pct);
        } else if p.reason == crate::results::StopReason::Budget {
            s += " before a confirming batch";
        }
        if let Some(next) = p.next_run_pct {
            s += &format!("; next run ±{next:.2}%");
        }
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_precision_label_says_the_interval_the_reason_and_the_next_run() {
        use crate::results::StopReason;
        let p = precision(1.0, 2.3, StopReason::Budget, 4, None);
        assert_eq!(
            precision_label(Some(&p)),
            "±2.30% budget spent (target ±1%); next run ±3.25%"
        );
        let mut old = precision(1.0, 0.42, StopReason::Target, 12, None);
        old.next_run_pct = None;
        assert_eq!(precision_label(Some(&old)), "±0.42% target met");
        // Within the target, but the time ran out before the confirming process.
        let early = precision(1.0, 0.8, StopReason::Budget, 3, None);
        assert_eq!(
            precision_label(Some(&early)),
            "±0.80% budget spent before a confirming batch; next run ±1.13%"
        );
        assert_eq!(confirm_batches(3), 4);
        assert_eq!(confirm_batches(1), 0);
    }

    #[test]
    fn calibration_by_hand() {
        // Rounds [10, 30] and [20, 40]: medians 20 and 30; all four: median 25.
        let c = calibration("w", vec![10, 30, 20, 40], 2, 50.0);
        assert_eq!(c.round_medians_ns, vec![20.0, 30.0]);
        assert_eq!((c.median_ns, c.factor, c.drift_pct), (25.0, 2.0, 40.0));
    }
}
