//! The walk over pulldown-cmark's events that builds the lines: inline content gathers until
//! its block ends, then flows into rows behind the prefixes of the blocks it sits in (a quote's
//! bar, a list item's marker on its first row and the marker's width of spaces after: the
//! hanging indent).

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::flow::{Atom, Row, flow, push};
use super::table::{Table, row_width};
use super::{CodeBlock, Rendered, code, style};
use crate::sanitize::sanitize_line;

/// A block that puts a prefix in front of each of its rows.
struct Container {
    /// The prefix of its first row (a list item's marker).
    first: Row,
    /// The prefix of its other rows.
    rest: Row,
    width: usize,
    /// Whether its first row is still to come.
    pending: bool,
}

impl Container {
    fn new(first: Row, pending: bool) -> Self {
        let width = row_width(&first);
        let rest = if pending {
            vec![" ".repeat(width).into()]
        } else {
            first.clone()
        };
        Self {
            first,
            rest,
            width,
            pending,
        }
    }
}

/// A link or image whose text is being read.
struct Link {
    url: String,
    /// Where its text starts in the inline content.
    start: usize,
}

/// The state of one render.
pub(super) struct Builder {
    width: usize,
    out: Vec<Line<'static>>,
    blocks: Vec<CodeBlock>,
    containers: Vec<Container>,
    inline: Vec<Atom>,
    styles: Vec<Style>,
    links: Vec<Link>,
    /// The next number of each open list (`None`: a bullet list).
    lists: Vec<Option<u64>>,
    table: Option<Table>,
    code: Option<(Option<String>, String)>,
    in_html: bool,
    last_blank: bool,
    /// Whether code blocks are coloured as they are rendered (else later, in place).
    colour: bool,
}

impl Builder {
    pub(super) fn new(width: usize, colour: bool) -> Self {
        Self {
            colour,
            width: width.max(1),
            out: Vec::new(),
            blocks: Vec::new(),
            containers: Vec::new(),
            inline: Vec::new(),
            styles: Vec::new(),
            links: Vec::new(),
            lists: Vec::new(),
            table: None,
            code: None,
            in_html: false,
            last_blank: false,
        }
    }

    pub(super) fn run(mut self, text: &str) -> Rendered {
        let options = Options::ENABLE_TABLES
            | Options::ENABLE_STRIKETHROUGH
            | Options::ENABLE_TASKLISTS
            | Options::ENABLE_FOOTNOTES;
        for event in Parser::new_ext(text, options) {
            self.event(event);
        }
        self.flush();
        while self.out.last().is_some_and(blank) {
            self.out.pop();
        }
        Rendered {
            lines: self.out,
            blocks: self.blocks,
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => {
                if let Some((_, code)) = self.code.as_mut() {
                    code.push_str(&t);
                } else if self.in_html {
                    self.html(&t);
                } else {
                    self.text(&t, self.style());
                }
            }
            Event::Code(t) => self.text(&t, self.style().patch(style::INLINE_CODE)),
            Event::Html(t) => self.html(&t),
            Event::InlineHtml(t) => self.text(&t, self.style().patch(style::HTML)),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t, self.style()),
            Event::FootnoteReference(label) => {
                let mark = format!("[{}]", sanitize_line(&label));
                self.inline.push(Atom::Text(mark, style::FOOTNOTE));
            }
            Event::SoftBreak => self.inline.push(Atom::Text(" ".into(), self.style())),
            Event::HardBreak => self.inline.push(Atom::Break),
            Event::Rule => {
                self.flush();
                self.gap();
                let rule = "─".repeat(self.room());
                self.emit(vec![Span::styled(rule, style::RULE)]);
            }
            Event::TaskListMarker(done) => {
                if let Some(item) = self.containers.last_mut() {
                    let mark = if done { "[✓] " } else { "[ ] " };
                    let ordered = self.lists.last().is_some_and(Option::is_some);
                    if !ordered {
                        item.first.clear();
                    }
                    push(&mut item.first, mark, style::MARKER);
                    *item = Container::new(std::mem::take(&mut item.first), true);
                }
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {
                self.flush();
                self.gap();
            }
            Tag::Heading { level, .. } => {
                self.flush();
                self.gap();
                let heading = match level {
                    HeadingLevel::H1 => style::H1,
                    HeadingLevel::H2 => style::H2,
                    HeadingLevel::H3 => style::H3,
                    _ => style::H4,
                };
                self.styles.push(self.style().patch(heading));
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.gap();
                self.containers.push(Container::new(
                    vec![Span::styled("│ ", style::QUOTE_BAR)],
                    false,
                ));
                self.styles.push(self.style().patch(style::QUOTE));
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                self.gap();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
                        .find(|w| !w.is_empty())
                        .map(str::to_string),
                    CodeBlockKind::Indented => None,
                };
                self.code = Some((lang, String::new()));
            }
            Tag::HtmlBlock => {
                self.flush();
                self.gap();
                self.in_html = true;
            }
            Tag::List(first) => {
                self.flush();
                if self.lists.is_empty() {
                    self.gap();
                }
                self.lists.push(first);
            }
            Tag::Item => {
                self.flush();
                let depth = self.lists.len();
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        format!("{}. ", *n - 1)
                    }
                    _ => ["• ", "◦ ", "▪ "][depth.saturating_sub(1) % 3].to_string(),
                };
                self.containers.push(Container::new(
                    vec![Span::styled(marker, style::MARKER)],
                    true,
                ));
            }
            Tag::FootnoteDefinition(label) => {
                self.flush();
                self.gap();
                let mark = crate::cells::truncate(&sanitize_line(&label), 12);
                self.containers.push(Container::new(
                    vec![Span::styled(format!("[{mark}] "), style::FOOTNOTE)],
                    true,
                ));
            }
            Tag::Table(aligns) => {
                self.flush();
                self.gap();
                self.table = Some(Table::new(aligns));
            }
            Tag::TableHead => self.table.as_mut().map_or((), Table::start_head),
            Tag::TableRow => self.table.as_mut().map_or((), Table::start_row),
            Tag::TableCell => self.inline.clear(),
            Tag::Emphasis => self.styles.push(self.style().patch(style::EMPHASIS)),
            Tag::Strong => self.styles.push(self.style().patch(style::STRONG)),
            Tag::Strikethrough => self.styles.push(self.style().patch(style::STRIKE)),
            Tag::Superscript | Tag::Subscript => self.styles.push(self.style()),
            Tag::Link { dest_url, .. } => {
                self.links.push(Link {
                    url: sanitize_line(&dest_url).into_owned(),
                    start: self.inline.len(),
                });
                self.styles.push(self.style().patch(style::LINK));
            }
            Tag::Image { dest_url, .. } => {
                self.inline
                    .push(Atom::Text("[image: ".into(), style::IMAGE));
                self.links.push(Link {
                    url: sanitize_line(&dest_url).into_owned(),
                    start: self.inline.len(),
                });
                self.styles.push(self.style().patch(style::IMAGE));
            }
            Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.flush(),
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => {
                self.flush();
                self.in_html = false;
            }
            TagEnd::Heading(_) => {
                self.flush();
                self.styles.pop();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.styles.pop();
            }
            TagEnd::CodeBlock => {
                if let Some((lang, text)) = self.code.take() {
                    self.code_block(lang, &text);
                }
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
            }
            TagEnd::Item | TagEnd::FootnoteDefinition => {
                self.flush();
                if self.containers.last().is_some_and(|c| c.pending) {
                    self.emit(Vec::new());
                }
                self.containers.pop();
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    for row in table.layout(self.room()) {
                        self.emit(row);
                    }
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.inline);
                if let Some(t) = self.table.as_mut() {
                    t.push_cell(cell);
                }
            }
            TagEnd::TableHead | TagEnd::TableRow => {}
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                self.link_end(false);
            }
            TagEnd::Image => {
                self.styles.pop();
                self.link_end(true);
            }
            TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => self.flush(),
        }
    }

    /// After a link's text: its URL, unless the text is the URL.
    fn link_end(&mut self, image: bool) {
        let Some(link) = self.links.pop() else { return };
        if image {
            self.inline.push(Atom::Text("]".into(), style::IMAGE));
        }
        let text: String = self.inline[link.start.min(self.inline.len())..]
            .iter()
            .map(|a| match a {
                Atom::Text(s, _) => s.as_str(),
                Atom::Break => " ",
            })
            .collect();
        let shown = text.trim_end_matches(']');
        if link.url.is_empty()
            || (!image && (shown == link.url || format!("mailto:{shown}") == link.url))
        {
            return;
        }
        self.inline
            .push(Atom::Text(format!(" <{}>", link.url), style::URL));
    }

    fn code_block(&mut self, lang: Option<String>, text: &str) {
        let number = self.blocks.len() + 1;
        let lang_none = lang.is_none();
        let start = self.out.len();
        let room = self.room();
        for row in code::rows(number, lang.as_deref(), text, room, self.colour) {
            self.emit(row);
        }
        self.blocks.push(CodeBlock {
            number,
            lang,
            code: code::as_written(text),
            lines: start..self.out.len(),
            room: code::code_room(room),
            coloured: self.colour || lang_none,
        });
    }

    /// The lines of an HTML block, as text.
    fn html(&mut self, t: &str) {
        for (i, line) in t.split('\n').enumerate() {
            if i > 0 {
                self.inline.push(Atom::Break);
            }
            let line = line.strip_suffix('\r').unwrap_or(line);
            if !line.is_empty() {
                self.inline
                    .push(Atom::Text(sanitize_line(line).into_owned(), style::HTML));
            }
        }
    }

    fn text(&mut self, t: &str, style: Style) {
        self.inline
            .push(Atom::Text(sanitize_line(t).into_owned(), style));
    }

    /// The style of inline text here: the styles of the constructs it is in, combined.
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    /// The most prefixes may take: past it, deeper blocks indent no further, so that text
    /// always keeps half the width.
    fn budget(&self) -> usize {
        self.width / 2
    }

    /// The cells left for content behind the prefixes.
    fn room(&self) -> usize {
        let budget = self.budget();
        let mut w = 0;
        for c in &self.containers {
            if w + c.width <= budget {
                w += c.width;
            }
        }
        self.width.saturating_sub(w).max(1)
    }

    /// A row behind its prefixes, as a line.
    fn emit(&mut self, row: Row) {
        let budget = self.budget();
        let mut line = Row::new();
        let mut w = 0;
        for c in &mut self.containers {
            let prefix = if std::mem::take(&mut c.pending) {
                &c.first
            } else {
                &c.rest
            };
            if w + c.width <= budget {
                line.extend(prefix.iter().cloned());
                w += c.width;
            }
        }
        self.last_blank = row.is_empty();
        line.extend(row);
        self.out.push(Line::from(line));
    }

    /// The inline content gathered so far, flowed into rows.
    fn flush(&mut self) {
        while matches!(self.inline.last(), Some(Atom::Break)) {
            self.inline.pop();
        }
        let empty = self.inline.iter().all(|a| match a {
            Atom::Text(s, _) => s.trim().is_empty(),
            Atom::Break => true,
        });
        if empty {
            self.inline.clear();
            return;
        }
        let atoms = std::mem::take(&mut self.inline);
        for row in flow(&atoms, self.room()) {
            self.emit(row);
        }
    }

    /// A blank row between two blocks: not at the start, not twice, and not before a list
    /// item's first row (its marker goes on the block's first row).
    fn gap(&mut self) {
        if self.out.is_empty() || self.last_blank || self.containers.iter().any(|c| c.pending) {
            return;
        }
        self.emit(Vec::new());
    }
}

/// Whether a line shows nothing.
fn blank(line: &Line<'_>) -> bool {
    line.spans.iter().all(|s| s.content.trim().is_empty())
}
