//! `pqprof network`.

use super::{newest_results, section_target, write_section};
use anyhow::{bail, Result};

/// `pqprof network`: handshakes through the emulated network, or `--cleanup` alone.
pub(super) fn network(args: crate::cli::NetworkArgs) -> Result<()> {
    let crate::cli::NetworkArgs {
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
    } = args;
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
    let kex = crate::suite::load(&suites, &crate::backend::names())?;
    let opts = crate::network::Options {
        grid: crate::network::Grid::named(&grid)?,
        per_point: per_point as usize,
        cell_budget: budget,
        budget: crate::budget::from_secs(budget_s),
        parallel: parallel as usize,
        load_pct,
        rate_mbit,
        all_groups,
        all_auths,
        stacks,
        auths: crate::handshake::tls_auths(&suites, &kex)?,
        shares: kex
            .iter()
            .filter(|s| s.protocol == "tls13")
            .filter_map(|s| Some((s.name.clone(), s.wire_shares()?)))
            .collect(),
    };
    let idle = super::Idle::hold("network");
    let mut n = match crate::network::run(&opts, &mut |m| eprintln!("{m}")) {
        Ok(n) => n,
        Err(e) if e.downcast_ref::<crate::network::Unavailable>().is_some() => {
            println!("network: skipped: {e}");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    n.notes.extend(idle.release());
    crate::figures::network::set_stalls(&r, &mut n);
    print!("{}", crate::tables::network::table(&n));
    println!(
        "\nnetwork: {:.0} s; written to {}",
        n.wall_seconds,
        file.display()
    );
    r.network = Some(n);
    write_section(&file, &mut r, crate::check::Section::Network)
}
