//! An experiment, not part of a run: does a phase cost more inside a real handshake because the
//! handshake's other work leaves the caches cold for it? Times each key-exchange call of a backend
//! hot (back to back, as `pqprof run` does), data-cold (a sweep through a buffer larger than the L2
//! cache between calls, as the rest of a handshake does to the data caches) and code-cold (the sweep
//! plus an ECDSA P-256 sign and verify of the same library, which also displaces the instruction
//! cache and branch predictors as a handshake's other code does), interleaved on one pinned core,
//! woken by a timer (after 200 us asleep, as each side of a handshake is while the other works), and
//! woken by a peer on the other core (a 1-byte round trip over a Unix socket, and over loopback TCP), and
//! prints the medians. Usage: cargo run --release --example cache_state [BACKEND] [SWEEP_KIB]
//! (default awslc, 4096 KiB).

use pqprof::backend;
use std::hint::black_box;
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).map_or("awslc", String::as_str);
    let kib: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(4096);
    let core = pqprof::measure::pin();
    let be = backend::all()
        .into_iter()
        .find(|b| b.name() == name)
        .ok_or_else(|| anyhow::anyhow!("no backend {name}"))?;
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
    println!(
        "backend {name}, core {core:?}, sweep {kib} KiB between cold calls; medians of 2,000 calls"
    );
    let kem = be
        .kem("ML-KEM-768")
        .ok_or_else(|| anyhow::anyhow!("{name} has no ML-KEM-768"))?;
    let dh = be
        .dh("X25519")
        .ok_or_else(|| anyhow::anyhow!("{name} has no X25519"))?;
    let (ek, dk) = kem.keygen()?;
    let (ct, _) = kem.encaps(&ek)?;
    let (peer, _) = dh.keygen()?;
    let (_, secret) = dh.keygen()?;
    let sig = be
        .sig("ECDSA-P256")
        .ok_or_else(|| anyhow::anyhow!("{name} has no ECDSA P-256"))?;
    let (pk, sk) = sig.keygen()?;
    let pk = sig.load_public(&pk)?;
    let other = |mode: u8, evict: &mut dyn FnMut(bool)| -> anyhow::Result<()> {
        evict(mode > 0);
        if mode == 2 {
            let s = sig.sign(&sk, b"transcript hash")?;
            anyhow::ensure!(
                sig.verify(&pk, b"transcript hash", &s)?,
                "ECDSA signature did not verify"
            );
        }
        Ok(())
    };
    type Call<'a> = Box<dyn FnMut() -> anyhow::Result<()> + 'a>;
    let calls: Vec<(&str, Call)> = vec![
        (
            "ML-KEM-768 kem.keygen",
            Box::new(|| kem.keygen().map(|x| drop(black_box(x)))),
        ),
        (
            "ML-KEM-768 kem.encaps",
            Box::new(|| kem.encaps(&ek).map(|x| drop(black_box(x)))),
        ),
        (
            "ML-KEM-768 kem.decaps",
            Box::new(|| kem.decaps(&dk, &ct).map(|x| drop(black_box(x)))),
        ),
        (
            "X25519 dh.keygen",
            Box::new(|| dh.keygen().map(|x| drop(black_box(x)))),
        ),
        (
            "X25519 dh.derive",
            Box::new(|| dh.derive(&secret, &peer).map(|x| drop(black_box(x)))),
        ),
    ];
    // The other side: an echo thread on the other core, reached over a Unix socket (a wake-up by a
    // peer and nothing more) or over a loopback TCP connection (the wake-up plus the kernel's TCP path,
    // as each flight of a loopback handshake).
    let peer_core =
        core_affinity::get_core_ids().and_then(|ids| ids.into_iter().find(|c| Some(c.id) != core));
    let (tcp, unix) = echo_peers(peer_core)?;
    let (mut tcp, mut unix) = (tcp, unix);
    for (label, mut call) in calls {
        let mut out: [Vec<f64>; 6] = Default::default();
        for _ in 0..200 {
            call()?;
        }
        // Interleaved, so drift hits both alike.
        for _ in 0..2000 {
            for (mode, out) in out.iter_mut().enumerate() {
                match mode {
                    // Idle, then woken by a timer, as a handshake's side is between flights.
                    3 => std::thread::sleep(std::time::Duration::from_micros(200)),
                    4 => round_trip(&mut unix)?,
                    5 => round_trip(&mut tcp)?,
                    m => other(m as u8, &mut evict)?,
                }
                let t = Instant::now();
                call()?;
                out.push(t.elapsed().as_nanos() as f64);
            }
        }
        let m: Vec<f64> = out.iter().map(|v| pqprof::stats::median(v)).collect();
        print!("{label:22} hot {:6.2} us", m[0] / 1e3);
        for (name, v) in [
            "data-cold",
            "code-cold",
            "timer-woken",
            "unix-woken",
            "tcp-woken",
        ]
        .iter()
        .zip(&m[1..])
        {
            print!("  {name} {:6.2} ({:.2}x)", v / 1e3, v / m[0]);
        }
        println!();
    }
    Ok(())
}

/// One byte to the echo thread and its answer back: this thread blocks, and is woken by the peer.
fn round_trip(s: &mut (impl std::io::Read + std::io::Write)) -> anyhow::Result<()> {
    let mut b = [7u8];
    s.write_all(&b)?;
    s.read_exact(&mut b)?;
    Ok(())
}

/// Echo threads on `core`: one over loopback TCP (Nagle off, as rustls's and OpenSSL's sockets in
/// the handshakes), one over a Unix socket pair (a wake-up by the peer, without TCP).
fn echo_peers(
    core: Option<core_affinity::CoreId>,
) -> anyhow::Result<(std::net::TcpStream, std::os::unix::net::UnixStream)> {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    std::thread::spawn(move || {
        if let Some(c) = core {
            core_affinity::set_for_current(c);
        }
        let (mut s, _) = listener.accept().expect("accept");
        s.set_nodelay(true).expect("nodelay");
        let mut b = [0u8];
        while s.read_exact(&mut b).is_ok() && s.write_all(&b).is_ok() {}
    });
    let tcp = std::net::TcpStream::connect(addr)?;
    tcp.set_nodelay(true)?;
    let (mine, mut theirs) = std::os::unix::net::UnixStream::pair()?;
    std::thread::spawn(move || {
        if let Some(c) = core {
            core_affinity::set_for_current(c);
        }
        let mut b = [0u8];
        while theirs.read_exact(&mut b).is_ok() && theirs.write_all(&b).is_ok() {}
    });
    Ok((tcp, mine))
}
