//! `N` in the real app: pick a contact from the address book, type the context, and C-y
//! copies the primer followed by a valid first envelope to that contact (read back from
//! tmux's paste buffer, where OSC 52 put it).

use crate::helpers::tmux;

use tmux::Term;

#[test]
fn new_conversation_copies_the_primer_and_a_valid_first_envelope() {
    let Some(t) = Term::new() else { return };
    std::fs::write(
        t.path("config.toml"),
        "[compose]\nfrom = \"human://kalle\"\nuser = \"kalle\"\n\n\
         [[contacts]]\nname = \"Claude\"\naddress = \"claude://session/1\"\n\n\
         [[contacts]]\nname = \"Gemini\"\naddress = \"gemini://chat/42\"\npreamble = \"Gemini, please read this first.\"\n",
    )
    .unwrap();
    t.start(120, 30, &[]);
    t.wait_for("Empty database");
    t.keys(&["N"]);
    t.wait_for("pick a contact");
    assert!(t.screen().contains("gemini://chat/42"));
    t.keys(&["j", "Enter"]);
    t.wait_for("To Gemini");
    t.type_text("kyoto trip");
    t.keys(&["Enter"]);
    t.wait_for("First envelope to Gemini");
    t.keys(&["C-y"]);
    let copied = t.wait_buffer("the primer", |b| b.contains("# How to answer"));
    assert!(
        copied.starts_with("Gemini, please read this first.\n\n# How to answer"),
        "{copied}"
    );
    let ex = crosstalk::protocol::extract(&copied, &Default::default());
    assert_eq!(
        ex.envelopes.len(),
        2,
        "the primer's example and the first envelope"
    );
    let first = &ex.envelopes[1];
    assert!(
        first.diagnostics.iter().all(|d| !d.is_error()),
        "{:?}",
        first.diagnostics
    );
    assert_eq!(first.envelope.banner.from, "human://kalle");
    assert_eq!(first.envelope.banner.to, "gemini://chat/42");
    assert_eq!(first.envelope.banner.version, "v1");
    assert_eq!(first.envelope.context(), Some("kyoto trip"));
    assert_eq!(first.envelope.intent_raw(), Some("REQUEST"));
    assert!(first.envelope.session().is_some());
    // Stored and awaiting a reply, like any envelope copied from the composer.
    t.wait_for("1 thread");
}
