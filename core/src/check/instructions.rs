//! A phase's instruction counts (`run --counter instructions`): each event's per-call figure from
//! its total, and each call's count adding up to the Ir total. The same for every counter
//! (callgrind, qemu's plugin) and for timed and emulated runs alike.

use super::differs;
use super::problem::Problem;
use crate::results::Instructions;

/// Problems of one phase's counts; `name` is the phase's, "phase liboqs ML-KEM-768 kem.keygen".
pub(crate) fn check(name: &str, ins: &Instructions) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (k, e) in ins.events.iter().enumerate() {
        let recomputed = ins
            .totals
            .get(k)
            .map_or(f64::NAN, |t| *t as f64 / ins.calls.max(1) as f64);
        differs(
            &mut problems,
            format!("{name}: instructions per call [{e}]"),
            ins.per_call.get(k).copied().unwrap_or(f64::NAN),
            recomputed,
        );
    }
    // The per-call counts are the calls, and add up to the total.
    if !ins.ir_calls.is_empty() {
        let total = ins
            .events
            .iter()
            .position(|e| e == "Ir")
            .and_then(|k| ins.totals.get(k).copied());
        if ins.ir_calls.len() != ins.calls {
            problems.push(Problem::incomplete(format!(
                "{name}: {} per-call instruction counts for {} calls",
                ins.ir_calls.len(),
                ins.calls
            )));
        } else if total != Some(ins.ir_calls.iter().sum()) {
            problems.push(Problem::recomputed(format!(
                "{name}: the per-call instruction counts add up to {}, the total is {total:?}",
                ins.ir_calls.iter().sum::<u64>()
            )));
        }
    }
    problems
}
