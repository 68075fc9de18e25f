//! Personal data on its way out of the desk: a received envelope whose body holds personal
//! data (e-mail addresses, phone numbers, IBANs, card numbers: see [`crate::protocol::pii`])
//! goes on only under explicit consent in force for its thread, as the spec requires for
//! PII; a REVOKE, a denial or an expiry stops it. The composer asks the same of what the
//! operator writes (see `app::privacy`). The two-action hop leaves such an envelope on the
//! clipboard as it was and says why; `y` copies it on the operator's second press.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use jiff::Timestamp;

use crate::protocol::consent::Record;
use crate::protocol::pii::{describe_counts, redact};
use crate::store::{Store, StoreError, StoredMessage};

impl Store {
    /// Why relaying `m` now would carry personal data without explicit consent in force for
    /// its thread ("its body holds 1 e-mail address and the thread's consent is revoked"), or
    /// `None` when it may go: no personal data, consent that allows it, or a message the
    /// operator composed (the composer asked when it was copied first).
    pub fn pii_held(
        &self,
        m: &StoredMessage,
        now: Timestamp,
    ) -> Result<Option<String>, StoreError> {
        Ok(self
            .pii_held_all(std::slice::from_ref(m), now)?
            .pop()
            .map(|(_, why)| why))
    }

    /// [`Store::pii_held`] for each of `messages` (a thread being copied): the ids and reasons
    /// of those held back, in order. Each thread's consent is read once, and only when a
    /// body holds personal data.
    pub(crate) fn pii_held_all(
        &self,
        messages: &[StoredMessage],
        now: Timestamp,
    ) -> Result<Vec<(String, String)>, StoreError> {
        // The consent in force for each thread asked about, read once.
        let mut consents: HashMap<&str, Option<Record>> = HashMap::new();
        let mut held = Vec::new();
        for m in messages {
            if m.direction != "received" {
                continue;
            }
            let Some(body) = m.envelope.body.as_deref() else {
                continue;
            };
            let (_, counts) = redact(body);
            if counts.is_empty() {
                continue;
            }
            let consent = match consents.entry(&m.thread) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => e.insert(self.consent_for_thread(&m.thread, now, [])?),
            };
            let why = match consent {
                Some(r) if r.allows_pii() => continue,
                Some(r) => format!("the thread's consent {}", r.why_not_pii()),
                None => "the thread states no consent".to_string(),
            };
            held.push((
                m.id.clone(),
                format!("its body holds {} and {why}", describe_counts(&counts)),
            ));
        }
        Ok(held)
    }
}
