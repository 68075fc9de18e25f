//! What the store's own tests share: reading the plan SQLite picks for a query, and
//! filling a database left at an older version with the rows a current one holds.

use rusqlite::{Connection, Params};
use std::path::Path;

/// The plan SQLite picks for `sql` bound to `params`, one line per step, so a test can
/// say which index a query reads.
pub(crate) fn query_plan(conn: &Connection, sql: &str, params: impl Params) -> Vec<String> {
    conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .unwrap()
        .query_map(params, |r| r.get(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Copies every row of `tables` from the database at `from` into `old`, in the columns
/// `old`'s tables have: a database as an older schema left it, holding today's rows.
pub(crate) fn copy_rows(old: &Connection, from: &Path, tables: &[&str]) {
    old.execute("ATTACH ?1 AS new", [from.to_string_lossy()])
        .unwrap();
    for table in tables {
        let columns: Vec<String> = old
            .prepare("SELECT name FROM main.pragma_table_info(?1)")
            .unwrap()
            .query_map([table], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let columns = columns.join(", ");
        old.execute_batch(&format!(
            "INSERT INTO main.{table} ({columns}) SELECT {columns} FROM new.{table};"
        ))
        .unwrap();
    }
    old.execute_batch("DETACH new;").unwrap();
}
