//! `pqprof memory`.

use super::{newest_results, section_target, write_section};
use anyhow::Result;

/// `pqprof memory`: peak heap and stack of one call of every phase.
pub(super) fn memory(args: crate::cli::MemoryArgs) -> Result<()> {
    let crate::cli::MemoryArgs {
        results: file,
        force,
        calls,
        jobs,
        algorithms,
    } = args;
    if !cfg!(target_arch = "x86_64") {
        // `make run` goes on to the other steps on an aarch64 runner.
        eprintln!(
            "memory: skipped: the stack probe (stack painting) is implemented for x86-64 only"
        );
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
    write_section(&file, &mut r, crate::check::Section::Memory)?;
    super::failed(&file, failed, "phase(s) could not be measured")
}
