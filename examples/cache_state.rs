//! An experiment, not part of a run: does a phase cost more inside a real handshake because the
//! handshake's other work leaves the caches cold for it? Times each key-exchange call of a backend
//! hot (back to back, as `pqprof run` does), data-cold (a sweep through a buffer larger than the L2
//! cache between calls, as the rest of a handshake does to the data caches) and code-cold (the sweep
//! plus an ECDSA P-256 sign and verify of the same library, which also displaces the instruction
//! cache and branch predictors as a handshake's other code does), interleaved on one pinned core,
//! and woken (after 200 us asleep, as each side of a handshake is while the other works), and
//! prints the medians. Usage: cargo run --release --example cache_state [BACKEND] [SWEEP_KIB]
//! (default awslc, 4096 KiB).

use pqprof::backend;
use std::hint::black_box;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).map_or("awslc", String::as_str);
    let kib: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(4096);
    let core = pqprof::measure::pin();
    let be = backend::all().into_iter().find(|b| b.name() == name).ok_or_else(|| anyhow::anyhow!("no backend {name}"))?;
    let mut sweep = vec![1u8; kib * 1024];
    let mut evict = |on: bool| {
        if on {
            // Read and write every cache line: what a handshake's parsing, state and syscalls do.
            for i in (0..sweep.len()).step_by(64) {
                sweep[i] = sweep[i].wrapping_add(1);
            }
            black_box(&sweep);
        }
    };
    println!("backend {name}, core {core:?}, sweep {kib} KiB between cold calls; medians of 2,000 calls");
    let kem = be.kem("ML-KEM-768").ok_or_else(|| anyhow::anyhow!("{name} has no ML-KEM-768"))?;
    let dh = be.dh("X25519").ok_or_else(|| anyhow::anyhow!("{name} has no X25519"))?;
    let (ek, dk) = kem.keygen()?;
    let (ct, _) = kem.encaps(&ek)?;
    let (peer, _) = dh.keygen()?;
    let (_, secret) = dh.keygen()?;
    let sig = be.sig("ECDSA-P256").ok_or_else(|| anyhow::anyhow!("{name} has no ECDSA P-256"))?;
    let (pk, sk) = sig.keygen()?;
    let pk = sig.load_public(&pk)?;
    let other = |mode: u8, evict: &mut dyn FnMut(bool)| -> anyhow::Result<()> {
        evict(mode > 0);
        if mode == 2 {
            let s = sig.sign(&sk, b"transcript hash")?;
            anyhow::ensure!(sig.verify(&pk, b"transcript hash", &s)?, "ECDSA signature did not verify");
        }
        Ok(())
    };
    type Call<'a> = Box<dyn FnMut() -> anyhow::Result<()> + 'a>;
    let calls: Vec<(&str, Call)> = vec![
        ("ML-KEM-768 kem.keygen", Box::new(|| kem.keygen().map(|x| drop(black_box(x))))),
        ("ML-KEM-768 kem.encaps", Box::new(|| kem.encaps(&ek).map(|x| drop(black_box(x))))),
        ("ML-KEM-768 kem.decaps", Box::new(|| kem.decaps(&dk, &ct).map(|x| drop(black_box(x))))),
        ("X25519 dh.keygen", Box::new(|| dh.keygen().map(|x| drop(black_box(x))))),
        ("X25519 dh.derive", Box::new(|| dh.derive(&secret, &peer).map(|x| drop(black_box(x))))),
    ];
    for (label, mut call) in calls {
        let (mut hot, mut cold, mut code, mut woken) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..200 {
            call()?;
        }
        // Interleaved, so drift hits both alike.
        for _ in 0..2000 {
            for (mode, out) in [(0, &mut hot), (1, &mut cold), (2, &mut code), (3, &mut woken)] {
                if mode == 3 {
                    // Idle, then woken, as a handshake's side is between flights.
                    std::thread::sleep(std::time::Duration::from_micros(200));
                } else {
                    other(mode, &mut evict)?;
                }
                let t = Instant::now();
                call()?;
                out.push(t.elapsed().as_nanos() as f64);
            }
        }
        let (h, c, k, w) = (median(hot), median(cold), median(code), median(woken));
        println!(
            "{label:22} hot {:6.2} us  data-cold {:6.2} ({:.2}x)  code-cold {:6.2} ({:.2}x)  woken {:6.2} ({:.2}x)",
            h / 1e3, c / 1e3, c / h, k / 1e3, k / h, w / 1e3, w / h
        );
    }
    Ok(())
}
