//! The in-situ timers' cost, measured paired: the same handshakes with the plain configuration and
//! the timed one, alternating in blocks whose order turns, so drift falls on both alike. Two ways:
//! in memory (client and server in one pinned thread; `in_memory_blocks`), which isolates the
//! CPU cost, and on loopback (a client here, a server thread in this process per
//! configuration), which adds what a real connection adds: sockets, and each side waking for the
//! peer's flight with its caches partly cold. The difference of the two loopback scenarios' medians
//! cannot resolve this: they run in different server processes, and two identical configurations
//! differed there by up to 3.5% (an A/A run on the Zen 4 VM).

use crate::results::{PairedOverhead, Scenario};
use crate::stack::{self, Config, Identity, Pair, TlsStack};
use crate::stats;
use anyhow::{anyhow, Result};
use std::sync::atomic::AtomicU64;
use std::time::Instant;

/// Blocks and handshakes per block in memory: 60 x 16 per variant, about 2 s per scenario; at
/// least 12 blocks where the step's budget leaves less time (`Blocks`).
const BLOCKS: usize = 60;
const FEWEST_BLOCKS: usize = 12;
const PER_BLOCK: usize = 16;

/// On loopback, shorter blocks and more of them: 300 x 4 per variant, about 2.5 s per scenario.
/// From one run of 4,800 loopback handshakes per variant on the Zen 4 VM, cut into blocks of 1 to
/// 32: blocks of 4 gave the narrowest intervals (+-1.2 to +-1.9 us, against +-1.5 to +-2.2 us for
/// blocks of 16), drift between variants falling inside a block. In the two results files of
/// 2026-12-01 with 300 x 4, the median's interval reached 1.1-7.3 us either side and the mean's
/// half-width 3.4-12.9 us (60 x 16 had given the mean 3.9-16.1 us that morning).
const LOOPBACK_BLOCKS: usize = 300;
const LOOPBACK_FEWEST_BLOCKS: usize = 30;
const LOOPBACK_PER_BLOCK: usize = 4;

/// How many blocks of each variant a paired measurement makes: the full design (`most`) where no
/// time is set; else as many as fit in `seconds` at the pace of the warm-up blocks, a whole number
/// of `block_order`'s cycles, so every variant takes every place equally often, and never fewer
/// than `fewest`, below which the interval means little.
#[derive(Debug, Clone, Copy)]
struct Blocks {
    most: usize,
    fewest: usize,
    seconds: Option<f64>,
}

impl Blocks {
    /// The blocks of each of `variants` (2 or 3) to make, where one block of one variant takes
    /// `per_block_s` (measured on the warm-up's).
    fn fitting(self, variants: usize, per_block_s: f64) -> usize {
        let Some(seconds) = self.seconds else {
            return self.most;
        };
        let cycle = if variants == 3 { 6 } else { 2 };
        let fit = if per_block_s > 0.0 {
            (seconds.max(0.0) / (per_block_s * variants as f64)).min(self.most as f64) as usize
        } else {
            self.most
        };
        (fit / cycle * cycle).clamp(self.fewest, self.most)
    }
}

/// Handshakes the paired measurement of one scenario makes in its full design, in memory and on
/// loopback (the two warm-up blocks of each variant included).
pub(crate) fn connections(stack: &dyn TlsStack) -> usize {
    let variants = if stack.features().unarmed_wrapper {
        3
    } else {
        2
    };
    variants * ((BLOCKS + 2) * PER_BLOCK + (LOOPBACK_BLOCKS + 2) * LOOPBACK_PER_BLOCK)
}

/// Block medians of loopback connections (connect, handshake, echo, close; the client's wall time as
/// in the scenarios) against server threads of this process: plain, the timing provider unarmed
/// (rustls's, over TCP and in quinn) and the timing provider armed, as `inmem::PairedBlocks`.
fn loopback_blocks(
    stack: &'static dyn TlsStack,
    group: &str,
    id: &Identity,
    blocks: Blocks,
    per_block: usize,
) -> Result<PairedBlocks> {
    // (wrapped, armed): the wrapper unarmed only where it is a configuration of its own.
    let variants: &[(bool, bool)] = if stack.features().unarmed_wrapper {
        &[(false, false), (true, false), (true, true)]
    } else {
        &[(false, false), (true, true)]
    };
    let mut targets = Vec::new();
    for &(wrapped, armed) in variants {
        let listener = stack::Listener::bind(stack.transport(), [127, 0, 0, 1].into())?;
        let addr = listener.local_addr()?;
        // The server's own loop (a TCP acceptor's, or quinn's over one UDP socket), as in its
        // child process. It serves until the process ends, blocked on its socket; its counter
        // and records, a few per step, live as long.
        let served: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
        let sink: &'static stack::Sink = Box::leak(Box::new(crate::insitu::sink(if armed {
            (blocks.most + 2) * per_block
        } else {
            0
        })));
        let (server_group, server_id) = (group.to_string(), id.clone());
        std::thread::spawn(move || {
            let c = Config {
                wrapped,
                armed,
                ..Config::plain(&server_group, &server_id)
            };
            // Its clients would only see no answer: the reason goes to the log.
            if let Err(e) = stack.serve(c, listener, served, armed.then_some(sink), false) {
                eprintln!(
                    "handshake: the paired cost's {} server failed: {e:#}",
                    stack.name()
                );
            }
        });
        let c = Config {
            wrapped,
            armed,
            ..Config::plain(group, id)
        };
        targets.push((stack.client(c)?, addr));
    }
    let block = |v: usize| -> Result<f64> {
        let mut ns = Vec::with_capacity(per_block);
        for _ in 0..per_block {
            crate::interrupt::check()?;
            ns.push(targets[v].0.connect(targets[v].1, false)?.total_ns);
        }
        Ok(stats::median(&ns))
    };
    let warm_up = Instant::now();
    for _ in 0..2 {
        for v in 0..targets.len() {
            block(v)?;
        }
    }
    let per_block_s = warm_up.elapsed().as_secs_f64() / (2 * targets.len()) as f64;
    let blocks = blocks.fitting(targets.len(), per_block_s);
    let mut series = vec![Vec::new(); targets.len()];
    for b in 0..blocks {
        for v in super::block_order(b, targets.len()) {
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
    Ok(PairedBlocks {
        plain,
        wrapped,
        timed,
    })
}

/// The timers' cost of one plain scenario's stack and group, paired in memory and on loopback,
/// before its median is known (`measure`), to be set on the scenario after the rounds (`attach`).
pub(crate) struct Measured {
    stack: &'static str,
    group: String,
    memory: PairedBlocks,
    loopback: PairedBlocks,
}

/// For each (stack, group) of a plain scenario of the baseline authentication with an
/// instrumented twin: the timers' cost paired in memory, on a thread pinned to the measuring core,
/// and paired on loopback. The step measures this right after its first rounds, so that the
/// precision rounds take exactly the time left (it used to run last, with its time kept back from
/// the rounds as an estimate that under a noisy host left about 16 s of 90 unused).
///
/// Allocation counting is off meanwhile: its counters are process-wide atomics, and with the
/// servers in this process both sides would write them on every allocation, a cross-core transfer
/// the scenarios (each server in a process of its own) never pay. On the Zen 4 VM turning it off
/// moved the paired loopback figures by less than their noise.
/// Only the scenarios of the baseline authentication (served from `id`): the timers' cost is that
/// of the calls a handshake makes, which a certificate changes little, and each paired
/// measurement takes seconds.
///
/// `seconds` is the time all of it may take (none: the full design for each): each scenario
/// gets an equal part of what is left when it starts, half in memory and half on loopback, and
/// makes the blocks that fit (`Blocks`).
pub(crate) fn measure(
    targets: &[(&'static dyn TlsStack, String)],
    id: &Identity,
    seconds: Option<f64>,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Measured>> {
    crate::alloc::enable(false);
    let start = Instant::now();
    let out = targets
        .iter()
        .enumerate()
        .map(|(i, (stack, group))| {
            let part =
                seconds.map(|s| (s - start.elapsed().as_secs_f64()) / (targets.len() - i) as f64);
            measure_one(*stack, group, id, part, progress)
        })
        .collect();
    crate::alloc::enable(true);
    out
}

fn measure_one(
    stack: &'static dyn TlsStack,
    group: &str,
    id: &Identity,
    seconds: Option<f64>,
    progress: &mut dyn FnMut(&str),
) -> Result<Measured> {
    progress(&format!(
        "in-situ timers' cost, paired in memory and on loopback: {group} on {}",
        stack.name()
    ));
    let half = seconds.map(|s| s / 2.0);
    let memory = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                crate::measure::pin();
                let blocks = Blocks {
                    most: BLOCKS,
                    fewest: FEWEST_BLOCKS,
                    seconds: half,
                };
                in_memory_blocks(stack, group, id, blocks, PER_BLOCK)
            })
            .join()
            .map_err(|_| anyhow!("the paired overhead thread panicked"))?
    })?;
    let blocks = Blocks {
        most: LOOPBACK_BLOCKS,
        fewest: LOOPBACK_FEWEST_BLOCKS,
        seconds: half,
    };
    let loopback = loopback_blocks(stack, group, id, blocks, LOOPBACK_PER_BLOCK)?;
    Ok(Measured {
        stack: stack.name(),
        group: group.to_string(),
        memory,
        loopback,
    })
}

/// Sets what `measure` measured on the plain scenarios it was for (those with an instrumented
/// twin, `insitu_overhead_pct`, of the baseline authentication), summarised against each one's
/// median. A scenario that failed in the rounds after it was measured is left out.
pub(crate) fn attach(
    scenarios: &mut [Scenario],
    baseline: &str,
    measured: Vec<Measured>,
) -> Result<()> {
    for m in measured {
        let Some(s) = scenarios.iter_mut().find(|s| {
            !s.instrumented
                && s.insitu_overhead_pct.is_some()
                && s.auth_name().is_none_or(|a| a == baseline)
                && s.stack.name() == m.stack
                && s.suite == m.group
        }) else {
            continue;
        };
        s.insitu_overhead_paired = Some(summarise(
            PER_BLOCK,
            m.memory.plain,
            m.memory.wrapped,
            m.memory.timed,
            s.median_ns,
        )?);
        s.insitu_overhead_paired_loopback = Some(summarise(
            LOOPBACK_PER_BLOCK,
            m.loopback.plain,
            m.loopback.wrapped,
            m.loopback.timed,
            s.median_ns,
        )?);
    }
    Ok(())
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

/// Block medians of in-memory handshakes with the plain configuration, the wrapped one unarmed
/// (rustls's provider, over TCP and in quinn: OpenSSL's calls always pass the wrappers) and the
/// wrapped one armed.
struct PairedBlocks {
    plain: Vec<f64>,
    wrapped: Vec<f64>,
    timed: Vec<f64>,
}

/// The in-situ timers' cost, paired: `blocks` blocks of `per_block` handshakes per variant on this
/// thread, the order of the variants turning every block (`block_order`) so drift within a block
/// falls on every variant alike. The armed handshakes are
/// timed from `arm` to `take`, as a loopback connection's are.
fn in_memory_blocks(
    stack: &dyn TlsStack,
    group: &str,
    id: &Identity,
    blocks: Blocks,
    per_block: usize,
) -> Result<PairedBlocks> {
    let plain = stack.pair(Config::plain(group, id))?;
    // A stack without a separate unarmed wrapper (OpenSSL) has one configuration: its wrapped
    // calls are the plain ones, unarmed.
    let wrapped = if stack.features().unarmed_wrapper {
        Some(stack.pair(Config {
            wrapped: true,
            ..Config::plain(group, id)
        })?)
    } else {
        None
    };
    plain.handshake(true)?;
    let plain = plain.as_ref();
    let wrapped_or_plain = wrapped.as_deref().unwrap_or(plain);
    wrapped_or_plain.handshake(true)?;
    let block = |pair: &dyn Pair, armed: bool| -> Result<f64> {
        let mut ns = Vec::with_capacity(per_block);
        for _ in 0..per_block {
            crate::interrupt::check()?;
            if armed {
                crate::insitu::arm();
            }
            let t = Instant::now();
            let r = pair.handshake(false);
            let e = t.elapsed();
            if armed {
                crate::insitu::take();
            }
            r?;
            ns.push(e.as_nanos() as f64);
        }
        Ok(crate::stats::median(&ns))
    };
    // Warm every variant before the first block.
    let warm_up = Instant::now();
    for _ in 0..2 {
        block(plain, false)?;
        block(wrapped_or_plain, true)?;
    }
    let mut out = PairedBlocks {
        plain: Vec::new(),
        wrapped: Vec::new(),
        timed: Vec::new(),
    };
    let variants: &[u8] = if wrapped.is_some() {
        &[0, 1, 2]
    } else {
        &[0, 2]
    };
    // The warm-up made four blocks.
    let blocks = blocks.fitting(variants.len(), warm_up.elapsed().as_secs_f64() / 4.0);
    for b in 0..blocks {
        for i in block_order(b, variants.len()) {
            match variants[i] {
                0 => out.plain.push(block(plain, false)?),
                1 => out.wrapped.push(block(wrapped_or_plain, false)?),
                _ => out.timed.push(block(wrapped_or_plain, true)?),
            }
        }
    }
    Ok(out)
}

/// The order of `n` (2 or 3) variants in block `b`: every permutation in turn, so that over each
/// full cycle every variant takes every place equally often and (for three) follows every other
/// equally often and never itself. Reversing one order each block would put the middle one of
/// three always just after a switch, and never twice in a row as the first and last ones are.
pub fn block_order(b: usize, n: usize) -> Vec<usize> {
    const THREE: [[usize; 3]; 6] = [
        [0, 1, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
        [1, 0, 2],
        [0, 2, 1],
    ];
    match n {
        3 => THREE[b % 6].to_vec(),
        _ if b % 2 == 0 => (0..n).collect(),
        _ => (0..n).rev().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::{block_order, Blocks};

    #[test]
    fn blocks_fit_the_time_in_whole_cycles_between_the_bounds() {
        let b = |seconds| Blocks {
            most: 300,
            fewest: 30,
            seconds,
        };
        // No time set: the full design, however slow a block.
        assert_eq!(b(None).fitting(3, 1.0), 300);
        // 10 s at 4 ms a block of each of 3 variants: 833 cycles of all three fit, capped at 300.
        assert_eq!(b(Some(10.0)).fitting(3, 0.004), 300);
        // 2 s at 4 ms: 166 blocks of each fit, 162 is the last whole cycle of 6.
        assert_eq!(b(Some(2.0)).fitting(3, 0.004), 162);
        // With two variants, cycles of 2: 2 s at 4 ms is 250 blocks of each.
        assert_eq!(b(Some(2.0)).fitting(2, 0.004), 250);
        // 1 s at 5 ms with two: 100.
        assert_eq!(b(Some(1.0)).fitting(2, 0.005), 100);
        // Too little time, none, or time already past: the fewest.
        assert_eq!(b(Some(0.1)).fitting(3, 0.004), 30);
        assert_eq!(b(Some(0.0)).fitting(3, 0.004), 30);
        assert_eq!(b(Some(-5.0)).fitting(2, 0.004), 30);
        // A warm-up too fast to time: the full design.
        assert_eq!(b(Some(1.0)).fitting(2, 0.0), 300);
    }

    #[test]
    fn every_variant_takes_every_place_equally_often() {
        for n in [2, 3] {
            let cycle = if n == 3 { 6 } else { 2 };
            let orders: Vec<Vec<usize>> = (0..cycle).map(|b| block_order(b, n)).collect();
            for v in 0..n {
                for place in 0..n {
                    let times = orders.iter().filter(|o| o[place] == v).count();
                    assert_eq!(
                        times,
                        cycle / n,
                        "variant {v} at place {place} of {orders:?}"
                    );
                }
            }
            assert!(orders.iter().all(|o| {
                let mut s = o.clone();
                s.sort();
                s == (0..n).collect::<Vec<_>>()
            }));
            // Run back to back, cycle after cycle: with three, every variant follows every other
            // equally often and never itself; with two, each runs twice in a row equally often.
            let run: Vec<usize> = orders.concat();
            let mut follows = vec![vec![0; n]; n];
            for k in 0..run.len() {
                follows[run[k]][run[(k + 1) % run.len()]] += 1;
            }
            if n == 3 {
                for (a, row) in follows.iter().enumerate() {
                    for (b, &f) in row.iter().enumerate() {
                        assert_eq!(f, if a == b { 0 } else { 3 }, "{a} then {b} in {run:?}");
                    }
                }
            } else {
                assert_eq!(
                    (follows[0][0], follows[1][1], follows[0][1], follows[1][0]),
                    (1, 1, 1, 1),
                    "{run:?}"
                );
            }
        }
    }
}
