//! An experiment, not part of a run: does a signature call's speed depend on where the caller's
//! stack sits? Runs a backend's keygen (and sign) with the stack moved down in steps (a chain of
//! non-inlined frames), over more than one 4 KiB page of offsets, interleaved in rounds on the pinned
//! core, and prints the median per offset. Two processes (pqprof and a speed tool) calling the same
//! library code from different stack addresses can differ by what this shows.
//! Usage: cargo run --release --example stack_offset [BACKEND] [ALGORITHM] [ROUNDS]

use pqprof::backend;
use std::hint::black_box;
use std::time::Instant;

#[inline(never)]
fn at_depth(n: usize, f: &mut dyn FnMut() -> f64) -> (f64, usize) {
    let pad = [n as u8; 16];
    black_box(&pad);
    if n == 0 {
        let here = black_box(&pad) as *const _ as usize;
        (f(), here)
    } else {
        let r = at_depth(n - 1, f);
        black_box(&pad);
        r
    }
}

fn main() -> anyhow::Result<()> {
    let a: Vec<String> = std::env::args().collect();
    let name = a.get(1).map_or("liboqs", String::as_str);
    let alg = a.get(2).map_or("SLH-DSA-SHAKE-128f", String::as_str);
    let rounds: usize = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let core = pqprof::measure::pin();
    let be = backend::all()
        .into_iter()
        .find(|b| b.name() == name)
        .ok_or_else(|| anyhow::anyhow!("no backend {name}"))?;
    let sig = be
        .sig(alg)
        .ok_or_else(|| anyhow::anyhow!("{name} has no {alg}"))?;
    let (_, sk) = sig.keygen()?;
    let msg = [7u8; 50];
    // Frame size: the distance between depth 0 and depth 1.
    let (_, a0) = at_depth(0, &mut || 0.0);
    let (_, a1) = at_depth(1, &mut || 0.0);
    let step = a0.abs_diff(a1).max(1);
    let depths = 4096 / step + 2;
    let mut keygen = vec![Vec::new(); depths];
    let mut sign = vec![Vec::new(); depths];
    let mut addr = vec![0usize; depths];
    for _ in 0..rounds {
        for d in 0..depths {
            let (t, here) = at_depth(d, &mut || {
                let t = Instant::now();
                for _ in 0..4 {
                    black_box(sig.keygen().expect("keygen"));
                }
                t.elapsed().as_nanos() as f64 / 4.0
            });
            keygen[d].push(t);
            addr[d] = here;
            let (t, _) = at_depth(d, &mut || {
                let t = Instant::now();
                black_box(sig.sign(&sk, &msg).expect("sign"));
                t.elapsed().as_nanos() as f64
            });
            sign[d].push(t);
        }
    }
    let med = |v: &[f64]| pqprof::stats::median(v) / 1e3;
    println!("{name} {alg}, core {core:?}, frame {step} bytes, {depths} offsets x {rounds} rounds; medians, us");
    println!("offset  addr%4096  keygen   sign");
    for d in 0..depths {
        println!(
            "{:6} {:10} {:8.1} {:8.1}",
            d * step,
            addr[d] % 4096,
            med(&keygen[d]),
            med(&sign[d])
        );
    }
    Ok(())
}
