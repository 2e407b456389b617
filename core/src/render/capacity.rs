//! The overview page's capacity section: per run, a line per stack and group (handshakes per core,
//! against the classical group, servers for 10,000 handshakes per second, memory per connection),
//! the load steps, and the measured server-side difference beside the composed one.

use super::svg::{self, Bar};
use super::Run;
use crate::units::{count, ratio, signed_time, time};
use minijinja::Value;
use serde::Serialize;

#[derive(Serialize)]
pub(crate) struct View {
    pub(crate) host: String,
    pub(crate) machine_id: String,
    /// Server handshakes per core-second in memory, a bar per stack and group.
    pub(crate) rate_chart: Value,
    /// Server heap per held connection, a bar per stack and group.
    pub(crate) memory_chart: Value,
    pub(crate) date: String,
    pub(crate) wall: String,
    pub(crate) cores: usize,
    pub(crate) fd_limit: String,
    pub(crate) lines: Vec<Line>,
    pub(crate) steps: Vec<Step>,
    pub(crate) memory: Vec<MemoryLine>,
    pub(crate) notes: Vec<String>,
}

#[derive(Serialize)]
pub(crate) struct Line {
    pub(crate) stack: String,
    pub(crate) group: String,
    pub(crate) rate: String,
    pub(crate) interval: String,
    pub(crate) server: String,
    pub(crate) client: String,
    pub(crate) per_core: String,
    pub(crate) vs_baseline: String,
    pub(crate) class: String,
    pub(crate) servers: String,
    pub(crate) delta: String,
    pub(crate) composed: String,
    pub(crate) explained: String,
}

#[derive(Serialize)]
pub(crate) struct Step {
    pub(crate) stack: String,
    pub(crate) group: String,
    pub(crate) concurrency: usize,
    pub(crate) rate: String,
    pub(crate) p50: String,
    pub(crate) p99: String,
    pub(crate) cpu: String,
    pub(crate) busy: String,
    pub(crate) failed: u64,
}

#[derive(Serialize)]
pub(crate) struct MemoryLine {
    pub(crate) stack: String,
    pub(crate) group: String,
    pub(crate) connections: String,
    pub(crate) heap: String,
    pub(crate) rss: String,
    pub(crate) kernel: String,
    pub(crate) slab: String,
    pub(crate) peak: String,
    pub(crate) retained: String,
}

pub(crate) fn build(runs: &[&Run]) -> Vec<View> {
    runs.iter()
        .filter_map(|run| {
            let c = run.results.capacity.as_ref()?;
            let lines = c
                .in_memory
                .iter()
                .map(|m| Line {
                    stack: run.results.stack_label(m.stack.name()),
                    group: m.group.clone(),
                    rate: count(m.handshakes_per_s),
                    interval: m.handshakes_per_s_ci95.map_or("n/a".into(), |(a, b)| {
                        format!("{} – {}", count(a), count(b))
                    }),
                    server: time(m.server.median_ns),
                    client: time(m.client.median_ns),
                    per_core: count(m.server_per_core_s),
                    vs_baseline: m.vs_baseline.map_or("baseline".into(), ratio),
                    class: match m.vs_baseline {
                        Some(v) if v < 1.0 => "slower".into(),
                        Some(_) => "faster".into(),
                        None => "baseline".into(),
                    },
                    servers: format!("{:.2}", m.servers_for_10k),
                    delta: m.server_delta_ns.map_or(String::new(), signed_time),
                    composed: m
                        .composed_server_delta_ns
                        .map_or(String::new(), signed_time),
                    explained: match (m.server_delta_ns, m.composed_server_delta_ns) {
                        (Some(d), Some(c)) if d.abs() > 0.0 => format!("{:.0}%", c / d * 100.0),
                        _ => String::new(),
                    },
                })
                .collect();
            let steps = c
                .sockets
                .iter()
                .flat_map(|s| {
                    s.steps.iter().map(move |st| Step {
                        stack: s.stack.name().into(),
                        group: s.group.clone(),
                        concurrency: st.concurrency,
                        rate: format!(
                            "{}{}",
                            count(st.handshakes_per_s),
                            if st.load_limited {
                                " (load-limited)"
                            } else {
                                ""
                            }
                        ),
                        p50: time(st.p50_ns),
                        p99: time(st.p99_ns),
                        cpu: time(st.server_cpu_per_handshake_ns),
                        busy: format!("{:.0}% / {:.0}%", st.server_busy_pct, st.client_busy_pct),
                        failed: st.failed,
                    })
                })
                .collect();
            let memory = c
                .memory
                .iter()
                .map(|m| MemoryLine {
                    stack: m.stack.name().into(),
                    group: m.group.clone(),
                    connections: count(m.per_connection.connections as f64),
                    heap: format!("{} B", count(m.per_connection.heap_bytes)),
                    rss: format!("{} B", count(m.per_connection.rss_bytes)),
                    kernel: format!("{} B", count(m.per_connection.kernel_bytes)),
                    slab: format!("{} B", count(m.per_connection.kernel_slab_bytes)),
                    peak: format!("{} B", count(m.peak_median_bytes)),
                    retained: format!("{} B", count(m.retained_median_bytes)),
                })
                .collect();
            let stacks: Vec<String> = {
                let mut v: Vec<String> = Vec::new();
                for m in &c.in_memory {
                    if !v.iter().any(|s| s == m.stack.name()) {
                        v.push(m.stack.name().to_string());
                    }
                }
                for m in &c.memory {
                    if !v.iter().any(|s| s == m.stack.name()) {
                        v.push(m.stack.name().to_string());
                    }
                }
                v
            };
            let rate_bars: Vec<Bar> = c
                .in_memory
                .iter()
                .map(|m| Bar {
                    label: format!("{} {}", run.results.stack_label(m.stack.name()), m.group),
                    value_ns: m.server_per_core_s,
                    key: m.stack.name().to_string(),
                    note: m
                        .vs_baseline
                        .map_or(" (baseline)".into(), |v| format!(" ({})", ratio(v))),
                })
                .collect();
            let memory_bars: Vec<Bar> = c
                .memory
                .iter()
                .map(|m| Bar {
                    label: format!("{} {}", m.stack.name(), m.group),
                    value_ns: m.per_connection.heap_bytes,
                    key: m.stack.name().to_string(),
                    note: String::new(),
                })
                .collect();
            let per_s = |x: f64| format!("{}/s", count(x));
            let bytes = |x: f64| format!("{} B", count(x));
            Some(View {
                host: run.label.clone(),
                machine_id: run.anchor.clone(),
                rate_chart: Value::from_safe_string(svg::bars_in(
                    "Server handshakes per core-second, in memory",
                    "server handshakes per core-second (vs the classical group)",
                    &rate_bars,
                    &stacks,
                    &per_s,
                )),
                memory_chart: Value::from_safe_string(if memory_bars.is_empty() {
                    String::new()
                } else {
                    svg::bars_in(
                        "Server heap per held connection",
                        "server heap per held, idle connection",
                        &memory_bars,
                        &stacks,
                        &bytes,
                    )
                }),
                date: c.date_utc.clone(),
                wall: format!("{:.0} s", c.wall_seconds),
                cores: c.cores,
                fd_limit: format!(
                    "{} (was {})",
                    count(c.fd_limit as f64),
                    count(c.fd_limit_before as f64)
                ),
                lines,
                steps,
                memory,
                notes: c.notes.iter().map(|w| w.to_string()).collect(),
            })
        })
        .collect()
}
