//! crosstalk: the operator's desk for the AI Crosstalk protocol.
//!
//! Layers, used in one direction only: `tui` → `ui` → `app` → `store` → `protocol`, and
//! `cli` → `store` → `protocol` (with `config`, `clipboard` and `sanitize` beside them). The protocol core is pure (text in,
//! values out); everything that touches files, terminals or the clock sits above it.

pub mod app;
pub mod cells;
pub mod cli;
pub mod clipboard;
pub mod config;
pub mod contacts;
pub mod export;
pub mod json;
pub mod primer;
pub mod protocol;
pub mod sanitize;
pub mod store;
#[cfg(any(test, feature = "synth"))]
pub mod synth;
pub mod transport;
pub mod tui;
pub mod ui;
