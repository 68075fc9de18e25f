//! Consent as the envelopes state it: grants in `meta: privacy` (`Consent`, `Scope`,
//! `Expires`, `Jurisdiction`, `Consent-ID`, `Original-Consent-ID`) and withdrawals in
//! `meta: revocation` on a REVOKE. Pure: statements and a clock in, one record per consent out.
//!
//! The rules (docs/PROTOCOL.md, "Consent"):
//! - A consent is named by its `Consent-ID`; a grant without one is the consent of its thread.
//! - `Consent` is read by [`value`]: `explicit_yes`, `opt-in`, `implicit` and
//!   `transferred_with_approval` grant (from the time written after them, else the message's),
//!   `explicit_no` refuses, and any other value is not understood: the consent it names is in
//!   force for nothing. The latest statement about a consent wins.
//! - Personal data needs explicit consent: `explicit_yes`, `opt-in`, or a transfer of either.
//!   An `implicit` grant is granted and shown as such, yet does not allow it.
//! - `Expires` past the clock makes a grant expired.
//! - A REVOKE withdraws the consent its `meta: revocation` names (`Consent-ID`, else the
//!   thread's) from its `Effective` time (`immediate`: when it was received; none: the
//!   message's) — **only when its signature was verified**: an unverified REVOKE is listed and
//!   changes nothing, as the spec requires. A verified REVOKE that withdraws nothing is listed
//!   with the reason, never dropped.
//! - A HANDOFF's grant with `Original-Consent-ID` was transferred from that consent: revoking
//!   the original revokes what was transferred from it too.

pub mod value;

use crate::protocol::namespaces;
use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

use crate::protocol::validate::parse_time;
use crate::protocol::{Intent, MetaBlock};
use value::{Kind, Reading};

/// One envelope, as far as consent is concerned.
#[derive(Debug, Clone)]
pub struct Statement<'a> {
    /// The thread it belongs to.
    pub thread: &'a str,
    /// Its message id.
    pub message: &'a str,
    /// When it was written (its id's time, else when it was stored).
    pub time: Timestamp,
    /// When it was stored here: the time a REVOKE with `Effective: immediate` takes effect,
    /// since the sender's clock (in its id) may say anything.
    pub received: Timestamp,
    /// Its intent.
    pub intent: Option<&'a Intent>,
    /// Its META blocks.
    pub meta: &'a [MetaBlock],
    /// Whether its signature was verified with a trusted key.
    pub verified: bool,
}

/// Where a consent stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Granted and not expired or withdrawn.
    Granted,
    /// Refused (`explicit_no`).
    Denied,
    /// Its `Expires` time has passed.
    Expired,
    /// Withdrawn by a verified REVOKE (or its original was).
    Revoked,
    /// Its latest `Consent` value is neither a grant nor a refusal: no consent is in force.
    NotUnderstood,
}

impl State {
    /// The words shown to the operator.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Granted => "granted",
            State::Denied => "denied",
            State::Expired => "expired",
            State::Revoked => "revoked",
            State::NotUnderstood => "not understood",
        }
    }
}

/// One consent and what the envelopes said of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Its `Consent-ID`, or `None` for a thread's unnamed consent.
    pub consent_id: Option<String>,
    /// Where it stands at the clock given.
    pub state: State,
    /// The `Consent` value's kind as the protocol spells it (`explicit_yes`, `implicit`, …),
    /// or the value as written when it was not understood.
    pub kind: String,
    /// Whether it is explicit consent, which the spec requires for personal data:
    /// `explicit_yes` or `opt-in`, or a transfer of such a consent (of one not stored here, the
    /// transfer's own word "with approval" is taken).
    pub explicit: bool,
    /// When it was granted (or denied).
    pub since: Timestamp,
    /// When it expires, if it says.
    pub expires: Option<Timestamp>,
    /// Its `Expires` as written, when that does not read as a time (`soon`, `2026-02-30`, an
    /// empty value): a limit that cannot be read is never taken for no limit, so the consent
    /// is not understood.
    pub unreadable_expires: Option<String>,
    /// When it was withdrawn, and by which message.
    pub revoked: Option<(Timestamp, String)>,
    /// `Scope`, `Jurisdiction` as written.
    pub scope: Option<String>,
    /// See `scope`.
    pub jurisdiction: Option<String>,
    /// The consent it was transferred from (a HANDOFF's `Original-Consent-ID`).
    pub transferred_from: Option<String>,
    /// The message whose statement is in force.
    pub message: String,
    /// The threads that mentioned it, in order of first mention.
    pub threads: Vec<String>,
}

impl Record {
    /// Why personal data may not go out under this consent, which does not allow it ("is
    /// denied", …), to follow "the thread's consent".
    pub fn why_not_pii(&self) -> String {
        match self.state {
            State::Granted if self.kind == "implicit" => {
                "is implicit only (personal data needs explicit consent)".to_string()
            }
            State::Granted => "was transferred from one that is not explicit (personal data \
                               needs explicit consent)"
                .to_string(),
            State::NotUnderstood => match &self.unreadable_expires {
                Some(e) => format!(
                    "is not understood (`Expires: {}` is no time, and a limit that cannot be read is no consent)",
                    crate::sanitize::sanitize_line(e)
                ),
                None => format!(
                    "is not understood (`Consent: {}`)",
                    crate::sanitize::sanitize_line(&self.kind)
                ),
            },
            s => format!("is {}", s.as_str()),
        }
    }

    /// Whether personal data may be sent under it: granted, and explicitly. An `implicit`
    /// grant is in force for what it covers, but the spec requires explicit consent for
    /// PII/PHI.
    pub fn allows_pii(&self) -> bool {
        self.state == State::Granted && self.explicit
    }
}

/// A REVOKE that changed nothing because its signature was not verified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unverified {
    /// The REVOKE's message id.
    pub message: String,
    /// Its thread.
    pub thread: String,
    /// The consent it names (`None`: its thread's).
    pub consent_id: Option<String>,
}

/// A verified REVOKE that withdraws nothing at the clock, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untaken {
    /// The REVOKE's message id.
    pub message: String,
    /// Its thread.
    pub thread: String,
    /// The consent it names (`None`: its thread's).
    pub consent_id: Option<String>,
    /// When it takes effect.
    pub effective: Timestamp,
    /// Why it withdraws nothing.
    pub why: Why,
}

impl Untaken {
    /// Whether it asks for a withdrawal that is not in force and was not answered by a later
    /// statement of the consent: something the operator should look at.
    pub(crate) fn needs_attention(&self) -> bool {
        !matches!(self.why, Why::Restated { .. })
    }
}

/// Why a verified REVOKE withdraws nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// It takes effect after the clock; the consent stays in force until then.
    NotYet,
    /// It takes effect before the statement in force about that consent was made, and that
    /// statement was received before it (or with it): it can never take effect.
    BeforeStatement {
        /// The message of the statement in force.
        message: String,
        /// When that statement was made.
        since: Timestamp,
    },
    /// The consent was stated again (by `message`, at `since`) after the REVOKE was received:
    /// the withdrawal was in force until then, and a grant after it is in force again.
    Restated {
        /// The message of the statement in force.
        message: String,
        /// When that statement was made.
        since: Timestamp,
    },
    /// No stored envelope grants the consent it names, nor one transferred from it.
    NoGrant,
}

/// Every consent the statements mention, and the REVOKEs that were not taken.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    /// One per consent, in order of first grant.
    pub records: Vec<Record>,
    /// REVOKEs without a verified signature: flagged, without effect.
    pub unverified: Vec<Unverified>,
    /// Verified REVOKEs that withdraw nothing at the clock, with the reason.
    pub untaken: Vec<Untaken>,
}

impl Ledger {
    /// The consent in force for `thread`: the one its latest privacy statement named (or its
    /// unnamed one); `None` when the thread never stated consent.
    pub fn for_thread(&self, thread: &str) -> Option<&Record> {
        self.records
            .iter()
            .filter(|r| r.threads.iter().any(|t| t == thread))
            .max_by_key(|r| r.since)
    }
}

/// The consent ids a statement's META names (`Consent-ID` and `Original-Consent-ID` in any
/// block, trimmed), a superset of those [`ledger`] reads from it. The consent in force for
/// one thread depends only on its own statements and, through the ids they name, on the
/// statements naming those ids, and so on: a reader of one thread's consent (see
/// `Store::consent_for_thread`) follows these instead of reading every statement.
pub(crate) fn named_ids(meta: &[MetaBlock]) -> impl Iterator<Item = &str> {
    meta.iter()
        .flat_map(|m| m.entries.iter())
        .filter(|(k, _)| k == "Consent-ID" || k == "Original-Consent-ID")
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())
}

/// The key a consent is filed under: its id, or its thread's.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Id(String),
    Thread(String),
}

impl Key {
    fn consent_id(&self) -> Option<String> {
        match self {
            Key::Id(id) => Some(id.clone()),
            Key::Thread(_) => None,
        }
    }
}

/// A statement read from `meta: privacy`: a grant, a refusal, or a value not understood.
struct Grant {
    key: Key,
    /// What the `Consent` value says; `None`: not understood.
    reading: Option<Reading>,
    /// The `Consent` value as written.
    written: String,
    at: Timestamp,
    expires: Option<Timestamp>,
    /// `Expires` as written when it does not read as a time.
    unreadable_expires: Option<String>,
    scope: Option<String>,
    jurisdiction: Option<String>,
    original: Option<String>,
    message: String,
    thread: String,
    received: Timestamp,
}

/// A verified REVOKE of a consent.
struct Revoke {
    key: Key,
    at: Timestamp,
    message: String,
    thread: String,
    received: Timestamp,
}

impl Revoke {
    /// Whether it withdraws consent `key` granted at `from`, at clock `now`.
    fn withdraws(&self, key: &Key, from: Timestamp, now: Timestamp) -> bool {
        self.key == *key && self.at >= from && self.at <= now
    }
}

fn non_empty(v: Option<&str>) -> Option<String> {
    v.map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

fn grant(s: &Statement<'_>) -> Option<Grant> {
    let privacy = s.meta.iter().find(|m| m.namespace == namespaces::PRIVACY)?;
    let written = privacy.get("Consent")?;
    // Two `Consent` entries that disagree (`explicit_yes`, then `explicit_no`) say nothing
    // for sure: neither is read, as for a value not understood (`check` warns).
    let agreed = (privacy.entries.iter())
        .filter(|(k, _)| k == "Consent")
        .all(|(_, v)| v.trim() == written.trim());
    let reading = value::read(written).ok().filter(|_| agreed);
    // An `Expires` that is there but reads as no time (empty too) limits the consent to
    // nobody knows when: not understood, never "no limit".
    let written_expires = privacy.get("Expires");
    let expires = written_expires.and_then(parse_time);
    let key = match non_empty(privacy.get("Consent-ID")) {
        Some(id) => Key::Id(id),
        None => Key::Thread(s.thread.to_string()),
    };
    Some(Grant {
        key,
        reading,
        written: written.trim().to_string(),
        // The time written (in the value or the id) is the sender's word; a statement
        // cannot take effect after it reached this desk, or a grant dated ahead would
        // outlast every REVOKE received before that date.
        at: reading.and_then(|r| r.at).unwrap_or(s.time).min(s.received),
        expires,
        unreadable_expires: written_expires
            .filter(|_| expires.is_none())
            .map(|e| e.trim().to_string()),
        scope: non_empty(privacy.get("Scope")),
        jurisdiction: non_empty(privacy.get("Jurisdiction")),
        original: non_empty(privacy.get("Original-Consent-ID")),
        message: s.message.to_string(),
        thread: s.thread.to_string(),
        received: s.received,
    })
}

/// The consent a REVOKE withdraws and from when; `None` when it withdraws something else
/// (keys, permissions).
fn revocation(s: &Statement<'_>) -> Option<(Key, Timestamp)> {
    let block = s
        .meta
        .iter()
        .find(|m| m.namespace == namespaces::REVOCATION);
    if s.intent != Some(&Intent::Revoke) {
        return None;
    }
    let kind = block.and_then(|b| b.get("Type")).map(str::trim);
    if kind.is_some_and(|k| !k.eq_ignore_ascii_case("consent")) {
        return None;
    }
    let key = match non_empty(block.and_then(|b| b.get("Consent-ID"))) {
        Some(id) => Key::Id(id),
        None => Key::Thread(s.thread.to_string()),
    };
    // `immediate` takes effect when the REVOKE reached this desk: the one time known to be no
    // earlier than the withdrawal itself. A value that is no time asks for a withdrawal all the
    // same, so it is read that way too, rather than at a guessed time.
    let at = match non_empty(block.and_then(|b| b.get("Effective"))) {
        // Without `Effective`, its own time: the sender's word, so no later than it arrived.
        None => s.time.min(s.received),
        Some(v) if v.eq_ignore_ascii_case("immediate") => s.received,
        Some(v) => parse_time(&v).unwrap_or(s.received),
    };
    Some((key, at))
}

/// The grants and the verified withdrawals among `statements`, each sorted by when it
/// counts, and the withdrawals not verified (which withdraw nothing).
fn sort_statements<'a>(
    statements: impl IntoIterator<Item = Statement<'a>>,
) -> (Vec<Grant>, Vec<Revoke>, Vec<Unverified>) {
    let mut grants: Vec<Grant> = Vec::new();
    let mut revokes: Vec<Revoke> = Vec::new();
    let mut unverified = Vec::new();
    for s in statements {
        if let Some(g) = grant(&s) {
            grants.push(g);
        }
        if let Some((key, at)) = revocation(&s) {
            if s.verified {
                revokes.push(Revoke {
                    key,
                    at,
                    message: s.message.to_string(),
                    thread: s.thread.to_string(),
                    received: s.received,
                });
            } else {
                unverified.push(Unverified {
                    message: s.message.to_string(),
                    thread: s.thread.to_string(),
                    consent_id: key.consent_id(),
                });
            }
        }
    }
    // The latest statement wins; at equal times, the greater message id (ULIDs sort by time),
    // so the order statements arrive in never matters.
    grants.sort_by(|a, b| (a.at, &a.message).cmp(&(b.at, &b.message)));
    revokes.sort_by(|a, b| (a.at, &a.message).cmp(&(b.at, &b.message)));
    (grants, revokes, unverified)
}

/// Builds the ledger from every statement (any order) at clock `now`.
pub fn ledger<'a>(statements: impl IntoIterator<Item = Statement<'a>>, now: Timestamp) -> Ledger {
    let (grants, revokes, unverified) = sort_statements(statements);
    let mut order: Vec<Key> = Vec::new();
    let mut latest: BTreeMap<Key, (usize, Vec<String>)> = BTreeMap::new();
    for (i, g) in grants.iter().enumerate() {
        let entry = latest.entry(g.key.clone()).or_insert_with(|| {
            order.push(g.key.clone());
            (i, Vec::new())
        });
        entry.0 = i;
        if !entry.1.contains(&g.thread) {
            entry.1.push(g.thread.clone());
        }
    }
    let in_force = |key: &Key| latest.get(key).map(|(i, _)| &grants[*i]);
    let mut records = Vec::with_capacity(order.len());
    // Per record: its statement in force, and the consents whose withdrawal withdraws it, each
    // with the time from which a withdrawal counts.
    let mut chains: Vec<(&Grant, Vec<(Key, Timestamp)>)> = Vec::with_capacity(order.len());
    for key in order {
        let (i, threads) = &latest[&key];
        let g = &grants[*i];
        let chain = withdrawn_with(g, now, &in_force);
        let revoked = chain.iter().find_map(|(k, from)| {
            revokes
                .iter()
                .find(|r| r.withdraws(k, *from, now))
                .map(|r| (r.at, r.message.clone()))
        });
        let state = match g.reading {
            _ if revoked.is_some() => State::Revoked,
            None => State::NotUnderstood,
            Some(r) if r.kind.grants() && g.unreadable_expires.is_some() => State::NotUnderstood,
            Some(r) if !r.kind.grants() => State::Denied,
            Some(_) if g.expires.is_some_and(|e| e <= now) => State::Expired,
            Some(_) => State::Granted,
        };
        records.push(Record {
            consent_id: key.consent_id(),
            state,
            kind: g
                .reading
                .map_or(g.written.clone(), |r| r.kind.as_str().to_string()),
            explicit: explicit(g, &in_force),
            since: g.at,
            expires: g.expires,
            unreadable_expires: g.unreadable_expires.clone(),
            revoked,
            scope: g.scope.clone(),
            jurisdiction: g.jurisdiction.clone(),
            transferred_from: g.original.clone(),
            message: g.message.clone(),
            threads: threads.clone(),
        });
        chains.push((g, chain));
    }
    let untaken = revokes
        .iter()
        .filter(|r| {
            !chains
                .iter()
                .flat_map(|(_, chain)| chain)
                .any(|(k, from)| r.withdraws(k, *from, now))
        })
        .map(|r| Untaken {
            message: r.message.clone(),
            thread: r.thread.clone(),
            consent_id: r.key.consent_id(),
            effective: r.at,
            why: why_untaken(r, now, &chains),
        })
        .collect();
    Ledger {
        records,
        unverified,
        untaken,
    }
}

/// The consents whose withdrawal withdraws `g`'s, each with the time from which a withdrawal
/// counts: its own from its grant, then each consent it was transferred from, from that one's
/// grant (one step per transfer; a cycle of transfers stops where it began).
fn withdrawn_with<'g>(
    g: &Grant,
    now: Timestamp,
    in_force: &impl Fn(&Key) -> Option<&'g Grant>,
) -> Vec<(Key, Timestamp)> {
    let mut chain = vec![(g.key.clone(), g.at)];
    let mut from = g.original.clone();
    while let Some(id) = from.take() {
        let k = Key::Id(id);
        if chain.iter().any(|(c, _)| *c == k) {
            break;
        }
        // A consent withdrawn takes what was transferred from it along, whenever the transfer
        // was stated: from the original's own statement in force (a transfer made after the
        // withdrawal took effect passed on nothing).
        let original = in_force(&k);
        from = original.and_then(|o| o.original.clone());
        chain.push((k, original.map_or(g.at, |o| o.at).min(now)));
    }
    chain
}

/// Whether `g` is explicit consent: `explicit_yes` or `opt-in`; for a transfer, whatever the
/// consent it came from is (a transfer of a consent not stored here is taken at its word:
/// "with approval"; a cycle of transfers is nobody's explicit consent).
fn explicit<'g>(g: &Grant, in_force: &impl Fn(&Key) -> Option<&'g Grant>) -> bool {
    let mut seen = vec![g.key.clone()];
    let mut current = g.reading;
    let mut from = g.original.clone();
    loop {
        match current {
            Some(r) if r.kind == Kind::Transferred => {}
            Some(r) => return r.kind.is_explicit(),
            None => return false,
        }
        let Some(id) = from.take() else { return true };
        let k = Key::Id(id);
        if seen.contains(&k) {
            return false;
        }
        let Some(o) = in_force(&k) else { return true };
        current = o.reading;
        from = o.original.clone();
        seen.push(k);
    }
}

/// Why the verified REVOKE `r` withdraws none of the consents in force (each its statement
/// and the consents whose withdrawal withdraws it).
fn why_untaken(r: &Revoke, now: Timestamp, chains: &[(&Grant, Vec<(Key, Timestamp)>)]) -> Why {
    if r.at > now {
        return Why::NotYet;
    }
    // The consent it names, else one transferred from it.
    let named = chains
        .iter()
        .filter(|(_, chain)| chain.iter().any(|(k, _)| *k == r.key))
        .min_by_key(|(_, chain)| chain.iter().position(|(k, _)| *k == r.key));
    let Some((g, _)) = named else {
        return Why::NoGrant;
    };
    let (message, since) = (g.message.clone(), g.at);
    if r.received < g.received {
        Why::Restated { message, since }
    } else {
        Why::BeforeStatement { message, since }
    }
}

#[cfg(test)]
mod tests;
