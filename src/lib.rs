//! crosstalk: the operator's desk for the AI Crosstalk protocol.
//!
//! Layers, used in one direction only: `cli` → `config` / `protocol`. The protocol core is pure (text in,
//! values out); everything that touches files, terminals or the clock sits above it.

pub mod cli;
pub mod config;
pub mod protocol;
pub mod sanitize;
pub mod synth;
