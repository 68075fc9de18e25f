//! Markdown rendered for reading: a message body's text as styled terminal lines of a given
//! width. Headings, emphasis, lists with hanging indents, block quotes, tables fitted to the
//! width, code blocks set apart, numbered and coloured by language, links with their URL;
//! paragraphs a model hard-wrapped are reflowed to the width.
//!
//! pulldown-cmark reads the text (CommonMark with GitHub's tables, strikethrough, task lists
//! and footnotes), syntect colours the code. Every piece of the body's text that reaches a
//! span has passed through [`crate::sanitize`], so no control character, escape sequence or
//! bidi control of an envelope reaches the terminal, and every line fits `width` cells as
//! [`crate::cells`] counts them. Hyperlinks (OSC 8) are not written: a link is its text and
//! its URL, shown as text.
//!
//! The room uses `sanitize` and `cells` only; `app` and `ui` use it.

mod build;
mod code;
mod flow;
mod highlight;
mod style;
mod table;

#[cfg(test)]
mod render_props;
#[cfg(test)]
mod tests;

use ratatui::text::Line;

/// A body rendered for a width: its lines, and the code blocks among them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    /// The styled lines, each at most the width rendered for (in cells).
    pub lines: Vec<Line<'static>>,
    /// The code blocks, in the order they appear, numbered from 1.
    pub blocks: Vec<CodeBlock>,
}

/// A code block of a rendered body: what the reader shows as `[n]` and copies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeBlock {
    /// Its number, from 1, shown on screen as `[1]`.
    pub number: usize,
    /// The language its fence names (the info string's first word), if any.
    pub lang: Option<String>,
    /// The code exactly as written between the fences, without the last line's newline: what
    /// a copy of the block holds. It is the envelope's text, not made safe: whoever writes it
    /// to a terminal sanitizes it first.
    pub code: String,
    /// Its rows in [`Rendered::lines`], the label row included.
    pub lines: std::ops::Range<usize>,
    /// Set while the block is drawn without colours: colouring is the one costly step of a
    /// render (a grammar's regular expressions run over every line of code), so past the
    /// first [`EAGER_COLOUR`] bytes of code a body's blocks are coloured when they come into
    /// sight ([`Rendered::colour`]), not all at once.
    pub uncoloured: Option<Uncoloured>,
}

/// What colouring a block later needs: the width its code rows were cut for, and how many
/// spans of each of its rows are the prefixes of the blocks it sits in (a quote's bar, a
/// list's indent), which colouring keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uncoloured {
    room: usize,
    prefixes: Vec<usize>,
}

/// Bytes of code a render colours at once; the blocks after them wait for [`Rendered::colour`].
/// A few milliseconds of a grammar's work: a body with less code is whole after one render.
pub const EAGER_COLOUR: usize = 8 * 1024;

impl Rendered {
    /// Colours the code blocks with rows in `rows` that are not coloured yet (see
    /// [`CodeBlock::uncoloured`]); the rows stay where they are. Whether any changed.
    pub fn colour(&mut self, rows: std::ops::Range<usize>) -> bool {
        let mut changed = false;
        for b in &mut self.blocks {
            if b.lines.end <= rows.start || b.lines.start >= rows.end {
                continue;
            }
            let Some(u) = b.uncoloured.take() else {
                continue;
            };
            let fresh = code::rows(b.number, b.lang.as_deref(), &b.code, u.room, true);
            for ((line, row), keep) in (self.lines[b.lines.clone()].iter_mut())
                .zip(fresh)
                .zip(u.prefixes)
            {
                line.spans.truncate(keep);
                line.spans.extend(row);
            }
            changed = true;
        }
        changed
    }

    /// Each line's text without styles (trailing spaces trimmed): what a search reads.
    pub fn plain_lines(&self) -> Vec<String> {
        self.lines
            .iter()
            .map(|l| {
                let s: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
                s.trim_end().to_string()
            })
            .collect()
    }
}

/// `text` (markdown) rendered as lines of at most `width` cells.
pub fn render(text: &str, width: usize) -> Rendered {
    build::Builder::new(width).run(text)
}

/// Loads the code grammars now, if they are not loaded yet: a caller can pay the one-time cost
/// (tens of milliseconds) before the first code block is shown rather than in that frame.
pub fn preload() {
    highlight::syntaxes();
}

/// The code grammars loaded afresh, uncached: what [`preload`] costs once, for a benchmark.
/// Returns how many grammars there are.
#[doc(hidden)]
pub fn load_syntaxes_uncached() -> usize {
    syntect::parsing::SyntaxSet::load_defaults_newlines()
        .syntaxes()
        .len()
}
