//! The results schema: one serde struct tree, versioned, one file per section, and its atomic
//! read / write. A leaf: it imports nothing else of pqprof, so every reader of results (check,
//! render, compare, export) depends on it alone.

mod capacity;
mod crosscheck;
mod emulation;
mod handshake;
mod io;
mod memory;
mod network;
pub mod packed;
mod peer;
mod phase;
mod precision;
mod probe;
mod run;
mod samples;
mod suite;
mod warning;

pub use capacity::*;
pub use crosscheck::*;
pub use emulation::*;
pub use handshake::*;
pub use io::*;
pub use memory::*;
pub use network::*;
pub use peer::*;
pub use phase::*;
pub use precision::*;
pub use probe::*;
pub use run::*;
pub use samples::*;
pub use suite::*;
pub use warning::*;

use serde::{Deserialize, Serialize};

/// Bumped whenever a field changes meaning or a required field is added.
/// 2: `run.host.fingerprint`, phase `form` / `batch` / `run_delay_pct` / `timed_ms`, `components`,
/// fenced TSC cycles over the same span as the nanoseconds; results files are never overwritten.
/// 3: the network section in nanoseconds (`network::upgrade_v2` reads schema 2's milliseconds);
/// warnings and notes typed (`Warning`; a sentence of an older file reads as `Warning::Text`).
/// 4: the raw arrays packed (`packed`: a `d1:` string of base64 varint differences); a list of an
/// older file reads the same.
pub const SCHEMA_VERSION: u32 = 4;
/// Versions this pqprof reads: every field added since 1 has a default and every renamed one an
/// upgrade, so nothing a user measured with an older pqprof becomes unreadable.
pub const READABLE_VERSIONS: [u32; 4] = [1, 2, 3, 4];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    pub schema_version: u32,
    pub run: Run,
    pub backends: Vec<BackendInfo>,
    pub stacks: Vec<Stack>,
    pub phases: Vec<Phase>,
    pub suites: Vec<SuiteResult>,
    /// Phases that could not be measured or failed verification, and why; suites that needed them
    /// are left out.
    #[serde(default)]
    pub failures: Vec<Failure>,
    /// What in this run deserves caution, and what to do about it.
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// The setup each handshake-form phase adds to its primitive form (schema 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<Component>,
    /// Present when the run was made of several independent processes (`run --samples K`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_samples: Option<ProcessSamples>,
    /// `pqprof crosscheck`: the canonical tools and published references beside this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crosscheck: Option<Crosscheck>,
    /// `pqprof handshake`: real loopback handshakes beside the composed figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshakes: Option<Handshakes>,
    /// `pqprof capacity`: handshakes per core, load steps, memory per connection (schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Capacity>,
    /// `pqprof network`: handshakes through an emulated network on a grid of RTT and loss (schema 2).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "network::read_section"
    )]
    pub network: Option<Network>,
    /// `pqprof memory`: peak heap and stack bytes of one call of each phase, per backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<OperationMemory>,
    /// The Go peer's toolchain and raw round trips, when it was built (schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub go: Option<GoPeer>,
    /// Figures derived from this file's raw samples by resampling (the composition's median
    /// shifts, the bootstrap intervals the pages show), by a digest of their method and inputs:
    /// written with the file, recomputed by `check`, looked up by `render` (core/src/derived.rs).
    /// Files written before 2026-12-06 have none.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub derived: std::collections::BTreeMap<String, Vec<f64>>,
}

impl Results {
    /// How a row names a stack: its name, with its transport where that is not TCP
    /// ("quinn (QUIC)"), as its real handshakes or its network cells record it.
    pub fn stack_label(&self, stack: &str) -> String {
        let scenarios = self.handshakes.iter().flat_map(|h| &h.scenarios);
        let cells = self
            .network
            .iter()
            .flat_map(|n| &n.points)
            .flat_map(|p| &p.cells);
        let transport = scenarios
            .filter(|s| s.stack.name() == stack)
            .map(|s| s.transport)
            .chain(
                cells
                    .filter(|c| c.stack.name() == stack)
                    .map(|c| c.transport),
            )
            .next()
            .unwrap_or_default();
        if transport.is_tcp() {
            stack.to_string()
        } else {
            format!("{stack} ({})", transport.name())
        }
    }

    /// " · N process samples, RSD x%" for a phase or suite name, if the run has process samples.
    pub fn run_spread(&self, name: &str) -> String {
        let Some(ps) = &self.process_samples else {
            return String::new();
        };
        ps.phases
            .iter()
            .chain(&ps.suites)
            .find(|s| s.name == name)
            .map_or(String::new(), |s| {
                format!(
                    " · {} process samples, median RSD {:.2}%",
                    ps.count, s.rsd_pct
                )
            })
    }

    /// The phase `id` names.
    pub fn phase(&self, id: &PhaseId) -> Option<&Phase> {
        find_phase(&self.phases, id)
    }

    pub fn suite(&self, name: &str, stack: &str) -> Option<&SuiteResult> {
        self.suites
            .iter()
            .find(|s| s.name == name && s.stack == stack)
    }

    /// The authentication the run sets the others against (schema 3): what the real handshakes'
    /// and capacity's `against` name; none in older files.
    pub fn baseline_auth(&self) -> Option<&str> {
        let scenarios = self.handshakes.iter().flat_map(|h| &h.scenarios);
        let in_memory = self.capacity.iter().flat_map(|c| &c.in_memory);
        scenarios
            .filter_map(|s| s.against.as_ref())
            .chain(in_memory.filter_map(|m| m.against.as_ref()))
            .find_map(|a| a.auth.as_deref())
    }

    /// A complete run has every section `make run` adds: the real handshakes, capacity and the
    /// network grid (besides the phases every run has).
    pub fn is_complete(&self) -> bool {
        self.handshakes.is_some() && self.capacity.is_some() && self.network.is_some()
    }

    /// The sections a run has beyond its phases, by the command that added them.
    pub fn sections(&self) -> Vec<&'static str> {
        let mut s = vec!["run"];
        for (has, name) in [
            (self.handshakes.is_some(), "handshake"),
            (self.capacity.is_some(), "capacity"),
            (self.network.is_some(), "network"),
            (self.crosscheck.is_some(), "crosscheck"),
            (self.memory.is_some(), "memory"),
            (self.run.counter.is_some(), "counter"),
            (self.process_samples.is_some(), "samples"),
        ] {
            if has {
                s.push(name);
            }
        }
        s
    }

    /// How a site or comparison names this run: host, CPU, microarchitecture and time.
    pub fn label(&self) -> String {
        format!("{} · {}", self.run.host.label(), self.run.date_utc)
    }
}
