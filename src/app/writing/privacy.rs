//! Personal data in the composer: redacting it (`alt-r`: `[EMAIL]`, `[PHONE]`, … and
//! `PII: redacted` in `meta: privacy`), and a confirmation before personal data is copied
//! without explicit consent in force: none stated, implicit only, denied, expired, revoked or
//! not understood. The rules live in [`crate::protocol::pii`] and [`crate::protocol::consent`];
//! this file only asks and acts.

use crate::app::App;
use crate::protocol::consent::Statement;
use crate::protocol::pii::{self, describe_counts};

/// The META text with `PII: <value>` in its `meta: privacy` block: the entry is replaced when
/// there is one, added under the namespace line when the block has none, and a block is
/// appended when there is no privacy block.
pub(crate) fn set_pii(meta: &str, value: &str) -> String {
    let mut lines: Vec<String> = meta.split('\n').map(str::to_string).collect();
    let start = lines
        .iter()
        .position(|l| l.trim().eq_ignore_ascii_case("meta: privacy"));
    let Some(start) = start else {
        let mut out = meta.trim_end().to_string();
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&format!("meta: privacy\nPII: {value}"));
        return out;
    };
    // The block runs to the next blank line or the next `meta:` line.
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.trim().is_empty() || l.trim_start().starts_with("meta:"))
        .map_or(lines.len(), |i| start + 1 + i);
    let entry = (start + 1..end).find(|&i| {
        lines[i]
            .split_once(':')
            .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("PII"))
    });
    match entry {
        Some(i) => lines[i] = format!("PII: {value}"),
        None => lines.insert(start + 1, format!("PII: {value}")),
    }
    lines.join("\n")
}

impl App {
    /// `alt-r` in the composer: replaces the personal data found in the body with
    /// placeholders and declares `PII: redacted`.
    pub(in crate::app) fn redact_body(&mut self) -> anyhow::Result<()> {
        let Some(c) = self.composer.as_mut() else {
            return Ok(());
        };
        let (redacted, counts) = pii::redact(&c.form.body);
        if counts.is_empty() {
            self.info("No personal data found in the body (e-mail, phone, IBAN, card numbers).");
            return Ok(());
        }
        // One step: undo puts back the body and the `PII:` header together.
        let meta = set_pii(&c.form.meta, "redacted");
        c.replace("the redaction", Some(&redacted), Some(&meta));
        self.save_draft(false)?;
        self.info(format!(
            "Redacted {}; meta: privacy says PII: redacted.",
            describe_counts(&counts)
        ));
        Ok(())
    }

    /// Before C-y copies the composed envelope: when its body holds personal data without
    /// explicit consent in force, the first C-y only says so; a second C-y on the same text
    /// copies. The envelope's own `Consent` decides when it states one (once stored it is the
    /// thread's latest statement), else the thread's consent. Returns whether to copy now.
    pub(in crate::app) fn pii_copy_allowed(&mut self) -> anyhow::Result<bool> {
        let Some(c) = self.composer.as_ref() else {
            return Ok(true);
        };
        let (_, counts) = pii::redact(&c.form.body);
        if counts.is_empty() {
            return Ok(true);
        }
        if c.pii_confirmed.as_deref() == Some(c.preview.as_str()) {
            return Ok(true);
        }
        let now = self.now;
        let (env, _) = c.envelope();
        let intent = env.intent();
        // Decided on the ledger as it will read once this envelope is stored, so its own
        // `Consent` counts as the thread's latest statement, and a transfer it states is
        // judged by the consent it came from.
        let own = Statement {
            thread: &c.form.thread,
            message: &c.form.message,
            time: now,
            received: now,
            intent: intent.as_ref(),
            meta: &env.meta,
            verified: false,
        };
        let why = match self
            .store
            .consent_for_thread(&c.form.thread, now, [own])?
            .as_ref()
        {
            Some(r) if r.allows_pii() => return Ok(true),
            Some(r) if r.message == c.form.message => {
                format!("this envelope's own consent {}", r.why_not_pii())
            }
            Some(r) => format!("the thread's consent {}", r.why_not_pii()),
            None => "the thread states no consent".to_string(),
        };
        let preview = c.preview.clone();
        if let Some(c) = self.composer.as_mut() {
            c.pii_confirmed = Some(preview);
        }
        let key = |a: &crate::app::Action| {
            self.keymap
                .key_for(crate::app::keymap::Scope::Composer, a)
                .map(|k| k.to_string())
                .unwrap_or_default()
        };
        self.warn(format!(
            "The body holds {} and {why}: {} again copies it anyway, {} redacts it first.",
            describe_counts(&counts),
            key(&crate::app::Action::SaveAndCopy),
            key(&crate::app::Action::Redact)
        ));
        Ok(false)
    }
}
