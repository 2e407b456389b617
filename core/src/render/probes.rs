//! The probes page: each endpoint a user probed (`pqprof probe`), what it takes, its flights
//! against TCP's initial window, and the hybrid's latency, all read from the probe's stored
//! findings. Probes are found in a `probes/` folder beside the results files rendered.

use crate::results::{read_probe, Probe, ProbeFile};
use crate::tables::probe::{answers, Answers};
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A probe file and where the site keeps its copy.
pub(crate) struct Probed {
    pub(crate) file: PathBuf,
    pub(crate) href: String,
    pub(crate) probe: Probe,
}

/// The probes of the folders rendered: `FOLDER/probes/*.json`, each named in any error.
pub(crate) fn find(paths: &[PathBuf]) -> Result<Vec<Probed>> {
    let mut out = Vec::new();
    for p in paths.iter().filter(|p| p.is_dir()) {
        let dir = p.join("probes");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|f| f.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for f in files {
            let ProbeFile { probe, .. } = read_probe(&f)?;
            let name = f
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            out.push(Probed {
                href: format!("data/probes/{name}"),
                file: f,
                probe,
            });
        }
    }
    Ok(out)
}

/// Copies each probe file into the site (`data/probes/`).
pub(crate) fn copy(probes: &[Probed], site: &Path) -> Result<()> {
    if probes.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(site.join("data/probes"))?;
    for p in probes {
        std::fs::copy(&p.file, site.join(&p.href))
            .with_context(|| format!("{}: cannot copy", p.file.display()))?;
    }
    Ok(())
}

#[derive(Serialize)]
pub(crate) struct View {
    id: String,
    target: String,
    address: String,
    date: String,
    host: String,
    verification: String,
    json_href: String,
    connections: usize,
    seconds: String,
    limits: String,
    answers: Answers,
}

pub(crate) fn build(probes: &[Probed]) -> Vec<View> {
    probes
        .iter()
        .enumerate()
        .map(|(i, probed)| {
            let p = &probed.probe;
            View {
                id: format!("probe-{i}"),
                target: p.target.clone(),
                address: p.address.clone(),
                date: p.date_utc.clone(),
                host: p.host.label(),
                verification: p.verification.clone(),
                json_href: probed.href.clone(),
                connections: p.connections.len(),
                seconds: format!("{:.1}", p.wall_seconds),
                limits: format!(
                    "at most {} a second and {} in all",
                    p.per_second, p.max_connections
                ),
                answers: answers(p),
            }
        })
        .collect()
}
