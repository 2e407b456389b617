//! The render benchmark's input (smoke/render-bench.sh): 50 copies of one results file, written in
//! this pqprof's schema and a run's default form (gzip), as 50 machines (`run-I.json.gz`, each its
//! own fingerprint) and as 50 runs of one machine at other times (`one-I.json.gz`).
//!
//! Usage: copies RESULTS.json DIR

use anyhow::{Context, Result};
use pqprof_core::results as io;
use std::path::PathBuf;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [src, dir] = args.as_slice() else {
        anyhow::bail!("usage: copies RESULTS.json DIR");
    };
    let mut r = io::read(&PathBuf::from(src))?;
    // What a producer of this pqprof stores with every file it writes (the same for every copy:
    // the figures' keys hold their inputs, not the host or the time).
    r.derived = pqprof_core::render::derive(&r);
    let dir = PathBuf::from(dir);
    for i in 0..50 {
        r.run.host.fingerprint = format!("{i:06x}");
        r.run.date_utc = format!("2026-11-30T00:00:{i:02}Z");
        io::create(&dir.join(format!("run-{i}.json.gz")), &r, true).context("machine copy")?;
    }
    r.run.host.fingerprint = "a0a0a0".into();
    for i in 0..50 {
        r.run.date_utc = format!("2026-11-30T{:02}:{:02}:30Z", i / 60, i % 60);
        io::create(&dir.join(format!("one-{i}.json.gz")), &r, true).context("history copy")?;
    }
    Ok(())
}
