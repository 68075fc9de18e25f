//! Property tests: no input, however hostile, makes the rendering panic, let a control or bidi
//! character reach a span, or draw a line wider than asked.

use proptest::prelude::*;

use super::render;

/// Pieces of markdown syntax, terminal escapes, controls, bidi and invisible characters, wide
/// and combining characters, and words, to be strung together.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("# ".to_string()),
        Just("## ".to_string()),
        Just("**".to_string()),
        Just("*".to_string()),
        Just("_".to_string()),
        Just("~~".to_string()),
        Just("`".to_string()),
        Just("```rust\n".to_string()),
        Just("```\n".to_string()),
        Just("\n```\n".to_string()),
        Just("- ".to_string()),
        Just("1. ".to_string()),
        Just("- [x] ".to_string()),
        Just("> ".to_string()),
        Just("| a | b |\n|---|---|\n".to_string()),
        Just(" | ".to_string()),
        Just("[link](http://x.y/z)".to_string()),
        Just("![alt](i.png)".to_string()),
        Just("<b>".to_string()),
        Just("[^1]".to_string()),
        Just("\n[^1]: note\n".to_string()),
        Just("---\n".to_string()),
        Just("\n".to_string()),
        Just("\n\n".to_string()),
        Just("    ".to_string()),
        Just("\t".to_string()),
        Just("\u{1b}[31m".to_string()),
        Just("\u{1b}]8;;http://e\u{7}".to_string()),
        Just("\u{1b}]52;c;aGk=\u{1b}\\".to_string()),
        Just("\u{9b}2J".to_string()),
        Just("\r".to_string()),
        Just("\u{0}\u{8}\u{7f}".to_string()),
        Just("\u{202e}\u{2066}\u{2069}\u{200f}".to_string()),
        Just("\u{200b}\u{feff}\u{2060}".to_string()),
        Just("日本語".to_string()),
        Just("e\u{301}".to_string()),
        Just("👩‍💻❤\u{fe0f}".to_string()),
        "[a-z]{1,12}",
        "[a-z ]{1,30}",
        "\\PC{0,8}",
        any::<char>().prop_map(String::from),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..40).prop_map(|v| v.concat())
}

fn bad(c: char) -> bool {
    c.is_control() || crate::sanitize::is_unsafe(c)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn nothing_unsafe_reaches_a_span_and_no_line_is_too_wide(s in text(), width in 20usize..120) {
        let r = render(&s, width);
        for line in &r.lines {
            for span in &line.spans {
                prop_assert!(!span.content.chars().any(bad), "{:?} in {:?}", span.content, s);
            }
            prop_assert!(line.width() <= width, "{} > {width}: {:?} from {:?}", line.width(), line, s);
        }
        for b in &r.blocks {
            prop_assert!(b.lines.end <= r.lines.len());
        }
    }

    #[test]
    fn code_coloured_later_is_the_same(s in text(), width in 20usize..120) {
        let mut later = super::render_uncoloured(&s, width);
        later.colour_rows(0..later.lines.len());
        prop_assert_eq!(later, render(&s, width));
    }

    #[test]
    fn a_plain_paragraph_keeps_all_its_words(words in prop::collection::vec("[a-zA-Z0-9]{1,20}", 1..60), width in 20usize..100) {
        let text = words.join(" ");
        let shown = render(&text, width).plain_lines().join(" ");
        let shown: Vec<&str> = shown.split(' ').filter(|w| !w.is_empty()).collect();
        prop_assert_eq!(shown, words.iter().map(String::as_str).collect::<Vec<_>>());
    }
}
