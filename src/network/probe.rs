//! `pqprof probe` through the emulated network (the hidden `probe-emulated` command): a server of
//! one stack in the server namespace, the link calibrated to an RTT as the network step calibrates
//! each point, and the probe run from the client namespace as a user runs it. Over a long path
//! the round trips a probe predicts from the flight's size against the initial window can be held
//! to the ones it observes: the test of its window verdicts.

use super::lab::{self, Lab};
use super::{link, start_emulator, TIMEOUT};
use anyhow::{bail, Context, Result};

/// What `probe-emulated` is asked: the path's round trip, the server (a stack of the registry,
/// the group it takes and its chain), the rounds, and the probe's file.
pub(crate) struct Options {
    pub(crate) rtt_ms: f64,
    pub(crate) stack: String,
    pub(crate) group: String,
    pub(crate) auth: String,
    pub(crate) rounds: usize,
    pub(crate) out: std::path::PathBuf,
}

/// Runs the probe; its report goes to standard output, its file to `opts.out`.
pub(crate) fn probe(opts: &Options) -> Result<()> {
    if let Some(why) = lab::unavailable() {
        bail!("the emulated network cannot run here: {why}");
    }
    crate::stack::tls::set_io_timeout(TIMEOUT);
    let _lab = Lab::new()?;
    let (mut router, link_probe) = start_emulator()?;
    let (l, _) = link(&mut router, link_probe.addr, opts.rtt_ms * 1e6, 0.0)?;
    eprintln!(
        "probe-emulated: link at {:.2} ms (asked {} ms)",
        l.rtt_median_ns / 1e6,
        opts.rtt_ms
    );
    let auth = crate::stack::identity::auth_named(&opts.auth)?;
    let chains = crate::stack::identity::Chains::make([&auth], "net-probe")?;
    let (_, files) = chains.get(&opts.auth)?;
    let server = super::serve_in_lab(
        crate::stack::find(&opts.stack)?,
        &opts.group,
        files,
        crate::results::Mode::Full,
    )?;
    let status = Lab::command(lab::CLIENT, &std::env::current_exe()?)
        .arg("probe")
        .arg(server.addr.to_string())
        .args(["--sni", "localhost", "--rate", "50"])
        .args(["--rounds", &opts.rounds.to_string()])
        .arg("--ca")
        .arg(&files.root)
        .arg("--out")
        .arg(&opts.out)
        .status()
        .context("cannot run the probe in the client namespace")?;
    drop(server);
    if !status.success() {
        bail!("the probe failed ({status})");
    }
    Ok(())
}
