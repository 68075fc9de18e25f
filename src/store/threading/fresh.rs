//! Envelopes whose ids are not valid (`bad-id`): resolved through the ids given before, or,
//! when the operator asks for it, given fresh ids that keep the original as an alias (see the
//! `alias` module).

use rusqlite::Connection;

use crate::protocol::{Code, Diagnostic, Parsed, is_id};
use crate::store::{StoreError, alias, conflict};

/// The headers that hold ids, and the kind of id each names.
/// In this order: the message id last, because whether an alias's message is this envelope
/// again is judged on the envelope with its other ids already replaced (a reply imported
/// again names its parent by the invalid id, stored under the id it was given).
const ID_HEADERS: [(&str, &str); 3] = [
    ("thread", "thread"),
    ("parent", "message"),
    ("message", "message"),
];

/// What a repair changed.
#[derive(Debug, Default)]
pub(in crate::store) struct Repaired {
    /// An id header was replaced: the worker's filled-in form no longer holds.
    pub changed: bool,
    /// The message was given a fresh id (not one given before under its alias).
    pub fresh_message: bool,
}

/// Replaces the invalid ids of `p` whose only errors are `bad-id`: with the id given before
/// for the same original, else (with `fresh`) with a new one, kept as that original's alias.
/// When every id is valid afterwards, the `bad-id` errors go and a `fresh-id` warning says
/// what each became. An alias already given to a stored message with other content is not
/// reused for the message: example ids copied by many models name many messages.
pub(in crate::store) fn repair(
    conn: &Connection,
    ids: &dyn Fn(&str) -> String,
    paste_id: i64,
    now: &str,
    fresh: bool,
    p: &mut Parsed,
) -> Result<Repaired, StoreError> {
    let mut out = Repaired::default();
    let errors = || p.diagnostics.iter().filter(|d| d.is_error());
    if errors().next().is_none() || !errors().all(|d| d.code == Code::BadId) {
        return Ok(out);
    }
    let mut notes = Vec::new();
    for (key, kind) in ID_HEADERS {
        let Some(value) = p.envelope.header(key).map(str::to_string) else {
            continue;
        };
        if is_id(&value) {
            continue;
        }
        let mut id = match alias::resolve(conn, &value, kind)? {
            Some(id) => id,
            None if fresh => {
                let id = ids(key);
                alias::keep(conn, &value, kind, &id, paste_id, now)?;
                id
            }
            None => continue,
        };
        p.envelope.set_header(key, &id);
        if key == "message" && fresh {
            if let Some(s) = conflict::stored(conn, &id)? {
                if conflict::canonical_of(p, &s) != s.canonical {
                    id = ids("message-reused-alias");
                    p.envelope.set_header(key, &id);
                }
            }
            out.fresh_message = true;
        }
        out.changed = true;
        let (line, column) = p
            .diagnostics
            .iter()
            .find(|d| d.code == Code::BadId && d.message.to_ascii_lowercase().starts_with(key))
            .map_or((p.span.start_line, 1), |d| (d.line, d.column));
        notes.push(Diagnostic::new(
            Code::FreshId,
            line,
            column,
            format!(
                "{key}: `{value}` is not a valid id; stored as `{id}` (the original is kept as an alias: an envelope naming it is threaded here)"
            ),
        ));
    }
    let valid = ID_HEADERS
        .iter()
        .all(|(key, _)| p.envelope.header(key).is_none_or(is_id));
    if out.changed && valid {
        p.diagnostics.retain(|d| d.code != Code::BadId);
        p.diagnostics.extend(notes);
        p.diagnostics.sort_by_key(|d| (d.line, d.column));
    }
    Ok(out)
}
