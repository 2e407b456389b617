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
    /// The servers of servers/ under h2load, each against its real handshakes' capacity, and the
    /// connections of each of their rounds.
    pub(crate) servers: Vec<ServerLine>,
    pub(crate) servers_connections: usize,
    pub(crate) notes: Vec<String>,
}

#[derive(Serialize)]
pub(crate) struct ServerLine {
    pub(crate) server: String,
    pub(crate) group: String,
    pub(crate) auth: String,
    pub(crate) rate: String,
    pub(crate) cpu: String,
    pub(crate) busy: String,
    pub(crate) handshake_cpu: String,
    pub(crate) capacity: String,
    pub(crate) diff: String,
    pub(crate) verdict: String,
    pub(crate) held: String,
}

/// A lab server's rounds under h2load as a line: the rate, the server's CPU per handshake and how
/// busy it was, then the real handshakes' CPU per handshake, the capacity it gives and the
/// cross-check's verdict (`figures::server_load`).
fn server_line(r: &crate::results::Results, l: &crate::results::ServerLoad) -> ServerLine {
    use crate::figures::server_load;
    let f = server_load::of(l);
    let x = server_load::crosscheck(r, l);
    let half = |h: Option<f64>, unit: &dyn Fn(f64) -> String| {
        h.map_or(String::new(), |h| format!(" ±{}", unit(h)))
    };
    ServerLine {
        server: format!("{} {}", l.server, l.version),
        group: l.group.clone(),
        auth: l.auth.clone(),
        rate: f.as_ref().map_or("–".into(), |f| {
            format!("{}/s{}", count(f.rate_per_s), half(f.rate_half95, &count))
        }),
        cpu: f.as_ref().map_or("–".into(), |f| {
            format!(
                "{}{}",
                time(f.cpu_per_handshake_ns),
                half(f.cpu_half95_ns, &time)
            )
        }),
        busy: f
            .as_ref()
            .map_or("–".into(), |f| format!("{:.0}%", f.busy_pct)),
        handshake_cpu: x.as_ref().map_or("–".into(), |x| time(x.handshake_cpu_ns)),
        capacity: x
            .as_ref()
            .map_or("–".into(), |x| format!("{}/s", count(x.capacity_per_s))),
        diff: x
            .as_ref()
            .map_or("–".into(), |x| format!("{:+.1}%", x.diff_pct)),
        verdict: x
            .as_ref()
            .map_or("no real handshakes of this scenario".into(), |x| {
                x.verdict.label()
            }),
        held: l.held.as_ref().map_or("–".into(), held_cell),
    }
}

/// An SSH server's line: h2load speaks TLS alone, so memory with connections held is its one
/// figure here (its CPU per handshake is the handshake step's).
fn held_line(h: &crate::results::ServerHeld) -> ServerLine {
    let none = || "–".to_string();
    ServerLine {
        server: format!("{} {}", h.server, h.version),
        group: h.group.clone(),
        auth: format!("{} host key", h.auth),
        rate: none(),
        cpu: none(),
        busy: none(),
        handshake_cpu: none(),
        capacity: none(),
        diff: none(),
        verdict: "not under h2load (SSH): held after its key exchange, before login".into(),
        held: held_cell(&h.held),
    }
}

/// Proportional set size per held connection, and how many were held.
fn held_cell(h: &crate::results::Held) -> String {
    crate::figures::server_load::growth(h, |h| &h.pss_bytes).map_or("–".into(), |b| {
        let n = h.connections.last().copied().unwrap_or(0);
        format!("{} B ({} held)", count(b), count(n as f64))
    })
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

/// The load steps over loopback sockets, a line each.
fn steps_of(c: &crate::results::Capacity) -> Vec<Step> {
    c.sockets
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
        .collect()
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
            let steps = steps_of(c);
            let servers = c
                .servers
                .iter()
                .map(|l| server_line(&run.results, l))
                .chain(c.servers_held.iter().map(held_line))
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
                servers_connections: c.servers.first().map_or(0, |l| l.connections),
                servers,
                notes: c.notes.iter().map(|w| w.to_string()).collect(),
            })
        })
        .collect()
}
