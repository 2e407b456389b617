//! An experiment, not part of a run: how a stack's server writes its first flight. Starts one
//! `handshake-server` (or the Go peer's) with a chain of suites/auth.toml, prints its pid, waits
//! for a line on stdin (attach `strace -f -e trace=write,sendto,sendmsg -p PID` meanwhile), then
//! makes N connections. A server that writes ServerHello to Certificate before it signs shows a
//! write of the chain before the CertificateVerify's.
//! Usage: PQPROF_BIN=target/release/pqprof cargo run --release --example flight_writes -- \
//!        [STACK] [GROUP] [AUTH] [N]

use pqprof::stack::{self, child, Config, Identity};

fn main() -> anyhow::Result<()> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: &str| a.get(i).cloned().unwrap_or_else(|| d.to_string());
    let st = stack::find(&arg(0, "rustls"))?;
    let group = arg(1, "X25519MLKEM768");
    let auths = pqprof::auth::load(std::path::Path::new("suites"), "tls13", None)?
        .ok_or_else(|| anyhow::anyhow!("no suites/auth.toml"))?;
    let auth = auths
        .auths
        .iter()
        .find(|x| x.name == arg(2, "ML-DSA-65"))
        .ok_or_else(|| anyhow::anyhow!("no such authentication"))?;
    let n: usize = arg(3, "3").parse()?;
    let id = Identity::new(auth)?;
    let files = stack::identity::Files::write(&id, "flight")?;
    let s = st.start_server(&child::Start::loopback(&group, &files, false))?;
    println!("server pid {}", s.child.id());
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    let client = st.client(Config::plain(&group, &id))?;
    for _ in 0..n {
        client.connect(s.addr, false)?;
    }
    println!("{n} connections made");
    Ok(())
}
