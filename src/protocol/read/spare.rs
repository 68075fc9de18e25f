//! The lists and body text of envelopes a caller is done with, kept for the next ones.
//!
//! An envelope read in borrowed form ([`ParsedRef`]) still owns a few things: its lists of
//! headers, META blocks and positions, and its body (indentation removed, so not a slice of
//! the input). `check` drops each envelope once its diagnostics are taken; handing it back
//! ([`crate::protocol::Extractor::recycle`]) lets the next envelope reuse that storage
//! instead of allocating its own: a body longer than the room first reserved for it was
//! also grown once or twice each time.
//!
//! Only storage of ordinary size is kept, so one huge envelope does not leave its storage
//! to every one after it.

use std::borrow::Cow;

use super::borrowed::{HeaderRef, MetaRef, ParsedRef};
use crate::protocol::{Pos, Positions};

/// A META block's entries, borrowed.
type Entries<'a> = Vec<(Cow<'a, str>, Cow<'a, str>)>;

/// Emptied storage from envelopes given back.
#[derive(Default)]
pub(crate) struct Spare<'a> {
    body: String,
    headers: Vec<HeaderRef<'a>>,
    header_pos: Vec<Pos>,
    meta: Vec<MetaRef<'a>>,
    meta_pos: Vec<(Pos, Vec<Pos>)>,
    entries: Vec<Entries<'a>>,
    entry_pos: Vec<Vec<Pos>>,
}

/// The most items a list may hold room for and still be kept.
const KEEP_ITEMS: usize = 64;

/// The largest body text kept, in bytes.
const KEEP_BODY: usize = 64 << 10;

impl<'a> Spare<'a> {
    /// Takes `p` apart, keeping its storage.
    pub(crate) fn recycle(&mut self, p: ParsedRef<'a>) {
        let env = p.envelope;
        if let Some(Cow::Owned(mut body)) = env.body
            && body.capacity() <= KEEP_BODY
            && body.capacity() > self.body.capacity()
        {
            body.clear();
            self.body = body;
        }
        let Positions {
            headers: header_pos,
            meta: mut meta_pos,
            ..
        } = p.positions;
        let mut meta = env.meta;
        for m in meta.drain(..) {
            keep_list(&mut self.entries, m.entries);
        }
        for (_, e) in meta_pos.drain(..) {
            keep_list(&mut self.entry_pos, e);
        }
        keep(&mut self.headers, env.headers);
        keep(&mut self.header_pos, header_pos);
        keep(&mut self.meta, meta);
        keep(&mut self.meta_pos, meta_pos);
    }

    /// An empty string for a body, with room for at least `bytes`.
    pub(crate) fn body(&mut self, bytes: usize) -> String {
        let mut b = std::mem::take(&mut self.body);
        b.reserve(bytes);
        b
    }

    /// An empty list of headers with room for `n`.
    pub(crate) fn headers(&mut self, n: usize) -> Vec<HeaderRef<'a>> {
        with_room(std::mem::take(&mut self.headers), n)
    }

    /// An empty list of header positions with room for `n`.
    pub(crate) fn header_pos(&mut self, n: usize) -> Vec<Pos> {
        with_room(std::mem::take(&mut self.header_pos), n)
    }

    /// An empty list of META blocks.
    pub(crate) fn meta(&mut self) -> Vec<MetaRef<'a>> {
        std::mem::take(&mut self.meta)
    }

    /// An empty list of META block positions.
    pub(crate) fn meta_pos(&mut self) -> Vec<(Pos, Vec<Pos>)> {
        std::mem::take(&mut self.meta_pos)
    }

    /// An empty list of META entries with room for `n`.
    pub(crate) fn entries(&mut self, n: usize) -> Entries<'a> {
        with_room(self.entries.pop().unwrap_or_default(), n)
    }

    /// An empty list of META entry positions with room for `n`.
    pub(crate) fn entry_pos(&mut self, n: usize) -> Vec<Pos> {
        with_room(self.entry_pos.pop().unwrap_or_default(), n)
    }
}

/// `v` (empty) with room for `n` more.
#[inline]
fn with_room<T>(mut v: Vec<T>, n: usize) -> Vec<T> {
    v.reserve(n);
    v
}

/// Keeps `v`, emptied, in `slot` when it has more room than what `slot` holds and is not
/// too large.
fn keep<T>(slot: &mut Vec<T>, mut v: Vec<T>) {
    if v.capacity() > slot.capacity() && v.capacity() <= KEEP_ITEMS {
        v.clear();
        *slot = v;
    }
}

/// Keeps the list `v`, emptied, among `pool`, unless the pool is full or `v` too large.
fn keep_list<T>(pool: &mut Vec<Vec<T>>, mut v: Vec<T>) {
    if pool.len() < KEEP_ITEMS && v.capacity() <= KEEP_ITEMS {
        v.clear();
        pool.push(v);
    }
}
