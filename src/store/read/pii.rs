//! Personal data in stored bodies, for the tree's badge: an SQL function, so a query can ask
//! about a body without copying it out of SQLite (the tree reads only a body's first line).

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::ValueRef;

use crate::protocol::pii::{PiiKind, kinds};

/// The SQL function's name: `crosstalk_pii(body)` is the kinds of personal data in `body`,
/// space-separated (`email phone`), or NULL when there is none.
pub(crate) const FUNCTION: &str = "crosstalk_pii";

/// Makes [`FUNCTION`] available on `conn`.
pub(in crate::store) fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        FUNCTION,
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let text = match ctx.get_raw(0) {
                ValueRef::Text(t) => String::from_utf8_lossy(t),
                _ => return Ok(None),
            };
            let found = kinds(&text);
            Ok((!found.is_empty())
                .then(|| found.iter().map(|k| name(*k)).collect::<Vec<_>>().join(" ")))
        },
    )
}

/// The word a kind is stored as.
pub(crate) fn name(kind: PiiKind) -> &'static str {
    match kind {
        PiiKind::Email => "email",
        PiiKind::Phone => "phone",
        PiiKind::Iban => "iban",
        PiiKind::Card => "card",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_function_names_kinds_or_gives_null() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        let ask = |sql: &str| -> Option<String> { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
        assert_eq!(
            ask("SELECT crosstalk_pii('write ada@example.org or +49 30 1234567')").as_deref(),
            Some("email phone")
        );
        assert_eq!(ask("SELECT crosstalk_pii('nothing personal')"), None);
        assert_eq!(ask("SELECT crosstalk_pii(NULL)"), None);
        assert_eq!(ask("SELECT crosstalk_pii(42)"), None);
    }
}
