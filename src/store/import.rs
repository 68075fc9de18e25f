//! Import: any text in, threads out.
//!
//! Two steps. First the input is stored as received, in pieces, and committed on its own, so
//! nothing a user pasted is lost even if nothing in it parses or the import is killed. Then the
//! stored pieces are read back one at a time (memory stays bounded whatever the input's size)
//! and every envelope is threaded, in one transaction per input: a killed import leaves no
//! half of it behind, and running it again completes it (duplicates are recognized by message
//! id, and for v1.0 envelopes that had none, by a digest of their canonical text).

use std::collections::HashMap;
use std::io::Read;

use rusqlite::{OptionalExtension, Transaction, params};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::{Store, StoreError, now};
use crate::protocol::{self, Diagnostic, Extractor, Intent, Options, Parsed, Span};

/// Size of the pieces an input is stored and read back in.
const CHUNK: usize = 8 << 20;

/// What happened to one envelope of an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Stored and threaded.
    Imported,
    /// Already in the database (same message id, or same content for a v1.0 envelope).
    Duplicate,
    /// Not threaded: it has errors (see its diagnostics).
    Rejected,
}

/// One envelope's result.
#[derive(Debug, Clone, Serialize)]
pub struct ImportItem {
    /// Where it was in the input.
    pub span: Span,
    /// Imported, duplicate or rejected.
    pub outcome: Outcome,
    /// Its message id (assigned on receipt for v1.0 envelopes); the existing message's id
    /// for a duplicate; `None` when rejected.
    pub message: Option<String>,
    /// The thread it joined.
    pub thread: Option<String>,
    /// Its diagnostics.
    pub diagnostics: Vec<Diagnostic>,
}

/// Everything an import did.
#[derive(Debug, Clone, Serialize)]
pub struct ImportReport {
    /// The input's name (a path, `<stdin>`, `<paste>`).
    pub source: String,
    /// Where the raw input is kept.
    pub paste_id: i64,
    /// One item per envelope, in input order.
    pub items: Vec<ImportItem>,
    /// Diagnostics outside envelopes (nothing found, stray `[[END]]`, invalid UTF-8).
    pub diagnostics: Vec<Diagnostic>,
}

impl ImportReport {
    /// How many items had `outcome`.
    pub fn count(&self, outcome: Outcome) -> usize {
        self.items.iter().filter(|i| i.outcome == outcome).count()
    }
}

/// An input stored as received and not yet imported (see [`Store::keep_text`]).
#[derive(Debug, Clone)]
pub struct Kept {
    /// The input's name.
    pub source: String,
    /// Where its text is kept.
    pub paste_id: i64,
    /// Diagnostics of the raw text (invalid UTF-8).
    pub diagnostics: Vec<Diagnostic>,
}

/// Per-thread changes gathered during one import, written once at its end.
struct ThreadAcc {
    context: Option<String>,
    participants: Vec<String>,
}

impl Store {
    /// Imports `text` (a paste, a file's contents).
    pub fn import_text(
        &mut self,
        source: &str,
        text: &str,
        opts: &Options,
    ) -> Result<ImportReport, StoreError> {
        self.import_reader(source, &mut text.as_bytes(), opts, &mut |_| {})
    }

    /// Imports everything `reader` yields. `progress` is told the bytes stored so far, then
    /// the bytes imported so far (each phase counts up to the input's size).
    pub fn import_reader(
        &mut self,
        source: &str,
        reader: &mut dyn Read,
        opts: &Options,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ImportReport, StoreError> {
        let (paste_id, diagnostics) = self.store_paste(source, reader, progress)?;
        let kept = Kept {
            source: source.to_string(),
            paste_id,
            diagnostics,
        };
        self.import_kept(&kept, opts, progress, true)
    }

    /// Stores `text` as received and commits it, without importing anything yet: the paste
    /// preview keeps what the operator pasted even when they cancel.
    pub fn keep_text(&mut self, source: &str, text: &str) -> Result<Kept, StoreError> {
        let (paste_id, diagnostics) =
            self.store_paste(source, &mut text.as_bytes(), &mut |_| {})?;
        Ok(Kept {
            source: source.to_string(),
            paste_id,
            diagnostics,
        })
    }

    /// Imports a kept input. With `commit` false nothing is written (the transaction is
    /// rolled back): the report then says exactly what importing would do, which thread each
    /// envelope would join included, because it is the same code.
    pub fn import_kept(
        &mut self,
        kept: &Kept,
        opts: &Options,
        progress: &mut dyn FnMut(u64),
        commit: bool,
    ) -> Result<ImportReport, StoreError> {
        let (source, paste_id) = (kept.source.as_str(), kept.paste_id);
        let mut diagnostics = kept.diagnostics.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let first_seq: i64 =
            tx.query_row("SELECT coalesce(max(seq), 0) FROM messages", [], |r| {
                r.get(0)
            })?;
        let mut run = Run {
            tx: &tx,
            ids: &self.ids,
            paste_id,
            now: now(),
            threads: HashMap::new(),
            items: Vec::new(),
            repeats: HashMap::new(),
        };
        let found = run.envelopes(opts, progress, &mut diagnostics)?;
        run.flush_threads()?;
        let items = std::mem::take(&mut run.items);
        drop(run);
        if !commit {
            tx.rollback()?;
        } else {
            super::index_since(&tx, first_seq)?;
            tx.commit()?;
        }
        if found == 0 {
            diagnostics.push(protocol::no_envelope());
        }
        Ok(ImportReport {
            source: source.to_string(),
            paste_id,
            items,
            diagnostics,
        })
    }

    /// Stores the input as received, in whole-line pieces, and commits. An identical input
    /// stored before is reused rather than kept twice.
    fn store_paste(
        &mut self,
        source: &str,
        reader: &mut dyn Read,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(i64, Vec<Diagnostic>), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO pastes (source, received_at, bytes, digest) VALUES (?1, ?2, 0, '')",
            params![source, now()],
        )?;
        let paste_id = tx.last_insert_rowid();
        let mut hasher = Sha256::new();
        let mut diagnostics = Vec::new();
        let (mut total, mut seq, mut lines_before) = (0u64, 0i64, 0u32);
        let mut buf: Vec<u8> = Vec::with_capacity(CHUNK + 4096);
        let mut block = vec![0u8; CHUNK];
        let mut eof = false;
        while !eof {
            let n = read_full(reader, &mut block).map_err(|error| StoreError::Read {
                source_name: source.to_string(),
                error,
            })?;
            eof = n < CHUNK;
            buf.extend_from_slice(&block[..n]);
            // Pieces end at a line break (so no character is split), except the last.
            let cut = if eof {
                buf.len()
            } else {
                match memchr::memrchr(b'\n', &buf) {
                    Some(i) => i + 1,
                    None => continue,
                }
            };
            if cut == 0 {
                continue;
            }
            let piece: Vec<u8> = buf.drain(..cut).collect();
            hasher.update(&piece);
            total += piece.len() as u64;
            let (text, bad) = protocol::decode(&piece);
            if let (Some(mut d), true) = (bad, diagnostics.is_empty()) {
                d.line += lines_before;
                diagnostics.push(d);
            }
            lines_before += memchr::memchr_iter(b'\n', &piece).count() as u32;
            tx.execute(
                "INSERT INTO paste_chunks (paste_id, seq, text) VALUES (?1, ?2, ?3)",
                params![paste_id, seq, text.as_ref()],
            )?;
            seq += 1;
            progress(total);
        }
        let digest = hex(&hasher.finalize());
        let existing: Option<i64> = tx
            .query_row(
                "SELECT id FROM pastes WHERE digest = ?1 AND bytes = ?2 AND id <> ?3",
                params![digest, total as i64, paste_id],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = existing {
            tx.rollback()?;
            return Ok((id, diagnostics));
        }
        tx.execute(
            "UPDATE pastes SET bytes = ?1, digest = ?2 WHERE id = ?3",
            params![total as i64, digest, paste_id],
        )?;
        tx.commit()?;
        Ok((paste_id, diagnostics))
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(reader: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match reader.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// The state of one import transaction.
struct Run<'t, 'c> {
    tx: &'t Transaction<'c>,
    ids: &'t protocol::IdGenerator,
    paste_id: i64,
    now: String,
    threads: HashMap<String, ThreadAcc>,
    items: Vec<ImportItem>,
    /// How often each content digest has been seen in this input.
    repeats: HashMap<String, u32>,
}

impl Run<'_, '_> {
    /// Reads the stored pieces back and imports their envelopes. Pieces are cut where no
    /// envelope can span the cut (after an `[[END]]` line or before a banner line); text after
    /// the last such place waits for the next piece. Returns how many envelopes were found.
    fn envelopes(
        &mut self,
        opts: &Options,
        progress: &mut dyn FnMut(u64),
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Result<usize, StoreError> {
        let count: i64 = self.tx.query_row(
            "SELECT count(*) FROM paste_chunks WHERE paste_id = ?1",
            [self.paste_id],
            |r| r.get(0),
        )?;
        let mut carry = String::new();
        let mut first_line = 1u32;
        let mut done = 0u64;
        let mut found = 0;
        for seq in 0..count {
            let chunk: String = self.tx.query_row(
                "SELECT text FROM paste_chunks WHERE paste_id = ?1 AND seq = ?2",
                params![self.paste_id, seq],
                |r| r.get(0),
            )?;
            carry.push_str(&chunk);
            drop(chunk);
            let last = seq + 1 == count;
            let cut = if last {
                carry.len()
            } else {
                match protocol::last_safe_cut(&carry) {
                    Some(c) => c,
                    // No safe place yet: wait for more, unless the text has grown past any
                    // envelope's size (then a line break will do).
                    None if carry.len() < 4 * CHUNK => continue,
                    None => carry.rfind('\n').map_or(carry.len(), |i| i + 1),
                }
            };
            let piece = &carry[..cut];
            let mut ex = Extractor::with_first_line(piece, first_line, opts.clone());
            for p in ex.by_ref() {
                found += 1;
                self.envelope(p, piece)?;
            }
            diagnostics.extend(ex.into_diagnostics());
            first_line += memchr::memchr_iter(b'\n', piece.as_bytes()).count() as u32;
            done += cut as u64;
            progress(done);
            carry.drain(..cut);
        }
        Ok(found)
    }

    /// Threads and stores one envelope.
    fn envelope(&mut self, p: Parsed, piece: &str) -> Result<(), StoreError> {
        if p.has_errors() {
            self.items.push(ImportItem {
                span: p.span,
                outcome: Outcome::Rejected,
                message: None,
                thread: None,
                diagnostics: p.diagnostics,
            });
            return Ok(());
        }
        // Envelopes with a message id are the same message when the id is; only those
        // without one (v1.0) are recognized by a digest of their canonical text.
        let (duplicate, digest) = match p.envelope.message() {
            Some(id) => (
                self.existing("SELECT id, thread_id FROM messages WHERE id = ?1", id)?,
                None,
            ),
            None => {
                // The same text twice in one input (an identical reply later in the session)
                // is two messages: the n-th repeat gets its own digest. Importing the same
                // input again, or a longer copy of it, finds each one again.
                let base = hex(&Sha256::digest(protocol::render(&p.envelope).as_bytes()));
                let seen = self.repeats.entry(base.clone()).or_insert(0);
                let digest = if *seen == 0 {
                    base
                } else {
                    hex(&Sha256::digest(format!("{base}#{seen}").as_bytes()))
                };
                *seen += 1;
                let found = self.existing(
                    "SELECT id, thread_id FROM messages WHERE digest = ?1",
                    &digest,
                )?;
                (found, Some(digest))
            }
        };
        if let Some((id, thread)) = duplicate {
            self.items.push(ImportItem {
                span: p.span,
                outcome: Outcome::Duplicate,
                message: Some(id),
                thread: Some(thread),
                diagnostics: p.diagnostics,
            });
            return Ok(());
        }

        let mut env = p.envelope.clone();
        let ids_assigned = env.thread().is_none() || env.message().is_none();
        // v1.0 envelopes (no thread) belong to their session's conversation and answer its
        // latest message; the first of a session starts a thread.
        let latest = match (env.thread(), env.session()) {
            (None, Some(session)) => self.existing(
                "SELECT id, thread_id FROM messages WHERE session = ?1 ORDER BY seq DESC LIMIT 1",
                session,
            )?,
            _ => None,
        };
        let message = env
            .message()
            .map(str::to_string)
            .unwrap_or_else(|| self.ids.next_id());
        // Without a `thread`, a reply joins the thread of the message it names as parent
        // when that is stored, else its session's.
        let parents_thread = match (env.thread(), env.parent()) {
            (None, Some(parent)) => self
                .existing("SELECT id, thread_id FROM messages WHERE id = ?1", parent)?
                .map(|(_, t)| t),
            _ => None,
        };
        let thread = match (env.thread(), parents_thread, &latest) {
            (Some(t), _, _) => t.to_string(),
            (None, Some(t), _) => t,
            (None, None, Some((_, t))) => t.clone(),
            (None, None, None) => message.clone(),
        };
        let parent = env
            .parent()
            .map(str::to_string)
            .or_else(|| latest.map(|(id, _)| id));
        env.set_header("thread", thread.as_str());
        env.set_header("message", message.as_str());
        if let Some(parent) = &parent {
            env.set_header("parent", parent.as_str());
        }
        let intent = p.intent();
        if env.intent_raw().is_none() && intent == Some(Intent::Respond) {
            // A v1.0 `response:` reply: say so in the envelope, as ids are filled on receipt.
            env.set_header("intent", "RESPOND");
        }

        self.touch_thread(&thread, env.context(), [&env.banner.from, &env.banner.to])?;
        let raw = p.received_text(piece);
        let canonical = protocol::render(&env);
        let (headers, meta) = super::envelope_json(&env);
        self.tx
            .prepare_cached(
                "INSERT INTO messages (id, thread_id, parent_id, paste_id, direction, status, sender,
                    recipient, participants, version, user, session, context, intent, intent_raw,
                    body, sig, hash, headers, meta, diagnostics, raw, canonical, digest,
                    ids_assigned, received_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, 'received', 'received', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,
                    ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?24)",
            )?
            .execute(params![
                message,
                thread,
                parent,
                self.paste_id,
                env.banner.from,
                env.banner.to,
                format!("{} {}", env.banner.from, env.banner.to),
                env.banner.version,
                env.user(),
                env.session(),
                env.context(),
                intent.as_ref().map(Intent::as_str),
                p.envelope.intent_raw(),
                env.body,
                env.sig,
                env.hash,
                headers,
                meta,
                serde_json::to_string(&p.diagnostics).unwrap_or_default(),
                Some(raw).filter(|r| *r != canonical),
                canonical,
                digest,
                ids_assigned,
                self.now,
            ])?;
        if let Some(parent) = &parent {
            // The message it answers is answered now.
            self.tx
                .prepare_cached(
                    "UPDATE messages SET status = 'answered', updated_at = ?2
                     WHERE id = ?1 AND status = 'awaiting_reply'",
                )?
                .execute(params![parent, self.now])?;
        }
        // Replies that arrived first, filed under another thread, join this one now, with
        // everything that hangs under them.
        let moving: Vec<(String, String)> = self
            .tx
            .prepare_cached(
                "WITH RECURSIVE sub(id) AS (
                    SELECT id FROM messages WHERE parent_id = ?1 AND thread_id <> ?2
                    UNION
                    SELECT m.id FROM messages m JOIN sub ON m.parent_id = sub.id
                 )
                 SELECT m.id, m.thread_id FROM messages m JOIN sub ON m.id = sub.id
                 WHERE m.thread_id <> ?2",
            )?
            .query_map(params![message, thread], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (id, old) in &moving {
            self.tx
                .prepare_cached("UPDATE messages SET thread_id = ?2 WHERE id = ?1")?
                .execute(params![id, thread])?;
            // The old thread's count is recomputed (and an emptied one removed) at the end.
            self.touch_thread(old, None, [])?;
        }
        self.items.push(ImportItem {
            span: p.span,
            outcome: Outcome::Imported,
            message: Some(message),
            thread: Some(thread),
            diagnostics: p.diagnostics,
        });
        Ok(())
    }

    /// Looks up (message id, thread id) with a one-parameter query.
    fn existing(&self, sql: &str, key: &str) -> Result<Option<(String, String)>, StoreError> {
        Ok(self
            .tx
            .prepare_cached(sql)?
            .query_row([key], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    }

    /// Makes sure the thread exists (messages reference it) and notes its new participants.
    fn touch_thread<'a>(
        &mut self,
        id: &str,
        context: Option<&str>,
        participants: impl IntoIterator<Item = &'a String>,
    ) -> Result<(), StoreError> {
        if !self.threads.contains_key(id) {
            self.tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO threads (id, context, created_at, last_activity)
                     VALUES (?1, ?2, ?3, ?3)",
                )?
                .execute(params![id, context, self.now])?;
            let (ctx, parts): (Option<String>, String) = self.tx.query_row(
                "SELECT context, participants FROM threads WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            let participants = serde_json::from_str(&parts).unwrap_or_default();
            self.threads.insert(
                id.to_string(),
                ThreadAcc {
                    context: ctx,
                    participants,
                },
            );
        }
        if let Some(acc) = self.threads.get_mut(id) {
            if acc.context.is_none() {
                acc.context = context.map(str::to_string);
            }
            for p in participants {
                if !acc.participants.contains(p) {
                    acc.participants.push(p.clone());
                }
            }
        }
        Ok(())
    }

    /// Writes each touched thread's count, participants, context and activity time; threads
    /// left empty (their replies moved to the thread of the message they answer) are removed.
    fn flush_threads(&mut self) -> Result<(), StoreError> {
        for (id, acc) in &self.threads {
            let n: i64 = self.tx.query_row(
                "SELECT count(*) FROM messages WHERE thread_id = ?1",
                [id],
                |r| r.get(0),
            )?;
            if n == 0 {
                self.tx.execute("DELETE FROM threads WHERE id = ?1", [id])?;
                continue;
            }
            self.tx
                .prepare_cached(
                    "UPDATE threads SET message_count = ?2, participants = ?3,
                        context = coalesce(context, ?4), last_activity = ?5 WHERE id = ?1",
                )?
                .execute(params![
                    id,
                    n,
                    serde_json::to_string(&acc.participants).unwrap_or_default(),
                    acc.context,
                    self.now
                ])?;
        }
        Ok(())
    }
}
