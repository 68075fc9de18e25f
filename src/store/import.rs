//! Import: any text in, threads out.
//!
//! Two steps. First the input is stored as received, in pieces, and committed on its own, so
//! nothing a user pasted is lost even if nothing in it parses or the import is killed. Then the
//! stored pieces are read back one at a time (memory stays bounded whatever the input's size)
//! and every envelope is threaded, in one transaction per input: a killed import leaves no
//! half of it behind, and running it again completes it (duplicates are recognized by message
//! id, and for v1.0 envelopes that had none, by a digest of their canonical text).

use std::io::Read;
use std::sync::mpsc::{self, Receiver, Sender};

use rusqlite::{OptionalExtension, Transaction, params};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::prepare::{self, Event, IN_FLIGHT, Prepared};
use super::writer::Run;
use super::{Store, StoreError, now};
use crate::protocol::{self, Diagnostic, Options, Span};

/// Size of the pieces an input is stored and read back in.
pub(super) const CHUNK: usize = 8 << 20;

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
        let mut run = Run::new(&tx, &self.ids, paste_id, now(), first_seq > 0)?;
        let found = envelopes(&tx, paste_id, &mut run, opts, progress, &mut diagnostics)?;
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

pub(super) fn hex(bytes: &[u8]) -> String {
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
    tx: &Transaction<'_>,
    paste_id: i64,
    run: &mut Run<'_, '_>,
    opts: &Options,
    progress: &mut dyn FnMut(u64),
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<usize, StoreError> {
    std::thread::scope(|s| {
        let (pieces, worker_pieces) = mpsc::channel();
        let (worker_events, events) = prepare::events();
        let (spent, worker_spent) = mpsc::channel();
        let opts = opts.clone();
        s.spawn(move || prepare::run(worker_pieces, worker_events, worker_spent, opts));
        // On an error both channel ends are dropped here, which stops the worker.
        let mut writer = Writer {
            run,
            spent,
            progress,
            diagnostics,
            found: 0,
            done: 0,
        };
        writer.feed(tx, paste_id, pieces, events)?;
        Ok(writer.found)
    })
}

/// The writing side of the import pipeline.
struct Writer<'a, 't, 'c> {
    run: &'a mut Run<'t, 'c>,
    /// Stored envelopes go back to the worker, which allocated them, to be freed.
    spent: Sender<Vec<Prepared>>,
    progress: &'a mut dyn FnMut(u64),
    diagnostics: &'a mut Vec<Diagnostic>,
    found: usize,
    /// Bytes of the input extracted so far.
    done: u64,
}

impl Writer<'_, '_, '_> {
    /// Hands the stored pieces to the worker, at most [`IN_FLIGHT`] ahead of what it has
    /// extracted, and stores what it sends back until it is done.
    fn feed(
        &mut self,
        tx: &Transaction<'_>,
        paste_id: i64,
        pieces: Sender<(String, bool)>,
        events: Receiver<Event>,
    ) -> Result<(), StoreError> {
        let count: i64 = tx.query_row(
            "SELECT count(*) FROM paste_chunks WHERE paste_id = ?1",
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
            let chunk: String = tx.query_row(
                "SELECT text FROM paste_chunks WHERE paste_id = ?1 AND seq = ?2",
                params![paste_id, seq],
                |r| r.get(0),
            )?;
            if pieces.send((chunk, seq + 1 == count)).is_err() {
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
                }
                // A worker that is gone has nothing left to free.
                let _ = self.spent.send(batch);
                Ok(0)
            }
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
