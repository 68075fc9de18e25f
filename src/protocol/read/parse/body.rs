//! The body of a multi-line envelope: `body: |` blocks with their YAML-like indentation rule,
//! single-line bodies, bodies whose first line stands on the `body:` line, `body: >` read as
//! literal text, and bodies whose indentation a chat window stripped.

use std::borrow::Cow;

use super::{Block, View, is_structural, is_unindented_key};
use crate::protocol::lines;
use crate::protocol::scan;
use crate::protocol::{Code, Diagnostic, Pos};

/// The `body:` / `response:` line, as reading the body needs it.
pub(super) struct KeyLine<'k> {
    /// `body` or `response`, as messages name the key.
    pub name: &'static str,
    /// The value after the colon, trimmed.
    pub value: &'k str,
    /// Where the value starts.
    pub at: Pos,
    /// The key's indentation: lines that continue a first line written after the key are
    /// indented deeper than it.
    pub indent: usize,
}

impl<'a> Block<'a, '_> {
    /// Reads the body after `body:` / `response:`.
    ///
    /// Text on the key's line is a body of one line unless body lines follow: then it is
    /// the first line a chat window pulled up (or a writer put there), and the lines below
    /// are the rest, so none of them is lost.
    pub(super) fn body(&mut self, key: &KeyLine<'_>) {
        let value = key.value;
        if let Some(indicator) = value.strip_prefix('|') {
            // `|`, `|-`, `|+`, `|2`, `|2-`: a block follows. Anything else after the `|`
            // is the body's first line.
            if is_indicator(indicator) {
                return self.block_body(explicit_indent(indicator), None);
            }
            // `|2 hello`: an indicator, then the first line (read so in one-line envelopes
            // too); `| 2 apples`: the first line.
            // (YAML's indentation indicator is 1 to 9; `|0 x` is text.)
            let flags = indicator.trim_start_matches(|c: char| matches!(c, '1'..='9' | '-' | '+'));
            let text = if flags.len() < indicator.len() && flags.starts_with(char::is_whitespace) {
                flags
            } else {
                indicator
            };
            let off = value.len() - text.trim_start().len();
            return self.first_line_on_key(key, text.trim(), off);
        }
        if let Some(indicator) = value.strip_prefix('>')
            && is_indicator(indicator)
        {
            // A folded YAML block would join the lines into one; a body is literal text,
            // so they are kept as written and the warning says so.
            let name = key.name;
            self.diags.push(Diagnostic::new(
                Code::FoldedBody,
                key.at.line,
                key.at.column,
                format!(
                    "`{name}: {value}` marks a folded YAML block, but a body is literal text: its lines were kept as written, as after `{name}: |`. Write `{name}: |`"
                ),
            ));
            return self.block_body(explicit_indent(indicator), None);
        }
        if value.is_empty() {
            return self.block_body(None, None);
        }
        self.first_line_on_key(key, value, 0)
    }

    /// `text` (at byte `off` of the value) stood on the key's line: alone it is the body;
    /// with body lines after it, it is their first line.
    fn first_line_on_key(&mut self, key: &KeyLine<'_>, text: &str, off: usize) {
        if !self.body_lines_follow(key.indent) {
            self.env.body = Some(Cow::Owned(text.to_string()));
            return;
        }
        let name = key.name;
        self.diags.push(Diagnostic::new(
            Code::BodyOnKeyLine,
            key.at.line,
            key.at.column + key.value[..off].chars().count() as u32,
            format!(
                "the body's first line stood on the `{name}:` line and more body lines followed; they were read as one body. Write `{name}: |` alone on its line and indent every body line below it"
            ),
        ));
        self.block_body(None, Some(text))
    }

    /// Whether the next non-blank line continues a body whose first line stood on the key's
    /// line: it is not structural (a known header, `sig:`, `[[END]]`, a banner or fence
    /// still ends a one-line body, as always) and is indented deeper than the key, or, under a
    /// key at column 1, it is unindented text that is not `key: value` with a terminator
    /// ahead (a body whose indentation was stripped).
    fn body_lines_follow(&mut self, key_indent: usize) -> bool {
        let mut c = self.cur;
        while let Some(l) = c.next_line() {
            let Some(s) = lines::strip_prefix_strict(l.text, self.prefix) else {
                return false;
            };
            if lines::is_blank(s) {
                continue;
            }
            let cl = lines::clean(s);
            if is_structural(&cl) {
                return false;
            }
            if lines::indent_of(s).0 > key_indent {
                return true;
            }
            return key_indent == 0
                && lines::split_key(&cl).is_none()
                && self.terminator_ahead(l.no);
        }
        false
    }

    /// A block body with indentation `explicit` (else that of its first non-blank line);
    /// `head` is a first line that stood on the key's line.
    fn block_body(&mut self, explicit: Option<usize>, head: Option<&str>) {
        let mut out = BodyText::in_string(self.spare.body(BODY_CAPACITY));
        if let Some(head) = head {
            out.push(head);
        }
        // Leading blank lines belong to the body; their indentation is known only once the
        // first non-blank line is.
        let mut leading: Vec<&'a str> = Vec::new();
        let first = loop {
            let Some(v) = self.peek() else {
                self.env.body = Some(Cow::Owned(out.finish()));
                return;
            };
            if !lines::is_blank(v.text) {
                break v;
            }
            leading.push(v.text);
            self.consume(&v, false);
        };
        let indent = explicit.unwrap_or_else(|| lines::indent_of(first.text).0);
        if lines::indent_of(first.text).0 < indent.max(1) {
            if is_structural(first.cleaned()) {
                // The body ended before any line of visible text: what the blank-looking
                // lines hold (invisible characters) is still its text.
                for l in &leading {
                    out.push(lines::strip_indent(l, lines::indent_of(l).0));
                }
                self.env.body = Some(Cow::Owned(out.finish()));
                return;
            }
            return self.stripped_body(first, &leading, out);
        }
        for l in leading {
            out.push(lines::strip_indent(l, indent));
        }
        while let Some(v) = self.peek() {
            let ind = lines::Indent::of(v.text);
            let blank = ind.blank;
            if !blank && ind.depth < indent {
                if is_structural(v.cleaned()) || !self.terminator_ahead(v.line.no) {
                    break;
                }
                self.diags.push(Diagnostic::new(
                    Code::BodyIndentPartial,
                    v.line.no,
                    v.pcols + 1,
                    "this body line lost its indentation (a chat window stripped it); it was kept in the body up to `sig:`. Indent body lines to keep them unambiguous",
                ));
                self.until_terminator(&mut out, indent);
                break;
            }
            let (line, space_only) = ind.strip(v.text, indent);
            out.push_known(line, space_only);
            self.consume(&v, !blank);
        }
        self.env.body = Some(Cow::Owned(out.finish()));
    }

    /// A body whose first line has no indentation: a chat window stripped it. Taken up to
    /// `sig:` / `[[END]]` when one follows, else up to the next banner or fence, after what
    /// `out` already holds (a first line that stood on the key's line).
    fn stripped_body(&mut self, first: View<'a>, leading: &[&str], mut out: BodyText) {
        self.diags.push(Diagnostic::new(
            Code::BodyIndentStripped,
            first.line.no,
            first.pcols + 1,
            "the body is not indented (a chat window stripped the indentation); it was read up to `sig:` or `[[END]]`. Indent body lines by two spaces",
        ));
        for l in leading {
            out.push(l);
        }
        if self.terminator_ahead(first.line.no) {
            self.until_terminator(&mut out, 0);
        } else {
            while let Some(v) = self.peek() {
                let c: &str = v.cleaned();
                if lines::is_end_marker(c) || scan::opens_envelope(c) || lines::is_fence(c) {
                    break;
                }
                out.push(v.text);
                self.consume(&v, !lines::is_blank(v.text));
            }
        }
        self.env.body = Some(Cow::Owned(out.finish()));
    }

    /// Body lines up to (not including) the unindented `sig:`, `hash:` or `[[END]]` that
    /// [`Self::terminator_ahead`] found, each with up to `indent` characters of indentation
    /// removed.
    fn until_terminator(&mut self, out: &mut BodyText, indent: usize) {
        while let Some(v) = self.peek() {
            let c: &str = v.cleaned();
            if lines::is_end_marker(c)
                || is_unindented_key(c, "sig")
                || is_unindented_key(c, "hash")
            {
                break;
            }
            out.push(lines::strip_indent(v.text, indent));
            self.consume(&v, !lines::is_blank(v.text));
        }
    }
}

/// Body text built line by line; trailing lines of only indentation are dropped at the end
/// (they separate the body from what follows, they are not part of it). A line holding an
/// invisible character is text, and kept.
#[derive(Default)]
struct BodyText {
    text: String,
    lines: usize,
    /// Length of `text` up to the end of the last non-blank line.
    kept: usize,
}

/// Whether what follows `|` or `>` is only a block indicator's digits and chomping signs
/// (`|2-`, `>+`), not text.
fn is_indicator(after: &str) -> bool {
    (after.trim_start_matches(|c: char| c.is_ascii_digit() || c == '-' || c == '+'))
        .trim()
        .is_empty()
}

/// The indentation an indicator states (`|2`, `|-2`), if any; 0 states none.
fn explicit_indent(indicator: &str) -> Option<usize> {
    (indicator.trim().trim_matches(['-', '+']))
        .parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
}

/// Room reserved for a block body before its first line: most bodies are a few short
/// paragraphs, which would otherwise grow the string six or seven times.
const BODY_CAPACITY: usize = 256;

impl BodyText {
    /// Body text built in `text`, which is empty.
    fn in_string(text: String) -> Self {
        debug_assert!(text.is_empty());
        BodyText {
            text,
            ..BodyText::default()
        }
    }

    fn push(&mut self, line: &str) {
        self.push_known(line, lines::is_space_only(line));
    }

    /// [`Self::push`] for a line whose [`lines::is_space_only`] is known.
    #[inline]
    fn push_known(&mut self, line: &str, space_only: bool) {
        if self.lines > 0 {
            self.text.push('\n');
        }
        self.text.push_str(line);
        self.lines += 1;
        if !space_only {
            self.kept = self.text.len();
        }
    }

    fn finish(mut self) -> String {
        self.text.truncate(self.kept);
        self.text
    }
}
