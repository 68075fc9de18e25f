//! The poll panel: `P` on a POLL shows each target's answer and vote, the quorum and the time
//! left; after the deadline `c` closes the poll: an E-TIMEOUT ERROR for each silent target and
//! a CLOSE with the tally for all participants, stored in the thread as composed messages,
//! the CLOSE copied at once.

use crate::app::popups::popup::Popup;
use crate::app::text::{safe_line, short_time};
use crate::app::{Action, App, Pane};
use crate::protocol::namespaces;
use crate::protocol::poll;
use crate::store::PollView;

/// The open panel: the POLL and its tally when it opened.
#[derive(Debug)]
pub struct PollPanel {
    /// The POLL with its tally.
    pub view: PollView,
}

impl PollPanel {
    /// The panel's lines, safe to print: what the POLL asks, a row per target (answered,
    /// vote, when), the counts, the quorum, the deadline and what `c` would do.
    pub fn lines(&self, close_key: &str) -> Vec<String> {
        let t = &self.view.tally;
        let env = &self.view.poll.envelope;
        let mut out = vec![format!(
            "POLL from {}: {}",
            env.banner.from,
            env.first_line()
        )];
        let mut about = Vec::new();
        if let Some(k) = &t.kind {
            about.push(format!("type {k}"));
        }
        match (&t.options_from, t.options.is_empty()) {
            (Some(from), false) => {
                about.push(format!("options {} (from {from})", t.options.join(" | ")))
            }
            _ => about.push("no options found (votes count as written in Vote:)".into()),
        }
        if !about.is_empty() {
            out.push(about.join(" · "));
        }
        out.push(String::new());
        let width = t
            .targets
            .iter()
            .map(|l| crate::app::text::width(&safe_line(&l.target)))
            .max()
            .unwrap_or(6)
            .clamp(6, 40);
        out.push(format!(
            "{:<width$}  {:<9} {:<14} WHEN",
            "TARGET", "ANSWERED", "VOTE"
        ));
        for l in &t.targets {
            let answered = l.standing.answered();
            let vote = safe_line(&l.vote_cell()).into_owned();
            let target = crate::app::text::truncate(&safe_line(&l.target), width);
            out.push(format!(
                "{target:<width$}  {answered:<9} {:<14} {}",
                crate::app::text::truncate(&vote, 14),
                l.at.as_deref().map(short_time).unwrap_or_default()
            ));
            // Why its vote counted or not, under it.
            out.push(format!("  ↳ {}", l.why));
        }
        out.push(String::new());
        if !t.counts.is_empty() {
            let counts: Vec<String> = t.counts.iter().map(|(o, n)| format!("{o} {n}")).collect();
            out.push(format!("Votes: {}", counts.join(" · ")));
        }
        let (counts, word) = poll::quorum_label(t);
        out.push(format!(
            "Quorum: {counts} — {word}{}",
            t.leader
                .as_deref()
                .map(|l| format!(" · leading: {l}"))
                .unwrap_or_default()
        ));
        out.push(format!(
            "Deadline: {} — {}",
            t.deadline_raw.as_deref().unwrap_or("none"),
            poll::time_left_label(t)
        ));
        out.push(match (&t.closed_by, poll::can_close(t)) {
            (Some(id), _) => format!("Closed by {id}."),
            (None, Ok(())) => format!(
                "{close_key}: write E-TIMEOUT for {} silent target(s) and a CLOSE with the tally",
                t.silent.len()
            ),
            (None, Err(why)) => format!("Not closable yet: {why}."),
        });
        out.into_iter()
            .map(|l| safe_line(&l).into_owned())
            .collect()
    }
}

impl App {
    /// `P`: opens the poll panel of the selected message, when it is a POLL or answers one.
    pub(in crate::app) fn open_poll(&mut self) -> anyhow::Result<()> {
        let Some(message) = self.selected_message().cloned() else {
            self.warn("Select a POLL to tally (open a thread with Enter).");
            return Ok(());
        };
        let intent = message.intent.clone().unwrap_or_else(|| "none".into());
        // On an answer to a POLL, its POLL: the panel is where the answer is counted.
        let message = match (&message.parent, message.envelope.intent()) {
            (Some(p), i) if i != Some(crate::protocol::Intent::Poll) => self
                .store
                .message(p)?
                .filter(|m| m.envelope.intent() == Some(crate::protocol::Intent::Poll))
                .unwrap_or(message),
            _ => message,
        };
        match self.store.poll_view(message, self.now)? {
            Some(view) => self.popup = Some(Popup::Poll(Box::new(PollPanel { view }))),
            None => self.warn(format!(
                "Not a POLL (intent {}): P tallies a POLL's answers.",
                safe_line(&intent)
            )),
        }
        Ok(())
    }

    /// Keys in the poll panel (Back is handled by the popup).
    pub(in crate::app) fn poll_action(&mut self, action: Action) -> anyhow::Result<()> {
        if action != Action::ClosePoll {
            return Ok(());
        }
        let Some(Popup::Poll(panel)) = self.popup.as_ref() else {
            return Ok(());
        };
        // Tallied again: replies may have arrived since the panel opened.
        let id = panel.view.poll.id.clone();
        let Some(message) = self.store.message(&id)? else {
            self.popup = None;
            self.warn("That POLL is gone (erased meanwhile).");
            return Ok(());
        };
        let Some(view) = self.store.poll_view(message, self.now)? else {
            return Ok(());
        };
        if let Err(why) = poll::can_close(&view.tally) {
            self.warn(format!("Poll not closed: {}.", safe_line(&why)));
            self.popup = Some(Popup::Poll(Box::new(PollPanel { view })));
            return Ok(());
        }
        let mut closed = self.store.poll_closing(&view, &self.settings.desk());
        // Signed like everything else the desk writes; a key that cannot be used stops it all
        // before anything is stored.
        for env in closed.errors.iter_mut().chain([&mut closed.result]) {
            if let Err(why) =
                crate::app::writing::signing::sign_composed(&self.settings.signing, env)
            {
                self.warn(format!("Poll not closed: {}.", safe_line(&why)));
                return Ok(());
            }
        }
        self.store.file_closing(&closed)?;
        self.popup = None;
        let result_id = closed.result.message().unwrap_or_default().to_string();
        // The targets an E-TIMEOUT was written for.
        let silent: Vec<String> = (closed.errors.iter())
            .filter_map(|e| {
                e.meta_block(namespaces::ERROR)
                    .and_then(|m| m.get("Target"))
            })
            .map(|t| safe_line(t).into_owned())
            .collect();
        let written = if silent.is_empty() {
            "a CLOSE with the tally (no silent target)".to_string()
        } else {
            format!(
                "{} E-TIMEOUT ERROR(s) (for {}) and a CLOSE with the tally",
                silent.len(),
                silent.join(", ")
            )
        };
        let text = crate::protocol::render(&closed.result);
        let copied = self.copy_text(&text, &closed.result.banner.to);
        if copied.is_some() {
            self.store.mark_copied(&result_id)?;
        }
        self.drafts_changed()?;
        self.reveal(&view.poll.thread, Some(&result_id))?;
        self.focus = Pane::Tree;
        match copied {
            Some((level, line)) => {
                self.set_status((
                    level,
                    format!("Poll closed: wrote {written}; the CLOSE {line}; y copies each ERROR."),
                ));
            }
            None => {
                let why = self.status.1.clone();
                self.warn(format!(
                    "Poll closed: wrote {written}; the CLOSE is not copied ({why}): y copies it."
                ));
            }
        }
        Ok(())
    }
}
