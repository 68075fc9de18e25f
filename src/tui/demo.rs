//! `crosstalk --demo`: the demo threads of `assets/demo/`, built into the binary and
//! imported in name order into a throwaway database.

use crate::protocol::Options;
use crate::store::{Outcome, Store};

/// The demo files, in import order.
pub const FILES: &[(&str, &str)] = &[
    (
        "00-missed-relay.crosstalk",
        include_str!("../../assets/demo/00-missed-relay.crosstalk"),
    ),
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

/// The operator's addresses in the demo conversations.
pub(crate) const OPERATOR: [&str; 2] = ["human://kalle", "human://kalle@crosstalk.example"];

/// How long before the demo starts each file's conversation ends, in minutes (in `FILES`
/// order; `None` keeps the file's ids: file 05 is signed, and its signatures cover them).
const ENDS_AGO_MIN: [Option<i64>; 7] = [
    Some(38),
    Some(5 * 24 * 60 + 130),
    Some(4 * 24 * 60 + 20),
    Some(3 * 24 * 60 + 300),
    Some(26 * 60),
    None,
    Some(7 * 60 + 12),
];

/// The key id file 05's `ed25519:` signature names.
const DEMO_PKID: &str = "kalle@keys/2026-06";

/// The files left "to relay" in the demo: their newest message is not relayed yet.
const LEFT_TO_RELAY: [&str; 2] = ["04-too-large-error.crosstalk", "00-missed-relay.crosstalk"];

/// `text` with every ULID in its `thread:`, `parent:` and `message:` headers moved in time so
/// that the newest ends `ago` before `now`; the random part of each id is kept, so ids stay
/// distinct and every reference still points at the same message.
pub(crate) fn retime(text: &str, now: jiff::Timestamp, ago: jiff::SignedDuration) -> String {
    let id_of = |line: &str| -> Option<ulid::Ulid> {
        let (key, value) = line.split_once(':')?;
        if !["thread", "parent", "message"].contains(&key.trim()) {
            return None;
        }
        ulid::Ulid::from_string(value.trim()).ok()
    };
    let newest = text
        .lines()
        .filter_map(id_of)
        .map(|u| u.timestamp_ms())
        .max();
    let Some(newest) = newest else {
        return text.to_string();
    };
    let end = now.as_millisecond() - ago.as_millis() as i64;
    let shift = end - newest as i64;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let eol = if line.ends_with('\n') { "\n" } else { "" };
        if let Some(u) = id_of(line) {
            let (key, _) = line.split_once(':').unwrap_or((line, ""));
            let ms = (u.timestamp_ms() as i64 + shift).max(0) as u64;
            let moved = ulid::Ulid::from_parts(ms, u.random());
            out.push_str(&format!("{key}: {moved}{eol}"));
        } else if let Some((key, at)) = deadline_of(line) {
            // A POLL's deadline moves with its votes, or they would all come after it.
            let moved = at
                .checked_add(jiff::SignedDuration::from_millis(shift))
                .unwrap_or(at);
            let moved = moved.strftime("%Y-%m-%dT%H:%MZ");
            out.push_str(&format!("{key}: {moved}{eol}"));
        } else {
            out.push_str(line);
        }
    }
    out
}

/// A `Deadline:` line's key as written and its time.
fn deadline_of(line: &str) -> Option<(&str, jiff::Timestamp)> {
    let (key, value) = line.split_once(':')?;
    if key.trim() != "Deadline" {
        return None;
    }
    Some((key, crate::protocol::validate::parse_time(value.trim())?))
}

/// Imports every demo file into `store`, its times moved to end shortly before now (see
/// `assets/demo/README.md`), and records what the operator has done with it so far: every
/// message relayed but the newest of a few files, and one draft reply; a demo envelope that
/// does not import is a bug.
pub fn seed(store: &mut Store) -> anyhow::Result<()> {
    seed_at(store, jiff::Timestamp::now())
}

/// [`seed`] with the time the demo starts.
pub fn seed_at(store: &mut Store, now: jiff::Timestamp) -> anyhow::Result<()> {
    let operator: Vec<String> = OPERATOR.iter().map(|a| a.to_string()).collect();
    store.set_operator_addresses(&operator)?;
    // The key that verifies file 05 (kept as written, never retimed), so the demo shows a
    // verified signature beside an unknown one.
    let demo_key = crate::protocol::keys::parse_public_key(include_str!(
        "../../assets/demo/demo-key.pub.pem"
    ))?;
    store.add_key(DEMO_PKID, &demo_key, crate::store::KeySource::Manual)?;
    for (i, (name, text)) in FILES.iter().enumerate() {
        let text = match ENDS_AGO_MIN.get(i).copied().flatten() {
            Some(min) => retime(text, now, jiff::SignedDuration::from_mins(min)),
            None => text.to_string(),
        };
        let report = store.import_text(name, &text, &Options::default())?;
        if report.count(Outcome::Rejected) > 0 {
            anyhow::bail!("demo file {name} has rejected envelopes");
        }
        let ids: Vec<&str> = report
            .items
            .iter()
            .filter_map(|i| i.message.as_deref())
            .collect();
        // The demo replays a history: each message arrived when its (moved) id says.
        for id in &ids {
            if let Some(at) = crate::store::ulid_time(id) {
                store.set_arrival(id, at)?;
            }
        }
        let keep = if LEFT_TO_RELAY.contains(name) {
            ids.len().saturating_sub(1)
        } else {
            ids.len()
        };
        for id in &ids[..keep] {
            store.mark_relayed(id, "system clipboard")?;
        }
        if name.starts_with("03-") {
            // The operator began answering the poll's ERROR and has not sent it yet.
            if let Some(error) = report.items.get(4).and_then(|i| i.message.as_deref()) {
                store.create_reply(
                    error,
                    OPERATOR[0],
                    Some("RESPOND"),
                    "Noted: we go ahead with the three answers we have.",
                    "kalle",
                )?;
            }
        }
    }
    Ok(())
}
