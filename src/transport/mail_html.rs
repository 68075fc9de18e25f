//! The lines an HTML mail part shows, as text: what a mail client displays is what its
//! reader copied the envelope from, so the envelope is read from the same lines.
//!
//! Mail clients that write only HTML keep a pasted envelope's lines in one of three ways:
//! `<pre>` (Thunderbird's preformat), one block element per line (`<div>` from Gmail's web
//! client and Apple Mail, `<p class=MsoNormal>` from Outlook), or `<br>` between lines. A
//! body's two-space indent arrives as `&nbsp;` (often `&nbsp; `, which a browser shows as two
//! spaces). Stripping tags and collapsing whitespace, as a search index does, joined all of
//! that into one line.
//!
//! The markup is read by html5ever's tokenizer, the HTML standard's own state machine: tags,
//! attributes in any quoting, comments (Outlook's `<!--[if mso]>` blocks), bogus comments
//! (`<![if !supportLists]>`) and every character reference (`&#8594;`, `&rarr;`, `&nbsp`
//! without its `;`) are read as a browser reads them. The layout rules are the ones below, a
//! small part of CSS's: what an envelope needs, not a renderer.
//!
//! - a block element (`p`, `div`, `li`, `tr`, `h1`, `blockquote`, …) starts and ends a line,
//!   so one element per line is one line each, without the blank line a paragraph's margin
//!   shows (Outlook's paragraphs have none, and a blank line between an envelope's header
//!   lines would be a blank line in its body);
//! - `<br>` ends a line, so `<div><br></div>` is one blank line, as clients write it;
//! - whitespace runs are one space and vanish at a line's start and end, except in `<pre>`
//!   (and `white-space: pre`, `pre-wrap`, `pre-line`), where line breaks and spaces stay;
//! - `&nbsp;` is a space that never collapses: indentation written with it is kept;
//! - what is not shown is left out: `<head>`, `<style>`, `<script>`, `<title>`, comments,
//!   and elements hidden with `display: none` or `hidden` (text the reader never saw must not
//!   reach the envelope).

use std::cell::RefCell;
use std::collections::HashMap;

use html5ever::TokenizerResult;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

/// The text an HTML document shows, one line of output per displayed line, each ending in
/// `\n`, without the blank lines before the first and after the last.
pub(crate) fn to_text(html: &str) -> String {
    let tokenizer = Tokenizer::new(Sink(RefCell::default()), TokenizerOpts::default());
    let queue = BufferQueue::default();
    // In pieces: a tendril holds at most 4 GiB, and the tokenizer keeps less in hand so.
    for piece in pieces(html, 64 * 1024) {
        queue.push_back(StrTendril::from_slice(piece));
        // The sink never asks the tokenizer to stop for a script or an encoding, so one feed
        // reads all that is queued; the loop only guards against a change of that.
        while !queue.is_empty() {
            if let TokenizerResult::Done = tokenizer.feed(&queue) {
                break;
            }
        }
    }
    tokenizer.end();
    tokenizer.sink.0.into_inner().finish()
}

/// `s` cut into pieces of about `size` bytes, at character boundaries.
fn pieces(s: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut at = size.min(rest.len());
        while !rest.is_char_boundary(at) {
            at += 1;
        }
        let (piece, tail) = rest.split_at(at);
        rest = tail;
        Some(piece)
    })
}

struct Sink(RefCell<Layout>);

impl TokenSink for Sink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut layout = self.0.borrow_mut();
        match token {
            Token::TagToken(tag) => return layout.tag(&tag),
            Token::CharacterTokens(text) => layout.text(&text),
            // Comments, the doctype, NUL characters and parse errors show nothing.
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

/// How whitespace in text is shown (CSS `white-space`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Space {
    /// Runs collapse to one space; line breaks are spaces.
    Normal,
    /// Runs collapse, line breaks stay.
    PreLine,
    /// Everything stays.
    Pre,
}

/// An open element that changes how its content is shown, until its end tag.
#[derive(Debug)]
struct Open {
    name: String,
    /// Elements of the same name opened inside it and not closed yet.
    nested: usize,
    /// How its content is shown, its own or what it inherits: what is inside is read in
    /// the same time however deep the elements nest (a hostile part nests a hundred
    /// thousand).
    space: Space,
    hidden: bool,
}

#[derive(Debug, Default)]
struct Layout {
    out: String,
    line: String,
    /// A collapsed space waits to be written before the next character on this line.
    space: bool,
    open: Vec<Open>,
    /// How many of `open` have each name: an end tag of an element that is not open is
    /// passed over without a search through them.
    named: HashMap<String, usize>,
    /// Inside `<head>`, whose content is not shown.
    in_head: bool,
    /// The raw-text element (`style`, `script`, `title`) whose content is being skipped.
    skipping: Option<String>,
    /// A line break right after `<pre>` (or `<textarea>`, `<listing>`) is not shown.
    drop_newline: bool,
    /// After `<plaintext>`: everything is text, shown as it is.
    plaintext: bool,
}

/// Elements shown as blocks: each starts and ends a line.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "center",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "html",
    "legend",
    "li",
    "listing",
    "main",
    "menu",
    "nav",
    "ol",
    "p",
    "plaintext",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "tfoot",
    "thead",
    "tr",
    "ul",
    "xmp",
];

/// Elements without content: they are never open.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// What `<head>` may hold; any other start tag (or text) ends it, as in a browser.
const HEAD_CONTENT: &[&str] = &[
    "base", "basefont", "bgsound", "link", "meta", "noscript", "script", "style", "template",
    "title",
];

impl Layout {
    fn tag(&mut self, tag: &Tag) -> TokenSinkResult<()> {
        let name: &str = &tag.name;
        self.drop_newline = false;
        if let Some(skipped) = &self.skipping {
            if tag.kind == TagKind::EndTag && skipped == name {
                self.skipping = None;
            }
            return TokenSinkResult::Continue;
        }
        match tag.kind {
            TagKind::StartTag => self.start(tag, name),
            TagKind::EndTag => {
                self.end(name);
                TokenSinkResult::Continue
            }
        }
    }

    fn start(&mut self, tag: &Tag, name: &str) -> TokenSinkResult<()> {
        if name == "head" {
            self.in_head = true;
        } else if self.in_head && !HEAD_CONTENT.contains(&name) {
            self.in_head = false;
        }
        // Content not shown, read as raw text so that what it holds is never taken for tags.
        let raw = match name {
            "style" | "xmp" | "iframe" | "noembed" | "noframes" => Some(RawKind::Rawtext),
            "script" => Some(RawKind::ScriptData),
            "title" | "textarea" => Some(RawKind::Rcdata),
            _ => None,
        };
        if let Some(kind) = raw {
            // A text area and an `<xmp>` show their text; the others do not.
            if !matches!(name, "textarea" | "xmp") || self.hidden() {
                self.skipping = Some(name.to_string());
                return TokenSinkResult::RawData(kind);
            }
        }
        if BLOCKS.contains(&name) {
            self.block();
        }
        match name {
            "br" => self.end_line(),
            "td" | "th" => self.gap(),
            _ => {}
        }
        // `<div/>` opens a `div` as `<div>` does: HTML has no self-closing elements but the
        // void ones.
        if !VOID.contains(&name) {
            let (space, hidden) = shown(tag, name);
            if space.is_some() || hidden {
                self.open.push(Open {
                    name: name.to_string(),
                    nested: 0,
                    space: space.unwrap_or(self.mode()),
                    hidden: hidden || self.hidden(),
                });
                *self.named.entry(name.to_string()).or_default() += 1;
            } else if let Some(top) = self.open.last_mut().filter(|o| o.name == name) {
                top.nested += 1;
            }
        }
        if matches!(name, "pre" | "listing" | "textarea" | "xmp") {
            self.drop_newline = true;
        }
        if let Some(kind) = raw {
            return TokenSinkResult::RawData(kind);
        }
        if name == "plaintext" {
            self.plaintext = true;
            return TokenSinkResult::Plaintext;
        }
        TokenSinkResult::Continue
    }

    fn end(&mut self, name: &str) {
        if name == "head" {
            self.in_head = false;
        }
        if BLOCKS.contains(&name) {
            self.block();
        }
        if name == "br" {
            // `</br>` is read as `<br>` by browsers.
            self.end_line();
        }
        // The element closed, with what it holds that was left open: each element is closed
        // once, so the search costs no more than the opening did.
        if self.named.get(name).is_none_or(|n| *n == 0) {
            return;
        }
        if let Some(at) = self.open.iter().rposition(|o| o.name == name) {
            let last = at + 1 == self.open.len();
            match &mut self.open[at] {
                o if last && o.nested > 0 => o.nested -= 1,
                _ => {
                    for closed in self.open.drain(at..) {
                        if let Some(n) = self.named.get_mut(&closed.name) {
                            *n -= 1;
                        }
                    }
                }
            }
        }
    }

    fn hidden(&self) -> bool {
        self.open.last().is_some_and(|o| o.hidden)
    }

    fn mode(&self) -> Space {
        if self.plaintext {
            return Space::Pre;
        }
        self.open.last().map_or(Space::Normal, |o| o.space)
    }

    fn text(&mut self, text: &str) {
        if self.skipping.is_some() {
            return;
        }
        let mut text = text;
        if std::mem::take(&mut self.drop_newline) {
            text = text.strip_prefix('\n').unwrap_or(text);
        }
        if self.in_head {
            if text.trim_ascii().is_empty() {
                return;
            }
            self.in_head = false;
        }
        if self.hidden() {
            return;
        }
        let mode = self.mode();
        for c in text.chars() {
            match (c, mode) {
                ('\n', Space::Pre | Space::PreLine) => self.end_line(),
                (' ' | '\t' | '\n' | '\r' | '\x0c', Space::Normal | Space::PreLine) => {
                    self.space = !self.line.is_empty();
                }
                _ => {
                    if std::mem::take(&mut self.space) {
                        self.line.push(' ');
                    }
                    // A no-break space is a space that does not collapse.
                    self.line.push(if c == '\u{a0}' { ' ' } else { c });
                }
            }
        }
    }

    /// A space between table cells.
    fn gap(&mut self) {
        self.space = !self.line.is_empty();
    }

    /// A block's edge: the line ends unless nothing is on it yet.
    fn block(&mut self) {
        if !self.line.is_empty() {
            self.end_line();
        }
        self.space = false;
    }

    fn end_line(&mut self) {
        // A line of no-break spaces is kept as its spaces, as a plain text line of spaces is:
        // in an envelope's body the ones past its indentation are the body's.
        self.out.push_str(&self.line);
        self.out.push('\n');
        self.line.clear();
        self.space = false;
    }

    fn finish(mut self) -> String {
        self.block();
        let text = self.out.trim_start_matches('\n');
        let mut text = text.trim_end_matches('\n').to_string();
        if !text.is_empty() {
            text.push('\n');
        }
        text
    }
}

/// How an element's own markup says its content is shown: its `white-space` (by tag, or its
/// `style`), and whether it is hidden (`hidden`, or `display: none`).
fn shown(tag: &Tag, name: &str) -> (Option<Space>, bool) {
    let mut space = match name {
        "pre" | "listing" | "textarea" | "xmp" => Some(Space::Pre),
        _ => None,
    };
    let mut hidden = false;
    for a in &tag.attrs {
        match &*a.name.local {
            "hidden" => hidden = true,
            "style" => {
                for decl in a.value.split(';') {
                    let Some((prop, value)) = decl.split_once(':') else {
                        continue;
                    };
                    let value = value.trim().to_ascii_lowercase();
                    let value = value.trim_end_matches("!important").trim();
                    match prop.trim().to_ascii_lowercase().as_str() {
                        "display" if value == "none" => hidden = true,
                        "white-space" => {
                            space = match value {
                                "pre" | "pre-wrap" | "break-spaces" => Some(Space::Pre),
                                "pre-line" => Some(Space::PreLine),
                                "normal" | "nowrap" => Some(Space::Normal),
                                _ => space,
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    (space, hidden)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_way_of_writing_lines_gives_the_same_lines() {
        let want = "[[A→B v1.1]]\nintent: REQUEST\nbody: |\n  two spaces in\n\n  after a blank\nsig: none\n[[END]]\n";
        // Outlook's blank line is a paragraph of one no-break space: a line of one space, which
        // an envelope's body reads as blank, as it reads such a line of plain text.
        let outlook = want.replace("\n\n", "\n \n");
        for (html, want) in [
            // Thunderbird's preformat.
            (
                "<html><body><pre>\n[[A&#8594;B v1.1]]\nintent: REQUEST\nbody: |\n  two spaces in\n\n  after a blank\nsig: none\n[[END]]\n</pre></body></html>",
                want,
            ),
            // Gmail: one div per line, a blank line as a div holding a br.
            (
                "<div dir=\"ltr\"><div>[[A→B v1.1]]</div><div>intent: REQUEST</div><div>body: |</div><div>&nbsp; two spaces in</div><div><br></div><div>&nbsp; after a blank</div><div>sig: none</div><div>[[END]]</div></div>",
                want,
            ),
            // Outlook: paragraphs without margins, a blank line as a paragraph of a no-break space.
            (
                "<html><head><style><!-- p.MsoNormal {margin:0cm;} --></style><!--[if gte mso 9]><xml><o:shapedefaults v:ext=\"edit\"/></xml><![endif]--></head><body lang=EN-US><div class=WordSection1><p class=MsoNormal>[[A<span style='font-family:\"Cambria Math\"'>&#8594;</span>B v1.1]]<o:p></o:p></p>\r\n<p class=MsoNormal>intent:\r\nREQUEST<o:p></o:p></p><p class=MsoNormal>body: |<o:p></o:p></p><p class=MsoNormal>&nbsp;&nbsp;two spaces in<o:p></o:p></p><p class=MsoNormal><o:p>&nbsp;</o:p></p><p class=MsoNormal>&nbsp; after a blank<o:p></o:p></p><p class=MsoNormal>sig: none<o:p></o:p></p><p class=MsoNormal>[[END]]<o:p></o:p></p></div></body></html>",
                &outlook,
            ),
            // Line breaks.
            (
                "<p>[[A&rarr;B v1.1]]<br>\nintent: REQUEST<br>body: |<br>&nbsp; two spaces in<br><br>&nbsp; after a blank<br>sig: none<br>[[END]]</p>",
                want,
            ),
        ] {
            assert_eq!(to_text(html), *want, "{html}");
        }
    }

    #[test]
    fn entities_are_decoded_and_what_is_not_shown_is_left_out() {
        let html = "<!DOCTYPE html><html><head><title>[[X→Y v1]]</title><meta charset=utf-8><script>var a = '<p>no</p>';</script></head>\
                    <body><style>p { color: red }</style><p>a &lt;b&gt; &amp; c&nbsp;&nbsp;</p><!-- <p>comment</p> -->\
                    <div style=\"display: none\">preheader <div>nested</div> still hidden</div><p hidden>gone</p><p>shown</p></body></html>";
        assert_eq!(to_text(html), "a <b> & c  \nshown\n");
        // Text in a head never closed ends it, as a browser reads it.
        assert_eq!(to_text("<head><meta x>line one<br>two"), "line one\ntwo\n");
    }

    #[test]
    fn white_space_styles_keep_line_breaks_and_spaces() {
        let html = "<div style=\"white-space: pre-wrap\">a\n  b</div><div style='white-space:pre-line'>c   d\ne</div><span style=\"white-space:pre\">\tx</span>";
        assert_eq!(to_text(html), "a\n  b\nc d\ne\n\tx\n");
        // Without markup, line breaks are spaces: the envelope is on one line.
        assert_eq!(
            to_text("[[A→B v1]]\nintent: REQUEST\n"),
            "[[A→B v1]] intent: REQUEST\n"
        );
    }

    #[test]
    fn any_markup_gives_text_without_a_panic() {
        for html in [
            "",
            "<",
            "<p",
            "&",
            "&#",
            "&#x110000;",
            "<pre>",
            "</pre></pre></div>",
            "<script>",
            "<plaintext><p>x</p>",
            "<textarea>\n<b>kept</b></textarea>",
            "<div style=display:none><div></div>x</div>y",
        ] {
            let _ = to_text(html);
        }
        assert_eq!(to_text("<plaintext><p>x</p>"), "<p>x</p>\n");
        assert_eq!(
            to_text("<textarea>\n<b>kept</b></textarea>"),
            "<b>kept</b>\n"
        );
        assert_eq!(
            to_text("<div style=display:none><div></div>x</div>y"),
            "y\n"
        );
        let long = "é".repeat(100_000);
        assert_eq!(to_text(&format!("<p>{long}</p>")), format!("{long}\n"));
    }

    #[test]
    fn deep_nesting_is_read_in_linear_time() {
        // Each text inside reads how it is shown from the innermost element alone, and end
        // tags of elements not open are not searched for: read a level at a time, this took
        // minutes.
        let depth = 200_000;
        let mut html = "<span style=\"white-space:pre\">a".repeat(depth);
        html.push_str(&"</b>x".repeat(depth));
        html.push_str(&"</span>".repeat(depth));
        html.push_str("<p>after</p>");
        let text = to_text(&html);
        assert!(text.starts_with("aaa"), "{}", &text[..20]);
        assert!(
            text.ends_with("xx\nafter\n"),
            "{}",
            &text[text.len() - 20..]
        );
    }
}
