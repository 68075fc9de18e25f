//! `t`: the next message that needs the operator, across threads, as neomutt's next-unread —
//! one to relay, one addressed to them, then (with `[ui] awaiting_after`) one whose reply is
//! late. The store's queue already keeps these sections, oldest first: `t` walks them in that
//! order, from the message selected to the one after it, and round again at the end.

use crate::app::relay::queue::QUEUE_LIMIT;
use crate::app::text::safe_line;
use crate::app::{App, Pane};
use crate::store::{QueueRow, Section, StateFilter};

impl App {
    /// `t`: selects the next message that needs the operator and says what it found, or that
    /// nothing does.
    pub(in crate::app) fn next_to_do(&mut self) -> anyhow::Result<()> {
        let queue = self.store.queue(QUEUE_LIMIT)?;
        let late = self.settings.ui.awaiting_after;
        let now = self.now;
        let todo: Vec<(Section, &QueueRow)> = queue
            .rows()
            .filter(|(s, r)| needs_the_operator(*s, r, late, now))
            .collect();
        if todo.is_empty() {
            let waits = match late {
                Some(after) => format!(", and no reply awaited past {}", age_words(after)),
                None => String::new(),
            };
            self.info(format!(
                "Nothing needs you: nothing to relay or to answer{waits}."
            ));
            return Ok(());
        }
        let at = self.selected_id();
        let next = match todo
            .iter()
            .position(|(_, r)| Some(r.message.as_str()) == at)
        {
            Some(i) => (i + 1) % todo.len(),
            None => 0,
        };
        let (section, row) = todo[next];
        let (n, of) = (next + 1, todo.len());
        let what = self.todo_words(section, row, &format!(" ({n} of {of})"));
        let (thread, message) = (row.thread.clone(), row.message.clone());
        // A state filter that hides it gives way, as the queue's rows open.
        if self.list.state != StateFilter::Only(section) {
            self.list.state = StateFilter::All;
        }
        self.reveal(&thread, Some(&message))?;
        self.focus = Pane::Tree;
        self.info(what);
        Ok(())
    }

    /// How the status line names what `t` found, `count` after it: `to relay: REQUEST
    /// CLAUDE→GPT “Plan…” (1 of 3)`, its first line cut so that all fits one status line.
    fn todo_words(&self, section: Section, row: &QueueRow, count: &str) -> String {
        let who = |a: &str| safe_line(self.contacts.display_name(a)).into_owned();
        let head = match section {
            Section::Awaiting => format!(
                "awaiting a reply {} ago",
                crate::app::text::age(&row.since, self.now)
            ),
            s => s.title().to_string(),
        };
        let what = format!(
            "{head}: {} {}→{}",
            safe_line(row.intent.as_deref().unwrap_or("-")),
            who(&row.from),
            who(&row.to),
        );
        let width = crate::app::text::width;
        let room = (self.size.width as usize).saturating_sub(width(&what) + width(count) + 3);
        if room < 8 {
            return format!("{what}{count}");
        }
        let line = crate::app::text::truncate(&safe_line(&row.first_line), room);
        format!("{what} “{line}”{count}")
    }
}

/// Whether a queue row is for `t`: to relay, addressed to the operator, or awaiting a reply
/// for longer than `late` (never, without it: the queue lists every wait).
fn needs_the_operator(
    section: Section,
    row: &QueueRow,
    late: Option<jiff::SignedDuration>,
    now: jiff::Timestamp,
) -> bool {
    match section {
        Section::ToRelay | Section::ToMe => !row.unsent_draft,
        Section::Awaiting => late.is_some_and(|after| {
            row.since
                .parse::<jiff::Timestamp>()
                .is_ok_and(|since| now.duration_since(since) > after)
        }),
        Section::MissingParent | Section::Drafts => false,
    }
}

/// An age as `[ui] awaiting_after` wrote it, back in words: `30m`, `2h`, `1d`.
fn age_words(d: jiff::SignedDuration) -> String {
    let s = d.as_secs();
    match s {
        s if s % 86_400 == 0 && s > 0 => format!("{}d", s / 86_400),
        s if s % 3600 == 0 && s > 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 && s > 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(since: &str) -> QueueRow {
        QueueRow {
            message: "m".into(),
            thread: "t".into(),
            from: "a".into(),
            to: "b".into(),
            intent: None,
            first_line: String::new(),
            since: since.into(),
            awaiting_from: Vec::new(),
            awaiting_needed: None,
            relayed_at: None,
            relay_method: None,
            unsent_draft: false,
            carried: None,
        }
    }

    #[test]
    fn a_wait_counts_once_it_is_late() {
        let now: jiff::Timestamp = "2026-12-01T12:00:00Z".parse().unwrap();
        let late = Some(jiff::SignedDuration::from_mins(30));
        let old = row("2026-12-01T11:00:00Z");
        let fresh = row("2026-12-01T11:45:00Z");
        assert!(needs_the_operator(Section::Awaiting, &old, late, now));
        assert!(!needs_the_operator(Section::Awaiting, &fresh, late, now));
        assert!(!needs_the_operator(Section::Awaiting, &old, None, now));
        assert!(needs_the_operator(Section::ToRelay, &fresh, None, now));
        assert!(needs_the_operator(Section::ToMe, &fresh, None, now));
        assert!(!needs_the_operator(Section::MissingParent, &old, late, now));
        assert!(!needs_the_operator(Section::Drafts, &old, late, now));
        assert_eq!(age_words(jiff::SignedDuration::from_mins(30)), "30m");
        assert_eq!(age_words(jiff::SignedDuration::from_hours(48)), "2d");
        assert_eq!(age_words(jiff::SignedDuration::from_secs(90)), "90s");
    }
}
