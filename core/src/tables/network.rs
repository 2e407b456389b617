//! The `network` section as text: what `pqprof network` prints after measuring.

use crate::results::Network;
use crate::units::{rtt, time};

/// Per point and scenario: the median, p95 and mean, each beside the model's, the medians of wire
/// and endpoint time, packets and the loss applied each way.
pub fn table(n: &Network) -> String {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t.set_header(vec![
        "RTT",
        "loss",
        "link RTT",
        "stack",
        "group",
        "auth",
        "flight",
        "RTs",
        "p50",
        "p50 95% ±",
        "model p50",
        "wire / endpoint p50",
        "p95",
        "model p95",
        "mean",
        "model mean",
        "packets c→s / s→c",
        "lost c→s / s→c",
        "failed",
    ]);
    for p in &n.points {
        let modes = p
            .cells
            .iter()
            .map(|c| (c, ""))
            .chain(p.resumed.iter().map(|c| (c, " (resumed)")))
            .chain(p.validated.iter().map(|c| (c, c.mode.suffix())));
        for (i, (c, mode)) in modes.enumerate() {
            let mode = match mode {
                "" | " (resumed)" => mode.to_string(),
                m => format!(" ({m})"),
            };
            let first = |s: String| if i == 0 { s } else { String::new() };
            let invalid = if p.link.valid { "" } else { " INVALID" };
            t.add_row(vec![
                first(rtt(p.rtt_ns)),
                first(format!("{}%", p.loss_pct)),
                first(format!("{}{invalid}", time(p.link.rtt_median_ns))),
                c.stack.name().to_string(),
                c.group.clone(),
                format!("{}{mode}", c.auth.as_deref().unwrap_or("-")),
                c.server_flight_bytes
                    .map_or("-".into(), |b| format!("{:.1} kB", b as f64 / 1e3)),
                format!("{}", c.model.round_trips),
                c.ready_median_ns(n).map_or("n/a".into(), time),
                c.precision
                    .as_ref()
                    .map_or("n/a".into(), |p| format!("{:.1}%", p.half_width_pct)),
                c.model.p50_ns.map_or("n/a".into(), time),
                c.split.map_or("-".into(), |s| {
                    format!("{} / {}", time(s.wire_p50_ns), time(s.endpoint_p50_ns))
                }),
                c.ready_at(n, 95.0).map_or("n/a".into(), time),
                c.model.p95_ns.map_or("n/a".into(), time),
                time(c.ready_mean_ns),
                time(c.model.expected_ns),
                format!(
                    "{:.1} / {:.1}",
                    c.packets_per_handshake[0], c.packets_per_handshake[1]
                ),
                format!(
                    "{:.1}% / {:.1}%",
                    c.observed_loss_pct[0], c.observed_loss_pct[1]
                ),
                c.failed.to_string(),
            ]);
        }
    }
    let mut s = format!(
        "Network grid {} ({}; base RTT {}, congestion control {}{}):\n",
        n.grid,
        n.emulator,
        time(n.base_rtt_ns),
        n.congestion_control,
        match (n.mtu, n.mss, n.initcwnd) {
            (Some(mtu), Some(mss), Some(w)) => format!(
                "; MTU {mtu}, MSS {mss}, initial window {w} segments = {:.1} kB",
                f64::from(mss * w) / 1e3
            ),
            _ => String::new(),
        }
    );
    s += &t.to_string();
    s.push('\n');
    let paquin = crate::figures::network::beside_paquin(n);
    if !paquin.is_empty() {
        s += "\nA leaf-only ML-DSA-44 chain beside Paquin et al.'s Dilithium2 (leaf only, p256_kyber512_90s; medians):\n";
        for r in paquin {
            s += &format!(
                "  {} {} at {}, {}% loss: {} (ECDSA {}); theirs at {} ms: Dilithium2 {} ms, ECDSA {} ms\n",
                r.stack,
                r.group,
                rtt(r.rtt_ns),
                r.loss_pct,
                time(r.leaf_ns),
                r.ecdsa_ns.map_or("n/a".into(), time),
                r.their_rtt_ms,
                r.their_dilithium2_ms,
                r.their_ecdsa_ms
            );
        }
    }
    for note in &n.notes {
        s += &format!("note: {note}\n");
    }
    s
}
