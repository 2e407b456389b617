//! The `network` section: every percentile and mean recomputed from the stored handshake times,
//! per-handshake packets and bytes and the observed loss from the router's counters, each point's
//! validity from its connect times, and the model from its inputs.

use super::differs;
use crate::figures::network::{handshakes, loss_pct, mean_ns, percentiles_ns, tolerance_ns};
use crate::results::Results;
use crate::stats;
use crate::units::{rtt, time};

pub fn check(results: &Results) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(n) = &results.network else {
        return problems;
    };
    for point in &n.points {
        let at = format!("network RTT {} loss {}%", rtt(point.rtt_ns), point.loss_pct);
        let l = &point.link;
        if l.connect_ns.is_empty() {
            problems.push(format!("{at}: no connect times"));
        } else {
            let median = stats::median(&l.connect_ns.iter().map(|&x| x as f64).collect::<Vec<_>>());
            differs(
                &mut problems,
                format!("{at} link rtt_median_ns"),
                l.rtt_median_ns,
                median,
            );
            let tolerance = tolerance_ns(point.rtt_ns);
            differs(
                &mut problems,
                format!("{at} link tolerance_ns"),
                l.tolerance_ns,
                tolerance,
            );
            if l.valid != ((median - point.rtt_ns).abs() <= l.tolerance_ns) {
                problems.push(format!(
                    "{at}: marked {} but its measured RTT {} against {} says otherwise",
                    if l.valid { "valid" } else { "invalid" },
                    time(median),
                    rtt(point.rtt_ns)
                ));
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
            let levels = n.percentiles.len();
            if c.ready_percentiles_ns.len() != levels || c.echo_percentiles_ns.len() != levels {
                problems.push(format!(
                    "{name}: percentiles stored for {} / {} of {levels} levels",
                    c.ready_percentiles_ns.len(),
                    c.echo_percentiles_ns.len(),
                ));
            }
            for (field, stored, samples) in [
                ("ready_percentiles_ns", &c.ready_percentiles_ns, &c.ready_ns),
                ("echo_percentiles_ns", &c.echo_percentiles_ns, &c.echo_ns),
            ] {
                let fresh = percentiles_ns(samples, &n.percentiles);
                for (k, (a, b)) in stored.iter().zip(fresh).enumerate() {
                    differs(&mut problems, format!("{name} {field}[{k}]"), *a, b);
                }
            }
            if c.precision.is_some() || c.ready_p50_ci95_ns.is_some() {
                let (p50, p95) = crate::figures::network::ready_intervals(&c.ready_ns);
                for (field, stored, fresh) in [
                    ("ready_p50_ci95_ns", c.ready_p50_ci95_ns, p50),
                    ("ready_p95_ci95_ns", c.ready_p95_ci95_ns, p95),
                ] {
                    match (stored, fresh) {
                        (Some(a), Some(b)) => {
                            differs(&mut problems, format!("{name} {field} low"), a.0, b.0);
                            differs(&mut problems, format!("{name} {field} high"), a.1, b.1);
                        }
                        (None, None) => {}
                        _ => problems.push(format!("{name}: {field} stored and recomputed differ")),
                    }
                }
                if let Some(pr) = &c.precision {
                    let centre = percentiles_ns(&c.ready_ns, &[50.0])[0];
                    super::precision::check(
                        &mut problems,
                        &name,
                        pr,
                        p50,
                        centre,
                        super::precision::Batches {
                            count: 1,
                            what: "batches",
                            confirm: 0,
                        },
                    );
                }
            }
            if !c.ready_ns.is_empty() {
                let mean = mean_ns(&c.ready_ns);
                differs(
                    &mut problems,
                    format!("{name} ready_mean_ns"),
                    c.ready_mean_ns,
                    mean,
                );
            }
            let n_hs = handshakes(c);
            for d in 0..2 {
                let per = |x: u64| x as f64 / n_hs;
                let field = |f: &str| format!("{name} {f}[{d}]");
                let packets = c.packets_per_handshake[d];
                differs(
                    &mut problems,
                    field("packets_per_handshake"),
                    packets,
                    per(c.packets[d]),
                );
                let bytes = c.bytes_per_handshake[d];
                differs(
                    &mut problems,
                    field("bytes_per_handshake"),
                    bytes,
                    per(c.bytes[d]),
                );
                let loss = loss_pct(c.dropped[d], c.packets[d]);
                differs(
                    &mut problems,
                    field("observed_loss_pct"),
                    c.observed_loss_pct[d],
                    loss,
                );
            }
            let m = &c.model;
            let expected = crate::netmodel::expected_ns(
                m.zero_ns,
                m.round_trips,
                point.rtt_ns,
                n.base_rtt_ns,
                point.loss_pct / 100.0,
                m.data_packets,
                m.bytes,
                n.rate_mbit,
            );
            differs(
                &mut problems,
                format!("{name} model expected_ns"),
                m.expected_ns,
                expected,
            );
        }
    }
    problems
}
