//! The trust store: which key each key id (`pkid`) stands for, and each signed message's
//! verdict (verified, unknown key, bad, key changed).
//!
//! Keys are pinned on first sight of a `meta: keys` announcement (trust on first use) or added
//! by the operator. A different key for a pinned id, or a signature failing against a trusted
//! key on intact text, marks the id `changed`: an alarm until the operator trusts a key again.
//! Verdicts are judged on receipt, in the import's transaction, from keys held in memory (one
//! signature check and one row per signed message; nothing for unsigned ones), and judged again
//! for an id's messages whenever its key is added, trusted or removed.

use crate::protocol::namespaces;
use std::collections::HashMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::VerifyingKey;
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::protocol::signature::{verify_parsed, verify_received};
use crate::protocol::trust::{self, KeyState, PinnedKey, SigState, Verdict};
use crate::protocol::{Code, Diagnostic, Options, Parsed};
use crate::store::query::MESSAGE_COLUMNS;
use crate::store::{Store, StoreError, now};

/// How a key came into the trust store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// Added by the operator from a PEM file or text.
    Manual,
    /// Pinned from a `meta: keys` announcement on first sight.
    Announcement,
    /// Added by the operator from a DNS TXT value (`ed25519:pk=…`).
    Dns,
    /// Added from a `did:key` (the id is the key).
    DidKey,
}

impl KeySource {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            KeySource::Manual => "manual",
            KeySource::Announcement => "announcement",
            KeySource::Dns => "dns",
            KeySource::DidKey => "did_key",
        }
    }

    fn parse(s: &str) -> KeySource {
        match s {
            "announcement" => KeySource::Announcement,
            "dns" => KeySource::Dns,
            "did_key" => KeySource::DidKey,
            _ => KeySource::Manual,
        }
    }
}

/// One key as `crosstalk keys list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyRow {
    /// The key id.
    pub pkid: String,
    /// Always `ed25519` for now.
    pub algorithm: String,
    /// The key in the DNS TXT form, `ed25519:pk=<base64>`.
    pub public_key: String,
    /// How it came in.
    pub source: KeySource,
    /// Where it stands.
    pub state: KeyState,
    /// A different key seen since, in the same form, awaiting a decision.
    pub pending_key: Option<String>,
    /// When the id was first seen, RFC 3339.
    pub first_seen: String,
    /// When it was last seen or changed.
    pub last_seen: String,
    /// Signed messages that name this id.
    pub messages: i64,
}

/// A stored message's signature verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SignatureCheck {
    /// Its standing.
    pub state: SigState,
    /// The key id the signature names.
    pub pkid: Option<String>,
    /// Why, and what to do.
    pub detail: String,
}

/// What adding a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// The id was new.
    New,
    /// The id held another key, now replaced.
    Replaced,
    /// The id held this key already (now trusted, whatever it was before).
    Same,
}

fn encode(key: &VerifyingKey) -> String {
    STANDARD.encode(key.as_bytes())
}

fn decode(b64: &str) -> Option<VerifyingKey> {
    let bytes: [u8; 32] = STANDARD.decode(b64).ok()?.try_into().ok()?;
    VerifyingKey::from_bytes(&bytes).ok()
}

/// Whether a diagnostic is one of the trust store's: a changed key, an unreadable key
/// announcement, a revocation without effect.
pub(crate) fn is_trust_alarm(code: Code) -> bool {
    matches!(
        code,
        Code::KeyChanged | Code::KeyAnnouncement | Code::UnverifiedRevocation
    )
}

/// What an announcement did.
enum Announced {
    /// Its key was pinned: the id was new.
    Pinned,
    /// The id already had this key.
    Known,
    /// The id had another key: the warning to add.
    Changed(Diagnostic),
}

/// The keys of the trust store, held in memory for one import.
pub(in crate::store) struct PinnedKeys {
    keys: HashMap<String, PinnedKey>,
}

impl PinnedKeys {
    /// Reads every key (a handful; a damaged row is skipped as if absent).
    pub(crate) fn load(conn: &Connection) -> Result<PinnedKeys, StoreError> {
        let mut stmt =
            conn.prepare_cached("SELECT pkid, public_key, pending_key, state FROM keys")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?;
        let mut keys = HashMap::new();
        for row in rows {
            let (pkid, key, pending, state) = row?;
            if let (Some(key), Some(state)) = (decode(&key), KeyState::parse(&state)) {
                let pending = pending.as_deref().and_then(decode);
                keys.insert(
                    pkid,
                    PinnedKey {
                        key,
                        pending,
                        state,
                    },
                );
            }
        }
        Ok(PinnedKeys { keys })
    }

    /// Takes in one message just stored as `seq`: pins or compares the keys it announces,
    /// judges its signature, and checks that a revocation is signed by a trusted key. Returns
    /// the warnings to add to its diagnostics.
    pub(crate) fn record(
        &mut self,
        conn: &Connection,
        seq: i64,
        parsed: &Parsed,
        received: &str,
        now: &str,
    ) -> Result<Vec<Diagnostic>, StoreError> {
        let env = &parsed.envelope;
        let signed = env
            .sig
            .as_deref()
            .is_some_and(|s| !s.trim().is_empty() && !s.trim().eq_ignore_ascii_case("none"));
        let announces = env.meta.iter().any(|m| m.namespace == namespaces::KEYS);
        let revokes = trust::is_revocation(env);
        if !signed && !announces && !revokes {
            return Ok(Vec::new());
        }
        let line = parsed.span.start_line;
        let mut notes = Vec::new();
        let mut pinned_here = Vec::new();
        for a in trust::announcements(env) {
            match a {
                Err(why) => notes.push(Diagnostic::new(Code::KeyAnnouncement, line, 1, why)),
                Ok(a) => match self.announce(conn, &a, line, now)? {
                    Announced::Pinned => pinned_here.push(a.pkid.clone()),
                    Announced::Known => {}
                    Announced::Changed(note) => notes.push(note),
                },
            }
        }
        let verdict = if signed {
            let pinned = self.pinned_for(parsed);
            let v = trust::judge(
                parsed,
                |k| verify_received(parsed, received, k).map(|_| ()),
                pinned,
                true,
            );
            if let Some(v) = &v {
                if v.flags_key {
                    if let Some(id) = &v.pkid {
                        self.flag(conn, id, now)?;
                        notes.push(Diagnostic::new(
                            Code::KeyChanged,
                            line,
                            1,
                            format!("{} (the key id is now marked changed)", v.detail),
                        ));
                    }
                }
                store_verdict(conn, seq, v)?;
            }
            v
        } else {
            None
        };
        if revokes {
            let by_trusted = verdict.as_ref().is_some_and(|v| {
                v.state == SigState::Verified
                    && v.pkid.as_ref().is_some_and(|id| {
                        !pinned_here.contains(id)
                            && self
                                .keys
                                .get(id)
                                .is_some_and(|k| k.state == KeyState::Trusted)
                    })
            });
            if !by_trusted {
                notes.push(Diagnostic::new(
                    Code::UnverifiedRevocation,
                    line,
                    1,
                    "this revocation is not signed by a key you trust, so it has no effect; \
                     if it is genuine, add the sender's key (`crosstalk keys add`) and ask for \
                     it again signed",
                ));
            }
        }
        Ok(notes)
    }

    /// The pinned key for the signature's key id, if any.
    fn pinned_for(&self, parsed: &Parsed) -> Option<&PinnedKey> {
        let sig = crate::protocol::signature::parse_sig(parsed.envelope.sig.as_deref()?).ok()?;
        let id = crate::protocol::signature::key_id(&sig)?;
        self.keys.get(id)
    }

    /// Pins an announced key on first sight; a different key for a pinned id marks it
    /// changed.
    fn announce(
        &mut self,
        conn: &Connection,
        a: &trust::Announcement,
        line: u32,
        now: &str,
    ) -> Result<Announced, StoreError> {
        match self.keys.get_mut(&a.pkid) {
            None => {
                conn.prepare_cached(
                    "INSERT INTO keys (pkid, public_key, source, state, first_seen, last_seen)
                     VALUES (?1, ?2, 'announcement', 'trusted', ?3, ?3)",
                )?
                .execute(params![a.pkid, encode(&a.key), now])?;
                self.keys.insert(
                    a.pkid.clone(),
                    PinnedKey {
                        key: a.key,
                        pending: None,
                        state: KeyState::Trusted,
                    },
                );
                rejudge(conn, &a.pkid, self.keys.get(&a.pkid))?;
                Ok(Announced::Pinned)
            }
            Some(k) if k.key == a.key => {
                conn.prepare_cached("UPDATE keys SET last_seen = ?2 WHERE pkid = ?1")?
                    .execute(params![a.pkid, now])?;
                Ok(Announced::Known)
            }
            Some(k) => {
                k.pending = Some(a.key);
                if k.state == KeyState::Trusted {
                    k.state = KeyState::Changed;
                }
                conn.prepare_cached(
                    "UPDATE keys SET pending_key = ?2, pending_source = 'announcement',
                        state = ?3, last_seen = ?4 WHERE pkid = ?1",
                )?
                .execute(params![
                    a.pkid,
                    encode(&a.key),
                    k.state.as_str(),
                    now
                ])?;
                rejudge(conn, &a.pkid, self.keys.get(&a.pkid))?;
                let id = crate::sanitize::sanitize_line(&a.pkid);
                Ok(Announced::Changed(Diagnostic::new(
                    Code::KeyChanged,
                    line,
                    1,
                    format!(
                        "this announces a DIFFERENT key for `{id}` than the one pinned: the \
                         sender's key changed or someone else claims the id; the pinned key \
                         stays until you confirm with the sender and run `crosstalk keys trust \
                         {id}`"
                    ),
                )))
            }
        }
    }

    /// Marks a trusted key id changed after a signature failed against it.
    fn flag(&mut self, conn: &Connection, pkid: &str, now: &str) -> Result<(), StoreError> {
        if let Some(k) = self.keys.get_mut(pkid) {
            k.state = KeyState::Changed;
        }
        conn.prepare_cached(
            "UPDATE keys SET state = 'changed', last_seen = ?2 WHERE pkid = ?1 AND state = 'trusted'",
        )?
        .execute(params![pkid, now])?;
        Ok(())
    }
}

fn store_verdict(conn: &Connection, seq: i64, v: &Verdict) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO signatures (seq, pkid, state, detail) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![seq, v.pkid, v.state.as_str(), v.detail])?;
    Ok(())
}

/// Judges the stored messages signed under `pkid` again, with `pinned` as the id's key now.
/// Judges every stored signature again with the keys as they are: after an upgrade changed
/// what a signature must cover (a `response:` reply's signable portion says `response:`), a
/// verdict stored before may no longer hold.
pub(in crate::store) fn rejudge_all(conn: &Connection) -> Result<(), StoreError> {
    let ledger = PinnedKeys::load(conn)?;
    let pkids: Vec<String> = conn
        .prepare("SELECT DISTINCT pkid FROM signatures WHERE pkid IS NOT NULL")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for pkid in pkids {
        rejudge(conn, &pkid, ledger.keys.get(&pkid))?;
    }
    Ok(())
}

fn rejudge(conn: &Connection, pkid: &str, pinned: Option<&PinnedKey>) -> Result<(), StoreError> {
    let seqs: Vec<i64> = conn
        .prepare_cached("SELECT seq FROM signatures WHERE pkid = ?1")?
        .query_map([pkid], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let opts = Options::default();
    for seq in seqs {
        // The exact text that was signed: the message as received.
        let Some(text) = received_text(conn, "seq", seq)? else {
            continue;
        };
        let ex = crate::protocol::extract(&text, &opts);
        let Some(p) = ex.envelopes.first() else {
            continue;
        };
        let check = |k: &VerifyingKey| verify_parsed(p, &text, k).map(|_| ());
        if let Some(v) = trust::judge(p, check, pinned, false) {
            store_verdict(conn, seq, &v)?;
        }
    }
    Ok(())
}

/// The text as received of the message whose `column` (`seq` or `id`) is `key`.
fn received_text(
    conn: &Connection,
    column: &str,
    key: impl rusqlite::ToSql,
) -> Result<Option<String>, StoreError> {
    let sql = format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE {column} = ?1");
    match conn
        .prepare_cached(&sql)?
        .query_row([key], crate::store::query::message_from_row)
        .optional()?
    {
        Some(m) => Ok(Some(m?.raw)),
        None => Ok(None),
    }
}

fn key_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<KeyRow> {
    let key: String = r.get(2)?;
    let pending: Option<String> = r.get(5)?;
    let txt = |b64: &str| format!("ed25519:pk={b64}");
    Ok(KeyRow {
        pkid: r.get(0)?,
        algorithm: r.get(1)?,
        public_key: txt(&key),
        source: KeySource::parse(&r.get::<_, String>(3)?),
        state: KeyState::parse(&r.get::<_, String>(4)?).unwrap_or(KeyState::Changed),
        pending_key: pending.as_deref().map(txt),
        first_seen: r.get(6)?,
        last_seen: r.get(7)?,
        messages: r.get(8)?,
    })
}

const KEY_COLUMNS: &str = "SELECT k.pkid, k.algorithm, k.public_key, k.source, k.state,
        k.pending_key, k.first_seen, k.last_seen,
        (SELECT count(*) FROM signatures s WHERE s.pkid = k.pkid)
     FROM keys k";

impl Store {
    /// Every key in the trust store, by key id.
    pub fn keys(&self) -> Result<Vec<KeyRow>, StoreError> {
        Ok(self
            .conn
            .prepare(&format!("{KEY_COLUMNS} ORDER BY k.pkid"))?
            .query_map([], key_row)?
            .collect::<Result<_, _>>()?)
    }

    /// The key pinned for `pkid`, as signatures are judged against it.
    pub(crate) fn pinned_key(&self, pkid: &str) -> Result<Option<PinnedKey>, StoreError> {
        Ok(PinnedKeys::load(&self.conn)?.keys.remove(pkid))
    }

    /// One key, by key id.
    pub fn key(&self, pkid: &str) -> Result<Option<KeyRow>, StoreError> {
        Ok(self
            .conn
            .prepare(&format!("{KEY_COLUMNS} WHERE k.pkid = ?1"))?
            .query_row([pkid], key_row)
            .optional()?)
    }

    /// Adds (or replaces) the key for `pkid` on the operator's word: it is trusted at once,
    /// and the id's messages are judged again.
    pub fn add_key(
        &mut self,
        pkid: &str,
        key: &VerifyingKey,
        source: KeySource,
    ) -> Result<Added, StoreError> {
        self.write(|store| {
            let tx = store.begin_write()?;
            let old: Option<String> = tx
                .query_row("SELECT public_key FROM keys WHERE pkid = ?1", [pkid], |r| {
                    r.get(0)
                })
                .optional()?;
            let t = now();
            tx.execute(
                "INSERT INTO keys (pkid, public_key, source, state, first_seen, last_seen)
                 VALUES (?1, ?2, ?3, 'trusted', ?4, ?4)
                 ON CONFLICT (pkid) DO UPDATE SET public_key = ?2, source = ?3,
                    state = 'trusted', pending_key = NULL, pending_source = NULL, last_seen = ?4,
                    first_seen = CASE WHEN public_key = ?2 THEN first_seen ELSE ?4 END",
                params![pkid, encode(key), source.as_str(), t],
            )?;
            let pinned = PinnedKey {
                key: *key,
                pending: None,
                state: KeyState::Trusted,
            };
            rejudge(&tx, pkid, Some(&pinned))?;
            tx.commit()?;
            Ok(match old {
                None => Added::New,
                Some(o) if o == encode(key) => Added::Same,
                Some(_) => Added::Replaced,
            })
        })
    }

    /// Judges one stored message's signature (a composed one, signed as it was filed) with
    /// the keys as they are; no key is marked changed by it.
    pub(crate) fn judge_message(&mut self, id: &str) -> Result<(), StoreError> {
        self.write(|store| {
            let tx = store.begin_write()?;
            let seq: Option<i64> = tx
                .query_row("SELECT seq FROM messages WHERE id = ?1", [id], |r| r.get(0))
                .optional()?;
            let text = match seq {
                Some(seq) => received_text(&tx, "seq", seq)?,
                None => None,
            };
            if let (Some(seq), Some(text)) = (seq, text) {
                let ex = crate::protocol::extract(&text, &Options::default());
                if let Some(p) = ex.envelopes.first() {
                    let ledger = PinnedKeys::load(&tx)?;
                    let sig = p
                        .envelope
                        .sig
                        .as_deref()
                        .map(crate::protocol::signature::parse_sig);
                    let pkid = match &sig {
                        Some(Ok(s)) => crate::protocol::signature::key_id(s),
                        _ => None,
                    };
                    let pinned = pkid.and_then(|id| ledger.keys.get(id));
                    let check = |k: &VerifyingKey| verify_parsed(p, &text, k).map(|_| ());
                    if let Some(v) = trust::judge(p, check, pinned, false) {
                        store_verdict(&tx, seq, &v)?;
                    }
                }
            }
            tx.commit()?;
            Ok(())
        })
    }

    /// Trusts the id's key again after a change: the different key seen since (if any)
    /// replaces the pinned one. `false` when no key has this id.
    pub fn trust_key(&mut self, pkid: &str) -> Result<bool, StoreError> {
        self.write(|store| {
            let tx = store.begin_write()?;
            let n = tx.execute(
                // A key that replaces the pinned one is first trusted now: what it signed
                // before (a revocation announcing it, say) was not signed by a trusted key.
                "UPDATE keys SET public_key = coalesce(pending_key, public_key),
                    source = coalesce(pending_source, source), pending_key = NULL,
                    pending_source = NULL, state = 'trusted', last_seen = ?2,
                    first_seen = CASE WHEN pending_key IS NOT NULL AND pending_key != public_key
                        THEN ?2 ELSE first_seen END
                 WHERE pkid = ?1",
                params![pkid, now()],
            )?;
            if n > 0 {
                let ledger = PinnedKeys::load(&tx)?;
                rejudge(&tx, pkid, ledger.keys.get(pkid))?;
            }
            tx.commit()?;
            Ok(n > 0)
        })
    }

    /// Removes the id's key: its messages become "unknown key". `false` when there was none.
    pub fn remove_key(&mut self, pkid: &str) -> Result<bool, StoreError> {
        self.write(|store| {
            let tx = store.begin_write()?;
            let n = tx.execute("DELETE FROM keys WHERE pkid = ?1", [pkid])?;
            if n > 0 {
                rejudge(&tx, pkid, None)?;
            }
            tx.commit()?;
            Ok(n > 0)
        })
    }

    /// The signature verdict of message `id`; `None` when it is not signed (or not stored).
    pub fn signature_check(&self, id: &str) -> Result<Option<SignatureCheck>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT s.state, s.pkid, s.detail FROM signatures s
                 JOIN messages m ON m.seq = s.seq WHERE m.id = ?1",
            )?
            .query_row([id], |r| {
                Ok(SignatureCheck {
                    state: SigState::parse(&r.get::<_, String>(0)?).unwrap_or(SigState::Bad),
                    pkid: r.get(1)?,
                    detail: r.get(2)?,
                })
            })
            .optional()?)
    }
}
