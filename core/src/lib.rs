//! pqprof's core: the results schema and every reader of it. Nothing here links a crypto library,
//! so `check`, `render`, `compare`, `export` and the parsers build (and fuzz) on their own.
//!
//! Module order, each importing only those before it (tests/module_graph.rs holds it to the
//! imports): `results` (the schema, a leaf) -> `stats` -> `units` -> `algorithm` -> `derived` ->
//! `netmodel` -> `overhead` -> `references` -> `incontext` -> `league` -> `parse` -> `suite` ->
//! `auth` -> `flow` -> `lab` -> `compose` -> `shift` -> `figures` -> `check` -> `comparison` ->
//! `export` -> `tables` -> `render`.

pub mod algorithm;
pub mod auth;
pub mod check;
pub mod comparison;
pub mod compose;
pub mod derived;
pub mod export;
pub mod figures;
pub mod flow;
pub mod incontext;
pub mod lab;
pub mod league;
pub mod netmodel;
pub mod overhead;
pub mod parse;
pub mod references;
pub mod render;
pub mod results;
pub mod shift;
pub mod stats;
pub mod suite;
pub mod tables;
pub mod units;
