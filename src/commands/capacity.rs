//! `pqprof capacity`.

use super::{newest_results, section_target, write_section};
use anyhow::Result;

/// `pqprof capacity`: handshakes per core, under load, and memory per held connection.
pub(super) fn capacity(args: crate::cli::CapacityArgs) -> Result<()> {
    let crate::cli::CapacityArgs {
        results: file,
        force,
        quick,
        stacks,
        suites,
        connections,
        budget_s,
    } = args;
    let file = file.map_or_else(newest_results, Ok)?;
    let mut r = section_target(
        &file,
        |r| r.capacity.as_ref().map(|c| c.date_utc.clone()),
        "capacity",
        force,
    )?;
    let mut opts = crate::capacity::Options::default_for(quick, &suites)?;
    if !stacks.is_empty() {
        let asked: Vec<&'static dyn crate::stack::TlsStack> = stacks
            .iter()
            .map(|s| crate::stack::find(s))
            .collect::<Result<_>>()?;
        // The library stacks are measured in memory and over sockets, the servers under h2load.
        (opts.servers, opts.stacks) = asked.into_iter().partition(|s| s.features().under_load);
    }
    if !connections.is_empty() {
        opts.connections = connections.iter().map(|&c| c as usize).collect();
        // The other authentications hold the smallest step.
        opts.auth_connections = opts.connections.iter().min().into_iter().copied().collect();
    }
    opts.budget = crate::budget::from_secs(budget_s);
    let idle = super::Idle::hold("capacity");
    let mut c = crate::capacity::run(&opts, &r, &mut |m| eprintln!("{m}"))?;
    c.notes.extend(idle.release());
    print!("{}", crate::tables::capacity::table(&c));
    println!(
        "\ncapacity: {:.0} s; written to {}",
        c.wall_seconds,
        file.display()
    );
    r.capacity = Some(c);
    write_section(&file, &mut r, crate::check::Section::Capacity)
}
