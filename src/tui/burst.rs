//! A paste from a terminal without bracketed paste arrives as keys: hundreds of them at once,
//! where a person types one at a time. Run as commands, a pasted envelope would open replies,
//! save drafts and type the rest into them. A burst of keys read without waiting that is
//! evidently text (only characters, line breaks and tabs; several lines; more than a person
//! types between two frames) is taken as the paste it is, and lands where a bracketed paste
//! lands: the paste preview, or the text box that has the focus.

use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// The fewest line breaks in a burst taken as a paste: a command line and its Enter, a key
/// held down or a few keys sent together by a script are not pastes.
const MIN_LINES: usize = 2;
/// The fewest characters in a burst taken as a paste.
const MIN_CHARS: usize = 32;

/// The text of `events` when they are a paste: every one a key press of text, with at least
/// [`MIN_LINES`] line breaks and [`MIN_CHARS`] characters. `None` otherwise: the events are
/// keys, to be acted on one by one.
pub(crate) fn pasted_text(events: &[Event]) -> Option<String> {
    if events.len() < MIN_CHARS {
        return None;
    }
    let mut text = String::with_capacity(events.len());
    let mut lines = 0;
    for ev in events {
        let Event::Key(key) = ev else { return None };
        match text_of(key)? {
            '\n' => {
                lines += 1;
                text.push('\n');
            }
            c => text.push(c),
        }
    }
    (lines >= MIN_LINES).then_some(text)
}

/// The character `ev` types, when it is a key press that types one (see [`text_of`]): the
/// rest of a paste that arrives in pieces (over SSH) is added while it is text.
pub(crate) fn typed(ev: &Event) -> Option<char> {
    match ev {
        Event::Key(key) => text_of(key),
        _ => None,
    }
}

/// The character a key press types, when it types one: a character with no modifier but
/// Shift, Enter and Ctrl-J (a line feed in raw mode) as a line break, Tab.
fn text_of(key: &KeyEvent) -> Option<char> {
    if key.kind != KeyEventKind::Press {
        return None;
    }
    let plain = (key.modifiers - KeyModifiers::SHIFT).is_empty();
    match key.code {
        KeyCode::Char('j') if key.modifiers == KeyModifiers::CONTROL => Some('\n'),
        KeyCode::Char(c) if plain => Some(c),
        KeyCode::Enter if plain => Some('\n'),
        KeyCode::Tab if plain => Some('\t'),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn keys(text: &str) -> Vec<Event> {
        text.chars()
            .map(|c| {
                let code = match c {
                    '\n' => KeyCode::Enter,
                    '\t' => KeyCode::Tab,
                    c => KeyCode::Char(c),
                };
                Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
            })
            .collect()
    }

    #[test]
    fn an_envelope_typed_at_once_is_a_paste_of_its_text() {
        let env = "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nintent: NACK\nbody: |\n  no\n[[END]]\n";
        assert_eq!(pasted_text(&keys(env)).as_deref(), Some(env));
    }

    #[test]
    fn what_a_person_or_a_script_sends_as_keys_stays_keys() {
        for text in [
            "jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj",
            "/search words\n",
            "q",
            "a\nb\nc",
        ] {
            assert_eq!(pasted_text(&keys(text)), None, "{text:?}");
        }
        // One key that types nothing (Esc, an arrow, a Ctrl chord) and it is no paste.
        let mut events = keys("line one of a paste\nline two of a paste\nthree\n");
        events.insert(
            5,
            Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)),
        );
        assert_eq!(pasted_text(&events), None);
        let mut events = keys("line one of a paste\nline two of a paste\nthree\n");
        events.push(Event::Key(KeyEvent::new(
            KeyCode::Char('y'),
            KeyModifiers::CONTROL,
        )));
        assert_eq!(pasted_text(&events), None);
        let mut events = keys("line one of a paste\nline two of a paste\nthree\n");
        events.push(Event::Resize(80, 24));
        assert_eq!(pasted_text(&events), None);
    }

    #[test]
    fn a_raw_line_feed_is_a_line_break() {
        let mut events = keys("a line that is long enough to paste");
        for _ in 0..2 {
            events.push(Event::Key(KeyEvent::new(
                KeyCode::Char('j'),
                KeyModifiers::CONTROL,
            )));
        }
        assert_eq!(
            pasted_text(&events).as_deref(),
            Some("a line that is long enough to paste\n\n")
        );
    }

    proptest! {
        /// Text keys become exactly their text, or stay keys; never another text.
        #[test]
        fn a_paste_is_the_text_typed(text in "[a-z \\n\\t→é]{0,200}") {
            if let Some(pasted) = pasted_text(&keys(&text)) {
                prop_assert_eq!(&pasted, &text);
                prop_assert!(text.matches('\n').count() >= MIN_LINES);
                prop_assert!(text.chars().count() >= MIN_CHARS);
            }
        }
    }
}
