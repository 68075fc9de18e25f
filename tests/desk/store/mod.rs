//! The store on temporary databases: import and threading, the app's queries, crashes and
//! concurrent writers, integrity, read-only and damaged files, and the ledgers (delivery,
//! erasure, polls, trust, export as a backup).

mod browse;
mod core;
mod crash;
mod delivery;
mod erase;
mod export_props;
mod integrity;
mod poll;
mod readonly;
mod smoke;
mod texts_props;
mod trust;
