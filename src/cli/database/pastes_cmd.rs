//! `crosstalk pastes`: the raw pastes the database keeps, listed, and one printed byte for
//! byte. Every paste is stored before it is parsed, so an envelope import rejected is still
//! here, and this is where the operator gets it back.

use std::io::Write;
use std::path::Path;

use clap::Subcommand;

use crate::cli::database::store_cmd::{open_existing, store_failure};
use crate::cli::output::{Stdout, print_json};
use crate::cli::{EXIT_INVALID, Failure};
use crate::sanitize::sanitize_line;

/// What to do with the stored pastes.
#[derive(Debug, Subcommand)]
pub(crate) enum PastesCmd {
    /// Print one paste exactly as it was received (on a terminal, controls are shown as
    /// placeholders; redirect to a file for the exact bytes).
    Show {
        /// The paste's id, as `crosstalk pastes` lists it.
        id: i64,
    },
}

/// Runs `crosstalk pastes [show ID]`.
pub(crate) fn pastes(
    db: Option<&Path>,
    what: Option<&PastesCmd>,
    as_json: bool,
) -> Result<u8, Failure> {
    let store = open_existing(db)?;
    let mut out = Stdout::new();
    match what {
        Some(PastesCmd::Show { id }) => {
            let Some(bytes) = store.paste_bytes(*id).map_err(store_failure)? else {
                return Err(Failure {
                    code: EXIT_INVALID,
                    message: format!("no paste {id}; `crosstalk pastes` lists them"),
                });
            };
            let _ = out.write_all(&bytes);
        }
        None => {
            let list = store.pastes().map_err(store_failure)?;
            if as_json {
                print_json(&mut out, &list)?;
            } else {
                for p in &list {
                    let kept = match p.messages {
                        0 => "no message stored from it".to_string(),
                        1 => "1 message".to_string(),
                        n => format!("{n} messages"),
                    };
                    let _ = writeln!(
                        out,
                        "{:>5}  {}  {:>9} bytes  {kept}  {}",
                        p.id,
                        sanitize_line(&p.received_at),
                        p.bytes,
                        sanitize_line(&p.source),
                    );
                }
                if list.is_empty() {
                    let _ = writeln!(out, "no pastes stored");
                }
            }
        }
    }
    out.finish()?;
    Ok(0)
}
