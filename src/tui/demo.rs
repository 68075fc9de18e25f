//! `crosstalk --demo`: the demo threads of `assets/demo/`, built into the binary and
//! imported in name order into a throwaway database.

use crate::protocol::Options;
use crate::store::{Outcome, Store};

/// The demo files, in import order.
pub const FILES: &[(&str, &str)] = &[
    (
        "01-rate-limiter-review.crosstalk",
        include_str!("../../assets/demo/01-rate-limiter-review.crosstalk"),
    ),
    (
        "02-flaky-test-v1.0.crosstalk",
        include_str!("../../assets/demo/02-flaky-test-v1.0.crosstalk"),
    ),
    (
        "03-sync-strategy-poll.crosstalk",
        include_str!("../../assets/demo/03-sync-strategy-poll.crosstalk"),
    ),
    (
        "04-too-large-error.crosstalk",
        include_str!("../../assets/demo/04-too-large-error.crosstalk"),
    ),
    (
        "05-signed-consent-revocation.crosstalk",
        include_str!("../../assets/demo/05-signed-consent-revocation.crosstalk"),
    ),
    (
        "06-kyoto-trip-awaiting-reply.crosstalk",
        include_str!("../../assets/demo/06-kyoto-trip-awaiting-reply.crosstalk"),
    ),
];

/// Imports every demo file into `store`; a demo envelope that does not import is a bug.
pub fn seed(store: &mut Store) -> anyhow::Result<()> {
    for (name, text) in FILES {
        let report = store.import_text(name, text, &Options::default())?;
        if report.count(Outcome::Rejected) > 0 {
            anyhow::bail!("demo file {name} has rejected envelopes");
        }
    }
    Ok(())
}
