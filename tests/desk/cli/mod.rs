//! The `crosstalk` binary as scripts use it: each command group's output, JSON shapes and
//! exit codes, what it lets reach a terminal, and its peak memory on hostile input.

mod backup_erase;
mod consent;
mod integrity;
mod keys;
mod mail_export;
mod manual;
mod memory;
mod no_database;
mod output;
mod primer;
mod queue;
mod store;
mod terminal;
mod transport;
