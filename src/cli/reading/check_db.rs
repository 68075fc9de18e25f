//! `check` against the database: an envelope whose message id is stored with other content is
//! an `id-conflict` error before it is ever imported.
//!
//! The database consulted is the one `--db` or `$CROSSTALK_DB` names, else the default one when
//! it exists; `--no-db` checks the text alone. It is opened read-only: `check` never creates,
//! migrates or writes a database, and one it cannot read is said on standard error and skipped.

use std::path::{Path, PathBuf};

use crate::protocol::{Diagnostic, Parsed};
use crate::store::Store;

/// The database to check against, if any (see the module's comment).
pub(crate) fn open(db: Option<&Path>, no_db: bool) -> Option<Store> {
    if no_db {
        return None;
    }
    let named = db
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("CROSSTALK_DB").map(PathBuf::from));
    let path = match (&named, crate::store::default_path()) {
        (Some(p), _) => p.clone(),
        (None, Some(p)) if p.exists() => p,
        _ => return None,
    };
    match Store::open_for_reading(&path) {
        Ok(Some(store)) => Some(store),
        Ok(None) if named.is_some() => {
            eprintln!(
                "crosstalk: no database at `{}`; checked without it",
                crate::sanitize::sanitize_line(&path.to_string_lossy())
            );
            None
        }
        Ok(None) => None,
        Err(e) => {
            eprintln!(
                "crosstalk: cannot read the database to check ids against: {e}; checked without it"
            );
            None
        }
    }
}

/// The `id-conflict` errors of `envelopes` against `store`, in their order.
pub(crate) fn conflicts(store: &Store, envelopes: &[Parsed]) -> Vec<Diagnostic> {
    envelopes
        .iter()
        .filter_map(|p| match store.id_conflict(p) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("crosstalk: cannot read the database: {e}");
                None
            }
        })
        .collect()
}
