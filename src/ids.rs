//! New ids and `session` values: where the clock and the random source are read to make
//! them. Below the store and the app, which make envelopes; outside the protocol, which only
//! checks ids and takes new ones from a [`NewIds`] it is given, so that it reads no clock.

use std::sync::Mutex;

use crate::protocol::NewIds;

/// Monotonic ULIDs: ids made within one millisecond still sort in the order they were made,
/// so messages composed in a burst keep their order in the tree.
pub struct IdGenerator {
    inner: Mutex<ulid::Generator>,
}

impl Default for IdGenerator {
    fn default() -> Self {
        IdGenerator {
            inner: Mutex::new(ulid::Generator::new()),
        }
    }
}

impl IdGenerator {
    /// A new generator.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next ULID, strictly greater than the previous one from this generator.
    pub fn next_id(&self) -> String {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        // Overflow needs 2^80 ids in one millisecond; fall back to a fresh ULID rather than
        // fail, since uniqueness matters more than strict order then.
        match g.generate() {
            Ok(u) => u.to_string(),
            Err(_) => ulid::Ulid::new().to_string(),
        }
    }
}

impl NewIds for IdGenerator {
    fn next_id(&self) -> String {
        IdGenerator::next_id(self)
    }
}

/// A `session` value for now, with a fresh random part (see
/// [`crate::protocol::id::session_value`]).
pub(crate) fn new_session() -> String {
    crate::protocol::id::session_value(jiff::Timestamp::now(), ulid::Ulid::new().random() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::is_id;

    #[test]
    fn generator_is_monotonic() {
        let g = IdGenerator::new();
        let ids: Vec<String> = (0..1000).map(|_| g.next_id()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert!(ids.iter().all(|i| is_id(i)));
    }
}
