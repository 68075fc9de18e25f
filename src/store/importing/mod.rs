//! Importing: any text in, threads out. The CPU half (`prepare`) runs beside the writing half
//! (`writer`), which commits in pieces; the pasted input is kept compressed (`pieces`), ids
//! made on receipt are derived from it (`receipt_id`), and an import is summed up for one line
//! (`import_summary`).

pub(super) mod import;
mod import_summary;
pub(super) mod pieces;
pub(super) mod prepare;
mod receipt_id;
pub(super) mod writer;

pub(crate) use import::ImportItem;
pub use import::{ImportReport, Kept, Outcome};
pub(crate) use import_summary::ImportSummary;
