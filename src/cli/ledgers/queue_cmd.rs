//! `crosstalk queue`: what is left to relay, to answer and to chase, oldest first per section;
//! `queue done|dismiss|undo ID` settles one item by hand, as `d`, `x` and `u` do in the app's
//! queue.

use std::io::Write;
use std::path::Path;

use clap::Subcommand;
use serde_json::json;

use crate::cli::database::store_cmd::store_failure;
use crate::cli::output::Stdout;
use crate::cli::{EXIT_INVALID, Failure, database::store_cmd};
use crate::sanitize::sanitize_line;
use crate::store::{Section, Settled, Store};

/// Prints the queue: `limit` rows per section, as text or JSON. The operator's addresses from
/// the config decide what is "addressed to me" (see `[operator]`).
pub(crate) fn queue(
    db: Option<&Path>,
    operator: &[String],
    limit: usize,
    as_json: bool,
) -> Result<u8, Failure> {
    let mut store = store_cmd::open_existing(db)?;
    store
        .set_operator_addresses(operator)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let queue = store
        .queue(limit)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let mut out = Stdout::new();
    if as_json {
        crate::cli::output::print_json(&mut out, &queue)?;
        out.finish()?;
        return Ok(0);
    }
    let now = jiff::Timestamp::now();
    for s in &queue.sections {
        let more = if s.more { "+" } else { "" };
        let _ = writeln!(out, "{} ({}{more})", s.section.title(), s.count);
        for r in &s.rows {
            let age = crate::app::text::age(&r.since, now);
            let mut line = format!(
                "  {:>4}  {}  {}→{}  {}  {}",
                age,
                sanitize_line(&r.message),
                sanitize_line(&r.from),
                sanitize_line(&r.to),
                sanitize_line(r.intent.as_deref().unwrap_or("-")),
                sanitize_line(&r.first_line),
            );
            if s.section == Section::Awaiting && !r.awaiting_from.is_empty() {
                let from: Vec<String> = r
                    .awaiting_from
                    .iter()
                    .map(|f| sanitize_line(f).into_owned())
                    .collect();
                line.push_str(&format!("  [awaiting {}", from.join(", ")));
                if let Some(n) = r.awaiting_needed.filter(|n| *n > 1) {
                    line.push_str(&format!(", {n} answers needed"));
                }
                line.push(']');
            }
            if let Some(c) = r.carried.filter(|c| c.partial() && r.relayed_at.is_none()) {
                let words = crate::app::text::carried_words(s.section, c);
                line.push_str(&format!("  [{words}]"));
            } else if let (Some(at), Some(how)) = (&r.relayed_at, &r.relay_method) {
                line.push_str(&format!(
                    "  [{}]",
                    sanitize_line(&crate::app::text::relay_words(at, how, now))
                ));
            }
            let _ = writeln!(out, "{line}");
        }
    }
    out.finish()?;
    Ok(0)
}

/// What to do with one queue item.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum QueueCmd {
    /// Mark a message done by other means than the desk saw (carried, answered, its answer
    /// got): it leaves every section of the queue.
    Done {
        /// Message id (or the first characters of one).
        id: String,
    },
    /// Dismiss a message: it needs nothing more (not to be relayed, answered or chased), and
    /// leaves every section of the queue.
    Dismiss {
        /// Message id (or the first characters of one).
        id: String,
    },
    /// Undo `done` or `dismiss`: the message is back wherever the ledger puts it.
    Undo {
        /// Message id (or the first characters of one).
        id: String,
    },
}

/// Runs `crosstalk queue done|dismiss|undo ID`. Settling twice, or undoing what is not
/// settled, changes nothing and is no error (exit 0, `"changed": false`), so a script may
/// repeat itself; an id that names no message, or several, exits 1.
pub(crate) fn settle(
    db: Option<&Path>,
    operator: &[String],
    what: &QueueCmd,
    as_json: bool,
) -> Result<u8, Failure> {
    let mut store = store_cmd::open_existing(db)?;
    store
        .set_operator_addresses(operator)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let (QueueCmd::Done { id } | QueueCmd::Dismiss { id } | QueueCmd::Undo { id }) = what;
    let m = message(&store, id)?;
    let before = sections(&store, &m.id)?;
    let changed = match what {
        QueueCmd::Done { .. } => store.settle(&m.id, Settled::Done),
        QueueCmd::Dismiss { .. } => store.settle(&m.id, Settled::Dismissed),
        QueueCmd::Undo { .. } => store.unsettle(&m.id),
    }
    .map_err(store_failure)?;
    let after = sections(&store, &m.id)?;
    let settled = store
        .delivery(&m.id)
        .map_err(store_failure)?
        .and_then(|d| d.settled);
    let mut out = Stdout::new();
    if as_json {
        let settled = settled
            .as_ref()
            .map(|(at, how)| json!({ "how": how, "at": at }));
        crate::cli::output::print_json(
            &mut out,
            &json!({
                "message": m.id,
                "thread": m.thread,
                "changed": changed,
                "settled": settled,
                "sections": after,
            }),
        )?;
        out.finish()?;
        return Ok(0);
    }
    let id = sanitize_line(&m.id);
    let line = match (what, changed) {
        (QueueCmd::Undo { .. }, false) => {
            format!(
                "{id} was not settled: nothing to undo; it is {}",
                placed(&after)
            )
        }
        (QueueCmd::Undo { .. }, true) => format!("{id} brought back: {}", placed(&after)),
        (_, false) => {
            let (how, at) = settled
                .as_ref()
                .map(|(at, how)| (how.as_str(), at.as_str()))
                .unwrap_or(("settled", ""));
            let ago = crate::app::text::age(at, jiff::Timestamp::now());
            format!(
                "{id} was settled already ({how} {ago} ago); `crosstalk queue undo {id}` first to settle it otherwise"
            )
        }
        (_, true) => {
            let how = match what {
                QueueCmd::Done { .. } => "done",
                _ => "dismissed",
            };
            let left = match before.as_slice() {
                [] => "it was in no section of the queue".to_string(),
                s => format!("it leaves the queue ({})", names(s)),
            };
            format!("{id} {how}: {left}; `crosstalk queue undo {id}` brings it back")
        }
    };
    let _ = writeln!(out, "{line}");
    out.finish()?;
    Ok(0)
}

/// The message `id` names, its first characters will do (see `store_cmd::one_message`); a
/// draft's id is told apart, as a draft is no queue item to settle but text to resume or
/// discard.
fn message(store: &Store, id: &str) -> Result<crate::store::StoredMessage, Failure> {
    match store_cmd::one_message(store, id) {
        Err(f)
            if f.code == EXIT_INVALID && crate::cli::database::erase_cmd::is_draft(store, id)? =>
        {
            Err(Failure {
                code: EXIT_INVALID,
                message: format!(
                    "`{}` is a draft being composed, not yet a message: `D` in the app lists the drafts (Enter resumes one, `x` discards it); copying it files it as a message",
                    sanitize_line(id)
                ),
            })
        }
        Err(f) if f.code == EXIT_INVALID && f.message.starts_with("no message") => Err(Failure {
            message: format!(
                "{}; `crosstalk queue` lists the items with their ids",
                f.message
            ),
            ..f
        }),
        r => r,
    }
}

/// The queue sections message `id` is in.
fn sections(store: &Store, id: &str) -> Result<Vec<Section>, Failure> {
    Ok(store
        .queue_sections(id)
        .map_err(store_failure)?
        .unwrap_or_default())
}

/// Where a message unsettled stands: its sections, or none.
fn placed(s: &[Section]) -> String {
    match s {
        [] => "in no section of the queue (the ledger sees nothing left to do)".to_string(),
        s => format!("in the queue under {}", names(s)),
    }
}

/// Sections as a sentence names them: `to relay`, `to relay and missing parent`.
fn names(s: &[Section]) -> String {
    let names: Vec<&str> = s.iter().map(|s| s.title()).collect();
    names.join(" and ")
}
