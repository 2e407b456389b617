//! Published cycle counts (`references/cycles.toml`), each with its machine and source, set beside
//! pqprof's own TSC cycles per call.

use crate::algorithm::Operation;
use anyhow::{Context, Result};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Deserialize)]
pub struct Reference {
    pub primitive: String,
    pub operation: String,
    pub implementation: String,
    pub cycles: f64,
    pub statistic: String,
    pub machine: String,
    pub microarchitecture: String,
    pub source: String,
    pub source_date: String,
    #[serde(default)]
    pub quote: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Throughput {
    pub primitive: String,
    pub operation: String,
    pub implementation: String,
    pub message_bytes: usize,
    pub cycles_per_byte: f64,
    pub statistic: String,
    pub machine: String,
    pub microarchitecture: String,
    pub source: String,
    pub source_date: String,
}

#[derive(Debug, Deserialize)]
struct File {
    #[serde(default)]
    reference: Vec<Reference>,
    #[serde(default)]
    throughput_reference: Vec<Throughput>,
}

pub fn load(path: &Path) -> Result<(Vec<Reference>, Vec<Throughput>)> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let f: File = toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.message()))?;
    for r in &f.reference {
        if Operation::from_name(&r.operation).is_none() {
            anyhow::bail!("{}: reference for {} has unknown operation {}", path.display(), r.primitive, r.operation);
        }
    }
    Ok((f.reference, f.throughput_reference))
}

#[cfg(test)]
mod tests {
    #[test]
    fn committed_references_load_and_carry_sources() {
        let (refs, tp) = super::load(std::path::Path::new("references/cycles.toml")).unwrap();
        assert!(refs.len() >= 10);
        for r in refs.iter().chain([].iter()) {
            assert!(r.source.starts_with("https://"), "{}: no source", r.implementation);
            assert!(r.cycles > 0.0 && !r.machine.is_empty() && !r.source_date.is_empty());
        }
        assert!(tp.iter().all(|t| t.cycles_per_byte > 0.0 && t.source.starts_with("https://")));
    }
}
