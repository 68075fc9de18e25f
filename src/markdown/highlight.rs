//! Code blocks coloured by language with syntect's grammars (the Sublime Text syntaxes bat
//! and others use), mapped to the 16 basic colours by scope rather than through a colour
//! theme: a theme names RGB colours, which would read differently under every terminal theme.
//!
//! The grammars are loaded once, on the first block that asks (about a hundred of them,
//! deserialized from the dump syntect ships), and kept for the life of the process.

use std::collections::HashMap;
use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxSet};

static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();

/// The grammars, loaded on first use.
pub(super) fn syntaxes() -> &'static SyntaxSet {
    SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// Lines longer than this are not coloured: syntect's regexes slow down on them, and such a
/// line (minified code, a data dump) is read for its text anyway.
const LONGEST_LINE: usize = 4096;
/// Blocks longer than this are shown without colour, so that one huge block cannot hold up
/// the frame that first shows it.
const LONGEST_BLOCK: usize = 256 * 1024;

/// Scope prefixes and their styles, the most specific first: the innermost scope of a piece of
/// code with an entry here gives its style.
const SCOPES: &[(&str, Style)] = &[
    ("comment", Style::new().fg(Color::DarkGray)),
    ("constant.character.escape", Style::new().fg(Color::Cyan)),
    ("string", Style::new().fg(Color::Green)),
    ("constant.numeric", Style::new().fg(Color::Magenta)),
    ("constant", Style::new().fg(Color::Cyan)),
    ("entity.name.type", Style::new().fg(Color::Yellow)),
    ("support.type", Style::new().fg(Color::Yellow)),
    ("support.class", Style::new().fg(Color::Yellow)),
    ("entity.name.function", Style::new().fg(Color::Blue)),
    ("support.function", Style::new().fg(Color::Blue)),
    ("variable.function", Style::new().fg(Color::Blue)),
    ("keyword.operator", Style::new()),
    ("keyword", Style::new().fg(Color::Magenta)),
    ("storage", Style::new().fg(Color::Magenta)),
    ("entity.name.tag", Style::new().fg(Color::Blue)),
    (
        "entity.other.attribute-name",
        Style::new().fg(Color::Yellow),
    ),
    ("markup.heading", Style::new().add_modifier(Modifier::BOLD)),
    ("markup.bold", Style::new().add_modifier(Modifier::BOLD)),
    ("markup.italic", Style::new().add_modifier(Modifier::ITALIC)),
    ("markup.inserted", Style::new().fg(Color::Green)),
    ("markup.deleted", Style::new().fg(Color::Red)),
    ("invalid", Style::new().fg(Color::Red)),
];

/// The colouring of one code block, line by line.
pub(super) struct Highlighter {
    set: &'static SyntaxSet,
    state: ParseState,
    stack: ScopeStack,
    styles: HashMap<Scope, Option<Style>>,
    /// Set when a line could not be parsed: the rest of the block is left plain.
    failed: bool,
}

impl Highlighter {
    /// A highlighter for the block's language (its info string's first word: `rust`, `sh`,
    /// `py`), or none when no grammar knows it or the block is too long.
    pub(super) fn new(lang: &str, code_len: usize) -> Option<Self> {
        if lang.is_empty() || code_len > LONGEST_BLOCK {
            return None;
        }
        let set = syntaxes();
        let syntax = set
            .find_syntax_by_token(lang)
            .or_else(|| set.find_syntax_by_token(&lang.to_ascii_lowercase()))?;
        Some(Self {
            set,
            state: ParseState::new(syntax),
            stack: ScopeStack::new(),
            styles: HashMap::new(),
            failed: false,
        })
    }

    /// `line` (made safe, without its newline) as pieces `(byte range, style)`.
    pub(super) fn line(&mut self, line: &str) -> Vec<(std::ops::Range<usize>, Style)> {
        let plain = || vec![(0..line.len(), Style::new())];
        if self.failed || line.len() > LONGEST_LINE {
            return plain();
        }
        let with_newline = format!("{line}\n");
        let Ok(ops) = self.state.parse_line(&with_newline, self.set) else {
            self.failed = true;
            return plain();
        };
        let mut out = Vec::new();
        let mut at = 0;
        for (pos, op) in ops {
            let pos = pos.min(line.len());
            if pos > at {
                out.push((at..pos, self.style()));
                at = pos;
            }
            if self.stack.apply(&op).is_err() {
                self.failed = true;
                return plain();
            }
        }
        if at < line.len() {
            out.push((at..line.len(), self.style()));
        }
        out
    }

    /// The style of the current scope stack: its innermost scope that has one.
    fn style(&mut self) -> Style {
        for scope in self.stack.as_slice().iter().rev() {
            let style = *self.styles.entry(*scope).or_insert_with(|| {
                let name = scope.build_string();
                SCOPES
                    .iter()
                    .find(|(prefix, _)| {
                        name == *prefix
                            || (name.starts_with(prefix) && name.as_bytes()[prefix.len()] == b'.')
                    })
                    .map(|(_, style)| *style)
            });
            if let Some(style) = style {
                return style;
            }
        }
        Style::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_strings_and_comments_have_colours() {
        let mut h = Highlighter::new("rust", 10).unwrap();
        let line = "let s = \"hi\"; // note";
        let pieces = h.line(line);
        let style_of = |needle: &str| {
            let at = line.find(needle).unwrap();
            pieces.iter().find(|(r, _)| r.contains(&at)).unwrap().1
        };
        assert_eq!(style_of("let").fg, Some(Color::Magenta));
        assert_eq!(style_of("hi").fg, Some(Color::Green));
        assert_eq!(style_of("note").fg, Some(Color::DarkGray));
        assert!(Highlighter::new("no-such-language", 10).is_none());
    }
}
