//! The `network` section: every percentile and mean recomputed from the stored handshake times,
//! per-handshake packets and bytes and the observed loss from the router's counters, each point's
//! validity from its connect times, and the model from its inputs.

use super::differs;
use crate::results::Results;
use crate::stats;

/// The value at each percentile of a set of nanosecond samples, milliseconds.
pub fn percentiles_ms(samples_ns: &[u64], percentiles: &[f64]) -> Vec<f64> {
    let sorted = stats::sorted(
        &samples_ns
            .iter()
            .map(|&x| x as f64 / 1e6)
            .collect::<Vec<_>>(),
    );
    percentiles
        .iter()
        .map(|&p| {
            if sorted.is_empty() {
                0.0
            } else {
                stats::percentile_sorted(&sorted, p)
            }
        })
        .collect()
}

/// max(0.3 ms, 3% of the target RTT) (issue #10).
pub fn tolerance_ms(rtt_ms: f64) -> f64 {
    (rtt_ms * 0.03).max(0.3)
}

pub fn check(results: &Results) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(n) = &results.network else {
        return problems;
    };
    for point in &n.points {
        let at = format!("network RTT {} ms loss {}%", point.rtt_ms, point.loss_pct);
        let l = &point.link;
        if l.connect_ns.is_empty() {
            problems.push(format!("{at}: no connect times"));
        } else {
            let median = stats::median(
                &l.connect_ns
                    .iter()
                    .map(|&x| x as f64 / 1e6)
                    .collect::<Vec<_>>(),
            );
            differs(
                &mut problems,
                format!("{at} link rtt_median_ms"),
                l.rtt_median_ms,
                median,
            );
            differs(
                &mut problems,
                format!("{at} link tolerance_ms"),
                l.tolerance_ms,
                tolerance_ms(point.rtt_ms),
            );
            if l.valid != ((median - point.rtt_ms).abs() <= l.tolerance_ms) {
                problems.push(format!("{at}: marked {} but its measured RTT {median:.3} ms against {} ms says otherwise", if l.valid { "valid" } else { "invalid" }, point.rtt_ms));
            }
        }
        for c in &point.cells {
            let name = format!("{at} {} {} {}", c.protocol, c.stack.name(), c.group);
            if c.ready_ns.len() != c.echo_ns.len() {
                problems.push(format!(
                    "{name}: {} ready times, {} echo times",
                    c.ready_ns.len(),
                    c.echo_ns.len()
                ));
                continue;
            }
            if c.ready_ns.iter().zip(&c.echo_ns).any(|(r, e)| r > e) {
                problems.push(format!("{name}: a handshake completed after its echo"));
            }
            for (k, (a, b)) in c
                .ready_ms
                .iter()
                .zip(percentiles_ms(&c.ready_ns, &n.percentiles))
                .enumerate()
            {
                differs(&mut problems, format!("{name} ready_ms[{k}]"), *a, b);
            }
            for (k, (a, b)) in c
                .echo_ms
                .iter()
                .zip(percentiles_ms(&c.echo_ns, &n.percentiles))
                .enumerate()
            {
                differs(&mut problems, format!("{name} echo_ms[{k}]"), *a, b);
            }
            if c.ready_ms.len() != n.percentiles.len() || c.echo_ms.len() != n.percentiles.len() {
                problems.push(format!(
                    "{name}: percentiles stored for {} of {} levels",
                    c.ready_ms.len(),
                    n.percentiles.len()
                ));
            }
            if !c.ready_ns.is_empty() {
                differs(
                    &mut problems,
                    format!("{name} ready_mean_ms"),
                    c.ready_mean_ms,
                    stats::mean(
                        &c.ready_ns
                            .iter()
                            .map(|&x| x as f64 / 1e6)
                            .collect::<Vec<_>>(),
                    ),
                );
            }
            let handshakes = (c.ready_ns.len() + c.failed).max(1) as f64;
            for d in 0..2 {
                differs(
                    &mut problems,
                    format!("{name} packets_per_handshake[{d}]"),
                    c.packets_per_handshake[d],
                    c.packets[d] as f64 / handshakes,
                );
                differs(
                    &mut problems,
                    format!("{name} bytes_per_handshake[{d}]"),
                    c.bytes_per_handshake[d],
                    c.bytes[d] as f64 / handshakes,
                );
                let loss = if c.packets[d] > 0 {
                    c.dropped[d] as f64 / c.packets[d] as f64 * 100.0
                } else {
                    0.0
                };
                differs(
                    &mut problems,
                    format!("{name} observed_loss_pct[{d}]"),
                    c.observed_loss_pct[d],
                    loss,
                );
            }
            let m = &c.model;
            let expected = crate::netmodel::expected_ms(
                m.zero_ms,
                m.round_trips,
                point.rtt_ms,
                n.base_rtt_ms,
                point.loss_pct / 100.0,
                m.data_packets,
                m.bytes,
                n.rate_mbit,
            );
            differs(
                &mut problems,
                format!("{name} model expected_ms"),
                m.expected_ms,
                expected,
            );
        }
    }
    problems
}
