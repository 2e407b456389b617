//! The `handshakes` section as text: what `pqprof handshake` prints after measuring.

use crate::results::{Handshakes, Results};
use crate::units::{count, ratio, text_table, time};

/// Every scenario: its median, precision, spread, bytes, CPU and allocations.
fn scenarios(h: &Handshakes) -> String {
    let head = [
        "proto",
        "suite",
        "stack",
        "median",
        "95% ±",
        "RSD",
        "p95",
        "vs base",
        "bytes c>s / s>c",
        "client CPU",
        "server CPU",
        "client allocs / B",
        "server allocs / B",
    ];
    let rows: Vec<Vec<String>> = h
        .scenarios
        .iter()
        .map(|sc| {
            let mem = |m: &crate::results::PerHandshake| {
                format!("{} / {}", count(m.allocs()), count(m.bytes()))
            };
            vec![
                sc.protocol.clone(),
                sc.suite.clone(),
                format!(
                    "{}{}",
                    sc.stack.name(),
                    if sc.instrumented { " (in situ)" } else { "" }
                ),
                time(sc.median_ns),
                sc.precision.as_ref().map_or("n/a".into(), |p| {
                    format!(
                        "{:.1}% {}, {}",
                        p.half_width_pct,
                        p.reason.describe(),
                        p.batches
                    )
                }),
                format!("{:.1}%", sc.rsd_pct),
                time(sc.p95_ns),
                sc.vs_baseline_ratio.map_or("base".into(), ratio),
                format!(
                    "{} / {}",
                    count(sc.client_to_server_bytes),
                    count(sc.server_to_client_bytes)
                ),
                time(sc.client_cpu_ns),
                time(sc.server_cpu_ns),
                mem(&sc.client_mem),
                mem(&sc.server_mem),
            ]
        })
        .collect();
    text_table(&head, &rows, &[3, 5, 6, 7, 8, 9, 10, 11, 12]) + "\n"
}

/// Where the hybrid's extra time goes: measured, in situ, composed.
fn deltas(h: &Handshakes) -> String {
    // Where the hybrid's extra time goes: measured, in situ, composed.
    let rows: Vec<Vec<String>> = h
        .scenarios
        .iter()
        .filter(|p| !p.instrumented && p.measured_delta_ns.is_some())
        .map(|p| {
            let i = h
                .scenarios
                .iter()
                .find(|x| x.instrumented && x.suite == p.suite && x.stack == p.stack)
                .and_then(|x| x.insitu.as_ref());
            let t = |x: Option<f64>| x.map_or("–".into(), crate::units::signed_time);
            vec![
                p.suite.clone(),
                p.stack.name().into(),
                t(p.measured_delta_ns),
                t(i.and_then(|i| i.crypto_delta_ns)),
                t(i.and_then(|i| i.remainder_delta_ns)),
                format!("{} ({})", t(p.composed_delta_ns), p.composed_stack),
            ]
        })
        .collect();
    let mut s = String::new();
    if !rows.is_empty() {
        s += "\nAgainst the baseline group, per connection:\n";
        s += &text_table(
            &[
                "suite",
                "stack",
                "measured Δ",
                "in-situ crypto Δ",
                "remainder Δ",
                "composed paths' Δ (stack)",
            ],
            &rows,
            &[2, 3, 4, 5],
        );
        s += "\n";
    }
    s
}

/// Each key-exchange and signature call, in situ against the phase loop.
fn per_call(h: &Handshakes, results: &Results) -> String {
    // Each key-exchange and signature call, in situ against the phase loop.
    let rows: Vec<Vec<String>> = h
        .scenarios
        .iter()
        .filter(|p| p.instrumented)
        .flat_map(|p| {
            crate::incontext::per_call(results, p)
                .into_iter()
                .map(move |c| {
                    vec![
                        p.suite.clone(),
                        p.stack.name().into(),
                        c.label.clone(),
                        c.implementation(),
                        time(c.insitu_ns),
                        time(c.loop_ns),
                        ratio(c.ratio()),
                        c.situ_ns.map_or("-".into(), time),
                        c.situ_ns.map_or("-".into(), |_| ratio(c.composed_ratio())),
                    ]
                })
        })
        .collect();
    let mut s = String::new();
    if !rows.is_empty() {
        s += "\nPer call, in situ (median, both sides) against the phase loop (median) and the calls timed in a handshake's state (median):\n";
        s += &text_table(
            &[
                "suite",
                "stack",
                "call",
                "algorithm (backend)",
                "in situ",
                "phase loop",
                "ratio",
                "in state",
                "ratio",
            ],
            &rows,
            &[4, 5, 6, 7, 8],
        );
        s += "\n";
    }
    s
}

/// The timers' cost three ways; the paired one is the measurement, the others its cross-checks.
fn timers(h: &Handshakes) -> String {
    // The timers' cost three ways; the paired one is the measurement, the others its cross-checks.
    let rows: Vec<Vec<String>> = h
        .scenarios
        .iter()
        .filter_map(|p| p.insitu_overhead_paired.as_ref().map(|o| (p, o)))
        .map(|(p, o)| {
            let pct = |x: Option<f64>| x.map_or("–".into(), |o| format!("{o:+.2}%"));
            let signed = crate::units::signed_time;
            // The median of the block differences where stored (the headline), else the mean.
            let paired = |o: &crate::results::PairedOverhead| match &o.median {
                Some(m) => format!(
                    "{} ({} to {}) = {:+.2}% (≤ {:+.2}%)",
                    signed(m.delta_ns),
                    signed(m.lo95_ns),
                    signed(m.hi95_ns),
                    m.pct,
                    m.pct_hi95
                ),
                None => format!(
                    "mean {} ± {} = {:+.2}% (≤ {:+.2}%)",
                    signed(o.delta_ns),
                    time(o.delta_half95_ns),
                    o.pct,
                    o.pct_hi95
                ),
            };
            let mean = |o: &crate::results::PairedOverhead| {
                format!("{} ± {}", signed(o.delta_ns), time(o.delta_half95_ns))
            };
            let wrapper = |o: &crate::results::PairedOverhead| {
                o.median
                    .as_ref()
                    .and_then(|m| m.wrapper_ns)
                    .or(o.wrapper_ns)
                    .map_or("–".into(), signed)
            };
            let lo = p.insitu_overhead_paired_loopback.as_ref();
            vec![
                p.suite.clone(),
                p.stack.name().into(),
                pct(p.insitu_overhead_pct),
                pct(p.insitu_overhead_est_pct),
                paired(o),
                wrapper(o),
                lo.map_or("–".into(), paired),
                lo.map_or("–".into(), mean),
                lo.map_or("–".into(), wrapper),
            ]
        })
        .collect();
    let mut s = String::new();
    if !rows.is_empty() {
        s += "\nIn-situ timers' cost, over the plain loopback median (paired: the median of the block differences, its 95% interval and upper end; on loopback also their mean ± 95% half-width):\n";
        s += &text_table(
            &[
                "suite",
                "stack",
                "two medians",
                "calls × cost",
                "paired in memory",
                "provider alone",
                "paired on loopback",
                "loopback mean",
                "provider alone",
            ],
            &rows,
            &[2, 3, 4, 5, 6, 7, 8],
        );
        s += "\n";
    }
    s
}

/// The scenario table as text; `results` holds the phases the in-situ calls are set beside.
pub fn table(h: &Handshakes, results: &Results) -> String {
    let mut s = scenarios(h) + &deltas(h) + &per_call(h, results) + &timers(h);
    for f in &h.failures {
        s += &format!("failed: {f}\n");
    }
    s
}
