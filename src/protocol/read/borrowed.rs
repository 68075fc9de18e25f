//! An envelope as the reader finds it: its text borrowed from the input wherever the input
//! holds it as it is (most headers and META entries), owned only where reading changed it
//! (a cleaned line, a body with its indentation removed, an NFC form).
//!
//! The reader and validation work on this form; [`ParsedRef::into_parsed`] makes the owned
//! [`Parsed`] that the rest of the crate keeps. `check` keeps only the diagnostics, so it
//! never pays for the owned copy: some thirty allocations an envelope, which were a tenth of
//! its time.

use std::borrow::Cow;
use std::ops::Range;

use crate::protocol::model::{Banner, Envelope, Header, MetaBlock};
use crate::protocol::{Diagnostic, Intent, Parsed, Positions, Span};

/// [`Banner`], borrowed.
#[derive(Debug, Clone)]
pub(crate) struct BannerRef<'a> {
    pub from: Cow<'a, str>,
    pub to: Cow<'a, str>,
    pub version: Cow<'a, str>,
}

/// [`Header`], borrowed.
#[derive(Debug, Clone)]
pub(crate) struct HeaderRef<'a> {
    pub key: Cow<'a, str>,
    pub value: Cow<'a, str>,
}

/// [`MetaBlock`], borrowed.
#[derive(Debug, Clone)]
pub(crate) struct MetaRef<'a> {
    pub namespace: Cow<'a, str>,
    pub entries: Vec<(Cow<'a, str>, Cow<'a, str>)>,
}

impl MetaRef<'_> {
    /// [`MetaBlock::get`].
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        (self.entries.iter())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }
}

/// [`Envelope`], borrowed.
#[derive(Debug, Clone)]
pub(crate) struct EnvelopeRef<'a> {
    pub banner: BannerRef<'a>,
    pub headers: Vec<HeaderRef<'a>>,
    pub meta: Vec<MetaRef<'a>>,
    pub body: Option<Cow<'a, str>>,
    pub sig: Option<Cow<'a, str>>,
    pub hash: Option<Cow<'a, str>>,
}

/// `part` (a slice of `read`, the text as the reader saw it) borrowed from `original` when
/// `read` is `original` itself, as it is for every line that cleaning left as it was; else
/// copied. A part from elsewhere (a constant) is copied too.
#[inline]
pub(crate) fn part_of<'a>(original: &'a str, read: &str, part: &str) -> Cow<'a, str> {
    let (from, at) = (read.as_ptr() as usize, part.as_ptr() as usize);
    if std::ptr::eq(original, read) && at >= from && at + part.len() <= from + read.len() {
        let off = at - from;
        return Cow::Borrowed(&original[off..off + part.len()]);
    }
    Cow::Owned(part.to_string())
}

impl<'a> EnvelopeRef<'a> {
    /// [`Envelope::header`].
    pub(crate) fn header(&self, key: &str) -> Option<&str> {
        (self.headers.iter())
            .find(|h| h.key.eq_ignore_ascii_case(key))
            .map(|h| h.value.as_ref())
    }

    /// [`Envelope::meta_block`].
    pub(crate) fn meta_block(&self, namespace: &str) -> Option<&MetaRef<'a>> {
        self.meta.iter().find(|m| m.namespace == namespace)
    }

    /// [`Envelope::intent`].
    pub(crate) fn intent(&self) -> Option<Intent> {
        self.header("intent").map(Intent::parse)
    }

    /// The owned envelope.
    pub(crate) fn into_owned(self) -> Envelope {
        Envelope {
            banner: Banner {
                from: self.banner.from.into_owned(),
                to: self.banner.to.into_owned(),
                version: self.banner.version.into_owned(),
            },
            headers: (self.headers.into_iter())
                .map(|h| Header {
                    key: h.key.into_owned(),
                    value: h.value.into_owned(),
                })
                .collect(),
            meta: (self.meta.into_iter())
                .map(|m| MetaBlock {
                    namespace: m.namespace.into_owned(),
                    entries: (m.entries.into_iter())
                        .map(|(k, v)| (k.into_owned(), v.into_owned()))
                        .collect(),
                })
                .collect(),
            body: self.body.map(Cow::into_owned),
            sig: self.sig.map(Cow::into_owned),
            hash: self.hash.map(Cow::into_owned),
        }
    }

    /// An owned envelope in this form (its strings moved, not copied).
    pub(crate) fn owning(env: Envelope) -> EnvelopeRef<'static> {
        EnvelopeRef {
            banner: BannerRef {
                from: Cow::Owned(env.banner.from),
                to: Cow::Owned(env.banner.to),
                version: Cow::Owned(env.banner.version),
            },
            headers: (env.headers.into_iter())
                .map(|h| HeaderRef {
                    key: Cow::Owned(h.key),
                    value: Cow::Owned(h.value),
                })
                .collect(),
            meta: (env.meta.into_iter())
                .map(|m| MetaRef {
                    namespace: Cow::Owned(m.namespace),
                    entries: (m.entries.into_iter())
                        .map(|(k, v)| (Cow::Owned(k), Cow::Owned(v)))
                        .collect(),
                })
                .collect(),
            body: env.body.map(Cow::Owned),
            sig: env.sig.map(Cow::Owned),
            hash: env.hash.map(Cow::Owned),
        }
    }
}

/// [`Parsed`], borrowed: the envelope in [`EnvelopeRef`] form, the rest as in [`Parsed`].
#[derive(Debug, Clone)]
pub(crate) struct ParsedRef<'a> {
    pub envelope: EnvelopeRef<'a>,
    pub span: Span,
    pub byte_range: Range<usize>,
    pub diagnostics: Vec<Diagnostic>,
    pub prefix: String,
    pub collapsed: bool,
    pub reply_form: bool,
    pub terminated: bool,
    pub positions: Positions,
}

impl<'a> ParsedRef<'a> {
    /// The owned [`Parsed`].
    pub(crate) fn into_parsed(self) -> Parsed {
        Parsed {
            envelope: self.envelope.into_owned(),
            span: self.span,
            byte_range: self.byte_range,
            diagnostics: self.diagnostics,
            prefix: self.prefix,
            collapsed: self.collapsed,
            reply_form: self.reply_form,
            terminated: self.terminated,
            positions: self.positions,
        }
    }

    /// An owned [`Parsed`] in this form (its strings moved, not copied).
    pub(crate) fn owning(p: Parsed) -> ParsedRef<'static> {
        ParsedRef {
            envelope: EnvelopeRef::owning(p.envelope),
            span: p.span,
            byte_range: p.byte_range,
            diagnostics: p.diagnostics,
            prefix: p.prefix,
            collapsed: p.collapsed,
            reply_form: p.reply_form,
            terminated: p.terminated,
            positions: p.positions,
        }
    }

    /// [`Parsed::has_errors`].
    pub(crate) fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// [`Parsed::intent`].
    pub(crate) fn intent(&self) -> Option<Intent> {
        let answers = self.envelope.header("parent").is_some();
        self.envelope.intent().or_else(|| {
            (self.reply_form || (answers && self.envelope.body.is_some()))
                .then_some(Intent::Respond)
        })
    }
}
