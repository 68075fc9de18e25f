//! When a v1.0 envelope is a message already stored.
//!
//! A v1.0 envelope has no message id: it is recognized by its text. But the same text can be
//! two messages: `Yes.` answering one question and, later, another. A v1.0 envelope answers
//! the message before it in its session, so it *is* a stored message only when it has the same
//! text **and** the same place: the same parent it would answer now. That is what the stored
//! digest says: the SHA-256 of the canonical text as received ([`base`]) and of the parent,
//! together ([`placed`]). One paste or many, the same conversation gives the same messages.
//!
//! Where an envelope goes depends on what came before it, so a conversation pasted again
//! needs one more rule, for the envelopes of a session that open an input (the first of them
//! would answer the session's latest message). They are the stored messages they repeat when
//! - the first of them repeats the session's first message: the conversation pasted again
//!   from its start;
//! - they repeat, word for word and in the order they arrived, the session's last messages up
//!   to its latest (its latest alone, or up to [`MAX_TAIL`] before it): its end pasted again,
//!   or the same input imported again (a [`Tail`], held until the envelopes after the first
//!   tell; of two ways to match, the longer is taken).
//!
//! From there on, each envelope answers the one before it, found or stored, so a longer copy
//! of a conversation finds every message it shares with the stored one and adds the rest.
//! Anything else is new: a `Yes.` pasted alone after a newer question answers that question.
//!
//! Which message a v1.0 envelope answers: the latest of its session, unless that one is neither
//! from its sender nor addressed to it — a third party's message, such as another target's
//! answer to a POLL. It then answers the latest message of its session addressed to its
//! sender (its recipient, or a POLL naming it among its targets), looking back
//! [`LOOK_BACK`] messages; when none is, the latest after all. A conversation of two never
//! meets the exception, so what it gives there is what it always gave.
//!
//! Databases written before places counted hold a digest of the text alone (the n-th repeat
//! of a text in one input: of the text and `#n`); [`find`] recognizes those by the parent
//! stored beside them, so nothing imported then is stored twice now.

use crate::protocol::namespaces;
use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};

use crate::store::StoreError;
use crate::store::import::hex;
use crate::store::prepare::Prepared;

/// How many messages before a session's latest a paste may begin and still be read as the
/// session's end pasted again.
pub(super) const MAX_TAIL: usize = 32;

/// How many of a session's latest messages a v1.0 reply looks back over for the one
/// addressed to its sender.
pub(in crate::store) const LOOK_BACK: usize = 64;

/// The names a party goes by, as a v1.0 reply's place compares them: its address as written
/// (trimmed, lower-cased, as addresses are compared) and, for an address `scheme://…`, its
/// scheme: `chatgpt://thread/cd7678` is CHATGPT's window, whichever way a model writes it.
pub(crate) fn names(party: &str) -> Vec<String> {
    let key = crate::store::delivery::address_key(party);
    let scheme = key
        .split_once("://")
        .map(|(s, _)| s.to_string())
        .filter(|s| !s.is_empty() && s != "human" && s != "mailto");
    let mut out = vec![key];
    out.extend(scheme);
    out
}

/// Who a message is from and for, as a v1.0 reply's place is decided by: the names of its
/// sender, and of its recipient with, for a POLL, its targets (see [`names`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parties {
    pub from: Vec<String>,
    pub to: Vec<String>,
}

impl Parties {
    /// The parties of a message from `sender` to `recipient` with `intent` and `meta`.
    pub(crate) fn new(
        sender: &str,
        recipient: &str,
        intent: Option<&crate::protocol::Intent>,
        meta: &[crate::protocol::MetaBlock],
    ) -> Parties {
        let mut to = names(recipient);
        if intent == Some(&crate::protocol::Intent::Poll) {
            if let Some(e) = crate::protocol::awaiting::expectation(intent, recipient, meta) {
                to.extend(e.targets.iter().flat_map(|t| names(t)));
            }
        }
        Parties {
            from: names(sender),
            to,
        }
    }

    /// The parties of an envelope.
    pub(crate) fn of(env: &crate::protocol::Envelope) -> Parties {
        Parties::new(
            &env.banner.from,
            &env.banner.to,
            env.intent().as_ref(),
            &env.meta,
        )
    }

    /// Whether it is addressed to a party of `sender`'s names.
    pub(crate) fn addressed_to(&self, sender: &[String]) -> bool {
        self.to.iter().any(|t| sender.contains(t))
    }

    /// Whether a v1.0 reply from `sender` (its [`names`]) answers this message, the latest of
    /// its session, rather than one further back: it is from the sender, or addressed to it.
    pub(crate) fn answered_by(&self, sender: &[String]) -> bool {
        self.from.iter().any(|f| sender.contains(f)) || self.addressed_to(sender)
    }
}

/// The latest message addressed to `sender` (its [`names`]) among the last [`LOOK_BACK`] of
/// `session` before `before` (with `inclusive`, up to and with it), if any: what a v1.0 reply
/// from `sender` answers when the message it would follow is a third party's (see the module's
/// comment). Only the messages before the place it would take count, never those stored after
/// it: the same conversation imported again finds each reply where it found it the first time.
pub(in crate::store) fn addressed_to(
    conn: &Connection,
    session: &str,
    sender: &[String],
    before: &str,
    inclusive: bool,
) -> Result<Option<Stored>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, thread_id, parent_id, digest, sender, recipient, intent, meta FROM messages
         WHERE session = ?1 AND seq <= (SELECT seq FROM messages WHERE id = ?3) - ?4
         ORDER BY seq DESC LIMIT ?2",
    )?;
    let mut rows = stmt.query(params![
        session,
        LOOK_BACK as i64,
        before,
        i64::from(!inclusive)
    ])?;
    while let Some(r) = rows.next()? {
        let intent: Option<String> = r.get(6)?;
        let intent = intent.as_deref().map(crate::protocol::Intent::parse);
        let recipient: String = r.get(5)?;
        // The META is read only for a POLL, whose targets it names.
        let meta = match intent {
            Some(crate::protocol::Intent::Poll) => {
                crate::store::delivery::meta_blocks(&r.get::<_, String>(7)?)
            }
            _ => Vec::new(),
        };
        let parties = Parties::new(&r.get::<_, String>(4)?, &recipient, intent.as_ref(), &meta);
        if parties.addressed_to(sender) {
            return Ok(Some(row(r)?));
        }
    }
    Ok(None)
}

/// The parties of stored message `id`, when it is stored.
pub(in crate::store) fn parties_of(
    conn: &Connection,
    id: &str,
) -> Result<Option<Parties>, StoreError> {
    let found: Option<(String, String, Option<String>, String)> = conn
        .prepare_cached("SELECT sender, recipient, intent, meta FROM messages WHERE id = ?1")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .optional()?;
    Ok(found.map(|(from, to, intent, meta)| {
        let intent = intent.as_deref().map(crate::protocol::Intent::parse);
        Parties::new(
            &from,
            &to,
            intent.as_ref(),
            &crate::store::delivery::meta_blocks(&meta),
        )
    }))
}

/// A stored message: its id, its thread, the message it answers and its digest.
#[derive(Debug, Clone)]
pub(in crate::store) struct Stored {
    pub id: String,
    pub thread: String,
    pub parent: Option<String>,
    digest: Option<String>,
}

/// The digest of an envelope's canonical text as received.
pub(super) fn base(canonical: &str) -> String {
    hex(&Sha256::digest(canonical.as_bytes()))
}

/// The text digest a v1.0 envelope is recognized by ([`base`] of its canonical text), leaving
/// out a `meta: email` block: a mail gateway adds one to the envelope it passes on (see
/// `transport::mail`), so the same envelope pasted from a chat window and received by mail,
/// or mailed twice, is one message, not two. Envelopes without such a block keep the digest
/// they always had.
pub(in crate::store) fn text_digest(env: &crate::protocol::Envelope) -> String {
    if env.meta_block(namespaces::EMAIL).is_none() {
        return base(&crate::protocol::render(env));
    }
    let mut bare = env.clone();
    bare.meta.retain(|m| m.namespace != namespaces::EMAIL);
    base(&crate::protocol::render(&bare))
}

/// The digest a v1.0 envelope of text digest `base` is stored under when it answers
/// `parent`. Its own form, so it never equals a digest of the text alone.
pub(in crate::store) fn placed(base: &str, parent: Option<&str>) -> String {
    let place = match parent {
        Some(p) => format!("parent {p}"),
        None => "root".to_string(),
    };
    hex(&Sha256::digest(
        format!("crosstalk v1.0 placed\n{base}\n{place}").as_bytes(),
    ))
}

/// The digest of the `n`-th repeat of a text in one input, as databases written before
/// places counted stored it.
fn repeat(base: &str, n: u32) -> String {
    hex(&Sha256::digest(format!("{base}#{n}").as_bytes()))
}

/// The session of an envelope placed by its session alone (a v1.0 envelope without errors
/// naming no thread, message or parent), with its text digest.
pub(in crate::store) fn by_session(prep: &Prepared) -> Option<(&str, &str)> {
    let e = &prep.parsed.envelope;
    let free = e.thread().is_none() && e.message().is_none() && e.parent().is_none();
    match (free && !prep.parsed.has_errors(), e.session(), &prep.digest) {
        (true, Some(session), Some(base)) => Some((session, base)),
        _ => None,
    }
}

const BY_DIGEST: &str = "SELECT id, thread_id, parent_id, digest FROM messages
    WHERE digest IN (?1, ?2, ?3)";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Stored> {
    Ok(Stored {
        id: r.get(0)?,
        thread: r.get(1)?,
        parent: r.get(2)?,
        digest: r.get(3)?,
    })
}

/// The stored message (id, thread) with text digest `base` answering `parent`, if any;
/// `key` is [`placed`] of the two (the caller has it already).
pub(in crate::store) fn find(
    conn: &Connection,
    base: &str,
    parent: Option<&str>,
    key: &str,
) -> Result<Option<(String, String)>, StoreError> {
    debug_assert_eq!(key, placed(base, parent));
    let first = repeat(base, 1);
    let rows: Vec<Stored> = conn
        .prepare_cached(BY_DIGEST)?
        .query_map(params![key, base, first], row)?
        .collect::<Result<_, _>>()?;
    let here = |s: &Stored| s.parent.as_deref() == parent;
    for s in &rows {
        // Stored under its place, or (before places counted) under its text, here.
        let d = s.digest.as_deref();
        if d == Some(key) || (d == Some(base) && here(s)) || (d == Some(&first) && here(s)) {
            return Ok(Some((s.id.clone(), s.thread.clone())));
        }
    }
    // More repeats of the text in one input, before places counted: each was stored only if
    // the one before it was.
    if !rows.iter().any(|s| s.digest.as_deref() == Some(&first)) {
        return Ok(None);
    }
    for n in 2..=u32::MAX {
        let Some(s) = one(conn, SQL_DIGEST, &repeat(base, n))? else {
            return Ok(None);
        };
        if here(&s) {
            return Ok(Some((s.id, s.thread)));
        }
    }
    Ok(None)
}

const SQL_DIGEST: &str = "SELECT id, thread_id, parent_id, digest FROM messages WHERE digest = ?1";

/// A stored message by a one-parameter query selecting id, thread, parent and digest.
fn one(conn: &Connection, sql: &str, key: &str) -> Result<Option<Stored>, StoreError> {
    Ok(conn.prepare_cached(sql)?.query_row([key], row).optional()?)
}

/// The message `id`.
pub(in crate::store) fn by_id(conn: &Connection, id: &str) -> Result<Option<Stored>, StoreError> {
    one(
        conn,
        "SELECT id, thread_id, parent_id, digest FROM messages WHERE id = ?1",
        &crate::protocol::id::key(id),
    )
}

/// The latest message of `session`.
pub(in crate::store) fn latest(
    conn: &Connection,
    session: &str,
) -> Result<Option<Stored>, StoreError> {
    one(
        conn,
        "SELECT id, thread_id, parent_id, digest FROM messages WHERE session = ?1
         ORDER BY seq DESC LIMIT 1",
        session,
    )
}

/// Whether `s` has the text of digest `base`, wherever it is placed.
fn has_text(s: &Stored, base: &str) -> bool {
    let Some(d) = s.digest.as_deref() else {
        return false;
    };
    // Repeats before places counted: a few are enough for any real conversation.
    d == placed(base, s.parent.as_deref()) || d == base || (1..=8).any(|n| d == repeat(base, n))
}

/// For the first envelope of its session in an input (text digest `base`), which would
/// answer the session's latest message: the stored message it is when it repeats the
/// session's first message (whose text is its session's own, so no other session's).
pub(in crate::store) fn first_of_session(
    conn: &Connection,
    base: &str,
) -> Result<Option<(String, String)>, StoreError> {
    find(conn, base, None, &placed(base, None))
}

/// The last `max` messages of `session`, newest first.
fn session_end(conn: &Connection, session: &str, max: usize) -> Result<Vec<Stored>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT id, thread_id, parent_id, digest FROM messages WHERE session = ?1
             ORDER BY seq DESC LIMIT ?2",
        )?
        .query_map(params![session, max as i64], row)?
        .collect::<Result<_, _>>()?)
}

/// Envelopes of a session that open an input, held while they may be the session's last
/// messages pasted again: nothing is stored for them until that is known.
pub(in crate::store) struct Tail {
    /// The session's latest message when the tail began, then the messages before it in the
    /// order they arrived (a POLL's answers are its siblings, yet one after the other here).
    chain: Vec<Stored>,
    /// The alignments still possible: the first held envelope is `chain[j]`.
    alive: Vec<usize>,
    /// The longest alignment reaching the latest message: the first `j + 1` held envelopes
    /// are `chain[j]` … `chain[0]`.
    done: Option<usize>,
    /// The envelopes held, each with its index in the input.
    pub held: Vec<(Prepared, usize)>,
}

/// How a tail settles.
pub(in crate::store) struct Settled {
    /// Held envelopes that are stored messages, with the message each is.
    pub found: Vec<(Prepared, usize, Stored)>,
    /// Held envelopes that are new messages, in input order.
    pub new: Vec<(Prepared, usize)>,
}

impl Tail {
    /// A tail beginning with `first` (text digest `base`) when that text is the latest
    /// message of `session` or one of the [`MAX_TAIL`] before it.
    pub(crate) fn start(
        conn: &Connection,
        session: &str,
        base: &str,
        first: (Prepared, usize),
    ) -> Result<Option<Tail>, StoreError> {
        let chain = session_end(conn, session, MAX_TAIL + 1)?;
        let mut alive: Vec<usize> = (0..chain.len())
            .filter(|&j| has_text(&chain[j], base))
            .collect();
        let done = alive.first().is_some_and(|&j| j == 0).then_some(0);
        alive.retain(|&j| j > 0);
        Ok((done.is_some() || !alive.is_empty()).then(|| Tail {
            chain,
            alive,
            done,
            held: vec![first],
        }))
    }

    /// Whether more envelopes may make the tail a longer match: else it settles now.
    pub(crate) fn may_grow(&self) -> bool {
        !self.alive.is_empty()
    }

    /// Holds the next envelope of the session (text digest `base`); whether the tail may
    /// still grow into a longer match.
    pub(crate) fn push(&mut self, base: &str, next: (Prepared, usize)) -> bool {
        let i = self.held.len();
        self.held.push(next);
        let chain = &self.chain;
        self.alive
            .retain(|&j| j >= i && has_text(&chain[j - i], base));
        if self.alive.contains(&i) {
            self.done = Some(i);
        }
        self.alive.retain(|&j| j > i);
        !self.alive.is_empty()
    }

    /// The held envelopes that are stored messages and those that are new. A tail that
    /// never reached the latest message is new messages, all of it.
    pub(crate) fn settle(self) -> Settled {
        let mut held = self.held.into_iter();
        let found = match self.done {
            Some(j) => (&mut held)
                .take(j + 1)
                .zip(self.chain[..=j].iter().rev().cloned())
                .map(|((prep, index), s)| (prep, index, s))
                .collect(),
            None => Vec::new(),
        };
        Settled {
            found,
            new: held.collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placed_digests_differ_by_place_and_from_every_text_digest() {
        let b = base("[[A→B v1]]\nsession: s\nresponse: |\n  Yes.\n[[END]]\n");
        let at = |p| placed(&b, p);
        assert_ne!(at(None), at(Some("01J9J3D3M6A4M3WQX8G1ZQ0S7K")));
        assert_ne!(at(Some("a")), at(Some("b")));
        assert_eq!(at(Some("a")), at(Some("a")));
        for old in [b.clone(), repeat(&b, 1), repeat(&b, 2)] {
            assert_ne!(at(None), old);
            assert_ne!(at(Some("a")), old);
        }
    }

    #[test]
    fn a_text_is_recognized_however_its_digest_was_written() {
        let b = base("text");
        let stored = |digest: String, parent: Option<&str>| Stored {
            id: "m".into(),
            thread: "t".into(),
            parent: parent.map(str::to_string),
            digest: Some(digest),
        };
        assert!(has_text(&stored(placed(&b, Some("p")), Some("p")), &b));
        assert!(!has_text(&stored(placed(&b, Some("p")), Some("q")), &b));
        assert!(has_text(&stored(b.clone(), Some("q")), &b));
        assert!(has_text(&stored(repeat(&b, 3), None), &b));
        assert!(!has_text(&stored(base("other"), None), &b));
    }
}
