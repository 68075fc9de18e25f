//! crosstalk: the operator's desk for the AI Crosstalk protocol.
//!
//! Layers, used in one direction only: `cli` → `store` → `protocol` (and `config`). The protocol core is pure (text in,
//! values out); everything that touches files, terminals or the clock sits above it.

pub mod cli;
pub mod config;
pub mod protocol;
pub mod sanitize;
pub mod store;
pub mod synth;
