//! The envelope model: everything an envelope carries, in the order it was written.
//!
//! The model holds content only. Where things were in the input (lines, columns, the quote
//! prefix a chat window added) lives in [`crate::protocol::Parsed`], so two envelopes compare
//! equal when they say the same thing, wherever they came from.

use serde::Serialize;

/// The known header keys, in canonical order. Anything else is an unknown header: kept, never
/// dropped, rendered after these in the order it was received.
pub(crate) const KNOWN_HEADERS: [&str; 7] = [
    "user", "session", "thread", "parent", "message", "context", "intent",
];

/// Every key with a meaning in an envelope's structure, lower-case: the known headers, then
/// `body`, v1.0's `response`, `sig`, `hash` and `meta`. The block parser dispatches on them
/// and the one-line parser cuts a collapsed envelope at them.
pub(crate) const STRUCTURAL_KEYS: [&str; 12] = [
    "user", "session", "thread", "parent", "message", "context", "intent", "body", "response",
    "sig", "hash", "meta",
];

/// The lower-case spelling of a structural key (without allocating: this runs on every
/// line), or the key as written. `exact` matches case-sensitively, as inside META blocks.
///
/// The key is lower-cased into one machine word and compared with [`STRUCTURAL_KEYS`] as
/// words, instead of as strings one after the other.
#[inline]
pub(crate) fn structural_key(key: &str, exact: bool) -> &str {
    structural_index(key, exact).map_or(key, |i| STRUCTURAL_KEYS[i])
}

/// Where `key` stands in [`STRUCTURAL_KEYS`], matched as [`structural_key`] matches it.
#[inline]
pub(crate) fn structural_index(key: &str, exact: bool) -> Option<usize> {
    let b = key.as_bytes();
    if b.len() > 8 {
        return None;
    }
    let mut w = 0u64;
    for (i, c) in b.iter().enumerate() {
        let c = if exact { *c } else { c.to_ascii_lowercase() };
        w |= u64::from(c) << (8 * i);
    }
    match STRUCTURAL_WORDS.iter().position(|&k| k == w) {
        // A NUL byte adds nothing to the word: the lengths must agree too.
        Some(i) if STRUCTURAL_KEYS[i].len() == b.len() => Some(i),
        _ => None,
    }
}

/// Where `key` stands in [`KNOWN_HEADERS`], in any case: what
/// `KNOWN_HEADERS.iter().position(|k| k.eq_ignore_ascii_case(key))` answers, from one
/// comparison of words (validation asks it of every header).
#[inline]
pub(crate) fn known_header_index(key: &str) -> Option<usize> {
    structural_index(key, false).filter(|&i| i < KNOWN_HEADERS.len())
}

// The known headers open the structural keys, in the same order.
const _: () = {
    let mut k = 0;
    while k < KNOWN_HEADERS.len() {
        let (a, b) = (KNOWN_HEADERS[k].as_bytes(), STRUCTURAL_KEYS[k].as_bytes());
        assert!(a.len() == b.len());
        let mut i = 0;
        while i < a.len() {
            assert!(a[i] == b[i]);
            i += 1;
        }
        k += 1;
    }
};

/// [`STRUCTURAL_KEYS`], each as one little-endian word (none is longer than eight bytes).
const STRUCTURAL_WORDS: [u64; STRUCTURAL_KEYS.len()] = {
    let mut words = [0u64; STRUCTURAL_KEYS.len()];
    let mut k = 0;
    while k < STRUCTURAL_KEYS.len() {
        let b = STRUCTURAL_KEYS[k].as_bytes();
        assert!(b.len() <= 8, "a structural key fits a word");
        let mut i = 0;
        while i < b.len() {
            words[k] |= (b[i] as u64) << (8 * i);
            i += 1;
        }
        k += 1;
    }
    words
};

/// `[[FROM→TO v1]]`: who wrote the envelope, for whom, and which protocol version it claims.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Banner {
    /// A simple name (`CLAUDE`) or an address (`claude://session/abc`).
    pub from: String,
    /// A simple name or an address.
    pub to: String,
    /// As written, e.g. `v1` or `v1.1`.
    pub version: String,
}

/// One `key: value` header line. Keys are kept as written and matched case-insensitively.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Header {
    /// The header's key.
    pub key: String,
    /// The value with surrounding whitespace removed.
    pub value: String,
}

/// A `meta: <namespace>` block: ordered key/value entries, duplicates kept, keys case-sensitive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetaBlock {
    /// The namespace, e.g. `routing`, `privacy`, `custom-acme`.
    pub namespace: String,
    /// Entries in the order written.
    pub entries: Vec<(String, String)>,
}

impl MetaBlock {
    /// The first value of `key` in this block.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A Crosstalk envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Envelope {
    /// The banner line.
    pub banner: Banner,
    /// Every header in the order received, known and unknown.
    pub headers: Vec<Header>,
    /// META blocks in the order received.
    pub meta: Vec<MetaBlock>,
    /// The body text without its indentation and without a trailing newline; `None` when the
    /// envelope has no `body:` (or v1.0 `response:`) at all.
    pub body: Option<String>,
    /// The `sig:` value as written (`none`, `ed25519:pkid=…;sig=…`, or a detached JWS).
    pub sig: Option<String>,
    /// The optional `hash:` integrity value (CRC32 in hex).
    pub hash: Option<String>,
}

/// The first non-blank line of `text`, trimmed (empty when there is none): how lists and
/// titles sum up a body.
pub fn first_line(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

impl Envelope {
    /// The body's first non-blank line, trimmed (see [`first_line`]).
    pub fn first_line(&self) -> &str {
        self.body.as_deref().map(first_line).unwrap_or("")
    }

    /// A new envelope with just a banner; the rest is filled in by the caller.
    pub fn new(from: impl Into<String>, to: impl Into<String>) -> Self {
        Envelope {
            banner: Banner {
                from: from.into(),
                to: to.into(),
                version: "v1".into(),
            },
            headers: Vec::new(),
            meta: Vec::new(),
            body: None,
            sig: None,
            hash: None,
        }
    }

    /// The first value of header `key`, matched case-insensitively.
    pub fn header(&self, key: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|h| h.key.eq_ignore_ascii_case(key))
            .map(|h| h.value.as_str())
    }

    /// Sets header `key`: replaces its first occurrence, or inserts it where canonical order
    /// puts it (after the known headers that precede it), so a filled-in envelope still reads
    /// in the usual order.
    pub fn set_header(&mut self, key: &str, value: impl Into<String>) {
        let value = value.into();
        if let Some(h) = self
            .headers
            .iter_mut()
            .find(|h| h.key.eq_ignore_ascii_case(key))
        {
            h.value = value;
            return;
        }
        let rank = header_rank(key);
        let at = self
            .headers
            .iter()
            .position(|h| header_rank(&h.key) > rank)
            .unwrap_or(self.headers.len());
        self.headers.insert(
            at,
            Header {
                key: key.to_string(),
                value,
            },
        );
    }

    /// The first META block with `namespace`.
    pub fn meta_block(&self, namespace: &str) -> Option<&MetaBlock> {
        self.meta.iter().find(|m| m.namespace == namespace)
    }

    /// The `user` header.
    pub fn user(&self) -> Option<&str> {
        self.header("user")
    }
    /// The `session` header.
    pub fn session(&self) -> Option<&str> {
        self.header("session")
    }
    /// The `thread` header.
    pub fn thread(&self) -> Option<&str> {
        self.header("thread")
    }
    /// The `parent` header.
    pub fn parent(&self) -> Option<&str> {
        self.header("parent")
    }
    /// The `message` header.
    pub fn message(&self) -> Option<&str> {
        self.header("message")
    }
    /// The `thread` header as stored and compared (see [`crate::protocol::id::key`]).
    pub(crate) fn thread_key(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.thread().map(super::id::key)
    }
    /// The `parent` header as stored and compared.
    pub(crate) fn parent_key(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.parent().map(super::id::key)
    }
    /// The `message` header as stored and compared.
    pub(crate) fn message_key(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.message().map(super::id::key)
    }
    /// The `context` header.
    pub fn context(&self) -> Option<&str> {
        self.header("context")
    }
    /// The `intent` header as written.
    pub fn intent_raw(&self) -> Option<&str> {
        self.header("intent")
    }
    /// The intent, normalized through the registry (legacy names mapped).
    pub fn intent(&self) -> Option<crate::protocol::Intent> {
        self.intent_raw().map(crate::protocol::Intent::parse)
    }

    /// Whether the envelope uses anything v1.1 added: threading headers, META blocks, or a
    /// `v1.1` banner. (v1.1 examples still write `v1` in the banner, so the version alone
    /// cannot tell.)
    pub fn is_v11(&self) -> bool {
        self.banner.version == "v1.1"
            || !self.meta.is_empty()
            || ["thread", "parent", "message"]
                .iter()
                .any(|k| self.header(k).is_some())
    }

    /// The headers in canonical order: known keys in [`KNOWN_HEADERS`] order (repeats kept in
    /// their relative order), then unknown headers as received.
    pub fn canonical_headers(&self) -> Vec<&Header> {
        let mut out: Vec<&Header> = self.headers.iter().collect();
        out.sort_by_key(|h| header_rank(&h.key));
        out
    }
}

/// Position of a key in canonical order; unknown keys sort after all known ones, stably.
pub(super) fn header_rank(key: &str) -> usize {
    KNOWN_HEADERS
        .iter()
        .position(|k| k.eq_ignore_ascii_case(key))
        .unwrap_or(KNOWN_HEADERS.len())
}
