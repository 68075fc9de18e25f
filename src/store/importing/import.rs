//! Import: any text in, threads out.
//!
//! Two steps. First the input is stored as received, byte for byte and in pieces, and
//! committed on its own, so nothing a user pasted is lost even if nothing in it parses or the
//! import is killed. Then the stored pieces are read back one at a time (memory stays bounded
//! whatever the input's size) and every envelope is threaded. That second step commits every
//! [`PIECE_TIME`](crate::store::PIECE_TIME) or so and pauses, so that another writer waiting for the
//! database gets it between two pieces instead of timing out behind a long import. A killed
//! import keeps the pieces it committed, each whole (threads, counts and the full-text index
//! agree with the messages), and running it again imports exactly what is missing: duplicates
//! are recognized by message id, and for v1.0 envelopes that had none, by a digest of their
//! canonical text.

use std::io::Read;
use std::sync::mpsc::{self, Receiver, Sender};

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::prepare::{self, Event, IN_FLIGHT, Prepared};
use super::writer::Run;
use crate::protocol::{self, Diagnostic, Options, Span};
use crate::store::{Store, StoreError, now};

/// Size of the pieces an input is stored and read back in.
pub(super) const CHUNK: usize = 8 << 20;

/// Pieces from this size on are compressed on a thread of their own (for a paste of a few
/// lines, starting a thread would cost more than compressing it).
const PACK_APART: usize = 1 << 20;

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
    /// Its message id is stored with other content: kept as a conflicting version of that
    /// message (see its `id-conflict` diagnostic), not threaded.
    Conflict,
    /// Already stored unsigned; this copy is the same message signed, and its text (now
    /// signed) replaced the stored one.
    Signed,
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

/// Envelopes an import must hold for a checkpoint of the write-ahead log to follow it.
const CHECKPOINT_AFTER: usize = 64;

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
        self.import_reader_with(source, reader, opts, progress, false)
    }

    /// [`Store::import_reader`], with fresh ids for invalid ones (see
    /// [`Store::import_kept_with`]).
    pub fn import_reader_with(
        &mut self,
        source: &str,
        reader: &mut dyn Read,
        opts: &Options,
        progress: &mut dyn FnMut(u64),
        fresh_ids: bool,
    ) -> Result<ImportReport, StoreError> {
        let (paste_id, diagnostics) =
            self.write(|store| store.store_paste(source, reader, progress))?;
        let kept = Kept {
            source: source.to_string(),
            paste_id,
            diagnostics,
        };
        self.import_kept_with(&kept, opts, progress, true, fresh_ids)
    }

    /// Stores `text` as received and commits it, without importing anything yet: the paste
    /// preview keeps what the operator pasted even when they cancel.
    pub fn keep_text(&mut self, source: &str, text: &str) -> Result<Kept, StoreError> {
        let (paste_id, diagnostics) =
            self.write(|store| store.store_paste(source, &mut text.as_bytes(), &mut |_| {}))?;
        Ok(Kept {
            source: source.to_string(),
            paste_id,
            diagnostics,
        })
    }

    /// Stores what `reader` yields as received and commits it, without importing anything:
    /// a transport keeps the bytes it was given (a mail, say) before it decodes them and
    /// imports what they hold.
    pub(crate) fn keep_reader(
        &mut self,
        source: &str,
        reader: &mut dyn Read,
    ) -> Result<Kept, StoreError> {
        let (paste_id, diagnostics) =
            self.write(|store| store.store_paste(source, reader, &mut |_| {}))?;
        Ok(Kept {
            source: source.to_string(),
            paste_id,
            diagnostics,
        })
    }

    /// Imports a kept input, committing in pieces (see the module's comment). With `commit`
    /// false nothing is written (one transaction, rolled back): the report then says exactly
    /// what importing would do, which thread each envelope would join included, because it is
    /// the same code.
    pub fn import_kept(
        &mut self,
        kept: &Kept,
        opts: &Options,
        progress: &mut dyn FnMut(u64),
        commit: bool,
    ) -> Result<ImportReport, StoreError> {
        self.import_kept_with(kept, opts, progress, commit, false)
    }

    /// [`Store::import_kept`], and with `fresh_ids` an envelope rejected only because its
    /// `thread`, `message` or `parent` is not a valid id is imported with fresh ids, the
    /// originals kept as aliases.
    pub(crate) fn import_kept_with(
        &mut self,
        kept: &Kept,
        opts: &Options,
        progress: &mut dyn FnMut(u64),
        commit: bool,
        fresh_ids: bool,
    ) -> Result<ImportReport, StoreError> {
        self.write(|store| {
            // No checkpoint on this connection at every piece's commit: a checkpoint copies
            // the write-ahead log into the database and syncs both to disk, which at every
            // 200 ms piece cost as much as the import itself. A second connection copies each
            // piece while the next is written (see `checkpointer`); what it has not copied
            // when the import is done is copied then.
            store.conn.pragma_update(None, "wal_autocheckpoint", 0)?;
            let r = store.thread_kept(kept, opts, progress, commit, fresh_ids);
            store.conn.pragma_update(None, "wal_autocheckpoint", 1000)?;
            // A large import ends by indexing what the indexer has not yet (so that it
            // returns searchable) and by a checkpoint. A small one (a paste, a POST to
            // `serve`) does neither at once: a checkpoint syncs the database to disk, which
            // once per request bounded `serve`, and indexing in a transaction of the index's
            // file made each POST a sixth slower. SQLite checkpoints every 1000 pages by
            // itself; the index catches up at the next search (before it reads, so nothing
            // is missed) or as the store closes.
            let large = r.as_ref().is_ok_and(|r| r.items.len() >= CHECKPOINT_AFTER);
            if commit && large {
                store.catch_up_search();
                // PASSIVE: it copies what no reader still needs and never waits for one.
                let _: (i64, i64, i64) =
                    store
                        .conn
                        .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
                            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                        })?;
            } else if commit {
                store.unindexed.set(true);
            }
            r
        })
    }

    fn thread_kept(
        &mut self,
        kept: &Kept,
        opts: &Options,
        progress: &mut dyn FnMut(u64),
        commit: bool,
        fresh_ids: bool,
    ) -> Result<ImportReport, StoreError> {
        let (source, paste_id) = (kept.source.as_str(), kept.paste_id);
        let mut diagnostics = kept.diagnostics.clone();
        let conn = &self.conn;
        crate::store::begin_immediate(conn, self.busy_timeout, &self.path)?;
        let mut items = Vec::new();
        let done = (|| {
            let mut run = Run::new(
                conn,
                paste_id,
                now(),
                commit.then_some((self.busy_timeout, self.path.as_path())),
            )?;
            run.fresh_ids = fresh_ids;
            let found = envelopes(conn, paste_id, &mut run, opts, progress, &mut diagnostics)?;
            run.finish()?;
            if commit {
                run.end_piece()?;
            }
            items = std::mem::take(&mut run.items);
            Ok::<_, StoreError>(found)
        })();
        let found = match done {
            Ok(found) if commit => {
                conn.execute_batch("COMMIT")?;
                found
            }
            Ok(found) => {
                conn.execute_batch("ROLLBACK")?;
                found
            }
            Err(e) => {
                if !conn.is_autocommit() {
                    let _ = conn.execute_batch("ROLLBACK");
                }
                return Err(e);
            }
        };
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

    /// Stores the input as received (its exact bytes), in whole-line pieces, and commits.
    /// An identical input stored before is reused rather than kept twice. Pieces end at a
    /// line break, so decoding each with U+FFFD for invalid bytes, as the import does, gives
    /// the same text as decoding the whole input.
    fn store_paste(
        &mut self,
        source: &str,
        reader: &mut dyn Read,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(i64, Vec<Diagnostic>), StoreError> {
        let mut paste_id = None;
        let r = self.store_pieces(&mut paste_id, source, reader, progress);
        if let (Err(_), Some(id)) = (&r, paste_id) {
            // What was stored of an input that could not be read to its end goes.
            if let Ok(tx) = self.begin_write() {
                let _ = tx.execute("DELETE FROM pastes WHERE id = ?1", [id]);
                let _ = tx.commit();
            }
        }
        r
    }

    /// Stores the pieces of an input, each in its own transaction (the first one creates the
    /// paste, the last one completes it: an input of one piece is one transaction). The
    /// database is not held while the input is read: standard input may take its time.
    ///
    /// A large piece is compressed on a second thread while the next one is read, digested
    /// and checked, and is stored after that: reading no longer waits for compressing.
    fn store_pieces(
        &mut self,
        paste_id: &mut Option<i64>,
        source: &str,
        reader: &mut dyn Read,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(i64, Vec<Diagnostic>), StoreError> {
        let mut hasher = Sha256::new();
        let mut diagnostics = Vec::new();
        let mut lines_before = 0u32;
        // Grown as the input needs: a paste or a POST of a few hundred bytes must not pay
        // for zeroing a whole piece's buffer (it was most of such an import's time).
        let mut buf: Vec<u8> = Vec::new();
        // Where the next read starts looking for the piece's last line break.
        let mut looked = 0;
        let mut stored = StoredSoFar::default();
        std::thread::scope(|s| {
            let mut packing: Option<Packing<'_>> = None;
            loop {
                let n = (&mut *reader)
                    .take(CHUNK as u64)
                    .read_to_end(&mut buf)
                    .map_err(|error| StoreError::Read {
                        source_name: source.to_string(),
                        error,
                    })?;
                let eof = n < CHUNK;
                // Pieces end at a line break (so no character is split), except the last.
                let cut = if eof {
                    buf.len()
                } else {
                    match memchr::memrchr(b'\n', &buf[looked..]) {
                        Some(i) => looked + i + 1,
                        None => {
                            looked = buf.len();
                            continue;
                        }
                    }
                };
                looked = 0;
                let mut rest = buf.split_off(cut);
                if !eof {
                    // A large input: the next piece's room at once, not grown by doubling.
                    rest.reserve(CHUNK);
                }
                let piece = std::mem::replace(&mut buf, rest);
                hasher.update(&piece);
                if diagnostics.is_empty() {
                    if let Some(mut d) = protocol::decode(&piece).1 {
                        d.line += lines_before;
                        diagnostics.push(d);
                    }
                }
                lines_before += memchr::memchr_iter(b'\n', &piece).count() as u32;
                let current = Packing::start(s, piece);
                if let Some(before) = packing.take() {
                    self.store_piece(paste_id, source, before, &mut stored)?;
                    progress(stored.bytes);
                }
                if !eof {
                    packing = Some(current);
                    continue;
                }
                // The last piece: an identical input stored before is used instead.
                let digest = hex(&hasher.finalize_reset());
                let kept =
                    self.store_last_piece(paste_id, source, current, &mut stored, &digest)?;
                progress(stored.bytes);
                return Ok((kept, std::mem::take(&mut diagnostics)));
            }
        })
    }

    /// Stores a piece other than the last in its own transaction, creating the paste with the
    /// first one.
    fn store_piece(
        &mut self,
        paste_id: &mut Option<i64>,
        source: &str,
        piece: Packing<'_>,
        stored: &mut StoredSoFar,
    ) -> Result<(), StoreError> {
        let tx = self.begin_write()?;
        let id = stored.add(&tx, paste_id, source, piece)?;
        tx.execute(
            "UPDATE pastes SET bytes = ?1 WHERE id = ?2",
            params![stored.bytes as i64, id],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Stores the last piece and completes the paste: an identical input stored before is
    /// kept instead of this one. Returns the id of the paste kept.
    fn store_last_piece(
        &mut self,
        paste_id: &mut Option<i64>,
        source: &str,
        piece: Packing<'_>,
        stored: &mut StoredSoFar,
        digest: &str,
    ) -> Result<i64, StoreError> {
        let tx = self.begin_write()?;
        let id = stored.add(&tx, paste_id, source, piece)?;
        let total = stored.bytes as i64;
        let existing: Option<i64> = tx
            .query_row(
                "SELECT id FROM pastes WHERE digest = ?1 AND bytes = ?2 AND id <> ?3",
                params![digest, total, id],
                |r| r.get(0),
            )
            .optional()?;
        let kept = match existing {
            Some(old) => {
                tx.execute("DELETE FROM pastes WHERE id = ?1", [id])?;
                old
            }
            None => {
                tx.execute(
                    "UPDATE pastes SET bytes = ?1, digest = ?2 WHERE id = ?3",
                    params![total, digest, id],
                )?;
                id
            }
        };
        tx.commit()?;
        Ok(kept)
    }
}

/// A piece of the input being compressed: on a thread of its own when it is large (for a
/// paste of a few lines, starting a thread would cost more than compressing it).
enum Packing<'s> {
    Apart(std::thread::ScopedJoinHandle<'s, (Vec<u8>, bool)>, usize),
    Packed((Vec<u8>, bool), usize),
}

impl<'s> Packing<'s> {
    fn start<'e>(s: &'s std::thread::Scope<'s, 'e>, piece: Vec<u8>) -> Self {
        let len = piece.len();
        if len >= PACK_APART {
            Packing::Apart(s.spawn(move || super::pieces::pack(&piece)), len)
        } else {
            Packing::Packed(super::pieces::pack(&piece), len)
        }
    }

    /// The piece as stored (and whether compressed), and its size as read.
    fn finish(self) -> ((Vec<u8>, bool), usize) {
        match self {
            Packing::Apart(handle, len) => match handle.join() {
                Ok(packed) => (packed, len),
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Packing::Packed(packed, len) => (packed, len),
        }
    }
}

/// What of an input is stored so far.
#[derive(Default)]
struct StoredSoFar {
    /// Pieces stored (the next one's `seq`).
    pieces: i64,
    /// Bytes of the input they hold.
    bytes: u64,
}

impl StoredSoFar {
    /// Stores `piece` (an empty one is nothing to store) in `tx`, creating the paste if this
    /// is its first; returns the paste's id.
    fn add(
        &mut self,
        tx: &rusqlite::Transaction<'_>,
        paste_id: &mut Option<i64>,
        source: &str,
        piece: Packing<'_>,
    ) -> Result<i64, StoreError> {
        let ((packed, zstd), len) = piece.finish();
        let id = match *paste_id {
            Some(id) => id,
            None => {
                tx.execute(
                    "INSERT INTO pastes (source, received_at, bytes, digest)
                     VALUES (?1, ?2, 0, '')",
                    params![source, now()],
                )?;
                *paste_id.insert(tx.last_insert_rowid())
            }
        };
        if len > 0 {
            super::pieces::insert(tx, id, self.pieces, &packed, zstd)?;
            self.pieces += 1;
        }
        self.bytes += len as u64;
        Ok(id)
    }
}

pub(in crate::store) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// Reads the stored pieces back and imports their envelopes: a worker thread extracts and
/// prepares them (see `prepare`) while this one reads the next pieces and writes. Returns how
/// many envelopes were found.
fn envelopes(
    conn: &Connection,
    paste_id: i64,
    run: &mut Run<'_>,
    opts: &Options,
    progress: &mut dyn FnMut(u64),
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<usize, StoreError> {
    std::thread::scope(|s| {
        let (pieces, worker_pieces) = mpsc::channel();
        let (worker_events, events) = prepare::events();
        let (spent, worker_spent) = mpsc::channel();
        let opts = opts.clone();
        let guesser = run.guesser();
        s.spawn(move || prepare::run(worker_pieces, worker_events, worker_spent, opts, guesser));
        // On an error both channel ends are dropped here, which stops the worker.
        let mut writer = Writer {
            run,
            spent,
            progress,
            diagnostics,
            found: 0,
            done: 0,
        };
        writer.feed(conn, paste_id, pieces, events)?;
        Ok(writer.found)
    })
}

/// The writing side of the import pipeline.
struct Writer<'a, 'c> {
    run: &'a mut Run<'c>,
    /// Stored envelopes go back to the worker, which allocated them, to be freed.
    spent: Sender<Vec<Prepared>>,
    progress: &'a mut dyn FnMut(u64),
    diagnostics: &'a mut Vec<Diagnostic>,
    found: usize,
    /// Bytes of the input extracted so far.
    done: u64,
}

impl Writer<'_, '_> {
    /// Hands the stored pieces to the worker, at most [`IN_FLIGHT`] ahead of what it has
    /// extracted, and stores what it sends back until it is done.
    fn feed(
        &mut self,
        conn: &Connection,
        paste_id: i64,
        pieces: Sender<prepare::Piece>,
        events: Receiver<Event>,
    ) -> Result<(), StoreError> {
        let count: i64 = conn.query_row(
            "SELECT count(*) FROM paste_pieces WHERE paste_id = ?1",
            [paste_id],
            |r| r.get(0),
        )?;
        let mut taken = 0;
        'pieces: for seq in 0..count {
            while seq - taken >= IN_FLIGHT as i64 {
                // A closed channel means the worker stopped (it panicked): the scope
                // reports that when it ends.
                let Ok(event) = events.recv() else {
                    break 'pieces;
                };
                taken += self.handle(event)?;
            }
            // Only the stored bytes are read here: the worker decompresses and decodes them,
            // off the thread that writes.
            let (stored, zstd) = super::pieces::read_stored(conn, paste_id, seq)?;
            let piece = prepare::Piece {
                stored,
                zstd,
                paste_id,
                last: seq + 1 == count,
            };
            if pieces.send(piece).is_err() {
                break;
            }
        }
        drop(pieces);
        while let Ok(event) = events.recv() {
            self.handle(event)?;
        }
        Ok(())
    }

    /// Stores a batch of envelopes, or notes a piece taken; returns the pieces taken (0 or 1).
    fn handle(&mut self, event: Event) -> Result<i64, StoreError> {
        match event {
            Event::Envelopes(mut batch) => {
                for prepared in &mut batch {
                    self.found += 1;
                    self.run.envelope(prepared)?;
                    self.run.piece_boundary()?;
                }
                // A worker that is gone has nothing left to free.
                let _ = self.spent.send(batch);
                Ok(0)
            }
            Event::Failed(e) => Err(e),
            Event::Piece { done, diagnostics } => {
                self.diagnostics.extend(diagnostics);
                if done > self.done {
                    self.done = done;
                    (self.progress)(done);
                }
                Ok(1)
            }
        }
    }
}
