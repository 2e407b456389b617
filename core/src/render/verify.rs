//! Checks a rendered site against itself and its JSON: on every phase table (the phases page), the phase contributions
//! add up to the composed mean (within the identity's 0.002%) and the bar shares to 100% (within
//! 0.01 points); every row names a suite that is in the copied JSON with that composed mean; every
//! figure of the answer tables and the authentication rows is the one the JSON it names gives
//! (`answer::figures`, `figures::auth`).

use crate::check::TOLERANCE_PCT;
use crate::results;
use crate::stats::agrees;
use anyhow::{Context, Result};
use std::path::Path;

fn attr(chunk: &str, name: &str) -> Vec<String> {
    let pat = format!("{name}=\"");
    chunk
        .split(&pat)
        .skip(1)
        .filter_map(|s| s.split('"').next().map(unescape))
        .collect()
}

/// Undoes the HTML escaping minijinja applies to attribute values.
pub fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#39;", "'")
        .replace("&#x2f;", "/")
        .replace("&amp;", "&")
}

/// Problems found in `dir/index.html` and the phase tables of `dir/phases.html`; empty means the
/// pages keep the identity.
pub fn check_site(dir: &Path) -> Result<Vec<String>> {
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read_to_string(&path).with_context(|| format!("{}: cannot read", path.display()))
    };
    let (html, phases) = (read("index.html")?, read("phases.html")?);
    let mut problems = broken_links(dir)?;
    problems.extend(answer_problems(dir, &html)?);
    problems.extend(auth_problems(dir, &html)?);
    let rows: Vec<&str> = phases.split("<tbody class=\"phases\"").skip(1).collect();
    if rows.is_empty() {
        problems.push("phases.html: no phase tables".to_string());
    }
    for chunk in rows {
        let chunk = chunk.split("</tbody>").next().unwrap_or("");
        let key = attr(chunk, "data-key")
            .into_iter()
            .next()
            .unwrap_or_default();
        let composed: f64 = attr(chunk, "data-composed-ns")
            .first()
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN);
        let contributions: Vec<f64> = attr(chunk, "data-contribution-ns")
            .iter()
            .filter_map(|v| v.parse().ok())
            .collect();
        let shares: f64 = attr(chunk, "data-share-pct")
            .iter()
            .filter_map(|v| v.parse::<f64>().ok())
            .sum();
        let sum: f64 = contributions.iter().sum();
        if !agrees(composed, sum, TOLERANCE_PCT) {
            problems.push(format!(
                "{key}: composed {composed} on the page, phases add up to {sum}"
            ));
        }
        if (shares - 100.0).abs() > 0.01 {
            problems.push(format!("{key}: phase shares add up to {shares}%"));
        }
        let mut parts = key.splitn(3, '|');
        let (Some(file), Some(name), Some(stack)) = (parts.next(), parts.next(), parts.next())
        else {
            problems.push(format!("row without a data-key: {key:?}"));
            continue;
        };
        let r = results::read(&dir.join(file))?;
        match r.suites.iter().find(|s| s.name == name && s.stack == stack) {
            Some(s) if agrees(s.composed.mean_ns, composed, TOLERANCE_PCT) => {}
            Some(s) => problems.push(format!(
                "{key}: page says {composed}, JSON says {}",
                s.composed.mean_ns
            )),
            None => problems.push(format!("{key}: not in {file}")),
        }
    }
    Ok(problems)
}

/// Relative links and sources on every page that point at nothing, and links to a place on a page
/// (`#id` on the same page: the answer table's figures to their cards; `page.html#id` on another:
/// the in-situ views and the network cells) that no element of that page is.
fn broken_links(dir: &Path) -> Result<Vec<String>> {
    const PAGES: [&str; 8] = [
        "index.html",
        "phases.html",
        "compare.html",
        "history.html",
        "methodology.html",
        "insitu.html",
        "network.html",
        "composition.html",
    ];
    let mut problems = Vec::new();
    let mut pages = Vec::new();
    for page in PAGES {
        let html = std::fs::read_to_string(dir.join(page))
            .with_context(|| format!("{}: cannot read {page}", dir.display()))?;
        pages.push((page, html));
    }
    let ids_of = |page: &str| -> std::collections::HashSet<String> {
        pages
            .iter()
            .find(|(p, _)| *p == page)
            .map(|(_, html)| attr(html, " id").into_iter().collect())
            .unwrap_or_default()
    };
    for (page, html) in &pages {
        let all_ids = attr(html, " id");
        let ids: std::collections::HashSet<String> = all_ids.iter().cloned().collect();
        if ids.len() != all_ids.len() {
            let mut seen = std::collections::HashSet::new();
            let twice: Vec<&String> = all_ids.iter().filter(|i| !seen.insert(*i)).collect();
            problems.push(format!("{page}: ids used more than once: {twice:?}"));
        }
        for target in attr(html, "href") {
            if let Some(id) = target.strip_prefix('#') {
                if !ids.contains(id) {
                    problems.push(format!("{page}: link to {target}, which no element is"));
                }
            } else if let Some((other, id)) =
                target.split_once('#').filter(|(p, _)| PAGES.contains(p))
            {
                if !ids_of(other).contains(id) {
                    problems.push(format!(
                        "{page}: link to {target}, which no element of {other} is"
                    ));
                }
            }
        }
        for target in attr(html, "href").into_iter().chain(attr(html, "src")) {
            let local = target.split('#').next().unwrap_or("");
            if local.is_empty() || local.contains("://") || local.starts_with("mailto:") {
                continue;
            }
            if !dir.join(local).exists() {
                problems.push(format!(
                    "{page}: link to {target}, which is not in the site"
                ));
            }
        }
    }
    Ok(problems)
}

/// Every answer row's figures (its `data-` attributes) against the figures of the change it names,
/// computed again from the JSON the row names.
fn answer_problems(dir: &Path, html: &str) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let mut read: std::collections::HashMap<String, results::Results> = Default::default();
    for chunk in html.split("<tr class=\"answer\"").skip(1) {
        let row = chunk.split("</tr>").next().unwrap_or("");
        let key = attr(row, "data-key").into_iter().next().unwrap_or_default();
        let Some((file, change)) = super::answer::Change::from_key(&key) else {
            problems.push(format!("answer row without a usable data-key: {key:?}"));
            continue;
        };
        if !read.contains_key(&file) {
            read.insert(file.clone(), results::read(&dir.join(&file))?);
        }
        let Some(r) = read.get(&file) else { continue };
        let figures = super::answer::figures(r, &change);
        for (name, computed) in super::answer::values(&figures) {
            let shown: Option<f64> = attr(row, &format!("data-{name}"))
                .first()
                .and_then(|v| v.parse().ok());
            match (shown, computed) {
                (Some(a), Some(b)) if agrees(a, b, TOLERANCE_PCT) => {}
                (None, None) => {}
                (Some(a), Some(b)) => problems.push(format!(
                    "{key}: {name} is {a} on the page, {b} from the JSON"
                )),
                (Some(a), None) => problems.push(format!(
                    "{key}: {name} is {a} on the page, but the JSON gives none"
                )),
                (None, Some(b)) => problems.push(format!(
                    "{key}: {name} is {b} from the JSON, but the page does not show it"
                )),
            }
        }
    }
    Ok(problems)
}

/// Every authentication row's figures (its `data-` attributes) against `figures::auth` of the row
/// it names, computed again from the JSON the row names.
fn auth_problems(dir: &Path, html: &str) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let mut read: std::collections::HashMap<String, results::Results> = Default::default();
    for chunk in html.split("<tr class=\"auth-row").skip(1) {
        let row = chunk.split("</tr>").next().unwrap_or("");
        let key = attr(row, "data-key").into_iter().next().unwrap_or_default();
        let Some((file, r)) = crate::figures::auth::Row::from_key(&key) else {
            problems.push(format!(
                "authentication row without a usable data-key: {key:?}"
            ));
            continue;
        };
        if !read.contains_key(&file) {
            read.insert(file.clone(), results::read(&dir.join(&file))?);
        }
        let Some(results) = read.get(&file) else {
            continue;
        };
        for (name, computed) in super::auth::values(results, &r) {
            let shown: Option<f64> = attr(row, &format!("data-{name}"))
                .first()
                .and_then(|v| v.parse().ok());
            match (shown, computed) {
                (Some(a), Some(b)) if agrees(a, b, TOLERANCE_PCT) => {}
                (None, None) => {}
                (a, b) => problems.push(format!(
                    "{key}: {name} is {a:?} on the page, {b:?} from the JSON"
                )),
            }
        }
    }
    Ok(problems)
}
