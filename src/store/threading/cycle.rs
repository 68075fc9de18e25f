//! Parent cycles across imports. One envelope cannot name itself as parent (`self-parent`), but
//! A answering B and B answering A arrive in two envelopes, each valid alone. A new message can
//! close a cycle only when a stored message already names it as parent (it arrived after its
//! reply); only then is its chain of parents walked, each message at most once, so a long
//! conversation imported in order costs nothing and a damaged history cannot make it loop.

use rusqlite::{Connection, params};

use crate::protocol::{Code, Diagnostic};
use crate::store::StoreError;

/// Whether giving `message` the parent `parent` closes a cycle: `parent`'s chain of parents
/// leads back to `message`.
pub(in crate::store) fn closes_cycle(
    conn: &Connection,
    message: &str,
    parent: &str,
) -> Result<bool, StoreError> {
    Ok(conn
        .prepare_cached(
            // UNION keeps each id once: an older cycle the chain runs into ends the walk.
            "WITH RECURSIVE up(id) AS (
                SELECT ?1
                UNION
                SELECT m.parent_id FROM messages m JOIN up ON m.id = up.id
                WHERE m.parent_id IS NOT NULL AND up.id <> ?2
             )
             SELECT count(*) FROM up WHERE id = ?2",
        )?
        .query_row(params![parent, message], |r| r.get::<_, i64>(0))?
        > 0)
}

/// The warning for a message at `line` whose parent `parent` leads back to it.
pub(in crate::store) fn diagnostic(line: u32, message: &str, parent: &str) -> Diagnostic {
    Diagnostic::new(
        Code::ParentCycle,
        line,
        1,
        format!(
            "parent `{parent}` leads back to this message `{message}` through stored replies: a parent cycle; the thread shows the loop's first message as a root"
        ),
    )
}
