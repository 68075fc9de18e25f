//! Writing in the real app, at 80×24 and 200×50: `N`'s suggested body cleared by one key, the
//! context and the body written with readline keys (`C-w`, `C-a`, `C-e`, `M-Bksp`, `M-b`,
//! `C-k`, `M-y`), CLOSE picked by its letter, the whole envelope seen (`C-o`) down to `sig:`
//! and `[[END]]` before `C-y`, and what `C-y` copied read back from tmux's paste buffer, where
//! OSC 52 put it.

use crate::helpers::tmux;

use tmux::Term;

fn readline_keys_write_exactly_the_envelope_meant(width: u16, height: u16) {
    let Some(t) = Term::new() else { return };
    std::fs::write(
        t.path("config.toml"),
        "[compose]\nfrom = \"human://kalle\"\nuser = \"kalle\"\n\n\
         [[contacts]]\nname = \"Claude\"\naddress = \"claude://session/1\"\n",
    )
    .unwrap();
    t.start(width, height, &[]);
    t.wait_for("Empty database");
    t.keys(&["N"]);
    t.wait_for("pick a contact");
    t.keys(&["Enter"]);
    t.wait_for("To Claude");
    // The context prompt: C-w kills the word mistyped.
    t.type_text("kyoto trpi");
    t.wait_for("kyoto trpi");
    t.keys(&["C-w"]);
    t.type_text("trip");
    t.wait_for("context: kyoto trip▏");
    t.keys(&["Enter"]);
    t.wait_for("First envelope to Claude");
    t.wait_for("Please answer with one envelope");

    // The suggestion is selected: one Backspace clears it.
    t.keys(&["BSpace"]);
    t.wait_gone("Please answer with one envelope");
    t.type_text("new world");
    t.keys(&["C-a"]);
    t.type_text("Hello ");
    t.keys(&["C-e"]);
    t.type_text(" extra words");
    t.wait_for("Hello new world extra words");
    t.keys(&["C-w", "M-BSpace", "BSpace"]);
    t.type_text(".");
    t.keys(&["M-b", "M-b"]);
    t.type_text("brave ");
    t.wait_for("Hello brave new world.");
    // C-k kills to the end of the line; M-y yanks it back (C-y copies in the composer).
    t.keys(&["C-k"]);
    t.wait_gone("new world.");
    t.keys(&["M-y"]);
    t.wait_for("Hello brave new world.");

    // CLOSE by its letter, in the picker's list.
    t.keys(&["Tab", "Tab", "Tab"]);
    let s = t.wait_for("[REQUEST]");
    for name in ["RESPOND", "POLL", "BROADCAST", "CLOSE"] {
        assert!(s.contains(name), "the picker lists {name}:\n{s}");
    }
    t.keys(&["C"]);
    t.wait_for("[CLOSE]");

    // The preview beside the form does not hold the envelope's end at 80×24; C-o shows the
    // copy over the whole screen, and its end is seen before C-y.
    let s = t.screen();
    if height == 24 {
        assert!(!s.contains("[[END]]"), "{s}");
        assert!(s.contains("C-o shows it all"), "{s}");
    }
    t.keys(&["C-o"]);
    t.wait_for("Esc back");
    t.keys(&["G"]);
    let s = t.wait_for("[[END]]");
    for want in [
        "[[human://kalle→claude://session/1 v1]]",
        "intent: CLOSE",
        "  Hello brave new world.",
        "sig: none",
    ] {
        assert!(s.contains(want), "{want} before C-y:\n{s}");
    }
    t.keys(&["C-y"]);
    let copied = t.wait_buffer("the first envelope", |b| {
        b.contains("intent: CLOSE") && b.contains("[[END]]")
    });
    let read = crosstalk::protocol::extract(&copied, &Default::default());
    let env = &read.envelopes.last().expect("the envelope").envelope;
    assert_eq!(
        env.body.as_deref(),
        Some("Hello brave new world."),
        "{copied}"
    );
    assert_eq!(env.intent_raw(), Some("CLOSE"));
    assert_eq!(env.context(), Some("kyoto trip"));
    assert_eq!(env.banner.to, "claude://session/1");
    t.wait_for("1 thread");
    t.type_text("q");
    assert_eq!(t.wait_exit(), 0);
}

#[test]
fn readline_keys_write_the_envelope_meant_at_80x24() {
    readline_keys_write_exactly_the_envelope_meant(80, 24);
}

#[test]
fn readline_keys_write_the_envelope_meant_at_200x50() {
    readline_keys_write_exactly_the_envelope_meant(200, 50);
}

/// `[compose] editor_first`: `n` opens `$EDITOR` at once; its text is the body when the
/// composer shows.
#[test]
fn editor_first_opens_the_editor_before_the_composer() {
    let Some(mut t) = Term::new() else { return };
    std::fs::write(t.path("config.toml"), "[compose]\neditor_first = true\n").unwrap();
    let editor = t.path("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nprintf 'written before the form\\n' > \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    t.app_env
        .push(("EDITOR".into(), editor.to_str().unwrap().into()));
    t.start(80, 24, &[]);
    t.wait_for("Empty database");
    t.keys(&["n"]);
    let s = t.wait_for("Body edited in $EDITOR.");
    assert!(s.contains("written before the form"), "{s}");
    t.keys(&["Escape"]);
    t.wait_for("Draft kept");
    t.type_text("q");
    assert_eq!(t.wait_exit(), 0);
}
