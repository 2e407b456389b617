//! Published cycle counts (`references/cycles.toml`), each with its machine and source, set beside
//! pqprof's own TSC cycles per call.

use crate::results::{Operation, ReferenceRow, Results};
use anyhow::{Context, Result};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Reference {
    pub(crate) primitive: String,
    pub(crate) operation: String,
    pub(crate) implementation: String,
    pub(crate) cycles: f64,
    pub(crate) statistic: String,
    pub(crate) machine: String,
    pub(crate) microarchitecture: String,
    pub(crate) source: String,
    pub(crate) source_date: String,
    #[serde(default)]
    // Parsed so the file states where its figure comes from; nothing prints it yet.
    #[allow(dead_code)]
    pub(crate) quote: String,
    /// A build users do not get (experimental compilers): shown in cross-checks, never taken as
    /// the best published figure.
    #[serde(default)]
    pub(crate) experimental: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Throughput {
    pub(crate) primitive: String,
    pub(crate) operation: String,
    pub(crate) implementation: String,
    pub(crate) message_bytes: usize,
    pub(crate) cycles_per_byte: f64,
    pub(crate) statistic: String,
    pub(crate) machine: String,
    pub(crate) microarchitecture: String,
    pub(crate) source: String,
    pub(crate) source_date: String,
}

#[derive(Debug, Deserialize)]
struct File {
    #[serde(default)]
    reference: Vec<Reference>,
    #[serde(default)]
    throughput_reference: Vec<Throughput>,
}

pub(crate) fn load(path: &Path) -> Result<(Vec<Reference>, Vec<Throughput>)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    parse(&text, &path.display().to_string())
}

/// The references this pqprof was built with (references/cycles.toml, compiled in): what the
/// league tables set every phase against, whatever directory the site is rendered from.
pub(crate) fn builtin() -> Result<(Vec<Reference>, Vec<Throughput>)> {
    parse(
        include_str!("../../references/cycles.toml"),
        "references/cycles.toml",
    )
}

fn parse(text: &str, name: &str) -> Result<(Vec<Reference>, Vec<Throughput>)> {
    let f: File = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map_or(0, |s| text[..s.start].lines().count().max(1));
        anyhow::anyhow!("{name}:{line}: {}", e.message())
    })?;
    for r in &f.reference {
        if Operation::from_name(&r.operation).is_none() {
            anyhow::bail!(
                "{name}: reference for {} has unknown operation {}",
                r.primitive,
                r.operation
            );
        }
    }
    Ok((f.reference, f.throughput_reference))
}

/// Published cycles beside pqprof's median TSC cycles from the results file.
pub fn reference_rows(r: &Results, path: &Path) -> Result<Vec<ReferenceRow>> {
    let (refs, throughput) = load(path)?;
    let here = r.run.host.microarchitecture.as_str();
    let mut rows = Vec::new();
    for rf in &refs {
        let Some(op) = Operation::from_name(&rf.operation) else {
            continue;
        };
        for p in r
            .phases
            .iter()
            .filter(|p| p.algorithm == rf.primitive && p.operation == op)
        {
            let Some(c) = &p.cycles else { continue };
            rows.push(ReferenceRow {
                algorithm: rf.primitive.clone(),
                operation: op,
                backend: p.backend.clone(),
                pqprof_cycles: c.median,
                reference_cycles: rf.cycles,
                per_byte: false,
                ratio: c.median / rf.cycles,
                implementation: rf.implementation.clone(),
                machine: rf.machine.clone(),
                microarchitecture: rf.microarchitecture.clone(),
                comparable: !here.is_empty() && rf.microarchitecture == here,
                statistic: rf.statistic.clone(),
                source: rf.source.clone(),
                source_date: rf.source_date.clone(),
            });
        }
    }
    let payload = r.suites.iter().find_map(|s| s.payload_bytes);
    for t in &throughput {
        let Some(op) = Operation::from_name(&t.operation) else {
            continue;
        };
        // Cycles per byte depend on the message size: only the size pqprof measured compares.
        if Some(t.message_bytes) != payload {
            continue;
        }
        for p in r
            .phases
            .iter()
            .filter(|p| p.algorithm == t.primitive && p.operation == op)
        {
            let Some(c) = &p.cycles else { continue };
            let per_byte = c.median / t.message_bytes as f64;
            rows.push(ReferenceRow {
                algorithm: t.primitive.clone(),
                operation: op,
                backend: p.backend.clone(),
                pqprof_cycles: per_byte,
                reference_cycles: t.cycles_per_byte,
                per_byte: true,
                ratio: per_byte / t.cycles_per_byte,
                implementation: format!("{} ({} B messages)", t.implementation, t.message_bytes),
                machine: t.machine.clone(),
                microarchitecture: t.microarchitecture.clone(),
                comparable: !here.is_empty() && t.microarchitecture == here,
                statistic: t.statistic.clone(),
                source: t.source.clone(),
                source_date: t.source_date.clone(),
            });
        }
    }
    Ok(rows)
}

/// Seed 000's published figures (references/seed000.toml, compiled in): a labelled reference row.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
pub(crate) struct Seed000 {
    pub(crate) source: String,
    pub(crate) runtime: String,
    pub(crate) machine: String,
    pub(crate) statistic: String,
    pub(crate) tls_classical_ms: f64,
    pub(crate) tls_hybrid_ms: f64,
    pub(crate) raw_mlkem768_ms: f64,
    pub(crate) raw_ecdh_p256_ms: f64,
    pub(crate) client_bytes_classical: f64,
    pub(crate) client_allocs_classical: f64,
    pub(crate) client_bytes_hybrid: f64,
    pub(crate) client_allocs_hybrid: f64,
}

pub(crate) fn seed000() -> Result<Seed000> {
    toml::from_str(include_str!("../../references/seed000.toml"))
        .map_err(|e| anyhow::anyhow!("references/seed000.toml: {}", e.message()))
}

/// What a results file does not record about its machine (references/machines.toml, compiled in),
/// with where it was found.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct MachineNote {
    pub(crate) fingerprint: String,
    pub(crate) note: String,
    pub(crate) source: String,
}

#[derive(Debug, Deserialize)]
struct MachinesFile {
    machine: Vec<MachineNote>,
}

pub(crate) fn machine_notes() -> Result<Vec<MachineNote>> {
    let f: MachinesFile = toml::from_str(include_str!("../../references/machines.toml"))
        .map_err(|e| anyhow::anyhow!("references/machines.toml: {}", e.message()))?;
    Ok(f.machine)
}

/// One of Paquin, Stebila & Tamvada's published points (references/paquin.toml, compiled in):
/// handshake-time percentiles of one key exchange and one server signature algorithm at one RTT and
/// loss rate, from their key-exchange or their signature experiments.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct PaquinPoint {
    /// "kex" (the key exchange varies, ECDSA P-256 authenticates) or "sig" (the signature varies,
    /// p256_kyber512_90s exchanges keys).
    #[serde(default = "kex_experiment")]
    pub(crate) experiment: String,
    pub(crate) kex: String,
    #[serde(default = "ecdsa_sig")]
    pub(crate) sig: String,
    pub(crate) rtt_ms: f64,
    pub(crate) loss_pct: f64,
    /// Handshakes per point where the published code says (the signature runs do not).
    #[serde(default)]
    // Parsed so the file states where its figure comes from; nothing prints it yet.
    #[allow(dead_code)]
    pub(crate) samples: Option<usize>,
    pub(crate) percentiles: Vec<f64>,
    pub(crate) ms: Vec<f64>,
    // Parsed so the file states where its figure comes from; nothing prints it yet.
    #[allow(dead_code)]
    pub(crate) source_file: String,
}

#[derive(Debug, Deserialize)]
struct PaquinFile {
    point: Vec<PaquinPoint>,
}

pub(crate) fn paquin() -> Result<Vec<PaquinPoint>> {
    let f: PaquinFile = toml::from_str(include_str!("../../references/paquin.toml"))
        .map_err(|e| anyhow::anyhow!("references/paquin.toml: {}", e.message()))?;
    Ok(f.point)
}

fn kex_experiment() -> String {
    "kex".into()
}

fn ecdsa_sig() -> String {
    "ecdsap256".into()
}

/// The key-exchange experiments' point of `kex` nearest an RTT (within 10%) at exactly this loss
/// rate.
pub(crate) fn paquin_nearest<'a>(
    points: &'a [PaquinPoint],
    kex: &str,
    rtt_ms: f64,
    loss_pct: f64,
) -> Option<&'a PaquinPoint> {
    nearest(
        points,
        |p| p.experiment == "kex" && p.kex == kex,
        rtt_ms,
        loss_pct,
    )
}

/// The signature experiments' point of `sig` ("ecdsap256", "dilithium2") nearest an RTT (within
/// 10%) at exactly this loss rate.
pub(crate) fn paquin_sig_nearest<'a>(
    points: &'a [PaquinPoint],
    sig: &str,
    rtt_ms: f64,
    loss_pct: f64,
) -> Option<&'a PaquinPoint> {
    nearest(
        points,
        |p| p.experiment == "sig" && p.sig == sig,
        rtt_ms,
        loss_pct,
    )
}

fn nearest(
    points: &[PaquinPoint],
    series: impl Fn(&PaquinPoint) -> bool,
    rtt_ms: f64,
    loss_pct: f64,
) -> Option<&PaquinPoint> {
    points
        .iter()
        .filter(|p| {
            series(p)
                && (p.loss_pct - loss_pct).abs() < 1e-9
                && (p.rtt_ms - rtt_ms).abs() <= rtt_ms * 0.1
        })
        .min_by(|a, b| {
            (a.rtt_ms - rtt_ms)
                .abs()
                .total_cmp(&(b.rtt_ms - rtt_ms).abs())
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn machine_notes_load_and_carry_a_source() {
        let notes = super::machine_notes().unwrap();
        assert!(notes.iter().all(|n| n.fingerprint.len() == 6
            && !n.note.is_empty()
            && n.source.contains("commit")));
    }

    #[test]
    fn paquin_points_load_and_the_nearest_is_found() {
        let p = super::paquin().unwrap();
        assert_eq!(
            p.len(),
            400,
            "2 x 100 key-exchange points, 2 x 100 signature points"
        );
        let near = super::paquin_nearest(&p, "prime256v1", 5.6, 10.0).unwrap();
        assert_eq!(near.rtt_ms, 5.609);
        assert_eq!(near.percentiles.len(), near.ms.len());
        assert!(super::paquin_nearest(&p, "prime256v1", 50.0, 10.0).is_none());
        // The hybrid exchange is in both experiments; the key-exchange lookup keeps to its own.
        let hybrid = super::paquin_nearest(&p, "p256_kyber512_90s", 5.6, 0.0).unwrap();
        assert_eq!((hybrid.experiment.as_str(), hybrid.rtt_ms), ("kex", 5.609));
        // REFERENCES.md's medians: Dilithium2 12.11 ms at 5.54 ms RTT, 158.94 ms at 78.62 ms.
        let d = super::paquin_sig_nearest(&p, "dilithium2", 5.6, 0.0).unwrap();
        assert_eq!((d.rtt_ms, d.percentiles[2], d.ms[2]), (5.54, 50.0, 12.112));
        let far = super::paquin_sig_nearest(&p, "dilithium2", 78.7, 0.0).unwrap();
        assert!((far.ms[2] - 158.94).abs() < 0.01, "{}", far.ms[2]);
        assert_eq!(
            super::paquin_sig_nearest(&p, "ecdsap256", 78.7, 0.0)
                .unwrap()
                .kex,
            "p256_kyber512_90s"
        );
    }

    #[test]
    fn committed_references_load_and_carry_sources() {
        let (refs, tp) = super::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../references/cycles.toml"),
        )
        .unwrap();
        assert!(refs.len() >= 10);
        for r in refs.iter().chain([].iter()) {
            assert!(
                r.source.starts_with("https://"),
                "{}: no source",
                r.implementation
            );
            assert!(r.cycles > 0.0 && !r.machine.is_empty() && !r.source_date.is_empty());
        }
        assert!(tp
            .iter()
            .all(|t| t.cycles_per_byte > 0.0 && t.source.starts_with("https://")));
        let seed = super::seed000().unwrap();
        assert_eq!((seed.tls_classical_ms, seed.tls_hybrid_ms), (0.789, 1.049));
        assert!(seed.source.contains("32970330873"));
    }
}
