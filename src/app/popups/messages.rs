//! The messages the status line said, kept so that one cut at the terminal's width (an
//! error's advice at 80 columns) can still be read whole: `:messages` lists them, newest
//! last, as vim's `:messages` does. The view draws these lines and the app scrolls over the
//! same ones, so scrolling reaches the end.

use std::collections::VecDeque;

use ratatui::layout::Rect;

use crate::app::Level;
use crate::app::panes::layout::{centered, inner_height, inner_width};
use crate::app::text::{safe_line, wrap};

/// How many are kept: the recent work of a sitting, a few kilobytes.
const KEPT: usize = 100;

/// The columns before a message's text: its time and a space.
const TIME_WIDTH: usize = 9;

/// One message as it was said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    /// Info, warning or error.
    pub level: Level,
    /// The words, as the status line had them (not yet made safe to print).
    pub text: String,
    /// When it was said.
    pub at: jiff::Timestamp,
}

/// The last [`KEPT`] messages, oldest first.
#[derive(Debug, Clone, Default)]
pub struct MessageLog {
    said: VecDeque<Said>,
}

impl MessageLog {
    /// Notes what the status line says after an action, unless it is empty or the message
    /// noted last (an action that left the line as it was).
    pub fn note(&mut self, status: &(Level, String), at: jiff::Timestamp) {
        let (level, text) = status;
        if text.is_empty()
            || (self.said.back()).is_some_and(|s| s.level == *level && s.text == *text)
        {
            return;
        }
        if self.said.len() == KEPT {
            self.said.pop_front();
        }
        self.said.push_back(Said {
            level: *level,
            text: text.clone(),
            at,
        });
    }

    /// The messages, oldest first.
    pub fn said(&self) -> impl Iterator<Item = &Said> {
        self.said.iter()
    }

    /// The lines `:messages` shows inside `cols` columns: each message after its time
    /// (`HH:MM:SS`, UTC as every time the app shows), wrapped under its first word, made safe
    /// to print (a message may quote an envelope).
    pub fn lines(&self, cols: usize) -> Vec<(Level, String)> {
        let room = cols.saturating_sub(TIME_WIDTH).max(10);
        let mut out = Vec::new();
        for s in &self.said {
            let time = s.at.strftime("%H:%M:%S").to_string();
            for (i, part) in wrap(&safe_line(&s.text), room).into_iter().enumerate() {
                let lead = if i == 0 {
                    format!("{time:<TIME_WIDTH$}")
                } else {
                    " ".repeat(TIME_WIDTH)
                };
                out.push((s.level, format!("{lead}{part}")));
            }
        }
        out
    }
}

/// The `:messages` popup in a `size` terminal, as tall as its lines up to the screen's, and
/// those lines: what the view draws and the app scrolls over, worked out once.
pub(crate) fn messages_layout(log: &MessageLog, size: Rect) -> (Rect, Vec<(Level, String)>) {
    let wide = centered(size, 110, size.height);
    let lines = log.lines(inner_width(wide) as usize);
    let rows = lines.len().max(1) as u16;
    let height = rows.saturating_add(2).min(size.height.saturating_sub(2));
    (centered(size, 110, height), lines)
}

/// The furthest `:messages` scrolls in a `size` terminal: where the newest message's last
/// line is at the bottom (where it opens).
pub(crate) fn last_scroll(log: &MessageLog, size: Rect) -> usize {
    let (area, lines) = messages_layout(log, size);
    lines.len().saturating_sub(inner_height(area))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(s).unwrap()
    }

    #[test]
    fn keeps_each_message_once_in_order_and_the_last_hundred() {
        let mut log = MessageLog::default();
        log.note(&(Level::Info, String::new()), at(0));
        log.note(&(Level::Info, "one".into()), at(1));
        log.note(&(Level::Info, "one".into()), at(2));
        log.note(&(Level::Error, "one".into()), at(3));
        log.note(&(Level::Info, "one".into()), at(4));
        let texts: Vec<(Level, &str)> = log.said().map(|s| (s.level, s.text.as_str())).collect();
        assert_eq!(
            texts,
            [
                (Level::Info, "one"),
                (Level::Error, "one"),
                (Level::Info, "one")
            ]
        );
        for i in 0..250 {
            log.note(&(Level::Warn, format!("m{i}")), at(10 + i));
        }
        assert_eq!(log.said().count(), KEPT);
        assert_eq!(log.said().next().unwrap().text, "m150");
        assert_eq!(log.said().last().unwrap().text, "m249");
    }

    /// Every word of a long message is there, wrapped under its first; what a terminal
    /// would act on is shown as placeholders.
    #[test]
    fn lines_wrap_whole_messages_and_are_safe_to_print() {
        let mut log = MessageLog::default();
        let long = "Not copied: the clipboard could not be reached \u{1b}[2J and the text is kept in the draft; run with a display or set [clipboard] command in config.toml";
        log.note(&(Level::Error, long.into()), at(3_723));
        let lines = log.lines(40);
        assert!(lines.len() > 3, "{lines:?}");
        assert!(lines[0].1.starts_with("01:02:03 Not copied"), "{lines:?}");
        let words: Vec<String> = lines
            .iter()
            .flat_map(|(_, l)| l.split_whitespace().map(str::to_string))
            .skip(1)
            .collect();
        assert_eq!(words.last().map(String::as_str), Some("config.toml"));
        for (level, l) in &lines {
            assert_eq!(*level, Level::Error);
            assert!(!l.contains('\u{1b}'), "{l:?}");
            assert!(crate::app::text::width(l) <= 40, "{l:?}");
        }
    }
}
