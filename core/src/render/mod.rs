//! The static site: results JSON -> pages, with minijinja templates compiled into the binary.
//! The renderer does not compute figures; it formats what the JSON holds and places it.

mod capacity;
mod compare;
mod methodology;
mod network;
mod overview;
pub mod svg;
pub mod verify;

use crate::results::{self, Results};
use anyhow::{anyhow, bail, Context, Result};
use minijinja::{AutoEscape, Environment};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One loaded results file, with how the site names and links it.
pub struct Run {
    pub results: Results,
    /// Host, CPU, microarchitecture and time ("vm · AMD EPYC (zen5) · 2026-11-30T03:26:02Z"),
    /// unique across the runs given.
    pub label: String,
    /// Where the copied JSON is, relative to the site root.
    pub json_href: String,
}

pub struct Options {
    /// Link to the tool's source at a commit: a template with `{commit}`.
    pub source_url: Option<String>,
    /// The run every other run is compared with on the compare page (default: the oldest).
    pub baseline: Option<PathBuf>,
}

const TEMPLATES: [(&str, &str); 4] = [
    ("base.html", include_str!("../../../templates/base.html")),
    ("index.html", include_str!("../../../templates/index.html")),
    (
        "compare.html",
        include_str!("../../../templates/compare.html"),
    ),
    (
        "methodology.html",
        include_str!("../../../templates/methodology.html"),
    ),
];

pub fn environment() -> Result<Environment<'static>> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    for (name, src) in TEMPLATES {
        env.add_template(name, src)?;
    }
    Ok(env)
}

/// Header facts every page shows.
#[derive(Serialize)]
pub struct RunLine {
    pub label: String,
    pub host: String,
    pub microarchitecture: String,
    pub date: String,
    pub commit: String,
    pub commit_url: Option<String>,
    pub cpu: String,
    pub arch: String,
    pub cores: usize,
    pub liboqs: String,
    pub openssl: String,
    pub json_href: String,
}

fn run_line(run: &Run, opts: &Options) -> RunLine {
    let r = &run.results.run;
    RunLine {
        label: run.label.clone(),
        host: r.host.hostname.clone(),
        microarchitecture: if r.host.microarchitecture.is_empty() {
            "unknown".into()
        } else {
            r.host.microarchitecture.clone()
        },
        date: r.date_utc.clone(),
        commit: r.tool_commit.clone(),
        commit_url: opts
            .source_url
            .as_ref()
            .map(|u| u.replace("{commit}", r.tool_commit.trim_end_matches("-dirty"))),
        cpu: r.host.cpu_model.clone(),
        arch: r.host.arch.clone(),
        cores: r.host.cores,
        liboqs: r.liboqs_version.clone(),
        openssl: r.openssl_version.clone(),
        json_href: run.json_href.clone(),
    }
}

#[derive(Serialize)]
pub struct Page<T: Serialize> {
    pub title: String,
    pub page: &'static str,
    pub runs: Vec<RunLine>,
    pub architectures: String,
    pub body: T,
}

fn page<T: Serialize>(
    runs: &[Run],
    opts: &Options,
    title: &str,
    name: &'static str,
    body: T,
) -> Page<T> {
    let mut arches: Vec<String> = runs
        .iter()
        .map(|r| r.results.run.host.arch.clone())
        .collect();
    arches.sort();
    arches.dedup();
    Page {
        title: title.into(),
        page: name,
        runs: runs.iter().map(|r| run_line(r, opts)).collect(),
        architectures: arches.join(" · "),
        body,
    }
}

/// Loads results files and gives each a unique label.
pub fn load(files: &[PathBuf]) -> Result<Vec<Run>> {
    if files.is_empty() {
        bail!("no results files given");
    }
    let mut runs: Vec<Run> = Vec::new();
    for f in files {
        let results = results::read(f)?;
        let name = f
            .file_name()
            .ok_or_else(|| anyhow!("{}: not a file", f.display()))?
            .to_string_lossy()
            .into_owned();
        if runs.iter().any(|r| r.json_href == format!("data/{name}")) {
            bail!(
                "{}: two results files with the same name; the site keeps one copy of each",
                f.display()
            );
        }
        let mut label = results.label();
        // The same machine at the same second (a copy, or a test): still two rows, told apart.
        let same = runs.iter().filter(|r| r.label.starts_with(&label)).count();
        if same > 0 {
            label = format!("{label} ({name})");
        }
        runs.push(Run {
            results,
            label,
            json_href: format!("data/{name}"),
        });
    }
    // Runs built against different OpenSSL releases (`make openssl4`): the version names the row.
    let first = runs[0].results.run.openssl_version.clone();
    if runs.iter().any(|r| r.results.run.openssl_version != first) {
        for r in &mut runs {
            let short = r
                .results
                .run
                .openssl_version
                .split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ");
            r.label = format!("{} · {short}", r.label);
        }
    }
    Ok(runs)
}

/// Renders the site into `out`: built in a temporary folder beside it, then swapped in, so a failed
/// render leaves the previous site as it was.
pub fn render(files: &[PathBuf], out: &Path, opts: &Options) -> Result<()> {
    let runs = load(files)?;
    let env = environment()?;
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let name = out
        .file_name()
        .ok_or_else(|| anyhow!("{}: not a folder name", out.display()))?
        .to_string_lossy()
        .into_owned();
    let tmp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let built = build(&env, &runs, files, &tmp, opts);
    if let Err(e) = built {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    let old = parent.join(format!(".{name}.old-{}", std::process::id()));
    if out.exists() {
        std::fs::rename(out, &old).with_context(|| format!("{}: cannot replace", out.display()))?;
    }
    std::fs::rename(&tmp, out).with_context(|| format!("{}: cannot write", out.display()))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

/// The baseline run: the file named by `--baseline` (it must be one of the files rendered), else
/// the oldest run by its recorded date.
fn baseline_index(runs: &[Run], files: &[PathBuf], chosen: Option<&Path>) -> Result<usize> {
    if let Some(b) = chosen {
        let want = std::fs::canonicalize(b)
            .with_context(|| format!("--baseline {}: cannot read", b.display()))?;
        return files
            .iter()
            .position(|f| std::fs::canonicalize(f).is_ok_and(|c| c == want))
            .ok_or_else(|| {
                anyhow!(
                    "--baseline {}: not one of the results files being rendered",
                    b.display()
                )
            });
    }
    Ok((0..runs.len())
        .min_by(|&i, &j| {
            runs[i]
                .results
                .run
                .date_utc
                .cmp(&runs[j].results.run.date_utc)
        })
        .unwrap_or(0))
}

fn build(
    env: &Environment,
    runs: &[Run],
    files: &[PathBuf],
    dir: &Path,
    opts: &Options,
) -> Result<()> {
    std::fs::create_dir_all(dir.join("data"))?;
    for (run, file) in runs.iter().zip(files) {
        std::fs::copy(file, dir.join(&run.json_href))
            .with_context(|| format!("{}: cannot copy", file.display()))?;
    }
    let write = |name: &str, html: String| {
        std::fs::write(dir.join(name), html).with_context(|| format!("cannot write {name}"))
    };
    write(
        "index.html",
        env.get_template("index.html")?.render(page(
            runs,
            opts,
            "Overview",
            "index",
            overview::build(runs),
        ))?,
    )?;
    let baseline = baseline_index(runs, files, opts.baseline.as_deref())?;
    write(
        "compare.html",
        env.get_template("compare.html")?.render(page(
            runs,
            opts,
            "Compare",
            "compare",
            compare::build(runs, baseline),
        ))?,
    )?;
    write(
        "methodology.html",
        env.get_template("methodology.html")?.render(page(
            runs,
            opts,
            "Methodology",
            "methodology",
            methodology::build(runs),
        ))?,
    )?;
    Ok(())
}
