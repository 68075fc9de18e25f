//! The body of a multi-line envelope: `body: |` blocks with their YAML-like indentation rule,
//! single-line bodies, and bodies whose indentation a chat window stripped.

use super::{Block, View, is_structural, is_unindented_key};
use crate::protocol::lines;
use crate::protocol::scan;
use crate::protocol::{Code, Diagnostic};

impl<'a> Block<'a, '_> {
    /// Reads the body after `body:` / `response:` with the given value.
    pub(super) fn body(&mut self, value: &str) {
        let Some(indicator) = value.strip_prefix('|') else {
            if !value.is_empty() {
                self.env.body = Some(value.to_string());
                return;
            }
            return self.block_body(None);
        };
        // `|`, `|-`, `|+`, `|2`, `|2-`: a block follows. Anything else after the `|` is text
        // that a chat window pulled up onto the key's line: it is the body.
        let flags =
            indicator.trim_start_matches(|c: char| c.is_ascii_digit() || c == '-' || c == '+');
        if !flags.trim().is_empty() {
            self.env.body = Some(indicator.trim().to_string());
            return;
        }
        let explicit = indicator
            .trim_matches(['-', '+'])
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0);
        self.block_body(explicit)
    }

    fn block_body(&mut self, explicit: Option<usize>) {
        let mut out = BodyText::with_capacity(BODY_CAPACITY);
        // Leading blank lines belong to the body; their indentation is known only once the
        // first non-blank line is.
        let mut leading: Vec<&'a str> = Vec::new();
        let first = loop {
            let Some(v) = self.peek() else {
                self.env.body = Some(String::new());
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
                self.env.body = Some(out.finish());
                return;
            }
            return self.stripped_body(first, &leading);
        }
        for l in leading {
            out.push(lines::strip_indent(l, indent));
        }
        while let Some(v) = self.peek() {
            let blank = lines::is_blank(v.text);
            if !blank && lines::indent_of(v.text).0 < indent {
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
            out.push(lines::strip_indent(v.text, indent));
            self.consume(&v, !blank);
        }
        self.env.body = Some(out.finish());
    }

    /// A body whose first line has no indentation: a chat window stripped it. Taken up to
    /// `sig:` / `[[END]]` when one follows, else up to the next banner or fence.
    fn stripped_body(&mut self, first: View<'a>, leading: &[&str]) {
        self.diags.push(Diagnostic::new(
            Code::BodyIndentStripped,
            first.line.no,
            first.pcols + 1,
            "the body is not indented (a chat window stripped the indentation); it was read up to `sig:` or `[[END]]`. Indent body lines by two spaces",
        ));
        let mut out = BodyText::default();
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
        self.env.body = Some(out.finish());
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

/// Room reserved for a block body before its first line: most bodies are a few short
/// paragraphs, which would otherwise grow the string six or seven times.
const BODY_CAPACITY: usize = 256;

impl BodyText {
    fn with_capacity(bytes: usize) -> Self {
        BodyText {
            text: String::with_capacity(bytes),
            ..BodyText::default()
        }
    }

    fn push(&mut self, line: &str) {
        if self.lines > 0 {
            self.text.push('\n');
        }
        self.text.push_str(line);
        self.lines += 1;
        if !lines::is_space_only(line) {
            self.kept = self.text.len();
        }
    }

    fn finish(mut self) -> String {
        self.text.truncate(self.kept);
        self.text
    }
}
