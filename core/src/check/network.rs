//! The `network` section: every percentile and mean recomputed from the stored handshake times,
//! per-handshake packets and bytes and the observed loss from the router's counters, each point's
//! validity from its connect times, the model from its inputs, and each scenario's evidence (its
//! first connection's) against what it declares.

use super::differs;
use super::problem::Problem;
use crate::figures::evidence::{contradictions, software_contradiction, Declared};
use crate::figures::network::{handshakes, loss_pct, mean_ns, percentiles_ns, tolerance_ns};
use crate::results::{Mode, Results};
use crate::stats;
use crate::units::{rtt, time};

pub(crate) fn check(results: &Results) -> Vec<Problem> {
    results.network.as_ref().map_or_else(Vec::new, |n| {
        let mut problems = section(n);
        stalls(&mut problems, results, n);
        problems
    })
}

/// Each cell's stall (what a window stall hides of its zero point, figures::network::stall_for)
/// recomputed from the run's flows, stacks and evidence: the same inputs where the file states
/// one, none where it states none (the model itself is recomputed from the stored one in `model`).
fn stalls(problems: &mut Vec<Problem>, r: &Results, n: &crate::results::Network) {
    for p in n.points.iter().filter(|p| p.rtt_ns > 0.0) {
        for c in &p.cells {
            let name = format!(
                "network RTT {} loss {}% {} {} {}",
                rtt(p.rtt_ns),
                p.loss_pct,
                c.stack.name(),
                c.group,
                c.auth.as_deref().unwrap_or("")
            );
            let fresh = crate::figures::network::stall_for(r, n, c);
            if crate::figures::network::same_stall(c.model.stall.as_ref(), fresh.as_ref()) {
                continue;
            }
            problems.push(Problem::recomputed(match (&c.model.stall, fresh) {
                (Some(s), Some(f)) => {
                    format!("{name}: the model's stall {s:?} is not the run's {f:?}")
                }
                (Some(_), None) => format!(
                    "{name}: the model takes off a stall the run's flows and stacks do not give"
                ),
                _ => format!(
                    "{name}: the run's flows and stacks give a stall the model does not take off"
                ),
            }));
        }
    }
}

/// A QUIC cell: its zero-point flights recorded, its server flight theirs, its token or Retry its
/// mode's, its sender (whose window and timers the model takes) its stack, the loss model's
/// critical path the one those flights give (`quic_critical_path`; a file without one ran without
/// loss), and the model's round trips QUIC's one plus a Retry's and those the anti-amplification
/// budget and slow start add to that flight (`netmodel::quic_extra_round_trips`); a TCP cell has
/// no QUIC record.
fn quic(
    problems: &mut Vec<Problem>,
    name: &str,
    c: &crate::results::Cell,
    loss_pct: f64,
    form: u32,
) {
    use crate::results::Transport;
    let q = match (c.transport, &c.quic) {
        (Transport::Tcp, None) => {
            if c.model.pacer.is_some() {
                problems.push(Problem::recomputed(format!(
                    "{name}: the model paces a flight over TCP"
                )));
            }
            return;
        }
        (Transport::Tcp, Some(_)) => {
            problems.push(Problem::evidence(format!(
                "{name}: a QUIC record in a cell over TCP"
            )));
            return;
        }
        (Transport::Quic, None) => {
            problems.push(Problem::incomplete(format!(
                "{name}: a QUIC cell without its flights"
            )));
            return;
        }
        (Transport::Quic, Some(q)) => q,
    };
    if c.server_flight_bytes != Some(q.server_bytes) {
        problems.push(Problem::evidence(format!(
            "{name}: server flight {:?} bytes, its datagrams {}",
            c.server_flight_bytes, q.server_bytes
        )));
    }
    if let Some(wrong) = crate::figures::evidence::validation(c.mode, q) {
        problems.push(Problem::evidence(format!("{name}: {wrong}")));
    }
    // The model takes the sender's window and timers: they must be the cell's stack's.
    if q.sender.stack() != c.stack.name() {
        problems.push(Problem::evidence(format!(
            "{name}: the flights are recorded as {}'s, the cell is {}'s",
            q.sender.stack(),
            c.stack
        )));
    }
    // Files before QUIC's loss model (2026-12-04) have no path and ran without loss.
    if !c.model.path.is_empty() && c.model.path != crate::netmodel::quic_critical_path(q, form) {
        problems.push(Problem::recomputed(format!(
            "{name}: the model's critical path is not the one its flights give ({} datagrams \
             of Initial, {} bytes back)",
            q.client_initial_datagrams, q.server_bytes
        )));
    } else if c.model.path.is_empty() && loss_pct > 0.0 {
        problems.push(Problem::evidence(format!(
            "{name}: a QUIC cell at {loss_pct}% loss without the loss model's path"
        )));
    }
    // The pacer's datagrams are the flight's, where the file's form paces it (none before 4).
    let paced = crate::netmodel::quic_paced(q, form);
    if c.model.pacer.map(|p| p.datagrams) != paced {
        problems.push(Problem::recomputed(format!(
            "{name}: the model paces {:?} datagrams; a {} flight of {} datagrams{} in form \
             {form} has {paced:?}",
            c.model.pacer.map(|p| p.datagrams),
            q.sender.stack(),
            q.server_datagrams,
            if q.token { " after a token" } else { "" },
        )));
    }
    let extra = crate::netmodel::quic_extra_round_trips(q);
    let want = crate::netmodel::QUIC_ROUND_TRIPS + f64::from(extra);
    if c.model.round_trips != want {
        problems.push(Problem::recomputed(format!(
            "{name}: the model counts {} round trips; a {}-byte server flight after a {}-byte \
             Initial flight{} takes {want}",
            c.model.round_trips,
            q.server_bytes,
            q.client_initial_bytes,
            match (q.token, q.retry) {
                (true, _) => " with a token",
                (_, true) => " and a Retry",
                _ => "",
            }
        )));
    }
}

/// The host's wake-ups (files that have them): a `SlowWake` note where, and only where, their p50
/// is over `SLOW_WAKE_NS`, with the p50 and p90 they give.
fn wake(problems: &mut Vec<Problem>, n: &crate::results::Network) {
    let notes: Vec<(f64, f64)> = n
        .notes
        .iter()
        .filter_map(|w| match w {
            crate::results::Warning::SlowWake { p50_us, p90_us } => Some((*p50_us, *p90_us)),
            _ => None,
        })
        .collect();
    if notes.len() > 1 {
        problems.push(Problem::incomplete(format!(
            "network: {} slow-wake notes",
            notes.len()
        )));
    }
    if n.wake_ns.is_empty() {
        if !notes.is_empty() {
            problems.push(Problem::incomplete(
                "network: a slow-wake note without wake-up samples",
            ));
        }
        return;
    }
    // Files with wake-ups (2026-12-03 08:35 on) take the base RTT from the zero point's link.
    if let Some(zero) = n.points.first().filter(|p| p.rtt_ns == 0.0) {
        differs(
            problems,
            "network base_rtt_ns (the zero point's link)".into(),
            n.base_rtt_ns,
            zero.link.rtt_median_ns,
        );
        differs(
            problems,
            "network offset_ns".into(),
            n.offset_ns,
            n.base_rtt_ns / 2.0,
        );
    }
    let noted = notes.first().copied();
    match (crate::figures::network::slow_wake(&n.wake_ns), noted) {
        (Some((p50, p90)), Some((p50_noted, p90_noted))) => {
            differs(problems, "network wake-up p50 (µs)".into(), p50_noted, p50);
            differs(problems, "network wake-up p90 (µs)".into(), p90_noted, p90);
        }
        (Some((p50, _)), None) => problems.push(Problem::incomplete(format!(
            "network: wake-ups {p50:.0} µs late at the median but no slow-wake note"
        ))),
        (None, Some(_)) => problems.push(Problem::recomputed(
            "network: a slow-wake note where the wake-ups' median is within the limit",
        )),
        (None, None) => {}
    }
}

fn section(n: &crate::results::Network) -> Vec<Problem> {
    let mut problems = Vec::new();
    // Whether the section's emulator recorded server flights (files from 2026-12-05 10:44 on).
    let spans = n.points.iter().any(|p| {
        p.cells
            .iter()
            .chain(&p.resumed)
            .chain(&p.validated)
            .any(|x| !x.server_flight_ns.is_empty())
    });
    wake(&mut problems, n);
    if !(1..=crate::netmodel::QUIC_LOSS_MODEL).contains(&n.quic_loss_model) {
        problems.push(Problem::evidence(format!(
            "network: QUIC loss model form {}, not one this pqprof knows (1 to {})",
            n.quic_loss_model,
            crate::netmodel::QUIC_LOSS_MODEL
        )));
    }
    for point in &n.points {
        let at = format!("network RTT {} loss {}%", rtt(point.rtt_ns), point.loss_pct);
        link(&mut problems, &at, point);
        // A point whose cells shared a window says so in every cell, with the point's count.
        let windows: Vec<Option<usize>> = point
            .cells
            .iter()
            .map(|c| c.pace.and_then(|p| p.window_cells))
            .collect();
        let all = point.cells.len() + point.resumed.len() + point.validated.len();
        if windows.iter().any(Option::is_some) && windows.iter().any(|w| *w != Some(all)) {
            problems.push(Problem::incomplete(format!(
                "{at}: {all} cells, but their windows say {windows:?}"
            )));
        }
        let named = |c: &crate::results::Cell| {
            format!("{at} {} {} {}", c.protocol, c.stack.name(), c.group)
        };
        for c in &point.cells {
            cell(&mut problems, (n, spans), point, &at, c);
            evidence(&mut problems, &named(c), c, c.mode);
            // Resumed and validated cells are set against the full ones beside them.
            if c.mode == crate::results::Mode::Resumed || c.mode.validates_address() {
                problems.push(Problem::evidence(format!(
                    "{at} {} {}: a cell of {} handshakes among the full ones",
                    c.stack.name(),
                    c.group,
                    c.mode.name()
                )));
            }
            if c.resumptions.is_some_and(|r| r > 0) {
                problems.push(Problem::evidence(format!(
                    "{at} {} {}: a full handshake's cell whose server saw connections resume",
                    c.stack.name(),
                    c.group
                )));
            }
        }
        for c in &point.resumed {
            let name = format!("{at} {} {} (resumed)", c.stack.name(), c.group);
            cell(&mut problems, (n, spans), point, &at, c);
            evidence(&mut problems, &name, c, Mode::Resumed);
            resumed(&mut problems, &name, point, c);
        }
        for c in &point.validated {
            let name = format!("{at} {} {} ({})", c.stack.name(), c.group, c.mode.suffix());
            cell(&mut problems, (n, spans), point, &at, c);
            evidence(&mut problems, &name, c, c.mode);
            validated(&mut problems, &name, point, c);
        }
    }
    problems
}

/// A resumed cell: at a point without loss, and every completed handshake resumed as its server
/// saw it (a failed one may have resumed too): a resumption that fell back to a full handshake
/// would put the certificate and its round trips back in.
fn resumed(
    problems: &mut Vec<Problem>,
    name: &str,
    point: &crate::results::Point,
    c: &crate::results::Cell,
) {
    if point.loss_pct > 0.0 {
        problems.push(Problem::evidence(format!(
            "{name}: resumed handshakes at {}% loss; they run without loss only",
            point.loss_pct
        )));
    }
    let done = c.ready_ns.len() as u64;
    match c.resumptions {
        Some(r) if r >= done && r <= done + c.failed as u64 => {}
        Some(r) => problems.push(Problem::evidence(format!(
            "{name}: its server saw {r} connections resume for {done} completed handshakes and {} failed",
            c.failed
        ))),
        None => problems.push(Problem::evidence(format!(
            "{name}: a resumed cell without its server's count of resumptions"
        ))),
    }
}

/// A QUIC cell whose address was validated (#35): a token's or a Retry's mode, at a point without
/// loss, beside its full twin of the same point (`quic` holds its flights to its mode).
fn validated(
    problems: &mut Vec<Problem>,
    name: &str,
    point: &crate::results::Point,
    c: &crate::results::Cell,
) {
    if !c.mode.validates_address() {
        problems.push(Problem::evidence(format!(
            "{name}: a cell of {} handshakes among the validated addresses",
            c.mode.name()
        )));
    }
    if point.loss_pct > 0.0 {
        problems.push(Problem::evidence(format!(
            "{name}: at {}% loss; a validated address runs without loss only",
            point.loss_pct
        )));
    }
    let twin = point
        .cells
        .iter()
        .any(|f| f.stack.name() == c.stack.name() && f.group == c.group && f.auth == c.auth);
    if !twin {
        problems.push(Problem::incomplete(format!(
            "{name}: no full handshake's cell beside it"
        )));
    }
}

/// A point's link: its median and tolerance from the connect times, and whether it is valid.
fn link(problems: &mut Vec<Problem>, at: &str, point: &crate::results::Point) {
    let l = &point.link;
    if l.connect_ns.is_empty() {
        problems.push(Problem::incomplete(format!("{at}: no connect times")));
    } else {
        let median = stats::median(&l.connect_ns.iter().map(|&x| x as f64).collect::<Vec<_>>());
        differs(
            problems,
            format!("{at} link rtt_median_ns"),
            l.rtt_median_ns,
            median,
        );
        let tolerance = tolerance_ns(point.rtt_ns);
        differs(
            problems,
            format!("{at} link tolerance_ns"),
            l.tolerance_ns,
            tolerance,
        );
        if l.valid != ((median - point.rtt_ns).abs() <= l.tolerance_ns) {
            problems.push(Problem::recomputed(format!(
                "{at}: marked {} but its measured RTT {} against {} says otherwise",
                if l.valid { "valid" } else { "invalid" },
                time(median),
                rtt(point.rtt_ns)
            )));
        }
    }
}

/// A cell: its handshakes' times, distribution, counts, model, CPU, the emulator's releases and
/// its wire time.
fn cell(
    problems: &mut Vec<Problem>,
    (n, spans): (&crate::results::Network, bool),
    point: &crate::results::Point,
    at: &str,
    c: &crate::results::Cell,
) {
    let name = format!("{at} {} {} {}", c.protocol, c.stack.name(), c.group);
    if c.ready_ns.len() != c.echo_ns.len() {
        problems.push(Problem::incomplete(format!(
            "{name}: {} ready times, {} echo times",
            c.ready_ns.len(),
            c.echo_ns.len()
        )));
        return;
    }
    if c.ready_ns.iter().zip(&c.echo_ns).any(|(r, e)| r > e) {
        problems.push(Problem::bound(format!(
            "{name}: a handshake completed after its echo"
        )));
    }
    quic(problems, &name, c, point.loss_pct, n.quic_loss_model);
    distribution(problems, n, &name, c);
    counts(problems, &name, c);
    model(problems, n, point, &name, c);
    cpu_and_releases(problems, &name, c);
    wire(problems, &name, c);
    flights(problems, spans, &name, c);
}

/// A zero point's cell: its scenario's first connection showed what the scenario declares (the
/// negotiated group, the certificate and its scheme, the shares; a server of servers/ its own name
/// and version), and the flight the cell's model counts is the one it saw.
/// `mode`: the cell's own, or `Mode::Resumed` for the cells of a point's resumed list (whose
/// cells say full: their list says resumed).
fn evidence(problems: &mut Vec<Problem>, name: &str, c: &crate::results::Cell, mode: Mode) {
    let Some(e) = &c.evidence else {
        return;
    };
    let declared = Declared {
        protocol: &c.protocol,
        group: &c.group,
        shares: e.declared_shares,
        auth: e.auth.as_ref(),
        mode,
        transport: c.transport,
    };
    for wrong in contradictions(&declared, &e.seen) {
        problems.push(Problem::evidence(format!(
            "{name}: its evidence contradicts the scenario: {wrong}"
        )));
    }
    if let Some(why) = software_contradiction(c.stack.name(), &e.seen) {
        problems.push(Problem::evidence(format!("{name}: {why}")));
    }
    if e.auth.as_ref().map(|a| a.name.as_str()) != c.auth.as_deref() {
        problems.push(Problem::evidence(format!(
            "{name}: its evidence declares the authentication {:?}, the cell {:?}",
            e.auth.as_ref().map(|a| &a.name),
            c.auth
        )));
    }
    if e.seen.server_flight_bytes != c.server_flight_bytes {
        problems.push(Problem::evidence(format!(
            "{name}: a server flight of {:?} bytes, its evidence {:?}",
            c.server_flight_bytes, e.seen.server_flight_bytes
        )));
    }
}

/// A cell's percentiles, their intervals and its precision, and its mean, from its handshakes.
fn distribution(
    problems: &mut Vec<Problem>,
    n: &crate::results::Network,
    name: &str,
    c: &crate::results::Cell,
) {
    let levels = n.percentiles.len();
    if c.ready_percentiles_ns.len() != levels || c.echo_percentiles_ns.len() != levels {
        problems.push(Problem::incomplete(format!(
            "{name}: percentiles stored for {} / {} of {levels} levels",
            c.ready_percentiles_ns.len(),
            c.echo_percentiles_ns.len(),
        )));
    }
    for (field, stored, samples) in [
        ("ready_percentiles_ns", &c.ready_percentiles_ns, &c.ready_ns),
        ("echo_percentiles_ns", &c.echo_percentiles_ns, &c.echo_ns),
    ] {
        let fresh = percentiles_ns(samples, &n.percentiles);
        for (k, (a, b)) in stored.iter().zip(fresh).enumerate() {
            differs(problems, format!("{name} {field}[{k}]"), *a, b);
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
                    differs(problems, format!("{name} {field} low"), a.0, b.0);
                    differs(problems, format!("{name} {field} high"), a.1, b.1);
                }
                (None, None) => {}
                _ => problems.push(Problem::recomputed(format!(
                    "{name}: {field} stored and recomputed differ"
                ))),
            }
        }
        if let Some(pr) = &c.precision {
            let centre = percentiles_ns(&c.ready_ns, &[50.0])[0];
            super::precision::check(
                problems,
                name,
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
            problems,
            format!("{name} ready_mean_ns"),
            c.ready_mean_ns,
            mean,
        );
    }
}

/// A cell's packets, bytes and loss per handshake, from the emulator's counts.
fn counts(problems: &mut Vec<Problem>, name: &str, c: &crate::results::Cell) {
    let n_hs = handshakes(c);
    for d in 0..2 {
        let per = |x: u64| x as f64 / n_hs;
        let field = |f: &str| format!("{name} {f}[{d}]");
        let packets = c.packets_per_handshake[d];
        differs(
            problems,
            field("packets_per_handshake"),
            packets,
            per(c.packets[d]),
        );
        let bytes = c.bytes_per_handshake[d];
        differs(
            problems,
            field("bytes_per_handshake"),
            bytes,
            per(c.bytes[d]),
        );
        let loss = loss_pct(c.dropped[d], c.packets[d]);
        differs(
            problems,
            field("observed_loss_pct"),
            c.observed_loss_pct[d],
            loss,
        );
    }
}

/// A cell's model, recomputed from its stored inputs and the point's conditions.
fn model(
    problems: &mut Vec<Problem>,
    n: &crate::results::Network,
    point: &crate::results::Point,
    name: &str,
    c: &crate::results::Cell,
) {
    let m = &c.model;
    let fresh = crate::figures::network::model(
        crate::figures::network::ModelInputs {
            zero_ns: m.zero_ns,
            round_trips: m.round_trips,
            data_packets: m.data_packets,
            bytes: m.bytes,
            path: m.path.clone(),
            stall: m.stall.clone(),
            paced: m.pacer.map(|p| p.datagrams),
        },
        crate::figures::network::conditions(n, point, m),
    );
    if let (Some(s), Some(f)) = (&m.pacer, &fresh.pacer) {
        differs(
            problems,
            format!("{name} model pacer delay_ns"),
            s.delay_ns,
            f.delay_ns,
        );
    }
    if let (Some(s), Some(f)) = (&m.stall, &fresh.stall) {
        differs(
            problems,
            format!("{name} model stall hidden_ns"),
            s.hidden_ns,
            f.hidden_ns,
        );
    }
    if let Some(r) = m.link_rtt_ns {
        differs(
            problems,
            format!("{name} model link_rtt_ns"),
            r,
            point.link.rtt_median_ns,
        );
    }
    differs(
        problems,
        format!("{name} model expected_ns"),
        m.expected_ns,
        fresh.expected_ns,
    );
    for (field, stored, recomputed) in [
        ("p50_ns", m.p50_ns, fresh.p50_ns),
        ("p95_ns", m.p95_ns, fresh.p95_ns),
    ] {
        match (stored, recomputed) {
            (Some(a), Some(b)) => differs(problems, format!("{name} model {field}"), a, b),
            (None, None) => {}
            _ => problems.push(Problem::recomputed(format!(
                "{name}: model {field} stored and recomputed differ"
            ))),
        }
    }
}

/// A cell's busy shares from its CPU, and the emulator's release counts agreeing with each other.
fn cpu_and_releases(problems: &mut Vec<Problem>, name: &str, c: &crate::results::Cell) {
    if let Some(cpu) = &c.cpu {
        if !(cpu.wall_ns > 0.0 && cpu.client_ns >= 0.0 && cpu.server_ns >= 0.0) {
            problems.push(Problem::bound(format!(
                "{name}: a measured window of {} with CPU {} / {}",
                cpu.wall_ns, cpu.client_ns, cpu.server_ns
            )));
        }
        let busy = crate::figures::network::busy_pct;
        differs(
            problems,
            format!("{name} client_busy_pct"),
            c.client_busy_pct,
            busy(cpu.client_ns, cpu.wall_ns),
        );
        differs(
            problems,
            format!("{name} server_busy_pct"),
            c.server_busy_pct,
            busy(cpu.server_ns, cpu.wall_ns),
        );
    }
    if let Some(r) = &c.release {
        // (Released packets may include a previous cell's last ones, held across the reset.)
        if r.late_over_1ms > r.released || r.late_max_ns > r.late_sum_ns {
            problems.push(Problem::bound(format!(
                "{name}: the emulator's release counts contradict each other ({} released, {} over 1 ms, max {} ns of a sum of {} ns)",
                r.released, r.late_over_1ms, r.late_max_ns, r.late_sum_ns
            )));
        }
    }
}

/// Whether a cell's times per handshake (`what`: "wire times", "server flight spans") are one per
/// handshake and none longer than its handshake; each problem named.
fn within_handshakes(
    problems: &mut Vec<Problem>,
    name: &str,
    what: &str,
    times: &[u64],
    c: &crate::results::Cell,
) -> bool {
    if times.len() != c.ready_ns.len() {
        problems.push(Problem::incomplete(format!(
            "{name}: {} {what} for {} handshakes",
            times.len(),
            c.ready_ns.len()
        )));
        return false;
    }
    match times
        .iter()
        .zip(&c.ready_ns)
        .enumerate()
        .find(|(_, (t, r))| t > r)
    {
        Some((k, (t, r))) => {
            problems.push(Problem::bound(format!(
                "{name}: {what}: handshake {k}'s, {t} ns, is past its handshake time ({r} ns)"
            )));
            false
        }
        None => true,
    }
}

/// A cell's server flight spans (the zero point's median stands in for a stall's server work,
/// which the model's recomputation checks): one per handshake, none longer than its handshake;
/// and in a section that has them, there for every TLS 1.3 cell over TCP with wire times (without
/// them a stall would fall back, unseen, to the composed segment).
fn flights(
    problems: &mut Vec<Problem>,
    section_has_spans: bool,
    name: &str,
    c: &crate::results::Cell,
) {
    if c.server_flight_ns.is_empty() {
        let tls_tcp = c.protocol == "tls13" && c.transport.is_tcp();
        if tls_tcp && section_has_spans && !c.wire_ns.is_empty() {
            problems.push(Problem::incomplete(format!(
                "{name}: no server flight spans where the section's other cells have them"
            )));
        }
        return;
    }
    within_handshakes(
        problems,
        name,
        "server flight spans",
        &c.server_flight_ns,
        c,
    );
}

/// A cell's wire times: one per handshake, none longer than its handshake, and the stored split
/// the one they give.
fn wire(problems: &mut Vec<Problem>, name: &str, c: &crate::results::Cell) {
    if c.wire_ns.is_empty() {
        if c.split.is_some() {
            problems.push(Problem::incomplete(format!(
                "{name}: a wire/endpoint split without wire times"
            )));
        }
        return;
    }
    if !within_handshakes(problems, name, "wire times", &c.wire_ns, c) {
        return;
    }
    let again = crate::figures::network::split(&c.ready_ns, &c.wire_ns);
    match (c.split, again) {
        (Some(s), Some(a)) => {
            for (what, stored, recomputed) in [
                ("wire_p50_ns", s.wire_p50_ns, a.wire_p50_ns),
                ("endpoint_p50_ns", s.endpoint_p50_ns, a.endpoint_p50_ns),
                ("wire_mean_ns", s.wire_mean_ns, a.wire_mean_ns),
                ("endpoint_mean_ns", s.endpoint_mean_ns, a.endpoint_mean_ns),
            ] {
                differs(problems, format!("{name} split {what}"), stored, recomputed);
            }
        }
        (None, _) => problems.push(Problem::incomplete(format!(
            "{name}: wire times without their split"
        ))),
        (Some(_), None) => problems.push(Problem::recomputed(format!(
            "{name}: a split its wire times do not give"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::check;
    use super::Problem;
    use crate::check::Kind;
    use crate::figures::network as f;
    use crate::results::Results;
    use crate::results::{CellCpu, Flight, Network, Release};

    /// A 5.6 ms, 1% loss point with one cell whose every figure is computed from its raw data.
    fn network() -> Network {
        let ready: Vec<u64> = (0..20).map(|k| 12_000_000 + k * 10_000).collect();
        let echo: Vec<u64> = ready.iter().map(|r| r + 6_000_000).collect();
        let percentiles = vec![50.0, 95.0];
        let path = crate::netmodel::critical_path(1, 1, 2);
        let at = f::Conditions {
            rtt_ns: 5.6e6,
            measured: true,
            base_rtt_ns: 1e5,
            loss_pct: 1.0,
            rate_mbit: None,
            quic_loss_model: crate::netmodel::QUIC_LOSS_MODEL,
        };
        let model = f::model(
            f::ModelInputs {
                zero_ns: 1e6,
                round_trips: 2.0,
                data_packets: [4.0, 4.0],
                bytes: [2e3, 3e3],
                path,
                stall: None,
                paced: None,
            },
            at,
        );
        let cpu = CellCpu {
            wall_ns: 1e8,
            client_ns: 2e7,
            server_ns: 1e7,
        };
        let cell = serde_json::json!({
            "protocol": "tls13", "stack": "rustls", "group": "X25519", "baseline": null,
            "ready_percentiles_ns": f::percentiles_ns(&ready, &percentiles),
            "echo_percentiles_ns": f::percentiles_ns(&echo, &percentiles),
            "ready_mean_ns": f::mean_ns(&ready),
            "ready_ns": ready, "echo_ns": echo, "failed": 0,
            "packets": [100, 90], "bytes": [1000, 2000], "data_packets": [40, 40], "dropped": [1, 0],
            "packets_per_handshake": [5.0, 4.5], "bytes_per_handshake": [50.0, 100.0],
            "observed_loss_pct": [1.0, 0.0],
            "client_busy_pct": f::busy_pct(cpu.client_ns, cpu.wall_ns),
            "server_busy_pct": f::busy_pct(cpu.server_ns, cpu.wall_ns),
            "cpu": cpu,
            "pace": {"gap_ns": 4e6, "threads": 4},
            "release": Release { released: 189, late_sum_ns: 4_000_000, late_max_ns: 90_000, late_over_1ms: 0 },
            "model": model,
        });
        let connect: Vec<u64> = vec![5_600_000; 4];
        serde_json::from_value(serde_json::json!({
            "date_utc": "", "wall_seconds": 1.0, "emulator": "nfqueue", "grid": "test",
            "congestion_control": "cubic", "offloads_off": true, "rate_mbit": null,
            "base_rtt_ns": 1e5, "offset_ns": 5e4, "parallel": 4, "per_point": 20, "load_pct": 25.0,
            "percentiles": percentiles,
            "points": [{"rtt_ns": 5.6e6, "loss_pct": 1.0, "cells": [cell],
                "link": {"connect_ns": connect, "rtt_median_ns": 5.6e6, "tolerance_ns": 3e5, "valid": true}}]
        }))
        .unwrap()
    }

    #[track_caller]
    fn fails(n: &Network, kind: Kind, what: &str) {
        let p = super::section(n);
        assert!(p.iter().any(|x| x.is(kind, what)), "{kind:?} {what}: {p:?}");
    }

    #[test]
    fn a_slow_wake_note_is_there_exactly_when_the_wake_ups_say_so_with_their_figures() {
        use crate::results::Warning;
        let mut n = network();
        // p50 of 10, 20, ..., 100 us is 55 us (interpolated), over the 50 us limit; p90 91 us.
        n.wake_ns = (1..=10).map(|k| k * 10_000).collect();
        fails(&n, Kind::Incomplete, "no slow-wake note");
        n.notes.push(Warning::SlowWake {
            p50_us: 55.0,
            p90_us: 91.0,
        });
        assert_eq!(super::section(&n), Vec::<Problem>::new());
        n.notes.pop();
        n.notes.push(Warning::SlowWake {
            p50_us: 40.0,
            p90_us: 91.0,
        });
        fails(&n, Kind::Recomputed, "wake-up p50");
        // Quick wake-ups (p50 5.5 us) want no note.
        n.wake_ns = (1..=10).map(|k| k * 1_000).collect();
        fails(&n, Kind::Recomputed, "slow-wake note where");
        n.notes.pop();
        assert_eq!(super::section(&n), Vec::<Problem>::new());
        // Two notes, or a note without samples, are refused.
        let note = Warning::SlowWake {
            p50_us: 5.5,
            p90_us: 9.1,
        };
        n.notes.extend([note.clone(), note.clone()]);
        fails(&n, Kind::Incomplete, "2 slow-wake notes");
        n.notes.truncate(n.notes.len() - 1);
        n.wake_ns.clear();
        fails(&n, Kind::Incomplete, "without wake-up samples");
        n.notes.pop();
        // With wake-ups, the base RTT is the zero point's link, and the offset half of it.
        n.wake_ns = (1..=10).map(|k| k * 1_000).collect();
        let mut zero = n.points[0].clone();
        zero.rtt_ns = 0.0;
        zero.cells.clear();
        zero.link.connect_ns = vec![100_000; 3];
        zero.link.rtt_median_ns = 1e5;
        zero.link.tolerance_ns = crate::figures::network::tolerance_ns(0.0);
        zero.link.valid = true;
        n.points.insert(0, zero);
        assert_eq!(super::section(&n), Vec::<Problem>::new());
        n.points[0].link.connect_ns = vec![200_000; 3];
        n.points[0].link.rtt_median_ns = 2e5;
        fails(&n, Kind::Recomputed, "base_rtt_ns (the zero point's link)");
    }

    #[test]
    fn the_loss_model_the_busy_shares_and_the_emulators_counts_are_held_to_the_raw_data() {
        let n = network();
        assert_eq!(super::section(&n), Vec::<Problem>::new());
        let c = |n: &mut Network| n.points[0].cells[0].clone();
        let with = |edit: &dyn Fn(&mut crate::results::Cell)| {
            let mut m = n.clone();
            let mut cell = c(&mut m);
            edit(&mut cell);
            m.points[0].cells[0] = cell;
            m
        };
        fails(
            &with(&|c| c.model.p95_ns = c.model.p95_ns.map(|x| x * 0.9)),
            Kind::Recomputed,
            "model p95_ns",
        );
        fails(
            &with(&|c| c.model.p50_ns = None),
            Kind::Recomputed,
            "model p50_ns stored and recomputed differ",
        );
        // A segment more in the server's flight is another model.
        fails(
            &with(&|c| {
                c.model.path[3] = Flight {
                    from_client: false,
                    segments: 3,
                    opening: false,
                    quic: false,
                    sender: Default::default(),
                }
            }),
            Kind::Recomputed,
            "model p95_ns",
        );
        fails(
            &with(&|c| c.client_busy_pct = 80.0),
            Kind::Recomputed,
            "client_busy_pct",
        );
        // The model counts the link's measured round trip, not another.
        fails(
            &with(&|c| c.model.link_rtt_ns = Some(5.0e6)),
            Kind::Recomputed,
            "model link_rtt_ns",
        );
        fails(
            &with(&|c| c.cpu.as_mut().unwrap().wall_ns = 0.0),
            Kind::Bound,
            "a measured window",
        );
        fails(
            &with(&|c| c.release.as_mut().unwrap().late_max_ns = 5_000_000),
            Kind::Bound,
            "release counts",
        );
        // Wire times: one per handshake, each within it, the split theirs.
        let wired = |edit: &dyn Fn(&mut Vec<u64>)| {
            with(&|c: &mut crate::results::Cell| {
                let mut w: Vec<u64> = c.ready_ns.iter().map(|r| r - 900_000).collect();
                c.split = f::split(&c.ready_ns, &w);
                edit(&mut w);
                c.wire_ns = w;
            })
        };
        assert_eq!(super::section(&wired(&|_| ())), Vec::<Problem>::new());
        fails(
            &wired(&|w| w[3] += 1_000_000),
            Kind::Bound,
            "wire times: handshake 3's",
        );
        fails(
            &wired(&|w| w[3] -= 1_000_000),
            Kind::Recomputed,
            "split wire_mean_ns",
        );
        fails(
            &wired(&|w| {
                w.pop();
            }),
            Kind::Incomplete,
            "19 wire times for 20 handshakes",
        );
        fails(
            &with(&|c| c.split = f::split(&c.ready_ns, &c.ready_ns)),
            Kind::Incomplete,
            "a wire/endpoint split without wire times",
        );
        // Server flight spans: one per handshake, each within it.
        let flown = |edit: &dyn Fn(&mut Vec<u64>)| {
            with(&|c: &mut crate::results::Cell| {
                let mut f: Vec<u64> = c.ready_ns.iter().map(|r| r / 2).collect();
                edit(&mut f);
                c.server_flight_ns = f;
            })
        };
        assert_eq!(super::section(&flown(&|_| ())), Vec::<Problem>::new());
        fails(
            &flown(&|f| f[2] = u64::MAX),
            Kind::Bound,
            "server flight spans: handshake 2's",
        );
        fails(
            &flown(&|f| {
                f.pop();
            }),
            Kind::Incomplete,
            "19 server flight spans for 20 handshakes",
        );
        // In a section with spans, a TLS cell over TCP with wire times and none is caught.
        let mut gap = flown(&|_| ());
        let lone = gap.points[0].cells[0].clone();
        let mut other = lone.clone();
        other.server_flight_ns.clear();
        other.wire_ns = other.ready_ns.iter().map(|r| r / 2).collect();
        other.split = f::split(&other.ready_ns, &other.wire_ns);
        gap.points[0].cells.push(other);
        fails(
            &gap,
            Kind::Incomplete,
            "no server flight spans where the section's",
        );
        // A window of one cell at a point of one cell holds; a window of two there does not.
        let window = |k: usize| {
            with(&|c: &mut crate::results::Cell| c.pace.as_mut().unwrap().window_cells = Some(k))
        };
        assert_eq!(super::section(&window(1)), Vec::<Problem>::new());
        fails(&window(2), Kind::Incomplete, "their windows say [Some(2)]");
    }

    /// A cell's model anew at 5.6 ms and no loss, with `round_trips` and no loss path.
    fn remodel(c: &mut crate::results::Cell, round_trips: f64) {
        c.model = f::model(
            f::ModelInputs {
                zero_ns: c.model.zero_ns,
                round_trips,
                data_packets: c.model.data_packets,
                bytes: c.model.bytes,
                path: Vec::new(),
                stall: None,
                paced: None,
            },
            f::Conditions {
                rtt_ns: 5.6e6,
                measured: true,
                base_rtt_ns: 1e5,
                loss_pct: 0.0,
                rate_mbit: None,
                quic_loss_model: crate::netmodel::QUIC_LOSS_MODEL,
            },
        )
    }

    #[test]
    fn a_quic_cell_counts_the_round_trips_its_flights_take_and_its_loss_path_and_mode_are_its_flights(
    ) {
        use crate::results::{QuicEvidence, Transport};
        // The fixture's own cell, over TCP, has no pacer to count.
        let mut tcp = network();
        tcp.points[0].cells[0].model.pacer = Some(crate::results::Pacer {
            datagrams: 12,
            delay_ns: 0.0,
        });
        fails(&tcp, Kind::Recomputed, "paces a flight over TCP");
        // The fixture's cell as quinn's at 0% loss: one round trip and the one a 12,633-byte
        // flight waits after a 2,400-byte Initial (7,200 first): 2, as the fixture's model says.
        let mut n = network();
        n.points[0].loss_pct = 0.0;
        let cell = &mut n.points[0].cells[0];
        remodel(cell, cell.model.round_trips);
        cell.transport = Transport::Quic;
        cell.stack = crate::results::RealStack::new("quinn");
        cell.server_flight_bytes = Some(12_633);
        cell.quic = Some(QuicEvidence {
            version: 1,
            client_initial_datagrams: 2,
            client_initial_bytes: 2400,
            client_initial_smallest: Some(1200),
            server_datagrams: 12,
            server_bytes: 12_633,
            token: false,
            retry: false,
            batched_acks: true,
            sender: Default::default(),
        });
        assert_eq!(super::section(&n), Vec::<Problem>::new());
        let with = |edit: &dyn Fn(&mut crate::results::Cell)| {
            let mut m = n.clone();
            edit(&mut m.points[0].cells[0]);
            m
        };
        // Within the budget the flight takes one round trip, not the model's two.
        fails(
            &with(&|c| {
                c.quic.as_mut().unwrap().server_bytes = 7_000;
                c.server_flight_bytes = Some(7_000);
            }),
            Kind::Recomputed,
            "takes 1",
        );
        // A cell's flights against what it says, and its mode against its flights: a full
        // handshake's cell showing a token, a token's cell showing none, a Retry's without the
        // Retry.
        use crate::results::Mode;
        type Edit<'a> = &'a dyn Fn(&mut crate::results::Cell);
        let edits: [(Edit, Kind, &str); 7] = [
            (
                &|c| c.quic = None,
                Kind::Incomplete,
                "a QUIC cell without its flights",
            ),
            (
                &|c| c.server_flight_bytes = Some(1),
                Kind::Evidence,
                "its datagrams 12633",
            ),
            (
                &|c| c.transport = Transport::Tcp,
                Kind::Evidence,
                "a QUIC record in a cell over TCP",
            ),
            (
                &|c| c.quic.as_mut().unwrap().token = true,
                Kind::Evidence,
                "a token the scenario does not present",
            ),
            (
                &|c| c.mode = Mode::Token,
                Kind::Evidence,
                "carried no NEW_TOKEN token",
            ),
            (
                &|c| c.mode = Mode::Retry,
                Kind::Evidence,
                "the server sent no Retry",
            ),
            // Flights recorded as another QUIC's: the model would take the wrong window.
            (
                &|c| c.quic.as_mut().unwrap().sender = crate::results::QuicSender::QuicGo,
                Kind::Evidence,
                "recorded as quic-go's",
            ),
        ];
        for (edit, kind, what) in edits {
            fails(&with(edit), kind, what);
        }
        // Without its loss model's path, a QUIC cell under loss is refused (a file before it ran
        // none); with a path, the path must be the one its flights give: 2 Initial datagrams, the
        // head of the server's flight (its first two datagrams: the ServerHello spills into the
        // second), the acknowledgement that releases the second round, its 5 datagrams (5,433
        // bytes; the rest of the first round's 7,200 lose no time of their own).
        let mut lossy = n.clone();
        lossy.points[0].loss_pct = 1.0;
        fails(&lossy, Kind::Evidence, "without the loss model's path");
        let q = n.points[0].cells[0].quic.clone().unwrap();
        let path = crate::netmodel::quic_critical_path(&q, crate::netmodel::QUIC_LOSS_MODEL);
        assert_eq!(
            path.iter().map(|f| f.segments).collect::<Vec<_>>(),
            [2, 2, 1, 5]
        );
        // A lossy file is held to its own form's path and timers: each form's cell passes in a
        // file of that form and fails in one of another; a form this pqprof does not know fails.
        let lossy_in = |file_form: u32, cell_form: u32| {
            let mut m = lossy.clone();
            m.quic_loss_model = file_form;
            let c = &mut m.points[0].cells[0];
            c.model = f::model(
                f::ModelInputs {
                    zero_ns: c.model.zero_ns,
                    round_trips: c.model.round_trips,
                    data_packets: c.model.data_packets,
                    bytes: c.model.bytes,
                    path: crate::netmodel::quic_critical_path(&q, cell_form),
                    stall: None,
                    paced: None,
                },
                f::Conditions {
                    rtt_ns: 5.6e6,
                    measured: true,
                    base_rtt_ns: 1e5,
                    loss_pct: 1.0,
                    rate_mbit: None,
                    quic_loss_model: cell_form,
                },
            );
            m
        };
        for form in 1..=crate::netmodel::QUIC_LOSS_MODEL {
            assert_eq!(
                super::section(&lossy_in(form, form)),
                Vec::<Problem>::new(),
                "form {form}"
            );
        }
        let other = "critical path is not the one its flights give";
        fails(&lossy_in(1, 3), Kind::Recomputed, other);
        fails(&lossy_in(3, 2), Kind::Recomputed, other);
        let unknown = crate::netmodel::QUIC_LOSS_MODEL + 1;
        fails(
            &lossy_in(unknown, 3),
            Kind::Evidence,
            &format!("QUIC loss model form {unknown}"),
        );
        // Only quic-go's flight after a token is paced; a pacer on quinn's is refused, and so is
        // a pacer's delay other than its datagrams give at the point's RTT.
        let paced = |delay_ns| {
            with(&|c| {
                c.model.pacer = Some(crate::results::Pacer {
                    datagrams: 12,
                    delay_ns,
                })
            })
        };
        fails(&paced(0.0), Kind::Recomputed, "the model paces Some(12)");
        // (12 datagrams at 5.6 ms are in the burst: no delay, not 1 ms.)
        let mut go = paced(1e6);
        let c = &mut go.points[0].cells[0];
        c.stack = crate::results::RealStack::new("quic-go");
        c.quic.as_mut().unwrap().sender = crate::results::QuicSender::QuicGo;
        c.quic.as_mut().unwrap().token = true;
        c.mode = Mode::Token;
        fails(&go, Kind::Recomputed, "model pacer delay_ns");
        let mut wrong = path.clone();
        wrong[1].segments = 7;
        fails(
            &with(&|c| c.model.path = wrong.clone()),
            Kind::Recomputed,
            "critical path is not the one its flights give",
        );
        // A validated address's cell stands beside its full twin, at no loss, and counts the Retry's
        // round trip: 2 + 1, the budget no longer holding the flight (12,633 bytes in 10,800,
        // then the rest).
        let mut v = n.clone();
        let mut retry = v.points[0].cells[0].clone();
        retry.mode = Mode::Retry;
        retry.quic.as_mut().unwrap().retry = true;
        remodel(&mut retry, 3.0);
        v.points[0].validated.push(retry.clone());
        assert_eq!(super::section(&v), Vec::<Problem>::new());
        remodel(&mut v.points[0].validated[0], 2.0);
        fails(&v, Kind::Recomputed, "and a Retry takes 3");
        // Filed among the full cells, a Retry's cell is refused there.
        let mut misfiled = n.clone();
        misfiled.points[0].cells.push(retry.clone());
        fails(
            &misfiled,
            Kind::Evidence,
            "a cell of retry handshakes among the full ones",
        );
        remodel(&mut v.points[0].validated[0], 3.0);
        v.points[0].validated[0].mode = Mode::Full;
        fails(
            &v,
            Kind::Evidence,
            "a cell of full handshakes among the validated",
        );
        v.points[0].validated[0].mode = Mode::Retry;
        v.points[0].cells.clear();
        fails(&v, Kind::Incomplete, "no full handshake's cell beside it");
    }

    /// The newest committed run (by name) with network cells, real handshakes and flows: the
    /// stall's inputs are all in it.
    fn committed_run_with_flows() -> Results {
        crate::results::committed(true)
            .iter()
            .rev()
            .filter_map(|f| crate::results::read(f).ok())
            .find(|r| {
                r.network.is_some()
                    && r.handshakes.is_some()
                    && r.stacks
                        .iter()
                        .any(|s| s.name == "openssl" && !s.overlap.is_empty())
                    && r.suites.iter().any(|s| s.flow.is_some())
            })
            .expect("a committed run with network cells, handshakes and flows")
    }

    #[test]
    fn a_stall_takes_off_what_the_flows_say_it_hides_and_check_holds_it_to_them() {
        let mut r = committed_run_with_flows();
        // As a file before the stacks said when their clients check the chain: no stall, and
        // check asks for none.
        for s in r.stacks.iter_mut() {
            s.on_certificate.clear();
        }
        let mut n = r.network.clone().unwrap();
        crate::figures::network::set_stalls(&r, &mut n);
        r.network = Some(n);
        assert!(check(&r).is_empty(), "{:?}", check(&r));
        for s in r
            .stacks
            .iter_mut()
            .filter(|s| s.name == "openssl" || s.name == "go")
        {
            s.on_certificate = vec!["ServerHello to the chain".into()];
        }
        let before = r.network.clone().unwrap();
        assert!(
            !check(&r).is_empty(),
            "a stall the models do not take off is caught"
        );
        let mut n = before.clone();
        crate::figures::network::set_stalls(&r, &mut n);
        r.network = Some(n);
        assert!(check(&r).is_empty(), "{:?}", check(&r));
        let n = r.network.as_ref().unwrap();
        let at = |stack: &str, auth: &str| {
            let p = n
                .points
                .iter()
                .find(|p| p.rtt_ns == 5.6e6 && p.loss_pct == 0.0)
                .unwrap();
            p.cells
                .iter()
                .find(|c| {
                    c.stack.name() == stack
                        && c.group == "X25519MLKEM768"
                        && c.auth.as_deref() == Some(auth)
                })
                .unwrap()
        };
        let segment = |stack: &str, suite: &str, name: &str| {
            r.suite(suite, stack)
                .unwrap()
                .flow
                .as_ref()
                .unwrap()
                .segments
                .iter()
                .find(|s| s.name == name)
                .unwrap()
                .median_ns
        };
        // OpenSSL's ML-DSA-65 flight (15.7 kB) overflows the 14,480-byte window with its
        // Certificate inside it: the signing and the chain check both run in the wait. Without a
        // wait the longer of them counts; the zero point, through the same router, waited its
        // base RTT and hid that much of it already.
        let base = n.base_rtt_ns;
        let suite = "X25519MLKEM768 + ML-DSA-65 full handshake";
        let c = at("openssl", "ML-DSA-65");
        let s = c.model.stall.as_ref().unwrap();
        // The server's work after its first write: the zero point's measured flight, which this
        // run has (files from 2026-12-05 10:44 on; netmodel's tests hold the composed segment's
        // case).
        let signing = s.server_flight_ns.expect("the zero point's server flights");
        assert!(signing > segment("openssl", suite, "CertificateVerify, Finished"));
        let want = signing.max(segment("openssl", suite, "ServerHello to the chain")) - base;
        assert!(
            s.certificate_end <= s.window_bytes && s.flight_bytes > s.window_bytes,
            "{s:?}"
        );
        assert!((s.hidden_ns - want).abs() < 1e-6, "{} {want}", s.hidden_ns);
        let old = before
            .points
            .iter()
            .find(|p| p.rtt_ns == 5.6e6 && p.loss_pct == 0.0)
            .unwrap()
            .cells
            .iter()
            .find(|x| x.stack == c.stack && x.group == c.group && x.auth == c.auth)
            .unwrap();
        assert!((old.model.expected_ns - c.model.expected_ns - want).abs() < 1.0);
        // ML-DSA-87's Certificate ends past the window: the chain is checked after the wait,
        // beside what is left of the signing. At the zero point that is the longer of the chain
        // and the signing less the base RTT; at 5.6 ms the chain alone.
        let s87 = at("openssl", "ML-DSA-87").model.stall.clone().unwrap();
        assert!(s87.certificate_end > s87.window_bytes, "{s87:?}");
        let suite87 = "X25519MLKEM768 + ML-DSA-87 full handshake";
        let (sign87, chain87) = (
            s87.server_flight_ns
                .expect("the zero point's server flights"),
            segment("openssl", suite87, "ServerHello to the chain"),
        );
        let want87 = chain87.max(sign87 - base) - chain87;
        assert!((s87.hidden_ns - want87).abs() < 1e-6);
        // A flight inside the window hides nothing; rustls states no early chain check, no stall.
        assert_eq!(
            at("openssl", "ML-DSA-44")
                .model
                .stall
                .as_ref()
                .unwrap()
                .hidden_ns,
            0.0
        );
        assert!(at("rustls", "ML-DSA-65").model.stall.is_none());
        // A changed hidden time, or a stall the flows do not give, is caught.
        let borrowed = at("openssl", "ML-DSA-65").model.stall.clone();
        let tamper = |stack: &str, f: &dyn Fn(&mut crate::results::Model)| {
            let mut t = r.clone();
            let mut p = t.network.as_mut().unwrap().points.iter_mut();
            let p = p.find(|p| p.rtt_ns == 5.6e6 && p.loss_pct == 0.0).unwrap();
            let c = p
                .cells
                .iter_mut()
                .find(|c| c.stack.name() == stack && c.auth.as_deref() == Some("ML-DSA-65"));
            f(&mut c.unwrap().model);
            check(&t)
        };
        let halved = tamper("openssl", &|m| m.stall.as_mut().unwrap().hidden_ns *= 0.5);
        assert!(
            halved
                .iter()
                .any(|p| p.is(Kind::Recomputed, "stall hidden_ns")),
            "{halved:?}"
        );
        let given = tamper("rustls", &|m| m.stall = borrowed.clone());
        assert!(
            given.iter().any(|p| p.is(Kind::Recomputed, "do not give")),
            "{given:?}"
        );
    }
}
