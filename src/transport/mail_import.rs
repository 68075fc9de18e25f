//! Reading an input for its envelopes, and importing it: an `.eml` file or an mbox mailbox is
//! decoded and its envelopes read from the text its messages hold (see [`super::mail`]);
//! anything else is read as it is. `import`, `parse`, `fmt` and `check` all decide by
//! [`sniff`](super::mail_sniff::sniff), so they agree on what an input is.

use std::io::Read;
use std::path::Path;

use serde::Serialize;

use super::mail::{self, MailKind};
use super::mail_sniff::HEAD;
use crate::protocol::{MetaBlock, Options};
use crate::store::{ImportReport, Store, StoreError};

/// An input read as mail.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// What kind of mail it is.
    pub kind: MailKind,
    /// How many messages it held.
    pub messages: usize,
    /// The envelopes its messages hold, one after another (see [`mail::gateway_text`]).
    pub text: String,
    /// A warning for each thing in its messages not read as their senders' clients showed
    /// it: text that is not the UTF-8 it says it is (see `mail_utf8`), an HTML part whose
    /// envelope has no line structure, messages forwarded too deep (see `mail_parts::Note`).
    pub diagnostics: Vec<crate::protocol::Diagnostic>,
}

/// What a report says of an input read as mail, so that no one mistakes the decoded text for
/// the input.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ReadAsMail {
    /// `eml` or `mbox`.
    pub format: &'static str,
    /// How many messages it held.
    pub messages: usize,
    /// The name the decoded text is known by: line numbers are lines of that text.
    pub decoded_name: String,
}

impl Decoded {
    /// The report's note for the input `name`.
    pub fn note(&self, name: &str) -> ReadAsMail {
        ReadAsMail {
            format: match self.kind {
                MailKind::Eml => "eml",
                MailKind::Mbox => "mbox",
            },
            messages: self.messages,
            decoded_name: decoded_name(name),
        }
    }
}

impl ReadAsMail {
    /// One line for people: what the input was read as, and whose line numbers follow.
    pub(crate) fn describe(&self, name: &str) -> String {
        let what = match (self.format, self.messages) {
            ("eml", _) => "an e-mail message".to_string(),
            (_, 1) => "an mbox mailbox of 1 message".to_string(),
            (_, n) => format!("an mbox mailbox of {n} messages"),
        };
        format!(
            "{name}: read as mail ({what}); line numbers are those of the decoded text, `{}`",
            self.decoded_name
        )
    }
}

/// The name the decoded text of input `name` is stored and reported under.
pub(crate) fn decoded_name(name: &str) -> String {
    format!("{name} (decoded mail)")
}

/// [`decode`], asking `store` (when there is one) which envelopes it holds and with which
/// `meta: email` block.
pub(crate) fn decode_against(
    bytes: &[u8],
    kind: MailKind,
    opts: &Options,
    store: Option<&Store>,
) -> Decoded {
    let stored = |id: &str| {
        let m = store?.message(id).ok().flatten()?;
        Some(
            m.envelope
                .meta_block(crate::protocol::namespaces::EMAIL)
                .cloned(),
        )
    };
    decode(bytes, kind, opts, &stored)
}

/// Decodes `bytes` as `kind` of mail. `stored` says, for a message id, whether it is stored
/// and with which `meta: email` block (see [`mail::gateway_text`]); without a database, it
/// answers `None`.
pub fn decode(
    bytes: &[u8],
    kind: MailKind,
    opts: &Options,
    stored: &dyn Fn(&str) -> Option<Option<MetaBlock>>,
) -> Decoded {
    let mails = mail::read_mails(bytes, kind);
    let diagnostics = (mails.iter().enumerate())
        .flat_map(|(i, m)| m.each(i + 1))
        .flat_map(|(name, m)| m.notes.iter().map(move |n| n.diagnostic(&name)))
        .collect();
    Decoded {
        kind,
        messages: mails.len(),
        text: mail::gateway_text(&mails, opts, stored),
        diagnostics,
    }
}

/// Imports one input as `crosstalk import` reads it: mail (by `path`'s extension, else by its
/// first bytes) is decoded first ([`import_mail`]), anything else is imported as text. The
/// note is there when the input was read as mail.
pub fn import_input(
    store: &mut Store,
    name: &str,
    path: Option<&Path>,
    reader: &mut dyn Read,
    opts: &Options,
    progress: &mut dyn FnMut(u64),
    fresh_ids: bool,
) -> Result<(ImportReport, Option<ReadAsMail>), StoreError> {
    // The whole head, however the reader hands it out (a pipe may give a few bytes at a time).
    let mut head = Vec::new();
    (&mut *reader)
        .take(HEAD as u64)
        .read_to_end(&mut head)
        .map_err(|error| StoreError::Read {
            source_name: name.to_string(),
            error,
        })?;
    let kind = mail::sniff(path, &head);
    let mut whole = head.as_slice().chain(reader);
    match kind {
        Some(kind) => import_mail(store, name, &mut whole, kind, opts, progress, fresh_ids)
            .map(|(report, decoded)| (report, Some(decoded.note(name)))),
        None => store
            .import_reader_with(name, &mut whole, opts, progress, fresh_ids)
            .map(|report| (report, None)),
    }
}

/// Imports the mail `reader` holds (its first bytes already sniffed as `kind`). The raw
/// mail is stored first, byte for byte, under `name`; the decoded envelopes are stored and
/// imported as `name (decoded mail)`, so line numbers in the report are lines of that text.
pub fn import_mail(
    store: &mut Store,
    name: &str,
    reader: &mut dyn Read,
    kind: MailKind,
    opts: &Options,
    progress: &mut dyn FnMut(u64),
    fresh_ids: bool,
) -> Result<(ImportReport, Decoded), StoreError> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|error| StoreError::Read {
            source_name: name.to_string(),
            error,
        })?;
    store.keep_reader(name, &mut bytes.as_slice())?;
    let decoded = decode_against(&bytes, kind, opts, Some(store));
    let mut report = store.import_reader_with(
        &decoded_name(name),
        &mut decoded.text.as_bytes(),
        opts,
        progress,
        fresh_ids,
    )?;
    report.source = name.to_string();
    report
        .diagnostics
        .splice(0..0, decoded.diagnostics.iter().cloned());
    Ok((report, decoded))
}
