//! The operator's queue: what is left to relay, to answer and to chase, in sections, each
//! oldest first. Every section is one range of a partial index of the delivery ledger read up
//! to a limit, and its size is counted up to [`COUNT_CAP`], so the queue costs the same on a
//! history of a hundred messages or of a hundred thousand.

use rusqlite::params;
use serde::Serialize;

use crate::store::{Store, StoreError};

/// Sizes are counted up to this; a larger section says "at least".
pub(super) const COUNT_CAP: usize = 1000;

/// A section of the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// Received for someone else, not copied for them yet.
    ToRelay,
    /// Addressed to the operator, not answered by them yet.
    ToMe,
    /// Waiting for replies (from whom, since when).
    Awaiting,
    /// Answers a message that was never received: a relay was missed.
    MissingParent,
    /// Being composed, or composed and never copied.
    Drafts,
}

impl Section {
    /// Every section, in the order the queue shows them.
    pub const ALL: [Section; 5] = [
        Section::ToRelay,
        Section::ToMe,
        Section::Awaiting,
        Section::MissingParent,
        Section::Drafts,
    ];

    /// The heading.
    pub fn title(self) -> &'static str {
        match self {
            Section::ToRelay => "to relay",
            Section::ToMe => "addressed to me",
            Section::Awaiting => "awaiting reply",
            Section::MissingParent => "missing parent",
            Section::Drafts => "drafts",
        }
    }

    /// The ledger state it lists (the first three).
    fn state(self) -> Option<&'static str> {
        match self {
            Section::ToRelay => Some("to_relay"),
            Section::ToMe => Some("to_me"),
            Section::Awaiting => Some("awaiting"),
            _ => None,
        }
    }
}

/// One row of the queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueRow {
    /// The message (or draft) id.
    pub message: String,
    /// Its thread.
    pub thread: String,
    /// Banner sender.
    pub from: String,
    /// Banner recipient.
    pub to: String,
    /// Normalized intent.
    pub intent: Option<String>,
    /// The body's first line (at most 200 characters).
    pub first_line: String,
    /// Since when it is in this section: the message's time (a draft's last save).
    pub since: String,
    /// Who must still answer (awaiting reply).
    pub awaiting_from: Vec<String>,
    /// How many answers are still needed (awaiting reply).
    pub awaiting_needed: Option<i64>,
    /// When and how it was relayed, if it was.
    pub relayed_at: Option<String>,
    /// How it was relayed.
    pub relay_method: Option<String>,
    /// A draft being composed (not a stored message): opens in the composer.
    pub unsent_draft: bool,
    /// For a POLL to several targets (to relay, awaiting reply): how many it went to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub carried: Option<crate::store::Carried>,
}

/// One section with its first rows.
#[derive(Debug, Clone, Serialize)]
pub struct QueueSection {
    /// Which section.
    pub section: Section,
    /// How many rows it has (up to [`COUNT_CAP`]).
    pub count: usize,
    /// Whether there are at least [`COUNT_CAP`].
    pub more: bool,
    /// The oldest rows, at most the limit asked for.
    pub rows: Vec<QueueRow>,
}

/// The whole queue.
#[derive(Debug, Clone, Serialize)]
pub struct Queue {
    /// The sections in [`Section::ALL`] order.
    pub sections: Vec<QueueSection>,
}

impl Queue {
    /// Every row in section order, with its section.
    pub fn rows(&self) -> impl Iterator<Item = (Section, &QueueRow)> {
        self.sections
            .iter()
            .flat_map(|s| s.rows.iter().map(move |r| (s.section, r)))
    }
}

/// Thread-list filter by delivery state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StateFilter {
    /// Every thread.
    #[default]
    All,
    /// Threads with a message in this section.
    Only(Section),
    /// Threads the operator archived (the others leave them out).
    Archived,
}

impl StateFilter {
    /// The next filter in the cycle: all, then each section, then the archived threads.
    pub fn next(self) -> StateFilter {
        match self {
            StateFilter::All => StateFilter::Only(Section::ALL[0]),
            StateFilter::Only(s) => {
                let i = Section::ALL.iter().position(|x| *x == s).unwrap_or(0);
                Section::ALL
                    .get(i + 1)
                    .map_or(StateFilter::Archived, |s| StateFilter::Only(*s))
            }
            StateFilter::Archived => StateFilter::All,
        }
    }

    /// How the list's title names the filter: `to relay`, `archived`; `None` for all.
    pub fn title(self) -> Option<&'static str> {
        match self {
            StateFilter::All => None,
            StateFilter::Only(s) => Some(s.title()),
            StateFilter::Archived => Some("archived"),
        }
    }

    /// The SQL condition on thread `t` for this filter (a constant per filter, so each shape
    /// stays in the statement cache); `settle`: the database keeps settled items (see
    /// `Store::can_settle`).
    pub(crate) fn condition(self, settle: bool) -> &'static str {
        match self {
            StateFilter::All | StateFilter::Archived => "1",
            StateFilter::Only(Section::ToRelay) => {
                "EXISTS (SELECT 1 FROM messages d WHERE d.thread_id = t.id AND d.ledger_state = 'to_relay')"
            }
            StateFilter::Only(Section::ToMe) => {
                "EXISTS (SELECT 1 FROM messages d WHERE d.thread_id = t.id AND d.ledger_state = 'to_me')"
            }
            StateFilter::Only(Section::Awaiting) => {
                "EXISTS (SELECT 1 FROM messages d WHERE d.thread_id = t.id AND d.ledger_state = 'awaiting')"
            }
            StateFilter::Only(Section::MissingParent) => {
                "EXISTS (SELECT 1 FROM messages d INDEXED BY messages_thread_missing
                  WHERE d.thread_id = t.id AND d.missing_parent = 1)"
            }
            // Records the desk wrote (settled as such) are no drafts; a database read
            // without migrating from before settling has none.
            StateFilter::Only(Section::Drafts) if settle => {
                "(EXISTS (SELECT 1 FROM drafts dr WHERE dr.thread_id = t.id)
                  OR EXISTS (SELECT 1 FROM messages m WHERE m.thread_id = t.id
                     AND m.status IN ('draft', 'awaiting_reply') AND m.status = 'draft'
                     AND m.settled_at IS NULL))"
            }
            StateFilter::Only(Section::Drafts) => {
                "(EXISTS (SELECT 1 FROM drafts dr WHERE dr.thread_id = t.id)
                  OR EXISTS (SELECT 1 FROM messages m WHERE m.thread_id = t.id
                     AND m.status IN ('draft', 'awaiting_reply') AND m.status = 'draft'))"
            }
        }
    }
}

/// The columns every message row of the queue reads (`m` the message, whose row holds its
/// ledger).
const ROW_COLUMNS: &str = "m.id, m.thread_id, m.sender, m.recipient, m.intent,
    substr(ltrim(coalesce(m.body, ''), char(10, 13, 32, 9)), 1, 400), m.sent_at,
    m.awaiting_from, m.awaiting_needed, m.relayed_at, m.relay_method";

fn message_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<QueueRow> {
    let head: String = r.get(5)?;
    let from: Option<String> = r.get(7)?;
    Ok(QueueRow {
        message: r.get(0)?,
        thread: r.get(1)?,
        from: r.get(2)?,
        to: r.get(3)?,
        intent: r.get(4)?,
        first_line: crate::protocol::first_line(&head)
            .chars()
            .take(200)
            .collect(),
        since: r.get(6)?,
        awaiting_from: from
            .and_then(|f| serde_json::from_str(&f).ok())
            .unwrap_or_default(),
        awaiting_needed: r.get(8)?,
        relayed_at: r.get(9)?,
        relay_method: r.get(10)?,
        unsent_draft: false,
        carried: None,
    })
}

/// Envelopes composed and filed but never copied. Both terms, so that SQLite reads the
/// partial index of drafts and messages awaiting a reply (`messages_status`).
const UNSENT: &str = "m.status IN ('draft', 'awaiting_reply') AND m.status = 'draft'";

impl Store {
    /// The condition on message `m` that it was not settled by hand (the sections the
    /// ledger's state keeps need none: a settled message has no state).
    fn unsettled(&self) -> &'static str {
        if self.can_settle() {
            "m.settled_at IS NULL"
        } else {
            "1"
        }
    }

    /// The queue, at most `limit` rows per section, oldest first.
    pub fn queue(&self, limit: usize) -> Result<Queue, StoreError> {
        let limit = limit.min(i64::MAX as usize) as i64;
        let mut sections = Vec::new();
        for section in Section::ALL {
            let (rows, count) = match section.state() {
                Some(state) => self.state_rows(state, limit)?,
                None if section == Section::MissingParent => self.missing_rows(limit)?,
                None => self.draft_rows(limit)?,
            };
            sections.push(QueueSection {
                section,
                count: count.min(COUNT_CAP),
                more: count >= COUNT_CAP,
                rows,
            });
        }
        Ok(Queue { sections })
    }

    fn state_rows(&self, state: &str, limit: i64) -> Result<(Vec<QueueRow>, usize), StoreError> {
        let mut rows = self
            .conn
            .prepare_cached(&format!(
                "SELECT {ROW_COLUMNS} FROM messages m
                 WHERE m.ledger_state IS NOT NULL AND m.ledger_state = ?1
                 ORDER BY m.sent_at, m.seq LIMIT ?2"
            ))?
            .query_map(params![state, limit], message_row)?
            .collect::<Result<Vec<_>, _>>()?;
        // A POLL goes to each of its targets: how far it went (the few POLLs only).
        for row in rows
            .iter_mut()
            .filter(|r| r.intent.as_deref() == Some("POLL"))
        {
            row.carried = (self.fanout(&row.message)?)
                .filter(|t| t.len() > 1)
                .map(|t| crate::store::Carried::of_targets(&t));
        }
        let count: i64 = self
            .conn
            .prepare_cached(
                "SELECT count(*) FROM (SELECT 1 FROM messages
                 WHERE ledger_state IS NOT NULL AND ledger_state = ?1 LIMIT ?2)",
            )?
            .query_row(params![state, COUNT_CAP as i64], |r| r.get(0))?;
        Ok((rows, count as usize))
    }

    fn missing_rows(&self, limit: i64) -> Result<(Vec<QueueRow>, usize), StoreError> {
        let rows = self
            .conn
            .prepare_cached(&format!(
                "SELECT {ROW_COLUMNS} FROM messages m
                 WHERE m.missing_parent = 1 AND {unsettled} ORDER BY m.sent_at, m.seq LIMIT ?1",
                unsettled = self.unsettled()
            ))?
            .query_map(params![limit], message_row)?
            .collect::<Result<Vec<_>, _>>()?;
        let count: i64 = self
            .conn
            .prepare_cached(&format!(
                "SELECT count(*) FROM (SELECT 1 FROM messages m
                     WHERE missing_parent = 1 AND {} LIMIT ?1)",
                self.unsettled()
            ))?
            .query_row([COUNT_CAP as i64], |r| r.get(0))?;
        Ok((rows, count as usize))
    }

    /// Composed messages filed in their thread but never copied (the other half of the
    /// queue's drafts, beside drafts being composed), oldest first.
    pub fn unsent_messages(&self, limit: usize) -> Result<Vec<QueueRow>, StoreError> {
        let limit = limit.min(i64::MAX as usize) as i64;
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT {ROW_COLUMNS} FROM messages m WHERE {UNSENT} AND {unsettled}
                 ORDER BY m.sent_at LIMIT ?1",
                unsettled = self.unsettled()
            ))?
            .query_map(params![limit], message_row)?
            .collect::<Result<_, _>>()?)
    }

    /// How many envelopes are filed but never copied ([`Store::unsent_messages`]).
    pub fn unsent_count(&self) -> Result<usize, StoreError> {
        let n: i64 = self
            .conn
            .prepare_cached(&format!(
                "SELECT count(*) FROM messages m WHERE {UNSENT} AND {}",
                self.unsettled()
            ))?
            .query_row([], |r| r.get(0))?;
        Ok(n as usize)
    }

    /// The sections message `id` is in now, in [`Section::ALL`] order: none when it needs
    /// nothing (or was settled by hand); `None` when there is no such message. Read with the
    /// sections' own conditions, so what a command reports after settling or undoing is what
    /// the queue lists.
    pub fn queue_sections(&self, id: &str) -> Result<Option<Vec<Section>>, StoreError> {
        use rusqlite::OptionalExtension;
        let id = crate::protocol::id::key(id);
        let found: Option<(Option<String>, bool, bool)> = self
            .conn
            .prepare_cached(&format!(
                "SELECT m.ledger_state, m.missing_parent = 1 AND {unsettled},
                        {UNSENT} AND {unsettled}
                 FROM messages m WHERE m.id = ?1",
                unsettled = self.unsettled()
            ))?
            .query_row([&*id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        let Some((state, missing, unsent)) = found else {
            return Ok(None);
        };
        Ok(Some(
            Section::ALL
                .into_iter()
                .filter(|s| match s {
                    Section::MissingParent => missing,
                    Section::Drafts => unsent,
                    s => s.state().is_some() && s.state() == state.as_deref(),
                })
                .collect(),
        ))
    }

    /// Drafts being composed, and composed messages never copied.
    fn draft_rows(&self, limit: i64) -> Result<(Vec<QueueRow>, usize), StoreError> {
        let mut rows = self.unsent_messages(limit as usize)?;
        let drafts = self
            .conn
            .prepare_cached(
                "SELECT id, thread_id, envelope, updated_at FROM drafts
                 ORDER BY updated_at LIMIT ?1",
            )?
            .query_map(params![limit], |r| {
                let envelope: String = r.get(2)?;
                Ok((r.get(0)?, r.get(1)?, envelope, r.get(3)?))
            })?
            .collect::<Result<Vec<(String, String, String, String)>, _>>()?;
        for (id, thread, envelope, updated) in drafts {
            let (from, to, intent, first) = draft_summary(&envelope);
            rows.push(QueueRow {
                message: id,
                thread,
                from,
                to,
                intent,
                first_line: first,
                since: updated,
                awaiting_from: Vec::new(),
                awaiting_needed: None,
                relayed_at: None,
                relay_method: None,
                unsent_draft: true,
                carried: None,
            });
        }
        rows.sort_by(|a, b| a.since.cmp(&b.since));
        let count = rows.len();
        rows.truncate(limit as usize);
        Ok((rows, count))
    }
}

/// What the queue shows of a draft: its sides, intent and first body line. A draft is saved as
/// it is typed, so its banner may lack a side (`[[→ v1]]`, which reads as no envelope): it is
/// then read with stand-in sides, shown empty, so its intent and text still show.
fn draft_summary(envelope: &str) -> (String, String, Option<String>, String) {
    let opts = crate::protocol::Options::default();
    let read = |text: &str| {
        crate::protocol::extract(text, &opts)
            .envelopes
            .into_iter()
            .next()
    };
    let (parsed, sides) = match read(envelope) {
        Some(p) => (Some(p), true),
        None => {
            let rest = envelope.split_once('\n').map_or("", |(_, rest)| rest);
            (read(&format!("[[X→Y v1]]\n{rest}")), false)
        }
    };
    let Some(p) = parsed else {
        return Default::default();
    };
    let side = |s: &str| if sides { s.to_string() } else { String::new() };
    (
        side(&p.envelope.banner.from),
        side(&p.envelope.banner.to),
        p.envelope.intent().map(|i| i.to_string()),
        p.envelope.first_line().chars().take(200).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A draft typed without its sides yet still shows its intent and text in the queue.
    #[test]
    fn a_draft_without_sides_still_shows_its_intent_and_text() {
        let text = "[[→ v1]]\nthread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K\nmessage: 01J9J3D3M6A4M3WQX8G1ZQ0S7K\n\
                    intent: REQUEST\nbody: |\n  abc\nsig: none\n[[END]]\n";
        let (from, to, intent, first) = draft_summary(text);
        assert_eq!((from.as_str(), to.as_str()), ("", ""));
        assert_eq!(intent.as_deref(), Some("REQUEST"));
        assert_eq!(first, "abc");
        let whole = text.replace("[[→ v1]]", "[[A→B v1]]");
        assert_eq!(draft_summary(&whole).0, "A");
    }

    fn plan(store: &Store, sql: &str) -> String {
        crate::store::test_support::query_plan(&store.conn, sql, params!["to_relay", 10]).join("\n")
    }

    #[test]
    fn every_section_reads_a_partial_index_in_order() {
        let store = Store::open_in_memory().unwrap();
        let rows = plan(
            &store,
            &format!(
                "SELECT {ROW_COLUMNS} FROM messages m
                 WHERE m.ledger_state IS NOT NULL AND m.ledger_state = ?1
                 ORDER BY m.sent_at, m.seq LIMIT ?2"
            ),
        );
        assert!(rows.contains("INDEX messages_ledger"), "{rows}");
        assert!(!rows.contains("TEMP B-TREE"), "{rows}");
        let missing = plan(
            &store,
            &format!(
                "SELECT {ROW_COLUMNS} FROM messages m
                 WHERE m.missing_parent = 1 AND ?1 = ?1 ORDER BY m.sent_at, m.seq LIMIT ?2"
            ),
        );
        assert!(missing.contains("INDEX messages_missing"), "{missing}");
        let count = plan(
            &store,
            "SELECT count(*) FROM (SELECT 1 FROM messages
             WHERE ledger_state IS NOT NULL AND ledger_state = ?1 LIMIT ?2)",
        );
        assert!(count.contains("INDEX messages_ledger"), "{count}");
    }
}
