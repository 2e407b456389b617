//! pqprof's entry point: parse the command line, run the command, report errors.

use clap::Parser;
use pqprof::{alloc, cli, commands, interrupt};

/// Counts allocations only while a handshake command has turned counting on.
#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

fn main() {
    pqprof::budget::process_start();
    let cli = cli::Cli::parse();
    if matches!(cli.command, cli::Command::CapacityServer { .. }) {
        // Every allocation and free of its life, so live bytes are exact.
        alloc::track_live();
    }
    if matches!(
        cli.command,
        cli::Command::Handshake { .. }
            | cli::Command::HandshakeServer { .. }
            | cli::Command::CapacityServer { .. }
    ) {
        // Before OpenSSL allocates anything, so its C allocations can be counted.
        if !alloc::hook_openssl() {
            eprintln!(
                "warning: OpenSSL had already allocated; its C allocations will not be counted"
            );
        }
    }
    if let Err(e) = interrupt::install() {
        eprintln!(
            "warning: cannot catch Ctrl-C ({e}); an interrupted run is still never half-written"
        );
    }
    if let Err(e) = commands::execute(cli.command) {
        eprintln!("Error: {e:#}");
        std::process::exit(interrupt::exit_code(&e));
    }
}
