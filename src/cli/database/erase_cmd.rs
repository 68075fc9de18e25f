//! `crosstalk delete`: erasing a thread, a message or unused raw pastes for good, after
//! saying exactly what goes (see `store::erase` for what is removed and what stays).

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use serde_json::json;

use crate::cli::database::store_cmd::{load_thread, open_existing, store_failure};
use crate::cli::output::Stdout;
use crate::cli::{EXIT_INVALID, Failure};
use crate::sanitize::sanitize_line;
use crate::store::{EARLIER_COPIES, EraseTarget, Erasure, Store};

/// What to delete, as the command line names it.
#[derive(Debug, Clone, clap::Subcommand)]
pub(crate) enum DeleteWhat {
    /// A thread: every message, its drafts and the raw pastes they arrived in.
    Thread {
        /// Thread id (or the first characters of one).
        id: String,
    },
    /// One message and the raw pastes it arrived in (its replies stay).
    Message {
        /// Message id (or the first characters of one).
        id: String,
    },
    /// Raw pastes no stored message came from (cancelled previews, text without envelopes).
    /// A paste holding envelopes that were rejected stays: it is their only copy.
    Pastes,
    /// One raw paste by its id (`crosstalk pastes` lists them); messages that came from it
    /// keep their text.
    Paste {
        /// The paste's id.
        id: i64,
    },
}

/// Runs `crosstalk delete`: without `--yes`, asks on a terminal and refuses elsewhere.
pub(crate) fn delete(
    db: Option<&Path>,
    what: &DeleteWhat,
    yes: bool,
    as_json: bool,
) -> Result<u8, Failure> {
    let mut store = open_existing(db)?;
    let (target, name) = resolve(&store, what)?;
    let plan = store
        .erase_plan(&target)
        .map_err(store_failure)?
        .ok_or_else(|| not_found(&name))?;
    if plan == Erasure::default() {
        // Nothing to erase: nothing to confirm either.
        let mut out = Stdout::new();
        if as_json {
            crate::cli::output::print_json(
                &mut out,
                &json!({ "deleted": name, "messages": 0,
                "threads": 0, "pastes": 0, "drafts": 0 }),
            )?;
        } else {
            let _ = writeln!(out, "nothing to erase ({name})");
        }
        out.finish()?;
        return Ok(0);
    }
    if !yes {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() || as_json {
            return Err(Failure::usage(format!(
                "not deleted: {name} would erase {}. This cannot be undone; add --yes to do it. {EARLIER_COPIES}.",
                plan.describe()
            )));
        }
        eprint!(
            "Erase {name}: {}.\nThis cannot be undone. {EARLIER_COPIES}.\nType yes to erase: ",
            plan.describe()
        );
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        let _ = stdin.lock().read_line(&mut answer);
        if answer.trim() != "yes" {
            eprintln!("Nothing was deleted.");
            return Ok(EXIT_INVALID);
        }
    }
    let done = store
        .erase(&target)
        .map_err(store_failure)?
        .ok_or_else(|| not_found(&name))?;
    let mut out = Stdout::new();
    if as_json {
        crate::cli::output::print_json(
            &mut out,
            &json!({
                "deleted": name,
                "messages": done.messages,
                "threads": done.threads,
                "pastes": done.pastes,
                "drafts": done.drafts,
                "messages_that_lost_their_raw_paste": done.sharing_pastes,
                "replies_left_without_parent": done.orphaned_replies,
                // Erasure reaches this database only: a script should know the copies
                // made before it (backups, exports) were not touched.
                "earlier_copies_untouched": true,
                "note": EARLIER_COPIES,
            }),
        )?;
    } else {
        let _ = writeln!(out, "erased {name}: {}", done.describe());
        let _ = writeln!(out, "{EARLIER_COPIES}.");
    }
    out.finish()?;
    Ok(0)
}

/// The target and how to name it in messages (ids resolved from their first characters).
fn resolve(store: &Store, what: &DeleteWhat) -> Result<(EraseTarget, String), Failure> {
    Ok(match what {
        DeleteWhat::Thread { id } => {
            let t = load_thread(store, id)?;
            let name = format!(
                "thread {} ({})",
                t.id,
                sanitize_line(t.context.as_deref().unwrap_or("no context"))
            );
            (EraseTarget::Thread(t.id), name)
        }
        DeleteWhat::Message { id } => {
            let id = message_id(store, id)?;
            (EraseTarget::Message(id.clone()), format!("message {id}"))
        }
        DeleteWhat::Pastes => (EraseTarget::UnusedPastes, "the unused raw pastes".into()),
        DeleteWhat::Paste { id } => (EraseTarget::Paste(*id), format!("paste {id}")),
    })
}

fn message_id(store: &Store, id: &str) -> Result<String, Failure> {
    if let Some(m) = store.message(id).map_err(store_failure)? {
        return Ok(m.id);
    }
    let found = store.ids_with_prefix(id, 2).map_err(store_failure)?;
    match found.messages.as_slice() {
        [(only, _)] => Ok(only.clone()),
        [] if is_draft(store, id)? => Err(Failure {
            code: EXIT_INVALID,
            message: format!(
                "`{}` is a draft's id, not yet a message: `D` in the app lists the drafts and `x` there discards one (copying it files it as a message)",
                sanitize_line(id)
            ),
        }),
        [] => Err(not_found(&format!("message `{}`", sanitize_line(id)))),
        _ => Err(Failure {
            code: EXIT_INVALID,
            message: format!(
                "more than one message id starts with `{}`; give more of it",
                sanitize_line(id)
            ),
        }),
    }
}

/// Whether `id` (whole or its first characters, in either case) is a draft's: a draft is
/// saved under the message id it will be filed with, so the id is easily taken for one.
pub(in crate::cli) fn is_draft(store: &Store, id: &str) -> Result<bool, Failure> {
    let id = id.trim();
    let drafts = store.drafts().map_err(store_failure)?;
    Ok(!id.is_empty()
        && drafts.iter().any(|d| {
            d.id.get(..id.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(id))
        }))
}

fn not_found(name: &str) -> Failure {
    let lists = if name.starts_with("paste") || name.contains("raw pastes") {
        "`crosstalk pastes` lists the raw pastes kept"
    } else {
        "`crosstalk threads` and `crosstalk show` list what is stored"
    };
    Failure {
        code: EXIT_INVALID,
        message: format!("no {name}; {lists}"),
    }
}
