//! What each subcommand does, between the CLI and the modules.

use crate::algorithm::{self, Operation};
use crate::backend;
use crate::cli::{Command, RunArgs};
use crate::measure::Settings;
use crate::results::Results;
use crate::{check, render, results, run, suite};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

mod capacity;
mod children;
mod crosscheck;
mod handshake;
mod memory;
mod network;

/// The cores kept out of idle while a step times handshakes (host::hold_off_idle), or the note
/// that says why they were not.
struct Idle(Result<crate::host::NoIdle, crate::results::Warning>);

impl Idle {
    fn hold(step: &str) -> Idle {
        Idle(
            crate::host::hold_off_idle().map_err(|reason| crate::results::Warning::IdleWakeups {
                step: step.into(),
                reason,
            }),
        )
    }

    /// Lets the cores idle again; the note for the step's section where they were never held.
    fn release(self) -> Option<crate::results::Warning> {
        self.0.err()
    }
}

pub fn execute(command: Command) -> Result<()> {
    match command {
        Command::Run(args) => run_cmd(args),
        Command::List { suites } => list(&suites),
        Command::Check {
            files,
            site,
            full,
            seed,
        } => check(&files, site.as_deref(), full, seed),
        Command::Compare {
            a,
            b,
            format,
            out,
            threshold,
        } => {
            let c = crate::comparison::compare(&results::read(&a)?, &results::read(&b)?, threshold);
            emit(
                out.as_deref(),
                crate::comparison::render(&c, format)?.as_bytes(),
            )
        }
        Command::Export {
            file,
            format,
            sections,
            out,
        } => {
            if is_probe_file(&file) {
                if let Some(s) = sections
                    .iter()
                    .find(|s| **s != crate::export::Section::Probe)
                {
                    bail!(
                        "{}: a probe's file has no {} section: only probe",
                        file.display(),
                        s.name()
                    );
                }
                let p = results::read_probe(&file)?.probe;
                let source = crate::export::Source::probe(&p);
                let table = crate::export::probe_table(&p);
                return emit(
                    out.as_deref(),
                    &crate::export::exporter(format).serialize(&source, &table)?,
                );
            }
            let r = results::read(&file)?;
            let sections = if sections.is_empty() {
                vec![
                    crate::export::Section::Phases,
                    crate::export::Section::Suites,
                ]
            } else {
                sections
            };
            let table = crate::export::table(&r, &sections)?;
            emit(
                out.as_deref(),
                &crate::export::exporter(format)
                    .serialize(&crate::export::Source::run(&r), &table)?,
            )
        }
        Command::League { file } => {
            let r = results::read(&file.map_or_else(newest_results, Ok)?)?;
            print!(
                "{}",
                crate::league::render_text(&r, &crate::league::league_builtin(&r))
            );
            Ok(())
        }
        Command::Spread(args) => spread(&args.files),
        Command::Crosscheck(args) => crosscheck::crosscheck(args),
        Command::Handshake(args) => handshake::handshake(args),
        Command::Capacity(args) => capacity::capacity(args),
        Command::Network(args) => network::network(args),
        Command::NetemRouter { client_if } => crate::network::router::router_main(&client_if),
        Command::CapacityServer(args) => children::capacity_server(args),
        Command::HandshakeServer(args) => children::handshake_server(args),
        Command::LabServer(args) => crate::stack::lab_server(
            &args.server,
            &args.group,
            &args.identity,
            args.bind,
            args.mode,
        ),
        Command::Probe(args) => crate::probe::probe(&crate::probe::Options {
            target: args.target,
            sni: args.sni,
            ca: args.ca,
            insecure: args.insecure,
            per_second: args.rate,
            max_connections: args.max_connections,
            rounds: args.rounds,
            timeout: std::time::Duration::from_secs(args.timeout_s),
            out: args.out,
        }),
        Command::ProbeTarget(args) => children::probe_target(args),
        Command::ProbeEmulated(a) => {
            crate::network::probe::probe(&crate::network::probe::Options {
                rtt_ms: a.rtt_ms,
                stack: a.stack,
                group: a.group,
                auth: a.auth,
                rounds: a.rounds,
                out: a.out,
            })
        }
        Command::Render(args) => render_site(args),
        Command::CountPhase(args) => children::count_phase(args),
        Command::Memory(args) => memory::memory(args),
        Command::MemoryChild(args) => children::memory_child(args),
        Command::OpensslVersion => {
            println!("{}", openssl::version::version());
            Ok(())
        }
        Command::ResultsPath { emulation } => {
            let emulated = emulation.emulator().map(|e| e.describe()).transpose()?;
            println!(
                "{}",
                crate::host::results_path(
                    &crate::host::describe_as(emulated),
                    &crate::host::utc_now()
                )
                .display()
            );
            Ok(())
        }
    }
}

/// `pqprof spread`: how far the same measurement moved between runs, and how often one run's
/// intervals held the others'.
fn spread(files: &[PathBuf]) -> Result<()> {
    let runs = files
        .iter()
        .map(|f| results::read(f))
        .collect::<Result<Vec<_>>>()?;
    for (name, pct) in crate::comparison::spread(&runs) {
        println!("{pct:6.2}%  {name}");
    }
    for (name, pp) in crate::comparison::delta_spread(&runs) {
        println!("{pp:6.2}pp delta vs baseline  {name}");
    }
    for (name, pct) in crate::comparison::calibrated_spread(&runs) {
        println!("{pct:6.2}% calibrated  {name}");
    }
    for (all, what) in [
        (false, "consecutive runs"),
        (true, "every ordered pair of runs"),
    ] {
        use crate::comparison as c;
        for (coverage, of_what) in [
            (c::delta_coverage(&runs, all), "paired handshake differences"),
            (
                c::share_coverage(&runs, all),
                "paired differences as shares of their baselines (the form the host's speed cancels in)",
            ),
            (c::coverage(&runs, all), "phase medians"),
        ] {
            if let Some(line) = coverage.sentence(what, of_what) {
                println!("{line}");
            }
        }
    }
    Ok(())
}

/// `pqprof render`: the static site.
fn render_site(args: crate::cli::RenderArgs) -> Result<()> {
    let crate::cli::RenderArgs {
        files,
        all,
        out,
        source_url,
        baseline,
    } = args;
    render::render(
        &files,
        &out,
        &render::Options {
            source_url,
            baseline,
            all,
        },
    )?;
    println!(
        "{}/index.html: {} results file(s) rendered",
        out.display(),
        render::inputs(&files)?.len()
    );
    Ok(())
}

/// An error where some of a step's measurements failed, once the others are written to `file`.
fn failed(file: &Path, count: usize, what: &str) -> Result<()> {
    if count > 0 {
        bail!("{count} {what}; the others are in {}", file.display());
    }
    Ok(())
}

/// A check's problems, one a line, each with its section and kind.
fn lines(problems: &[crate::check::Problem]) -> String {
    problems
        .iter()
        .map(crate::check::Problem::line)
        .collect::<Vec<_>>()
        .join("\n  ")
}

/// Writes a results file a section was just added to, once the whole file holds against its own
/// raw data (what `pqprof check` would say), so a section `check` rejects never lands; with the
/// figures its pages derive, made again for the file as it now is (`render::derive`).
fn write_section(file: &Path, r: &mut Results, section: crate::check::Section) -> Result<()> {
    let problems = crate::check::check_section(r, section);
    if !problems.is_empty() {
        bail!(
            "{}: the {} section does not hold against its own raw data:\n  {}",
            file.display(),
            section.name(),
            lines(&problems)
        );
    }
    r.derived = render::derive(r);
    results::update(file, r)
}

/// Reads the results file a producer adds a section to; refuses to replace a section that is
/// already there unless `force`, since that would lose what was measured.
fn section_target(
    file: &Path,
    existing: impl Fn(&Results) -> Option<String>,
    section: &str,
    force: bool,
) -> Result<Results> {
    let r = results::read(file)?;
    if let (Some(date), false) = (existing(&r), force) {
        bail!("{}: already has a {section} section (from {date}); pass --force to replace it, or measure into a new results file", file.display());
    }
    Ok(r)
}

fn run_cmd(args: RunArgs) -> Result<()> {
    if !(args.precision.is_finite() && args.precision > 0.0) {
        bail!(
            "--precision {}: a target is a positive percentage",
            args.precision
        );
    }
    let defaults = Settings::default();
    let settings = Settings {
        budget_ms: args.budget_ms,
        rounds: args.rounds as usize,
        forced: args.iterations.map(|n| n as usize),
        default_iterations: args
            .worker_iterations
            .unwrap_or(defaults.default_iterations),
        min_iterations: args.worker_floor.unwrap_or(defaults.min_iterations),
        warmup_ms: args.worker_warmup_ms.unwrap_or(defaults.warmup_ms),
        ..defaults
    };
    let only = match &args.only {
        Some(f) => Some(
            std::fs::read_to_string(f)
                .with_context(|| format!("{}: cannot read the phase list", f.display()))?
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(String::from)
                .collect(),
        ),
        None => None,
    };
    let emulator = args.emulation.emulator();
    let out = match &args.out {
        Some(o) => o.clone(),
        None => {
            let emulated = emulator.as_ref().map(|e| e.describe()).transpose()?;
            crate::host::results_path(&crate::host::describe_as(emulated), &crate::host::utc_now())
        }
    };
    // Before minutes of measuring: the folder must take a file, and the file must be new.
    results::check_writable(
        out.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    )?;
    if out.exists() && !args.force {
        bail!("{}: already exists; pqprof never overwrites a results file (choose another --out, or pass --force)", out.display());
    }
    // A child of --samples, a counted run, an emulated one (it times nothing) and `--samples 1`
    // measure in this process.
    let one_process = args.samples == 1
        || args.counter.is_some()
        || emulator.is_some()
        || args.only.is_some()
        || args.worker_iterations.is_some();
    let emulated = emulator.is_some();
    let mut results = if !one_process {
        crate::samples::run_samples(&crate::samples::Options {
            samples: args.samples as usize,
            suites: args.suites.clone(),
            budget_ms: args.budget_ms,
            rounds: args.rounds,
            iterations: args.iterations,
            backends: args.backends.clone(),
            quiet: args.quiet,
            precision_pct: args.precision,
            budget: crate::budget::from_secs(args.budget_s),
        })?
    } else {
        let opts = run::Options {
            suites: args.suites.clone(),
            settings,
            backends: args.backends.clone(),
            progress: !args.quiet,
            rotate: args.rotate,
            counter: args.counter.is_some(),
            only,
            intervals: args.worker_iterations.is_none(),
            emulator,
        };
        let mut r = run::run(&opts)?;
        if args.worker_iterations.is_none() && !emulated {
            // One process is a fixed design: nothing is added to reach the target.
            crate::samples::set_precision(&mut r.phases, args.precision, true, None, 0);
            r.run.iterations_policy.target_pct = Some(args.precision);
            r.warnings
                .extend(crate::samples::precision_warnings(&r.phases));
        }
        r
    };
    // A child of `--samples` leaves the warnings, the summary and the derived figures to its
    // parent, which pools them.
    let child = args.worker_iterations.is_some();
    if !child {
        results.derived = render::derive(&results);
    }
    results::create(&out, &results, args.force)?;
    if !child {
        eprint!("{}", crate::tables::warnings(&results.warnings, 3));
    }
    for f in &results.failures {
        eprintln!(
            "warning: {} {} {} was not measured: {}",
            f.backend, f.algorithm, f.operation, f.error
        );
    }
    if !child {
        println!(
            "{}: {} phases, {} suite compositions, {:.0} s",
            out.display(),
            results.phases.len(),
            results.suites.len(),
            results.run.wall_seconds
        );
    }
    // A child's file is pooled and checked by its parent; the composed intervals, resampled a
    // moment ago by the pooling, are resampled again from the file by `pqprof check`.
    let problems = if child {
        Vec::new()
    } else {
        check::check_just_composed(&results)
    };
    if !problems.is_empty() {
        bail!(
            "the results just written fail their own check:\n  {}",
            lines(&problems)
        );
    }
    if !results.failures.is_empty() {
        bail!(
            "{} phase(s) failed; the others are in {}",
            results.failures.len(),
            out.display()
        );
    }
    Ok(())
}

fn list(suites_path: &Path) -> Result<()> {
    let suites = suite::load(suites_path, &backend::names())?;
    println!("Suites ({}):", suites_path.display());
    for s in &suites {
        let phases: Vec<String> = s
            .phases
            .iter()
            .map(|p| format!("{} {} x{}", p.algorithm, p.operation, p.count))
            .collect();
        let wire = s
            .wire_bytes()
            .map_or(String::new(), |w| format!(", {w} B on the wire"));
        println!(
            "  {:<24} {:?} {}{wire}: {}",
            s.name,
            s.kind,
            s.protocol,
            phases.join(", ")
        );
    }
    println!("\nAlgorithms (algorithms.toml):");
    for a in algorithm::all() {
        println!(
            "  {:<20} {:?}, {}, source: {}",
            a.name, a.kind, a.family, a.source
        );
    }
    let backends = backend::all();
    println!("\nBackends:");
    for b in &backends {
        println!("  {:<11} {}", b.name(), b.version());
        println!("  {:<11} build: {}", "", b.build());
    }
    match crate::go::binary().and_then(|bin| crate::go::version(&bin)) {
        Ok(v) => println!(
            "  {:<11} {} {}/{} through the Go peer; TLS groups {}",
            "go",
            v.go_version,
            v.goos,
            v.goarch,
            v.groups.join(", ")
        ),
        Err(e) => println!("  {:<11} not available: {e:#}", "go"),
    }
    println!("\nSupport (backend's own name):");
    for a in algorithm::all() {
        for op in Operation::ALL.iter().filter(|o| o.kind() == a.kind) {
            let cells: Vec<String> = backends
                .iter()
                .map(
                    |b| match (b.supports(&a.name, *op), b.native_name(&a.name)) {
                        (true, Some(n)) => format!("{}={n}", b.name()),
                        (true, None) => b.name().to_string(),
                        _ => format!("{}=-", b.name()),
                    },
                )
                .collect();
            println!("  {:<20} {:<13} {}", a.name, op.name(), cells.join("  "));
        }
    }
    println!("\nStacks:");
    for s in crate::plan::stacks() {
        println!(
            "  {:<11} {} (post-quantum: {}, classical: {})",
            s.name, s.description, s.post_quantum, s.classical
        );
    }
    Ok(())
}

/// Whether `f` is a probe's file (results/probes/) rather than a machine's run.
fn is_probe_file(f: &Path) -> bool {
    std::fs::read_to_string(f).is_ok_and(|t| results::is_probe_text(&t))
}

fn check(files: &[PathBuf], site: Option<&Path>, full: bool, seed: Option<u64>) -> Result<()> {
    if files.is_empty() && site.is_none() {
        bail!("nothing to check: give results files, --site DIR, or both");
    }
    let mut failed = 0;
    if let Some(dir) = site {
        let problems = render::verify::check_site(dir)?;
        if problems.is_empty() {
            println!(
                "{}: ok (every card's phases add up to its composed mean and to 100%)",
                dir.display()
            );
        } else {
            failed += 1;
            eprintln!("{}: {} problem(s):", dir.display(), problems.len());
            for p in &problems {
                eprintln!("  {p}");
            }
        }
    }
    for f in files {
        if is_probe_file(f) {
            let p = results::read_probe(f)?.probe;
            let problems = check::probe::check(&p);
            if problems.is_empty() {
                println!(
                    "{}: ok (a probe of {}: {} connections, findings recomputed)",
                    f.display(),
                    p.target,
                    p.connections.len()
                );
            } else {
                failed += 1;
                eprintln!("{}: {} problem(s):", f.display(), problems.len());
                eprintln!("  {}", lines(&problems));
            }
            continue;
        }
        let r = results::read(f)?;
        // Every figure from this file's raw samples, none looked up (`derived::fresh`).
        // A new sample of the full handshakes each time, unless a seed is given.
        let seed = seed.unwrap_or_else(sample_seed);
        let intervals = if full {
            check::Intervals::All
        } else {
            check::Intervals::Sampled { seed }
        };
        // The file's own figures and the pages' derived ones are independent: each on a thread
        // of its own, as each leaves cores idle in its serial parts.
        let (mut problems, derived) = std::thread::scope(|scope| {
            let own =
                scope.spawn(|| pqprof_core::derived::fresh(|| check::check_with(&r, intervals)));
            let derived = render::check_derived(&r);
            let own = own.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            (own, derived)
        });
        problems.extend(derived);
        if problems.is_empty() {
            let resampled = check::resampled_suites(&r, intervals);
            println!(
                "{}: ok ({} phases, {} suites; identity holds within {}%; composed intervals of {} resampled{})",
                f.display(),
                r.phases.len(),
                r.suites.len(),
                check::TOLERANCE_PCT,
                if resampled == r.suites.len() {
                    "every suite".to_string()
                } else {
                    format!("{resampled} of them")
                },
                if full || resampled == r.suites.len() {
                    String::new()
                } else {
                    format!(", the sample of --seed {seed}; --full: every one")
                }
            );
        } else {
            failed += 1;
            eprintln!("{}: {} problem(s):", f.display(), problems.len());
            eprintln!("  {}", lines(&problems));
        }
    }
    if failed > 0 {
        bail!("{failed} file(s) failed the check");
    }
    Ok(())
}

/// A seed for `check`'s sample of the suites: the clock's nanoseconds and the process id, so two
/// checks of one file resample different full handshakes.
fn sample_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    // Six digits: short enough to type back after --seed.
    (nanos ^ u64::from(std::process::id()).rotate_left(32)) % 1_000_000
}

/// Writes to a file (atomically) or to standard output.
fn emit(out: Option<&Path>, bytes: &[u8]) -> Result<()> {
    match out {
        Some(path) => results::write_atomic(path, bytes),
        None => {
            use std::io::Write;
            std::io::stdout().write_all(bytes)?;
            Ok(())
        }
    }
}

/// The newest results file in results/: the one whose run was measured last (its recorded UTC
/// time), whatever the files are called or when they were copied.
fn newest_results() -> Result<PathBuf> {
    let files = results::results_files(Path::new("results"))
        .map_err(|e| anyhow::anyhow!("results/: {e}"))?;
    let dated: Vec<(String, PathBuf)> = files
        .into_iter()
        .filter_map(|p| results::read(&p).ok().map(|r| (r.run.date_utc, p)))
        .collect();
    dated.into_iter().max().map(|(_, p)| p).ok_or_else(|| {
        anyhow::anyhow!(
            "no readable results file in results/: run `make run` first or pass --results FILE"
        )
    })
}
