//! Exporters: every section of a run as one table (`Table`: named columns, each with its unit, one
//! row per identity), written as JSON, CSV or Markdown by one small trait per format. The tables
//! are built from the same figure functions the site draws (`sections`), so an export and a page
//! show one figure.

mod csv;
mod json;
mod markdown;
mod sections;

use crate::results::{Probe, Results};
use anyhow::{bail, Result};

pub use sections::answer_figure_column;

/// The formats `pqprof export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Md,
    Json,
}

impl Format {
    pub fn named(name: &str) -> Option<Format> {
        match name {
            "csv" => Some(Format::Csv),
            "md" => Some(Format::Md),
            "json" => Some(Format::Json),
            _ => None,
        }
    }
}

/// A part of a run an export can hold, by the page or section it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The front page's answer table: a row per stack and change.
    Answer,
    /// Every real handshake scenario (`pqprof handshake`).
    Handshakes,
    /// Handshakes per core in memory, the load steps' peak and memory per held connection.
    Capacity,
    /// Every network cell: a row per point of the grid and scenario.
    Network,
    /// The composition page: every real scenario against what its phases compose.
    Composition,
    /// Every measured phase.
    Phases,
    /// Every composed suite.
    Suites,
    /// A probe of an endpoint (`pqprof probe`, a file of results/probes/): a row per group offered
    /// and one for the hybrid's paired difference.
    Probe,
}

impl Section {
    /// The sections of a machine's run.
    pub const RUN: [Section; 7] = [
        Section::Answer,
        Section::Handshakes,
        Section::Capacity,
        Section::Network,
        Section::Composition,
        Section::Phases,
        Section::Suites,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Section::Answer => "answer",
            Section::Handshakes => "handshakes",
            Section::Capacity => "capacity",
            Section::Network => "network",
            Section::Composition => "composition",
            Section::Phases => "phases",
            Section::Suites => "suites",
            Section::Probe => "probe",
        }
    }

    /// Every section: a run's, then a probe's.
    pub fn all() -> impl Iterator<Item = Section> {
        Section::RUN.into_iter().chain([Section::Probe])
    }

    pub fn named(name: &str) -> Option<Section> {
        Section::all().find(|s| s.name() == name)
    }
}

/// What an export's figures come from, as its header names it: a machine's run, or a probe.
pub struct Source {
    /// "run" or "probe", and what it names: the run's label, the probe's endpoint.
    pub kind: &'static str,
    pub label: String,
    /// The tool that measured: ("tool_commit", the commit) or ("pqprof_version", the version).
    pub tool: (&'static str, String),
    pub date_utc: String,
}

impl Source {
    pub fn run(r: &Results) -> Source {
        Source {
            kind: "run",
            label: r.label(),
            tool: ("tool_commit", r.run.tool_commit.clone()),
            date_utc: r.run.date_utc.clone(),
        }
    }

    pub fn probe(p: &Probe) -> Source {
        Source {
            kind: "probe",
            label: p.target.clone(),
            tool: ("pqprof_version", p.pqprof_version.clone()),
            date_utc: p.date_utc.clone(),
        }
    }
}

/// What a column's numbers count: it names the column's suffix in JSON and CSV, and how Markdown
/// writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Text,
    Ns,
    Bytes,
    Pct,
    Ratio,
    PerSecond,
    Count,
}

impl Unit {
    fn suffix(self) -> &'static str {
        match self {
            Unit::Text | Unit::Ratio | Unit::Count => "",
            Unit::Ns => "_ns",
            Unit::Bytes => "_bytes",
            Unit::Pct => "_pct",
            Unit::PerSecond => "_per_s",
        }
    }
}

/// One column: its name without the unit, its unit, and whether it names the row (with the other
/// such columns: the row's identity) rather than measures it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub unit: Unit,
    pub identity: bool,
}

impl Column {
    /// A measured column.
    fn new(name: &str, unit: Unit) -> Column {
        Column {
            name: name.to_string(),
            unit,
            identity: false,
        }
    }

    /// A column that names the row.
    fn id(name: &str, unit: Unit) -> Column {
        Column {
            identity: true,
            ..Column::new(name, unit)
        }
    }

    /// The name JSON and CSV give it, its unit in it ("composed_delta_ns").
    pub fn key(&self) -> String {
        format!("{}{}", self.name, self.unit.suffix())
    }
}

/// One cell: text, or a number where one was measured (`None`: the run has none).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Number(Option<f64>),
}

/// A section as a table.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub section: &'static str,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Value>>,
}

impl Table {
    /// The number in `row` under the column keyed `key` ("composed_delta_ns").
    pub fn number(&self, row: usize, key: &str) -> Option<f64> {
        let at = self.columns.iter().position(|c| c.key() == key)?;
        match self.rows.get(row)?.get(at)? {
            Value::Number(x) => *x,
            Value::Text(_) => None,
        }
    }

    /// The text in `row` under the column keyed `key`.
    pub fn text(&self, row: usize, key: &str) -> Option<&str> {
        let at = self.columns.iter().position(|c| c.key() == key)?;
        match self.rows.get(row)?.get(at)? {
            Value::Text(t) => Some(t),
            Value::Number(_) => None,
        }
    }
}

/// The sections' tables, one after the other; sections of the same columns (phases and suites)
/// are one table, as `pqprof export` without `--section` writes them.
pub fn table(r: &Results, sections: &[Section]) -> Result<Table> {
    if sections.contains(&Section::Probe) {
        bail!("a run has no probe section: a probe's file (results/probes/*.json) has it");
    }
    let mut tables = sections.iter().map(|s| sections::table(r, *s));
    let Some(mut out) = tables.next() else {
        bail!("no section to export")
    };
    for t in tables {
        if t.columns != out.columns {
            bail!(
                "{} and {} have columns of their own: export them apart",
                out.section,
                t.section
            );
        }
        out.rows.extend(t.rows);
        out.section = "phases and suites";
    }
    Ok(out)
}

/// A probe's table: its only section.
pub fn probe_table(p: &Probe) -> Table {
    sections::probe(p)
}

pub trait Exporter {
    fn serialize(&self, source: &Source, table: &Table) -> Result<Vec<u8>>;
}

pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Csv => Box::new(csv::Csv),
        Format::Md => Box::new(markdown::Markdown),
        Format::Json => Box::new(json::Json),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Every committed results file (results/ and results/archive/).
    fn committed() -> Vec<std::path::PathBuf> {
        crate::results::committed(true)
    }

    /// The identity columns of a row, as text.
    fn identity(t: &Table, row: &[Value]) -> Vec<String> {
        t.columns
            .iter()
            .zip(row)
            .filter(|(c, _)| c.identity)
            .map(|(_, v)| format!("{v:?}"))
            .collect()
    }

    #[test]
    fn no_two_rows_of_a_section_share_an_identity() {
        let files = committed();
        assert!(!files.is_empty(), "no committed results to export");
        // The four newest committed runs (either folder) hold every section's identity.
        for f in files.iter().rev().take(4) {
            let r = crate::results::read(f).unwrap();
            for section in Section::RUN {
                let t = sections::table(&r, section);
                let mut keys = BTreeSet::new();
                for row in &t.rows {
                    assert_eq!(row.len(), t.columns.len());
                    let key = identity(&t, row);
                    assert!(
                        keys.insert(key.clone()),
                        "{} {}: two rows {key:?}",
                        f.display(),
                        section.name()
                    );
                }
            }
            // Both forms of a phase are there, told apart by name.
            if r.phases
                .iter()
                .any(|p| p.form == crate::results::Form::Primitive)
            {
                let t = sections::table(&r, Section::Phases);
                assert!((0..t.rows.len()).any(|i| t
                    .text(i, "name")
                    .is_some_and(|n| n.ends_with(" (primitive)"))));
            }
        }
    }

    #[test]
    fn column_keys_are_unique_and_a_units_suffix_is_never_doubled() {
        let r = crate::results::read(committed().last().unwrap()).unwrap();
        for section in Section::RUN {
            let t = sections::table(&r, section);
            let keys: BTreeSet<String> = t.columns.iter().map(Column::key).collect();
            assert_eq!(keys.len(), t.columns.len(), "{}", section.name());
            // A name that already ends in its unit would read "median_ns_ns".
            for c in t.columns.iter().filter(|c| !c.unit.suffix().is_empty()) {
                assert!(!c.name.ends_with(c.unit.suffix()), "{}", c.key());
            }
        }
        assert_eq!(Column::new("p50", Unit::Ns).key(), "p50_ns");
        assert_eq!(
            Column::new("handshakes", Unit::PerSecond).key(),
            "handshakes_per_s"
        );
        assert_eq!(Column::new("stack", Unit::Text).key(), "stack");
    }

    #[test]
    fn sections_are_named_both_ways_and_phases_join_suites() {
        for s in Section::all() {
            assert_eq!(Section::named(s.name()), Some(s));
        }
        assert_eq!(Section::named("everything"), None);
        let r = crate::results::read(committed().last().unwrap()).unwrap();
        let both = table(&r, &[Section::Phases, Section::Suites]).unwrap();
        assert_eq!(both.rows.len(), r.phases.len() + r.suites.len());
        let apart = table(&r, &[Section::Answer, Section::Network]).unwrap_err();
        assert!(apart.to_string().contains("export them apart"), "{apart}");
        let probe = table(&r, &[Section::Probe]).unwrap_err();
        assert!(probe.to_string().contains("results/probes"), "{probe}");
    }
}
