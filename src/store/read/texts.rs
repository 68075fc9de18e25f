//! How a message's texts are kept without storing them three times.
//!
//! A message has three forms: its columns (banner, headers, META, body, signature), its
//! canonical text, and the text as received. The canonical text is what the columns render to
//! (`protocol::render`), so it is rendered when read instead of stored; only a canonical text
//! that the columns would not render to exactly (none is written so today, but a database
//! edited by hand or by an older binary may hold one) is kept in `canonical`. The text as
//! received mostly equals the canonical one, or differs from it in a few header lines (ids
//! filled in on receipt, a reply's intent): it is kept as an edit of the canonical text, the
//! bytes both share at the start (`raw_prefix`) and the end (`raw_suffix`) left out of `raw`.
//! The `headers` column leaves out a value that a column already holds (`message`, `thread`,
//! `parent`, `user`, `session`, `context`, `intent`): such a header is stored as one
//! character (see [`encode_headers`]).
//!
//! Columns named here are never changed after the insert, except `sig`, `hash`, `raw` and
//! `canonical` together (a signature added to a stored message), `thread_id` together
//! with `headers` (a reply moved to its parent's thread, see [`rehome`]), and `parent_id`
//! and `thread_id` with `headers`, `canonical` and `raw` (a reply the desk placed, moved by
//! the operator: `placement`), so what is left out can always be taken back from them.

use std::fmt;

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::de::{self, Deserializer, SeqAccess, Visitor};

use super::query::message_from_row;
use crate::protocol::{self, Envelope, Header};
use crate::store::StoreError;

/// The columns a header's value may be taken from, as stored with the message.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct HeaderColumns<'a> {
    /// `id`
    pub message: Option<&'a str>,
    /// `thread_id` (it changes when a reply is re-homed: see [`rehome`])
    pub thread: Option<&'a str>,
    /// `parent_id`
    pub parent: Option<&'a str>,
    /// `user`
    pub user: Option<&'a str>,
    /// `session`
    pub session: Option<&'a str>,
    /// `context`
    pub context: Option<&'a str>,
    /// `intent_raw`
    pub intent: Option<&'a str>,
}

/// The headers a column may hold, each with the one character that stands for it in the
/// `headers` column.
const HELD: [(&str, char); 7] = [
    ("message", 'm'),
    ("thread", 't'),
    ("parent", 'p'),
    ("user", 'u'),
    ("session", 's'),
    ("context", 'c'),
    ("intent", 'i'),
];

/// Between two headers in the `headers` column, and two blocks in the `meta` column (ASCII
/// record separator).
pub(super) const RS: char = '\u{1e}';
/// Between a header's key and its value, and before a META entry's key and value (ASCII
/// unit separator).
pub(super) const US: char = '\u{1f}';

impl<'a> HeaderColumns<'a> {
    /// The column holding the value of header `key` (the key exactly as written).
    fn get(&self, key: &str) -> Option<&'a str> {
        match key {
            "message" => self.message,
            "thread" => self.thread,
            "parent" => self.parent,
            "user" => self.user,
            "session" => self.session,
            "context" => self.context,
            "intent" => self.intent,
            _ => None,
        }
    }
}

/// The `headers` column, in the order received: one entry per header, separated by RS
/// (U+001E); an entry is the one character [`HELD`] gives a header whose value equals its
/// column's, else the key, US (U+001F) and the value. Most envelopes carry only headers that
/// columns hold, so this is a handful of bytes where JSON `[[key, value], ...]` took a
/// hundred. A header that holds RS or US itself, or whose key starts with `[`, makes the
/// whole column the JSON form (which [`parse_headers`] also reads, as older databases hold
/// it): the two forms never look alike.
pub(crate) fn encode_headers(headers: &[Header], cols: &HeaderColumns<'_>) -> String {
    let plain = |s: &str| !s.contains([RS, US]);
    let tight = headers.iter().all(|h| plain(&h.key) && plain(&h.value))
        && headers.first().is_none_or(|h| !h.key.starts_with('['));
    if !tight {
        return headers_json(headers, cols);
    }
    let mut out = String::with_capacity(2 * headers.len());
    for (i, h) in headers.iter().enumerate() {
        if i > 0 {
            out.push(RS);
        }
        match HELD.iter().find(|(k, _)| *k == h.key) {
            Some((_, code)) if cols.get(&h.key) == Some(h.value.as_str()) => out.push(*code),
            _ => {
                out.push_str(&h.key);
                out.push(US);
                out.push_str(&h.value);
            }
        }
    }
    out
}

/// The JSON form: `[[key, value], ...]`, with `[key]` for a header whose value equals its
/// column's.
fn headers_json(headers: &[Header], cols: &HeaderColumns<'_>) -> String {
    let mut out = String::with_capacity(16 * headers.len() + 2);
    out.push('[');
    for (i, h) in headers.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('[');
        push_json_str(&mut out, &h.key);
        if cols.get(&h.key) != Some(h.value.as_str()) {
            out.push(',');
            push_json_str(&mut out, &h.value);
        }
        out.push(']');
    }
    out.push(']');
    out
}

fn push_json_str(out: &mut String, s: &str) {
    // serde_json cannot fail on a string.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

/// One stored header: its key and, unless a column holds it, its value.
struct StoredHeader(String, Option<String>);

impl<'de> serde::Deserialize<'de> for StoredHeader {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StoredHeader;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("[key] or [key, value]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<StoredHeader, A::Error> {
                let key: String = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let value: Option<String> = seq.next_element()?;
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(3, &self));
                }
                Ok(StoredHeader(key, value))
            }
        }
        d.deserialize_seq(V)
    }
}

/// Reads the `headers` column back, in any form it was written in: the one
/// [`encode_headers`] writes, JSON with held values left out, and the full JSON of older
/// databases. A header stored without its value whose column is empty is damage.
pub(crate) fn parse_headers(stored: &str, cols: &HeaderColumns<'_>) -> Result<Vec<Header>, String> {
    let held = |key: &str| {
        cols.get(key)
            .map(str::to_string)
            .ok_or_else(|| format!("header `{key}` has no value"))
    };
    if !stored.starts_with('[') {
        if stored.is_empty() {
            return Ok(Vec::new());
        }
        return stored
            .split(RS)
            .map(|entry| match entry.split_once(US) {
                Some((key, value)) => Ok(Header {
                    key: key.to_string(),
                    value: value.to_string(),
                }),
                None => {
                    let mut chars = entry.chars();
                    let key = match (chars.next(), chars.next()) {
                        (Some(c), None) => HELD.iter().find(|(_, code)| *code == c),
                        _ => None,
                    }
                    .map(|(key, _)| *key)
                    .ok_or_else(|| format!("unknown header code `{entry}`"))?;
                    Ok(Header {
                        key: key.to_string(),
                        value: held(key)?,
                    })
                }
            })
            .collect();
    }
    let stored: Vec<StoredHeader> = serde_json::from_str(stored).map_err(|e| e.to_string())?;
    stored
        .into_iter()
        .map(|StoredHeader(key, value)| {
            let value = match value {
                Some(v) => v,
                None => held(&key)?,
            };
            Ok(Header { key, value })
        })
        .collect()
}

/// Moves message `id` to `thread`: its `thread_id` changes, and a `thread` header that the
/// old column held is written out with its value, so the headers read back as received.
pub(crate) fn rehome(conn: &Connection, id: &str, thread: &str) -> Result<(), StoreError> {
    let row: Option<(String, Opt4, Option<String>, String)> = conn
        .prepare_cached(
            "SELECT thread_id, user, session, context, intent_raw, parent_id, headers
             FROM messages WHERE id = ?1",
        )?
        .query_row([id], |r| {
            Ok((
                r.get(0)?,
                (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?),
                r.get(5)?,
                r.get(6)?,
            ))
        })
        .optional()?;
    let Some((old, (user, session, context, intent), parent, stored)) = row else {
        return Ok(());
    };
    let mut cols = HeaderColumns {
        message: Some(id),
        thread: Some(&old),
        parent: parent.as_deref(),
        user: user.as_deref(),
        session: session.as_deref(),
        context: context.as_deref(),
        intent: intent.as_deref(),
    };
    // Headers that cannot be read stay as they are: damage is reported when read.
    let headers = parse_headers(&stored, &cols).ok().map(|h| {
        cols.thread = Some(thread);
        encode_headers(&h, &cols)
    });
    conn.prepare_cached(
        "UPDATE messages SET thread_id = ?2, headers = coalesce(?3, headers) WHERE id = ?1",
    )?
    .execute(params![id, thread, headers])?;
    Ok(())
}

/// How the text as received is stored: `raw`, `raw_prefix`, `raw_suffix`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct RawEdit {
    /// The received text's own part (all of it when no prefix and suffix are given); `None`
    /// when it equals the canonical text.
    pub text: Option<String>,
    /// Bytes at the start of the canonical text the received text shares.
    pub prefix: Option<i64>,
    /// Bytes at the end of the canonical text the received text shares.
    pub suffix: Option<i64>,
}

/// The edit that turns `canonical` into `raw`: the longest common start and end (on
/// character boundaries, not overlapping), and what lies between in `raw`.
pub(crate) fn raw_edit(raw: &str, canonical: &str) -> RawEdit {
    if raw == canonical {
        return RawEdit::default();
    }
    let (r, c) = (raw.as_bytes(), canonical.as_bytes());
    let mut prefix = r.iter().zip(c).take_while(|(a, b)| a == b).count();
    while !canonical.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let most = r.len().min(c.len()) - prefix;
    let mut suffix = r
        .iter()
        .rev()
        .zip(c.iter().rev())
        .take(most)
        .take_while(|(a, b)| a == b)
        .count();
    while !canonical.is_char_boundary(c.len() - suffix) {
        suffix -= 1;
    }
    RawEdit {
        text: Some(raw[prefix..r.len() - suffix].to_string()),
        prefix: Some(prefix as i64),
        suffix: Some(suffix as i64),
    }
}

/// The text as received, from its stored edit and the canonical text.
pub(crate) fn apply_raw(edit: &RawEdit, canonical: &str) -> Result<String, String> {
    let Some(text) = &edit.text else {
        return Ok(canonical.to_string());
    };
    let (Some(prefix), Some(suffix)) = (edit.prefix, edit.suffix) else {
        return Ok(text.clone());
    };
    let (p, s) = (usize::try_from(prefix), usize::try_from(suffix));
    let (Ok(p), Ok(s)) = (p, s) else {
        return Err("the received text's edit is out of range".into());
    };
    let end = canonical.len().checked_sub(s);
    match (canonical.get(..p), end.and_then(|e| canonical.get(e..))) {
        (Some(head), Some(tail)) if p <= canonical.len() - s => {
            let mut out = String::with_capacity(head.len() + text.len() + tail.len());
            out.push_str(head);
            out.push_str(text);
            out.push_str(tail);
            Ok(out)
        }
        _ => Err("the received text's edit does not fit the canonical text".into()),
    }
}

/// The `canonical` column for an envelope stored with these columns: `None` when rendering
/// them gives `canonical` (the usual case), else the text itself.
pub(crate) fn kept_canonical<'a>(env: &Envelope, canonical: &'a str) -> Option<&'a str> {
    (protocol::render(env) != canonical).then_some(canonical)
}

type Opt4 = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// The migration to this encoding: every message row's `headers`, `canonical` and `raw` are
/// written in the forms above from the full texts an older schema kept (`canonical_full`,
/// and `raw` when it differed), then `canonical_full` is dropped. A row whose stored JSON
/// cannot be read keeps its texts whole, to be reported as damaged when read, as before.
pub(crate) fn rewrite_texts(tx: &Transaction) -> Result<(), StoreError> {
    // The columns of `MESSAGE_COLUMNS`, with the texts left out so that the canonical text
    // is rendered from the columns (and the ledger's time, which this version has not got
    // yet, as the time stored); then the full texts.
    let sql = "SELECT id, thread_id, parent_id, direction, status, received_at, intent, sender,
        recipient, version, headers, meta, body, sig, hash, NULL, NULL, diagnostics, NULL, NULL,
        user, session, context, intent_raw, received_at, ids_assigned, seq, raw, canonical_full
        FROM messages";
    let mut update = tx.prepare(
        "UPDATE messages SET headers = ?2, canonical = ?3, raw = ?4, raw_prefix = ?5,
            raw_suffix = ?6 WHERE seq = ?1",
    )?;
    let mut select = tx.prepare(sql)?;
    let mut rows = select.query([])?;
    while let Some(r) = rows.next()? {
        let seq: i64 = r.get(26)?;
        let raw: Option<String> = r.get(27)?;
        let full: String = r.get(28)?;
        let headers: String = r.get(10)?;
        let received = raw.as_deref().unwrap_or(&full);
        match message_from_row(r)? {
            Ok(m) => {
                let (user, session, context, intent): Opt4 =
                    (r.get(20)?, r.get(21)?, r.get(22)?, r.get(23)?);
                let cols = HeaderColumns {
                    message: Some(&m.id),
                    // As version 6 wrote them: its column held no thread (see
                    // `encode_all_headers` for version 7).
                    thread: None,
                    parent: m.parent.as_deref(),
                    user: user.as_deref(),
                    session: session.as_deref(),
                    context: context.as_deref(),
                    intent: intent.as_deref(),
                };
                let edit = raw_edit(received, &full);
                update.execute(params![
                    seq,
                    headers_json(&m.envelope.headers, &cols),
                    (m.canonical != full).then_some(&full),
                    edit.text,
                    edit.prefix,
                    edit.suffix,
                ])?;
            }
            Err(_) => {
                update.execute(params![seq, headers, full, raw, None::<i64>, None::<i64>])?;
            }
        }
    }
    drop(rows);
    tx.execute_batch("ALTER TABLE messages DROP COLUMN canonical_full")?;
    Ok(())
}

/// The migration to the tight `headers` form: every row whose headers can be read is
/// written again by [`encode_headers`], with the thread's id held by its column. A row whose
/// headers cannot be read keeps them, to be reported as damaged when read, as before.
pub(crate) fn encode_all_headers(tx: &Transaction) -> Result<(), StoreError> {
    let mut update = tx.prepare("UPDATE messages SET headers = ?2 WHERE seq = ?1")?;
    let mut select = tx.prepare(
        "SELECT seq, id, thread_id, parent_id, user, session, context, intent_raw, headers
         FROM messages",
    )?;
    let mut rows = select.query([])?;
    while let Some(r) = rows.next()? {
        let (id, thread): (String, String) = (r.get(1)?, r.get(2)?);
        let parent: Option<String> = r.get(3)?;
        let (user, session, context, intent): Opt4 = (r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?);
        let cols = HeaderColumns {
            message: Some(&id),
            thread: Some(&thread),
            parent: parent.as_deref(),
            user: user.as_deref(),
            session: session.as_deref(),
            context: context.as_deref(),
            intent: intent.as_deref(),
        };
        let stored: String = r.get(8)?;
        if let Ok(headers) = parse_headers(&stored, &cols) {
            let tight = encode_headers(&headers, &cols);
            if tight != stored {
                update.execute(params![r.get::<_, i64>(0)?, tight])?;
            }
        }
    }
    Ok(())
}

/// The `headers` and `meta` columns of an envelope: its headers (a value that `cols` holds
/// left out, see [`encode_headers`]) and its META blocks (see `meta_column`), in the order
/// received (`query` reads them back).
pub(crate) fn envelope_columns(
    env: &crate::protocol::Envelope,
    cols: &HeaderColumns<'_>,
) -> (String, String) {
    (
        encode_headers(&env.headers, cols),
        super::meta_column::encode(&env.meta),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn h(k: &str, v: &str) -> Header {
        Header {
            key: k.into(),
            value: v.into(),
        }
    }

    #[test]
    fn headers_held_by_columns_are_stored_as_one_character_and_read_back() {
        let headers = vec![
            h("thread", "T"),
            h("message", "M"),
            h("user", "other"),
            h("Context", "c"),
            h("x-extra", "e\"q"),
        ];
        let cols = HeaderColumns {
            message: Some("M"),
            thread: Some("T"),
            user: Some("u"),
            context: Some("c"),
            ..Default::default()
        };
        let stored = encode_headers(&headers, &cols);
        assert_eq!(
            stored,
            "t\u{1e}m\u{1e}user\u{1f}other\u{1e}Context\u{1f}c\u{1e}x-extra\u{1f}e\"q"
        );
        assert_eq!(parse_headers(&stored, &cols).unwrap(), headers);
        assert_eq!(encode_headers(&[], &cols), "");
        assert_eq!(parse_headers("", &cols).unwrap(), vec![]);
        // The JSON form written before reads the same, as does the full form of older
        // databases.
        let json = headers_json(&headers, &cols);
        assert_eq!(
            json,
            r#"[["thread"],["message"],["user","other"],["Context","c"],["x-extra","e\"q"]]"#
        );
        assert_eq!(parse_headers(&json, &cols).unwrap(), headers);
        let old = serde_json::to_string(
            &headers
                .iter()
                .map(|h| [h.key.as_str(), h.value.as_str()])
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert_eq!(parse_headers(&old, &cols).unwrap(), headers);
        // A key alone without its column is damage, not an empty value.
        assert!(parse_headers(r#"[["session"]]"#, &cols).is_err());
        assert!(parse_headers("s", &cols).is_err());
        assert!(parse_headers("q", &cols).is_err());
        assert!(parse_headers(r#"[["a","b","c"]]"#, &cols).is_err());
    }

    #[test]
    fn headers_holding_separators_or_a_bracket_first_are_kept_as_json() {
        let cols = HeaderColumns::default();
        for headers in [
            vec![h("x", "a\u{1e}b")],
            vec![h("x\u{1f}", "v")],
            vec![h("[x", "v"), h("y", "w")],
        ] {
            let stored = encode_headers(&headers, &cols);
            assert!(stored.starts_with('['), "{stored:?}");
            assert_eq!(parse_headers(&stored, &cols).unwrap(), headers);
        }
        // A bracket later on is no trouble.
        let headers = vec![h("y", "w"), h("[x", "[v")];
        let stored = encode_headers(&headers, &cols);
        assert!(!stored.starts_with('['));
        assert_eq!(parse_headers(&stored, &cols).unwrap(), headers);
    }

    proptest! {
        #[test]
        fn any_headers_read_back_as_written(
            pairs in proptest::collection::vec(
                ("(message|thread|parent|user|session|context|intent|\\[|x)\\PC{0,3}|message|thread|intent",
                 "(\\PC|\u{1e}|\u{1f}){0,6}"),
                0..8,
            ),
            held in "(\\PC|\u{1e}){0,3}",
        ) {
            let headers: Vec<Header> = pairs.iter().map(|(k, v)| h(k, v)).collect();
            let cols = HeaderColumns {
                message: Some(&held),
                thread: Some(&held),
                parent: Some(&held),
                user: None,
                session: Some(""),
                context: Some(&held),
                intent: Some(&held),
            };
            let stored = encode_headers(&headers, &cols);
            prop_assert_eq!(parse_headers(&stored, &cols).unwrap(), headers);
        }

        #[test]
        fn a_raw_edit_gives_back_the_received_text(
            raw in "(\\PC|\n|é|→){0,40}",
            canonical in "(\\PC|\n|é|→){0,40}",
            shared in "(a|é|\n|→){0,6}",
        ) {
            for (r, c) in [
                (raw.clone(), canonical.clone()),
                (format!("{shared}{raw}{shared}"), format!("{shared}{canonical}{shared}")),
                (format!("{shared}{raw}"), format!("{shared}{raw}{canonical}")),
                (format!("{raw}{canonical}"), canonical.clone()),
            ] {
                let edit = raw_edit(&r, &c);
                prop_assert_eq!(apply_raw(&edit, &c).unwrap(), r.clone());
                if r == c {
                    prop_assert_eq!(edit.text, None);
                }
            }
        }
    }

    #[test]
    fn an_edit_that_does_not_fit_is_damage() {
        let edit = RawEdit {
            text: Some("x".into()),
            prefix: Some(5),
            suffix: Some(5),
        };
        assert!(apply_raw(&edit, "abc").is_err());
        let edit = RawEdit {
            text: Some("x".into()),
            prefix: Some(1),
            suffix: Some(0),
        };
        assert!(apply_raw(&edit, "é").is_err());
    }
}
