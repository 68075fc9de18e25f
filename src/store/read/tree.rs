//! A thread's tree for display: one light row per message (what a tree line shows), in tree
//! order. Opening a 10 000-message thread then costs a narrow query, not the decoding of
//! every envelope; the full envelope of the one message being inspected is read on its own.

use std::collections::HashMap;

use rusqlite::OptionalExtension;

use crate::store::{Store, StoreError};

/// What a tree line shows of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRow {
    /// Message id.
    pub id: String,
    /// The message it answers.
    pub parent: Option<String>,
    /// Normalized intent.
    pub intent: Option<String>,
    /// Banner sender.
    pub from: String,
    /// Banner recipient.
    pub to: String,
    /// The body's first non-empty line (at most 200 characters).
    pub first_line: String,
    /// draft, awaiting_reply, sent, answered, received (see `query::status_sql`).
    pub status: String,
    /// When it was stored.
    pub received_at: String,
    /// When it arrived (received) or was sent (composed), from the delivery ledger: the time
    /// a tree line shows (see `Delivery::sent_at`).
    pub sent_at: String,
    /// Its delivery state: `to_relay`, `to_me`, `awaiting`, or `None`.
    pub delivery: Option<String>,
    /// The desk placed it: a v1.0 reply named no parent and answers its session's latest
    /// message (see `v10_place`); the operator may move it (`Store::move_reply`).
    pub inferred: bool,
    /// Its parent was never received (a missed relay).
    pub missing_parent: bool,
    /// Its signature's verdict (`verified`, `unknown`, `bad`, `changed`); `None` unsigned.
    pub signature: Option<String>,
    /// The kinds of personal data in its body (`email phone`), `None` when there is none.
    pub pii: Option<String>,
    /// Depth in the tree (0 for roots).
    pub depth: usize,
}

/// A thread as a tree of light rows.
#[derive(Debug, Clone)]
pub struct ThreadOutline {
    /// Thread id.
    pub id: String,
    /// Its context.
    pub context: Option<String>,
    /// Messages in tree order.
    pub rows: Vec<TreeRow>,
}

impl Store {
    /// The outline of thread `id`, or `None` when there is no such thread.
    pub fn thread_outline(&self, id: &str) -> Result<Option<ThreadOutline>, StoreError> {
        let context: Option<Option<String>> = self
            .conn
            .prepare_cached("SELECT context FROM threads WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?;
        let Some(context) = context else {
            return Ok(None);
        };
        // The first line is cut in SQL: a long body is never copied out of SQLite whole.
        let sql = format!(
            concat!(
                "SELECT m.id, m.parent_id, m.intent, m.sender, m.recipient,
                    substr(ltrim(coalesce(m.body, ''), char(10, 13, 32, 9)), 1, 400), ",
                super::query::status_sql!(),
                ", m.received_at, m.sent_at, m.ledger_state, m.missing_parent, s.state,
                    crosstalk_pii(m.body), m.seq, {inferred}
             FROM messages m LEFT JOIN signatures s ON s.seq = m.seq
             WHERE m.thread_id = ?1"
            ),
            // A database read without migrating from before it was kept: none is marked.
            inferred = if self.can_settle() {
                "m.parent_inferred"
            } else {
                "0"
            }
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt
            .query_map([id], |r| {
                let head: String = r.get(5)?;
                let first_line = crate::protocol::first_line(&head)
                    .chars()
                    .take(200)
                    .collect();
                Ok((
                    r.get::<_, i64>(13)?,
                    TreeRow {
                        id: r.get(0)?,
                        parent: r.get(1)?,
                        intent: r.get(2)?,
                        from: r.get(3)?,
                        to: r.get(4)?,
                        first_line,
                        status: r.get(6)?,
                        received_at: r.get(7)?,
                        sent_at: r.get(8)?,
                        delivery: r.get(9)?,
                        inferred: r.get(14)?,
                        missing_parent: r.get(10)?,
                        signature: r.get(11)?,
                        pii: r.get(12)?,
                        depth: 0,
                    },
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let rows = arrange(
            in_arrival_order(rows),
            |r| (r.id.as_str(), r.parent.as_deref()),
            |r, d| r.depth = d,
        );
        Ok(Some(ThreadOutline {
            id: id.to_string(),
            context,
            rows,
        }))
    }
}

/// A thread's rows, read in the order of the index by thread (ledger state, time), in
/// arrival order: sorting their `seq`s here is cheaper than SQLite's sorter, which would copy
/// every whole row (bodies included) to sort a long thread.
pub(crate) fn in_arrival_order<T>(mut rows: Vec<(i64, T)>) -> Vec<T> {
    rows.sort_unstable_by_key(|(seq, _)| *seq);
    rows.into_iter().map(|(_, row)| row).collect()
}

/// `items` (in arrival order) put in tree order, each told its depth (see [`tree_order`]).
pub(crate) fn arrange<T>(
    items: Vec<T>,
    link: impl Fn(&T) -> (&str, Option<&str>),
    set_depth: impl Fn(&mut T, usize),
) -> Vec<T> {
    let order = tree_order(items.iter().map(link));
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|(i, depth)| {
            slots[i].take().map(|mut item| {
                set_depth(&mut item, depth);
                item
            })
        })
        .collect()
}

/// Tree order of messages given in arrival order as `(id, parent)`: each root, then its
/// replies depth first, siblings in arrival order. Returns `(index, depth)` pairs. A message
/// whose parent is not among them is a root; messages caught in a parent cycle are appended
/// as roots, so none is lost.
pub(crate) fn tree_order<'a>(
    items: impl ExactSizeIterator<Item = (&'a str, Option<&'a str>)>,
) -> Vec<(usize, usize)> {
    let items: Vec<(&str, Option<&str>)> = items.collect();
    let index: HashMap<&str, usize> = items.iter().enumerate().map(|(i, m)| (m.0, i)).collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); items.len()];
    let mut roots = Vec::new();
    for (i, (_, parent)) in items.iter().enumerate() {
        match parent.and_then(|p| index.get(p)) {
            Some(&p) if p != i => children[p].push(i),
            _ => roots.push(i),
        }
    }
    let mut order: Vec<(usize, usize)> = Vec::with_capacity(items.len());
    let mut seen = vec![false; items.len()];
    let visit = |start: usize, order: &mut Vec<(usize, usize)>, seen: &mut Vec<bool>| {
        let mut stack = vec![(start, 0usize)];
        while let Some((i, depth)) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            order.push((i, depth));
            stack.extend(children[i].iter().rev().map(|&c| (c, depth + 1)));
        }
    };
    for r in roots {
        visit(r, &mut order, &mut seen);
    }
    for i in 0..items.len() {
        if !seen[i] {
            visit(i, &mut order, &mut seen);
        }
    }
    order
}
