//! The `run` command: suites -> plan -> measured phases -> composed suites -> results.

use crate::algorithm::{self, Kind, Operation};
use crate::backend::{self, Backend};
use crate::compose;
use crate::measure::{self, Settings, Slot};
use crate::plan;
use crate::results::{
    self, BackendInfo, Composed, Cycles, Failure, Form, Phase, PhaseId, Results, Run, SuitePhase,
    SuiteResult, Timer, Warning,
};
use crate::stats;
use crate::suite::{self, Suite, TrackKind};
use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub(crate) struct Options {
    pub(crate) suites: PathBuf,
    pub(crate) settings: Settings,
    /// Only these backends (all when empty).
    pub(crate) backends: Vec<String>,
    pub(crate) progress: bool,
    /// Start the round-robin at this phase (process samples rotate it so order effects spread).
    pub(crate) rotate: usize,
    /// Also count instructions per phase (callgrind, or qemu's plugin under an emulator).
    pub(crate) counter: bool,
    /// Only the phases of these names (`PhaseId`'s display), as a precision batch asks for.
    pub(crate) only: Option<Vec<String>>,
    /// The suites' bootstrap intervals (a child of `--samples` leaves them to its parent, which
    /// composes the pooled phases again).
    pub(crate) intervals: bool,
    /// This process runs under an emulator: nothing is timed, the phases are counted.
    pub(crate) emulator: Option<crate::emulator::Emulator>,
}

/// Every planned phase's case, built (keys made, inputs made, first outputs checked) and warmed up
/// to its number of iterations, before any timing, those in `situ` also to be timed in a
/// handshake's state; a case that cannot be built is a failure.
fn slots(
    opts: &Options,
    (plan, situ): (&plan::Plan, &[PhaseId]),
    backends: &[Box<dyn Backend>],
    (clock, overhead_ns): (&measure::Timer, f64),
    failures: &mut Vec<Failure>,
) -> Result<Vec<(PhaseId, Slot)>> {
    let mut slots: Vec<(PhaseId, Slot)> = Vec::new();
    for (key, workload) in &plan.phases {
        let Some(alg) = algorithm::find(&key.algorithm) else {
            continue;
        };
        let Some(be) = backends.iter().find(|b| b.name() == key.backend) else {
            continue;
        };
        match crate::case::build(be.as_ref(), alg, key.operation, workload, key.form) {
            Ok(case) => {
                let mut slot = Slot::new(case);
                slot.situ = situ.contains(key);
                slots.push((key.clone(), slot));
            }
            Err(e) => failures.push(failure(key, &e)),
        }
    }
    for (key, slot) in &mut slots {
        crate::interrupt::check()?;
        match measure::warm_up(slot, &opts.settings, clock, overhead_ns) {
            Ok(per_sample) => {
                (slot.target, slot.reason) = measure::iterations_for(&opts.settings, per_sample)
            }
            Err(e) => slot.error = Some(e.context(key.to_string())),
        }
    }
    Ok(slots)
}

/// The Go peer's phases, where it is wanted, added to the run's with the `go` stack's compositions;
/// a peer that cannot run is a note.
fn go_phases(
    opts: &Options,
    suites: &[suite::Suite],
    stacks: &[results::Stack],
    (phases, plan): (&mut Vec<Phase>, &mut plan::Plan),
    notes: &mut Vec<Warning>,
) -> Result<Option<results::GoPeer>> {
    let wanted = |id: &PhaseId| {
        opts.only
            .as_ref()
            .is_none_or(|names| names.contains(&id.to_string()))
    };
    // The tests' deterministic backend runs alone: the Go peer's clock is a real one.
    let go_wanted = !crate::backend::fixed::enabled()
        && opts
            .only
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n.starts_with("go ")));
    Ok(
        if go_wanted && (opts.backends.is_empty() || opts.backends.iter().any(|b| b == "go")) {
            match crate::go::binary().and_then(|bin| crate::go::phases(&bin, &opts.settings)) {
                Ok((go_phases, peer)) => {
                    phases.extend(go_phases.into_iter().filter(|p| wanted(&p.id())));
                    plan.compositions
                        .extend(peer_compositions(suites, stacks, phases, "go"));
                    Some(peer)
                }
                Err(e) => {
                    crate::interrupt::check()?;
                    notes.push(Warning::NotMeasured {
                        what: "the Go stack".into(),
                        reason: format!("{e:#}"),
                    });
                    None
                }
            }
        } else {
            None
        },
    )
}

/// Instructions per call of every phase, under callgrind.
fn count(opts: &Options, phases: &mut [Phase], plan: &plan::Plan) -> Result<results::CounterRun> {
    let mut say = |m: &str| {
        if opts.progress {
            eprintln!("counting instructions: {m}");
        }
    };
    let callgrind = crate::counter::Callgrind::detect()?;
    let native = |p: &Phase| p.stats.median_ns;
    crate::counter::count(&callgrind, phases, &plan.phases, &native, &mut say)
}

/// The plan of pqprof's own phases; only the Go peer asked for: nothing to plan.
fn own_plan(
    suites: &[Suite],
    backends: &[Box<dyn Backend>],
    stacks: &[results::Stack],
) -> Result<plan::Plan> {
    if backends.is_empty() {
        return Ok(plan::Plan {
            phases: Vec::new(),
            compositions: Vec::new(),
        });
    }
    plan::plan(suites, backends, stacks)
}

pub(crate) fn run(opts: &Options) -> Result<Results> {
    let started = Instant::now();
    let backends: Vec<Box<dyn Backend>> = backend::all()
        .into_iter()
        .filter(|b| opts.backends.is_empty() || opts.backends.iter().any(|n| n == b.name()))
        .collect();
    let suites = suite::load(&opts.suites, &backend::names())?;
    let stacks = plan::stacks();
    // Only the Go peer asked for: it composes what it can from its own phases, so nothing to leave out.
    let (suites, skipped) = if opts.backends.is_empty() || backends.is_empty() {
        (suites, Vec::new())
    } else {
        plan::composable(suites, &backends, &stacks)
    };
    let plan = own_plan(&suites, &backends, &stacks)?;
    if let Some(em) = &opts.emulator {
        return emulated(opts, em, &backends, stacks, plan, skipped, started);
    }

    let wanted = |id: &PhaseId| {
        opts.only
            .as_ref()
            .is_none_or(|names| names.contains(&id.to_string()))
    };
    let mut plan = plan;
    plan.phases.retain(|(id, _)| wanted(id));
    // Described before pinning: once pinned, the process sees one core.
    let host = crate::host::describe();
    let core = measure::pin();
    let clock = measure::Timer::detect(Duration::from_millis(200));
    let (overhead_ns, overhead_cycles) = clock.overhead();
    let timer = timer_section(&clock, overhead_ns, overhead_cycles);
    // What a sample must be long against: the timer's cost, or one tick of a coarser counter.
    let overhead_ns = overhead_ns.max(clock.resolution_ns());

    // Setup: every case is built (keys made, inputs made, first outputs checked) before timing.
    let mut failures = Vec::new();
    let situ = plan::situ(&plan, &suites);
    let mut slots = slots(
        opts,
        (&plan, &situ),
        &backends,
        (&clock, overhead_ns),
        &mut failures,
    )?;

    // The calibration reference, timed in every round beside the phases.
    let mut reference = Slot::new(if crate::virtual_clock::on() {
        Box::new(crate::case::Slots::new(crate::case::VirtualReference))
    } else {
        Box::new(crate::case::Slots::new(crate::case::Reference::new()))
    });
    measure::warm_up(&mut reference, &opts.settings, &clock, overhead_ns)?;
    reference.target = CALIBRATION_PER_ROUND * opts.settings.rounds.max(1);
    let total: u64 = slots
        .iter()
        .filter(|(_, s)| s.error.is_none())
        .map(|(_, s)| s.target as u64)
        .sum();
    let bar = progress_bar(total, opts.progress);
    let rounds = opts.settings.rounds.max(1);
    for r in 0..rounds {
        measure::run_chunk(&mut reference, CALIBRATION_PER_ROUND, &clock, core)?;
        // Rotate the order every round so no phase always follows the same one.
        let n = slots.len();
        for j in 0..n {
            let (key, slot) = &mut slots[(j + r + opts.rotate) % n];
            if slot.error.is_some() {
                continue;
            }
            crate::interrupt::check()?;
            let chunk = measure::chunk_size(slot.target, rounds, r);
            bar.set_message(key.to_string());
            if let Err(e) = measure::run_chunk(slot, chunk, &clock, core) {
                slot.error = Some(e);
            }
            bar.inc(chunk as u64);
        }
    }
    bar.finish_and_clear();

    let mut phases = Vec::new();
    for (key, slot) in slots {
        match slot.error {
            Some(e) => failures.push(failure(&key, &e)),
            None => phases.push(phase(
                &key,
                slot,
                backends
                    .iter()
                    .find(|b| b.name() == key.backend)
                    .map(|b| b.as_ref()),
            )),
        }
    }
    // The Go peer's phases, after pqprof's own (a separate program cannot share their rounds), and
    // the compositions of the `go` stack from them.
    let mut notes = Vec::new();
    let go = go_phases(opts, &suites, &stacks, (&mut phases, &mut plan), &mut notes)?;
    let counter = opts
        .counter
        .then(|| count(opts, &mut phases, &plan))
        .transpose()?;
    let flows = crate::flow::load(&opts.suites)?;
    let suites_out = compose_all(&suites, &plan, &phases, opts.intervals, (&flows, &stacks));
    let components = crate::figures::components(&phases, |id| {
        let b = backends.iter().find(|b| b.name() == id.backend)?;
        b.setup(&id.algorithm, id.operation).map(String::from)
    });
    let mut warnings = crate::figures::warnings::phase_warnings(&phases, &opts.settings);
    if !skipped.is_empty() {
        warnings.push(Warning::SuitesLeftOut {
            backends: opts.backends.clone(),
            suites: skipped,
        });
    }
    warnings.extend(notes);

    Ok(Results {
        schema_version: results::SCHEMA_VERSION,
        run: Run {
            wall_seconds: started.elapsed().as_secs_f64(),
            counter,
            calibration: Some(calibration(reference.raw.samples_ns)),
            ..run_header(host, core, &opts.settings, timer)
        },
        backends: backends
            .iter()
            .map(|b| backend_info(b.as_ref()))
            .chain(go_info(&phases, go.as_ref()))
            .collect(),
        stacks,
        phases,
        suites: suites_out,
        failures,
        warnings,
        components,
        process_samples: None,
        crosscheck: None,
        memory: None,
        handshakes: None,
        capacity: None,
        network: None,
        go,
        derived: Default::default(),
    })
}

/// The `run.timer` section: which clock timed the regions, its rate, resolution and cost.
fn timer_section(clock: &measure::Timer, overhead_ns: f64, overhead_cycles: Option<f64>) -> Timer {
    let cntvct = cfg!(target_arch = "aarch64") && clock.tsc_hz.is_some();
    Timer {
        clock: if clock.counts_cycles() {
            "TSC, fenced (lfence; rdtsc; lfence to open, rdtscp; lfence to close); nanoseconds are those cycles at the TSC rate measured against CLOCK_MONOTONIC".into()
        } else if cntvct {
            "CNTVCT_EL0, the generic timer's virtual count, behind an ISB (isb; mrs; isb to open, isb; mrs to close); nanoseconds are its ticks at CNTFRQ_EL0's rate; a time, not a cycle count".into()
        } else if crate::virtual_clock::on() {
            "the tests' virtual clock (PQPROF_TEST_BACKEND=fixed): each call's known time, nothing measured".into()
        } else {
            "CLOCK_MONOTONIC (std::time::Instant); no invariant TSC".into()
        },
        tsc_invariant: clock.counts_cycles(),
        tsc_hz: clock.tsc_hz.filter(|_| !cntvct),
        counter_hz: clock.tsc_hz.filter(|_| cntvct),
        resolution_ns: clock.tsc_hz.map(|_| clock.resolution_ns()),
        overhead_ns,
        overhead_cycles,
        randomness: RANDOMNESS.into(),
    }
}

/// An emulated run (`--emulator`): the same plan, every phase built and verified, nothing timed,
/// every phase counted by qemu's plugin; no compositions (a composition is of times).
fn emulated(
    opts: &Options,
    em: &crate::emulator::Emulator,
    backends: &[Box<dyn Backend>],
    stacks: Vec<results::Stack>,
    plan: plan::Plan,
    skipped: Vec<String>,
    started: Instant,
) -> Result<Results> {
    if !opts.counter {
        anyhow::bail!("an emulated run times nothing: it needs --counter instructions");
    }
    let emulation = em.describe()?;
    let host = crate::host::describe_as(Some(emulation.clone()));
    em.check_cpu(&host)?;
    let counter = em.counter(&emulation)?;
    let core = measure::pin();
    let includes = |key: &PhaseId| {
        let b = backends.iter().find(|b| b.name() == key.backend);
        includes(key, b.map(|b| b.as_ref()))
    };
    let mut say = |m: &str| {
        if opts.progress {
            eprintln!("counting instructions under {}: {m}", emulation.cpu);
        }
    };
    let (phases, failures, counted) =
        crate::emulator::count_phases(backends, &plan, &counter, &includes, &mut say)?;
    let mut warnings = Vec::new();
    if !skipped.is_empty() {
        warnings.push(Warning::SuitesLeftOut {
            backends: opts.backends.clone(),
            suites: skipped,
        });
    }
    if opts.backends.is_empty() || opts.backends.iter().any(|b| b == "go") {
        warnings.push(Warning::NotMeasured {
            what: "the Go stack".into(),
            reason:
                "an emulated run counts pqprof's own phases only (the Go peer is another program)"
                    .into(),
        });
    }
    let emulated_timer = Timer {
                clock: format!("none: emulated by {} (its clock is the host's, stretched by translation); instruction counts only", emulation.emulator),
                tsc_invariant: false,
                tsc_hz: None,
                counter_hz: None,
                resolution_ns: None,
                overhead_ns: 0.0,
                overhead_cycles: None,
                randomness: RANDOMNESS.into(),
            };
    Ok(Results {
        schema_version: results::SCHEMA_VERSION,
        run: Run {
            wall_seconds: started.elapsed().as_secs_f64(),
            counter: Some(counted),
            calibration: None,
            ..run_header(host, core, &opts.settings, emulated_timer)
        },
        backends: backends.iter().map(|b| backend_info(b.as_ref())).collect(),
        stacks,
        phases,
        suites: Vec::new(),
        failures,
        warnings,
        components: Vec::new(),
        process_samples: None,
        crosscheck: None,
        memory: None,
        handshakes: None,
        capacity: None,
        network: None,
        go: None,
        derived: Default::default(),
    })
}

/// What every run's header says about the build and the machine, timed or emulated (the caller
/// sets the timer, the wall time, the counter and the calibration).
fn run_header(
    host: crate::results::Host,
    core: Option<usize>,
    settings: &Settings,
    timer: Timer,
) -> Run {
    Run {
        date_utc: crate::host::utc_now(),
        tool_commit: env!("PQPROF_COMMIT").into(),
        host,
        liboqs_version: backend::liboqs::liboqs_version(),
        liboqs_dist_build: true,
        openssl_version: openssl::version::version().into(),
        rustc_version: env!("PQPROF_RUSTC").into(),
        build_profile: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
        .into(),
        pinned_core: core,
        iterations_policy: settings.clone(),
        timer,
        wall_seconds: 0.0,
        counter: None,
        calibration: None,
    }
}

fn failure(key: &PhaseId, e: &anyhow::Error) -> Failure {
    Failure::new(key, format!("{e:#}"))
}

fn progress_bar(total: u64, show: bool) -> ProgressBar {
    // indicatif draws nothing when stderr is not a terminal.
    let target = if show {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {percent:>3}% {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

fn phase(key: &PhaseId, slot: Slot, be: Option<&dyn Backend>) -> Phase {
    let cycles = (!slot.raw.cycles.is_empty()).then(|| {
        let c: Vec<f64> = slot.raw.cycles.iter().map(|&x| x as f64).collect();
        Cycles {
            mean: stats::mean(&c),
            median: stats::median(&c),
        }
    });
    let includes = includes(key, be);
    let mut raw = slot.raw;
    let situ = crate::figures::situ(
        measure::SITU_EVICT_BYTES as u64,
        measure::SITU_WAIT.as_nanos() as u64,
        std::mem::take(&mut raw.situ_ns),
        Vec::new(),
    );
    let mut p = crate::figures::measured_phase(
        key.clone(),
        raw.samples_ns,
        crate::figures::Measured {
            iterations_reason: slot.reason,
            warmup: raw.warmup,
            verified: raw.verified,
            includes,
            steal_pct: (raw.jiffies > 0).then(|| raw.steal as f64 * 100.0 / raw.jiffies as f64),
            run_delay_pct: (raw.wall_ns > 0)
                .then(|| raw.run_delay_ns as f64 * 100.0 / raw.wall_ns as f64),
            timed_ms: Some(raw.timed_ns / 1e6),
            cycles,
            batch: slot.batch,
        },
    );
    p.situ = situ;
    p
}

/// What a phase's timed call contains, in words (`Phase::includes`).
fn includes(key: &PhaseId, be: Option<&dyn Backend>) -> String {
    match (key.form, be) {
        (Form::Primitive, Some(b)) => format!(
            "the primitive alone: {}",
            primitive_includes(b, &key.algorithm, key.operation)
        ),
        (Form::Handshake, Some(b)) => b.includes(key.operation).to_string(),
        (_, None) => String::new(),
    }
}

/// What the primitive form leaves out, from the backend's description of the handshake form's setup.
fn primitive_includes(b: &dyn Backend, algorithm: &str, op: Operation) -> String {
    match (b.setup(algorithm, op), op.kind()) {
        (Some(setup), _) => format!("the same call with {setup} done once, before timing"),
        (None, algorithm::Kind::Sig) => {
            "one fixed 50-byte message signed / verified again and again, as liboqs's speed_sig"
                .into()
        }
        (None, _) => b.includes(op).into(),
    }
}

/// Reference samples per round: 100 SHA-256 calls of 4 KiB, about 0.24 ms on the machine the
/// reference is pinned to (2,364 ns each).
pub(crate) const CALIBRATION_PER_ROUND: usize = 100;
/// The reference workload's median on this project's baseline machine: the committed run
/// results/archive/vm-20261130T143648Z-a2ce70.json (AMD EPYC, Zen 4, 2.6 GHz TSC),
/// `run.calibration.median_ns`. Calibrated figures are in that machine's time.
pub(crate) const CALIBRATION_PINNED_NS: f64 = 2_364.0;

pub(crate) fn calibration(samples_ns: Vec<u64>) -> results::Calibration {
    crate::figures::calibration(
        crate::case::Reference::DESCRIPTION,
        samples_ns,
        CALIBRATION_PER_ROUND,
        CALIBRATION_PINNED_NS,
    )
}

/// The randomness policy every backend follows (see each backend's file).
pub(crate) const RANDOMNESS: &str = "every backend draws from a user-space CSPRNG seeded once, so no timed call makes a system call for randomness: OpenSSL's and liboqs's (through OpenSSL) DRBG, aws-lc's DRBG, and for RustCrypto rand's StdRng (ChaCha12) seeded once per thread from getrandom";

/// Compositions of a stack whose backend is an outside program (the Go peer): every suite of a
/// protocol the stack composes whose phases that backend all measured.
fn peer_compositions(
    suites: &[Suite],
    stacks: &[plan::Stack],
    phases: &[Phase],
    stack: &str,
) -> Vec<plan::Composition> {
    let Some(st) = stacks.iter().find(|s| s.name == stack) else {
        return Vec::new();
    };
    suites
        .iter()
        .enumerate()
        .filter(|(_, s)| st.composes(&s.protocol))
        .filter(|(_, s)| {
            s.phases.iter().all(|p| {
                let b = plan::backend_for(st, &p.algorithm);
                phases.iter().any(|q| {
                    q.form == Form::Handshake
                        && q.backend == b
                        && q.algorithm == p.algorithm
                        && q.operation == p.operation
                })
            })
        })
        .map(|(i, s)| plan::Composition {
            suite: i,
            stack: stack.into(),
            backends: s
                .phases
                .iter()
                .map(|p| plan::backend_for(st, &p.algorithm).to_string())
                .collect(),
        })
        .collect()
}

fn compose_all(
    suites: &[Suite],
    plan: &plan::Plan,
    phases: &[Phase],
    intervals: bool,
    (flows, stacks): (&[crate::flow::FlowDef], &[results::Stack]),
) -> Vec<SuiteResult> {
    let mut out: Vec<SuiteResult> = Vec::new();
    for c in &plan.compositions {
        let s = &suites[c.suite];
        let parts: Vec<SuitePhase> = s
            .phases
            .iter()
            .zip(&c.backends)
            .map(|(p, b)| SuitePhase {
                backend: b.clone(),
                algorithm: p.algorithm.clone(),
                operation: p.operation,
                count: p.count,
            })
            .collect();
        // A suite whose phase failed is left out; the failure is listed in the results.
        let Ok(composed) = compose::compose(&parts, phases) else {
            continue;
        };
        let instructions = compose::instructions(&parts, phases);
        // Placed in its protocol's flow where the flights file places every operation of it,
        // with the pairs of segments its stack runs at once.
        let flow = flows
            .iter()
            .filter(|_| {
                matches!(
                    s.kind,
                    TrackKind::Kex | TrackKind::Full | TrackKind::Resumed
                )
            })
            .find(|f| f.protocol == s.protocol)
            .and_then(|f| crate::flow::segments(f, &parts))
            .and_then(|segments| {
                let overlap = stacks
                    .iter()
                    .find(|st| st.name == c.stack)
                    .map_or(&[][..], |st| &st.overlap[..]);
                crate::flow::figures(segments, overlap, phases)
            });
        let mut r = suite_result(s, &c.stack, parts, composed);
        r.instructions = instructions;
        r.flow = flow;
        out.push(r);
    }
    if intervals {
        fill_deltas(&mut out, phases);
    } else {
        deltas(&mut out);
    }
    out
}

/// Deltas against each suite's baseline (same stack) and the bootstrap intervals.
pub(crate) fn fill_deltas(out: &mut [SuiteResult], phases: &[Phase]) {
    deltas(out);
    let intervals = compose::intervals(out, phases);
    for (s, (ci, dci)) in out.iter_mut().zip(intervals) {
        s.composed.median_ci95_ns = ci;
        s.delta_ci95_pct = dci.filter(|_| s.delta_vs_baseline_pct.is_some());
    }
}

/// Each suite's difference from its baseline's median (same stack), percent.
fn deltas(out: &mut [SuiteResult]) {
    let medians: Vec<(String, String, f64)> = out
        .iter()
        .map(|s| (s.name.clone(), s.stack.clone(), s.composed.median_ns))
        .collect();
    for s in out.iter_mut() {
        let Some(base) = &s.baseline else { continue };
        if let Some((_, _, m)) = medians
            .iter()
            .find(|(n, st, _)| n == base && *st == s.stack)
        {
            s.delta_vs_baseline_pct =
                (base != &s.name).then(|| compose::delta_pct(s.composed.median_ns, *m));
        }
    }
}

fn suite_result(s: &Suite, stack: &str, parts: Vec<SuitePhase>, composed: Composed) -> SuiteResult {
    let sig = s
        .phases
        .iter()
        .find(|p| p.operation.kind() == Kind::Sig)
        .and_then(|p| algorithm::find(&p.algorithm));
    SuiteResult {
        name: s.name.clone(),
        protocol: s.protocol.clone(),
        kind: s.kind,
        stack: stack.into(),
        baseline: s.baseline.clone(),
        code_point: s.code_point.clone(),
        wire_bytes: s.wire_bytes(),
        phases: parts,
        ops_per_sec: stats::ops_per_sec(composed.mean_ns),
        tail: composed.p99_ns / composed.median_ns,
        composed,
        delta_vs_baseline_pct: None,
        delta_ci95_pct: None,
        public_key_bytes: sig.and_then(|a| a.public_key),
        signature_bytes: sig.and_then(|a| a.signature),
        family: sig.map(|a| a.family.clone()),
        payload_bytes: (s.kind == TrackKind::Record).then_some(s.workload.payload_bytes),
        source_file: s.at.file.display().to_string(),
        instructions: None,
        flow: None,
    }
}

/// The Go peer as a backend entry, when it was measured.
fn go_info(phases: &[Phase], go: Option<&results::GoPeer>) -> Option<BackendInfo> {
    let g = go?;
    Some(BackendInfo {
        name: "go".into(),
        version: format!("{} {}/{} standard library (crypto/mlkem, crypto/ecdh, crypto/ecdsa, crypto/mldsa, crypto/aes + crypto/cipher, crypto/hkdf, crypto/hmac, crypto/sha512)", g.go_version, g.goos, g.goarch),
        names: Vec::new(),
        build: format!("the Go peer (peers/go), GOMAXPROCS={}; Go's own assembly for AES-GCM, SHA-2 and P-256, pure Go ML-KEM and X25519 field arithmetic", g.gomaxprocs),
        covers: phases.iter().filter(|p| p.backend == "go").map(|p| format!("{} {}", p.algorithm, p.operation)).collect(),
    })
}

fn backend_info(b: &dyn Backend) -> BackendInfo {
    let names = algorithm::all()
        .iter()
        .filter(|a| {
            Operation::ALL
                .iter()
                .any(|op| op.kind() == a.kind && b.supports(&a.name, *op))
        })
        .filter_map(|a| {
            b.native_name(&a.name)
                .map(|n| (a.name.clone(), n.to_string()))
        })
        .collect();
    let covers = algorithm::all()
        .iter()
        .flat_map(|a| {
            Operation::ALL
                .iter()
                .filter(move |op| op.kind() == a.kind)
                .map(move |op| (a, *op))
        })
        .filter(|(a, op)| b.supports(&a.name, *op))
        .map(|(a, op)| format!("{} {op}", a.name))
        .collect();
    BackendInfo {
        name: b.name().into(),
        version: b.version(),
        names,
        build: b.build(),
        covers,
    }
}
