//! What the tests of several layers share: running the binary (`common`), an app over a
//! temporary database (`support`), a real `serve` on loopback (`http`), and a private tmux
//! server with the binary in it (`tmux`, with Xvfb and the relay flows' envelopes).

pub mod common;
pub mod http;
pub mod support;
pub mod tmux;
