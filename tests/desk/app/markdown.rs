//! A markdown body as the inspector and the paste preview show it: rendered, with none of its
//! markup left on screen; `v` still shows the text as written.

use crate::helpers::support::harness;

use crosstalk::app::Action;
use crosstalk::store::Store;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};

/// A body with a heading, bold, a list, a table and code blocks in two languages.
const BODY: &str = "# Launch plan\n\nKalle says **ship it** on Friday,\nonce the checks pass.\n\n- build the release\n- tag it\n\n| step | command |\n|---|---|\n| build | cargo build |\n| test | cargo test |\n\n```rust\nfn main() { println!(\"go\"); }\n```\n\n```sh\necho shipped\n```\n";

fn envelope() -> String {
    let body: String = BODY
        .lines()
        .map(|l| {
            if l.is_empty() {
                "\n".to_string()
            } else {
                format!("  {l}\n")
            }
        })
        .collect();
    format!(
        "[[CLAUDE→human://op v1.1]]\nuser: kalle\nthread: 01KA0000000000000000000000\nmessage: 01KA0000000000000000000001\nintent: RESPOND\nbody: |\n{body}sig: none\n[[END]]\n"
    )
}

/// What markdown writes that a reader should not see.
fn markers(screen: &str) -> Vec<&'static str> {
    ["**", "```", "# Launch", "| ", "|---", "- build"]
        .into_iter()
        .filter(|m| screen.contains(m))
        .collect()
}

#[test]
fn a_markdown_body_is_rendered_with_no_markers_left() {
    let mut t = harness(Store::open_in_memory().unwrap(), 120, 60);
    t.act(Action::Paste(envelope()));
    let s = t.screen();
    // The preview's detail, under its rule: what the import will do, then the body.
    let detail = s
        .split("message 01KA0000000000000000000001")
        .nth(1)
        .unwrap_or("");
    assert!(
        detail.contains("Launch plan"),
        "the preview shows the body:\n{s}"
    );
    assert!(markers(detail).is_empty(), "{:?}\n{s}", markers(detail));
    t.key(KeyCode::Enter, KeyModifiers::NONE);
    let screen = t.screen();
    // The inspector: the pane under its title.
    let s = screen.split("Envelope — fields").nth(1).unwrap_or("");
    for shown in [
        "Launch plan",
        "Kalle says ship it on Friday, once the checks pass.",
        "• build the release",
        "step  │ command",
        "build │ cargo build",
        "[1] rust",
        "│ fn main() { println!(\"go\"); }",
        "[2] sh",
        "│ echo shipped",
    ] {
        assert!(s.contains(shown), "{shown:?} not on screen:\n{screen}");
    }
    assert!(markers(s).is_empty(), "{:?}\n{screen}", markers(s));
    // As received, the text is as written.
    t.keys("v");
    let s = t.screen();
    assert!(s.contains("**ship it**") && s.contains("```rust"), "{s}");
}
