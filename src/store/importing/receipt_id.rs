//! Ids made on receipt (v1.0 envelopes, fresh ids for invalid ones) are derived from the paste
//! and the envelope's place in it, not drawn at random: the paste preview's dry run then
//! shows exactly the ids the import will store, and importing the same paste again makes the
//! same ids (found as the duplicates they are, never as new messages).
//!
//! A ULID: its time is when the paste was received; its 80 random bits are 48 bits of a hash
//! of the paste and the id's purpose, then the envelope's index in the paste, so the ids of one
//! paste sort in input order.

use rusqlite::{Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use crate::store::StoreError;

/// The ids one paste's envelopes get on receipt.
#[derive(Clone)]
pub(in crate::store) struct ReceiptIds {
    ms: u64,
    seed: String,
}

impl ReceiptIds {
    /// For paste `paste_id`, from its time and digest.
    pub(crate) fn for_paste(conn: &Connection, paste_id: i64) -> Result<Self, StoreError> {
        let row: Option<(String, String)> = conn
            .prepare_cached("SELECT received_at, digest FROM pastes WHERE id = ?1")?
            .query_row([paste_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let (time, digest) = row.unwrap_or_default();
        let ms = time
            .parse::<jiff::Timestamp>()
            .unwrap_or_else(|_| jiff::Timestamp::now())
            .as_millisecond()
            .max(0) as u64;
        Ok(ReceiptIds {
            ms,
            seed: format!("{paste_id}:{digest}:{time}"),
        })
    }

    /// Ids made as for a paste of time `ms` and seed `seed` (the tests' own).
    #[cfg(test)]
    pub(crate) fn fixed(ms: u64, seed: &str) -> Self {
        ReceiptIds {
            ms,
            seed: seed.to_string(),
        }
    }

    /// The id for `purpose` (`message`, `thread`, …) of the envelope at `index` in the paste.
    pub(crate) fn id(&self, index: usize, purpose: &str) -> String {
        self.id_after(index, purpose, None)
    }

    /// [`ReceiptIds::id`], its time one millisecond after `after` when that is later than
    /// the paste's: a paste imported again is the one first stored, with that time, and an
    /// envelope that is a new message this time (a reply placed under a newer message) must
    /// not seem older than what it answers.
    pub(crate) fn id_after(&self, index: usize, purpose: &str, after: Option<u64>) -> String {
        let hash = Sha256::digest(format!("{}:{purpose}", self.seed).as_bytes());
        let mut high = [0u8; 8];
        high[2..].copy_from_slice(&hash[..6]);
        let random = ((u64::from_be_bytes(high) as u128) << 32) | (index as u128 & 0xffff_ffff);
        let ms = after.map_or(self.ms, |a| self.ms.max(a.saturating_add(1)));
        ulid::Ulid::from_parts(ms, random).to_string()
    }
}
