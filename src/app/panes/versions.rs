//! Conflicting versions in the inspector: a message whose id was pasted again with other
//! content has its other texts kept (see the store's `conflict` module). The inspector says
//! so above the envelope, and `V` cycles the stored text and its versions, naming what differs.

use crate::app::App;
use crate::app::text::{safe_line, short_time};
use crate::protocol::Envelope;

impl App {
    /// The selected message was (re)read: the notes say how many conflicting versions it has
    /// and the id it was pasted with. A newly selected message shows its stored text; the
    /// same message read again (its thread reloaded after a copy, another process's import)
    /// keeps showing the version that was on screen.
    pub(in crate::app) fn versions_selected(&mut self) {
        let shown = std::mem::take(&mut self.inspector.version_of);
        let kept = std::mem::take(&mut self.inspector.version);
        self.inspector.versions = 0;
        self.inspector.notes.clear();
        let Some(id) = self.current.as_ref().map(|m| m.id.clone()) else {
            return;
        };
        match self.store.version_count(&id) {
            Ok(n) => self.inspector.versions = n,
            Err(e) => self.error(format!("cannot read the message's versions: {e}")),
        }
        self.inspector.notes = self.base_notes(&id);
        if shown.as_deref() == Some(id.as_str()) && kept > 0 && kept <= self.inspector.versions {
            if let Err(e) = self.show_version(&id, kept) {
                self.error(format!("cannot read the message's versions: {e}"));
            }
        }
    }

    /// Notes every text of the message shows: its conflicts, its original id.
    fn base_notes(&self, id: &str) -> Vec<String> {
        let mut notes = Vec::new();
        if self.store.parent_inferred(id).unwrap_or(false) {
            let key = self
                .keymap
                .key_for(
                    crate::app::keymap::Scope::Browse,
                    &crate::app::Action::MoveReply,
                )
                .map(|k| k.to_string())
                .unwrap_or_else(|| "move_reply".into());
            notes.push(format!(
                "≈ placed by the desk under its session's latest message (its envelope names no parent) — {key} moves it"
            ));
        }
        if let Ok(Some(alias)) = self.store.alias_of(id) {
            notes.push(format!(
                "ⓘ originally {} (not a valid id; given a fresh one on import)",
                safe_line(&alias)
            ));
        }
        let n = self.inspector.versions;
        // A version shown says which it is instead (see `next_version`).
        if n > 0 && self.inspector.version == 0 {
            let key = self.version_key();
            let s = if n == 1 { "" } else { "s" };
            notes.push(format!(
                "✗ id conflict: {n} other text{s} pasted under this id, kept as conflicting version{s} — {key} shows them"
            ));
        }
        notes
    }

    /// The key bound to `next_version`, for the notes.
    fn version_key(&self) -> String {
        self.keymap
            .key_for(
                crate::app::keymap::Scope::Browse,
                &crate::app::Action::NextVersion,
            )
            .map(|k| k.to_string())
            .unwrap_or_else(|| "next_version".into())
    }

    /// `V`: the next conflicting version of the selected message; after the last, the stored
    /// text again.
    pub(in crate::app) fn next_version(&mut self) -> anyhow::Result<()> {
        let Some(id) = self.selected_id().map(str::to_string) else {
            return Ok(());
        };
        let n = self.inspector.versions;
        if n == 0 {
            self.info("This message has no conflicting versions.");
            return Ok(());
        }
        let next = (self.inspector.version + 1) % (n + 1);
        if self.show_version(&id, next)? {
            if next > 0 {
                self.info(format!(
                    "Conflicting version {next} of {n} (the stored message is unchanged)."
                ));
            } else {
                self.info("The stored message.");
            }
            self.refresh_inspector();
        }
        Ok(())
    }

    /// After a search found conflicting version `k` of message `id` (now selected): that text
    /// on screen, as `V` would show it.
    pub(in crate::app) fn show_found_version(&mut self, id: &str, k: usize) -> anyhow::Result<()> {
        if self.selected_id() == Some(id) && self.show_version(id, k)? {
            self.info(format!(
                "Found in conflicting version {k} of {} (the stored message is unchanged).",
                self.inspector.versions
            ));
            self.refresh_inspector();
        }
        Ok(())
    }

    /// Shows text `k` of message `id` (0 the stored one, n its n-th conflicting version) with
    /// the notes that say which it is and what differs. Returns whether there was such a text.
    fn show_version(&mut self, id: &str, k: usize) -> anyhow::Result<bool> {
        let n = self.inspector.versions;
        let stored = self.store.message(id)?;
        let shown = match k {
            0 => stored.clone(),
            k => self.store.version_message(id, k)?,
        };
        let Some(shown) = shown else {
            return Ok(false);
        };
        self.inspector.version = k;
        self.inspector.version_of = (k > 0).then(|| id.to_string());
        let mut notes = self.base_notes(id);
        if k > 0 {
            let differs = stored
                .as_ref()
                .map(|s| differences(&s.envelope, &shown.envelope))
                .unwrap_or_default();
            let differs = if differs.is_empty() {
                "the text's layout".to_string()
            } else {
                differs.join(", ")
            };
            notes.push(format!(
                "✗ conflicting version {k} of {n}, pasted {} — differs from the stored message in: {} — {} shows the next",
                short_time(&shown.received_at),
                safe_line(&differs),
                self.version_key()
            ));
        }
        self.inspector.notes = notes;
        self.current = Some(shown);
        self.inspector.built_for = None;
        Ok(true)
    }
}

/// What differs between two envelopes: header names (either side), `meta`, `body`, `sig`.
pub(crate) fn differences(a: &Envelope, b: &Envelope) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if a.banner != b.banner {
        out.push("banner".into());
    }
    let value = |e: &Envelope, k: &str| -> Vec<String> {
        e.headers
            .iter()
            .filter(|h| h.key.eq_ignore_ascii_case(k))
            .map(|h| h.value.clone())
            .collect()
    };
    for h in a.headers.iter().chain(&b.headers) {
        let k = h.key.to_ascii_lowercase();
        if !out.contains(&k) && value(a, &k) != value(b, &k) {
            out.push(k);
        }
    }
    if a.meta != b.meta {
        out.push("meta".into());
    }
    if a.body != b.body {
        out.push("body".into());
    }
    if a.sig != b.sig || a.hash != b.hash {
        out.push("sig".into());
    }
    out
}
