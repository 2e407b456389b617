//! The `network` section as text: what `pqprof network` prints after measuring.

use crate::results::Network;
use crate::units::{rtt, time};

/// Per point and scenario: the median and p95, the mean beside the model, packets and the loss
/// applied each way.
pub fn table(n: &Network) -> String {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t.set_header(vec![
        "RTT",
        "loss",
        "link RTT",
        "stack",
        "group",
        "p50",
        "p95",
        "mean",
        "model",
        "packets c→s / s→c",
        "lost c→s / s→c",
        "failed",
    ]);
    for p in &n.points {
        for (i, c) in p.cells.iter().enumerate() {
            let first = |s: String| if i == 0 { s } else { String::new() };
            let invalid = if p.link.valid { "" } else { " INVALID" };
            t.add_row(vec![
                first(rtt(p.rtt_ns)),
                first(format!("{}%", p.loss_pct)),
                first(format!("{}{invalid}", time(p.link.rtt_median_ns))),
                c.stack.name().to_string(),
                c.group.clone(),
                c.ready_median_ns(n).map_or("n/a".into(), time),
                c.ready_at(n, 95.0).map_or("n/a".into(), time),
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
        "Network grid {} ({}; base RTT {}, congestion control {}):\n",
        n.grid,
        n.emulator,
        time(n.base_rtt_ns),
        n.congestion_control
    );
    s += &t.to_string();
    s.push('\n');
    for note in &n.notes {
        s += &format!("note: {note}\n");
    }
    s
}
