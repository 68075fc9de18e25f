//! The app driven by hostile sequences of keys, pastes, ticks and resizes, on a database
//! holding the demo threads: it never panics, never draws a character a terminal would act
//! on, leaves the database consistent, and keeps every paste that is not typed into a text
//! box (the composer, search, the command line).
//!
//! Keys that hand work to the runtime outside the app (`:` commands that write files, `|`
//! pipes, `p` and `W` reading the system clipboard, `w` writing a paste to a file) are left
//! out: the harness has no runtime, and a test must not write into the working directory.

use crate::helpers::support;

use crosstalk::app::Action;
use crosstalk::app::popups::popup::Popup;
use crosstalk::sanitize::is_unsafe;
use proptest::prelude::*;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use support::{demo_store, harness};

#[derive(Debug, Clone)]
enum Step {
    Key(KeyCode, KeyModifiers),
    Paste(String),
    Tick,
    Resize(u16, u16),
}

fn key() -> impl Strategy<Value = Step> {
    let code = prop_oneof![
        8 => prop::sample::select(
            "jkhlgGuynrYvfHDXVNQsPEKcqeF?/>1a \u{e9}\u{202e}"
                .chars()
                .collect::<Vec<_>>()
        )
        .prop_map(KeyCode::Char),
        4 => prop::sample::select(vec![
            KeyCode::Enter,
            KeyCode::Esc,
            KeyCode::Tab,
            KeyCode::BackTab,
            KeyCode::Up,
            KeyCode::Down,
            KeyCode::Left,
            KeyCode::Right,
            KeyCode::PageUp,
            KeyCode::PageDown,
            KeyCode::Home,
            KeyCode::End,
            KeyCode::Backspace,
            KeyCode::Delete,
        ]),
    ];
    let mods = prop::sample::select(vec![
        KeyModifiers::NONE,
        KeyModifiers::NONE,
        KeyModifiers::NONE,
        KeyModifiers::SHIFT,
        KeyModifiers::CONTROL,
        KeyModifiers::ALT,
    ]);
    (code, mods).prop_filter_map("runtime keys", |(code, mods)| {
        // ctrl-e hands the body to `$EDITOR` (the runtime's), alt-| a pipe.
        let runtime = matches!(code, KeyCode::Char('e' | '|')) && mods != KeyModifiers::NONE;
        (!runtime).then_some(Step::Key(code, mods))
    })
}

/// Pastes as operators get them: envelopes (with hostile bodies and ids), fenced or quoted,
/// collapsed onto one line, or any text at all.
fn paste() -> impl Strategy<Value = String> {
    let body = "[ -~\u{e9}\u{1b}\u{7}\u{202e}\u{200b}\u{e0041}\t]{0,80}";
    let envelope = (
        body,
        prop::sample::select(vec![
            "01K0000000000000000000000A",
            "01K0000000000000000000000B",
            "not-an-id",
        ]),
        prop::sample::select(vec!["REQUEST", "RESPOND", "POLL", "ERROR", "HANDOFF"]),
    )
        .prop_map(|(body, id, intent)| {
            format!(
                "[[CLAUDE→CHATGPT v1.1]]\nthread: 01K00000000000000000000T00\nmessage: {id}\n\
                 intent: {intent}\nbody: |\n  {body}\nsig: none\n[[END]]\n"
            )
        });
    prop_oneof![
        3 => envelope.clone(),
        1 => envelope.clone().prop_map(|e| format!("Sure, here it is:\n```\n{e}```\n")),
        1 => envelope.clone().prop_map(|e| e.replace('\n', " ")),
        1 => envelope.prop_map(|e| e.lines().map(|l| format!("> {l}\n")).collect()),
        1 => "\\PC{0,200}",
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        10 => key(),
        2 => paste().prop_map(Step::Paste),
        1 => Just(Step::Tick),
        1 => (10u16..140, 3u16..50).prop_map(|(w, h)| Step::Resize(w, h)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn hostile_sessions_never_panic_nor_reach_the_terminal(
        steps in prop::collection::vec(step(), 1..60),
    ) {
        let mut t = harness(demo_store(), 100, 30);
        for step in &steps {
            match step {
                Step::Key(code, mods) => t.key(*code, *mods),
                Step::Paste(s) => t.act(Action::Paste(s.clone())),
                Step::Tick => t.act(Action::Tick),
                Step::Resize(w, h) => t.act(Action::Resize(*w, *h)),
            }
            if t.app.quit {
                break;
            }
            let screen = t.screen();
            let bad: Vec<char> = screen.chars().filter(|&c| is_unsafe(c) && c != '\t').collect();
            prop_assert!(bad.is_empty(), "after {:?}: {:?} on\n{}", step, bad, screen);
        }
        prop_assert!(t.app.store.integrity_check().unwrap());
    }

    #[test]
    fn every_paste_outside_a_text_box_is_kept(
        steps in prop::collection::vec(step(), 1..40),
    ) {
        let mut t = harness(demo_store(), 100, 30);
        let mut pasted = Vec::new();
        for step in &steps {
            match step {
                // Erasing may rightly take a paste with it.
                Step::Key(KeyCode::Char('X'), _) => {}
                Step::Key(code, mods) => t.key(*code, *mods),
                Step::Paste(s) => {
                    let into_box = t.app.composer.is_some()
                        || matches!(t.app.popup, Some(Popup::Search(_) | Popup::Command(_)))
                        || (t.app.popup.is_none() && t.app.list.filtering);
                    if !into_box && !s.trim().is_empty() {
                        pasted.push(s.replace("\r\n", "\n").replace('\r', "\n"));
                    }
                    t.act(Action::Paste(s.clone()));
                }
                Step::Tick => t.act(Action::Tick),
                Step::Resize(w, h) => t.act(Action::Resize(*w, *h)),
            }
            if t.app.quit {
                break;
            }
        }
        // Every stored paste's text (the demo's own are there too; an erased paste leaves a
        // gap in the ids, so each id up to a bound is read).
        let stored: Vec<String> = (1..=steps.len() as i64 + 100)
            .map(|id| t.app.store.paste_text(id).unwrap())
            .filter(|text| !text.is_empty())
            .collect();
        for p in &pasted {
            prop_assert!(
                stored.iter().any(|s| s.contains(p.as_str())),
                "paste not kept: {:?}\nstored: {:?}",
                p,
                stored
            );
        }
    }
}
