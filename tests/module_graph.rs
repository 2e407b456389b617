//! The module graph of both crates has no cycles, and the results schema imports nothing else of
//! the tool. Read from the sources: every `crate::NAME` a file mentions (in `use` lines, grouped
//! `use crate::{a, b}` lists or paths) is an edge from the file's top-level module to NAME.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Top-level module of a file under `src`: `src/render/svg.rs` -> render, `src/stats.rs` -> stats.
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
