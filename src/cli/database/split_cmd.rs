//! `crosstalk export --split DIR`: one file per message, named by its message id.

use std::path::Path;

use crate::cli::database::store_cmd::{load_thread, open_existing, store_failure};
use crate::cli::{EXIT_USAGE, Failure, export};
use crate::sanitize::sanitize_line;
use crate::store::ThreadView;
use crate::transport::file;
use crate::transport::mail::{Outgoing, build};

/// Writes every message of the thread (or of every thread) to `dir` as
/// `<message-id>.crosstalk` (its canonical envelope) or, with `--format eml`,
/// `<message-id>.eml`. Existing files are never replaced: one with the same content is left
/// alone, one with other content is reported and the command exits 2.
pub(crate) fn split(
    db: Option<&Path>,
    thread: Option<&str>,
    all: bool,
    format: Option<export::Format>,
    dir: &Path,
) -> Result<u8, Failure> {
    let ext = match format.unwrap_or(export::Format::Crosstalk) {
        export::Format::Crosstalk => "crosstalk",
        export::Format::Eml => "eml",
        other => {
            return Err(Failure::usage(format!(
                "--split writes one .crosstalk (default) or .eml file per message, not {}; drop --format or use --format eml",
                other.name()
            )));
        }
    };
    let store = open_existing(db)?;
    let threads: Vec<ThreadView> = match thread {
        Some(id) if !all => vec![load_thread(&store, id)?],
        _ => {
            let mut v = Vec::new();
            for id in store.thread_ids().map_err(store_failure)? {
                if let Some(t) = store.thread(&id).map_err(store_failure)? {
                    v.push(t);
                }
            }
            v
        }
    };
    // Each mail names its ancestors up to the thread's root, as the mailbox does.
    let items = threads.iter().flat_map(|t| {
        let mails = if ext == "eml" {
            Outgoing::thread(t)
        } else {
            Vec::new()
        };
        t.messages.iter().enumerate().map(move |(i, m)| {
            let content = match mails.get(i) {
                Some(o) => build(o),
                None => {
                    let mut c = m.exported().trim_end().to_string();
                    c.push('\n');
                    c.into_bytes()
                }
            };
            (m.id.clone(), content)
        })
    });
    let shown = sanitize_line(&dir.display().to_string()).into_owned();
    // Something there that is no directory (a file, a link to nothing): said as such, where
    // the system's own error would read "File exists".
    if std::fs::symlink_metadata(dir).is_ok() && !dir.is_dir() {
        return Err(Failure::usage(format!(
            "`{shown}` is not a directory; --split names a directory to write one file per message into"
        )));
    }
    let done = file::write_split(dir, ext, items)
        .map_err(|e| Failure::usage(format!("cannot write into `{shown}`: {e}")))?;
    eprintln!(
        "wrote {} file{} to {shown}{}",
        done.written.len(),
        if done.written.len() == 1 { "" } else { "s" },
        match done.unchanged.len() {
            0 => String::new(),
            n => format!(" ({n} already there with the same content)"),
        }
    );
    if done.refused.is_empty() {
        return Ok(0);
    }
    for p in &done.refused {
        eprintln!(
            "crosstalk: `{}` exists with other content; not overwritten (move it away, or split into another directory)",
            sanitize_line(&p.display().to_string())
        );
    }
    Ok(EXIT_USAGE)
}
