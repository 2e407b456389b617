//! pqprof's entry point: parse the command line, run the command, report errors.

use clap::Parser;
use pqprof::{cli, commands};

fn main() {
    let cli = cli::Cli::parse();
    if let Err(e) = commands::execute(cli.command) {
        eprintln!("Error: {e:#}");
        std::process::exit(1);
    }
}
