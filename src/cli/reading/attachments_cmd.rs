//! `crosstalk attachments verify`: do the files a message's `meta: attachments` names match?

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde::Serialize;

use crate::cli::database::store_cmd::{open_existing, store_failure};
use crate::cli::output::Stdout;
use crate::cli::{EXIT_INVALID, Failure, input};
use crate::protocol::Options;
use crate::protocol::attachments::{self, Attachment, Check};
use crate::sanitize::sanitize_line;
use crate::transport::file;

/// `crosstalk attachments …`.
#[derive(Debug, Subcommand)]
pub(crate) enum AttachmentsCmd {
    /// Check each attachment of a message (a stored message's id, or the first characters
    /// of one, or a file of envelopes) against the file of that name in DIR: ok, missing,
    /// or mismatched. A symbolic link in DIR is not followed (it is reported, with where it
    /// points): only files in DIR itself are vouched for. Exit 1 on any problem.
    Verify {
        /// Message id (or prefix), or a file holding envelopes.
        target: String,
        /// The directory holding the attached files.
        #[arg(long)]
        dir: PathBuf,
        /// Print JSON: one object per attachment.
        #[arg(long)]
        json: bool,
    },
}

/// One attachment's verdict, as `--json` prints it.
#[derive(Debug, Serialize)]
struct Row {
    /// The message id, or `file:line` of an envelope without one.
    message: String,
    key: String,
    name: Option<String>,
    mime: Option<String>,
    size: Option<u64>,
    digest: Option<String>,
    /// Parts of the entry that were not understood (a size that is no number, say): shown,
    /// so the verdict is never read as covering them.
    unread: Vec<String>,
    status: Check,
    /// Why the file was not read, when it was not: where a link points, what the name is
    /// instead of a file, the error.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

/// Runs an `attachments` subcommand.
pub(crate) fn attachments(
    db: Option<&Path>,
    cmd: AttachmentsCmd,
    opts: &Options,
) -> Result<u8, Failure> {
    let AttachmentsCmd::Verify { target, dir, json } = cmd;
    if !dir.is_dir() {
        return Err(Failure::usage(format!(
            "`{}` is not a directory; --dir names the directory holding the attached files",
            sanitize_line(&dir.display().to_string())
        )));
    }
    let lists = envelopes(db, &target, opts)?;
    let mut rows = Vec::new();
    for (message, list) in &lists {
        for (a, (status, reason)) in list.iter().zip(file::check_dir_why(list, &dir)) {
            rows.push(row(message, a, status, reason));
        }
    }
    let mut out = Stdout::new();
    if json {
        crate::cli::output::print_json(&mut out, &rows)?;
    } else {
        for r in &rows {
            let unread = if r.unread.is_empty() {
                String::new()
            } else {
                format!("  (not read: {})", sanitize_line(&r.unread.join("; ")))
            };
            let reason = (r.reason.as_deref())
                .map(|why| format!(" ({})", sanitize_line(why)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{}  {}  {}  {}{}  {}  {}{reason}{unread}",
                sanitize_line(&r.message),
                sanitize_line(&r.key),
                sanitize_line(r.name.as_deref().unwrap_or("(no name)")),
                sanitize_line(r.mime.as_deref().unwrap_or("(no type)")),
                r.size.map(|n| format!(", {n} bytes")).unwrap_or_default(),
                sanitize_line(r.digest.as_deref().unwrap_or("(no digest)")),
                r.status.label()
            );
        }
        if rows.is_empty() {
            let _ = writeln!(out, "no `meta: attachments` entries to verify");
        }
    }
    out.finish()?;
    let ok = !rows.is_empty() && rows.iter().all(|r| r.status == Check::Ok);
    Ok(if ok { 0 } else { EXIT_INVALID })
}

fn row(message: &str, a: &Attachment, status: Check, reason: Option<String>) -> Row {
    Row {
        message: message.to_string(),
        key: a.key.clone(),
        name: a.name.clone(),
        mime: a.mime.clone(),
        size: a.size,
        digest: a.digest.as_ref().map(|d| d.display()),
        unread: a.unread.clone(),
        status,
        reason,
    }
}

/// The attachments of each envelope `target` names: the envelopes of a file, else the stored
/// message with that id (or the one id starting with it).
fn envelopes(
    db: Option<&Path>,
    target: &str,
    opts: &Options,
) -> Result<Vec<(String, Vec<Attachment>)>, Failure> {
    let path = Path::new(target);
    if path.is_file() {
        let input = input::read(Some(path))?;
        let ex = input.extract(opts);
        return Ok(ex
            .envelopes
            .iter()
            .map(|p| {
                let label = p
                    .envelope
                    .message()
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("{}:{}", input.name, p.span.start_line));
                (label, attachments::attachments(&p.envelope))
            })
            .collect());
    }
    let store = open_existing(db)?;
    let shown = sanitize_line(target).into_owned();
    let id = match store.message(target).map_err(store_failure)? {
        Some(m) => m.id,
        None => {
            let found = store.ids_with_prefix(target, 2).map_err(store_failure)?;
            match found.messages.as_slice() {
                [(only, _)] => only.clone(),
                [] => {
                    return Err(Failure {
                        code: EXIT_INVALID,
                        message: format!("no file and no message `{shown}`"),
                    });
                }
                _ => {
                    return Err(Failure {
                        code: EXIT_INVALID,
                        message: format!(
                            "more than one message id starts with `{shown}`; give more of it"
                        ),
                    });
                }
            }
        }
    };
    let m = store
        .message(&id)
        .map_err(store_failure)?
        .ok_or_else(|| Failure {
            code: EXIT_INVALID,
            message: format!("message `{id}` was removed while being read"),
        })?;
    Ok(vec![(m.id.clone(), attachments::attachments(&m.envelope))])
}
