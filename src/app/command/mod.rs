//! The `:` command line: the one table of commands, running and completing them, and their
//! history.

pub mod command_line;
pub mod commands;
pub(in crate::app) mod history;
