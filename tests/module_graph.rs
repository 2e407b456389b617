//! The module graph of both crates has no cycles and every edge runs with the flow (the module
//! order in core/src/lib.rs, the flow in src/lib.rs, the rules in the lists below): the results
//! schema imports nothing else of the tool, core never names the measuring crate, producers never
//! reach into `check` or the pages, lower layers never import upper ones. Read from the sources:
//! every `crate::NAME` a file mentions (in `use` lines, grouped `use crate::{a, b}` lists or paths)
//! is an edge from the file's top-level module to NAME.

use common::rust_files;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod common;

/// Top-level module of a file under `src` (src/ or core/src/): `core/src/render/svg.rs` -> render,
/// `core/src/stats.rs` -> stats, `src/run.rs` -> run.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    let name = first.trim_end_matches(".rs").to_string();
    (name != "lib" && name != "main").then_some(name)
}

/// Names after `crate::` in a text, expanding `crate::{a, b::c}` groups; test modules excluded.
fn crate_refs(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let body = &group[..group.find('}').unwrap_or(group.len())];
            for item in body.split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != "self" {
                    out.insert(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let Some(m) = module_of(src, f) else { continue };
        let refs = crate_refs(&std::fs::read_to_string(f).unwrap());
        let entry = g.entry(m.clone()).or_default();
        entry.extend(refs.into_iter().filter(|r| *r != m));
    }
    g
}

/// A topological order, or the modules left on a cycle.
fn topo(g: &BTreeMap<String, BTreeSet<String>>) -> Result<Vec<String>, Vec<String>> {
    let mut left: BTreeMap<String, BTreeSet<String>> = g
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v.iter().filter(|d| g.contains_key(*d)).cloned().collect(),
            )
        })
        .collect();
    let mut order = Vec::new();
    while !left.is_empty() {
        let ready: Vec<String> = left
            .iter()
            .filter(|(_, d)| d.is_empty())
            .map(|(k, _)| k.clone())
            .collect();
        if ready.is_empty() {
            return Err(left.keys().cloned().collect());
        }
        for r in &ready {
            left.remove(r);
        }
        for d in left.values_mut() {
            for r in &ready {
                d.remove(r);
            }
        }
        order.extend(ready);
    }
    Ok(order)
}

/// Edges that run against the flow: (module, modules it must never import).
const CORE_RULES: &[(&str, &[&str])] = &[
    // What producers and `check` both compute lives below `check`, so producers need not reach it.
    (
        "figures",
        &[
            "check",
            "render",
            "export",
            "tables",
            "comparison",
            "league",
        ],
    ),
    // `check` recomputes; it never formats pages or tables.
    (
        "check",
        &["render", "export", "tables", "comparison", "league"],
    ),
    (
        "compose",
        &[
            "check",
            "render",
            "export",
            "tables",
            "comparison",
            "league",
            "figures",
        ],
    ),
    // The flow places phases and sums them, as `compose` does, beneath every reader.
    (
        "flow",
        &[
            "check",
            "render",
            "export",
            "tables",
            "comparison",
            "league",
            "figures",
            "compose",
        ],
    ),
    (
        "stats",
        &[
            "check",
            "render",
            "compose",
            "figures",
            "suite",
            "algorithm",
        ],
    ),
    ("units", &["check", "render", "results", "stats"]),
    ("tables", &["render", "check"]),
    ("export", &["render", "check", "tables"]),
];

/// In the measuring crate: the producers, the lower layers and what each must not import.
const PRODUCERS: &[&str] = &[
    "run",
    "samples",
    "counter",
    "emulator",
    "handshake",
    "capacity",
    "network",
    "crosscheck",
    "go",
];
/// Downstream of results: a producer never reaches into these (it calls core's `figures`).
const READERS: &[&str] = &["check", "render", "export", "comparison", "league"];
const TOOL_RULES: &[(&str, &[&str])] = &[
    (
        "backend",
        &[
            "stack",
            "handshake",
            "capacity",
            "network",
            "run",
            "samples",
            "plan",
            "case",
        ],
    ),
    (
        "case",
        &[
            "stack",
            "handshake",
            "capacity",
            "network",
            "run",
            "samples",
            "plan",
        ],
    ),
    (
        "measure",
        &[
            "stack",
            "handshake",
            "capacity",
            "network",
            "run",
            "samples",
            "plan",
        ],
    ),
    (
        "insitu",
        &[
            "stack",
            "handshake",
            "capacity",
            "network",
            "run",
            "backend",
        ],
    ),
    (
        "alloc",
        &["stack", "handshake", "capacity", "network", "run", "insitu"],
    ),
    (
        "host",
        &[
            "stack",
            "handshake",
            "capacity",
            "network",
            "run",
            "samples",
        ],
    ),
    (
        "stack",
        &["handshake", "capacity", "network", "run", "samples", "plan"],
    ),
    (
        "plan",
        &["run", "samples", "handshake", "capacity", "network"],
    ),
];

/// Every edge of `g` that a rule forbids: "from -> to".
fn violations(g: &BTreeMap<String, BTreeSet<String>>, rules: &[(&str, &[&str])]) -> Vec<String> {
    let mut out = Vec::new();
    for (from, forbidden) in rules {
        for to in g.get(*from).into_iter().flatten() {
            if forbidden.contains(&to.as_str()) {
                out.push(format!("{from} -> {to}"));
            }
        }
    }
    out
}

/// The measuring crate's rules: the table above, and every producer kept off the readers and the
/// command line (only `commands` reads `cli`).
fn tool_violations(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut rules: Vec<(&str, &[&str])> = TOOL_RULES.to_vec();
    let off_limits: Vec<&str> = READERS.iter().copied().chain(["cli", "commands"]).collect();
    let off: &'static [&'static str] = Box::leak(off_limits.into_boxed_slice());
    rules.extend(PRODUCERS.iter().map(|p| (*p, off)));
    let mut v = violations(g, &rules);
    for (from, to) in g {
        if from != "commands" && (to.contains("cli") || to.contains("commands")) {
            v.push(format!("{from} -> cli/commands"));
        }
    }
    v.sort();
    v.dedup();
    v
}

/// Files of `src` that name the measuring crate (`pqprof::`), which core must never do.
fn names_the_tool(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
            code.contains("pqprof::") || code.contains("use pqprof")
        })
        .map(|f| f.display().to_string())
        .collect()
}

#[test]
fn every_edge_runs_with_the_flow() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let core = graph(&root.join("core/src"));
    assert_eq!(violations(&core, CORE_RULES), Vec::<String>::new());
    assert_eq!(names_the_tool(&root.join("core/src")), Vec::<String>::new());
    let tool = graph(&root.join("src"));
    assert_eq!(tool_violations(&tool), Vec::<String>::new());
}

#[test]
fn a_seeded_wrong_edge_is_found() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // A producer that reaches into check, as capacity once did for its rates.
    let mut tool = graph(&root.join("src"));
    let seeded = crate_refs("use crate::check::capacity::rate_per_s;\nlet x = 1;");
    tool.get_mut("capacity").unwrap().extend(seeded);
    assert_eq!(
        tool_violations(&tool),
        vec!["capacity -> check".to_string()]
    );
    // A stack that reads the handshake command's internals.
    let mut tool = graph(&root.join("src"));
    tool.get_mut("stack").unwrap().insert("handshake".into());
    assert_eq!(
        tool_violations(&tool),
        vec!["stack -> handshake".to_string()]
    );
    // In core: figures importing check.
    let mut core = graph(&root.join("core/src"));
    core.get_mut("figures").unwrap().insert("check".into());
    assert_eq!(
        violations(&core, CORE_RULES),
        vec!["figures -> check".to_string()]
    );
    // And a core file naming the measuring crate.
    let dir = std::env::temp_dir().join(format!("pqprof-graph-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.rs"), "use pqprof::stack;\n").unwrap();
    assert_eq!(names_the_tool(&dir).len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_results_schema_is_a_leaf_and_no_module_graph_has_a_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let core = graph(&root.join("core/src"));
    assert_eq!(
        core.get("results").cloned().unwrap_or_default(),
        BTreeSet::new(),
        "results imports another module"
    );
    let order =
        topo(&core).unwrap_or_else(|cycle| panic!("pqprof-core has a cycle among {cycle:?}"));
    // The schema comes before everything that reads it (other leaves, like netmodel, may share its layer).
    let at = |m: &str| order.iter().position(|x| x == m);
    for (m, deps) in &core {
        if deps.contains("results") {
            assert!(at("results") < at(m), "{m} reads results but comes first");
        }
    }
    eprintln!("pqprof-core: {}", order.join(" -> "));
    let tool = graph(&root.join("src"));
    let order = topo(&tool).unwrap_or_else(|cycle| panic!("pqprof has a cycle among {cycle:?}"));
    eprintln!("pqprof: {}", order.join(" -> "));
}

#[test]
fn the_scanner_sees_grouped_imports_and_cycles() {
    let refs = crate_refs("use crate::{check, render::verify, self};\nlet x = crate::stats::mean(&v);\n#[cfg(test)]\nuse crate::hidden;");
    assert_eq!(
        refs.into_iter().collect::<Vec<_>>(),
        vec!["check", "render", "stats"]
    );
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert!(topo(&g).is_err());
}
