//! Network figures a producer stores and `check` recomputes.

use crate::results::{Cell, Network, Stall};
use crate::stats;

/// A wake-up past a timer (`Network::wake_ns`) slower than this at the median makes the
/// short-RTT cells read over their model: the endpoints wait idle for every flight.
pub(crate) const SLOW_WAKE_NS: f64 = 50_000.0;

/// The p50 and p90 of a host's wake-ups past their timers, microseconds, where the p50 is over
/// `SLOW_WAKE_NS`: the `SlowWake` note's figures.
pub fn slow_wake(wake_ns: &[u64]) -> Option<(f64, f64)> {
    let q = percentiles_ns(wake_ns, &[50.0, 90.0]);
    (!wake_ns.is_empty() && q[0] > SLOW_WAKE_NS).then(|| (q[0] / 1e3, q[1] / 1e3))
}

/// The value at each percentile of a set of nanosecond samples (0 where there are none).
pub fn percentiles_ns(samples_ns: &[u64], percentiles: &[f64]) -> Vec<f64> {
    let sorted = stats::sorted(&samples_ns.iter().map(|&x| x as f64).collect::<Vec<_>>());
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

/// A 95% interval, low and high, nanoseconds.
pub(crate) type Interval = (f64, f64);

/// The 95% intervals of a cell's p50 and p95 connect-to-complete times (`stats::percentile_ci95`;
/// none for a p95 of too few handshakes).
pub fn ready_intervals(ready_ns: &[u64]) -> (Option<Interval>, Option<Interval>) {
    let sorted = stats::sorted(&ready_ns.iter().map(|&x| x as f64).collect::<Vec<_>>());
    (
        stats::percentile_ci95(&sorted, 50.0),
        stats::percentile_ci95(&sorted, 95.0),
    )
}

/// A cell's p50 precision: its handshakes are the grid point's fixed design (Paquin et al.'s
/// counts within the cell's time), so the interval is reported against the run's target, not
/// chased.
pub fn p50_precision(ready_ns: &[u64], target_pct: f64) -> Option<crate::results::Precision> {
    let ci = ready_intervals(ready_ns).0?;
    let p50 = percentiles_ns(ready_ns, &[50.0])[0];
    Some(super::precision(
        target_pct,
        stats::half_width_pct(ci, p50)?,
        crate::results::StopReason::Fixed,
        1,
        None,
    ))
}

/// How far a point's measured RTT may be from its target: max(0.3 ms, 3% of the target).
pub fn tolerance_ns(rtt_ns: f64) -> f64 {
    (rtt_ns * 0.03).max(0.3e6)
}

/// The 95% interval the answer table's extra time at an RTT of `rtt_ns` is held to (#38): ±0.2
/// ms at 5.6 ms and ±1 ms at 78.7 ms, that is 1.27% of the RTT, at least 0.2 ms.
pub fn extra_target_ns(rtt_ns: f64) -> f64 {
    (rtt_ns * 0.0127).max(0.2e6)
}

/// The mean connect-to-complete time of a cell's completed handshakes.
pub fn mean_ns(samples_ns: &[u64]) -> f64 {
    stats::mean(&samples_ns.iter().map(|&x| x as f64).collect::<Vec<_>>())
}

/// The inputs of a cell's model, measured at the zero point and on the wire.
#[derive(Debug, Clone)]
pub struct ModelInputs {
    pub zero_ns: f64,
    pub round_trips: f64,
    pub data_packets: [f64; 2],
    pub bytes: [f64; 2],
    pub path: Vec<crate::results::Flight>,
    /// What a window stall can hide (`stall_for`), its `hidden_ns` set by `model`.
    pub stall: Option<crate::results::Stall>,
    /// The datagrams of a first flight quic-go's pacer spaces (`netmodel::quic_paced`).
    pub paced: Option<u64>,
}

/// A point's conditions: its RTT (the link's measured one where there is one), the path's own
/// RTT (taken off), its loss and bottleneck rate.
#[derive(Debug, Clone, Copy)]
pub struct Conditions {
    pub rtt_ns: f64,
    /// Whether `rtt_ns` is the link's measured RTT (stored with the model).
    pub measured: bool,
    pub base_rtt_ns: f64,
    pub loss_pct: f64,
    pub rate_mbit: Option<f64>,
    /// The form of QUIC's loss model (`netmodel::QUIC_LOSS_MODEL`, the file's).
    pub quic_loss_model: u32,
}

/// A cell's model: the expected (mean) time (netmodel::expected_ns) and, where the critical path
/// is known, the modelled p50 and p95 under loss (netmodel::loss_percentiles over the loss-free
/// time, the expected time at no loss).
pub fn model(i: ModelInputs, at: Conditions) -> crate::results::Model {
    let stall = i.stall.map(|mut s| {
        // The zero point waited its own base RTT through the same router and hid that much.
        s.hidden_ns = crate::netmodel::stall_hidden_ns(&s, at.rtt_ns)
            - crate::netmodel::stall_hidden_ns(&s, at.base_rtt_ns);
        s
    });
    let hidden = stall.as_ref().map_or(0.0, |s| s.hidden_ns);
    // The zero point's flight, at its base RTT, was held as long as the pacer holds it there.
    let pacer = i.paced.map(|datagrams| crate::results::Pacer {
        datagrams,
        delay_ns: crate::netmodel::quic_go_pacing_ns(datagrams, at.rtt_ns, at.quic_loss_model)
            - crate::netmodel::quic_go_pacing_ns(datagrams, at.base_rtt_ns, at.quic_loss_model),
    });
    let paced = pacer.map_or(0.0, |p| p.delay_ns);
    let expected = |loss: f64| {
        crate::netmodel::expected_ns(
            i.zero_ns - hidden + paced,
            i.round_trips,
            at.rtt_ns,
            at.base_rtt_ns,
            loss,
            i.data_packets,
            i.bytes,
            at.rate_mbit,
        )
    };
    let (p50_ns, p95_ns) = if i.path.is_empty() {
        (None, None)
    } else {
        let q = crate::netmodel::loss_percentiles(
            expected(0.0),
            &i.path,
            at.rtt_ns,
            at.loss_pct / 100.0,
            &[50.0, 95.0],
            at.quic_loss_model,
        );
        (Some(q[0]), Some(q[1]))
    };
    crate::results::Model {
        zero_ns: i.zero_ns,
        round_trips: i.round_trips,
        data_packets: i.data_packets,
        bytes: i.bytes,
        // QUIC's mean is its loss model's; TCP's the first-order term of `expected_ns`.
        expected_ns: if i.path.first().is_some_and(|f| f.quic) {
            expected(0.0)
                + crate::netmodel::loss_mean_ns(
                    &i.path,
                    at.rtt_ns,
                    at.loss_pct / 100.0,
                    at.quic_loss_model,
                )
        } else {
            expected(at.loss_pct / 100.0)
        },
        link_rtt_ns: at.measured.then_some(at.rtt_ns),
        path: i.path,
        p50_ns,
        p95_ns,
        stall,
        pacer,
    }
}

/// A point's conditions for a cell's model: the link's measured RTT where the model stored it.
pub(crate) fn conditions(
    n: &Network,
    p: &crate::results::Point,
    m: &crate::results::Model,
) -> Conditions {
    Conditions {
        rtt_ns: m.link_rtt_ns.unwrap_or(p.rtt_ns),
        measured: m.link_rtt_ns.is_some(),
        base_rtt_ns: n.base_rtt_ns,
        loss_pct: p.loss_pct,
        rate_mbit: n.rate_mbit,
        quic_loss_model: n.quic_loss_model,
    }
}

/// A CertificateVerify and a Finished in records of their own, bytes beyond the signature and
/// the Finished's MAC: a record's header (5), content type and AEAD tag (1 + 16) each (RFC 8446
/// section 5.2), the CertificateVerify's handshake header, scheme and length (4 + 2 + 2, section
/// 4.4.3), the Finished's header (4, section 4.4.4).
const AFTER_CERTIFICATE_BYTES: u64 = 2 * (5 + 1 + 16) + 4 + 2 + 2 + 4;

/// What a window stall could hide of a TLS 1.3 cell over TCP (netmodel::stall_hidden_ns), from
/// the run's data: the composed suite of the cell's scenario (the real handshakes name its
/// composition stack), that stack's flow and what it says of its writes and its client's chain
/// check, the chain's signature size (the handshakes' evidence) and the section's window. None
/// where any of it is missing or the stack does not say when its client checks the chain.
pub(crate) fn stall_for(
    r: &crate::results::Results,
    n: &Network,
    c: &Cell,
) -> Option<crate::results::Stall> {
    if c.protocol != "tls13" || !c.transport.is_tcp() {
        return None;
    }
    let baseline = r.baseline_auth().unwrap_or("");
    let h = r.handshakes.as_ref()?;
    let scenario = h.scenarios.iter().find(|s| {
        !s.instrumented
            && s.mode.is_full()
            && s.stack == c.stack
            && s.suite == c.group
            && s.auth_name().unwrap_or(baseline) == c.auth.as_deref().unwrap_or(baseline)
    })?;
    let stack = r
        .stacks
        .iter()
        .find(|s| s.name == scenario.composed_stack)?;
    let chain_segment = stack.on_certificate.first()?;
    let suite_name = crate::auth::full_suite(&c.group, c.auth.as_deref(), baseline);
    let flow = r.suite(&suite_name, &stack.name)?.flow.as_ref()?;
    let segment = |name: &str| {
        flow.segments
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.median_ns)
    };
    let server_after_write_ns = match stack.overlap.iter().find(|(_, b)| b == chain_segment) {
        Some((a, _)) => Some(segment(a)?),
        None => None,
    };
    let signature = crate::algorithm::find(&scenario.auth.as_ref()?.algorithm)?.signature? as u64;
    // The Finished's MAC is the suite's hash (RFC 8446 section 4.4.4).
    let finished = if scenario.evidence.cipher.ends_with("SHA384") {
        48
    } else {
        32
    };
    let flight_bytes = c.server_flight_bytes?;
    // What the server does between its writes, measured: the zero point's own cell of this
    // scenario, where the file has its flights' spans.
    let server_flight_ns = server_after_write_ns.and_then(|_| {
        let zero = n
            .points
            .iter()
            .find(|p| p.rtt_ns == 0.0 && p.loss_pct == 0.0)?;
        let z = zero.cells.iter().find(|z| {
            z.stack == c.stack && z.group == c.group && z.auth == c.auth && z.mode == c.mode
        })?;
        (!z.server_flight_ns.is_empty()).then(|| percentiles_ns(&z.server_flight_ns, &[50.0])[0])
    });
    Some(crate::results::Stall {
        suite: suite_name,
        composed_stack: stack.name.clone(),
        flight_bytes,
        certificate_end: flight_bytes
            .saturating_sub(signature + finished + AFTER_CERTIFICATE_BYTES),
        window_bytes: u64::from(n.initcwnd?) * u64::from(n.mss?),
        server_after_write_ns,
        server_flight_ns,
        client_chain_ns: segment(chain_segment)?,
        // Every stack that names its early segments starts them on arrival; a stack that checks
        // the chain with the CertificateVerify names none and gets no stall.
        chain_on_arrival: true,
        hidden_ns: 0.0,
    })
}

/// Whether two stalls have the same inputs (their hidden time is the model's to recompute), or
/// both are none.
pub(crate) fn same_stall(a: Option<&Stall>, b: Option<&Stall>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            Stall {
                hidden_ns: b.hidden_ns,
                ..a.clone()
            } == *b
        }
        _ => false,
    }
}

/// Every cell's model away from the zero point with what a window stall hides (`stall_for`,
/// none where it gives none), recomputed from its stored inputs: the network step's models once
/// the run's phases and stacks are at hand, and again when a handshakes section (which names
/// each scenario's composition and chain) is written beside them.
pub fn set_stalls(r: &crate::results::Results, n: &mut Network) {
    let mut changed = Vec::new();
    for (i, p) in n.points.iter().enumerate().filter(|(_, p)| p.rtt_ns > 0.0) {
        for (j, c) in p.cells.iter().enumerate() {
            let stall = stall_for(r, n, c);
            if !same_stall(stall.as_ref(), c.model.stall.as_ref()) {
                changed.push((i, j, stall, conditions(n, p, &c.model)));
            }
        }
    }
    for (i, j, stall, at) in changed {
        let m = &n.points[i].cells[j].model;
        let fresh = model(
            ModelInputs {
                zero_ns: m.zero_ns,
                round_trips: m.round_trips,
                data_packets: m.data_packets,
                bytes: m.bytes,
                path: m.path.clone(),
                stall,
                paced: m.pacer.map(|p| p.datagrams),
            },
            at,
        );
        n.points[i].cells[j].model = fresh;
    }
}

/// Handshakes a cell makes: `per_point`, four times that at the zero point (the model's compute
/// term, one at a time, a few milliseconds each) and six times at 0% and 1% loss (the answer's
/// cells: their p50s and the differences between them are what the site quotes, and a start every
/// few milliseconds makes them cheap; at three times, on the Zen 5 VM, the 5.6 ms differences'
/// 95% intervals were ±0.10-0.35 ms), a third (at least 10, at most `per_point`) at 10% loss and
/// more. The cell's time allowance stops the starts past it, once 10 (network's MIN_PER_CELL)
/// have started.
pub fn handshakes_at(per_point: usize, zero: bool, loss_pct: f64) -> usize {
    if zero {
        per_point * 4
    } else if loss_pct <= 1.0 {
        per_point * 6
    } else if loss_pct >= 10.0 {
        // A point waits for its slowest handshake, and at 20% loss one in a few hundred loses its
        // SYN four times (1 + 2 + 4 + 8 s) or waits out the socket timeout: a third of them keeps
        // that tail a third as likely; the p50 is what these cells give, their p95 intervals are
        // out of reach either way.
        (per_point / 3).max(10).min(per_point)
    } else {
        per_point
    }
}

#[cfg(test)]
mod counts {
    #[test]
    fn cells_have_more_handshakes_where_the_answer_is_and_fewer_where_timers_dominate() {
        use super::handshakes_at;
        assert_eq!(handshakes_at(30, true, 0.0), 120);
        assert_eq!(handshakes_at(30, false, 0.0), 180);
        assert_eq!(handshakes_at(30, false, 1.0), 180);
        assert_eq!(handshakes_at(30, false, 5.0), 30);
        assert_eq!(handshakes_at(30, false, 20.0), 10);
        assert_eq!(handshakes_at(6, false, 20.0), 6);
    }

    #[test]
    fn a_paced_flight_adds_what_the_pacer_holds_beyond_the_zero_points() {
        use super::{model, Conditions, ModelInputs};
        let at = |rtt_ns| Conditions {
            rtt_ns,
            measured: true,
            base_rtt_ns: 1e5,
            loss_pct: 0.0,
            rate_mbit: None,
            quic_loss_model: crate::netmodel::QUIC_LOSS_MODEL,
        };
        let inputs = |paced| ModelInputs {
            zero_ns: 2e6,
            round_trips: 1.0,
            data_packets: [6.0, 13.0],
            bytes: [2e3, 15e3],
            path: Vec::new(),
            stall: None,
            paced,
        };
        // 13 datagrams at 78.7 ms, the pacer counting 1,280-byte datagrams (form 5), at r = 1.25
        // x 38,400 B / 78.7 ms: ten at once leave 800 B of the bucket's 12,800; the 11th goes at
        // the 1 ms least spacing (800 + r x 1 ms - 1,200 B left), the 12th once 1,280 B are there
        // again, the 13th 1,200 B / r after it (4.722 ms in all); none held at the zero point's
        // 0.1 ms.
        let plain = model(inputs(None), at(78.7e6));
        let paced = model(inputs(Some(13)), at(78.7e6));
        let r: f64 = 1.25 * 38_400.0 / 78.7e6;
        let held = 1e6 + (1_280.0 - (800.0 + r * 1e6 - 1_200.0)) / r + 1_200.0 / r;
        assert!((held - 4.722e6).abs() < 1e3);
        assert!((paced.expected_ns - plain.expected_ns - held).abs() < 1.0);
        assert!((paced.pacer.unwrap().delay_ns - held).abs() < 1.0);
        assert_eq!(paced.pacer.unwrap().datagrams, 13);
        assert!(plain.pacer.is_none());
        // At 5.6 ms the burst holds 14: nothing.
        assert_eq!(
            model(inputs(Some(13)), at(5.6e6)).pacer.unwrap().delay_ns,
            0.0
        );
    }
}

/// How long, within `[start, end)`, at least one of `held` (a connection's packets, each from the
/// emulator receiving it to its release, nanoseconds, in any order and overlapping) was held:
/// the measure of their union clipped to the handshake.
pub fn wire_within(held: &[[u64; 2]], start: u64, end: u64) -> u64 {
    let mut v: Vec<[u64; 2]> = held
        .iter()
        .map(|&[a, b]| [a.max(start), b.min(end)])
        .filter(|&[a, b]| a < b)
        .collect();
    v.sort_unstable();
    let (mut total, mut reach) = (0u64, start);
    for [a, b] in v {
        let a = a.max(reach);
        if b > a {
            total += b - a;
            reach = b;
        }
    }
    total
}

/// The span of the first of a connection's runs of server data (`Cell::server_flight_ns`) that
/// starts within a handshake's clock, [start, end); none where none does.
pub fn first_flight_within(runs: &[[u64; 2]], start: u64, end: u64) -> Option<u64> {
    runs.iter()
        .filter(|r| (start..end).contains(&r[0]))
        .min_by_key(|r| r[0])
        .map(|r| r[1].saturating_sub(r[0]))
}

#[cfg(test)]
mod wire {
    use super::wire_within;

    #[test]
    fn wire_time_is_the_union_of_held_spans_within_the_handshake() {
        // Two overlapping spans (1-4, 3-6) and one apart (8-9): 5 + 1.
        assert_eq!(wire_within(&[[3, 6], [8, 9], [1, 4]], 0, 100), 6);
        // Clipped to the handshake [2, 8): 2-6 only.
        assert_eq!(wire_within(&[[3, 6], [8, 9], [1, 4]], 2, 8), 4);
        // One span inside another counts once; a span outside counts nothing.
        assert_eq!(wire_within(&[[10, 20], [12, 15], [30, 40]], 0, 25), 10);
        assert_eq!(wire_within(&[], 0, 10), 0);
        // Touching spans join; never more than the handshake.
        assert_eq!(wire_within(&[[0, 5], [5, 10]], 0, 10), 10);
        assert_eq!(wire_within(&[[0, 50]], 10, 20), 10);
    }

    #[test]
    fn a_handshakes_flight_is_the_first_run_of_server_data_in_its_clock() {
        use super::first_flight_within;
        // An earlier round's run on the same port (5-9) is not this handshake's; of the two in
        // its clock [10, 100), the first (20-32) is the flight, the second (60-61) a ticket.
        let runs = [[60, 61], [5, 9], [20, 32]];
        assert_eq!(first_flight_within(&runs, 10, 100), Some(12));
        assert_eq!(first_flight_within(&runs, 40, 100), Some(1));
        assert_eq!(first_flight_within(&runs, 100, 200), None);
    }

    #[test]
    fn a_split_adds_up_in_its_means_and_takes_each_median_apart() {
        // Handshakes 10, 12, 20 with wire 8, 9, 9: endpoint 2, 3, 11.
        let s = super::split(&[10, 12, 20], &[8, 9, 9]).unwrap();
        assert_eq!((s.wire_p50_ns, s.endpoint_p50_ns), (9.0, 3.0));
        assert!((s.wire_mean_ns - 26.0 / 3.0).abs() < 1e-9);
        assert!((s.endpoint_mean_ns - 16.0 / 3.0).abs() < 1e-9);
        // Not one wire time per handshake, or more wire than handshake: no split.
        assert_eq!(super::split(&[10, 12], &[8]), None);
        assert_eq!(super::split(&[10], &[11]), None);
        assert_eq!(super::split(&[], &[]), None);
    }
}

/// A cell's wire/endpoint split from its handshakes' times and their wire times (same order): none
/// unless there is one wire time per handshake, each within its handshake.
pub fn split(ready_ns: &[u64], wire_ns: &[u64]) -> Option<crate::results::Split> {
    if ready_ns.is_empty()
        || ready_ns.len() != wire_ns.len()
        || ready_ns.iter().zip(wire_ns).any(|(r, w)| w > r)
    {
        return None;
    }
    let endpoint: Vec<u64> = ready_ns.iter().zip(wire_ns).map(|(r, w)| r - w).collect();
    Some(crate::results::Split {
        wire_p50_ns: percentiles_ns(wire_ns, &[50.0])[0],
        endpoint_p50_ns: percentiles_ns(&endpoint, &[50.0])[0],
        wire_mean_ns: mean_ns(wire_ns),
        endpoint_mean_ns: mean_ns(&endpoint),
    })
}

/// CPU over a wall time, percent of one core (0 for an empty window).
pub fn busy_pct(cpu_ns: f64, wall_ns: f64) -> f64 {
    if wall_ns > 0.0 {
        cpu_ns / wall_ns * 100.0
    } else {
        0.0
    }
}

/// Handshakes a cell's counters are divided by: completed and failed.
pub fn handshakes(c: &Cell) -> f64 {
    (c.ready_ns.len() + c.failed).max(1) as f64
}

/// dropped / packets, percent (0 where nothing passed).
pub fn loss_pct(dropped: u64, packets: u64) -> f64 {
    if packets > 0 {
        dropped as f64 / packets as f64 * 100.0
    } else {
        0.0
    }
}

/// A leaf-only ML-DSA-44 cell beside Paquin, Stebila & Tamvada's Dilithium2 signature run at the
/// nearest published point, with the leaf-only ECDSA cell of the same stack and group when there is
/// one (theirs sends the leaf only, the CA being the client's trust anchor; so do these forms).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BesidePaquin {
    pub(crate) stack: String,
    pub(crate) group: String,
    pub(crate) rtt_ns: f64,
    pub(crate) loss_pct: f64,
    pub(crate) leaf_ns: f64,
    pub(crate) ecdsa_ns: Option<f64>,
    pub(crate) their_rtt_ms: f64,
    pub(crate) their_dilithium2_ms: f64,
    pub(crate) their_ecdsa_ms: f64,
}

/// The authentications Paquin et al.'s Dilithium2 and ECDSA runs compare with (suites/auth.toml).
pub(crate) const LEAF_MLDSA44: &str = "ML-DSA-44 leaf";
pub(crate) const LEAF_ECDSA: &str = "ECDSA-P256 leaf";

/// Every point with a leaf-only ML-DSA-44 cell and a published Dilithium2 point near it (medians).
pub(crate) fn beside_paquin(n: &crate::results::Network) -> Vec<BesidePaquin> {
    let published = crate::references::paquin().unwrap_or_default();
    let median_of = |p: &crate::references::PaquinPoint| {
        p.percentiles
            .iter()
            .position(|&x| x == 50.0)
            .map(|i| p.ms[i])
    };
    let mut out = Vec::new();
    for p in &n.points {
        let rtt_ns = p.rtt_ns;
        let dil = crate::references::paquin_sig_nearest(
            &published,
            "dilithium2",
            rtt_ns / 1e6,
            p.loss_pct,
        );
        let ecd = crate::references::paquin_sig_nearest(
            &published,
            "ecdsap256",
            rtt_ns / 1e6,
            p.loss_pct,
        );
        let (Some(dil), Some(ecd)) = (dil, ecd) else {
            continue;
        };
        let (Some(d_ms), Some(e_ms)) = (median_of(dil), median_of(ecd)) else {
            continue;
        };
        for c in &p.cells {
            if c.auth.as_deref() != Some(LEAF_MLDSA44) {
                continue;
            }
            let Some(leaf_ns) = c.ready_median_ns(n) else {
                continue;
            };
            let ecdsa_ns = p
                .cells
                .iter()
                .find(|e| {
                    e.stack == c.stack
                        && e.group == c.group
                        && e.auth.as_deref() == Some(LEAF_ECDSA)
                })
                .and_then(|e| e.ready_median_ns(n));
            out.push(BesidePaquin {
                stack: c.stack.name().to_string(),
                group: c.group.clone(),
                rtt_ns,
                loss_pct: p.loss_pct,
                leaf_ns,
                ecdsa_ns,
                their_rtt_ms: dil.rtt_ms,
                their_dilithium2_ms: d_ms,
                their_ecdsa_ms: e_ms,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    fn cell(auth: &str, median_ms: f64) -> serde_json::Value {
        serde_json::json!({
            "protocol": "tls13", "stack": "rustls", "group": "X25519MLKEM768", "auth": auth,
            "baseline": null, "ready_ns": [], "echo_ns": [], "failed": 0,
            "ready_percentiles_ns": [median_ms * 1e6 - 1e5, median_ms * 1e6, median_ms * 1e6 + 1e5],
            "echo_percentiles_ns": [0.0, 0.0, 0.0], "ready_mean_ns": median_ms * 1e6,
            "packets": [0, 0], "bytes": [0, 0], "data_packets": [0, 0], "dropped": [0, 0],
            "packets_per_handshake": [0.0, 0.0], "bytes_per_handshake": [0.0, 0.0],
            "observed_loss_pct": [0.0, 0.0], "client_busy_pct": 0.0, "server_busy_pct": 0.0,
            "model": {"zero_ns": 0.0, "round_trips": 2.0, "data_packets": [0.0, 0.0],
                      "bytes": [0.0, 0.0], "expected_ns": 0.0}
        })
    }

    #[test]
    fn a_leaf_only_mldsa44_cell_meets_the_nearest_dilithium2_point() {
        let point = |rtt_ms: f64, loss: f64, cells: Vec<serde_json::Value>| {
            serde_json::json!({"rtt_ns": rtt_ms * 1e6, "loss_pct": loss, "cells": cells,
                "link": {"connect_ns": [], "rtt_median_ns": rtt_ms * 1e6, "tolerance_ns": 3e5, "valid": true}})
        };
        let n: crate::results::Network = serde_json::from_value(serde_json::json!({
            "date_utc": "", "wall_seconds": 0.0, "emulator": "nfqueue", "grid": "default",
            "congestion_control": "cubic", "offloads_off": true, "rate_mbit": null,
            "base_rtt_ns": 0.0, "offset_ns": 0.0, "parallel": 1, "per_point": 1,
            "percentiles": [25.0, 50.0, 75.0],
            "points": [
                point(0.0, 0.0, vec![cell(super::LEAF_MLDSA44, 1.0)]),
                point(78.7, 0.0, vec![cell(super::LEAF_ECDSA, 158.0), cell(super::LEAF_MLDSA44, 159.0), cell("ML-DSA-44", 240.0)]),
                // Paquin et al. have no 0.7% loss point (0, 0.1, 0.5, 1, 1.5, ... 3, then 4 to 20).
                point(5.6, 0.7, vec![cell(super::LEAF_MLDSA44, 12.0)]),
            ]
        }))
        .unwrap();
        let rows = super::beside_paquin(&n);
        assert_eq!(rows.len(), 1, "{rows:?}");
        let r = &rows[0];
        assert_eq!((r.leaf_ns, r.ecdsa_ns), (159e6, Some(158e6)));
        // Their 78.623 ms point (references/paquin.toml): Dilithium2 158.94 ms, ECDSA 158.67 ms.
        assert_eq!(r.their_rtt_ms, 78.623);
        assert!(
            (r.their_dilithium2_ms - 158.94).abs() < 0.01
                && (r.their_ecdsa_ms - 158.67).abs() < 0.01,
            "{r:?}"
        );
    }

    #[test]
    fn tolerance_is_three_percent_or_a_third_of_a_millisecond() {
        assert_eq!(super::tolerance_ns(5.6e6), 0.3e6);
        assert_eq!(super::extra_target_ns(5.6e6), 0.2e6);
        assert!((super::extra_target_ns(78.7e6) - 0.99949e6).abs() < 1.0);
        assert!((super::tolerance_ns(78.7e6) - 2.361e6).abs() < 1e-3);
        assert_eq!(
            super::percentiles_ns(&[4, 1, 3, 2], &[0.0, 100.0]),
            vec![1.0, 4.0]
        );
        assert_eq!(super::percentiles_ns(&[], &[50.0]), vec![0.0]);
    }
}
