//! The composer's "As it will be copied": the envelope's canonical text with its live
//! diagnostics above it, as rows of a width, and the view of it over the whole screen
//! (`C-o`) that scrolls, so the whole envelope — body and `sig:` included — is read before
//! `C-y` even at 80×24, where the pane beside the form holds six rows.

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use crate::app::Action;
use crate::app::keymap::Key;
use crate::app::panes::list_move::{MOVES, step};
use crate::app::text::{safe, safe_line, soft_wrap};
use crate::app::writing::composer::Composer;

/// How a row of the copy is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// A diagnostic that keeps the envelope from being copied.
    Error,
    /// A warning.
    Warn,
    /// The envelope's text.
    Plain,
}

/// One row: whether it continues the line above (soft-wrapped), its text, its tone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyRow {
    /// A soft-wrapped line's rows after its first start with the continuation mark, so a
    /// line break the copy does not have is never shown.
    pub continued: bool,
    /// The text, safe to draw.
    pub text: String,
    /// How it is drawn.
    pub tone: Tone,
}

impl Composer {
    /// The rows of the copy at `width` cells: the META notes and diagnostics, a blank row,
    /// then the envelope.
    pub fn copy_rows(&self, width: usize) -> Vec<CopyRow> {
        let mut rows = Vec::new();
        let mut push = |text: &str, tone: Tone| {
            for (continued, text) in soft_wrap(text, width) {
                rows.push(CopyRow {
                    continued,
                    text,
                    tone,
                });
            }
        };
        for p in &self.meta_problems {
            push(&safe_line(p), Tone::Error);
        }
        for d in &self.diagnostics {
            let tone = if d.is_error() {
                Tone::Error
            } else {
                Tone::Warn
            };
            push(
                &format!("line {}: {} [{}]", d.line, safe_line(&d.message), d.code),
                tone,
            );
        }
        if !self.meta_problems.is_empty() || !self.diagnostics.is_empty() {
            push("", Tone::Plain);
        }
        for l in safe(&self.preview).lines() {
            push(l, Tone::Plain);
        }
        rows
    }

    /// A key in the copy's whole-screen view, which `height` rows of `width` cells show: it
    /// scrolls with the keys every list moves with ([`MOVES`]: ↑ ↓ j k, PgUp PgDn, C-d C-u,
    /// g G Home End) and Space pages as in help; `q` closes it. Returns whether the key was
    /// the view's.
    pub(crate) fn copy_view_key(&mut self, ev: &KeyEvent, width: usize, height: usize) -> bool {
        let Some(top) = self.copy_view else {
            return false;
        };
        let key = Key::from_event(ev);
        if key == Key::from_event(&KeyEvent::from(KeyCode::Char('q'))) {
            self.copy_view = None;
            return true;
        }
        let action = match ev.code {
            KeyCode::Char(' ') => Some(Action::PageDown),
            _ => (MOVES.iter())
                .find(|(keys, _)| keys.split(' ').any(|k| Key::parse(k) == Some(key)))
                .map(|(_, a)| a.clone()),
        };
        let last = self.copy_rows(width).len().saturating_sub(height);
        let page = height.saturating_sub(1).max(1) as isize;
        if let Some(delta) = action.and_then(|a| step(&a, page)) {
            self.copy_view = Some(top.saturating_add_signed(delta).min(last));
        }
        true
    }
}
