//! The integration tests, as one binary: a module per layer of the desk, each file one
//! subject. One binary links the crate and its dependencies once, where a binary per file
//! linked them once per file.
//!
//! The tests share one process and run in parallel: each keeps what it touches to itself
//! (temporary directories and databases, a tmux server on a socket of its own, Xvfb on a
//! display it picks, `serve` on an ephemeral port), and none changes the process's
//! environment or current directory. A test that needs another environment runs itself in a
//! child process (`helpers::common::this_test`).

mod helpers;

mod app;
mod assets;
mod cli;
mod http;
mod protocol;
mod store;
mod transport;
mod tui;
