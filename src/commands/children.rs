//! The hidden subcommands a measuring step starts as its child processes.

use crate::algorithm::Operation;
use anyhow::Result;
use std::io::{BufRead, Write};

/// The server side of `handshake` and `network`, a child process.
pub(super) fn handshake_server(args: crate::cli::HandshakeServerArgs) -> Result<()> {
    let crate::cli::HandshakeServerArgs {
        stack,
        group,
        identity,
        insitu,
        bind,
        concurrent,
        timeout_s,
        mode,
    } = args;
    let stack = crate::stack::find(&stack)?;
    crate::stack::tls::set_io_timeout(std::time::Duration::from_secs(timeout_s.max(1)));
    crate::stack::child::server_main(
        stack,
        &group,
        &identity,
        insitu,
        crate::stack::child::Listen { bind, concurrent },
        mode,
    )
}

/// The server side of `capacity`, a child process.
pub(super) fn capacity_server(args: crate::cli::CapacityServerArgs) -> Result<()> {
    let crate::cli::CapacityServerArgs {
        stack,
        group,
        identity,
        threads,
        hold,
        core,
    } = args;
    let stack = crate::stack::find(&stack)?;
    crate::capacity::server::server_main(stack, &group, &identity, threads, hold, core)
}

/// One backend's part of `memory`, a child process.
pub(super) fn memory_child(args: crate::cli::MemoryChildArgs) -> Result<()> {
    let crate::cli::MemoryChildArgs {
        backend,
        calls,
        algorithms,
        operations,
    } = args;
    let ops = operations
        .iter()
        .map(|o| Operation::from_name(o).ok_or_else(|| anyhow::anyhow!("unknown operation {o}")))
        .collect::<Result<Vec<_>>>()?;
    let rep = crate::memory::child(&backend, calls, &algorithms, &ops)?;
    println!("{}", serde_json::to_string(&rep)?);
    Ok(())
}

/// One phase's counted calls, under valgrind or qemu's plugin (`run --counter`).
pub(super) fn count_phase(args: crate::cli::CountPhaseArgs) -> Result<()> {
    let crate::cli::CountPhaseArgs {
        backend,
        algorithm,
        operation,
        form,
        calls,
        payload,
        aad,
    } = args;
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

/// A server of `stack` taking `group` alone, with a fresh chain of `auth`: prints `root PATH` (the
/// root certificate, DER, for `probe --ca`) and `port N`, then serves, a connection at a time or
/// more, until standard input closes.
pub(super) fn probe_target(args: crate::cli::ProbeTargetArgs) -> Result<()> {
    let auth = crate::stack::identity::auth_named(&args.auth)?;
    let id = crate::stack::Identity::new(&auth)?;
    let files = crate::stack::identity::Files::write(&id, "probe-target")?;
    println!("root {}", files.root.display());
    if args.stack.ends_with(".toml") {
        return crate::stack::lab_server(
            std::path::Path::new(&args.stack),
            &args.group,
            &files.dir,
            std::net::IpAddr::from([127, 0, 0, 1]),
            crate::results::Mode::Full,
        );
    }
    // The stack's own server, as the network grid starts it (a thread or task per connection):
    // pqprof's `handshake-server` for the Rust stacks, the Go peer for Go's.
    let stack = crate::stack::find(&args.stack)?;
    let server = stack.start_server(&crate::stack::child::Start {
        concurrent: true,
        ..crate::stack::child::Start::loopback(&args.group, &files, false)
    })?;
    println!("port {}", server.addr.port());
    std::io::stdout().flush()?;
    // Until standard input closes; dropping the server then closes its own and it stops.
    for line in std::io::stdin().lock().lines() {
        line?;
    }
    drop(server);
    Ok(())
}
