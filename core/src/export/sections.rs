//! Each section of a run as a `Table`, built from the figure functions the site draws (the answer's
//! `figures::changes`, the composition's `figures::composition::rows`) or from the stored figures
//! the pages show, never computed a second way.

use super::{Column, Section, Table, Unit, Value};
use crate::figures::changes::{self, QUESTIONS};
use crate::results::{Results, Scenario};

pub(super) fn table(r: &Results, section: Section) -> Table {
    let (columns, rows) = match section {
        Section::Answer => answer(r),
        Section::Handshakes => handshakes(r),
        Section::Capacity => capacity(r),
        Section::Network => network(r),
        Section::Composition => composition(r),
        Section::Phases => lines(r, true),
        Section::Suites => lines(r, false),
        // `export::table` sends a probe elsewhere (`probe`).
        Section::Probe => (Vec::new(), Vec::new()),
    };
    Table {
        section: section.name(),
        columns,
        rows,
    }
}

fn text(s: impl Into<String>) -> Value {
    Value::Text(s.into())
}

fn num(x: impl Into<Option<f64>>) -> Value {
    Value::Number(x.into().filter(|x| x.is_finite()))
}

fn lo(i: Option<(f64, f64)>) -> Value {
    num(i.map(|i| i.0))
}

fn hi(i: Option<(f64, f64)>) -> Value {
    num(i.map(|i| i.1))
}

/// The column an answer figure is exported under, by the name the page stores it under
/// (`data-composed`, `data-rtt-5.6-lo`: `figures::changes::values`).
pub fn answer_figure_column(figure: &str) -> Option<Column> {
    let (name, unit) = match figure {
        "composed" => ("composed_delta", Unit::Ns),
        "real" => ("real_delta", Unit::Ns),
        "real-lo" => ("real_delta_ci95_low", Unit::Ns),
        "real-hi" => ("real_delta_ci95_high", Unit::Ns),
        "explained" => ("insitu_crypto_explains", Unit::Pct),
        "capacity" => ("server_capacity_vs_baseline", Unit::Ratio),
        "server-cpu" => ("server_cpu_delta", Unit::Ns),
        "server-cpu-lo" => ("server_cpu_delta_ci95_low", Unit::Ns),
        "server-cpu-hi" => ("server_cpu_delta_ci95_high", Unit::Ns),
        "server-cpu-capacity" => ("server_cpu_capacity_vs_baseline", Unit::Ratio),
        "memory" => ("memory_per_held_connection_delta", Unit::Bytes),
        "wire-cs" => ("wire_client_to_server", Unit::Bytes),
        "wire-sc" => ("wire_server_to_client", Unit::Bytes),
        rtt => {
            let rest = rtt.strip_prefix("rtt-")?;
            let (ms, end) = match rest.split_once('-') {
                Some((ms, "lo")) => (ms, "_ci95_low"),
                Some((ms, "hi")) => (ms, "_ci95_high"),
                Some(_) => return None,
                None => (rest, ""),
            };
            let name = format!("extra_at_{}_ms_rtt{end}", ms.replace('.', "_"));
            return Some(Column::new(&name, Unit::Ns));
        }
    };
    Some(Column::new(name, unit))
}

/// The front page's answer table: a row per question, stack and change, every figure the row
/// shows (`changes::values`) with the composed difference's interval beside it.
fn answer(r: &Results) -> (Vec<Column>, Vec<Vec<Value>>) {
    let mut columns = vec![
        Column::id("question", Unit::Text),
        Column::id("protocol", Unit::Text),
        Column::id("stack", Unit::Text),
        Column::id("scenario", Unit::Text),
        Column::id("baseline", Unit::Text),
    ];
    // The columns from a change with no figure, so that a run without handshakes has them too.
    let blank = changes::Figures {
        rtt_extra_ns: vec![None; changes::RTTS_MS.len()],
        rtt_extra_interval_ns: vec![None; changes::RTTS_MS.len()],
        ..changes::Figures::default()
    };
    columns.extend([
        Column::new("composed_delta_ci95_low", Unit::Ns),
        Column::new("composed_delta_ci95_high", Unit::Ns),
    ]);
    columns.extend(
        changes::values(&blank)
            .iter()
            .filter_map(|(n, _)| answer_figure_column(n)),
    );
    let mut rows = Vec::new();
    for q in QUESTIONS {
        for c in (q.changes)(r) {
            let f = changes::figures(r, &c);
            let interval = f
                .composed_ns
                .zip(f.composed_half95_ns)
                .map(|(d, h)| (d - h, d + h));
            let mut row = vec![
                text(q.title),
                text(c.protocol.as_str()),
                text(c.stack.as_str()),
                text(c.group.as_str()),
                text(c.baseline.as_str()),
                lo(interval),
                hi(interval),
            ];
            row.extend(changes::values(&f).into_iter().map(|(_, x)| num(x)));
            rows.push(row);
        }
    }
    // The composed interval goes beside its difference, after the identity.
    if let Some(at) = columns.iter().position(|c| c.name == "composed_delta") {
        let composed = columns.remove(at);
        columns.insert(5, composed);
        for row in &mut rows {
            let v = row.remove(at);
            row.insert(5, v);
        }
    }
    (columns, rows)
}

/// How a scenario's mode and form read in a row ("full", "resumed, in situ").
fn form(s: &Scenario) -> String {
    if s.instrumented {
        format!("{}, in situ", s.mode.name())
    } else {
        s.mode.name().to_string()
    }
}

/// Every real handshake scenario with its evidence: what it negotiated and sent.
fn handshakes(r: &Results) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = vec![
        Column::id("protocol", Unit::Text),
        Column::id("stack", Unit::Text),
        Column::id("transport", Unit::Text),
        Column::id("group", Unit::Text),
        Column::id("auth", Unit::Text),
        Column::id("mode", Unit::Text),
        Column::new("connections", Unit::Count),
        Column::new("median", Unit::Ns),
        Column::new("median_ci95_low", Unit::Ns),
        Column::new("median_ci95_high", Unit::Ns),
        Column::new("p95", Unit::Ns),
        Column::new("client_cpu", Unit::Ns),
        Column::new("server_cpu", Unit::Ns),
        Column::new("server_cpu_over_samples", Unit::Ns),
        Column::new("server_cpu_over_samples_ci95_low", Unit::Ns),
        Column::new("server_cpu_over_samples_ci95_high", Unit::Ns),
        Column::new("client_to_server", Unit::Bytes),
        Column::new("server_to_client", Unit::Bytes),
        Column::new("against", Unit::Text),
        Column::new("delta_vs_against", Unit::Ns),
        Column::new("delta_vs_against_ci95_low", Unit::Ns),
        Column::new("delta_vs_against_ci95_high", Unit::Ns),
        Column::new("composed_delta_vs_against", Unit::Ns),
        Column::new("negotiated_group", Unit::Text),
        Column::new("cipher", Unit::Text),
        Column::new("certificate_key", Unit::Text),
        Column::new("chain", Unit::Bytes),
        Column::new("hello_retry", Unit::Text),
        Column::new("resumed", Unit::Text),
    ];
    let rows =
        r.handshakes
            .iter()
            .flat_map(|h| &h.scenarios)
            .map(|s| {
                let e = &s.evidence;
                let cpu = crate::figures::server_cpu::of(s);
                let cpu_interval = cpu.as_ref().and_then(|c| {
                    let h = c.half95_ns?;
                    Some((c.per_handshake_ns - h, c.per_handshake_ns + h))
                });
                let against = s.against.as_ref().map_or(String::new(), |a| {
                    a.auth
                        .as_ref()
                        .map_or(a.suite.clone(), |auth| format!("{} + {auth}", a.suite))
                });
                vec![
                    text(s.protocol.as_str()),
                    text(s.stack.name()),
                    text(s.transport.name()),
                    text(s.suite.as_str()),
                    text(s.auth_name().unwrap_or("")),
                    text(form(s)),
                    num(s.totals_ns.len() as f64),
                    num(s.median_ns),
                    lo(s.median_ci95_ns),
                    hi(s.median_ci95_ns),
                    num(s.p95_ns),
                    num(s.client_cpu_ns),
                    num(s.server_cpu_ns),
                    num(cpu.map(|c| c.per_handshake_ns)),
                    lo(cpu_interval),
                    hi(cpu_interval),
                    num(s.client_to_server_bytes),
                    num(s.server_to_client_bytes),
                    text(against),
                    num(s.measured_delta_ns),
                    lo(s.measured_delta_ci95_ns),
                    hi(s.measured_delta_ci95_ns),
                    num(s.composed_delta_ns),
                    text(e.group.as_str()),
                    text(e.cipher.as_str()),
                    text(e.cert_key.as_str()),
                    num((!e.chain_bytes.is_empty())
                        .then(|| e.chain_bytes.iter().sum::<usize>() as f64)),
                    text(if e.hello_retry { "yes" } else { "no" }),
                    text(if e.resumed { "yes" } else { "no" }),
                ]
            })
            .collect();
    (columns, rows)
}

/// Handshakes per core in memory (full and resumed), the load over loopback at its highest rate,
/// and memory per held connection: a row per stack, scenario and measurement.
fn capacity(r: &Results) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = vec![
        Column::id("measurement", Unit::Text),
        Column::id("stack", Unit::Text),
        Column::id("group", Unit::Text),
        Column::id("auth", Unit::Text),
        Column::new("handshakes", Unit::PerSecond),
        Column::new("server_handshakes_per_core_second", Unit::Count),
        Column::new("server_cpu_per_handshake", Unit::Ns),
        Column::new("client_cpu_per_handshake", Unit::Ns),
        Column::new("server_vs_baseline", Unit::Ratio),
        Column::new("server_delta_vs_baseline", Unit::Ns),
        Column::new("composed_server_delta_vs_baseline", Unit::Ns),
        Column::new("concurrency", Unit::Count),
        Column::new("heap_per_connection", Unit::Bytes),
        Column::new("rss_per_connection", Unit::Bytes),
        Column::new("kernel_per_connection", Unit::Bytes),
        Column::new("failures", Unit::Count),
        Column::new("pss_per_connection", Unit::Bytes),
        Column::new("server_busy", Unit::Pct),
    ];
    let mut rows = Vec::new();
    let Some(c) = &r.capacity else {
        return (columns, rows);
    };
    let none = || num(None);
    for (what, list) in [
        ("in memory", &c.in_memory),
        ("resumed in memory", &c.resumed),
    ] {
        for m in list {
            rows.push(vec![
                text(what),
                text(m.stack.name()),
                text(m.group.as_str()),
                text(m.auth.as_deref().unwrap_or("")),
                num(m.handshakes_per_s),
                num(m.server_per_core_s),
                num(m.server.mean_ns),
                num(m.client.mean_ns),
                num(m.vs_baseline),
                num(m.server_delta_ns),
                num(m.composed_server_delta_ns),
                none(),
                none(),
                none(),
                none(),
                num(m.failures as f64),
                none(),
                none(),
            ]);
        }
    }
    for s in &c.sockets {
        // The step with the highest rate, as the capacity page leads with it.
        let Some(top) = s
            .steps
            .iter()
            .max_by(|a, b| a.handshakes_per_s.total_cmp(&b.handshakes_per_s))
        else {
            continue;
        };
        rows.push(vec![
            text("over loopback, highest rate"),
            text(s.stack.name()),
            text(s.group.as_str()),
            text(s.auth.as_deref().unwrap_or("")),
            num(top.handshakes_per_s),
            none(),
            num(top.server_cpu_per_handshake_ns),
            none(),
            none(),
            none(),
            none(),
            num(top.concurrency as f64),
            none(),
            none(),
            none(),
            num(top.failed as f64),
            none(),
            none(),
        ]);
    }
    for m in &c.memory {
        let p = &m.per_connection;
        rows.push(vec![
            text("held connections"),
            text(m.stack.name()),
            text(m.group.as_str()),
            text(m.auth.as_deref().unwrap_or("")),
            none(),
            none(),
            none(),
            none(),
            none(),
            none(),
            none(),
            num(p.connections as f64),
            num(p.heap_bytes),
            num(p.rss_bytes),
            num(p.kernel_bytes),
            none(),
            none(),
            none(),
        ]);
    }
    rows.extend(c.servers.iter().flat_map(server_rows));
    rows.extend(
        c.servers_held
            .iter()
            .map(|h| held_row((&h.server, &h.group, &h.auth), &h.held)),
    );
    (columns, rows)
}

/// A lab server's rows of the capacity section: under h2load (rate, CPU per handshake and how
/// busy the server was under the load), and held (the growth of its processes' memory per idle
/// connection), where it held connections.
fn server_rows(l: &crate::results::ServerLoad) -> Vec<Vec<Value>> {
    let none = || num(None);
    let f = crate::figures::server_load::of(l);
    let mut rows = vec![vec![
        text("under h2load"),
        text(l.server.as_str()),
        text(l.group.as_str()),
        text(l.auth.as_str()),
        num(f.as_ref().map(|f| f.rate_per_s)),
        num(f.as_ref().map(|f| 1e9 / f.cpu_per_handshake_ns)),
        num(f.as_ref().map(|f| f.cpu_per_handshake_ns)),
        none(),
        none(),
        none(),
        none(),
        num(l.connections as f64),
        none(),
        none(),
        none(),
        num(l.rounds.iter().map(|r| r.failed as f64).sum::<f64>()),
        none(),
        num(f.as_ref().map(|f| f.busy_pct)),
    ]];
    if let Some(h) = &l.held {
        rows.push(held_row((&l.server, &l.group, &l.auth), h));
    }
    rows
}

/// A server's memory with connections held, as a row: the growth of its processes' resident and
/// proportional set sizes per connection.
fn held_row((server, group, auth): (&str, &str, &str), h: &crate::results::Held) -> Vec<Value> {
    use crate::figures::server_load::growth;
    let none = || num(None);
    vec![
        text("held connections"),
        text(server),
        text(group),
        text(auth),
        none(),
        none(),
        none(),
        none(),
        none(),
        none(),
        none(),
        num(h.connections.last().map(|&n| n as f64)),
        none(),
        num(growth(h, |h| &h.rss_bytes)),
        none(),
        none(),
        num(growth(h, |h| &h.pss_bytes)),
        none(),
    ]
}

/// Every network cell: a row per point of the grid (RTT, loss) and scenario, its percentiles,
/// the model's prediction and the wire's part.
fn network(r: &Results) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = vec![
        Column::id("rtt", Unit::Ns),
        Column::id("loss", Unit::Pct),
        Column::id("protocol", Unit::Text),
        Column::id("stack", Unit::Text),
        Column::id("transport", Unit::Text),
        Column::id("group", Unit::Text),
        Column::id("auth", Unit::Text),
        Column::id("mode", Unit::Text),
        Column::new("handshakes", Unit::Count),
        Column::new("failed", Unit::Count),
        Column::new("p50", Unit::Ns),
        Column::new("p50_ci95_low", Unit::Ns),
        Column::new("p50_ci95_high", Unit::Ns),
        Column::new("p95", Unit::Ns),
        Column::new("model_expected", Unit::Ns),
        Column::new("model_round_trips", Unit::Count),
        Column::new("wire_p50", Unit::Ns),
        Column::new("endpoint_p50", Unit::Ns),
        Column::new("client_to_server_per_handshake", Unit::Bytes),
        Column::new("server_to_client_per_handshake", Unit::Bytes),
    ];
    let mut rows = Vec::new();
    let Some(n) = &r.network else {
        return (columns, rows);
    };
    let at = |cell: &crate::results::Cell, pct: f64| {
        let p = crate::figures::network::percentiles_ns(&cell.ready_ns, &[pct]);
        p.first().copied()
    };
    for p in &n.points {
        for (cell, resumed) in p
            .cells
            .iter()
            .map(|c| (c, false))
            .chain(p.resumed.iter().map(|c| (c, true)))
        {
            let mode = if resumed {
                format!("{} (resumption rows)", cell.mode.name())
            } else {
                cell.mode.name().to_string()
            };
            rows.push(vec![
                num(p.rtt_ns),
                num(p.loss_pct),
                text(cell.protocol.as_str()),
                text(cell.stack.name()),
                text(cell.transport.name()),
                text(cell.group.as_str()),
                text(cell.auth.as_deref().unwrap_or("")),
                text(mode),
                num(cell.ready_ns.len() as f64),
                num(cell.failed as f64),
                num(at(cell, 50.0)),
                lo(cell.ready_p50_ci95_ns),
                hi(cell.ready_p50_ci95_ns),
                num(at(cell, 95.0)),
                num(cell.model.expected_ns),
                num(cell.model.round_trips),
                num(cell.split.as_ref().map(|s| s.wire_p50_ns)),
                num(cell.split.as_ref().map(|s| s.endpoint_p50_ns)),
                num(cell.bytes_per_handshake[0]),
                num(cell.bytes_per_handshake[1]),
            ]);
        }
    }
    (columns, rows)
}

/// The composition page: every real scenario against its composition, with the intervals.
fn composition(r: &Results) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = vec![
        Column::id("stack", Unit::Text),
        Column::id("group", Unit::Text),
        Column::id("auth", Unit::Text),
        Column::new("composed_suite", Unit::Text),
        Column::new("baseline", Unit::Text),
        Column::new("composed_path", Unit::Ns),
        Column::new("composed_latency", Unit::Ns),
        Column::new("real_latency", Unit::Ns),
        Column::new("composed_delta", Unit::Ns),
        Column::new("composed_delta_ci95_low", Unit::Ns),
        Column::new("composed_delta_ci95_high", Unit::Ns),
        Column::new("real_delta", Unit::Ns),
        Column::new("real_delta_ci95_low", Unit::Ns),
        Column::new("real_delta_ci95_high", Unit::Ns),
        Column::new("composed_server_cpu_in_memory", Unit::Ns),
        Column::new("server_cpu_in_memory", Unit::Ns),
        Column::new("composed_client_cpu_in_memory", Unit::Ns),
        Column::new("client_cpu_in_memory", Unit::Ns),
    ];
    let versus = |v: Option<&crate::figures::composition::Versus>| {
        let half = v.and_then(|v| {
            v.composed_half95_ns
                .map(|h| (v.composed_ns - h, v.composed_ns + h))
        });
        [
            num(v.map(|v| v.composed_ns)),
            lo(half),
            hi(half),
            num(v.map(|v| v.real_ns)),
            lo(v.and_then(|v| v.real_ci95_ns)),
            hi(v.and_then(|v| v.real_ci95_ns)),
        ]
    };
    let rows = crate::figures::composition::rows(r)
        .iter()
        .map(|row| {
            let mut out = vec![
                text(row.stack.as_str()),
                text(row.group.as_str()),
                text(row.auth.as_deref().unwrap_or("")),
                text(row.suite.as_str()),
                text(if row.baseline { "yes" } else { "no" }),
                num(row.path_ns),
                num(row.latency.as_ref().map(|v| v.composed_ns)),
                num(row.latency.as_ref().map(|v| v.real_ns)),
            ];
            out.extend(versus(row.delta.as_ref()));
            for side in [&row.server_in_memory, &row.client_in_memory] {
                out.push(num(side.as_ref().map(|v| v.composed_ns)));
                out.push(num(side.as_ref().map(|v| v.real_ns)));
            }
            out
        })
        .collect();
    (columns, rows)
}

/// Every phase (`phases`) or every composed suite, nanoseconds, as `pqprof export` has always
/// written them.
fn lines(r: &Results, phases: bool) -> (Vec<Column>, Vec<Vec<Value>>) {
    let columns = vec![
        Column::id("kind", Unit::Text),
        Column::id("name", Unit::Text),
        Column::id("stack_or_backend", Unit::Text),
        Column::new("mean", Unit::Ns),
        Column::new("median", Unit::Ns),
        Column::new("p95", Unit::Ns),
        Column::new("p99", Unit::Ns),
        Column::new("iterations", Unit::Count),
        Column::new("median_ci95_low", Unit::Ns),
        Column::new("median_ci95_high", Unit::Ns),
        Column::new("half_width", Unit::Pct),
        Column::new("stopped", Unit::Text),
    ];
    let precision = |p: Option<&crate::results::Precision>| {
        [
            num(p.map(|p| p.half_width_pct)),
            text(p.map_or("", |p| p.reason.describe())),
        ]
    };
    let rows = if phases {
        r.phases
            .iter()
            .map(|p| {
                let mut row = vec![
                    text("phase"),
                    text(p.id().short()),
                    text(p.backend.as_str()),
                    num(p.stats.mean_ns),
                    num(p.stats.median_ns),
                    num(p.stats.p95_ns),
                    num(p.stats.p99_ns),
                    num(p.stats.iterations as f64),
                    lo(p.median_ci95_ns),
                    hi(p.median_ci95_ns),
                ];
                row.extend(precision(p.precision.as_ref()));
                row
            })
            .collect()
    } else {
        r.suites
            .iter()
            .map(|s| {
                let mut row = vec![
                    text("suite"),
                    text(s.name.as_str()),
                    text(s.stack.as_str()),
                    num(s.composed.mean_ns),
                    num(s.composed.median_ns),
                    num(s.composed.p95_ns),
                    num(s.composed.p99_ns),
                    num(None),
                    lo(s.composed.median_ci95_ns),
                    hi(s.composed.median_ci95_ns),
                ];
                row.extend(precision(None));
                row
            })
            .collect()
    };
    (columns, rows)
}

/// A probe: a row per group offered alone (taken or not, its flight against the initial window,
/// its latency where it was timed), then the hybrid's paired difference from X25519 over its
/// pairs of handshakes; the
/// endpoint's answers that are one per probe (chain, scheme, preference, retry) on every row.
pub(super) fn probe(p: &crate::results::Probe) -> Table {
    use crate::figures::probe::{scheme_name, CLASSICAL, HYBRID};
    let f = &p.findings;
    let columns = vec![
        Column::id("target", Unit::Text),
        Column::id("group", Unit::Text),
        Column::new("taken_alone", Unit::Text),
        Column::new("refused_because", Unit::Text),
        Column::new("server_flight", Unit::Bytes),
        Column::new("server_flight_segments", Unit::Count),
        Column::new("initial_window_segments", Unit::Count),
        Column::new("round_trips_predicted", Unit::Count),
        Column::new("round_trips_seen", Unit::Ratio),
        Column::new("handshakes", Unit::Count),
        Column::new("pairs", Unit::Count),
        Column::new("median", Unit::Ns),
        Column::new("median_ci95_low", Unit::Ns),
        Column::new("median_ci95_high", Unit::Ns),
        Column::new("address", Unit::Text),
        Column::new("server_name", Unit::Text),
        Column::new("chain", Unit::Bytes),
        Column::new("signature_scheme", Unit::Text),
        Column::new("hybrid_client_hello", Unit::Bytes),
        Column::new("hybrid_client_hello_segments", Unit::Count),
        Column::new("mss", Unit::Bytes),
        Column::new("chosen_with_both_shares", Unit::Text),
        Column::new("chosen_hybrid_without_share", Unit::Text),
        Column::new("hello_retry_for_hybrid", Unit::Text),
        Column::new("tcp_connect_median", Unit::Ns),
    ];
    let count = |x: Option<u64>| num(x.map(|n| n as f64));
    let scheme = p
        .connections
        .iter()
        .find_map(|c| c.scheme)
        .map_or(String::new(), scheme_name);
    let (without_share, retry) = match &f.hybrid_without_share {
        Some((g, retry)) => (g.clone(), if *retry { "yes" } else { "no" }),
        None => (String::new(), ""),
    };
    // The probe's own answers, the same on every row.
    let endpoint = || {
        vec![
            text(p.address.as_str()),
            text(p.sni.as_str()),
            num(f.chain_bytes as f64),
            text(scheme.as_str()),
            count(f.client_hello.map(|c| c.0)),
            count(f.client_hello.and_then(|c| c.1)),
            num((p.mss_bytes > 0).then_some(p.mss_bytes as f64)),
            text(f.with_both_shares.clone().unwrap_or_default()),
            text(without_share.as_str()),
            text(retry),
            num(f.connect_median_ns),
        ]
    };
    // Every group a finding names, in the order the probe asked them.
    let mut groups: Vec<&str> = Vec::new();
    for g in f
        .groups
        .iter()
        .map(|g| g.group.as_str())
        .chain(f.flights.iter().map(|x| x.group.as_str()))
        .chain(f.latency.iter().map(|x| x.group.as_str()))
    {
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    let mut rows: Vec<Vec<Value>> = groups
        .into_iter()
        .map(|group| {
            let alone = f.groups.iter().find(|x| x.group == group);
            let flight = f.flights.iter().find(|x| x.group == group);
            let latency = f.latency.iter().find(|x| x.group == group);
            let mut row = vec![
                text(p.target.as_str()),
                text(group),
                text(alone.map_or("", |g| if g.taken { "yes" } else { "no" })),
                text(alone.and_then(|g| g.reason.clone()).unwrap_or_default()),
                count(flight.map(|x| x.bytes)),
                count(flight.and_then(|x| x.segments)),
                count(flight.map(|x| x.initial_window)),
                count(flight.and_then(|x| x.predicted_round_trips)),
                num(latency.and_then(|l| l.observed_round_trips)),
                num(latency.map(|l| l.handshakes as f64)),
                num(None),
                num(latency.map(|l| l.median_ns)),
                lo(latency.and_then(|l| l.ci95_ns)),
                hi(latency.and_then(|l| l.ci95_ns)),
            ];
            row.extend(endpoint());
            row
        })
        .collect();
    if let Some(d) = &f.hybrid_delta {
        let mut row = vec![
            text(p.target.as_str()),
            text(format!("{HYBRID} - {CLASSICAL} (paired)")),
            text(""),
            text(""),
            num(None),
            num(None),
            num(None),
            num(None),
            num(None),
            num(None),
            num(d.pairs as f64),
            num(d.median_ns),
            lo(d.ci95_ns),
            hi(d.ci95_ns),
        ];
        row.extend(endpoint());
        rows.push(row);
    }
    Table {
        section: Section::Probe.name(),
        columns,
        rows,
    }
}
