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
//!   other scenario tests whether the phases predict what it adds.

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
/// stored), plus QUIC's waits (`waits`), which come back beside it.
pub fn predicted_delta(
    r: &Results,
    (flow_s, flow_b): (&Flow, &Flow),
    s: &Scenario,
    b: &Scenario,
) -> (f64, Option<Waits>) {
    let w = waits(s, b);
    let (ran_s, ran_b) = (as_run(r, flow_s, s), as_run(r, flow_b, b));
    let shift = crate::shift::median_shift(&ran_s, &ran_b, &r.phases, &b.totals_ns)
        .unwrap_or(ran_s.latency_ns() - ran_b.latency_ns());
    (shift + w.map_or(0.0, |w| w.ns()), w)
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
    /// The stack's own CPU per handshake, server and client, beyond the delta's baseline's
    /// (`own_cpu`): what the stack does beyond its calls that grows with the change.
    pub own_cpu_delta: Option<Sides>,
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
        let against = s.against.as_ref()?;
        self.plain
            .iter()
            .copied()
            .find(|x| x.is(against, &s.stack, false))
            .filter(|b| !std::ptr::eq(*b, s))
    }

    /// What the composition predicts of the difference against the scenario's own baseline
    /// (`predicted_delta`) beside the real one, the waits it holds, and the stack's own CPU per
    /// handshake beyond the baseline's (`own_cpu`).
    fn delta(
        &self,
        s: &Scenario,
        (name, flow): (&str, &Flow),
    ) -> Option<(Versus, Option<Waits>, Option<Sides>)> {
        let b = self.against(s)?;
        let (b_name, bf) = flow_of(self.r, b)?;
        let pairing = super::handshake::DeltaPairing::of_run(self.r);
        let (real, paired) = super::answer::real_delta(Some(s), Some(b), pairing);
        let (sa, sb) = (
            self.r.suite(name, &s.composed_stack)?,
            self.r.suite(&b_name, &b.composed_stack)?,
        );
        let (predicted, waits) = predicted_delta(self.r, (flow, bf), s, b);
        let v = Versus {
            composed_ns: predicted,
            composed_half95_ns: crate::compose::delta_half95_ns(
                &sa.phases,
                &sb.phases,
                &self.r.phases,
                true,
            ),
            real_ns: real?,
            real_ci95_ns: paired.map(|d| (d.lo95_ns, d.hi95_ns)),
        };
        let own = own_cpu(s, flow, &self.r.phases)
            .zip(own_cpu(b, bf, &self.r.phases))
            .map(|((ss, sc), (bs, bc))| (ss - bs, sc - bc));
        Some((v, waits, own))
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
        let latency = own
            .zip(base_flow)
            .zip(predicted)
            .map(|((o, (b, _)), d)| Versus {
                composed_ns: b.median_ns + d,
                composed_half95_ns: o.half95_ns.map(|h| h.hypot(flow.latency_half95_ns)),
                real_ns: s.median_ns,
                real_ci95_ns: s.median_ci95_ns,
            });
        let (delta, waits, own_cpu_delta) = self
            .delta(s, (&name, flow))
            .map_or((None, None, None), |(v, w, o)| (Some(v), w, o));
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
            own_cpu_delta,
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
