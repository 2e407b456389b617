//! A figure's precision record held to the interval it was recomputed with: the half-width, the
//! reason it stopped (consistent with the target) and the number of batches. One function for
//! every section that records precision.

use super::differs;
use super::problem::Problem;
use crate::results::Precision;
use crate::stats;

/// The batches a figure was measured in, as the samples give them.
pub(crate) struct Batches<'a> {
    pub(crate) count: usize,
    /// What they are, in the messages: "processes", "rounds".
    pub(crate) what: &'a str,
    /// The batches a figure needs to stop on its target (`figures::confirm_batches`; 0: any).
    pub(crate) confirm: usize,
}

/// Problems of `pr` against the recomputed interval `ci` around `centre`, from `batches`.
pub(crate) fn check(
    problems: &mut Vec<Problem>,
    name: &str,
    pr: &Precision,
    ci: Option<(f64, f64)>,
    centre: f64,
    batches: Batches,
) {
    let Batches {
        count: batches,
        what,
        confirm,
    } = batches;
    match ci.and_then(|ci| stats::half_width_pct(ci, centre)) {
        Some(hw) => differs(
            problems,
            format!("{name}: precision half_width_pct"),
            pr.half_width_pct,
            hw,
        ),
        None => problems.push(Problem::incomplete(format!(
            "{name}: a precision but no interval to give it"
        ))),
    }
    if !pr.consistent(confirm) {
        problems.push(Problem::bound(format!(
            "{name}: stopped for {:?} at ±{:.2}% against a ±{}% target",
            pr.reason, pr.half_width_pct, pr.target_pct
        )));
    }
    if let Some(next) = pr.next_run_pct {
        differs(
            problems,
            format!("{name}: precision next_run_pct"),
            next,
            stats::next_run_half_width_pct(pr.half_width_pct, pr.host_drift_pct.unwrap_or(0.0)),
        );
    }
    if pr.batches != batches {
        problems.push(Problem::recomputed(format!(
            "{name}: precision says {} {what}, the samples {batches}",
            pr.batches
        )));
    }
}
