//! `pqprof crosscheck`.

use super::{newest_results, section_target, write_section};
use crate::results::Agreement;
use anyhow::{bail, ensure, Result};

/// `pqprof crosscheck`: against liboqs's speed tools, openssl speed and published cycles.
pub(super) fn crosscheck(args: crate::cli::CrosscheckArgs) -> Result<()> {
    let crate::cli::CrosscheckArgs {
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
    } = args;
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
    write_section(&file, &mut r, crate::check::Section::Crosscheck)?;
    if strict && undecided + disagree > 0 {
        bail!("{disagree} phase(s) disagree and {undecided} are undecided (--strict wants every phase to agree)");
    }
    Ok(())
}
