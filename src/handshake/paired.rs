//! The in-situ timers' cost, measured paired: the same handshakes with the plain configuration and
//! the timed one, alternating in blocks whose order turns, so drift falls on both alike. Two ways:
//! in memory (client and server in one pinned thread; `inmem::paired_blocks`), which isolates the
//! CPU cost, and on loopback (a client here, a server thread in this process per
//! configuration), which adds what a real connection adds: sockets, and each side waking for the
//! peer's flight with its caches partly cold. The difference of the two loopback scenarios' medians
//! cannot resolve this: they run in different server processes, and two identical configurations
//! differed there by up to 3.5% (an A/A run on the Zen 4 VM).

use super::{inmem, tls};
use crate::results::{PairedOverhead, RealStack, Scenario};
use crate::stats;
use anyhow::{anyhow, Result};
use std::net::TcpListener;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// Blocks and handshakes per block in memory: 60 x 16 per variant takes about 2 s per scenario;
/// on the shared Zen 4 VM 40 blocks gave 95% intervals of +-0.1 to +-2%.
const BLOCKS: usize = 60;
const PER_BLOCK: usize = 16;

/// On loopback, shorter blocks and more of them: 300 x 4 per variant, about 2.5 s per scenario.
/// From one run of 4,800 loopback handshakes per variant on the Zen 4 VM, cut into blocks of 1 to
/// 32: blocks of 4 gave the narrowest intervals (+-1.2 to +-1.9 us, against +-1.5 to +-2.2 us for
/// blocks of 16), drift between variants falling inside a block. In the two results files of
/// 2026-12-01 with 300 x 4, the median's interval reached 1.1-7.3 us either side and the mean's
/// half-width 3.4-12.9 us (60 x 16 had given the mean 3.9-16.1 us that morning).
const LOOPBACK_BLOCKS: usize = 300;
const LOOPBACK_PER_BLOCK: usize = 4;

/// Block medians of loopback connections (connect, handshake, echo, close; the client's wall time as
/// in the scenarios) against server threads of this process: plain, the timing provider unarmed
/// (rustls only) and the timing provider armed, as `inmem::PairedBlocks`.
fn loopback_blocks(
    stack: RealStack,
    group: &str,
    id: &tls::Identity,
    blocks: usize,
    per_block: usize,
) -> Result<inmem::PairedBlocks> {
    let variants: &[(bool, bool)] = match stack {
        // (timing provider, armed)
        RealStack::Rustls => &[(false, false), (true, false), (true, true)],
        _ => &[(false, false), (true, true)],
    };
    let mut targets = Vec::new();
    for &(wrapped, armed) in variants {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let acceptor = tls::acceptor(stack, group, id, wrapped)?;
        let served = Arc::new(AtomicU64::new(0));
        let sink = Arc::new(super::insitu::sink(if armed {
            (blocks + 2) * per_block
        } else {
            0
        }));
        // Serves until the process ends (blocked in accept; nothing else of it outlives this call).
        std::thread::spawn(move || {
            tls::serve_with(acceptor, listener, &served, armed.then_some(&*sink), false)
        });
        let client = if wrapped && !armed {
            tls::Client::wrapped_unarmed(stack, group, id)?
        } else {
            tls::Client::new(stack, group, id, armed)?
        };
        targets.push((client, addr));
    }
    let block = |v: usize| -> Result<f64> {
        let mut ns = Vec::with_capacity(per_block);
        for _ in 0..per_block {
            crate::interrupt::check()?;
            ns.push(targets[v].0.connect(targets[v].1, false)?.total_ns);
        }
        Ok(stats::median(&ns))
    };
    for _ in 0..2 {
        for v in 0..targets.len() {
            block(v)?;
        }
    }
    let mut series = vec![Vec::new(); targets.len()];
    for b in 0..blocks {
        for v in inmem::block_order(b, targets.len()) {
            series[v].push(block(v)?);
        }
    }
    let timed = series.pop().unwrap_or_default();
    let wrapped = if series.len() == 2 {
        series.pop().unwrap_or_default()
    } else {
        Vec::new()
    };
    let plain = series.pop().unwrap_or_default();
    Ok(inmem::PairedBlocks {
        plain,
        wrapped,
        timed,
    })
}

/// For each plain scenario with an instrumented twin: the timers' cost paired in memory, on a
/// thread pinned to the measuring core, and paired on loopback.
///
/// Allocation counting is off meanwhile: its counters are process-wide atomics, and with the
/// servers in this process both sides would write them on every allocation, a cross-core transfer
/// the scenarios (each server in a process of its own) never pay. On the Zen 4 VM turning it off
/// moved the paired loopback figures by less than their noise.
pub fn measure(
    scenarios: &mut [Scenario],
    id: &tls::Identity,
    progress: &mut dyn FnMut(&str),
) -> Result<()> {
    super::alloc::enable(false);
    let out = measure_all(scenarios, id, progress);
    super::alloc::enable(true);
    out
}

/// `overhead::summarise`, an error where there are too few blocks.
fn summarise(
    per_block: usize,
    plain: Vec<f64>,
    wrapped: Vec<f64>,
    timed: Vec<f64>,
    median_ns: f64,
) -> Result<PairedOverhead> {
    crate::overhead::summarise(per_block, plain, wrapped, timed, median_ns)
        .ok_or_else(|| anyhow!("fewer than two paired blocks"))
}

fn measure_all(
    scenarios: &mut [Scenario],
    id: &tls::Identity,
    progress: &mut dyn FnMut(&str),
) -> Result<()> {
    for s in scenarios
        .iter_mut()
        .filter(|s| !s.instrumented && s.insitu_overhead_pct.is_some())
    {
        progress(&format!(
            "in-situ timers' cost, paired in memory and on loopback: {} on {}",
            s.suite,
            s.stack.name()
        ));
        let (stack, group) = (s.stack, s.suite.clone());
        let b = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    crate::measure::pin();
                    inmem::paired_blocks(stack, &group, id, BLOCKS, PER_BLOCK)
                })
                .join()
                .map_err(|_| anyhow!("the paired overhead thread panicked"))?
        })?;
        s.insitu_overhead_paired = Some(summarise(
            PER_BLOCK,
            b.plain,
            b.wrapped,
            b.timed,
            s.median_ns,
        )?);
        let l = loopback_blocks(stack, &group, id, LOOPBACK_BLOCKS, LOOPBACK_PER_BLOCK)?;
        s.insitu_overhead_paired_loopback = Some(summarise(
            LOOPBACK_PER_BLOCK,
            l.plain,
            l.wrapped,
            l.timed,
            s.median_ns,
        )?);
    }
    Ok(())
}
