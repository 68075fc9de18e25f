//! Consent as the envelopes state it: grants in `meta: privacy` (`Consent`, `Scope`,
//! `Expires`, `Jurisdiction`, `Consent-ID`, `Original-Consent-ID`) and withdrawals in
//! `meta: revocation` on a REVOKE. Pure: statements and a clock in, one record per consent out.
//!
//! The rules (docs/PROTOCOL.md, "Consent"):
//! - A consent is named by its `Consent-ID`; a grant without one is the consent of its thread.
//! - `Consent: explicit_yes_<time>` (also `implicit`, `opt-in_<time>`,
//!   `transferred_with_approval`) grants from that time, or from the message's time when none
//!   is written; `explicit_no` denies. The latest statement about a consent wins.
//! - `Expires` past the clock makes a grant expired.
//! - A REVOKE withdraws the consent its `meta: revocation` names (`Consent-ID`, else the
//!   thread's) from its `Effective` time (else the message's) — **only when its signature was
//!   verified**: an unverified REVOKE is listed and changes nothing, as the spec requires.
//! - A HANDOFF's grant with `Original-Consent-ID` was transferred from that consent: revoking
//!   the original revokes what was transferred from it too.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

use super::validate::parse_time;
use super::{Intent, MetaBlock};

/// One envelope, as far as consent is concerned.
#[derive(Debug, Clone)]
pub struct Statement<'a> {
    /// The thread it belongs to.
    pub thread: &'a str,
    /// Its message id.
    pub message: &'a str,
    /// When it was written (its id's time, else when it was stored).
    pub time: Timestamp,
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
}

impl State {
    /// The word shown to the operator.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Granted => "granted",
            State::Denied => "denied",
            State::Expired => "expired",
            State::Revoked => "revoked",
        }
    }

    /// Whether personal data may be sent under it.
    pub fn allows_pii(self) -> bool {
        self == State::Granted
    }
}

/// One consent and what the envelopes said of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Its `Consent-ID`, or `None` for a thread's unnamed consent.
    pub consent_id: Option<String>,
    /// Where it stands at the clock given.
    pub state: State,
    /// The `Consent` value's kind as written (`explicit_yes`, `implicit`, …).
    pub kind: String,
    /// When it was granted (or denied).
    pub since: Timestamp,
    /// When it expires, if it says.
    pub expires: Option<Timestamp>,
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

/// Every consent the statements mention, and the REVOKEs that were not taken.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    /// One per consent, in order of first grant.
    pub records: Vec<Record>,
    /// REVOKEs without a verified signature: flagged, without effect.
    pub unverified: Vec<Unverified>,
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

/// The key a consent is filed under: its id, or its thread's.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Id(String),
    Thread(String),
}

/// A grant or denial read from `meta: privacy`.
struct Grant {
    key: Key,
    kind: String,
    at: Timestamp,
    expires: Option<Timestamp>,
    scope: Option<String>,
    jurisdiction: Option<String>,
    original: Option<String>,
    message: String,
    thread: String,
}

/// Reads `Consent: explicit_yes_2025-10-09T16:00Z` into its kind and time.
pub fn split_consent(value: &str) -> (String, Option<Timestamp>) {
    let v = value.trim();
    // The time starts at the first `_` followed by a digit.
    let cut = v
        .char_indices()
        .find(|&(i, c)| c == '_' && v[i + 1..].starts_with(|d: char| d.is_ascii_digit()));
    match cut {
        Some((i, _)) => (v[..i].to_ascii_lowercase(), parse_time(&v[i + 1..])),
        None => (v.to_ascii_lowercase(), None),
    }
}

fn non_empty(v: Option<&str>) -> Option<String> {
    v.map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

fn grant(s: &Statement<'_>) -> Option<Grant> {
    let privacy = s.meta.iter().find(|m| m.namespace == "privacy")?;
    let (kind, at) = split_consent(privacy.get("Consent")?);
    if kind.is_empty() {
        return None;
    }
    let key = match non_empty(privacy.get("Consent-ID")) {
        Some(id) => Key::Id(id),
        None => Key::Thread(s.thread.to_string()),
    };
    Some(Grant {
        key,
        kind,
        at: at.unwrap_or(s.time),
        expires: privacy.get("Expires").and_then(parse_time),
        scope: non_empty(privacy.get("Scope")),
        jurisdiction: non_empty(privacy.get("Jurisdiction")),
        original: non_empty(privacy.get("Original-Consent-ID")),
        message: s.message.to_string(),
        thread: s.thread.to_string(),
    })
}

/// The consent a REVOKE withdraws and from when; `None` when it withdraws something else
/// (keys, permissions).
fn revocation(s: &Statement<'_>) -> Option<(Key, Timestamp)> {
    let block = s.meta.iter().find(|m| m.namespace == "revocation");
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
    let at = block
        .and_then(|b| b.get("Effective"))
        .and_then(parse_time)
        .unwrap_or(s.time);
    Some((key, at))
}

/// Builds the ledger from every statement (any order) at clock `now`.
pub fn ledger<'a>(statements: impl IntoIterator<Item = Statement<'a>>, now: Timestamp) -> Ledger {
    let mut grants: Vec<Grant> = Vec::new();
    let mut revokes: Vec<(Key, Timestamp, String)> = Vec::new();
    let mut unverified = Vec::new();
    for s in statements {
        if let Some(g) = grant(&s) {
            grants.push(g);
        }
        if let Some((key, at)) = revocation(&s) {
            if s.verified {
                revokes.push((key, at, s.message.to_string()));
            } else {
                unverified.push(Unverified {
                    message: s.message.to_string(),
                    thread: s.thread.to_string(),
                    consent_id: match key {
                        Key::Id(id) => Some(id),
                        Key::Thread(_) => None,
                    },
                });
            }
        }
    }
    // The latest statement wins; at equal times, the greater message id (ULIDs sort by time),
    // so the order statements arrive in never matters.
    grants.sort_by(|a, b| (a.at, &a.message).cmp(&(b.at, &b.message)));
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
    let revoked_at = |key: &Key, since: Timestamp| -> Option<(Timestamp, String)> {
        revokes
            .iter()
            .filter(|(k, at, _)| k == key && *at >= since && *at <= now)
            .min_by(|a, b| (a.1, &a.2).cmp(&(b.1, &b.2)))
            .map(|(_, at, m)| (*at, m.clone()))
    };
    let mut records = Vec::with_capacity(order.len());
    for key in order {
        let (i, threads) = &latest[&key];
        let g = &grants[*i];
        // Withdrawn directly, or through the consent it was transferred from (one step per
        // transfer; a cycle of transfers stops where it began).
        let mut revoked = revoked_at(&key, g.at);
        let mut from = g.original.clone();
        let mut seen = vec![key.clone()];
        while revoked.is_none() {
            let Some(id) = from.take() else { break };
            let k = Key::Id(id);
            if seen.contains(&k) {
                break;
            }
            revoked = revoked_at(&k, g.at.min(now));
            from = latest
                .get(&k)
                .and_then(|(j, _)| grants[*j].original.clone());
            seen.push(k);
        }
        let state = if revoked.is_some() {
            State::Revoked
        } else if g.kind == "explicit_no" {
            State::Denied
        } else if g.expires.is_some_and(|e| e <= now) {
            State::Expired
        } else {
            State::Granted
        };
        records.push(Record {
            consent_id: match &key {
                Key::Id(id) => Some(id.clone()),
                Key::Thread(_) => None,
            },
            state,
            kind: g.kind.clone(),
            since: g.at,
            expires: g.expires,
            revoked,
            scope: g.scope.clone(),
            jurisdiction: g.jurisdiction.clone(),
            transferred_from: g.original.clone(),
            message: g.message.clone(),
            threads: threads.clone(),
        });
    }
    Ledger {
        records,
        unverified,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        parse_time(s).unwrap()
    }

    fn block(ns: &str, entries: &[(&str, &str)]) -> MetaBlock {
        MetaBlock {
            namespace: ns.into(),
            entries: entries
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn st<'a>(
        thread: &'a str,
        message: &'a str,
        time: &str,
        intent: Option<&'a Intent>,
        meta: &'a [MetaBlock],
        verified: bool,
    ) -> Statement<'a> {
        Statement {
            thread,
            message,
            time: t(time),
            intent,
            meta,
            verified,
        }
    }

    #[test]
    fn a_grant_expires_and_the_spec_example_reads_whole() {
        let meta = [block(
            "privacy",
            &[
                ("PII", "redacted"),
                ("Consent", "explicit_yes_2025-10-09T16:00Z"),
                ("Scope", "medical"),
                ("Expires", "2025-10-10T16:00Z"),
                ("Jurisdiction", "HIPAA"),
                ("Consent-ID", "patient-842-consent-2025-10-09"),
            ],
        )];
        let s = [st("T", "M1", "2025-10-09T17:00Z", None, &meta, false)];
        let before = ledger(s.clone(), t("2025-10-10T12:00Z"));
        let r = &before.records[0];
        assert_eq!(r.state, State::Granted);
        assert_eq!(r.since, t("2025-10-09T16:00Z"));
        assert_eq!(r.kind, "explicit_yes");
        assert_eq!(r.scope.as_deref(), Some("medical"));
        assert_eq!(r.jurisdiction.as_deref(), Some("HIPAA"));
        assert_eq!(
            r.consent_id.as_deref(),
            Some("patient-842-consent-2025-10-09")
        );
        assert_eq!(before.for_thread("T"), Some(r));
        let after = ledger(s, t("2025-10-10T16:00Z"));
        assert_eq!(after.records[0].state, State::Expired);
    }

    #[test]
    fn only_a_verified_revoke_withdraws_and_it_follows_a_transfer() {
        let grant = [block(
            "privacy",
            &[("Consent", "explicit_yes"), ("Consent-ID", "c-1")],
        )];
        let handoff = [block(
            "privacy",
            &[
                ("Consent", "transferred_with_approval"),
                ("Consent-ID", "c-2"),
                ("Original-Consent-ID", "c-1"),
            ],
        )];
        let revoke = [block(
            "revocation",
            &[("Type", "consent"), ("Consent-ID", "c-1")],
        )];
        let r = Intent::Revoke;
        let base = |verified| {
            vec![
                st("A", "M1", "2025-10-09T10:00Z", None, &grant, false),
                st("B", "M2", "2025-10-09T11:00Z", None, &handoff, false),
                st("A", "M3", "2025-10-09T12:00Z", Some(&r), &revoke, verified),
            ]
        };
        let now = t("2025-10-09T13:00Z");
        let unverified = ledger(base(false), now);
        assert!(unverified.records.iter().all(|r| r.state == State::Granted));
        assert_eq!(unverified.unverified.len(), 1);
        assert_eq!(unverified.unverified[0].consent_id.as_deref(), Some("c-1"));
        let verified = ledger(base(true), now);
        assert!(verified.unverified.is_empty());
        assert!(verified.records.iter().all(|r| r.state == State::Revoked));
        assert_eq!(
            verified.records[1].revoked,
            Some((t("2025-10-09T12:00Z"), "M3".into()))
        );
        assert_eq!(verified.for_thread("B").unwrap().state, State::Revoked);
    }

    #[test]
    fn the_latest_statement_wins_and_a_denial_is_not_a_grant() {
        let yes = [block(
            "privacy",
            &[("Consent", "explicit_yes_2025-10-09T10:00Z")],
        )];
        let no = [block(
            "privacy",
            &[("Consent", "explicit_no_2025-10-09T11:00Z")],
        )];
        let now = t("2025-10-09T12:00Z");
        let l = ledger(
            [
                st("T", "M2", "2025-10-09T11:00Z", None, &no, false),
                st("T", "M1", "2025-10-09T10:00Z", None, &yes, false),
            ],
            now,
        );
        assert_eq!(l.records.len(), 1);
        assert_eq!(l.records[0].state, State::Denied);
        assert!(!l.records[0].state.allows_pii());
        assert_eq!(l.records[0].message, "M2");
        // A revocation of something other than consent is not read here.
        let keys = [block("revocation", &[("Type", "key"), ("Key-ID", "k")])];
        let r = Intent::Revoke;
        let l = ledger(
            [
                st("T", "M1", "2025-10-09T10:00Z", None, &yes, false),
                st("T", "M3", "2025-10-09T11:30Z", Some(&r), &keys, true),
            ],
            now,
        );
        assert_eq!(l.records[0].state, State::Granted);
        assert!(l.unverified.is_empty());
    }

    #[test]
    fn consent_values_split_into_kind_and_time() {
        assert_eq!(
            split_consent("explicit_yes_2025-10-09T16:00Z"),
            ("explicit_yes".into(), Some(t("2025-10-09T16:00Z")))
        );
        assert_eq!(
            split_consent("opt-in_2025-10-09"),
            ("opt-in".into(), Some(t("2025-10-09")))
        );
        assert_eq!(
            split_consent("transferred_with_approval"),
            ("transferred_with_approval".into(), None)
        );
        assert_eq!(split_consent("explicit_yes_soon").1, None);
    }
}
