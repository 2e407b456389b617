//! pqprof: what a hybrid or post-quantum TLS 1.3 / SSH key exchange costs on this machine, phase
//! by phase. This crate measures (backends, the timed loop, real handshakes, cross-checks); the
//! results schema and everything that only reads results live in `pqprof-core` (`core/`), re-exported
//! here under the same names.
//! Flow: suites -> plan -> backends + measure -> stats -> compose -> results -> check / pages.

pub use pqprof_core::{
    algorithm, auth, check, comparison, compose, export, figures, flow, incontext, league,
    netmodel, overhead, parse, references, render, results, stats, suite, tables, units,
};

pub mod alloc;
pub mod backend;
pub mod budget;
pub mod capacity;
pub mod case;
pub mod cli;
#[cfg(target_arch = "aarch64")]
pub mod cntvct;
pub mod commands;
pub mod counter;
pub mod crosscheck;
pub mod emulator;
pub mod go;
pub mod handshake;
pub mod host;
pub mod insitu;
pub mod interrupt;
mod lab;
pub mod measure;
pub mod memory;
pub mod network;
pub mod plan;
mod probe;
pub mod run;
pub mod samples;
pub mod stack;
pub mod virtual_clock;
