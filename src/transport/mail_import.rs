//! Importing mail: an `.eml` file or an mbox mailbox is kept as received, then decoded and
//! its envelopes imported through the same path as any other input (see [`super::mail`]).

use std::io::Read;

use super::mail::{self, MailKind};
use crate::protocol::Options;
use crate::store::{ImportReport, Store, StoreError};

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
) -> Result<ImportReport, StoreError> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|error| StoreError::Read {
            source_name: name.to_string(),
            error,
        })?;
    store.keep_reader(name, &mut bytes.as_slice())?;
    let mails = mail::read_mails(&bytes, kind);
    let text = {
        let s = &*store;
        let stored = |id: &str| {
            let m = s.message(id).ok().flatten()?;
            Some(m.envelope.meta_block(mail::NAMESPACE).cloned())
        };
        mail::gateway_text(&mails, opts, &stored)
    };
    let decoded = format!("{name} (decoded mail)");
    let mut report =
        store.import_reader_with(&decoded, &mut text.as_bytes(), opts, progress, fresh_ids)?;
    report.source = name.to_string();
    Ok(report)
}
