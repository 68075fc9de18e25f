//! A text box of several lines (the composer's boxes, the paste box) whose undo goes by edit
//! group, not by character: the editor widget records each character as a step of its own,
//! so this box keeps its own history and the widget keeps none.
//!
//! A group is a run of typing: what is not a word (a space, a line break, punctuation) and
//! then a word typed after it, so "hello world" is two steps, "hello" and " world"; a run of
//! Backspaces or Deletes is one; a kill, a yank, a paste or any other change is one of its
//! own; moving the cursor ends the group being typed. A step is kept as the lines it changed
//! (those before and after), not the whole text, so a long body's history stays small.

use std::ops::{Deref, DerefMut};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::TextArea;

use crate::app::writing::editor_rows::jump;
use crate::app::writing::readline::{self, Edit, is_word};

/// Steps kept for undo.
const KEPT: usize = 500;

/// One undo step: the lines from `at` that were `removed` and are now `inserted`, with the
/// cursor before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Change {
    at: usize,
    removed: Vec<String>,
    inserted: Vec<String>,
    before: (usize, usize),
    after: (usize, usize),
}

/// The kind of group being typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    /// Typing; `word` once a word character was typed in it.
    Typing { word: bool },
    /// Deleting character by character.
    Deleting,
}

/// The group being typed: its kind, the cursor before it and after its last edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Open {
    run: Run,
    before: (usize, usize),
    at: (usize, usize),
}

/// What one change of the box is, for grouping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A character typed.
    Typed(char),
    /// A character deleted.
    Deleted,
    /// A change that is a step of its own (a kill, a yank, a paste).
    Whole,
}

/// A text box with undo and redo by edit group (see the module's doc). It derefs to its
/// editor widget for drawing and moving; a change made there straight is still undone, as a
/// step of its own or with the group being typed.
#[derive(Debug, Clone)]
pub struct TextBox {
    area: TextArea<'static>,
    /// The lines as the last closed group left them.
    base: Vec<String>,
    undo: Vec<Change>,
    redo: Vec<Change>,
    open: Option<Open>,
}

impl Default for TextBox {
    fn default() -> Self {
        TextBox::new(TextArea::default())
    }
}

impl Deref for TextBox {
    type Target = TextArea<'static>;
    fn deref(&self) -> &Self::Target {
        &self.area
    }
}

impl DerefMut for TextBox {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.area
    }
}

fn cursor(ta: &TextArea<'_>) -> (usize, usize) {
    let c = ta.cursor();
    (c.0, c.1)
}

impl TextBox {
    /// A box over `area`, with no history yet (the widget's own is turned off).
    pub fn new(mut area: TextArea<'static>) -> TextBox {
        area.set_max_histories(0);
        TextBox {
            base: area.lines().to_vec(),
            area,
            undo: Vec::new(),
            redo: Vec::new(),
            open: None,
        }
    }

    /// A key typed into the box: a readline edit (see [`readline`]), a character, or the
    /// widget's own keys for the rest (Enter, Tab, Shift with a move selecting). `single_line`
    /// boxes take no line break. Returns whether the text changed.
    pub fn key(&mut self, ev: &KeyEvent, kill: &mut String, single_line: bool) -> bool {
        let plain = !ev
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        if let Some(edit) = readline::edit_of(ev) {
            let kind = match edit {
                Edit::DeleteBack | Edit::DeleteForward => Kind::Deleted,
                _ => Kind::Whole,
            };
            if !edit.changes() {
                readline::apply(&mut self.area, edit, kill);
                self.close();
                return false;
            }
            return self.change(kind, |ta| readline::apply(ta, edit, kill));
        }
        match ev.code {
            KeyCode::Char(c) if plain && !c.is_control() => self.change(Kind::Typed(c), |ta| {
                ta.insert_char(c);
                true
            }),
            KeyCode::Enter if plain && !single_line => self.change(Kind::Typed('\n'), |ta| {
                ta.insert_newline();
                true
            }),
            KeyCode::Enter => false,
            // The widget's C-u and C-r are its history's, which is this box's; C-j and C-m
            // would break a line.
            KeyCode::Char('u' | 'r' | 'j' | 'm') if !plain => false,
            _ => {
                let before = cursor(&self.area);
                let changed = self.change(Kind::Whole, |ta| ta.input(*ev));
                if !changed && cursor(&self.area) != before {
                    self.close();
                }
                changed
            }
        }
    }

    /// Inserts `text` at the cursor as one step (a paste, a template).
    pub fn insert(&mut self, text: &str) -> bool {
        self.change(Kind::Whole, |ta| ta.insert_str(text))
    }

    /// Applies `f` as a change of `kind`, grouped with the group being typed when it goes on
    /// from where that one left the cursor.
    fn change(&mut self, kind: Kind, f: impl FnOnce(&mut TextArea<'static>) -> bool) -> bool {
        let here = cursor(&self.area);
        let goes_on = self.open.filter(|o| o.at == here).map(|o| o.run);
        let run = match (kind, goes_on) {
            (Kind::Typed(c), Some(Run::Typing { word })) if !word || is_word(c) => {
                Some(Run::Typing {
                    word: word || is_word(c),
                })
            }
            (Kind::Deleted, Some(Run::Deleting)) => Some(Run::Deleting),
            _ => None,
        };
        if run.is_none() {
            self.close();
        }
        let before = self.open.map(|o| o.before).unwrap_or(here);
        if !f(&mut self.area) {
            return false;
        }
        let at = cursor(&self.area);
        match (kind, run) {
            (Kind::Whole, _) => self.close_from(before),
            (_, Some(run)) => self.open = Some(Open { run, before, at }),
            (Kind::Typed(c), None) => {
                self.open = Some(Open {
                    run: Run::Typing { word: is_word(c) },
                    before,
                    at,
                })
            }
            (Kind::Deleted, None) => {
                self.open = Some(Open {
                    run: Run::Deleting,
                    before,
                    at,
                })
            }
        }
        true
    }

    /// Ends the group being typed: what changed since the last step becomes a step.
    fn close(&mut self) {
        let before = self
            .open
            .map(|o| o.before)
            .unwrap_or_else(|| cursor(&self.area));
        self.close_from(before);
    }

    fn close_from(&mut self, before: (usize, usize)) {
        self.open = None;
        let now = self.area.lines();
        let old = &self.base;
        let first = old.iter().zip(now).take_while(|(a, b)| a == b).count();
        let most = old.len().min(now.len()) - first;
        let last = (old.iter().rev().zip(now.iter().rev()))
            .take(most)
            .take_while(|(a, b)| a == b)
            .count();
        if first == old.len() && first == now.len() {
            return;
        }
        let change = Change {
            at: first,
            removed: old[first..old.len() - last].to_vec(),
            inserted: now[first..now.len() - last].to_vec(),
            before,
            after: cursor(&self.area),
        };
        self.base
            .splice(first..old.len() - last, change.inserted.iter().cloned());
        self.redo.clear();
        if self.undo.len() == KEPT {
            self.undo.remove(0);
        }
        self.undo.push(change);
    }

    /// Takes back the last step; whether there was one.
    pub fn undo(&mut self) -> bool {
        self.close();
        let Some(change) = self.undo.pop() else {
            return false;
        };
        self.put(&change.inserted, &change.removed, change.at, change.before);
        self.redo.push(change);
        true
    }

    /// Does again the last step undone; whether there was one.
    pub fn redo(&mut self) -> bool {
        self.close();
        let Some(change) = self.redo.pop() else {
            return false;
        };
        self.put(&change.removed, &change.inserted, change.at, change.after);
        self.undo.push(change);
        true
    }

    /// Replaces the lines `from` at `at` with `to`, and puts the cursor at `cursor`.
    fn put(&mut self, from: &[String], to: &[String], at: usize, cursor: (usize, usize)) {
        self.base.splice(at..at + from.len(), to.iter().cloned());
        // The widget has no way to set its lines: it is emptied and given them again (its
        // yank buffer, which the emptying fills, kept as it was).
        let yank = self.area.yank_text();
        self.area.cancel_selection();
        self.area.clear();
        self.area.insert_str(self.base.join("\n"));
        self.area.set_yank_text(yank);
        let row = cursor.0.min(self.base.len() - 1);
        let col = cursor.1.min(self.base[row].chars().count());
        jump(&mut self.area, row, col);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::keymap::Key;

    fn key(name: &str) -> KeyEvent {
        let k = Key::parse(name).unwrap();
        KeyEvent::new(k.code, k.mods)
    }

    fn type_in(b: &mut TextBox, text: &str, kill: &mut String) {
        for c in text.chars() {
            let ev = match c {
                '\n' => KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
                c => KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
            };
            b.key(&ev, kill, false);
        }
    }

    fn text(b: &TextBox) -> String {
        b.lines().join("\n")
    }

    #[test]
    fn undo_takes_back_a_word_at_a_time() {
        let (mut b, mut kill) = (TextBox::default(), String::new());
        type_in(&mut b, "hello big world", &mut kill);
        assert!(b.undo());
        assert_eq!(text(&b), "hello big");
        assert!(b.undo());
        assert_eq!(text(&b), "hello");
        assert!(b.redo());
        assert_eq!(text(&b), "hello big");
        assert!(b.undo() && b.undo());
        assert_eq!(text(&b), "");
        assert!(!b.undo());
        assert!(b.redo() && b.redo() && b.redo());
        assert_eq!(text(&b), "hello big world");
        assert!(!b.redo());
        assert_eq!(b.cursor(), (0, 15));
    }

    #[test]
    fn a_line_break_a_kill_a_paste_and_a_move_each_end_a_group() {
        let (mut b, mut kill) = (TextBox::default(), String::new());
        type_in(&mut b, "one, two\nthree", &mut kill);
        b.key(&key("ctrl-w"), &mut kill, false);
        assert_eq!(text(&b), "one, two\n");
        b.insert("pasted");
        b.key(&key("ctrl-a"), &mut kill, false);
        type_in(&mut b, "x", &mut kill);
        assert_eq!(text(&b), "one, two\nxpasted");
        let undone: Vec<String> = std::iter::from_fn(|| b.undo().then(|| text(&b))).collect();
        assert_eq!(
            undone,
            [
                "one, two\npasted",
                "one, two\n",
                "one, two\nthree",
                "one, two",
                "one",
                "",
            ]
        );
    }

    #[test]
    fn a_run_of_deletes_is_one_step_and_typing_anew_forgets_redo() {
        let (mut b, mut kill) = (TextBox::default(), String::new());
        type_in(&mut b, "abcdef", &mut kill);
        for _ in 0..3 {
            b.key(&key("backspace"), &mut kill, false);
        }
        assert_eq!(text(&b), "abc");
        assert!(b.undo());
        assert_eq!(text(&b), "abcdef");
        assert_eq!(b.cursor(), (0, 6));
        assert!(b.undo());
        assert_eq!(text(&b), "");
        type_in(&mut b, "new", &mut kill);
        assert!(!b.redo());
        assert!(b.undo());
        assert_eq!(text(&b), "");
    }

    #[test]
    fn changes_made_on_the_widget_straight_are_undone_too() {
        let (mut b, mut kill) = (TextBox::default(), String::new());
        b.insert_str("from outside");
        type_in(&mut b, " typed", &mut kill);
        assert!(b.undo());
        assert_eq!(text(&b), "from outside");
        assert!(b.undo());
        assert_eq!(text(&b), "");
    }

    #[test]
    fn a_long_body_keeps_only_the_lines_each_step_changed() {
        let lines: Vec<String> = (0..2000).map(|i| format!("line {i}")).collect();
        let (mut b, mut kill) = (TextBox::new(TextArea::new(lines)), String::new());
        jump(&mut b, 1999, 9);
        type_in(&mut b, " more", &mut kill);
        b.close();
        assert_eq!(b.undo.len(), 1);
        assert_eq!(b.undo[0].removed, ["line 1999"]);
        assert!(b.undo());
        assert_eq!(b.lines().len(), 2000);
        assert_eq!(b.lines()[1999], "line 1999");
    }
}
