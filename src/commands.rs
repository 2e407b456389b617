//! What each subcommand does, between the CLI and the modules.

use crate::algorithm::{self, Operation};
use crate::backend;
use crate::cli::{Command, RunArgs};
use crate::measure::Settings;
use crate::results::{Agreement, Results};
use crate::{check, render, results, run, suite};
use anyhow::{bail, ensure, Context, Result};
use std::path::{Path, PathBuf};

pub fn execute(command: Command) -> Result<()> {
    match command {
        Command::Run(args) => run_cmd(args),
        Command::List { suites } => list(&suites),
        Command::Check { files, site } => check(&files, site.as_deref()),
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
        Command::Export { file, format, out } => emit(
            out.as_deref(),
            &crate::export::exporter(format).serialize(&results::read(&file)?)?,
        ),
        Command::League { file } => {
            let r = results::read(&file.map_or_else(newest_results, Ok)?)?;
            print!(
                "{}",
                crate::league::render_text(&r, &crate::league::league_builtin(&r))
            );
            Ok(())
        }
        Command::Spread { files } => {
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
        Command::Crosscheck {
            results: file,
            references,
            duration,
            rounds,
            max_rounds,
            only,
            tolerance,
            strict,
            no_openssl,
            force,
        } => {
            let file = file.map_or_else(newest_results, Ok)?;
            let mut r = section_target(
                &file,
                |r| r.crosscheck.as_ref().map(|c| c.date_utc.clone()),
                "crosscheck",
                force,
            )?;
            ensure!(
                rounds >= 2,
                "--rounds {rounds}: a 95% interval needs at least 2 rounds"
            );
            ensure!(
                max_rounds >= rounds,
                "--max-rounds {max_rounds} is below --rounds {rounds}"
            );
            let opts = crate::crosscheck::Options {
                results: file.clone(),
                references,
                duration_s: duration.max(1),
                rounds,
                max_rounds,
                only,
                tolerance_pct: tolerance,
                openssl: !no_openssl,
            };
            let c = crate::crosscheck::run(&opts, &mut |m| eprintln!("crosscheck: {m}"))?;
            print!("{}", crate::tables::crosscheck::table(&c));
            let count = |v: Agreement| c.rows.iter().filter(|r| r.verdict == Some(v)).count();
            let (agree, undecided, disagree) = (
                count(Agreement::Agree),
                count(Agreement::Undecided),
                count(Agreement::Disagree),
            );
            println!(
                "\n{agree} of {} phases agree within {tolerance}%, {undecided} undecided, {disagree} disagree; {:.0} s; written to {}",
                c.rows.len(),
                c.wall_seconds,
                file.display()
            );
            r.crosscheck = Some(c);
            write_section(&file, &r, crate::check::Section::Crosscheck)?;
            if strict && undecided + disagree > 0 {
                bail!("{disagree} phase(s) disagree and {undecided} are undecided (--strict wants every phase to agree)");
            }
            Ok(())
        }
        Command::Handshake {
            results: file,
            suites,
            samples,
            per_sample,
            precision,
            max_samples,
            budget_s,
            force,
            stacks,
        } => {
            if !(precision > 0.0 && precision.is_finite()) {
                bail!("--precision {precision}: a target is a positive percentage");
            }
            let file = file.map_or_else(newest_results, Ok)?;
            let mut r = section_target(
                &file,
                |r| r.handshakes.as_ref().map(|h| h.date_utc.clone()),
                "handshakes",
                force,
            )?;
            let opts = crate::handshake::Options {
                suites,
                samples: samples as usize,
                per_sample: per_sample as usize,
                precision_pct: precision,
                max_samples: (max_samples as usize).max(samples as usize),
                budget: (budget_s > 0).then(|| std::time::Duration::from_secs(budget_s)),
                stacks,
            };
            let h = crate::handshake::run(&opts, &r, &mut |m| eprintln!("handshake: {m}"))?;
            print!("{}", crate::tables::handshake::table(&h, &r));
            println!(
                "\n{} scenarios, {} failed; {:.0} s; written to {}",
                h.scenarios.len(),
                h.failures.len(),
                h.wall_seconds,
                file.display()
            );
            let failed = h.failures.len();
            r.handshakes = Some(h);
            write_section(&file, &r, crate::check::Section::Handshakes)?;
            if failed > 0 {
                bail!(
                    "{failed} handshake scenario(s) failed; the others are in {}",
                    file.display()
                );
            }
            Ok(())
        }
        Command::Capacity {
            results: file,
            force,
            quick,
            stacks,
            suites,
            connections,
            budget_s,
        } => {
            let file = file.map_or_else(newest_results, Ok)?;
            let mut r = section_target(
                &file,
                |r| r.capacity.as_ref().map(|c| c.date_utc.clone()),
                "capacity",
                force,
            )?;
            let mut opts = crate::capacity::Options::default_for(quick, &suites)?;
            if !stacks.is_empty() {
                opts.stacks = stacks
                    .iter()
                    .map(|s| crate::stack::find(s))
                    .collect::<Result<_>>()?;
            }
            if !connections.is_empty() {
                opts.connections = connections.iter().map(|&c| c as usize).collect();
                // The other authentications hold the smallest step.
                opts.auth_connections =
                    opts.connections.iter().min().into_iter().copied().collect();
            }
            opts.budget = (budget_s > 0).then(|| std::time::Duration::from_secs(budget_s));
            let c = crate::capacity::run(&opts, &r, &mut |m| eprintln!("{m}"))?;
            print!("{}", crate::tables::capacity::table(&c));
            println!(
                "\ncapacity: {:.0} s; written to {}",
                c.wall_seconds,
                file.display()
            );
            r.capacity = Some(c);
            write_section(&file, &r, crate::check::Section::Capacity)
        }
        Command::Network {
            results: file,
            force,
            grid,
            per_point,
            cell_seconds,
            budget_s,
            parallel,
            load_pct,
            rate_mbit,
            all_groups,
            all_auths,
            stacks,
            suites,
            cleanup,
        } => {
            if cleanup {
                let _lock = crate::network::lab::Lock::take()?;
                let removed = crate::network::lab::cleanup();
                println!(
                    "network: {}",
                    if removed.is_empty() {
                        "nothing to clean".to_string()
                    } else {
                        format!("removed {}", removed.join(", "))
                    }
                );
                return Ok(());
            }
            let file = file.map_or_else(newest_results, Ok)?;
            let mut r = section_target(
                &file,
                |r| r.network.as_ref().map(|n| n.date_utc.clone()),
                "network",
                force,
            )?;
            if let Some(rate) = rate_mbit {
                if !(rate.is_finite() && rate > 0.0) {
                    bail!("--rate-mbit {rate}: a rate must be a positive number of Mbit/s");
                }
            }
            if !(load_pct.is_finite() && load_pct > 0.0 && load_pct <= 100.0) {
                bail!("--load-pct {load_pct}: an offered load is a percentage of one core, above 0 and at most 100");
            }
            if !(cell_seconds.is_finite() && cell_seconds >= 0.0) {
                bail!("--cell-seconds {cell_seconds}: a time budget is zero or more seconds");
            }
            let budget = if cell_seconds == 0.0 {
                std::time::Duration::MAX
            } else {
                std::time::Duration::from_secs_f64(cell_seconds)
            };
            let opts = crate::network::Options {
                grid: crate::network::Grid::named(&grid)?,
                per_point: per_point as usize,
                cell_budget: budget,
                budget: (budget_s > 0).then(|| std::time::Duration::from_secs(budget_s)),
                parallel: parallel as usize,
                load_pct,
                rate_mbit,
                all_groups,
                all_auths,
                stacks,
                auths: {
                    let kex = crate::suite::load(&suites, &crate::backend::names())?;
                    crate::handshake::tls_auths(&suites, &kex)?
                },
            };
            let n = match crate::network::run(&opts, &mut |m| eprintln!("{m}")) {
                Ok(n) => n,
                Err(e) if e.downcast_ref::<crate::network::Unavailable>().is_some() => {
                    println!("network: skipped: {e}");
                    return Ok(());
                }
                Err(e) => return Err(e),
            };
            print!("{}", crate::tables::network::table(&n));
            println!(
                "\nnetwork: {:.0} s; written to {}",
                n.wall_seconds,
                file.display()
            );
            r.network = Some(n);
            write_section(&file, &r, crate::check::Section::Network)
        }
        Command::NetemRouter { client_if } => crate::network::router::router_main(&client_if),
        Command::CapacityServer {
            stack,
            group,
            identity,
            threads,
            hold,
            core,
        } => {
            let stack = crate::stack::find(&stack)?;
            crate::capacity::server::server_main(stack, &group, &identity, threads, hold, core)
        }
        Command::HandshakeServer {
            stack,
            group,
            identity,
            insitu,
            bind,
            concurrent,
            timeout_s,
            resumed,
        } => {
            let stack = crate::stack::find(&stack)?;
            crate::stack::tls::set_io_timeout(std::time::Duration::from_secs(timeout_s.max(1)));
            crate::stack::child::server_main(
                stack,
                &group,
                &identity,
                insitu,
                crate::stack::child::Listen { bind, concurrent },
                if resumed {
                    crate::results::Mode::Resumed
                } else {
                    crate::results::Mode::Full
                },
            )
        }
        Command::Render {
            files,
            all,
            out,
            source_url,
            baseline,
        } => {
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
        Command::CountPhase {
            backend,
            algorithm,
            operation,
            form,
            calls,
            payload,
            aad,
        } => {
            let form = if form == "primitive" {
                crate::results::Form::Primitive
            } else {
                crate::results::Form::Handshake
            };
            let r = crate::counter::child(
                &backend,
                &algorithm,
                &operation,
                form,
                calls.max(1),
                crate::suite::Workload {
                    payload_bytes: payload,
                    aad_bytes: aad,
                },
            )?;
            println!("{}", serde_json::to_string(&r)?);
            Ok(())
        }
        Command::Memory {
            results: file,
            force,
            calls,
            jobs,
            algorithms,
        } => {
            if !cfg!(target_arch = "x86_64") {
                // `make run` goes on to the other steps on an aarch64 runner.
                eprintln!("memory: skipped: the stack probe (stack painting) is implemented for x86-64 only");
                return Ok(());
            }
            let file = file.map_or_else(newest_results, Ok)?;
            let mut r = section_target(
                &file,
                |r| r.memory.as_ref().map(|m| m.date_utc.clone()),
                "memory",
                force,
            )?;
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let opts = crate::memory::Options {
                calls: calls as usize,
                jobs: jobs.unwrap_or(cores.min(2)),
                only: algorithms,
            };
            let m = crate::memory::run(&opts, &r, &mut |m| eprintln!("memory: {m}"))?;
            print!("{}", crate::tables::memory::table(&m, &r));
            println!(
                "\nmemory: {} phases, {} failed; {:.1} s; written to {}",
                m.entries.len(),
                m.failures.len(),
                m.wall_seconds,
                file.display()
            );
            let failed = m.failures.len();
            r.memory = Some(m);
            write_section(&file, &r, crate::check::Section::Memory)?;
            if failed > 0 {
                bail!(
                    "{failed} phase(s) could not be measured; the others are in {}",
                    file.display()
                );
            }
            Ok(())
        }
        Command::MemoryChild {
            backend,
            calls,
            algorithms,
            operations,
        } => {
            let ops = operations
                .iter()
                .map(|o| {
                    Operation::from_name(o).ok_or_else(|| anyhow::anyhow!("unknown operation {o}"))
                })
                .collect::<Result<Vec<_>>>()?;
            let rep = crate::memory::child(&backend, calls, &algorithms, &ops)?;
            println!("{}", serde_json::to_string(&rep)?);
            Ok(())
        }
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

/// Writes a results file a section was just added to, once the whole file holds against its own
/// raw data (what `pqprof check` would say), so a section `check` rejects never lands.
fn write_section(file: &Path, r: &Results, section: crate::check::Section) -> Result<()> {
    let problems = crate::check::check_section(r, section);
    if !problems.is_empty() {
        bail!(
            "{}: the {} section does not hold against its own raw data:\n  {}",
            file.display(),
            section.name(),
            problems.join("\n  ")
        );
    }
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
    let results = if !one_process {
        crate::samples::run_samples(&crate::samples::Options {
            samples: args.samples as usize,
            suites: args.suites.clone(),
            budget_ms: args.budget_ms,
            rounds: args.rounds,
            iterations: args.iterations,
            backends: args.backends.clone(),
            quiet: args.quiet,
            precision_pct: args.precision,
            budget: (args.budget_s > 0).then(|| std::time::Duration::from_secs(args.budget_s)),
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
    results::create(&out, &results, args.force)?;
    // A child of `--samples` leaves the warnings and the summary to its parent, which pools them.
    let child = args.worker_iterations.is_some();
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
    // A child's file is pooled and checked by its parent.
    let problems = if child {
        Vec::new()
    } else {
        check::check(&results)
    };
    if !problems.is_empty() {
        bail!(
            "the results just written fail their own check:\n  {}",
            problems.join("\n  ")
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

fn check(files: &[PathBuf], site: Option<&Path>) -> Result<()> {
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
        let r = results::read(f)?;
        let problems = check::check(&r);
        if problems.is_empty() {
            println!(
                "{}: ok ({} phases, {} suites; identity holds within {}%)",
                f.display(),
                r.phases.len(),
                r.suites.len(),
                check::TOLERANCE_PCT
            );
        } else {
            failed += 1;
            eprintln!("{}: {} problem(s):", f.display(), problems.len());
            for p in &problems {
                eprintln!("  {p}");
            }
        }
    }
    if failed > 0 {
        bail!("{failed} file(s) failed the check");
    }
    Ok(())
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
    let files: Vec<PathBuf> = std::fs::read_dir("results")
        .map_err(|e| anyhow::anyhow!("results/: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    let dated: Vec<(String, PathBuf)> = files
        .into_iter()
        .filter_map(|p| results::read(&p).ok().map(|r| (r.run.date_utc, p)))
        .collect();
    dated.into_iter().max().map(|(_, p)| p).ok_or_else(|| {
        anyhow::anyhow!("no readable results/*.json: run `make run` first or pass --results FILE")
    })
}
