//! crosstalk: the operator's desk for the AI Crosstalk protocol.
//!
//! Rooms, each using only those below it: `cells` and `sanitize` (text as a terminal shows
//! it) → `protocol` (envelopes: text in, values out; no files, no clock: new ids come from a
//! `protocol::NewIds` it is given) → `ids` (the clock and randomness that make new ids),
//! `contacts`, `primer` → `store` (the history in SQLite) → `json`, `transport` (mail, HTTP,
//! the spool), `export`, `clipboard` → `config` → `app` (state and actions) → `ui` (pure
//! views) → `tui` (the terminal runtime) and `cli` (the entry). `src/layers.rs` holds the
//! table and fails a test when a room uses one above it, or when the protocol reads the
//! clock; ARCHITECTURE.md is the map.

#![warn(unreachable_pub)]

pub mod app;
pub mod cells;
pub mod cli;
pub mod clipboard;
pub mod config;
pub mod contacts;
pub mod export;
pub mod ids;
pub mod json;
#[cfg(test)]
mod layers;
pub mod markdown;
pub mod primer;
pub mod protocol;
pub mod sanitize;
pub mod store;
#[cfg(any(test, feature = "synth"))]
pub mod synth;
pub mod transport;
pub mod tui;
pub mod ui;
