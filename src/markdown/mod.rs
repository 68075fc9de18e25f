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
    /// The cells each code line was cut to.
    room: usize,
    /// Whether its rows are coloured (or have nothing to colour).
    coloured: bool,
}

impl CodeBlock {
    /// Whether its rows are coloured yet (a block without a language never is, and counts
    /// as done).
    pub fn coloured(&self) -> bool {
        self.coloured
    }

    /// Colours its rows in place, if they are not yet: `lines` are its rows, `self.lines`
    /// of the lines it was rendered in (shifted wherever those were moved to).
    pub fn colour(&mut self, lines: &mut [Line<'static>]) {
        if self.coloured {
            return;
        }
        self.coloured = true;
        if let Some(lang) = &self.lang {
            code::colour(lang, &self.code, self.room, lines);
        }
    }
}

impl Rendered {
    /// Colours the code blocks that have a row in `rows` and are not coloured yet: what a
    /// view of a body rendered with [`render_uncoloured`] calls for the rows it shows.
    pub fn colour_rows(&mut self, rows: std::ops::Range<usize>) {
        for block in &mut self.blocks {
            if block.lines.start < rows.end && rows.start < block.lines.end {
                if let Some(lines) = self.lines.get_mut(block.lines.clone()) {
                    block.colour(lines);
                }
            }
        }
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

/// `text` (markdown) rendered as lines of at most `width` cells, its code coloured.
pub fn render(text: &str, width: usize) -> Rendered {
    build::Builder::new(width, true).run(text)
}

/// [`render`] with the code blocks left plain, to be coloured as they come into view
/// ([`Rendered::colour_rows`], [`CodeBlock::colour`]): colouring costs some twenty times the
/// rest of a render, so a long body with much code is shown at once and coloured where it
/// is read. The lines, their text and their widths are those [`render`] gives.
pub fn render_uncoloured(text: &str, width: usize) -> Rendered {
    build::Builder::new(width, false).run(text)
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
