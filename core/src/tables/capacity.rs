//! The `capacity` section as text: what `pqprof capacity` prints after measuring.

use crate::results::Capacity;

/// The section as text: one table per measurement.
pub fn table(c: &Capacity) -> String {
    use crate::units::{count, time};
    let new = |header: Vec<&str>| {
        let mut t = comfy_table::Table::new();
        t.load_preset(comfy_table::presets::NOTHING);
        t.set_header(header);
        t
    };
    let mut s = String::from("In memory (client and server in one thread, one core):\n");
    let mut t = new(vec![
        "stack",
        "group",
        "handshakes/s",
        "95% interval",
        "server CPU",
        "client CPU",
        "server/core-s",
        "vs X25519",
        "server Δ",
        "composed server Δ",
        "servers for 10k/s",
    ]);
    for m in &c.in_memory {
        t.add_row(vec![
            m.stack.name().to_string(),
            m.group.clone(),
            count(m.handshakes_per_s),
            m.handshakes_per_s_ci95.map_or("n/a".into(), |(a, b)| {
                let p = m.precision.as_ref().map_or(String::new(), |p| {
                    format!(" (±{:.2}%, {})", p.half_width_pct, p.reason.describe())
                });
                format!("{} – {}{p}", count(a), count(b))
            }),
            time(m.server.median_ns),
            time(m.client.median_ns),
            count(m.server_per_core_s),
            m.vs_baseline.map_or(String::new(), crate::units::ratio),
            m.server_delta_ns
                .map_or(String::new(), crate::units::signed_time),
            m.composed_server_delta_ns
                .map_or(String::new(), crate::units::signed_time),
            format!("{:.2}", m.servers_for_10k),
        ]);
    }
    s += &t.to_string();
    if !c.resumed.is_empty() {
        s += "\n\nResumed in memory (each with the ticket the handshake before brought), against full:\n";
        let mut t = new(vec![
            "stack",
            "group",
            "auth",
            "server CPU",
            "server/core-s",
            "vs full",
            "server Δ",
            "resumed",
        ]);
        for m in &c.resumed {
            t.add_row(vec![
                m.stack.name().to_string(),
                m.group.clone(),
                m.auth.clone().unwrap_or_default(),
                time(m.server.median_ns),
                count(m.server_per_core_s),
                m.vs_baseline.map_or(String::new(), crate::units::ratio),
                m.server_delta_ns
                    .map_or(String::new(), crate::units::signed_time),
                format!("{} of {}", m.resumptions.unwrap_or(0), m.server_ns.len()),
            ]);
        }
        s += &t.to_string();
    }
    s += "\n\nOver loopback sockets (server pinned to one core, load from another):\n";
    let mut t = new(vec![
        "stack",
        "group",
        "in flight",
        "handshakes/s",
        "p50",
        "p90",
        "p99",
        "server CPU/handshake",
        "server busy",
        "load busy",
        "failed",
    ]);
    for so in &c.sockets {
        for st in &so.steps {
            t.add_row(vec![
                so.stack.name().to_string(),
                so.group.clone(),
                st.concurrency.to_string(),
                format!(
                    "{}{}",
                    count(st.handshakes_per_s),
                    if st.load_limited {
                        " (load-limited)"
                    } else {
                        ""
                    }
                ),
                time(st.p50_ns),
                time(st.p90_ns),
                time(st.p99_ns),
                time(st.server_cpu_per_handshake_ns),
                format!("{:.0}%", st.server_busy_pct),
                format!("{:.0}%", st.client_busy_pct),
                st.failed.to_string(),
            ]);
        }
    }
    s += &t.to_string();
    s += &format!(
        "\n\nMemory per held connection (open-file limit {} -> {}):\n",
        c.fd_limit_before, c.fd_limit
    );
    let mut t = new(vec![
        "stack",
        "group",
        "connections",
        "server heap",
        "of which C",
        "server RSS",
        "kernel buffers",
        "kernel slab",
        "handshake peak",
        "retained",
    ]);
    for m in &c.memory {
        let p = &m.per_connection;
        t.add_row(vec![
            m.stack.name().to_string(),
            m.group.clone(),
            count(p.connections as f64),
            format!("{} B", count(p.heap_bytes)),
            format!("{} B", count(p.heap_c_bytes)),
            format!("{} B", count(p.rss_bytes)),
            format!("{} B", count(p.kernel_bytes)),
            format!("{} B", count(p.kernel_slab_bytes)),
            format!("{} B", count(m.peak_median_bytes)),
            format!("{} B", count(m.retained_median_bytes)),
        ]);
    }
    s += &t.to_string();
    s.push('\n');
    for n in &c.notes {
        s += &format!("note: {n}\n");
    }
    s
}
