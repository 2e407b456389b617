//! pqprof: what a hybrid or post-quantum TLS 1.3 / SSH key exchange costs on this machine.

mod algorithm;
mod backend;
mod case;
mod cli;
mod commands;
mod compose;
mod host;
mod measure;
mod plan;
mod results;
mod run;
mod stats;
mod suite;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    if let Err(e) = commands::execute(cli.command) {
        eprintln!("Error: {e:#}");
        std::process::exit(1);
    }
}
