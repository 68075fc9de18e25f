//! What the relay flows share: envelopes of one conversation between three chat windows, and
//! the checks that each was stored once, threaded and relayed.

use std::path::Path;

use super::xvfb::Xvfb;

/// An envelope whose ids are not ULIDs (`thread: nope` at line 2, column 9).
pub const INVALID: &str = "[[CLAUDE→CHATGPT v1]]\nthread: nope\nmessage: nope\nintent: REQUEST\nbody: |\n  broken\nsig: none\n[[END]]\n";

/// Copies [`INVALID`]: whatever relays (`wait_for(text)` returns its output once it shows
/// `text`) says why it left the clipboard alone, and the clipboard keeps the copy. What it
/// says comes after its decision and any copy that made, so the clipboard is read once it
/// has said it.
pub fn an_invalid_copy_stays_on_the_clipboard(x: &Xvfb, wait_for: impl Fn(&str) -> String) {
    x.copy(INVALID);
    let s = wait_for("Clipboard left unchanged");
    assert!(s.contains("is invalid: 2:9"), "{s}");
    assert_eq!(x.clipboard_until("a read", |c| !c.is_empty()), INVALID);
}

/// Envelope `n` of thread `<prefix>0` (ids `<prefix>N`, `prefix` 25 Crockford characters),
/// from `from` to `to`, answering envelope `parent`.
pub fn envelope(
    prefix: &str,
    context: &str,
    (from, to): (&str, &str),
    n: u8,
    parent: Option<u8>,
    body: &str,
) -> String {
    let parent = parent
        .map(|p| format!("parent: {prefix}{p}\n"))
        .unwrap_or_default();
    format!(
        "[[{from}→{to} v1]]\nuser: kalle\nthread: {prefix}0\n{parent}message: {prefix}{n}\n\
         context: {context}\nintent: REQUEST\nbody: |\n  {body}\nsig: none\n[[END]]\n"
    )
}

/// One number from the database.
pub fn count(db: &Path, sql: &str) -> i64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// `messages` stored once each, all relayed (`relayed` is the ledger's condition for that),
/// in one thread with every reply under its parent.
pub fn stored_once_threaded_and_relayed(db: &Path, messages: i64, relayed: &str) {
    assert_eq!(count(db, "SELECT count(*) FROM messages"), messages);
    assert_eq!(
        count(
            db,
            &format!("SELECT count(*) FROM delivery WHERE {relayed}")
        ),
        messages
    );
    assert_eq!(count(db, "SELECT count(*) FROM threads"), 1);
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM messages m JOIN messages p ON p.id = m.parent_id"
        ),
        messages - 1
    );
}
