//! Moving a reply the desk placed: `M` on a reply marked `≈` (a v1.0 reply names no parent, so
//! the desk filed it under its session's latest message), then `M` on the message it answers.
//! The rule and what follows a move are the store's (`store::placement`); this only picks the
//! two messages and says what happened.

use crate::app::App;
use crate::app::text::safe_line;
use crate::store::MoveRefused;

impl App {
    /// `M`: the first press picks the selected reply to move, the second places it under the
    /// message then selected.
    pub(in crate::app) fn move_reply(&mut self) -> anyhow::Result<()> {
        let Some(selected) = self.selected_id().map(str::to_string) else {
            self.warn("Select a reply to move (open a thread with Enter).");
            return Ok(());
        };
        let Some(moving) = self.moving.take() else {
            if !self.store.parent_inferred(&selected)? {
                self.warn(
                    "Its envelope names the message it answers itself (or none was inferred): only a reply the desk placed (≈) can be moved.",
                );
                return Ok(());
            }
            self.moving = Some(selected);
            self.info(
                "Moving this reply: select the message it answers and press M again (Esc leaves it where it is).",
            );
            return Ok(());
        };
        match self.store.move_reply(&moving, &selected)? {
            Ok(()) => {
                let thread = self.store.message(&moving)?.map(|m| m.thread);
                if let Some(thread) = thread {
                    self.reveal(&thread, Some(&moving))?;
                }
                self.info(format!(
                    "Moved: it answers {} now.",
                    safe_line(&short(&selected))
                ));
            }
            Err(MoveRefused::Already) => self.info("It answers that message already."),
            Err(why) => {
                self.warn(format!("Not moved: {why}."));
                // Still moving: another message may be picked.
                if why == MoveRefused::Loop {
                    self.moving = Some(moving);
                }
            }
        }
        Ok(())
    }
}

/// The first characters of an id, as the status line names a message.
fn short(id: &str) -> String {
    id.chars().take(10).collect::<String>() + "…"
}
