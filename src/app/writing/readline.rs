//! The readline keys every text box of the app shares — the composer's boxes, the search and
//! command prompts, the thread filter, `N`'s context and the paste box: `C-a` `C-e` to the
//! line's ends, `C-k` `C-u` kill to them, `C-w` and `M-Bksp` kill the word before, `M-d` the
//! word after, `M-b` `M-f` (and `C-←` `C-→`) move by words, `C-y` yanks back what was killed
//! (`M-y` too: in the composer `C-y` copies the envelope), `M-s` selects all so that the next
//! key replaces it (a line of a prompt, which keeps no selection, is cleared as by a kill).
//!
//! Undo and redo (`C-z`, `C-r`, keymap actions) go by word in a line too ([`LineUndo`]).
//!
//! One table ([`EDITS`]) is the source of the keys, of what help says of them, and of the
//! keys a config cannot bind where text is typed ([`is_edit_key`]). A word is a run of
//! letters, digits and `_`, as readline's `M-f` and `M-b` count them. What is killed is kept
//! in one buffer for every box (the app's), so a word killed in the prompt yanks in the body.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::{CursorMove, TextArea};

use crate::app::keymap::Key;
use crate::app::writing::editor_rows::jump;

/// One editing command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edit {
    /// To the start of the line.
    LineStart,
    /// To the end of the line.
    LineEnd,
    /// A character back.
    Back,
    /// A character forward.
    Forward,
    /// To the start of this word or the one before.
    WordBack,
    /// To the end of this word or the one after.
    WordForward,
    /// Kill from the cursor to the end of the line (at its end: the line break).
    KillToEnd,
    /// Kill from the start of the line to the cursor (at its start: the line break).
    KillToStart,
    /// Kill the word before the cursor.
    KillWordBack,
    /// Kill the word after the cursor.
    KillWordForward,
    /// Put back what was killed last.
    Yank,
    /// Select the whole text: the next key typed replaces it, Backspace clears it.
    SelectAll,
    /// Delete the character before the cursor (or the selection).
    DeleteBack,
    /// Delete the character under the cursor (or the selection).
    DeleteForward,
}

impl Edit {
    /// Whether it changes the text (else it only moves the cursor or selects).
    pub(crate) fn changes(self) -> bool {
        !matches!(
            self,
            Edit::LineStart
                | Edit::LineEnd
                | Edit::Back
                | Edit::Forward
                | Edit::WordBack
                | Edit::WordForward
                | Edit::SelectAll
        )
    }
}

/// The keys of each edit, as config names them, and what help says of it.
pub(crate) const EDITS: &[(&str, Edit, &str)] = &[
    ("ctrl-a home", Edit::LineStart, "start of the line"),
    ("ctrl-e end", Edit::LineEnd, "end of the line"),
    ("ctrl-b left", Edit::Back, "a character back"),
    ("ctrl-f right", Edit::Forward, "a character forward"),
    ("alt-b ctrl-left", Edit::WordBack, "a word back"),
    ("alt-f ctrl-right", Edit::WordForward, "a word forward"),
    ("ctrl-k", Edit::KillToEnd, "kill to the end of the line"),
    ("ctrl-u", Edit::KillToStart, "kill to the start of the line"),
    (
        "ctrl-w alt-backspace",
        Edit::KillWordBack,
        "kill the word before the cursor",
    ),
    (
        "alt-d",
        Edit::KillWordForward,
        "kill the word after the cursor",
    ),
    (
        "ctrl-y alt-y",
        Edit::Yank,
        "yank: put back what was killed (M-y in the composer, where C-y copies)",
    ),
    (
        "alt-s",
        Edit::SelectAll,
        "select all: the next key typed replaces it (a one-line box is cleared, C-y puts it back)",
    ),
    ("backspace", Edit::DeleteBack, "delete the character before"),
    (
        "delete ctrl-d",
        Edit::DeleteForward,
        "delete the character under the cursor",
    ),
];

/// The edit a key press asks for, if any. Shift with a key that moves is the widget's own
/// selecting move, not an edit.
pub(crate) fn edit_of(ev: &KeyEvent) -> Option<Edit> {
    let shifted =
        ev.modifiers.contains(KeyModifiers::SHIFT) && !matches!(ev.code, KeyCode::Char(_));
    if shifted {
        return None;
    }
    let key = Key::from_event(ev);
    edit_of_key(key)
}

fn edit_of_key(key: Key) -> Option<Edit> {
    EDITS.iter().find_map(|(keys, edit, _)| {
        keys.split(' ')
            .any(|k| Key::parse(k) == Some(key))
            .then_some(*edit)
    })
}

/// Whether `key` edits text in every box (see [`EDITS`]): where text is typed, a config that
/// bound it would take that edit away.
pub(crate) fn is_edit_key(key: Key) -> bool {
    edit_of_key(key).is_some()
}

/// Help's rows for the editing keys: (keys, what).
pub(crate) fn help_rows() -> Vec<(String, String)> {
    EDITS
        .iter()
        .map(|(keys, _, what)| {
            let keys: Vec<String> = keys
                .split(' ')
                .filter_map(Key::parse)
                .map(|k| k.to_string())
                .collect();
            (keys.join(" "), (*what).to_string())
        })
        .collect()
}

/// Whether `c` belongs to a word (for motion, kills and undo's word groups alike).
pub(crate) fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The column `M-b` goes to from `col` of `line`: back over what is not a word, then over the
/// word.
pub(crate) fn word_start(line: &str, col: usize) -> usize {
    let chars: Vec<char> = line.chars().collect();
    let mut at = col.min(chars.len());
    while at > 0 && !is_word(chars[at - 1]) {
        at -= 1;
    }
    while at > 0 && is_word(chars[at - 1]) {
        at -= 1;
    }
    at
}

/// The column `M-f` goes to from `col` of `line`: over what is not a word, then to the
/// word's end.
pub(crate) fn word_end(line: &str, col: usize) -> usize {
    let chars: Vec<char> = line.chars().collect();
    let mut at = col.min(chars.len());
    while at < chars.len() && !is_word(chars[at]) {
        at += 1;
    }
    while at < chars.len() && is_word(chars[at]) {
        at += 1;
    }
    at
}

/// Applies `edit` to `ta`; `kill` is the buffer killed text goes to and yanks come from.
/// Returns whether the text changed. A move ends a selection; a kill with a selection kills
/// the selection.
pub(crate) fn apply(ta: &mut TextArea<'_>, edit: Edit, kill: &mut String) -> bool {
    let (row, col) = (ta.cursor().0, ta.cursor().1);
    let line_len = ta.lines()[row].chars().count();
    let last_row = ta.lines().len() - 1;
    let selecting = ta.is_selecting();
    if !edit.changes() {
        ta.cancel_selection();
    }
    match edit {
        Edit::LineStart => ta.move_cursor(CursorMove::Head),
        Edit::LineEnd => ta.move_cursor(CursorMove::End),
        Edit::Back => ta.move_cursor(CursorMove::Back),
        Edit::Forward => ta.move_cursor(CursorMove::Forward),
        Edit::WordBack if col == 0 => ta.move_cursor(CursorMove::Back),
        Edit::WordBack => jump(ta, row, word_start(&ta.lines()[row], col)),
        Edit::WordForward if col == line_len => ta.move_cursor(CursorMove::Forward),
        Edit::WordForward => jump(ta, row, word_end(&ta.lines()[row], col)),
        Edit::SelectAll => {
            jump(ta, last_row, ta.lines()[last_row].chars().count());
            let end = ta.cursor();
            jump(ta, 0, 0);
            ta.start_selection();
            jump(ta, end.0, end.1);
        }
        Edit::Yank => {
            if kill.is_empty() {
                return false;
            }
            ta.set_yank_text(kill.as_str());
            return ta.paste();
        }
        Edit::DeleteBack => return ta.delete_char(),
        Edit::DeleteForward => return ta.delete_next_char(),
        Edit::KillToEnd | Edit::KillToStart | Edit::KillWordBack | Edit::KillWordForward => {
            let killed = if selecting {
                ta.cut()
            } else {
                let (from, to) = match edit {
                    Edit::KillToEnd => (col, line_len),
                    Edit::KillToStart => (0, col),
                    Edit::KillWordBack => (word_start(&ta.lines()[row], col), col),
                    _ => (col, word_end(&ta.lines()[row], col)),
                };
                if from == to {
                    // At the line's edge: the line break goes, as readline joins lines.
                    let back = matches!(edit, Edit::KillToStart | Edit::KillWordBack);
                    let joined = if back {
                        row > 0 && ta.delete_char()
                    } else {
                        row < last_row && ta.delete_next_char()
                    };
                    if joined {
                        *kill = "\n".into();
                    }
                    return joined;
                }
                jump(ta, row, from);
                ta.delete_str(to - from)
            };
            if killed {
                *kill = ta.yank_text();
            }
            return killed;
        }
    }
    false
}

/// Steps a line keeps for undo.
const LINE_KEPT: usize = 100;

/// Undo and redo for one line of text (a prompt, the filter), by the groups a box's go by
/// (see [`super::text_box`]): a word typed with what precedes it, a run of deletes, each
/// other change; a move ends a group. A line is short: a step keeps the line as it was.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LineUndo {
    undo: Vec<(String, Option<usize>)>,
    redo: Vec<(String, Option<usize>)>,
    /// The group being typed — `Some(word)` typing (whether a word character was typed in
    /// it), `None` deleting — and the column its last edit left the cursor at.
    open: Option<(Option<bool>, usize)>,
}

impl LineUndo {
    /// Takes `text` back to before the last step; whether there was one.
    pub(crate) fn undo(&mut self, text: &mut String, at: &mut Option<usize>) -> bool {
        self.open = None;
        let Some((t, a)) = self.undo.pop() else {
            return false;
        };
        self.redo
            .push((std::mem::replace(text, t), std::mem::replace(at, a)));
        true
    }

    /// Does the last step undone again; whether there was one.
    pub(crate) fn redo(&mut self, text: &mut String, at: &mut Option<usize>) -> bool {
        self.open = None;
        let Some((t, a)) = self.redo.pop() else {
            return false;
        };
        self.undo
            .push((std::mem::replace(text, t), std::mem::replace(at, a)));
        true
    }
}

/// A key typed into one line of text (a prompt, the filter): the text, where the cursor is in
/// characters (`None`: at the end, where text set from outside leaves it), the kill buffer and
/// the line's undo. Returns whether the text changed (a move changes only `at`).
pub(crate) fn edit_line(
    text: &mut String,
    at: &mut Option<usize>,
    kill: &mut String,
    undo: &mut LineUndo,
    ev: &KeyEvent,
) -> bool {
    let len = text.chars().count();
    let col = at.unwrap_or(len).min(len);
    let typed = match ev.code {
        KeyCode::Char(c)
            if !ev
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                && !c.is_control() =>
        {
            Some(c)
        }
        _ => None,
    };
    let edit = edit_of(ev);
    if typed.is_none() && edit.is_none() {
        return false;
    }
    // Whether this change goes on with the group being typed (see `LineUndo`).
    let typing = |word: Option<bool>| match (typed, edit, word) {
        (Some(c), _, Some(word)) => !word || is_word(c),
        (None, Some(Edit::DeleteBack | Edit::DeleteForward), None) => true,
        _ => false,
    };
    let goes_on = undo
        .open
        .is_some_and(|(word, left)| left == col && typing(word));
    let before = (text.clone(), *at);
    let mut ta = TextArea::new(vec![text.clone()]);
    ta.set_max_histories(0);
    jump(&mut ta, 0, col);
    let changed = match (typed, edit) {
        (Some(c), _) => {
            ta.insert_char(c);
            true
        }
        (None, Some(Edit::SelectAll)) => {
            // A line keeps no selection between keys: select-all clears it, as a kill.
            if !text.is_empty() {
                *kill = text.clone();
            }
            ta.select_all();
            ta.cut()
        }
        (None, Some(edit)) => {
            // A one-line box has no line break to kill or to put back.
            let mut one_line = kill.replace('\n', " ");
            let changed = apply(&mut ta, edit, &mut one_line);
            let kills = matches!(
                edit,
                Edit::KillToEnd | Edit::KillToStart | Edit::KillWordBack | Edit::KillWordForward
            );
            if kills && changed {
                *kill = one_line;
            }
            changed
        }
        (None, None) => false,
    };
    let new_col = ta.cursor().1;
    let new = ta.into_lines().join(" ");
    *at = (new_col < new.chars().count()).then_some(new_col);
    if !changed {
        if new_col != col {
            undo.open = None;
        }
        return false;
    }
    *text = new;
    if !goes_on {
        if undo.undo.len() == LINE_KEPT {
            undo.undo.remove(0);
        }
        undo.undo.push(before);
    }
    undo.redo.clear();
    undo.open = match (typed, edit) {
        (Some(c), _) => {
            let word = goes_on && undo.open.and_then(|(w, _)| w).unwrap_or(false);
            Some((Some(word || is_word(c)), new_col))
        }
        (None, Some(Edit::DeleteBack | Edit::DeleteForward)) => Some((None, new_col)),
        _ => None,
    };
    true
}

/// Puts `piece` (made one line, without control characters) into `text` at the cursor `at`
/// (see [`edit_line`]), the cursor after it.
pub(crate) fn insert_line(text: &mut String, at: &mut Option<usize>, piece: &str) {
    let clean = crate::app::strip_controls(piece).0.replace('\n', " ");
    let (before, _) = split_at_cursor(text, *at);
    let byte = before.len();
    text.insert_str(byte, &clean);
    *at = at.map(|a| a + clean.chars().count());
}

/// `text` before the cursor `at` (see [`edit_line`]) and from it, for drawing the cursor.
pub(crate) fn split_at_cursor(text: &str, at: Option<usize>) -> (&str, &str) {
    let byte = at
        .and_then(|a| text.char_indices().nth(a))
        .map(|(i, _)| i)
        .unwrap_or(text.len());
    text.split_at(byte)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> KeyEvent {
        let k = Key::parse(name).unwrap();
        KeyEvent::new(k.code, k.mods)
    }

    fn typed(text: &str, keys: &[&str]) -> (String, usize, String) {
        let (mut t, mut at, mut kill) = (text.to_string(), None, String::new());
        let mut undo = LineUndo::default();
        for k in keys {
            edit_line(&mut t, &mut at, &mut kill, &mut undo, &key(k));
        }
        let col = at.unwrap_or(t.chars().count());
        (t, col, kill)
    }

    #[test]
    fn words_are_letters_digits_and_underscores() {
        assert_eq!(word_start("hello big_world", 15), 6);
        assert_eq!(word_start("hello, world", 7), 0);
        assert_eq!(word_end("hello, world", 5), 12);
        assert_eq!(word_end("hello, world", 0), 5);
        assert_eq!(word_start("", 0), 0);
        assert_eq!(word_end("日本語 text", 0), 3);
    }

    #[test]
    fn a_line_edits_as_readline_does() {
        assert_eq!(
            typed("hello world", &["ctrl-a", "ctrl-k"]),
            ("".into(), 0, "hello world".into())
        );
        assert_eq!(
            typed("hello world", &["ctrl-w"]),
            ("hello ".into(), 6, "world".into())
        );
        assert_eq!(
            typed("hello world", &["alt-backspace", "alt-backspace"]).0,
            ""
        );
        assert_eq!(
            typed("hello world", &["alt-b", "ctrl-u"]),
            ("world".into(), 0, "hello ".into())
        );
        assert_eq!(
            typed("hello world", &["ctrl-a", "alt-d"]),
            (" world".into(), 0, "hello".into())
        );
        assert_eq!(
            typed("hello world", &["ctrl-a", "alt-f", "x"]).0,
            "hellox world"
        );
        assert_eq!(
            typed(
                "hello world",
                &["ctrl-left", "ctrl-b", "ctrl-b", "ctrl-f", "y"]
            )
            .0,
            "helloy world"
        );
        assert_eq!(
            typed("hello world", &["home", "ctrl-right", "ctrl-e", "!"]).0,
            "hello world!"
        );
        // What was killed is put back where the cursor is.
        assert_eq!(
            typed("hello world", &["ctrl-w", "ctrl-a", "ctrl-y", "space"]).0,
            "world hello "
        );
        assert_eq!(
            typed("hello world", &["ctrl-w", "ctrl-a", "alt-y"]).0,
            "worldhello "
        );
        // Select all: typing replaces it, Backspace clears it.
        assert_eq!(typed("hello world", &["alt-s", "x"]).0, "x");
        assert_eq!(
            typed("hello world", &["alt-s", "ctrl-y", "ctrl-y"]).0,
            "hello worldhello world"
        );
        assert_eq!(
            typed("hello world", &["ctrl-a", "delete", "ctrl-d"]).0,
            "llo world"
        );
        // Nothing to kill: nothing changes, and the kill buffer keeps what it had.
        assert_eq!(
            typed("ab", &["ctrl-k", "ctrl-k"]),
            ("ab".into(), 2, "".into())
        );
    }

    #[test]
    fn a_line_undoes_by_word_and_by_kill() {
        let (mut t, mut at, mut kill) = (String::new(), None, String::new());
        let mut undo = LineUndo::default();
        let mut press = |t: &mut String, at: &mut Option<usize>, undo: &mut LineUndo, k: &str| {
            let ev = match k.chars().count() {
                1 => KeyEvent::new(KeyCode::Char(k.chars().next().unwrap()), KeyModifiers::NONE),
                _ => key(k),
            };
            edit_line(t, at, &mut kill, undo, &ev);
        };
        for k in "find this word".chars() {
            press(&mut t, &mut at, &mut undo, &k.to_string());
        }
        press(&mut t, &mut at, &mut undo, "ctrl-w");
        press(&mut t, &mut at, &mut undo, "backspace");
        press(&mut t, &mut at, &mut undo, "backspace");
        assert_eq!(t, "find thi");
        let mut steps = Vec::new();
        while undo.undo(&mut t, &mut at) {
            steps.push(t.clone());
        }
        assert_eq!(
            steps,
            ["find this ", "find this word", "find this", "find", ""]
        );
        assert!(undo.redo(&mut t, &mut at) && undo.redo(&mut t, &mut at));
        assert_eq!((t.as_str(), at), ("find this", None));
        // A new change forgets what redo had.
        press(&mut t, &mut at, &mut undo, "!");
        assert!(!undo.redo(&mut t, &mut at));
    }

    #[test]
    fn a_box_of_lines_joins_them_at_their_edges() {
        let mut ta = TextArea::new(vec!["one two".into(), "three".into()]);
        let mut kill = String::new();
        jump(&mut ta, 1, 0);
        assert!(apply(&mut ta, Edit::KillWordBack, &mut kill));
        assert_eq!(ta.lines(), ["one twothree"]);
        assert!(apply(&mut ta, Edit::KillToEnd, &mut kill));
        assert_eq!(
            (ta.lines(), kill.as_str()),
            (&["one two".to_string()][..], "three")
        );
        assert!(!apply(&mut ta, Edit::LineStart, &mut kill));
        assert!(apply(&mut ta, Edit::KillToEnd, &mut kill));
        assert_eq!(ta.lines(), [""]);
        assert!(apply(&mut ta, Edit::Yank, &mut kill));
        assert_eq!(ta.lines(), ["one two"]);
        // Select all then a kill takes it all.
        apply(&mut ta, Edit::SelectAll, &mut kill);
        assert!(apply(&mut ta, Edit::KillWordBack, &mut kill));
        assert_eq!(
            (ta.lines(), kill.as_str()),
            (&[String::new()][..], "one two")
        );
    }

    #[test]
    fn every_edit_key_parses_and_is_one_edit() {
        for (keys, edit, _) in EDITS {
            for k in keys.split(' ') {
                let key = Key::parse(k).unwrap_or_else(|| panic!("{k}"));
                assert_eq!(edit_of_key(key), Some(*edit), "{k}");
            }
        }
        // Shift with a move selects, as the widget does.
        let shifted = KeyEvent::new(KeyCode::Left, KeyModifiers::SHIFT);
        assert_eq!(edit_of(&shifted), None);
    }
}
