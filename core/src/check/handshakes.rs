//! The `handshakes` section: each scenario's spread and baseline comparison, recomputed from its
//! stored per-sample medians.

use super::differs;
use crate::results::Results;
use crate::stats;

pub fn check(results: &Results) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(h) = &results.handshakes else { return problems };
    for s in &h.scenarios {
        let name = format!("handshake {} {} [{}]", s.protocol, s.suite, s.stack.name());
        if s.sample_medians_ns.is_empty() {
            problems.push(format!("{name}: no sample medians"));
            continue;
        }
        differs(&mut problems, format!("{name}: rsd_pct"), s.rsd_pct, stats::rsd_pct(&s.sample_medians_ns));
        if let (Some(ratio), Some(delta)) = (s.vs_baseline_ratio, s.measured_delta_ns) {
            let base = s.median_ns - delta;
            differs(&mut problems, format!("{name}: vs_baseline_ratio"), ratio, s.median_ns / base);
        }
    }
    problems
}
