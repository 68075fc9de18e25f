//! `crosstalk backup FILE`: a copy of the whole database (raw pastes, versions, aliases, the
//! trust store, the ledger, drafts), taken while the app or an import goes on. See
//! `Store::backup_to`.

use std::io::Write;
use std::path::Path;

use crate::cli::Failure;
use crate::cli::database::store_cmd::{open_existing, store_failure};
use crate::cli::output::{Stdout, print_json};

/// Runs `crosstalk backup FILE [--force] [--json]`.
pub(crate) fn backup(
    db: Option<&Path>,
    file: &Path,
    force: bool,
    as_json: bool,
) -> Result<u8, Failure> {
    // A backup of a database that is not there would make an empty one at that path (a
    // mistyped --db) and report success.
    let path = crate::cli::database::store_cmd::db_path(db)?;
    if !path.exists() {
        return Err(Failure::usage(format!(
            "no database at `{}` to back up; name the database with --db",
            crate::sanitize::sanitize_line(&path.display().to_string())
        )));
    }
    if file.as_os_str() == "-" {
        return Err(Failure::usage(
            "a backup is a database file, not a stream: give a file name instead of `-`",
        ));
    }
    if crate::export::target_problem(file, &path, force)
        == Some(crate::export::TargetProblem::Database)
    {
        return Err(Failure::usage(format!(
            "`{}` is the database itself; back it up to another file",
            crate::sanitize::sanitize_line(&file.display().to_string())
        )));
    }
    let store = open_existing(db)?;
    let b = store.backup_to(file, force).map_err(store_failure)?;
    let mut out = Stdout::new();
    if as_json {
        print_json(&mut out, &b)?;
    } else {
        let n = |k: i64, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
        let _ = writeln!(
            out,
            "{}: {} in {}, {}, {:.1} MB; open it with --db, or copy it back in place of the database with the app closed",
            crate::sanitize::sanitize_line(&b.path.display().to_string()),
            n(b.messages, "message", "messages"),
            n(b.threads, "thread", "threads"),
            n(b.pastes, "raw paste", "raw pastes"),
            b.bytes as f64 / 1e6
        );
    }
    Ok(0)
}
