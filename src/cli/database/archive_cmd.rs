//! `crosstalk archive THREAD` (and `--undo`): a thread leaves the app's thread list and
//! `crosstalk threads` until something new arrives in it, as `a` does in the app. Archiving
//! settles none of its queue items: they stay in `crosstalk queue`.

use std::io::Write;
use std::path::Path;

use serde_json::json;

use crate::cli::Failure;
use crate::cli::database::store_cmd::{load_thread, open_existing, store_failure};
use crate::cli::output::Stdout;
use crate::sanitize::sanitize_line;

/// Archives thread `id` (or its first characters), or with `undo` brings it back. Archiving
/// an archived thread, or bringing back one that is not archived, changes nothing and is no
/// error (exit 0, `"changed": false`); an id that names no thread, or several, exits 1.
pub(crate) fn archive(
    db: Option<&Path>,
    id: &str,
    undo: bool,
    as_json: bool,
) -> Result<u8, Failure> {
    let mut store = open_existing(db)?;
    let thread = load_thread(&store, id)?;
    let changed = store
        .archive_thread(&thread.id, !undo)
        .map_err(store_failure)?;
    let archived_at = store.archived_at(&thread.id).map_err(store_failure)?;
    let mut out = Stdout::new();
    if as_json {
        crate::cli::output::print_json(
            &mut out,
            &json!({
                "thread": thread.id,
                "context": thread.context,
                "archived": archived_at.is_some(),
                "archived_at": archived_at,
                "changed": changed,
            }),
        )?;
        out.finish()?;
        return Ok(0);
    }
    let name = format!(
        "thread {} ({})",
        thread.id,
        sanitize_line(thread.context.as_deref().unwrap_or("no context"))
    );
    let line = match (undo, changed) {
        (false, true) => format!(
            "archived {name}: it leaves the thread list until something new arrives in it (its queue items stay); `crosstalk archive --undo {}` brings it back",
            thread.id
        ),
        (false, false) => format!("{name} was archived already"),
        (true, true) => format!("{name} is back in the thread list"),
        (true, false) => format!("{name} is not archived"),
    };
    let _ = writeln!(out, "{line}");
    out.finish()?;
    Ok(0)
}
