//! Judging what was read: the diagnostics (what is wrong, where, what to do), the checks on a
//! parsed envelope's content (`validate`), and whether two copies say the same (`meaning`).

pub mod diagnostic;
pub mod meaning;
pub mod validate;
