//! Each real handshake against its composition (#37), computed from stored data on every render:
//! nothing here is stored, so nothing here can go stale.
//!
//! - **CPU.** A side's composed CPU per handshake is the sum of its segments' calls at the phases'
//!   *means* (CPU per handshake is a mean: capacity divides a core's time by the handshakes it
//!   served, and ML-DSA signing's rejection loop puts its mean 10-25% above its median). It is set
//!   beside the in-memory handshakes of `capacity`, whose two sides run in one pinned thread with
//!   no sockets, so each side's time there is its CPU; and beside the loopback handshakes' CPU per
//!   handshake, which adds the sockets, the kernel and the wake-ups.
//! - **Latency.** The composed critical path (`flow::figures`) plus the stack's own work: the
//!   parsing, system calls and waits no phase holds, taken once per stack from its classical
//!   baseline (loopback median less composed path). The baseline matches by construction; every
//!   other scenario tests whether the phases predict what it adds, with what its bytes cost the
//!   stack taken from the stack's size controls (`per_byte`).

use super::timeline;
use crate::results::{Flow, Phase, PhaseId, Results, Scenario, Side, SuiteResult};
use crate::shift::Ran;
use crate::stats;

/// A composed figure beside the measured one, nanoseconds, each with its 95% interval where known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Versus {
    pub composed_ns: f64,
    pub(crate) composed_half95_ns: Option<f64>,
    pub real_ns: f64,
    pub(crate) real_ci95_ns: Option<(f64, f64)>,
}

impl Versus {
    /// Composed over measured; NaN where nothing was measured (a file with no CPU figure).
    pub(crate) fn ratio(&self) -> f64 {
        if self.real_ns > 0.0 {
            self.composed_ns / self.real_ns
        } else {
            f64::NAN
        }
    }

    /// Whether there is a measured figure to set the composition beside.
    pub(crate) fn measured(&self) -> bool {
        self.real_ns > 0.0 && self.real_ns.is_finite()
    }

    /// The ratio's 95% bounds: each end of the composed interval over the opposite end of the
    /// measured one. Treating the two ends as reached at once makes the bounds wide, not narrow.
    pub(crate) fn ratio_ci95(&self) -> Option<(f64, f64)> {
        let h = self.composed_half95_ns?;
        let (lo, hi) = self.real_ci95_ns?;
        (lo > 0.0 && hi > 0.0).then(|| ((self.composed_ns - h) / hi, (self.composed_ns + h) / lo))
    }

    /// Whether the composition lands within `pct` percent of the measurement.
    pub(crate) fn within(&self, pct: f64) -> bool {
        (self.ratio() - 1.0).abs() * 100.0 <= pct
    }

    /// For a difference, #37's target: within `pct` percent of the measured one, or within
    /// `floor_ns` of it where that is wider (a small difference is not held to a few ns).
    pub(crate) fn delta_within(&self, pct: f64, floor_ns: f64) -> bool {
        (self.composed_ns - self.real_ns).abs() <= (pct / 100.0 * self.real_ns.abs()).max(floor_ns)
    }

    /// Whether the composed figure lies inside the measured one's 95% interval: a miss there is
    /// not resolved by this measurement.
    pub(crate) fn inside_real_ci95(&self) -> bool {
        self.real_ci95_ns
            .is_some_and(|(lo, hi)| lo <= self.composed_ns && self.composed_ns <= hi)
    }
}

/// One side's composed CPU per handshake: the calls of its segments at their phases' means, with
/// the 95% half-width of that sum. Where every phase ran in the same processes (the run step's
/// processes, `Phase::process_ids`), the sum is formed in each process and the half-width is the
/// t-interval of those sums, so a host that drifted between processes widens it as it would move
/// a next run; otherwise the phases' own half-widths add (a drift shared by all phases moves the
/// sum by the sum of its moves). The figure itself is the pooled means' sum, which weighs each
/// process by its samples; the half-width is that of the processes' sums around their own mean.
/// `None` where a phase is missing.
pub(crate) fn side_mean(flow: &Flow, side: Side, phases: &[Phase]) -> Option<(f64, Option<f64>)> {
    let parts = side_parts(flow, side, phases)?;
    Some((
        parts_mean(&parts),
        per_process_half95(&parts).or_else(|| own_half95(&parts)),
    ))
}

/// One side's calls: each part's count and its phase. `None` where a phase is missing.
fn side_parts<'p>(flow: &Flow, side: Side, phases: &'p [Phase]) -> Option<Vec<(f64, &'p Phase)>> {
    let mut parts = Vec::new();
    for seg in flow.segments.iter().filter(|s| s.side == side) {
        for p in &seg.parts {
            let id = PhaseId::handshake(&p.backend, &p.algorithm, p.operation);
            parts.push((p.count, crate::results::find_phase(phases, &id)?));
        }
    }
    Some(parts)
}

fn parts_mean(parts: &[(f64, &Phase)]) -> f64 {
    parts.iter().map(|(n, q)| n * q.stats.mean_ns).sum()
}

/// The t-interval's half-width of the sum formed in each process that every part ran in.
fn per_process_half95(parts: &[(f64, &Phase)]) -> Option<f64> {
    let (_, first) = parts.first()?;
    let ids = &first.process_ids;
    if ids.len() < 2
        || parts
            .iter()
            .any(|(_, q)| q.process_ids != *ids || q.processes.len() != ids.len())
    {
        return None;
    }
    let mut sums = vec![0.0; ids.len()];
    for (n, q) in parts {
        let xs: Vec<f64> = q.samples_ns.iter().map(|&x| x as f64).collect();
        for (sum, g) in sums.iter_mut().zip(stats::groups(&xs, &q.processes)?) {
            if g.is_empty() {
                return None;
            }
            *sum += n * stats::mean(g);
        }
    }
    stats::mean_half95(&sums).map(|(_, h)| h)
}

/// The parts' own half-widths (each phase's samples' t-interval of the mean) added up.
fn own_half95(parts: &[(f64, &Phase)]) -> Option<f64> {
    parts
        .iter()
        .map(|(n, q)| {
            let xs: Vec<f64> = q.samples_ns.iter().map(|&x| x as f64).collect();
            stats::mean_half95(&xs).map(|(_, h)| n * h)
        })
        .sum()
}

/// Round trips on loopback that a QUIC connection's server flight waits for the client beyond its
/// baseline's (`netmodel::quic_extra_round_trips`, from the bytes the connections recorded on the
/// wire): the server sends at most three times the bytes it has received until the client's
/// address is validated (RFC 9000 §8.1), and at most its initial window (RFC 9002 §7.2); a Retry
/// adds its own round trip. Both limits count bytes, not a path's segments, so loopback's MTU
/// does not lift them as it lifts TCP's window, and no phase holds them. Each is taken at the
/// baseline's echo: its median connection less its median time to a ready connection (the 32-byte
/// echo's round trip and the close, so it errs long by the close).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Waits {
    pub extra: i64,
    pub each_ns: f64,
}

impl Waits {
    pub fn ns(&self) -> f64 {
        self.extra as f64 * self.each_ns
    }
}

/// `s`'s waits beyond `b`'s, where both are QUIC connections with their evidence.
pub fn waits(s: &Scenario, b: &Scenario) -> Option<Waits> {
    let rt = |x: &Scenario| {
        x.evidence
            .quic
            .as_ref()
            .map(|q| i64::from(crate::netmodel::quic_extra_round_trips(q)))
    };
    let each_ns = b.median_ns - b.ready_median_ns;
    Some(Waits {
        extra: rt(s)? - rt(b)?,
        each_ns: if each_ns.is_finite() {
            each_ns.max(0.0)
        } else {
            0.0
        },
    })
}

/// What the composition predicts of `s`'s median connection less `b`'s, from their flows
/// (`flow_s`, `flow_b`) as their stack ran them (`as_run`): the shift of `b`'s connections along
/// the flows (`shift::median_shift`; the paths' difference where `b` has no connections
/// stored), plus QUIC's waits (`waits`), which come back beside it, plus what the bytes `s` adds
/// on the wire, and its waits beyond the echo's estimate, cost the stack itself (`bytes_term`,
/// from its size controls). The bytes' cost is the client's segment on the ServerHello's, where
/// the certificates are read: it counts there in turn, or hides beside a longer signing as that
/// segment's calls do (OpenSSL's ML-DSA flights, `timeline::as_run`).
pub fn predicted_delta(
    r: &Results,
    flows: (&Flow, &Flow),
    s: &Scenario,
    b: &Scenario,
) -> (f64, Option<Waits>) {
    let t = bytes_term(r, s, b);
    let in_segment = t.as_ref().map_or(0.0, BytesTerm::bytes_ns);
    let (calls, w) = calls_delta(r, flows, s, b, in_segment);
    (calls + t.map_or(0.0, |t| t.ns - in_segment), w)
}

/// `predicted_delta` without the bytes' own cost but `in_segment`, work added to `s`'s client
/// segment on the ServerHello: the calls along the flows and QUIC's waits. Where the flow has no
/// such segment (SSH), `in_segment` is added to the shift.
fn calls_delta(
    r: &Results,
    (flow_s, flow_b): (&Flow, &Flow),
    s: &Scenario,
    b: &Scenario,
    in_segment: f64,
) -> (f64, Option<Waits>) {
    use super::memo::at;
    let parts = [at(flow_s), at(flow_b), at(s), at(b), in_segment.to_bits()];
    super::memo::get("calls_delta", r, &parts, || {
        calls_delta_of(r, (flow_s, flow_b), s, b, in_segment)
    })
}

/// `calls_delta`, computed.
fn calls_delta_of(
    r: &Results,
    (flow_s, flow_b): (&Flow, &Flow),
    s: &Scenario,
    b: &Scenario,
    in_segment: f64,
) -> (f64, Option<Waits>) {
    let w = waits(s, b);
    let (mut ran_s, ran_b) = (as_run(r, flow_s, s), as_run(r, flow_b, b));
    let at = ran_s
        .flow
        .segments
        .iter()
        .position(|x| x.name == timeline::CLIENT_CHAIN_SEGMENT);
    let beside = match at {
        Some(k) => {
            ran_s.own_ns[k] += in_segment;
            0.0
        }
        None => in_segment,
    };
    let shift = crate::shift::median_shift(&ran_s, &ran_b, &r.phases, &b.totals_ns)
        .unwrap_or(ran_s.latency_ns() - ran_b.latency_ns());
    (shift + beside + w.map_or(0.0, |w| w.ns()), w)
}

/// Bytes both ways on the wire per connection, as the connections recorded them.
fn wire_bytes(s: &Scenario) -> f64 {
    s.client_to_server_bytes + s.server_to_client_bytes
}

/// Whether the scenario is a size control: its server's leaf padded (suites/auth.toml).
pub(crate) fn is_control(s: &Scenario) -> bool {
    s.auth.as_ref().is_some_and(|a| a.padding_bytes > 0)
}

/// One size control as measured: what is left of its real, paired difference beyond what its
/// calls and waits compose (`calls_delta`), with that difference's half-width, and the bytes and
/// QUIC waits it adds to its own baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Control {
    /// Its scenario ("X25519 + ECDSA-P256 padded").
    pub name: String,
    pub residual_ns: f64,
    pub half95_ns: Option<f64>,
    pub bytes: f64,
    pub waits: i64,
}

/// A rate and its 95% half-width.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub ns: f64,
    pub half95: Option<f64>,
}

/// A stack's own cost per byte on the wire, from its size controls: the baseline's calls with a
/// post-quantum chain's bytes, beside the classical group and the hybrid. What is left of a
/// control's difference beyond what its calls and waits compose is what those bytes cost the stack
/// itself (parsing, buffers, system calls, over QUIC its datagrams and their acknowledgements)
/// and any error of the waits' estimate (`Waits::each_ns`, the baseline's echo); over the bytes it
/// added (#37, the stack's own work as a term of its own, measured apart from the rows it is
/// added to). Where the two controls wait differently for the client (QUIC's amplification
/// budget), they separate the two: a cost per byte and one per wait beyond the estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct PerByte {
    pub per_byte: Rate,
    /// What a wait costs beyond `Waits::each_ns`, where the controls separate it.
    pub per_wait: Option<Rate>,
    /// The controls it comes from.
    pub controls: Vec<Control>,
    /// The two controls that separate the wait from the bytes, where two do.
    apart: Option<Apart>,
}

/// Two controls that wait a different number of times, and their system's determinant.
#[derive(Debug, Clone, PartialEq)]
struct Apart {
    x: Control,
    y: Control,
    det: f64,
}

impl Apart {
    /// `x` and `y` where their equations are independent: `det`, B_x W_y - B_y W_x, is not zero
    /// beside its terms (two controls whose bytes are in the ratio of their waits are one
    /// equation twice).
    fn of(x: &Control, y: &Control) -> Option<Apart> {
        let (tx, ty) = (x.bytes * y.waits as f64, y.bytes * x.waits as f64);
        let det = tx - ty;
        (det.abs() > 1e-6 * tx.abs().max(ty.abs())).then(|| Apart {
            x: x.clone(),
            y: y.clone(),
            det,
        })
    }

    /// The coefficients of `x`'s and `y`'s residuals in the cost of `bytes` and `waits` (Cramer's
    /// rule on R_x = b B_x + w W_x, R_y = b B_y + w W_y).
    fn coefficients(&self, bytes: f64, waits: f64) -> (f64, f64) {
        let (x, y) = (&self.x, &self.y);
        (
            (y.waits as f64 * bytes - y.bytes * waits) / self.det,
            (x.bytes * waits - x.waits as f64 * bytes) / self.det,
        )
    }

    /// The cost of `bytes` and `waits`: the residuals at their coefficients, its half-width theirs
    /// in quadrature (the two controls are measured apart), exactly.
    fn cost(&self, bytes: f64, waits: f64) -> Rate {
        let (ax, ay) = self.coefficients(bytes, waits);
        Rate {
            ns: ax * self.x.residual_ns + ay * self.y.residual_ns,
            half95: self
                .x
                .half95_ns
                .zip(self.y.half95_ns)
                .map(|(hx, hy)| (ax * hx).hypot(ay * hy)),
        }
    }
}

/// The stack's size controls in the run, each as measured: the plain full-handshake controls of
/// `s`'s stack and mode, each against its own baseline. A control's residual is taken with its
/// bytes' cost outside its flow: with ECDSA's short signing its client segment is on the path
/// (OpenSSL's overlap included), so all of that cost shows in its difference.
fn controls(r: &Results, s: &Scenario) -> Vec<Control> {
    let plain: Vec<&Scenario> = r
        .handshakes
        .iter()
        .flat_map(|h| &h.scenarios)
        .filter(|x| !x.instrumented && x.mode == s.mode)
        .collect();
    let pairing = super::handshake::DeltaPairing::of_run(r);
    plain
        .iter()
        .filter(|c| c.stack == s.stack && is_control(c))
        .filter_map(|&c| {
            let b = own_baseline(&plain, c)?;
            let (flow_c, flow_b) = (flow_of(r, c)?.1, flow_of(r, b)?.1);
            let (real, paired) = super::answer::real_delta(Some(c), Some(b), pairing);
            let (calls, w) = calls_delta(r, (flow_c, flow_b), c, b, 0.0);
            Some(Control {
                name: scenario_name(c),
                residual_ns: real? - calls,
                half95_ns: paired.map(|d| (d.hi95_ns - d.lo95_ns) / 2.0),
                bytes: wire_bytes(c) - wire_bytes(b),
                waits: w.map_or(0, |w| w.extra),
            })
        })
        .collect()
}

/// The per-byte cost of `s`'s stack from its size controls, if the run has any.
pub(crate) fn per_byte(r: &Results, s: &Scenario) -> Option<PerByte> {
    // The controls depend on the stack and mode alone: one scenario of each stands for all.
    let first = r
        .handshakes
        .iter()
        .flat_map(|h| &h.scenarios)
        .find(|x| x.stack == s.stack && x.mode == s.mode)?;
    super::memo::get("per_byte", r, &[super::memo::at(first)], || {
        PerByte::of(controls(r, s))
    })
}

impl PerByte {
    /// From the controls as measured. Two that wait a different number of times give a cost per
    /// byte and one per wait (`Apart`); otherwise the bytes take all: the controls' residuals over
    /// their bytes, pooled. `None` without a control that added bytes and left a finite residual.
    fn of(controls: Vec<Control>) -> Option<PerByte> {
        let controls: Vec<Control> = controls
            .into_iter()
            .filter(|c| c.bytes.is_finite() && c.bytes > 0.0 && c.residual_ns.is_finite())
            .collect();
        if controls.is_empty() {
            return None;
        }
        let apart = controls.iter().enumerate().find_map(|(i, x)| {
            controls[i + 1..]
                .iter()
                .filter(|y| y.waits != x.waits)
                .find_map(|y| Apart::of(x, y))
        });
        let (per_byte, per_wait) = match &apart {
            Some(a) => (a.cost(1.0, 0.0), Some(a.cost(0.0, 1.0))),
            None => {
                let bytes: f64 = controls.iter().map(|c| c.bytes).sum();
                let half = controls
                    .iter()
                    .map(|c| c.half95_ns.map(|h| h * h))
                    .sum::<Option<f64>>()
                    .map(f64::sqrt);
                let residual: f64 = controls.iter().map(|c| c.residual_ns).sum();
                (
                    Rate {
                        ns: residual / bytes,
                        half95: half.map(|h| h / bytes),
                    },
                    None,
                )
            }
        };
        Some(PerByte {
            per_byte,
            per_wait,
            controls,
            apart,
        })
    }

    /// What `bytes` more on the wire and `waits` more waits cost at these rates: where two
    /// controls separate the wait, their residuals at Cramer's coefficients (`Apart::cost`);
    /// else the pooled rate per byte, which counts no wait.
    fn times(&self, bytes: f64, waits: i64) -> BytesTerm {
        let cost = match &self.apart {
            Some(a) => a.cost(bytes, waits as f64),
            None => Rate {
                ns: self.per_byte.ns * bytes,
                half95: self.per_byte.half95.map(|h| h * bytes.abs()),
            },
        };
        BytesTerm {
            ns: cost.ns,
            half95_ns: cost.half95,
            bytes,
            waits,
            per_byte: self.clone(),
        }
    }
}

/// What some bytes on the wire, and over QUIC some waits, cost a stack at its rates, with the
/// half-width.
#[derive(Debug, Clone, PartialEq)]
pub struct BytesTerm {
    pub ns: f64,
    pub half95_ns: Option<f64>,
    /// The bytes, both ways on the wire per connection (negative where fewer), and the waits.
    pub bytes: f64,
    pub waits: i64,
    pub per_byte: PerByte,
}

impl BytesTerm {
    /// The bytes' part alone, at the cost per byte; the rest of `ns` is the waits'.
    pub fn bytes_ns(&self) -> f64 {
        self.per_byte.per_byte.ns * self.bytes
    }
}

/// A bytes term as a difference counts it: the bytes' part sits in the client's segment on the
/// ServerHello, where it may hide beside a longer signing (`predicted_delta`).
#[derive(Debug, Clone, PartialEq)]
pub struct BytesPart {
    pub term: BytesTerm,
    /// What the difference counts of `term.ns`.
    pub counted_ns: f64,
}

impl BytesPart {
    /// What hides beside the signing.
    pub fn hidden_ns(&self) -> f64 {
        self.term.ns - self.counted_ns
    }
}

/// "X25519 + ECDSA-P256 padded": a scenario as the composition names it, by its group and
/// authentication.
pub(crate) fn named(group: &str, auth: Option<&str>) -> String {
    match auth {
        Some(a) => format!("{group} + {a}"),
        None => group.to_string(),
    }
}

fn scenario_name(s: &Scenario) -> String {
    named(&s.suite, s.auth_name())
}

/// `s`'s own baseline (`Scenario::against`) among `plain`, where it is another scenario.
fn own_baseline<'a>(plain: &[&'a Scenario], s: &Scenario) -> Option<&'a Scenario> {
    let against = s.against.as_ref()?;
    plain
        .iter()
        .copied()
        .find(|x| x.is(against, &s.stack, false))
        .filter(|b| !std::ptr::eq(*b, s))
}

/// A composed difference's half-width with its bytes term's added in quadrature (they come from
/// different measurements); either alone where the other is unknown.
pub(crate) fn with_bytes_half(h: Option<f64>, t: Option<&BytesTerm>) -> Option<f64> {
    match (h, t.and_then(|t| t.half95_ns)) {
        (Some(a), Some(b)) => Some(a.hypot(b)),
        (a, b) => a.or(b),
    }
}

/// What the bytes `s` adds to `b`'s on the wire, and its waits beyond `b`'s, cost its stack at
/// its rates (`per_byte`). `None` for a control, whose difference measures them, and where the
/// run has no control for the stack (older files, russh).
pub fn bytes_term(r: &Results, s: &Scenario, b: &Scenario) -> Option<BytesTerm> {
    if is_control(s) {
        return None;
    }
    let waits = waits(s, b).map_or(0, |w| w.extra);
    Some(per_byte(r, s)?.times(wire_bytes(s) - wire_bytes(b), waits))
}

/// The same scenario timed in situ (its twin; `s` itself where it was), in the same mode.
pub(crate) fn twin<'a>(r: &'a Results, s: &Scenario) -> Option<&'a Scenario> {
    let same = crate::results::Against {
        suite: s.suite.clone(),
        auth: s.auth_name().map(str::to_string),
    };
    r.handshakes
        .iter()
        .flat_map(|h| h.scenarios.iter().chain(&h.other_modes))
        .find(|t| t.mode == s.mode && t.is(&same, &s.stack, true))
}

/// The time line of `s`'s handshakes: its twin's timed in situ.
pub(crate) fn time_line(r: &Results, s: &Scenario) -> Option<timeline::TimeLine> {
    timeline::of(twin(r, s)?.insitu.as_ref()?)
}

/// `flow` as `s`'s stack ran it (`timeline::as_run`): its overlap as `s`'s time line shows it,
/// and the stack's own work in the client's segment on the ServerHello as its root baseline's
/// time line measured it beyond that baseline's flow (#37: the stack's own work, measured once
/// per stack from its classical baseline).
pub fn as_run(r: &Results, flow: &Flow, s: &Scenario) -> Ran {
    use super::memo::at;
    super::memo::get("as_run", r, &[at(flow), at(s)], || as_run_of(r, flow, s))
}

/// `as_run`, computed.
fn as_run_of(r: &Results, flow: &Flow, s: &Scenario) -> Ran {
    let plain: Vec<&Scenario> = r
        .handshakes
        .iter()
        .flat_map(|h| &h.scenarios)
        .filter(|x| !x.instrumented && x.mode.is_full())
        .collect();
    let own = root(&plain, s).and_then(|b| {
        let (_, bf) = flow_of(r, b)?;
        timeline::own_in_segment(&time_line(r, b)?, bf)
    });
    timeline::as_run(flow, time_line(r, s).as_ref(), own)
}

/// The composed full-handshake suite of a scenario and its flow. TLS names its full handshakes
/// by group and authentication, SSH its by the method (suites/ssh-full.toml).
pub(crate) fn flow_of<'a>(r: &'a Results, s: &Scenario) -> Option<(String, &'a Flow)> {
    [
        crate::auth::full_suite(&s.suite, s.auth_name(), r.baseline_auth().unwrap_or("")),
        format!("{} full key exchange", s.suite),
    ]
    .into_iter()
    .find_map(|name| {
        let suite: &SuiteResult = r.suite(&name, &s.composed_stack)?;
        Some((name, suite.flow.as_ref()?))
    })
}

/// Server and client, nanoseconds.
pub type Sides = (f64, f64);

/// A scenario's own CPU per handshake, server and client: its loopback connections' CPU per
/// handshake less its flow's calls at their means (`side_mean`). Parsing, buffers, system calls,
/// wake-ups and, over QUIC, each datagram's packet protection and bookkeeping; `None` where the
/// connections' CPU was not recorded.
pub(crate) fn own_cpu(s: &Scenario, flow: &Flow, phases: &[Phase]) -> Option<Sides> {
    let ok = |x: f64| (x.is_finite() && x > 0.0).then_some(x);
    // The means alone: `side_mean`'s half-widths are not wanted here.
    let mean = |side| side_parts(flow, side, phases).map(|p| parts_mean(&p));
    Some((
        ok(s.server_cpu_ns)? - mean(Side::Server)?,
        ok(s.client_cpu_ns)? - mean(Side::Client)?,
    ))
}

/// A stack's own CPU per handshake on one side, from its baseline, and its half-width.
pub type Own = (f64, Option<f64>);

/// The stack's own work along a handshake's path, from its baseline: the loopback median less the
/// composed critical path, with the half-width of both in quadrature.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OwnWork {
    pub(crate) ns: f64,
    pub(crate) half95_ns: Option<f64>,
}

/// A row's difference against its own baseline and what it is made of (`Run::delta`).
struct Delta {
    versus: Versus,
    /// QUIC's waits beyond the baseline's (`waits`).
    waits: Option<Waits>,
    bytes: Option<BytesPart>,
    /// The stack's own CPU per handshake beyond the baseline's (`own_cpu`).
    own_cpu_delta: Option<Sides>,
    /// Where both were timed in situ, what the calls' state in the handshakes moves (`CallsState`).
    calls_state: Option<CallsState>,
}

/// How far the calls' own state in the handshakes, timed in situ, moves a difference beyond what
/// the flows compose them at: all calls and the one that moves it most (`answer::calls_excess`),
/// each against the difference's own baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct CallsState {
    pub total_ns: f64,
    pub largest: Option<super::answer::Gap>,
}

/// One real loopback scenario against its composition.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub stack: String,
    pub composed_stack: String,
    pub group: String,
    pub auth: Option<String>,
    /// The composed suite ("X25519MLKEM768 + ML-DSA-65 full handshake").
    pub suite: String,
    /// Whether this is the stack's baseline, whose own work the other rows add.
    pub baseline: bool,
    /// Composed critical path alone.
    pub path_ns: f64,
    /// The stack's own work along the path, from its baseline.
    pub(crate) own: Option<OwnWork>,
    /// The baseline's median plus what the composition predicts beyond it (`predicted_delta`
    /// against the root baseline), against the loopback median (`None` without a baseline).
    pub latency: Option<Versus>,
    /// Against the scenario's own baseline (`Scenario::against`: an ML-DSA chain against its
    /// group with the baseline chain, a group against the classical one), what the composition
    /// predicts of the difference (`predicted_delta`, with the answer table's half-width, `compose::delta_half95_ns` over the calls
    /// the flows compose) beside the real one: the paired
    /// difference `pqprof handshake` stored, with its interval (`answer::real_delta`). `None` for
    /// a baseline, or where either is missing.
    pub delta: Option<Versus>,
    /// QUIC's waits the delta adds beyond its baseline's (`waits`).
    pub waits: Option<Waits>,
    /// What the bytes the delta adds cost the stack itself (`bytes_term`), and how much of it
    /// the delta counts.
    pub bytes: Option<BytesPart>,
    /// Where this is one of the stack's size controls, whose delta measures its cost per byte
    /// (`per_byte`) and so is composed without it: that control as measured.
    pub control: Option<Control>,
    /// The stack's own CPU per handshake, server and client, beyond the delta's baseline's
    /// (`own_cpu`): what the stack does beyond its calls that grows with the change.
    pub own_cpu_delta: Option<Sides>,
    /// Against the delta's own baseline, what the calls' state in the handshakes timed in situ
    /// moves (`CallsState`); `None` where the stack or either scenario was not timed in situ.
    pub calls_state: Option<CallsState>,
    /// Composed CPU per handshake against the in-memory handshakes' (capacity) mean: each side's
    /// calls at their means plus the stack's own CPU per handshake there (`own_memory`).
    pub server_in_memory: Option<Versus>,
    pub(crate) client_in_memory: Option<Versus>,
    /// The stack's own CPU per handshake in memory, server and client, taken once per stack from
    /// its baseline (as the latency's own work): the baseline's in-memory CPU less its calls at
    /// their means, with the in-memory mean's half-width. The baseline therefore reads its own
    /// CPU, and every other row tests whether the calls predict what it adds.
    pub own_memory: Option<(Own, Own)>,
    /// Composed CPU per handshake against the loopback handshakes' CPU per handshake (no interval:
    /// one figure over all of a scenario's connections).
    pub server_loopback: Versus,
    pub client_loopback: Versus,
    /// Against the baseline, the call whose cost in situ beyond what the path counts it at differs
    /// most (`answer::largest_gap`), where both scenarios were also timed in situ.
    pub(crate) gap: Option<super::answer::Gap>,
    /// The scenario's network cells at no loss, each RTT: the p50 against its prediction from
    /// phases.
    pub network: Vec<AtRtt>,
}

/// A network cell's p50 at no loss beside the model's two predictions of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AtRtt {
    pub(crate) rtt_ns: f64,
    pub(crate) measured_ns: f64,
    /// The network model's p50 (`netmodel`): the compute measured through the router at no delay,
    /// plus the round trips at the link's RTT.
    pub model_ns: f64,
    /// The same from the phases and the stack's baseline alone: the baseline cell's zero point
    /// (its handshake through the router at no delay) plus what the composition predicts the
    /// scenario adds (`predicted_delta`), in place of this cell's own zero point; the baseline's
    /// row reads the model.
    pub phases_ns: f64,
}

/// Every plain full-handshake scenario of a run whose composed suite has a flow, stacks in the
/// run's order, each against its composition. Empty without real handshakes.
pub fn rows(r: &Results) -> Vec<Row> {
    super::memo::within(|| super::memo::get("rows", r, &[], || rows_of(r)))
}

/// `rows`, computed.
fn rows_of(r: &Results) -> Vec<Row> {
    let Some(h) = &r.handshakes else {
        return Vec::new();
    };
    let run = Run {
        r,
        plain: h
            .scenarios
            .iter()
            .filter(|s| !s.instrumented && s.mode.is_full())
            .collect(),
    };
    run.plain.iter().filter_map(|s| run.row(s)).collect()
}

/// What a row is looked up in.
struct Run<'a> {
    r: &'a Results,
    plain: Vec<&'a Scenario>,
}

impl<'a> Run<'a> {
    /// The scenario's own baseline (`Scenario::against`), where it is another plain scenario.
    fn against(&self, s: &Scenario) -> Option<&'a Scenario> {
        own_baseline(&self.plain, s)
    }

    /// What the composition predicts of the difference against the scenario's own baseline
    /// (`predicted_delta`) beside the real one, and what it is made of.
    fn delta(&self, s: &Scenario, (name, flow): (&str, &Flow)) -> Option<Delta> {
        let b = self.against(s)?;
        let (b_name, bf) = flow_of(self.r, b)?;
        let pairing = super::handshake::DeltaPairing::of_run(self.r);
        let (real, paired) = super::answer::real_delta(Some(s), Some(b), pairing);
        let (sa, sb) = (
            self.r.suite(name, &s.composed_stack)?,
            self.r.suite(&b_name, &b.composed_stack)?,
        );
        let (predicted, waits) = predicted_delta(self.r, (flow, bf), s, b);
        let bytes = bytes_term(self.r, s, b);
        let calls_half =
            crate::compose::delta_half95_ns(&sa.phases, &sb.phases, &self.r.phases, true);
        let v = Versus {
            composed_ns: predicted,
            composed_half95_ns: with_bytes_half(calls_half, bytes.as_ref()),
            real_ns: real?,
            real_ci95_ns: paired.map(|d| (d.lo95_ns, d.hi95_ns)),
        };
        let own_cpu_delta = own_cpu(s, flow, &self.r.phases)
            .zip(own_cpu(b, bf, &self.r.phases))
            .map(|((ss, sc), (bs, bc))| (ss - bs, sc - bc));
        // What the bytes' term adds to the difference as the path counts it.
        let bytes = bytes.map(|term| BytesPart {
            counted_ns: predicted - calls_delta(self.r, (flow, bf), s, b, 0.0).0,
            term,
        });
        let calls_state = twin(self.r, s).zip(twin(self.r, b)).and_then(|(ts, tb)| {
            let (total_ns, largest) = super::answer::calls_excess(self.r, ts, tb)?;
            Some(CallsState { total_ns, largest })
        });
        Some(Delta {
            versus: v,
            waits,
            bytes,
            own_cpu_delta,
            calls_state,
        })
    }

    fn row(&self, s: &'a Scenario) -> Option<Row> {
        let (name, flow) = flow_of(self.r, s)?;
        let server = side_mean(flow, Side::Server, &self.r.phases)?;
        let client = side_mean(flow, Side::Client, &self.r.phases)?;
        let base = root(&self.plain, s);
        let base_flow = base.and_then(|b| Some((b, flow_of(self.r, b)?.1)));
        // The paths as the stack ran them: the own work along them is what they leave.
        let own = base_flow
            .map(|(b, bf)| own_work(b, as_run(self.r, bf, b).latency_ns(), bf.latency_half95_ns));
        // The baseline's median plus what the composition predicts beyond it (`predicted_delta`):
        // the path plus the own work where every call is steady and no flight waits longer.
        let predicted = base_flow.map(|(b, bf)| predicted_delta(self.r, (flow, bf), s, b).0);
        let root_bytes = base.and_then(|b| bytes_term(self.r, s, b));
        let latency = own
            .zip(base_flow)
            .zip(predicted)
            .map(|((o, (b, _)), d)| Versus {
                composed_ns: b.median_ns + d,
                composed_half95_ns: with_bytes_half(
                    o.half95_ns.map(|h| h.hypot(flow.latency_half95_ns)),
                    root_bytes.as_ref(),
                ),
                real_ns: s.median_ns,
                real_ci95_ns: s.median_ci95_ns,
            });
        let d = self.delta(s, (&name, flow));
        let (delta, waits, own_cpu_delta) = d.as_ref().map_or((None, None, None), |d| {
            (Some(d.versus), d.waits, d.own_cpu_delta)
        });
        let calls_state = d.as_ref().and_then(|d| d.calls_state.clone());
        let bytes = d.and_then(|d| d.bytes);
        let memory = in_memory(self.r, s);
        let versus = |(c, h): (f64, Option<f64>), (m, ci): (f64, Option<(f64, f64)>)| Versus {
            composed_ns: c,
            composed_half95_ns: h,
            real_ns: m,
            real_ci95_ns: ci,
        };
        let own_memory = base_flow.and_then(|(b, bf)| own_in_memory(self.r, b, bf));
        // A side's calls plus the stack's own CPU there: the half-widths in quadrature.
        let plus = |(c, h): (f64, Option<f64>), o: Option<Own>| match o {
            Some((o, oh)) => (c + o, h.zip(oh).map(|(h, oh)| h.hypot(oh)).or(h)),
            None => (c, h),
        };
        Some(Row {
            stack: s.stack.name().to_string(),
            composed_stack: s.composed_stack.clone(),
            group: s.suite.clone(),
            auth: s.auth_name().map(str::to_string),
            suite: name,
            baseline: base.is_some_and(|b| std::ptr::eq(b, s)),
            path_ns: as_run(self.r, flow, s).latency_ns(),
            own,
            latency,
            delta,
            waits,
            bytes,
            control: is_control(s)
                .then(|| per_byte(self.r, s))
                .flatten()
                .and_then(|p| p.controls.into_iter().find(|c| c.name == scenario_name(s))),
            own_cpu_delta,
            calls_state,
            server_in_memory: memory.map(|m| versus(plus(server, own_memory.map(|o| o.0)), m.0)),
            client_in_memory: memory.map(|m| versus(plus(client, own_memory.map(|o| o.1)), m.1)),
            own_memory,
            // One figure over all of a scenario's connections: no interval.
            server_loopback: versus(server, (s.server_cpu_ns, None)),
            client_loopback: versus(client, (s.client_cpu_ns, None)),
            gap: base.filter(|b| !std::ptr::eq(*b, s)).and_then(|b| {
                super::answer::largest_gap(self.r, twin(self.r, s)?, twin(self.r, b)?)
            }),
            network: base_flow
                .zip(predicted)
                .map_or(Vec::new(), |((b, _), d)| at_rtts(self.r, (s, b), d)),
        })
    }
}

/// The scenario's cells at no loss and a delay, in the grid's order, each with the model's p50
/// and the same from phases: the model's network part for this cell (its p50 less its zero
/// point) on top of the baseline cell's zero point plus `predicted` (what the composition predicts
/// this scenario adds to the baseline, `predicted_delta`). Cells without their baseline cell at the same point are left out.
fn at_rtts(r: &Results, (s, b): (&Scenario, &Scenario), predicted: f64) -> Vec<AtRtt> {
    let Some(n) = &r.network else {
        return Vec::new();
    };
    let baseline_auth = r.baseline_auth();
    fn of<'p>(
        p: &'p crate::results::Point,
        x: &Scenario,
        baseline_auth: Option<&str>,
    ) -> Option<&'p crate::results::Cell> {
        p.cells.iter().find(|c| {
            c.stack == x.stack
                && c.group == x.suite
                && c.auth.as_deref().or(baseline_auth) == x.auth_name().or(baseline_auth)
        })
    }
    n.points
        .iter()
        .filter(|p| p.loss_pct == 0.0 && p.rtt_ns > 0.0)
        .filter_map(|p| {
            let (c, cb) = (of(p, s, baseline_auth)?, of(p, b, baseline_auth)?);
            // At no loss the model is one time: its p50 where it has a loss distribution (TCP),
            // else its expected time (QUIC, which has none yet), which is then the same figure.
            let model = c.model.p50_ns.unwrap_or(c.model.expected_ns);
            Some(AtRtt {
                rtt_ns: p.rtt_ns,
                measured_ns: c.ready_median_ns(n)?,
                model_ns: model,
                phases_ns: model - c.model.zero_ns + cb.model.zero_ns + predicted,
            })
        })
        .collect()
}

/// The stack's own CPU per handshake in memory, each side, from its baseline `b` (flow `bf`): the
/// in-memory handshakes' mean less the side's calls at their means, with the mean's half-width.
fn own_in_memory(r: &Results, b: &Scenario, bf: &Flow) -> Option<(Own, Own)> {
    let ((ms, ms_ci), (mc, mc_ci)) = in_memory(r, b)?;
    let half = |ci: Option<(f64, f64)>| ci.map(|(lo, hi)| (hi - lo) / 2.0);
    let calls = |side| side_mean(bf, side, &r.phases).map(|(m, _)| m);
    Some((
        (ms - calls(Side::Server)?, half(ms_ci)),
        (mc - calls(Side::Client)?, half(mc_ci)),
    ))
}

/// The baseline's own work along its composed path (`path_ns`, with its half-width).
pub(crate) fn own_work(baseline: &Scenario, path_ns: f64, path_half95_ns: f64) -> OwnWork {
    let half = baseline
        .median_ci95_ns
        .map(|(lo, hi)| ((hi - lo) / 2.0).hypot(path_half95_ns));
    OwnWork {
        ns: baseline.median_ns - path_ns,
        half95_ns: half,
    }
}

/// The scenario at the end of `s`'s chain of baselines (`Scenario::against`), on the same stack:
/// an ML-DSA chain is against its group with ECDSA, which is against the classical group. `None`
/// where a link is missing; `s` itself where it is against nothing or itself.
pub(crate) fn root<'a>(plain: &[&'a Scenario], s: &'a Scenario) -> Option<&'a Scenario> {
    let mut at = s;
    // Three links at most exist (chain, group, classical); a loop in a bad file ends here too.
    for _ in 0..8 {
        let Some(a) = &at.against else {
            return Some(at);
        };
        if a.suite == at.suite && a.auth.as_deref() == at.auth_name() {
            return Some(at);
        }
        at = plain.iter().copied().find(|x| x.is(a, &at.stack, false))?;
    }
    None
}

/// The in-memory handshakes' mean server and client time per handshake, each with the t-interval
/// of its mean: the capacity row of the same stack, group and authentication.
fn in_memory(r: &Results, s: &Scenario) -> Option<MeanPair> {
    let c = r.capacity.as_ref()?;
    let baseline_auth = r.baseline_auth();
    let m = c.in_memory.iter().find(|m| {
        m.stack == s.stack
            && m.group == s.suite
            && m.auth.as_deref().or(baseline_auth) == s.auth_name().or(baseline_auth)
    })?;
    let mean = |xs: &[u64]| -> Option<(f64, Option<(f64, f64)>)> {
        let xs: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
        let (mean, h) = stats::mean_half95(&xs)?;
        Some((mean, Some((mean - h, mean + h))))
    };
    Some((mean(&m.server_ns)?, mean(&m.client_ns)?))
}

type MeanPair = ((f64, Option<(f64, f64)>), (f64, Option<(f64, f64)>));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{FlowPart, Operation, Segment};

    fn phase(op: Operation, samples: Vec<u64>, processes: Vec<usize>) -> Phase {
        let ids: Vec<usize> = (0..processes.len()).collect();
        let mut p = crate::figures::measured_phase(
            PhaseId::handshake("b", "A", op),
            samples,
            crate::figures::Measured::bare(),
        );
        p.processes = processes;
        p.process_ids = ids;
        p
    }

    fn flow(parts: &[(Side, Operation, f64)]) -> Flow {
        Flow {
            segments: parts
                .iter()
                .map(|&(side, operation, count)| Segment {
                    name: format!("{side} {operation}"),
                    side,
                    parts: vec![FlowPart {
                        backend: "b".into(),
                        algorithm: "A".into(),
                        operation,
                        count,
                    }],
                    median_ns: 0.0,
                })
                .collect(),
            overlap: Vec::new(),
            client_ns: 0.0,
            server_ns: 0.0,
            latency_ns: 100.0,
            client_half95_ns: 0.0,
            server_half95_ns: 0.0,
            latency_half95_ns: 3.0,
        }
    }

    #[test]
    fn a_side_sums_its_calls_at_the_means_and_its_interval_is_over_the_processes_sums() {
        // Two processes. Signing: 100, 200 | 300 (means 150 and 300, pooled mean 200);
        // verifying: 10 | 20, 20 (means 10 and 20, pooled 50 / 3). The server signs once; the
        // client verifies twice.
        let phases = vec![
            phase(Operation::SigSign, vec![100, 200, 300], vec![2, 1]),
            phase(Operation::SigVerify, vec![10, 20, 20], vec![1, 2]),
        ];
        let f = flow(&[
            (Side::Server, Operation::SigSign, 1.0),
            (Side::Client, Operation::SigVerify, 2.0),
        ]);
        let (server, h) = side_mean(&f, Side::Server, &phases).unwrap();
        assert_eq!(server, 200.0);
        // The sums per process are 150 and 300: mean 225, sd 106.07, t(1) = 12.706, so the
        // half-width is 12.706 x 106.066 / sqrt(2) = 952.95.
        assert!((h.unwrap() - 952.95).abs() < 0.1, "{h:?}");
        let (client, _) = side_mean(&f, Side::Client, &phases).unwrap();
        assert!((client - 100.0 / 3.0).abs() < 1e-9);
        // A phase missing: no figure.
        assert!(side_mean(&f, Side::Server, &phases[1..]).is_none());
    }

    #[test]
    fn phases_from_different_processes_add_their_own_half_widths() {
        // One process each: the per-process sum cannot be formed. Samples 10, 20, 30: mean 20,
        // sd 10, t(2) = 4.303, half 4.303 x 10 / sqrt(3) = 24.84; twice over for two calls.
        let phases = vec![phase(Operation::SigVerify, vec![10, 20, 30], vec![3])];
        let f = flow(&[(Side::Client, Operation::SigVerify, 2.0)]);
        let (mean, h) = side_mean(&f, Side::Client, &phases).unwrap();
        assert_eq!(mean, 40.0);
        assert!((h.unwrap() - 49.69).abs() < 0.01, "{h:?}");
    }

    #[test]
    fn a_ratios_bounds_set_each_end_against_the_opposite_end() {
        let v = Versus {
            composed_ns: 90.0,
            composed_half95_ns: Some(10.0),
            real_ns: 100.0,
            real_ci95_ns: Some((80.0, 125.0)),
        };
        assert_eq!(v.ratio(), 0.9);
        assert_eq!(v.ratio_ci95(), Some((80.0 / 125.0, 100.0 / 80.0)));
        assert!(v.within(10.0));
        assert!(!v.within(9.9));
        let none = Versus {
            real_ci95_ns: None,
            ..v
        };
        assert_eq!(none.ratio_ci95(), None);
    }

    #[test]
    fn a_difference_is_held_to_ten_percent_or_its_floor_and_to_the_real_interval() {
        // Composed +93.6 µs against a real +101.5 µs (88.0 to 118.0): 7.9 µs off, within the
        // 20 µs floor, not within 5% of 101.5 (5.1 µs), inside the real interval.
        let v = Versus {
            composed_ns: 93_600.0,
            composed_half95_ns: Some(3_000.0),
            real_ns: 101_500.0,
            real_ci95_ns: Some((88_000.0, 118_000.0)),
        };
        assert!(v.delta_within(10.0, 20_000.0));
        assert!(!v.delta_within(5.0, 0.0));
        assert!(v.delta_within(7.8, 0.0)); // 7.9 / 101.5 = 7.78%
        assert!(v.inside_real_ci95());
        // +552.1 against +479.4 (455.0 to 505.0): 72.7 µs off, 15% of it, outside the interval.
        let off = Versus {
            composed_ns: 552_100.0,
            real_ns: 479_400.0,
            real_ci95_ns: Some((455_000.0, 505_000.0)),
            ..v
        };
        assert!(!off.delta_within(10.0, 20_000.0));
        assert!(!off.inside_real_ci95());
        // A difference near zero is held to the floor: -5.2 against +27.4 is 32.6 µs off.
        let small = Versus {
            composed_ns: -5_200.0,
            real_ns: 27_400.0,
            real_ci95_ns: None,
            ..v
        };
        assert!(!small.delta_within(10.0, 20_000.0));
        assert!(small.delta_within(10.0, 33_000.0));
        assert!(!small.inside_real_ci95());
    }

    fn control(residual_ns: f64, half95_ns: f64, bytes: f64, waits: i64) -> Control {
        Control {
            name: format!("c{waits}"),
            residual_ns,
            half95_ns: Some(half95_ns),
            bytes,
            waits,
        }
    }

    #[test]
    fn the_cost_per_byte_is_the_controls_difference_beyond_its_calls_over_its_bytes() {
        // A control that adds 13,482 B leaves -8.3 µs beyond its calls (its paired difference
        // ±3.9 µs): -0.6156 ns a byte, ±3.9 µs / 13,482 B = 0.2893 ns.
        let p = PerByte::of(vec![control(-8_300.0, 3_900.0, 13_482.0, 0)]).unwrap();
        assert!((p.per_byte.ns + 0.615_635).abs() < 1e-6, "{p:?}");
        assert!(
            (p.per_byte.half95.unwrap() - 0.289_275).abs() < 1e-6,
            "{p:?}"
        );
        assert_eq!(p.per_wait, None);
        // A row that adds 9,540 B: -5.873 µs ± 2.760 µs, all of it the bytes'; one that sends
        // 1,000 B fewer gains what they cost, ±289.3 ns either way; a pooled rate counts no wait.
        let t = p.times(9_540.0, 1);
        assert!((t.ns + 5_873.1).abs() < 0.1, "{t:?}");
        assert!((t.half95_ns.unwrap() - 2_759.7).abs() < 0.1, "{t:?}");
        assert!((t.bytes_ns() - t.ns).abs() < 1e-9);
        let fewer = p.times(-1_000.0, 0);
        assert!((fewer.ns - 615.6).abs() < 0.1, "{fewer:?}");
        assert!((fewer.half95_ns.unwrap() - 289.3).abs() < 0.1, "{fewer:?}");
        // Two controls that wait alike pool: +3.7 µs over 26,982 B = 0.13713 ns, the
        // half-widths 3.9 and 5.0 µs in quadrature, 6.341 µs, over the same bytes: 0.23501 ns.
        let p = PerByte::of(vec![
            control(-8_300.0, 3_900.0, 13_482.0, 0),
            control(12_000.0, 5_000.0, 13_500.0, 0),
        ])
        .unwrap();
        assert!((p.per_byte.ns - 0.137_128).abs() < 1e-6, "{p:?}");
        assert!(
            (p.per_byte.half95.unwrap() - 0.235_014).abs() < 1e-6,
            "{p:?}"
        );
        // Without a half-width for one of them, none for the rate.
        let mut blind = control(12_000.0, 5_000.0, 13_500.0, 0);
        blind.half95_ns = None;
        let p = PerByte::of(vec![control(-8_300.0, 3_900.0, 13_482.0, 0), blind]).unwrap();
        assert_eq!(p.per_byte.half95, None);
        // A control that moved no bytes, or fewer, or left no finite residual, measures nothing.
        assert!(PerByte::of(vec![control(26_700.0, 1.0, 0.0, 0)]).is_none());
        assert!(PerByte::of(vec![control(26_700.0, 1.0, -5.0, 0)]).is_none());
        assert!(PerByte::of(vec![control(f64::NAN, 1.0, 13_482.0, 0)]).is_none());
        assert!(PerByte::of(Vec::new()).is_none());
    }

    #[test]
    fn two_controls_that_wait_differently_separate_the_wait_from_the_bytes() {
        // x: 14,300 B and 2 waits leave -17.1 µs (±13.0); y: 14,200 B and 1 wait leave +5.0 µs
        // (±10.0). det = 14,300 x 1 - 14,200 x 2 = -14,100; per byte (-17,100 x 1 - 5,000 x 2)
        // / -14,100 = 1.92199 ns; per wait (5,000 x 14,300 + 17,100 x 14,200) / -14,100 =
        // -22,292.2 ns; each control is held exactly.
        let p = PerByte::of(vec![
            control(-17_100.0, 13_000.0, 14_300.0, 2),
            control(5_000.0, 10_000.0, 14_200.0, 1),
        ])
        .unwrap();
        assert!((p.per_byte.ns - 1.921_986).abs() < 1e-6, "{p:?}");
        let w = p.per_wait.unwrap();
        assert!((w.ns + 22_292.199).abs() < 1e-3, "{w:?}");
        // Half-widths: hypot(13,000 x 1, 10,000 x 2) / 14,100 = 1.69175 ns a byte;
        // hypot(10,000 x 14,300, 13,000 x 14,200) / 14,100 = 16,560.9 ns a wait.
        assert!((p.per_byte.half95.unwrap() - 1.691_753).abs() < 1e-6);
        assert!((w.half95.unwrap() - 16_560.877).abs() < 1e-3);
        let x = p.times(14_300.0, 2);
        assert!((x.ns + 17_100.0).abs() < 1e-6 && (x.half95_ns.unwrap() - 13_000.0).abs() < 1e-6);
        // A row of 10,100 B and 1 wait: 0.29078 x -17,100 + 0.41844 x 5,000 = -2,880.1 ns, its
        // half-width hypot(0.29078 x 13,000, 0.41844 x 10,000) = 5,639.0 ns, not the 23.8 µs the
        // two rates' half-widths would give apart; of it, the bytes' 1.92199 x 10,100 = 19,412.1
        // ns and the wait's -22,292.2.
        let t = p.times(10_100.0, 1);
        assert!((t.ns + 2_880.14).abs() < 0.01, "{t:?}");
        assert!((t.half95_ns.unwrap() - 5_639.03).abs() < 0.01, "{t:?}");
        assert!((t.bytes_ns() - 19_412.06).abs() < 0.01, "{t:?}");
        // Two controls whose bytes are in the ratio of their waits are one equation twice: they
        // pool, (-17,100 + 5,000) / (28,400 + 14,200) = -0.28404 ns a byte, and no wait.
        let p = PerByte::of(vec![
            control(-17_100.0, 13_000.0, 28_400.0, 2),
            control(5_000.0, 10_000.0, 14_200.0, 1),
        ])
        .unwrap();
        assert_eq!(p.per_wait, None);
        assert!((p.per_byte.ns + 0.284_038).abs() < 1e-6, "{p:?}");
    }

    #[test]
    fn own_work_is_the_baselines_median_less_its_path() {
        let f = flow(&[]);
        let s: Scenario = serde_json::from_value(serde_json::json!({
            "protocol": "tls13", "suite": "X25519", "stack": "rustls",
            "evidence": {"version": "TLSv1_3", "group": "X25519", "cipher": "", "cert_key": "",
                         "resumed": false, "client_share": null, "server_share": null},
            "median_ns": 700.0, "p95_ns": 900.0, "ready_median_ns": 0.0,
            "sample_medians_ns": [], "rsd_pct": 0.0, "median_ci95_ns": [692.0, 708.0],
            "client_to_server_bytes": 0.0, "server_to_client_bytes": 0.0,
            "declared_wire_bytes": null, "client_cpu_ns": 0.0, "server_cpu_ns": 0.0,
            "client_mem": {"rust_allocs": 0.0, "rust_bytes": 0.0, "c_allocs": 0.0, "c_bytes": 0.0},
            "server_mem": {"rust_allocs": 0.0, "rust_bytes": 0.0, "c_allocs": 0.0, "c_bytes": 0.0},
            "vs_baseline_ratio": null, "measured_delta_ns": null, "composed_delta_ns": null
        }))
        .unwrap();
        let o = own_work(&s, f.latency_ns, f.latency_half95_ns);
        assert_eq!(o.ns, 600.0);
        // Half-widths 8 (the median's) and 3 (the path's): sqrt(64 + 9).
        assert!((o.half95_ns.unwrap() - 73f64.sqrt()).abs() < 1e-12);
        assert!(std::ptr::eq(root(&[&s], &s).unwrap(), &s));
    }
}
