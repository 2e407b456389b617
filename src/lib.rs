//! pqprof: what a hybrid or post-quantum TLS 1.3 / SSH key exchange costs on this machine, phase
//! by phase. Flow: suites -> plan -> backends + measure -> stats -> compose -> results -> pages.

pub mod algorithm;
pub mod backend;
pub mod case;
pub mod cli;
pub mod commands;
pub mod comparison;
pub mod compose;
pub mod crosscheck;
pub mod export;
pub mod handshake;
pub mod host;
pub mod measure;
pub mod plan;
pub mod render;
pub mod results;
pub mod run;
pub mod samples;
pub mod stats;
pub mod suite;
