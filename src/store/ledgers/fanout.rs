//! A POLL goes out once per target. It is addressed to several parties at once, and in the
//! copy-and-paste relay each of them is a chat window of its own: the operator carries the
//! POLL to every one. Which windows those are is [`targets`]; the ledger keeps one row per
//! target the POLL was carried to (`message_relays`, schema 15), relayed or composed here and
//! copied. A received POLL leaves the queue's "to relay" once every target has had it; until
//! then it is relayed to some of them ("relayed to 2 of 3 targets").
//!
//! A relay the ledger infers from a reply (see `delivery::LedgerColumns::after_insert`) counts for
//! the target that answered and for no other: one target's vote shows that its window got the
//! POLL, not that the others did. A reply from a party the POLL does not target infers nothing.
//!
//! Every other message is carried once, to its banner's recipient; its relay is its row's own
//! `relayed_at`, as before.

use std::collections::HashSet;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::delivery::{address_key, inferred_relay, meta_blocks, operator_addresses};
use crate::protocol::awaiting::{expectation, same_party};
use crate::protocol::{Intent, MetaBlock};
use crate::store::hop::Waiting;
use crate::store::{Store, StoreError, now};

/// The windows a POLL from `sender` to `recipient` with `meta` is carried to: the targets it
/// awaits (`Targets:` of `meta: routing`, else its recipient; see
/// [`crate::protocol::awaiting::expectation`]), less its sender, whose window wrote it, and
/// the operator's addresses (`operator`, as [`address_key`] writes them), who answer at the
/// desk. A POLL that leaves nobody goes to its recipient. `None` for any other intent: such a
/// message goes to its recipient, once.
pub(crate) fn targets(
    intent: Option<&Intent>,
    sender: &str,
    recipient: &str,
    meta: &[MetaBlock],
    operator: &HashSet<String>,
) -> Option<Vec<String>> {
    if intent != Some(&Intent::Poll) {
        return None;
    }
    let mut targets: Vec<String> = expectation(intent, recipient, meta)?
        .targets
        .into_iter()
        .filter(|t| !same_party(t, sender) && !operator.contains(&address_key(t)))
        .collect();
    if targets.is_empty() {
        targets.push(recipient.trim().to_string());
    }
    Some(targets)
}

/// One window a POLL goes to, and whether it went there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TargetRelay {
    /// The target as the POLL writes it.
    pub target: String,
    /// When and how it was carried there (`OSC 52`, `inferred from X's reply`), once it was.
    pub relayed: Option<(String, String)>,
}

/// How many of a POLL's targets it was carried to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Carried {
    /// Targets that had it.
    pub to: usize,
    /// All its targets.
    pub of: usize,
}

impl Carried {
    /// The count of `targets`.
    pub(crate) fn of_targets(targets: &[TargetRelay]) -> Carried {
        Carried {
            to: targets.iter().filter(|t| t.relayed.is_some()).count(),
            of: targets.len(),
        }
    }

    /// Carried to some of its targets, not to all: what the inspector and the queue point out.
    pub fn partial(self) -> bool {
        self.to > 0 && self.to < self.of
    }
}

/// What recording one copy changed ([`Store::mark_relayed_to`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelayedTo {
    /// The ledger took it: a message waiting to be relayed is relayed now, or a POLL's target
    /// had not had it before.
    pub newly: bool,
    /// For a POLL: how many of its targets it went to, this one counted.
    pub carried: Option<Carried>,
}

/// What [`record`] did.
pub(crate) struct Recorded {
    /// The target had no copy before.
    pub newly: bool,
    /// Targets carried to, this one counted.
    pub carried: Carried,
    /// It was the last target of a received POLL waiting to be relayed: relayed now.
    pub completed: bool,
}

/// The targets of message `seq` (see [`targets`]), `None` when it is no POLL or not stored.
fn poll_targets(conn: &Connection, seq: i64) -> Result<Option<Vec<String>>, StoreError> {
    let row: Option<(Option<String>, String, String, String)> = conn
        .prepare_cached("SELECT intent, sender, recipient, meta FROM messages WHERE seq = ?1")?
        .query_row([seq], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .optional()?;
    let Some((intent, sender, recipient, meta)) = row else {
        return Ok(None);
    };
    let intent = intent.as_deref().map(Intent::parse);
    if intent != Some(Intent::Poll) {
        return Ok(None);
    }
    Ok(targets(
        intent.as_ref(),
        &sender,
        &recipient,
        &meta_blocks(&meta),
        &operator_addresses(conn)?,
    ))
}

/// The targets of message `seq`, each with its relay (`rows`: the database keeps them); `None`
/// when it is no POLL.
pub(crate) fn read(
    conn: &Connection,
    seq: i64,
    rows: bool,
) -> Result<Option<Vec<TargetRelay>>, StoreError> {
    let Some(targets) = poll_targets(conn, seq)? else {
        return Ok(None);
    };
    let recorded: Vec<(String, String, String)> = if rows {
        conn.prepare_cached(
            "SELECT target_key, relayed_at, relay_method FROM message_relays WHERE seq = ?1",
        )?
        .query_map([seq], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    Ok(Some(
        targets
            .into_iter()
            .map(|target| {
                let key = address_key(&target);
                let relayed = (recorded.iter())
                    .find(|(k, _, _)| *k == key)
                    .map(|(_, at, how)| (at.clone(), how.clone()));
                TargetRelay { target, relayed }
            })
            .collect(),
    ))
}

/// Records that POLL `seq` was carried to `target` at `at` by `method` (the first copy to a
/// target is its record); once every target had it, a received POLL for someone else is
/// relayed, with the time and method of the copy that completed it. A party that is none of
/// its targets changes nothing. `None` when `seq` is no POLL.
pub(crate) fn record(
    conn: &Connection,
    seq: i64,
    target: &str,
    at: &str,
    method: &str,
) -> Result<Option<Recorded>, StoreError> {
    let Some(mut targets) = read(conn, seq, true)? else {
        return Ok(None);
    };
    let mut newly = false;
    if let Some(t) = targets.iter_mut().find(|t| same_party(&t.target, target)) {
        newly = conn
            .prepare_cached(
                "INSERT OR IGNORE INTO message_relays
                     (seq, target_key, target, relayed_at, relay_method)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![seq, address_key(&t.target), t.target, at, method])?
            > 0;
        if newly {
            t.relayed = Some((at.to_string(), method.to_string()));
        }
    }
    let carried = Carried::of_targets(&targets);
    let completed = carried.to == carried.of
        && conn
            .prepare_cached(
                "UPDATE messages SET relayed_at = ?2, relay_method = ?3
                 WHERE seq = ?1 AND direction = 'received' AND to_me = 0 AND relayed_at IS NULL",
            )?
            .execute(params![seq, at, method])?
            > 0;
    Ok(Some(Recorded {
        newly,
        carried,
        completed,
    }))
}

/// A reply from `answerer` arrived (at `at`) under message `seq`, received for someone else
/// and not relayed yet: for a POLL, the copy to that target is evidently made, and only that
/// one. `None` when `seq` is no POLL (the reply then shows the whole message was carried);
/// else whether the POLL is relayed now.
pub(crate) fn inferred(
    conn: &Connection,
    seq: i64,
    answerer: &str,
    at: &str,
) -> Result<Option<bool>, StoreError> {
    Ok(record(conn, seq, answerer, at, &inferred_relay(answerer))?.map(|r| r.completed))
}

impl Store {
    /// The seq of message `id`, when it is stored.
    fn seq_of(&self, id: &str) -> Result<Option<i64>, StoreError> {
        Ok(self
            .conn
            .prepare_cached("SELECT seq FROM messages WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?)
    }

    /// The windows message `id` goes to, each with when and how it was carried there: `None`
    /// for a message that is no POLL (it goes to its recipient) or is not stored.
    pub(crate) fn fanout(&self, id: &str) -> Result<Option<Vec<TargetRelay>>, StoreError> {
        match self.seq_of(id)? {
            Some(seq) => read(&self.conn, seq, self.keeps_target_relays()),
            None => Ok(None),
        }
    }

    /// The copies putting message `id` up makes, in order: for a POLL one per target it was not
    /// carried to yet (every target again once all had it: the operator is carrying it anew);
    /// for any other message one, for its recipient. Empty when no such message is stored.
    pub fn waiting_for(&self, id: &str) -> Result<Vec<Waiting>, StoreError> {
        let waiting = |to: &str| Waiting {
            message: id.to_string(),
            to: to.to_string(),
        };
        if let Some(targets) = self.fanout(id)? {
            let left: Vec<Waiting> = (targets.iter())
                .filter(|t| t.relayed.is_none())
                .map(|t| waiting(&t.target))
                .collect();
            if !left.is_empty() {
                return Ok(left);
            }
            return Ok(targets.iter().map(|t| waiting(&t.target)).collect());
        }
        let recipient: Option<String> = self
            .conn
            .prepare_cached("SELECT recipient FROM messages WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?;
        Ok(recipient.iter().map(|to| waiting(to)).collect())
    }

    /// Records that message `id` was put up for `to` by `method`: a POLL for that one of its
    /// targets (relayed once every target had it; a composed one's copies are recorded too,
    /// as what each window had), any other message as [`Store::mark_relayed`] records it.
    pub fn mark_relayed_to(
        &mut self,
        id: &str,
        to: &str,
        method: &str,
    ) -> Result<RelayedTo, StoreError> {
        let seq = match self.seq_of(id)? {
            Some(seq) if self.fanout(id)?.is_some() => seq,
            _ => {
                return Ok(RelayedTo {
                    newly: self.mark_relayed(id, method)?,
                    carried: None,
                });
            }
        };
        self.write(|store| {
            let tx = store.begin_write()?;
            let recorded = record(&tx, seq, to, &now(), method)?;
            tx.commit()?;
            Ok(RelayedTo {
                newly: recorded.as_ref().is_some_and(|r| r.newly),
                carried: recorded.map(|r| r.carried),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routing(targets: &str) -> Vec<MetaBlock> {
        vec![MetaBlock {
            namespace: "routing".into(),
            entries: vec![("Targets".into(), targets.into())],
        }]
    }

    #[test]
    fn a_poll_goes_to_its_targets_but_its_sender_and_the_operator() {
        let poll = Some(&Intent::Poll);
        let none = HashSet::new();
        let meta = routing(r#"["claude://s/a", "chatgpt://t/x", "gemini://g"]"#);
        assert_eq!(
            targets(poll, "human://op", "POLL", &meta, &none).unwrap(),
            ["claude://s/a", "chatgpt://t/x", "gemini://g"]
        );
        // Its sender wrote it; the operator answers at the desk.
        let operator: HashSet<String> = ["gemini://g".to_string()].into();
        assert_eq!(
            targets(poll, "CLAUDE://s/a", "POLL", &meta, &operator).unwrap(),
            ["chatgpt://t/x"]
        );
        // Without `Targets:`, its recipient; with nobody left, its recipient too.
        assert_eq!(targets(poll, "a", "B", &[], &none).unwrap(), ["B"]);
        let only_me = routing("[human://op]");
        let me: HashSet<String> = ["human://op".to_string()].into();
        assert_eq!(targets(poll, "a", "POLL", &only_me, &me).unwrap(), ["POLL"]);
        // Any other intent goes to its recipient, once.
        assert_eq!(
            targets(Some(&Intent::Request), "a", "B", &meta, &none),
            None
        );
        assert_eq!(targets(None, "a", "B", &meta, &none), None);
    }

    #[test]
    fn partial_is_some_but_not_all() {
        let c = |to, of| Carried { to, of };
        assert!(c(1, 3).partial() && c(2, 3).partial());
        assert!(!c(0, 3).partial() && !c(3, 3).partial() && !c(1, 1).partial());
    }
}
