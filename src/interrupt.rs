//! Ctrl-C and SIGTERM: the first asks the running command to stop at its next safe point (between
//! two timed chunks, two connections, two tool runs), so it unwinds and every guard cleans up its
//! servers, namespaces and rules, and nothing half-measured is written; a second exits at once.
//! Child processes are started with a parent-death signal, so even a SIGKILL of pqprof leaves none.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering::Relaxed};
use std::sync::Arc;
use std::sync::OnceLock;

static REQUESTED: OnceLock<Arc<AtomicBool>> = OnceLock::new();
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The error a command returns when it stopped because it was asked to.
#[derive(Debug, thiserror::Error)]
#[error("interrupted by signal {0}; nothing half-measured was written")]
pub(crate) struct Interrupted(pub i32);

/// Installs the handlers (once; later calls do nothing).
pub fn install() -> std::io::Result<()> {
    if REQUESTED.get().is_some() {
        return Ok(());
    }
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // Registered first, so it sees the flag as it was before this signal: set means second.
        signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&flag))?;
        // SAFETY: the action only stores into an atomic, which is async-signal-safe.
        unsafe { signal_hook::low_level::register(sig, move || SIGNAL.store(sig, Relaxed)) }?;
        signal_hook::flag::register(sig, Arc::clone(&flag))?;
    }
    let _ = REQUESTED.set(flag);
    Ok(())
}

pub(crate) fn requested() -> bool {
    REQUESTED.get().is_some_and(|f| f.load(Relaxed))
}

/// `Err(Interrupted)` once a stop was asked for: call it at every safe point.
pub(crate) fn check() -> Result<(), Interrupted> {
    if requested() {
        Err(Interrupted(SIGNAL.load(Relaxed)))
    } else {
        Ok(())
    }
}

/// The exit code for an error: 128 + the signal when the command was interrupted.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    e.chain()
        .find_map(|c| c.downcast_ref::<Interrupted>())
        .map_or(1, |i| 128 + i.0)
}

/// Makes a child die with pqprof: the kernel sends it SIGKILL when pqprof's thread that started it
/// ends, however that happens.
pub(crate) fn die_with_parent(cmd: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl is async-signal-safe and touches only the child's own state; it runs between
    // fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}
