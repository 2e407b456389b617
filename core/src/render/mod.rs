//! The static site: results JSON -> pages, with minijinja templates compiled into the binary.
//! The renderer does not compute figures; it formats what the JSON holds and places it.

pub mod answer;
mod arch;
mod auth;
mod capacity;
mod compare;
mod composition;
mod derive;
mod history;
mod memory;
mod methodology;
mod modes;
mod network;
mod overview;
mod probes;
pub mod svg;
pub mod verify;

use crate::figures::memo;
use crate::results::{self, Results};
use anyhow::{anyhow, bail, Context, Result};
pub use derive::{check_derived, derive};
use minijinja::{AutoEscape, Environment, Value};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One loaded results file, with how the site names and links it.
pub struct Run {
    pub results: Results,
    /// Host, CPU, microarchitecture and time ("vm · AMD EPYC (zen5) · 2026-11-30T03:26:02Z"),
    /// unique across the runs given.
    pub(crate) label: String,
    /// Where the copied JSON is, relative to the site root.
    pub json_href: String,
    /// What the ids of this run's sections on the front page end with: its machine's
    /// (`machine_anchor`), and with `--all`, where a machine has several runs there, its time too.
    pub(crate) anchor: String,
    /// The machine's id on the site: `machine_id`, made unique among the machines rendered.
    pub(crate) machine_anchor: String,
}

pub struct Options {
    /// Link to the tool's source at a commit: a template with `{commit}`.
    pub source_url: Option<String>,
    /// The run every other run is compared with on the compare page (default: the oldest).
    pub baseline: Option<PathBuf>,
    /// Every run on the front page and the compare page, not only the newest complete run of each
    /// machine (the history page lists every run either way).
    pub all: bool,
}

const TEMPLATES: [(&str, &str); 11] = [
    ("base.html", include_str!("../../../templates/base.html")),
    (
        "macros.html",
        include_str!("../../../templates/macros.html"),
    ),
    (
        "phases.html",
        include_str!("../../../templates/phases.html"),
    ),
    ("index.html", include_str!("../../../templates/index.html")),
    (
        "compare.html",
        include_str!("../../../templates/compare.html"),
    ),
    (
        "methodology.html",
        include_str!("../../../templates/methodology.html"),
    ),
    (
        "history.html",
        include_str!("../../../templates/history.html"),
    ),
    (
        "insitu.html",
        include_str!("../../../templates/insitu.html"),
    ),
    (
        "composition.html",
        include_str!("../../../templates/composition.html"),
    ),
    (
        "network.html",
        include_str!("../../../templates/network.html"),
    ),
    (
        "probes.html",
        include_str!("../../../templates/probes.html"),
    ),
];

pub(crate) fn environment() -> Result<Environment<'static>> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    for (name, src) in TEMPLATES {
        env.add_template(name, src)?;
    }
    Ok(env)
}

/// Header facts every page shows.
#[derive(Serialize)]
pub(crate) struct RunLine {
    pub(crate) label: String,
    /// The machine's name on the site and its anchor.
    pub(crate) machine: String,
    pub(crate) machine_id: String,
    pub(crate) host: String,
    pub(crate) microarchitecture: String,
    pub(crate) date: String,
    pub(crate) commit: String,
    pub(crate) commit_url: Option<String>,
    pub(crate) cpu: String,
    pub(crate) arch: String,
    pub(crate) cores: usize,
    pub(crate) liboqs: String,
    pub(crate) openssl: String,
    pub(crate) json_href: String,
}

fn run_line(run: &Run, opts: &Options) -> RunLine {
    let r = &run.results.run;
    RunLine {
        label: run.label.clone(),
        machine: machine_label(&r.host),
        machine_id: run.machine_anchor.clone(),
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
pub(crate) struct Page<T: Serialize> {
    pub(crate) title: String,
    pub(crate) page: &'static str,
    /// The runs this page shows.
    pub(crate) runs: Vec<RunLine>,
    pub(crate) architectures: String,
    /// How many results files were rendered, and how many machines they are of.
    pub(crate) files: usize,
    pub(crate) machines: usize,
    pub(crate) all: bool,
    /// How many endpoints were probed (the probes page is linked when there are any).
    pub(crate) probes: usize,
    pub(crate) body: T,
}

/// What every page is told of the whole render: the runs it shows among all the files.
struct Scope<'a> {
    shown: Vec<&'a Run>,
    /// The emulated runs of the architectures' table ("aarch64 (emulated: neoverse-n1)"): no
    /// machine of the pages, but an architecture the site shows.
    emulated: Vec<String>,
    files: usize,
    machines: usize,
    probes: usize,
}

fn page<T: Serialize>(
    scope: &Scope,
    opts: &Options,
    title: &str,
    name: &'static str,
    body: T,
) -> Page<T> {
    let mut arches: Vec<String> = scope
        .shown
        .iter()
        .map(|r| r.results.run.host.arch.clone())
        .collect();
    arches.sort();
    arches.dedup();
    arches.extend(scope.emulated.iter().cloned());
    Page {
        title: title.into(),
        page: name,
        runs: scope.shown.iter().map(|r| run_line(r, opts)).collect(),
        architectures: arches.join(" · "),
        files: scope.files,
        machines: scope.machines,
        all: opts.all,
        probes: scope.probes,
        body,
    }
}

/// The results files a list of paths names: each file as given, each folder's `*.json` and
/// `*.json.gz` files (not its subfolders: `results/` and `results/archive/` are named apart), in
/// name order.
pub fn inputs(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            files.extend(
                results::results_files(p)
                    .with_context(|| format!("{}: cannot read the folder", p.display()))?,
            );
        } else {
            files.push(p.clone());
        }
    }
    if files.is_empty() {
        bail!(
            "no results files in {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(files)
}

/// One machine and its runs (indices into the runs rendered, oldest first).
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    pub(crate) key: String,
    pub runs: Vec<usize>,
    /// The run the front page shows: the newest complete one, else the newest.
    pub shown: usize,
}

/// The runs grouped by machine (`Host::machine_key`). Machines with a complete run come first,
/// then by their shown run, newest first.
pub fn machines(runs: &[Run]) -> Vec<Machine> {
    let mut out: Vec<Machine> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let key = run.results.run.host.machine_key();
        match out.iter_mut().find(|m| m.key == key) {
            Some(m) => m.runs.push(i),
            None => out.push(Machine {
                key,
                runs: vec![i],
                shown: i,
            }),
        }
    }
    let date = |i: usize| runs[i].results.run.date_utc.as_str();
    for m in &mut out {
        m.runs
            .sort_by(|&a, &b| date(a).cmp(date(b)).then(a.cmp(&b)));
        let newest = |complete: bool| {
            m.runs
                .iter()
                .rev()
                .copied()
                .find(|&i| !complete || runs[i].results.is_complete())
        };
        m.shown = newest(true).or(newest(false)).unwrap_or(m.runs[0]);
    }
    out.sort_by(|a, b| {
        let complete = |m: &Machine| runs[m.shown].results.is_complete();
        complete(b)
            .cmp(&complete(a))
            .then_with(|| date(b.shown).cmp(date(a.shown)))
    });
    out
}

/// "Intel Xeon · vm · 5d798a": the CPU as its vendor names it (without the trademark signs), the
/// microarchitecture where pqprof knows it, the hostname and the fingerprint.
pub(crate) fn machine_label(h: &crate::results::Host) -> String {
    let mut cpu = h.cpu_model.replace("(R)", "").replace("(TM)", "");
    if let Some(stripped) = cpu.trim().strip_suffix("Processor") {
        cpu = stripped.to_string();
    }
    let cpu = cpu.split_whitespace().collect::<Vec<_>>().join(" ");
    let uarch = if h.microarchitecture.is_empty() {
        h.arch.clone()
    } else {
        h.microarchitecture.clone()
    };
    let mut s = format!("{cpu} {uarch} · host {}", h.hostname);
    if !h.fingerprint.is_empty() {
        s += &format!(" · {}", h.fingerprint);
    }
    s
}

/// What references/machines.toml says of the machine that its results do not, and the source.
pub(crate) fn machine_note(h: &crate::results::Host) -> Option<(String, String)> {
    crate::references::machine_notes()
        .ok()?
        .into_iter()
        .find(|n| !h.fingerprint.is_empty() && n.fingerprint == h.fingerprint)
        .map(|n| (n.note, n.source))
}

/// An anchor for the machine: its fingerprint, else its host and microarchitecture.
pub(crate) fn machine_id(h: &crate::results::Host) -> String {
    let raw = if h.fingerprint.is_empty() {
        format!("{}-{}-{}", h.hostname, h.microarchitecture, h.arch)
    } else {
        h.fingerprint.clone()
    };
    let slug: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("m-{slug}")
}

/// `f` over `items`, in order, on as many threads as there are cores (at most 8), each taking a
/// run of consecutive items.
pub(crate) fn par_map<T: Sync, U: Send>(items: &[T], f: impl Fn(&T) -> U + Sync) -> Vec<U> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(items.len().max(1));
    let per = items.len().div_ceil(threads).max(1);
    let f = &f;
    // Each thread asks for its derived figures as this one would (recorded, or recomputed), and
    // keeps a memo of its own (`figures::memo`) while its items stay borrowed.
    let under = &crate::derived::inherited();
    std::thread::scope(|scope| {
        let parts: Vec<_> = items
            .chunks(per)
            .map(|chunk| {
                scope.spawn(move || {
                    under.run(|| memo::scope(|| chunk.iter().map(f).collect::<Vec<U>>()))
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|p| p.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Every file read and parsed, in order, on as many threads as there are cores: parsing large
/// results files is most of a render's time.
fn read_all(files: &[PathBuf]) -> Vec<Result<Results>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(files.len().max(1));
    let per = files.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let parts: Vec<_> = files
            .chunks(per)
            .map(|chunk| {
                let part =
                    scope.spawn(move || chunk.iter().map(|f| results::read(f)).collect::<Vec<_>>());
                (chunk, part)
            })
            .collect();
        // A reader that panicked still answers for each of its files, so none goes missing.
        parts
            .into_iter()
            .flat_map(|(chunk, part)| {
                part.join().unwrap_or_else(|_| {
                    chunk
                        .iter()
                        .map(|f| Err(anyhow!("{}: could not be read", f.display())))
                        .collect()
                })
            })
            .collect()
    })
}

/// Loads results files and gives each a unique label.
pub fn load(files: &[PathBuf]) -> Result<Vec<Run>> {
    if files.is_empty() {
        bail!("no results files given");
    }
    let mut runs: Vec<Run> = Vec::new();
    for (f, results) in files.iter().zip(read_all(files)) {
        let results = results?;
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
            anchor: String::new(),
            machine_anchor: String::new(),
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

/// Renders the site into `out` from results files and folders of them (`inputs`): built in a
/// temporary folder beside it, then swapped in, so a failed render leaves the previous site as it
/// was.
pub fn render(paths: &[PathBuf], out: &Path, opts: &Options) -> Result<()> {
    let files = inputs(paths)?;
    let files = &files[..];
    let mut runs = load(files)?;
    let probed = probes::find(paths)?;
    // The figures the pages derive by resampling, made known first: drawing a page only looks
    // them up (`derive`).
    derive::prepare_all(&runs, files);
    // Two machines whose ids would clash (one fingerprint under two hostnames: an edited file)
    // are told apart by their order.
    let mut taken: Vec<String> = Vec::new();
    for (k, m) in machines(&runs).iter().enumerate() {
        let mut id = machine_id(&runs[m.shown].results.run.host);
        if taken.contains(&id) {
            id = format!("{id}-{k}");
        }
        taken.push(id.clone());
        for &i in &m.runs {
            runs[i].machine_anchor = id.clone();
            runs[i].anchor = id.clone();
        }
    }
    if opts.all {
        for m in machines(&runs).iter().filter(|m| m.runs.len() > 1) {
            for &i in &m.runs {
                let stamp: String = runs[i]
                    .results
                    .run
                    .date_utc
                    .chars()
                    .filter(char::is_ascii_alphanumeric)
                    .collect();
                runs[i].anchor = format!("{}-{}-{i}", runs[i].anchor, stamp.to_ascii_lowercase());
            }
        }
    } else {
        // One run per machine on the pages that show runs: the machine names the row.
        let shown: Vec<usize> = machines(&runs).iter().map(|m| m.shown).collect();
        let labels: Vec<String> = shown
            .iter()
            .map(|&i| machine_label(&runs[i].results.run.host))
            .collect();
        let unique = labels
            .iter()
            .enumerate()
            .all(|(k, l)| !labels[..k].contains(l));
        if unique {
            for (&i, l) in shown.iter().zip(labels) {
                runs[i].label = l;
            }
        }
    }
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
    let built = build(&env, &runs, files, &probed, &tmp, opts);
    // Freeing every run's samples is a twentieth of a history's render: it is done beside the
    // rest, and a process that exits first leaves it to the system.
    std::thread::spawn(move || drop(runs));
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
/// the oldest of the runs shown (`among`) by its recorded date.
fn baseline_index(
    runs: &[Run],
    files: &[PathBuf],
    chosen: Option<&Path>,
    among: &[usize],
) -> Result<usize> {
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
    Ok(among
        .iter()
        .copied()
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
    probed: &[probes::Probed],
    dir: &Path,
    opts: &Options,
) -> Result<()> {
    std::fs::create_dir_all(dir.join("data"))?;
    // The files are copied while the pages render (the copies are the kernel's work, the pages
    // their threads').
    std::thread::scope(|scope| {
        let copies = scope.spawn(|| -> Result<()> {
            for (run, file) in runs.iter().zip(files) {
                // A copy, not a link: editing the site's copy must never touch a measurement.
                std::fs::copy(file, dir.join(&run.json_href))
                    .with_context(|| format!("{}: cannot copy", file.display()))?;
            }
            probes::copy(probed, dir)
        });
        let pages = pages(env, runs, files, probed, dir, opts);
        copies
            .join()
            .map_err(|_| anyhow!("copying the results files into the site failed"))??;
        pages
    })
}

/// Every page of the site, written into `dir`.
fn pages(
    env: &Environment,
    runs: &[Run],
    files: &[PathBuf],
    probed: &[probes::Probed],
    dir: &Path,
    opts: &Options,
) -> Result<()> {
    let write = |name: &str, html: String| {
        std::fs::write(dir.join(name), html).with_context(|| format!("cannot write {name}"))
    };
    let machines = machines(runs);
    let shown: Vec<usize> = if opts.all {
        machines
            .iter()
            .flat_map(|m| m.runs.iter().rev().copied())
            .collect()
    } else {
        machines.iter().map(|m| m.shown).collect()
    };
    // An emulated run times nothing: it is a column of the architectures' table, not a machine
    // whose figures the pages show.
    let shown: Vec<usize> = shown
        .into_iter()
        .filter(|&i| !runs[i].results.run.host.is_emulated())
        .collect();
    let shown_runs: Vec<&Run> = shown.iter().map(|&i| &runs[i]).collect();
    // The architectures' table: the newest counted run of each machine (emulated ones included).
    let counted: Vec<&Run> = machines
        .iter()
        .filter_map(|m| {
            m.runs
                .iter()
                .rev()
                .find(|&&i| crate::figures::arch::is_column(&runs[i].results))
        })
        .map(|&i| &runs[i])
        .collect();
    // Each page's figures are computed inside a memo of its own (`figures::memo`): the runs stay
    // put while it is drawn.
    let mut front = memo::scope(|| overview::build(&shown_runs));
    front.architectures = memo::scope(|| arch::build(&counted));
    let mut emulated: Vec<String> = counted
        .iter()
        .filter(|r| r.results.run.host.is_emulated())
        .map(|r| r.results.run.host.architecture())
        .collect();
    emulated.sort();
    emulated.dedup();
    let scope = Scope {
        shown: shown_runs.clone(),
        emulated,
        files: runs.len(),
        machines: machines.len(),
        probes: probed.len(),
    };
    // The compare page sets the shown runs against the baseline; a baseline named with --baseline
    // joins them if it is not one.
    let mut compared = shown.clone();
    let baseline = baseline_index(runs, files, opts.baseline.as_deref(), &compared)?;
    if !compared.contains(&baseline) {
        compared.push(baseline);
    }
    let compared_runs: Vec<&Run> = compared.iter().map(|&i| &runs[i]).collect();
    let at = compared.iter().position(|&i| i == baseline).unwrap_or(0);
    // The front page's figures, made into the templates' values once: four pages show them.
    let front = Value::from_serialize(&front);
    let (scope, shown_runs, compared_runs, machines) =
        (&scope, &shown_runs, &compared_runs, &machines);
    let render = move |file: &str, title: &str, name: &'static str, body: Value| -> Result<()> {
        let html = env
            .get_template(file)?
            .render(page(scope, opts, title, name, body))?;
        write(file, html)
    };
    // Each page in a thread of its own: they only read the runs.
    type Job<'a> = Box<dyn FnOnce() -> Result<()> + Send + 'a>;
    let mut jobs: Vec<Job> = Vec::new();
    // The in-situ views, long per card, every phase table and real handshake, and every network
    // cell are pages of their own that the front page links to (its size budget: core/tests/site.rs).
    for (file, title, name) in [
        (
            "phases.html",
            "Every phase and every real handshake",
            "phases",
        ),
        ("network.html", "Every network cell", "network"),
        ("insitu.html", "Where a handshake's time goes", "insitu"),
        ("index.html", "What the hybrid key exchange costs", "index"),
    ] {
        let front = front.clone();
        jobs.push(Box::new(move || render(file, title, name, front)));
    }
    jobs.push(Box::new(move || {
        let body = composition::Page {
            match_pct: format!("{:.0}", composition::MATCH_PCT),
            match_floor: crate::units::time(composition::MATCH_FLOOR_NS),
            views: composition::build(shown_runs),
        };
        render(
            "composition.html",
            "Each handshake against its composition",
            "composition",
            Value::from_serialize(&body),
        )
    }));
    jobs.push(Box::new(move || {
        let body = compare::build(compared_runs, at);
        render(
            "compare.html",
            "Compare",
            "compare",
            Value::from_serialize(&body),
        )
    }));
    jobs.push(Box::new(move || {
        let body = history::build(runs, machines);
        render(
            "history.html",
            "History",
            "history",
            Value::from_serialize(&body),
        )
    }));
    jobs.push(Box::new(move || {
        let body = methodology::build(shown_runs);
        render(
            "methodology.html",
            "Methodology",
            "methodology",
            Value::from_serialize(&body),
        )
    }));
    if !probed.is_empty() {
        let body = Value::from_serialize(probes::build(probed));
        jobs.push(Box::new(move || {
            render("probes.html", "Endpoints probed", "probes", body)
        }));
    }
    std::thread::scope(|threads| {
        let running: Vec<_> = jobs
            .into_iter()
            .map(|j| threads.spawn(move || memo::scope(j)))
            .collect();
        running.into_iter().try_for_each(|t| {
            t.join()
                .map_err(|_| anyhow!("a page's thread stopped unexpectedly"))?
        })
    })
}
