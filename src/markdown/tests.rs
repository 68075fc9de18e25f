//! Examples of each construct as it reads on screen.

use ratatui::style::{Color, Modifier};

use super::*;

fn plain(text: &str, width: usize) -> Vec<String> {
    render(text, width).plain_lines()
}

/// The style of the first span holding `needle`.
fn style_of(r: &Rendered, needle: &str) -> ratatui::style::Style {
    r.lines
        .iter()
        .flat_map(|l| &l.spans)
        .find(|s| s.content.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not rendered"))
        .style
}

#[test]
fn a_hard_wrapped_paragraph_is_reflowed_to_the_width() {
    let text = "The quick brown fox\njumps over the\nlazy dog.\n\nSecond one.";
    assert_eq!(
        plain(text, 30),
        [
            "The quick brown fox jumps over",
            "the lazy dog.",
            "",
            "Second one."
        ]
    );
}

#[test]
fn headings_are_styled_without_their_hashes() {
    let r = render("# Title\n\n## Part\n\ntext", 40);
    assert_eq!(r.plain_lines(), ["Title", "", "Part", "", "text"]);
    let h1 = style_of(&r, "Title");
    assert!(
        h1.add_modifier
            .contains(Modifier::BOLD | Modifier::UNDERLINED)
    );
    assert_ne!(h1, style_of(&r, "Part"));
}

#[test]
fn emphasis_strong_strike_and_inline_code_lose_their_markers() {
    let r = render("*it* **bold** ~~gone~~ `code`", 40);
    assert_eq!(r.plain_lines(), ["it bold gone code"]);
    assert!(style_of(&r, "it").add_modifier.contains(Modifier::ITALIC));
    assert!(style_of(&r, "bold").add_modifier.contains(Modifier::BOLD));
    assert!(
        style_of(&r, "gone")
            .add_modifier
            .contains(Modifier::CROSSED_OUT)
    );
    assert_eq!(style_of(&r, "code").fg, Some(Color::Yellow));
}

#[test]
fn code_blocks_are_numbered_labelled_kept_as_written_and_coloured() {
    let text = "Run:\n\n```rust\nfn main() {\n    let x = 1;\n}\n```\n\n```sh\necho hi\n```\n";
    let r = render(text, 40);
    assert_eq!(
        r.plain_lines(),
        [
            "Run:",
            "",
            "[1] rust",
            "│ fn main() {",
            "│     let x = 1;",
            "│ }",
            "",
            "[2] sh",
            "│ echo hi",
        ]
    );
    assert_eq!(r.blocks.len(), 2);
    assert_eq!(r.blocks[0].number, 1);
    assert_eq!(r.blocks[0].lang.as_deref(), Some("rust"));
    assert_eq!(r.blocks[0].code, "fn main() {\n    let x = 1;\n}");
    assert_eq!(r.blocks[0].lines, 2..6);
    assert_eq!(r.blocks[1].code, "echo hi");
    assert_eq!(r.blocks[1].lines, 7..9);
    assert_eq!(style_of(&r, "fn").fg, Some(Color::Magenta));
}

#[test]
fn a_long_code_line_is_cut_not_reflowed() {
    let r = render("```\nabcdefghij  klm\n```", 8);
    assert_eq!(r.plain_lines(), ["[1]", "│ abcdef", "│ ghij", "│ klm"]);
    assert_eq!(r.blocks[0].lang, None);
}

#[test]
fn lists_hang_their_text_behind_the_marker() {
    let text =
        "- one two three four\n- two\n  - nested item\n1. first\n2. second\n- [x] done\n- [ ] todo";
    assert_eq!(
        plain(text, 14),
        [
            "• one two",
            "  three four",
            "• two",
            "  ◦ nested",
            "    item",
            "",
            "1. first",
            "2. second",
            "",
            "[✓] done",
            "[ ] todo",
        ]
    );
}

#[test]
fn a_block_quote_has_a_bar() {
    assert_eq!(
        plain("> quoted words here\n> more", 12),
        ["│ quoted", "│ words here", "│ more"]
    );
}

#[test]
fn a_table_is_laid_out_in_columns() {
    let text = "| step | command |\n|---|--:|\n| one | `ls` |\n| two | make all |";
    assert_eq!(
        plain(text, 40),
        [
            "step │  command",
            "─────┼─────────",
            "one  │       ls",
            "two  │ make all",
        ]
    );
}

#[test]
fn a_table_too_wide_for_the_pane_becomes_records() {
    let text = "| name | what it does |\n|---|---|\n| alpha | the first letter of the alphabet |\n| beta | second |";
    assert_eq!(
        plain(text, 14),
        [
            "name: alpha",
            "what it does:",
            "the first",
            "letter of the",
            "alphabet",
            "",
            "name: beta",
            "what it does:",
            "second",
        ]
    );
}

#[test]
fn links_show_their_url_once_and_images_their_alt_text() {
    assert_eq!(
        plain("see [docs](https://x.org/d) or <https://y.org>", 80),
        ["see docs <https://x.org/d> or https://y.org"]
    );
    assert_eq!(plain("![a chart](c.png)", 80), ["[image: a chart] <c.png>"]);
}

#[test]
fn rules_html_and_footnotes_are_text() {
    let r = plain(
        "a\n\n---\n\n<div>hi</div>\n\nnote[^1]\n\n[^1]: the long note",
        14,
    );
    assert_eq!(
        r,
        [
            "a",
            "",
            "──────────────",
            "",
            "<div>hi</div>",
            "",
            "note[1]",
            "",
            "[1] the long",
            "    note",
        ]
    );
}

#[test]
fn escapes_in_the_text_are_shown_not_sent() {
    let r = render(
        "# \u{1b}]0;title\u{7}x\n\n`\u{1b}[31m`\n\n```\n\u{1b}[2J\n```",
        40,
    );
    for span in r.lines.iter().flat_map(|l| &l.spans) {
        assert!(!span.content.contains('\u{1b}'), "{:?}", span.content);
    }
    assert_eq!(r.blocks[0].code, "\u{1b}[2J");
}

#[test]
fn code_coloured_later_is_what_a_coloured_render_gives() {
    let text =
        "- item\n\n  ```rust\n  fn main() {}\n  ```\n\n```python\ndef f():\n    return 1\n```\n";
    let mut later = render_uncoloured(text, 30);
    assert!(!later.blocks[0].coloured());
    assert_eq!(later.plain_lines(), render(text, 30).plain_lines());
    later.colour_rows(0..1);
    assert!(!later.blocks[0].coloured(), "not yet in view");
    later.colour_rows(0..later.lines.len());
    assert!(later.blocks.iter().all(CodeBlock::coloured));
    assert_eq!(later, render(text, 30));
}
