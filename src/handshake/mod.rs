//! `pqprof handshake`: real TLS 1.3 and SSH handshakes on loopback, client here and server in a
//! child process, measured beside the composed figures: latency, bytes each way, CPU and memory per
//! handshake, with the negotiated parameters checked on an unmeasured first connection.

mod paired;

use crate::auth::{Auth, Auths, Step};
use crate::figures::handshake::{paired_connections, Connections, DeltaPairing};
use crate::results::{
    Against, AllocCounters, AuthInfo, DeltaForm, Evidence, Handshakes, InSitu, InSituConnection,
    Mode, PerHandshake, RealStack, Results, Scenario, StopReason, Warning,
};
use crate::stack::child::{Server, ServerStats, Start};
use crate::stack::{self, Client, Config, One, TlsStack};
use crate::stats;
use crate::suite::{self, TrackKind};
use anyhow::{anyhow, ensure, Context, Result};
use std::path::PathBuf;
use std::time::Instant;

pub use paired::block_order;

struct Running {
    protocol: String,
    suite: String,
    stack: &'static dyn TlsStack,
    instrumented: bool,
    mode: Mode,
    declared: Option<(usize, usize)>,
    /// TLS: the authentication its server presents.
    auth: Option<AuthInfo>,
    server: Server,
    client: Box<dyn Client>,
    evidence: Evidence,
    ones: Vec<One>,
    sample_medians: Vec<f64>,
    sample_sizes: Vec<usize>,
    sample_rounds: Vec<usize>,
    /// Seconds each sample took, start to end: what another one is expected to cost.
    sample_s: Vec<f64>,
    /// The server's own CPU in each sample, whole nanoseconds: its reading after the sample's round
    /// less the one before (`server_cpu_after`; the first since its reset), so a sample's window
    /// holds the server's idle time between its rounds too. Empty once a reading does not add up.
    server_cpu_samples: Vec<u64>,
    /// The server's CPU since its reset, as last read, and whether every reading so far held.
    server_cpu_read_ns: f64,
    server_cpu_whole: bool,
    /// Set when a connection failed: the scenario stops and is reported as failed.
    failed: bool,
    /// The scenario its differences are against (`against`), on the same stack and in the same
    /// form, where it runs: the two take turns block by block in every round either runs in.
    partner: Option<usize>,
    /// A plain scenario whose difference from its partner is a row of the front page's answer
    /// (`figures::answer::answers`), or a size control's: precision rounds serve these first.
    answers: bool,
}

impl Running {
    fn name(&self) -> String {
        scenario_name(
            &self.protocol,
            &self.suite,
            self.auth.as_ref().map(|a| a.name.as_str()),
            self.stack.name(),
            self.instrumented,
            self.mode,
        )
    }
}

fn scenario_name(
    protocol: &str,
    suite: &str,
    auth: Option<&str>,
    stack: &str,
    instrumented: bool,
    mode: Mode,
) -> String {
    format!(
        "{protocol} {suite}{} on {stack}{}",
        auth.map_or(String::new(), |a| format!(" + {a}")),
        crate::results::mode_suffix(mode, instrumented)
    )
}

pub(crate) struct Options {
    pub(crate) suites: PathBuf,
    pub(crate) samples: usize,
    pub(crate) per_sample: usize,
    /// The 95% half-width each scenario's median is measured towards, percent.
    pub(crate) precision_pct: f64,
    /// No scenario gets more samples than this (at least `samples`).
    pub(crate) max_samples: usize,
    /// The time the step may measure in, from the process's start (`budget::from_secs`: its
    /// budget less its closing), first rounds and precision rounds together; none: no precision
    /// rounds.
    pub(crate) budget: Option<std::time::Duration>,
    /// Only these stacks (all when empty).
    pub(crate) stacks: Vec<String>,
}

/// An instrumented scenario makes as many connections as the plain one (so the two medians compare
/// like for like and show the timers' cost), all timed, and keeps the per-connection records of
/// every this-many-th connection (the records are large; their means need fewer).
pub(crate) const INSITU_SHARE: usize = 5;

fn check_evidence(r: &Running, ev: &Evidence) -> Result<()> {
    let d = crate::figures::evidence::Declared {
        protocol: &r.protocol,
        group: &r.suite,
        shares: r.declared,
        auth: r.auth.as_ref(),
        mode: r.mode,
        transport: r.stack.transport(),
    };
    let wrong = crate::figures::evidence::contradictions(&d, ev);
    ensure!(wrong.is_empty(), "{}", wrong.join("; "));
    Ok(())
}

/// Starts a scenario's server and client, makes the unmeasured evidence connection and checks what
/// it negotiated.
fn start(
    s: &suite::Suite,
    (stack, instrumented, mode): (&'static dyn TlsStack, bool, Mode),
    (id, files): &(stack::Identity, stack::identity::Files),
    tls: bool,
) -> Result<Running> {
    // Two key shares change the client's ClientHello only: the server is the full one's.
    let server_mode = if mode == Mode::Resumed {
        Mode::Resumed
    } else {
        Mode::Full
    };
    let server = stack.start_server(&Start {
        mode: server_mode,
        ..Start::loopback(&s.name, files, instrumented)
    })?;
    let c = if instrumented {
        Config::timed(&s.name, id)
    } else {
        Config::plain(&s.name, id)
    };
    let client = stack.client(Config { mode, ..c })?;
    let mut r = Running {
        protocol: s.protocol.clone(),
        suite: s.name.clone(),
        stack,
        instrumented,
        mode,
        declared: s.wire_shares(),
        auth: tls.then(|| id.auth.clone()),
        server,
        client,
        evidence: Evidence::default(),
        ones: Vec::new(),
        sample_medians: Vec::new(),
        sample_sizes: Vec::new(),
        sample_rounds: Vec::new(),
        sample_s: Vec::new(),
        server_cpu_samples: Vec::new(),
        server_cpu_read_ns: 0.0,
        server_cpu_whole: true,
        failed: false,
        partner: None,
        answers: false,
    };
    // A resumption's first ticket comes from a full handshake, unmeasured.
    let primed = usize::from(mode == Mode::Resumed);
    if primed > 0 {
        r.client.connect(r.server.addr, false)?;
    }
    let warm = r.client.connect(r.server.addr, true)?;
    let ev = warm.evidence.unwrap_or_default();
    check_evidence(&r, &ev)?;
    r.evidence = ev;
    // The warm-up connections are the ones served so far.
    r.server.command(&format!("reset {}", 1 + primed))?;
    Ok(r)
}

/// What a step starts: every scenario the suites, authentications and available stacks make, each
/// with its server and client running; the ones that could not start, and why a stack, group or mode
/// is not measured.
struct Started {
    running: Vec<Running>,
    failures: Vec<String>,
    notes: Vec<Warning>,
}

fn start_all(
    opts: &Options,
    suites: &[suite::Suite],
    auths: &Auths,
    chains: &stack::identity::Chains,
) -> Result<Started> {
    let mut failures = Vec::new();
    let mut notes = Vec::new();
    let wanted =
        |s: &dyn TlsStack| opts.stacks.is_empty() || opts.stacks.iter().any(|n| n == s.name());
    // Each stack asked for that can run here, with the groups it negotiates.
    let mut stacks = Vec::new();
    for &st in stack::all().iter().filter(|s| wanted(**s)) {
        match st.availability() {
            Ok(a) => stacks.push((st, a)),
            Err(e) => notes.push(Warning::NotMeasured {
                what: format!("the {} stack", st.name()),
                reason: format!("{e:#}"),
            }),
        }
    }
    let mut running: Vec<Running> = Vec::new();
    for s in suites.iter().filter(|s| s.kind == TrackKind::Kex) {
        // TLS: every authentication the group meets (suites/auth.toml); SSH authenticates with
        // its host key, one form.
        let tls = s.protocol == "tls13";
        let group_auths: Vec<Option<&Auth>> = if tls {
            auths
                .for_group(&s.name, Step::Handshake)
                .into_iter()
                .map(Some)
                .collect()
        } else {
            vec![None]
        };
        for auth in group_auths {
            let chain = chains.get(auth.map_or(&auths.baseline, |a| &a.name))?;
            // A plain scenario for every stack of the protocol, and an instrumented one beside it
            // for the stacks with in-situ hooks.
            let mut variants: Vec<(&'static dyn TlsStack, bool)> = Vec::new();
            for (st, a) in stacks.iter().filter(|(st, _)| st.protocol() == s.protocol) {
                if !a.negotiates(&s.name) {
                    if auth.is_none_or(|x| x.name == auths.baseline) {
                        notes.push(Warning::GroupUnsupported {
                            stack: st.name().into(),
                            version: a.version.clone(),
                            group: s.name.clone(),
                        });
                    }
                    continue;
                }
                if let Some(x) = auth.filter(|x| !a.authenticates(&x.algorithm)) {
                    let note = a.unauthenticated(st.name(), x);
                    if !notes.contains(&note) {
                        notes.push(note);
                    }
                    continue;
                }
                // A pairing made over one transport only (suites/auth.toml's `transport`).
                if auth.is_some_and(|x| {
                    !auths.pairs(&s.name, &x.name, Step::Handshake, st.transport())
                }) {
                    continue;
                }
                variants.push((*st, false));
                if st.features().in_situ {
                    variants.push((*st, true));
                }
            }
            let auth_name = auth.map(|a| a.name.as_str());
            for (st, instrumented) in variants {
                // The other modes beside the full handshake (#34): resumed where the stack
                // resumes, two key shares on every TLS stack, a HelloRetryRequest where its
                // client can predict X25519 alone.
                let f = st.features();
                let made = |m: Mode| {
                    crate::figures::modes::made(m, &s.protocol, &s.name, auth_name, &auths.baseline)
                };
                let can = |m: Mode| match m {
                    Mode::Resumed => f.resumption,
                    Mode::HelloRetry => f.hello_retry,
                    Mode::HelloRetryClassical => f.hello_retry_classical,
                    Mode::TwoShares => f.two_shares,
                    Mode::Full => true,
                    // QUIC's address validation shows in round trips: the network step's.
                    Mode::Token | Mode::Retry => false,
                };
                let others = [
                    Mode::Resumed,
                    Mode::TwoShares,
                    Mode::HelloRetry,
                    Mode::HelloRetryClassical,
                ];
                for m in others {
                    if made(m) && !can(m) && !instrumented {
                        notes.push(Warning::NotMeasured {
                            what: format!("{} {}", st.name(), m.described()),
                            reason: st.cannot(m),
                        });
                    }
                }
                let modes = std::iter::once(Mode::Full)
                    .chain(others)
                    .filter(|&m| made(m) && can(m));
                for mode in modes {
                    match start(s, (st, instrumented, mode), chain, tls) {
                        Ok(mut r) => {
                            // A size control's difference is every row's of its stack too
                            // (its cost per byte), so it is served with the answer's.
                            r.answers = !instrumented
                                && mode == Mode::Full
                                && (crate::figures::answer::answers(
                                    &s.protocol,
                                    &s.name,
                                    auth_name,
                                    &auths.baseline,
                                ) || auth.is_some_and(|a| a.padding > 0));
                            running.push(r)
                        }
                        Err(e) => failures.push(format!(
                            "{}: {e:#}",
                            scenario_name(
                                &s.protocol,
                                &s.name,
                                auth_name,
                                st.name(),
                                instrumented,
                                mode
                            )
                        )),
                    }
                }
            }
        }
    }
    Ok(Started {
        running,
        failures,
        notes,
    })
}

/// Each scenario's figures, from its connections and its server's own; a scenario whose server's
/// figures are lost or do not add up is a failure, not a row.
fn collect(running: &mut [Running], opts: &Options, failures: &mut Vec<String>) -> Vec<Scenario> {
    let mut scenarios = Vec::new();
    for r in running.iter_mut().filter(|r| !r.failed) {
        let made = r.ones.len();
        let ss = match r.server.command(&format!("stats {made}")).and_then(|l| {
            serde_json::from_str::<ServerStats>(&l).with_context(|| format!("server stats {l:?}"))
        }) {
            Ok(ss) => ss,
            Err(e) => {
                failures.push(format!(
                    "{}: the server's figures are lost: {e:#}",
                    r.name()
                ));
                continue;
            }
        };
        match scenario(r, ss, opts) {
            Ok(s) => scenarios.push(s),
            Err(e) => failures.push(format!("{}: {e:#}", r.name())),
        }
    }
    scenarios
}

pub(crate) fn run(
    opts: &Options,
    results: &Results,
    progress: &mut dyn FnMut(&str),
) -> Result<Handshakes> {
    let start_time = Instant::now();
    crate::alloc::enable(true);
    let suites = suite::load(&opts.suites, &crate::backend::names())?;
    let auths = tls_auths(&opts.suites, &suites)?;
    // One chain per authentication the step uses, the baseline first.
    let tls_groups: Vec<&suite::Suite> = suites
        .iter()
        .filter(|s| s.kind == TrackKind::Kex && s.protocol == "tls13")
        .collect();
    let chains = stack::identity::Chains::make(
        auths.baseline().into_iter().chain(
            tls_groups
                .iter()
                .flat_map(|s| auths.for_group(&s.name, Step::Handshake)),
        ),
        "hs",
    )?;

    let Started {
        mut running,
        mut failures,
        notes,
    } = start_all(opts, &suites, &auths, &chains)?;
    let n = running.len();
    pair_up(&mut running, &suites, &auths);
    // The budget is the whole step's measuring, from the process's start (`budget`): what the
    // timers' paired cost will take is kept back from the first rounds (estimated from the first
    // round's connections), which stop early, after `MIN_SAMPLES`, where they would not leave it;
    // it is measured right after them, so the precision rounds then take the time really left.
    let deadline = opts.budget.map(|b| crate::budget::process_start() + b);
    let mut reserve_s = 0.0;
    let mut first_rounds = 0;
    let mut round_s = 0.0;
    // The answer's rows get what a full round would not: once `MIN_SAMPLES` rounds are in, the
    // first rounds stop where another would eat into `ANSWER_SHARE` of the budget.
    let kept_s = match opts.budget {
        Some(b) if running.iter().any(|r| r.answers) && opts.max_samples > opts.samples => {
            b.as_secs_f64() * ANSWER_SHARE
        }
        _ => 0.0,
    };
    for k in 0..opts.samples {
        if k >= MIN_SAMPLES.min(opts.samples) && time_left_s(deadline, reserve_s) - round_s < kept_s
        {
            progress(&format!(
                "the budget is spent after {k} of {} first rounds",
                opts.samples
            ));
            break;
        }
        progress(&format!("sample {}/{}", k + 1, opts.samples));
        let t0 = Instant::now();
        let all: Vec<usize> = (0..n).collect();
        paired_round(&mut running, &all, k, opts.per_sample, &mut failures)?;
        round_s = t0.elapsed().as_secs_f64();
        first_rounds = k + 1;
        if k == 0 {
            reserve_s = paired_reserve_s(&running, opts.per_sample, &auths.baseline);
            if let Some(b) = opts.budget {
                reserve_s = reserve_s.min(b.as_secs_f64() * PAIRED_SHARE);
            }
        }
    }
    // The timers' paired cost takes what the first rounds left beyond the answer's share, at
    // least its own share (`PAIRED_SHARE`), never more than its full design needs.
    let paired_s = opts.budget.map(|b| {
        let left = time_left_s(deadline, 0.0);
        (left - kept_s)
            .max(b.as_secs_f64() * PAIRED_SHARE)
            .min(left)
    });
    let timers = paired::measure(
        &paired_targets(&running, &auths.baseline),
        &chains.first()?.0,
        paired_s,
        progress,
    )?;
    let reserve_s = 0.0;
    // Then more rounds, each of the scenarios whose median or whose difference from its partner
    // is still wider than its target (the widest first), with their partners, that fit in the
    // time left; the intervals are recomputed over every round.
    let mut round = first_rounds;
    while deadline.is_some() {
        let chosen = wide_scenarios(&running, opts, time_left_s(deadline, reserve_s));
        if chosen.is_empty() {
            break;
        }
        progress(&format!(
            "round {}: {} scenario(s) wider than their targets, with their partners",
            round + 1,
            chosen.len(),
        ));
        paired_round(&mut running, &chosen, round, opts.per_sample, &mut failures)?;
        round += 1;
    }

    let scenarios = collect(&mut running, opts, &mut failures);
    drop(running); // kills and reaps every server and client
                   // Measured after the scenarios, on the client's core, so it does not disturb them.
    let call_cost_ns = scenarios
        .iter()
        .any(|s| s.instrumented)
        .then(crate::insitu::call_cost_ns);
    // The other modes apart (`Handshakes::other_modes`), each list against its own.
    let (mut scenarios, mut other_modes): (Vec<Scenario>, Vec<Scenario>) =
        scenarios.into_iter().partition(|s| s.mode.is_full());
    fill_baselines(&mut scenarios, &suites, &auths, results, call_cost_ns);
    fill_baselines(&mut other_modes, &suites, &auths, results, call_cost_ns);
    paired::attach(&mut scenarios, &auths.baseline, timers)?;
    drop(chains);
    Ok(Handshakes {
        date_utc: crate::host::utc_now(),
        wall_seconds: start_time.elapsed().as_secs_f64(),
        samples: first_rounds,
        per_sample: opts.per_sample,
        scenarios,
        failures,
        insitu_call_cost_ns: call_cost_ns,
        notes,
        pair_block: Some(PAIRING.block),
        delta_form: PAIRING.form,
        other_modes,
    })
}

/// Connections per block of the paired design: the scenarios of one stack take turns this many
/// connections at a time. From one run of 4,800 loopback handshakes per variant on the Zen 4 VM,
/// cut into blocks of 1 to 32, blocks of 4 gave the narrowest paired intervals (`paired.rs`; the
/// absolute form's bootstrap over blocks, before the relative form).
pub(crate) const PAIR_BLOCK: usize = 4;

/// How this step's differences are taken: blocks of `PAIR_BLOCK`, each pair's difference as a share
/// of its baseline block (`results::DeltaForm::Relative`).
pub(crate) const PAIRING: DeltaPairing = DeltaPairing {
    block: PAIR_BLOCK,
    form: DeltaForm::Relative,
};

/// One round of the scenarios `chosen` (indices into `running`): `per_sample` connections each,
/// the scenarios of one stack, protocol and form (plain or in situ) taking turns `PAIR_BLOCK`
/// connections at a time, the order of their turns changing every block (`turn_order`) so none
/// always runs first or after the same one. Every block of a scenario thus runs next to a block of
/// its partner, and a slow stretch of the shared host falls on both. The stacks run one after the
/// other, in an order that turns with the round. A failed connection stops its scenario (it is
/// reported as failed and takes no further turns); an interruption stops the step.
fn paired_round(
    running: &mut [Running],
    chosen: &[usize],
    round: usize,
    per_sample: usize,
    failures: &mut Vec<String>,
) -> Result<()> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &i in chosen.iter().filter(|&&i| !running[i].failed) {
        let key = |r: &Running| (r.protocol.clone(), r.stack.name(), r.instrumented);
        match groups
            .iter_mut()
            .find(|g| key(&running[g[0]]) == key(&running[i]))
        {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    if !groups.is_empty() {
        let turn = round % groups.len();
        groups.rotate_left(turn);
    }
    for g in groups {
        let mut made: Vec<Vec<One>> = g.iter().map(|_| Vec::with_capacity(per_sample)).collect();
        let mut spent = vec![0.0; g.len()];
        let blocks = per_sample.div_ceil(PAIR_BLOCK);
        for b in 0..blocks {
            let n = PAIR_BLOCK.min(per_sample - b * PAIR_BLOCK);
            for j in turn_order(round * blocks + b, g.len()) {
                let r = &mut running[g[j]];
                if r.failed {
                    continue;
                }
                let t0 = Instant::now();
                match r.client.connect_many(r.server.addr, n) {
                    Ok(ones) => made[j].extend(ones),
                    Err(e) if e.downcast_ref::<crate::interrupt::Interrupted>().is_some() => {
                        return Err(e)
                    }
                    Err(e) => {
                        let exited = r
                            .server
                            .child
                            .try_wait()
                            .ok()
                            .flatten()
                            .map_or(String::new(), |s| format!(" (the server exited: {s})"));
                        failures.push(format!("{}: {e:#}{exited}", r.name()));
                        r.failed = true;
                    }
                }
                spent[j] += t0.elapsed().as_secs_f64();
            }
        }
        for ((&i, ones), s) in g.iter().zip(made).zip(spent) {
            let r = &mut running[i];
            if r.failed || ones.is_empty() {
                continue;
            }
            // Whole nanoseconds, as the results file stores them (`totals_ns`).
            let totals: Vec<f64> = ones.iter().map(|o| o.total_ns.round()).collect();
            r.sample_medians.push(stats::median(&totals));
            r.sample_sizes.push(totals.len());
            r.sample_rounds.push(round);
            r.sample_s.push(s);
            r.ones.extend(ones);
        }
        server_cpu_after(running, &g, failures);
    }
    Ok(())
}

/// Reads the CPU each server of `group` has spent since its reset, now that their samples of
/// this round are made, and keeps its growth since the last reading as the sample's: the raw
/// figures of server CPU per handshake's interval (`figures::server_cpu`). Outside the timed
/// region: the connections are made. The servers are all asked first, since a lab server waits
/// for its processes' CPU to settle before it answers. A server that answers something else, or
/// whose count of served connections is not the client's, keeps no per-sample CPU (its total
/// still stands); one that does not answer has failed (a late answer would be read as the next
/// command's).
fn server_cpu_after(running: &mut [Running], group: &[usize], failures: &mut Vec<String>) {
    let asked: Vec<usize> = group
        .iter()
        .copied()
        .filter(|&i| {
            let r = &mut running[i];
            r.server_cpu_whole
                && !r.failed
                && r.server_cpu_samples.len() + 1 == r.sample_sizes.len()
                && r.server.send(&format!("cpu {}", r.ones.len())).is_ok()
        })
        .collect();
    for i in asked {
        let r = &mut running[i];
        let line = match r.server.answer() {
            Ok(l) => l,
            Err(e) => {
                failures.push(format!("{}: its CPU could not be read: {e:#}", r.name()));
                r.failed = true;
                continue;
            }
        };
        let stats = serde_json::from_str::<ServerStats>(&line).ok();
        let wanted = r.sample_sizes.len();
        match stats {
            Some(st)
                if st.served == r.ones.len() as u64
                    && st.cpu_ns >= r.server_cpu_read_ns
                    && r.server_cpu_samples.len() + 1 == wanted =>
            {
                let grown = (st.cpu_ns - r.server_cpu_read_ns).round() as u64;
                r.server_cpu_samples.push(grown);
                r.server_cpu_read_ns = st.cpu_ns;
            }
            _ => {
                r.server_cpu_whole = false;
                r.server_cpu_samples.clear();
            }
        }
    }
}

/// The order of `m` scenarios' turns in block `b`: the list turned left by `b`, and reversed every
/// other cycle of `m` blocks, so that over `2m` blocks every scenario takes every place equally
/// often and follows every other one in both directions.
fn turn_order(b: usize, m: usize) -> Vec<usize> {
    if m == 0 {
        return Vec::new();
    }
    let mut order: Vec<usize> = (0..m).collect();
    order.rotate_left(b % m);
    if (b / m) % 2 == 1 {
        order.reverse();
    }
    order
}

/// Each scenario's partner: the scenario its differences are against (`against`), same stack and
/// form, where it runs here.
fn pair_up(running: &mut [Running], suites: &[suite::Suite], auths: &Auths) {
    for i in 0..running.len() {
        let r = &running[i];
        let Some(a) = against_of(
            &r.suite,
            r.auth.as_ref().map(|a| a.name.as_str()),
            suites,
            auths,
        ) else {
            continue;
        };
        let partner = running.iter().position(|x| {
            x.stack.name() == r.stack.name()
                && x.instrumented == r.instrumented
                && x.mode == r.mode
                && x.protocol == r.protocol
                && x.suite == a.suite
                && x.auth.as_ref().map(|y| y.name.as_str()) == a.auth.as_deref()
        });
        running[i].partner = partner;
    }
}

/// The first rounds every scenario gets whatever the budget: fewer leave a median's interval
/// resting on too few rounds for the two-stage bootstrap to mean much (t(3) = 3.18 at 4).
const MIN_SAMPLES: usize = 4;

/// The share of the step's budget the first rounds leave to the precision rounds where the answer
/// table has rows: a round of every scenario (about 40 on 4 stacks) costs what a dozen rounds of
/// the answer's scenarios and their partners cost, and those differences are the figures quoted.
const ANSWER_SHARE: f64 = 0.35;

/// The share of the step's budget the timers' paired cost may take where the first rounds leave
/// less than its full design needs: it checks the timers rather than answers, and its full design
/// for every stack and group timed in situ can take more than the whole step's budget.
const PAIRED_SHARE: f64 = 0.15;

/// Seconds left before the deadline once `reserve_s` is kept back (unbounded without one).
fn time_left_s(deadline: Option<Instant>, reserve_s: f64) -> f64 {
    deadline.map_or(f64::INFINITY, |d| {
        d.saturating_duration_since(Instant::now()).as_secs_f64() - reserve_s
    })
}

/// The plain full scenarios of the baseline authentication on a stack timed in situ: those whose
/// timers' cost `paired::measure` measures.
fn paired_scenarios<'a>(
    running: &'a [Running],
    baseline: &'a str,
) -> impl Iterator<Item = &'a Running> {
    running
        .iter()
        .filter(|r| !r.failed && !r.instrumented && r.stack.features().in_situ)
        .filter(|r| r.mode.is_full())
        .filter(move |r| r.auth.as_ref().is_none_or(|a| a.name == baseline))
}

/// What `paired::measure` is for: each paired scenario's stack and group.
fn paired_targets(running: &[Running], baseline: &str) -> Vec<(&'static dyn TlsStack, String)> {
    paired_scenarios(running, baseline)
        .map(|r| (r.stack, r.suite.clone()))
        .collect()
}

/// What the timers' paired cost (`paired::measure`, after the first rounds) will take, seconds:
/// its connections per scenario it pairs, each at the scenario's first-round time per connection.
fn paired_reserve_s(running: &[Running], per_sample: usize, baseline: &str) -> f64 {
    paired_scenarios(running, baseline)
        .filter_map(|r| {
            let per_connection = r.sample_s.first()? / per_sample.max(1) as f64;
            Some(paired::connections(r.stack) as f64 * per_connection)
        })
        .sum()
}

/// Each connection's total, whole nanoseconds (what the results file stores).
fn totals_ns(r: &Running) -> Vec<u64> {
    r.ones.iter().map(|o| o.total_ns.round() as u64).collect()
}

/// The median's 95% half-width of a scenario so far, percent.
fn half_width_pct(r: &Running) -> Option<f64> {
    let f = crate::figures::handshake::median_figures(&totals_ns(r), &r.sample_sizes)?;
    stats::half_width_pct(f.ci95_ns?, f.median_ns)
}

/// The 95% half-width a paired difference is measured towards: 15 µs or 10% of the difference,
/// whichever is larger (#33: the hybrid's difference on loopback is tens of microseconds).
pub(crate) const DELTA_TARGET_NS: f64 = 15_000.0;
pub(crate) const DELTA_TARGET_PCT: f64 = 10.0;

/// A scenario's paired difference from its partner so far (`figures::handshake::paired_connections`).
fn paired_so_far(
    running: &[Running],
    r: &Running,
) -> Option<crate::figures::handshake::PairedDelta> {
    let p = &running[r.partner?];
    if p.failed {
        return None;
    }
    let (a, b) = (totals_ns(r), totals_ns(p));
    paired_connections(
        Connections {
            totals_ns: &a,
            sizes: &r.sample_sizes,
            rounds: &r.sample_rounds,
        },
        Connections {
            totals_ns: &b,
            sizes: &p.sample_sizes,
            rounds: &p.sample_rounds,
        },
        PAIRING,
    )
}

/// How far a scenario's paired difference is from `DELTA_TARGET_NS` / `DELTA_TARGET_PCT`: its
/// half-width over the target (above 1: wide).
fn delta_wideness(running: &[Running], r: &Running) -> Option<f64> {
    paired_so_far(running, r).map(|d| {
        let target = DELTA_TARGET_NS.max(d.median_ns.abs() * DELTA_TARGET_PCT / 100.0);
        (d.hi95_ns - d.lo95_ns) / 2.0 / target
    })
}

/// How far a scenario is from its targets: its median's half-width over the target, or its paired
/// difference's (`delta_wideness`), whichever is further (above 1: wide).
fn wideness(running: &[Running], r: &Running, opts: &Options) -> Option<f64> {
    let median = half_width_pct(r).map(|hw| hw / opts.precision_pct);
    match (median, delta_wideness(running, r)) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// The scenarios another round measures: those wider than a target with samples to spare, the
/// widest first, each with its partner where that has samples to spare too (a difference is
/// measured only from rounds both run in), while their expected time (each one's slowest sample
/// so far) fits in the time left.
fn wide_scenarios(running: &[Running], opts: &Options, left_s: f64) -> Vec<usize> {
    let spare = |r: &Running| !r.failed && r.sample_medians.len() < opts.max_samples;
    let open = running
        .iter()
        .enumerate()
        .filter(|(_, r)| spare(r))
        // Another mode's figures are paired with its full twin over the rounds both ran in; one
        // without a partner of its own mode would gain rounds that pair with nothing.
        .filter(|(_, r)| r.mode.is_full() || r.partner.is_some());
    // The answer's rows first, by their differences alone (the figures the table quotes; a
    // median's 1% can wait): while one of them is wide and fits, the others wait.
    // A row whose partner has had its samples would gain rounds that pair with nothing.
    let with_partner = |i: usize| running[i].partner.filter(|&p| spare(&running[p]));
    let answers: Vec<(usize, f64)> = open
        .clone()
        .filter(|&(i, r)| r.answers && with_partner(i).is_some())
        .filter_map(|(i, r)| Some((i, delta_wideness(running, r)?)))
        .filter(|&(_, w)| w > 1.0)
        .collect();
    match fitting(running, answers, left_s, with_partner) {
        chosen if chosen.is_empty() => {
            let wide = open
                .filter_map(|(i, r)| Some((i, wideness(running, r, opts)?)))
                .filter(|&(_, w)| w > 1.0)
                .collect();
            fitting(running, wide, left_s, with_partner)
        }
        chosen => chosen,
    }
}

/// The widest of `wide` first, each with its partner (`partner`: the one that runs with it, if
/// any), while their expected time fits in `left_s`.
fn fitting(
    running: &[Running],
    mut wide: Vec<(usize, f64)>,
    left_s: f64,
    partner: impl Fn(usize) -> Option<usize>,
) -> Vec<usize> {
    wide.sort_by(|a, b| b.1.total_cmp(&a.1));
    let cost = |i: usize| running[i].sample_s.iter().copied().fold(0.0, f64::max);
    let mut spent = 0.0;
    let mut chosen: Vec<usize> = Vec::new();
    for (i, _) in wide {
        let with: Vec<usize> = std::iter::once(i)
            .chain(partner(i))
            .filter(|j| !chosen.contains(j))
            .collect();
        let c: f64 = with.iter().map(|&j| cost(j)).sum();
        if spent + c <= left_s {
            spent += c;
            chosen.extend(with);
        }
    }
    chosen
}

fn scenario(r: &Running, ss: ServerStats, opts: &Options) -> Result<Scenario> {
    let total: Vec<f64> = r.ones.iter().map(|o| o.total_ns).collect();
    ensure!(!total.is_empty(), "no connection was measured");
    // Every connection of a resumed scenario resumed, as its server saw it (and it saw every
    // one: a server counting from its log may miss some); none of another.
    let want = if r.mode == Mode::Resumed {
        ensure!(
            ss.served == r.ones.len() as u64,
            "the server saw {} connections of the {} made",
            ss.served,
            r.ones.len()
        );
        ss.served
    } else {
        0
    };
    ensure!(
        ss.resumed == want,
        "the server saw {} of its {} connections resume, the scenario {want}",
        ss.resumed,
        ss.served
    );
    let count = r.ones.len() as f64;
    let sum = |f: &dyn Fn(&One) -> f64| r.ones.iter().map(f).sum::<f64>() / count;
    let mem = r
        .ones
        .iter()
        .fold(AllocCounters::default(), |a, o| AllocCounters {
            rust_allocs: a.rust_allocs + o.mem.rust_allocs,
            rust_bytes: a.rust_bytes + o.mem.rust_bytes,
            c_allocs: a.c_allocs + o.mem.c_allocs,
            c_bytes: a.c_bytes + o.mem.c_bytes,
        });
    let sorted = stats::sorted(&total);
    let totals = totals_ns(r);
    let figures = crate::figures::handshake::median_figures(&totals, &r.sample_sizes)
        .context("the samples do not add up to the connections")?;
    let precision = figures.ci95_ns.and_then(|ci| {
        let hw = stats::half_width_pct(ci, figures.median_ns)?;
        // Budget: not chosen for another round, the time left was too short, or it has the most
        // samples a scenario gets.
        let reason = StopReason::after(hw, opts.precision_pct, opts.budget.is_none(), false, true);
        Some(crate::figures::precision(
            opts.precision_pct,
            hw,
            reason,
            r.sample_sizes.len(),
            None,
        ))
    });
    let insitu = if r.instrumented {
        Some(in_situ(r, &ss)?)
    } else {
        None
    };
    Ok(Scenario {
        protocol: r.protocol.clone(),
        suite: r.suite.clone(),
        stack: RealStack::new(r.stack.name()),
        auth: r.auth.clone(),
        evidence: r.evidence.clone(),
        median_ns: figures.median_ns,
        p95_ns: stats::percentile_sorted(&sorted, 95.0),
        ready_median_ns: stats::median(&r.ones.iter().map(|o| o.ready_ns).collect::<Vec<_>>()),
        sample_medians_ns: r.sample_medians.clone(),
        rsd_pct: stats::rsd_pct(&r.sample_medians),
        totals_ns: totals,
        sample_sizes: r.sample_sizes.clone(),
        sample_rounds: r.sample_rounds.clone(),
        median_ci95_ns: figures.ci95_ns,
        precision,
        client_to_server_bytes: sum(&|o| o.sent as f64),
        server_to_client_bytes: sum(&|o| o.received as f64),
        declared_wire_bytes: r.declared.map(|(c, s)| c + s),
        declared_shares: r.declared,
        client_cpu_ns: sum(&|o| o.cpu_ns),
        server_cpu_ns: ss.cpu_ns / (ss.served.max(1) as f64),
        server_cpu_samples_ns: if r.server_cpu_samples.len() == r.sample_sizes.len() {
            r.server_cpu_samples.clone()
        } else {
            Vec::new()
        },
        client_mem: PerHandshake {
            go_allocs: sum(&|o| o.go_allocs),
            go_bytes: sum(&|o| o.go_bytes),
            ..mem.per(count)
        },
        server_mem: PerHandshake {
            go_allocs: ss.go_mallocs as f64 / ss.served.max(1) as f64,
            go_bytes: ss.go_alloc_bytes as f64 / ss.served.max(1) as f64,
            ..ss.mem.per(ss.served as f64)
        },
        against: None,
        vs_baseline_ratio: None,
        measured_delta_ns: None,
        measured_delta_ci95_ns: None,
        measured_delta_pairs: None,
        composed_delta_ns: None,
        composed_stack: r.stack.composed_stack(),
        instrumented: r.instrumented,
        mode: r.mode,
        transport: r.stack.transport(),
        server_resumed: (r.mode == Mode::Resumed).then_some(ss.resumed),
        insitu,
        insitu_overhead_pct: None,
        insitu_overhead_est_pct: None,
        insitu_overhead_paired: None,
        insitu_overhead_paired_loopback: None,
    })
}

/// Pairs the client's records with the server's, connection by connection (the server serves one
/// connection at a time, in the order the client makes them).
fn in_situ(r: &Running, ss: &ServerStats) -> Result<InSitu> {
    ensure!(
        ss.insitu.len() == r.ones.len(),
        "the server recorded {} connections, the client {}",
        ss.insitu.len(),
        r.ones.len()
    );
    let labels = crate::results::CallLabel::names();
    let mut connections = Vec::new();
    let (mut cc, mut sc) = (vec![0.0; labels.len()], vec![0.0; labels.len()]);
    let (mut ch, mut sh) = (0.0, 0.0);
    for (one, server) in r.ones.iter().zip(&ss.insitu).step_by(INSITU_SHARE) {
        let client = one
            .insitu
            .ok_or_else(|| anyhow!("a connection without its in-situ record"))?;
        let total_ns = one.total_ns.round() as u64;
        let crypto: u64 = client.ns.iter().chain(&server.ns).sum();
        for i in 0..labels.len() {
            cc[i] += f64::from(client.calls.get(i).copied().unwrap_or(0));
            sc[i] += f64::from(server.calls.get(i).copied().unwrap_or(0));
        }
        ch += client.hashed_bytes as f64;
        sh += server.hashed_bytes as f64;
        // A connection whose clock's start is not known has no time line.
        let (client_at_ns, server_at_ns) = match one.started_ns {
            0 => (Vec::new(), Vec::new()),
            origin => (time_line(&client, origin)?, time_line(server, origin)?),
        };
        connections.push(InSituConnection {
            total_ns,
            client: client.ns.to_vec(),
            server: server.ns.to_vec(),
            remainder_ns: total_ns as i64 - crypto as i64,
            client_at_ns,
            server_at_ns,
        });
    }
    let n = connections.len().max(1) as f64;
    let mean = |v: Vec<f64>| v.into_iter().map(|x| x / n).collect();
    Ok(InSitu {
        call_phases: r.stack.call_phases(),
        ..InSitu::from_connections(labels, connections, (mean(cc), mean(sc)), (ch / n, sh / n))
    })
}

/// Each label's first start and last end of `r`'s calls, in turn, nanoseconds after `origin_ns`
/// (CLOCK_MONOTONIC: the start of the client's clock for the connection, which both sides' calls
/// follow); 0, 0 where `r` has no time in it (as `check` reads a label's calls).
fn time_line(r: &crate::insitu::Record, origin_ns: u64) -> Result<Vec<u64>> {
    let at = |t: u64| {
        (r.armed_at_ns + t).checked_sub(origin_ns).ok_or_else(|| {
            anyhow!(
                "a call {} ns before its connection began",
                origin_ns - (r.armed_at_ns + t)
            )
        })
    };
    let mut v = Vec::with_capacity(2 * r.ns.len());
    for i in 0..r.ns.len() {
        if r.ns[i] == 0 {
            v.extend([0, 0]);
        } else {
            v.extend([at(r.first_ns[i])?, at(r.last_ns[i])?]);
        }
    }
    Ok(v)
}

/// The TLS authentications of the suite folder (suites/auth.toml), the groups checked against
/// the key-exchange suites.
pub fn tls_auths(path: &std::path::Path, suites: &[suite::Suite]) -> Result<Auths> {
    let groups: Vec<&str> = suites
        .iter()
        .filter(|s| s.kind == TrackKind::Kex && s.protocol == "tls13")
        .map(|s| s.name.as_str())
        .collect();
    // A suite file alone, or a folder without an authentication file: the baseline chain alone.
    Ok(crate::auth::load(path, "tls13", Some(&groups))?.unwrap_or_else(Auths::baseline_only))
}

/// The scenario a scenario's baseline figures are against: for the baseline authentication (and
/// SSH), the protocol's baseline group with it; for another authentication, the same group with
/// the baseline authentication. `None` for the baseline itself.
fn against_of(
    suite: &str,
    auth: Option<&str>,
    suites: &[suite::Suite],
    auths: &Auths,
) -> Option<Against> {
    match auth {
        Some(a) if a != auths.baseline => Some(Against {
            suite: suite.to_string(),
            auth: Some(auths.baseline.clone()),
        }),
        auth => {
            let base = suites.iter().find(|x| x.name == suite)?.baseline.clone()?;
            (base != suite).then(|| Against {
                suite: base,
                auth: auth.map(String::from),
            })
        }
    }
}

fn against(s: &Scenario, suites: &[suite::Suite], auths: &Auths) -> Option<Against> {
    against_of(&s.suite, s.auth_name(), suites, auths)
}

fn fill_baselines(
    scenarios: &mut [Scenario],
    suites: &[suite::Suite],
    auths: &Auths,
    results: &Results,
    call_cost_ns: Option<f64>,
) {
    type Snap = (Scenario, Option<(f64, f64, f64)>);
    let snapshot: Vec<Snap> = scenarios
        .iter()
        .map(|s| {
            (
                s.clone(),
                s.insitu
                    .as_ref()
                    .map(|i| (i.crypto_ns, i.remainder_ns, i.calls_per_handshake())),
            )
        })
        .collect();
    let find = |a: &Against, stack: &RealStack, instrumented: bool, mode: Mode| {
        snapshot
            .iter()
            .find(|(x, _)| x.is(a, stack, instrumented) && x.mode == mode)
    };
    for s in scenarios.iter_mut() {
        // The timers' cost: the instrumented median against the plain one, and calls x cost per call.
        if !s.instrumented {
            let own = Against {
                suite: s.suite.clone(),
                auth: s.auth_name().map(String::from),
            };
            if let Some((x, i)) = find(&own, &s.stack, true, s.mode) {
                s.insitu_overhead_pct = Some((x.median_ns / s.median_ns - 1.0) * 100.0);
                if let (Some((_, _, calls)), Some(cost)) = (i, call_cost_ns) {
                    s.insitu_overhead_est_pct = Some(calls * cost / s.median_ns * 100.0);
                }
            }
        }
        let Some(a) = against(s, suites, auths) else {
            continue;
        };
        let found = find(&a, &s.stack, s.instrumented, s.mode);
        // A full handshake names its baseline even where that did not run (check says so);
        // another mode is against a scenario of its own mode only where one ran.
        if found.is_none() && !s.mode.is_full() {
            continue;
        }
        if let Some((x, base_insitu)) = found {
            s.vs_baseline_ratio = Some(s.median_ns / x.median_ns);
            // The paired design's difference (`PAIRING`).
            let d = paired_connections(Connections::of(s), Connections::of(x), PAIRING);
            s.measured_delta_ns = d.map(|d| d.median_ns);
            s.measured_delta_ci95_ns = d.map(|d| (d.lo95_ns, d.hi95_ns));
            s.measured_delta_pairs = d.map(|d| d.pairs);
            if let (Some(i), Some((bc, br, _))) = (s.insitu.as_mut(), base_insitu) {
                i.crypto_delta_ns = Some(i.crypto_ns - bc);
                i.remainder_delta_ns = Some(i.remainder_ns - br);
            }
        }
        s.against = Some(a.clone());
        s.composed_delta_ns =
            crate::figures::handshake::composed_delta(results, s, &a, &auths.baseline);
    }
}
