//! `pqprof handshake`.

use super::{newest_results, section_target, write_section};
use anyhow::{bail, Result};

/// `pqprof handshake`: real handshakes on loopback, beside the composed figures.
pub(super) fn handshake(args: crate::cli::HandshakeArgs) -> Result<()> {
    let crate::cli::HandshakeArgs {
        results: file,
        suites,
        samples,
        per_sample,
        precision,
        max_samples,
        budget_s,
        force,
        stacks,
    } = args;
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
        budget: crate::budget::from_secs(budget_s),
        stacks,
    };
    let idle = super::Idle::hold("handshake");
    let mut h = crate::handshake::run(&opts, &r, &mut |m| eprintln!("handshake: {m}"))?;
    h.notes.extend(idle.release());
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
    // The network models' stalls come from the real handshakes (each scenario's composition and
    // chain): a new handshakes section recomputes them beside the cells they model.
    if let Some(mut n) = r.network.take() {
        crate::figures::network::set_stalls(&r, &mut n);
        r.network = Some(n);
    }
    write_section(&file, &mut r, crate::check::Section::Handshakes)?;
    super::failed(&file, failed, "handshake scenario(s) failed")
}
