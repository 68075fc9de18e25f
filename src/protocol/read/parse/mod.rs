//! Reading one multi-line envelope, from the line after its banner to `[[END]]` (or to where
//! it evidently stops when `[[END]]` is missing).
//!
//! Sections: headers and META blocks (in any order, blank lines allowed), then the body, then
//! `sig:` / `hash:` and `[[END]]`. Lines are read through the envelope's quote prefix.

use std::borrow::Cow;
use std::cell::{Cell, OnceCell};

mod body;

use super::borrowed::{BannerRef, EnvelopeRef, HeaderRef, MetaRef, ParsedRef, part_of};
use super::lines::{self, Cursor, Line, LineMap};
use super::scan::{self, BannerMatch};
use super::spare::Spare;
use crate::protocol::model::{Banner, KNOWN_HEADERS, structural_key};
use crate::protocol::{Code, Diagnostic, Options, Pos, Positions, Span};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Headers,
    Meta,
    AfterBody,
}

/// The next line as seen through the envelope's prefix.
struct View<'a> {
    line: Line<'a>,
    /// Prefix removed, otherwise as written (body lines use this).
    text: &'a str,
    /// Whether `text` is plain ASCII (nothing to clean, a column is a byte offset), judged
    /// on first use: body lines never need it. Structural lines are asked for their cleaned
    /// text, their invisible characters and the columns of their parts; one look at the
    /// bytes answers all of them for the usual ASCII line. (A plain flag rather than a
    /// once-made pair: the pair's bookkeeping cost more than the look.)
    plain: Cell<Option<bool>>,
    /// `text` through [`lines::clean`], made on first use for a line that is not plain.
    cleaned: OnceCell<Cow<'a, str>>,
    /// Characters of prefix removed, for columns.
    pcols: u32,
}

impl<'a> View<'a> {
    fn plain(&self) -> bool {
        if let Some(plain) = self.plain.get() {
            return plain;
        }
        let plain = lines::is_plain_ascii(self.text);
        self.plain.set(Some(plain));
        plain
    }

    // Asked of every line of an envelope: inlined, as a call costs more than the answer.
    #[inline]
    fn cleaned(&self) -> &str {
        if self.plain() {
            return self.text;
        }
        self.cleaned.get_or_init(|| lines::clean(self.text))
    }

    /// `part` of [`View::cleaned`], borrowed from the input when cleaning left the line as
    /// it was.
    #[inline]
    fn part(&self, part: &str) -> Cow<'a, str> {
        if self.plain() {
            // `part` is a slice of `text` itself.
            return part_of(self.text, self.text, part);
        }
        part_of(self.text, self.cleaned(), part)
    }

    /// Whether [`lines::clean`] removed an invisible character from the line.
    fn had_invisible(&self) -> bool {
        !self.plain() && lines::had_invisible(self.text)
    }

    fn col(&self, off: usize) -> u32 {
        if self.plain() {
            return self.pcols + off.min(self.text.len()) as u32 + 1;
        }
        self.pcols + lines::column(self.text, off)
    }
    fn pos(&self, off: usize) -> Pos {
        Pos {
            line: self.line.no,
            column: self.col(off),
        }
    }
}

struct Block<'a, 'p> {
    cur: Cursor<'a>,
    prefix: &'p str,
    spare: &'p mut Spare<'a>,
    env: EnvelopeRef<'a>,
    pos: Positions,
    diags: Vec<Diagnostic>,
    last: Line<'a>,
    /// Cached look-ahead: (line where it stopped, line of the terminator it found).
    lookahead: Option<(u32, Option<u32>)>,
    seen: bool,
    reply_form: bool,
    /// The open META entry that continuation lines may extend.
    meta_entry: Option<MetaEntry>,
    /// Whether `[[END]]` follows the lines after `sig:`: asked at the first of them, kept
    /// for the rest (asking on every line would cost the rest of the input each time).
    end_after_sig: Option<bool>,
}

/// A header written on the banner's own line (`[[A→B v1]] user: kalle`): its key, its value
/// and where the value starts.
pub(crate) struct BannerHeader<'a> {
    pub key: &'a str,
    pub value: &'a str,
    pub pos: Pos,
}

/// Parses the envelope whose banner is on `banner_line` (read for structure as `banner_map`,
/// which the scan made already); `cur` stands after the banner and
/// is left after the envelope. `None` means the banner had nothing of an envelope after it.
/// `first` holds the headers that stood on the banner line itself (a lost line break).
/// Lists and the body's text are made in storage from `spare` where it holds some.
#[allow(clippy::too_many_arguments)]
pub(crate) fn parse_block<'a>(
    opts: &Options,
    spare: &mut Spare<'a>,
    banner_line: Line<'a>,
    banner_map: &LineMap<'a>,
    bm: BannerMatch<'_>,
    prefix: &str,
    cur: &mut Cursor<'a>,
    first: Vec<BannerHeader<'_>>,
) -> Option<ParsedRef<'a>> {
    let banner_col = banner_map.column(bm.start);
    let version = version_diag(&bm, banner_line.no, banner_col);
    let env = EnvelopeRef {
        banner: banner_ref(banner_map, &bm),
        // Typical envelopes carry up to eight headers: size once, never regrow.
        headers: spare.headers(8),
        meta: spare.meta(),
        body: None,
        sig: None,
        hash: None,
    };
    let pos = Positions {
        banner: Pos {
            line: banner_line.no,
            column: banner_col,
        },
        headers: spare.header_pos(8),
        meta: spare.meta_pos(),
        ..Positions::default()
    };
    let mut b = Block {
        cur: *cur,
        prefix,
        spare,
        env,
        pos,
        diags: Vec::new(),
        last: banner_line,
        lookahead: None,
        seen: false,
        reply_form: false,
        meta_entry: None,
        end_after_sig: None,
    };
    if banner_map.had_invisible() {
        b.invisible(banner_line.no, banner_col);
    }
    b.diags.extend(version);
    b.banner_headers(banner_map, first);
    let terminated = b.run();
    b.close_meta_entry();
    if !b.seen && !terminated {
        return None;
    }
    *cur = b.cur;
    let byte_range = banner_line.start..b.last.end;
    b.end_findings(terminated, &banner_line, banner_col, byte_range.len(), opts);
    Some(ParsedRef {
        envelope: b.env,
        span: Span {
            start_line: banner_line.no,
            end_line: b.last.no,
        },
        byte_range,
        diagnostics: b.diags,
        prefix: prefix.to_string(),
        collapsed: false,
        reply_form: b.reply_form,
        terminated,
        positions: b.pos,
    })
}

/// The banner of the model from a match; a missing version reads as `v1`.
pub(crate) fn banner_of(bm: &BannerMatch<'_>) -> Banner {
    Banner {
        from: bm.from.to_string(),
        to: bm.to.to_string(),
        version: bm.version.unwrap_or("v1").to_string(),
    }
}

/// [`banner_of`] borrowed from the banner's line, which `map` read and `bm` was found in.
fn banner_ref<'a>(map: &LineMap<'a>, bm: &BannerMatch<'_>) -> BannerRef<'a> {
    let part = |s: &str| part_of(map.original, &map.cleaned, s);
    BannerRef {
        from: part(bm.from),
        to: part(bm.to),
        version: bm.version.map_or(Cow::Borrowed("v1"), part),
    }
}

/// The `too-large` error for an envelope of `size` bytes.
pub(crate) fn too_large(size: usize, limit: usize, line: u32, column: u32) -> Diagnostic {
    Diagnostic::new(
        Code::TooLarge,
        line,
        column,
        format!(
            "the envelope is {size} bytes, over the limit of {limit} (E-TOO-LARGE); split the body over several messages or send it as an attachment"
        ),
    )
}

/// The warning for a banner that names no version.
pub(crate) fn version_diag(bm: &BannerMatch<'_>, line: u32, column: u32) -> Option<Diagnostic> {
    bm.version.is_none().then(|| {
        Diagnostic::new(
            Code::MissingVersion,
            line,
            column,
            "the banner names no version; v1 was assumed. Write it as `[[FROM→TO v1]]`",
        )
    })
}

fn is_known(key: &str) -> bool {
    KNOWN_HEADERS.contains(&key)
}

impl<'a> Block<'a, '_> {
    #[inline(always)]
    fn peek(&self) -> Option<View<'a>> {
        let line = self.cur.peek_line()?;
        let text = lines::strip_prefix_strict(line.text, self.prefix)?;
        let pcols = if line.text.len() > text.len() {
            self.prefix.chars().count() as u32
        } else {
            0
        };
        Some(View {
            line,
            text,
            plain: Cell::new(None),
            cleaned: OnceCell::new(),
            pcols,
        })
    }

    #[inline]
    fn consume(&mut self, v: &View<'a>, content: bool) {
        self.cur.skip_peeked(&v.line);
        if content {
            self.last = v.line;
        }
    }

    /// Consumes a structural line (header, META, `sig:`, `[[END]]`), reporting invisible
    /// characters that were removed from it.
    fn structural(&mut self, v: &View<'a>) {
        if v.had_invisible() {
            self.invisible(v.line.no, v.pcols + 1);
        }
        self.consume(v, true);
    }

    fn invisible(&mut self, line: u32, column: u32) {
        self.diags.push(Diagnostic::new(
            Code::InvisibleChars,
            line,
            column,
            "invisible characters (zero-width space, byte-order mark) were removed from this line; they often come from rich-text copies",
        ));
    }

    /// Reads the headers that stood on the banner's own line (`first`, in `banner_map`): a
    /// line break was lost, which is said once for all of them.
    fn banner_headers(&mut self, banner_map: &LineMap<'a>, first: Vec<BannerHeader<'_>>) {
        if let Some(h) = first.first() {
            let keys: Vec<String> = first.iter().map(|h| format!("`{}:`", h.key)).collect();
            let (what, was) = match keys.len() {
                1 => ("the first header", "was"),
                _ => ("the first headers", "were"),
            };
            self.diags.push(Diagnostic::new(
                Code::HeaderOnBanner,
                h.pos.line,
                h.pos.column,
                format!(
                    "{} stood on the banner's line and {was} read as {what} (a line break was lost); put the banner on a line of its own",
                    keys.join(", "),
                ),
            ));
        }
        for h in first {
            self.seen = true;
            self.env.headers.push(HeaderRef {
                key: part_of(banner_map.original, &banner_map.cleaned, h.key),
                value: part_of(banner_map.original, &banner_map.cleaned, h.value),
            });
            self.pos.headers.push(h.pos);
        }
    }

    /// What is said of the envelope as a whole once read (`bytes` long, its banner on
    /// `banner_line` at `banner_col`): empty, not `terminated`, or too large.
    fn end_findings(
        &mut self,
        terminated: bool,
        banner_line: &Line<'a>,
        banner_col: u32,
        bytes: usize,
        opts: &Options,
    ) {
        if terminated && !self.seen {
            self.diags.push(Diagnostic::new(
                Code::EmptyEnvelope,
                banner_line.no,
                banner_col,
                "the envelope has no headers and no body; put `user:`, `session:`, `intent:` and `body: |` between the banner and `[[END]]`",
            ));
        }
        if !terminated {
            self.diags.push(Diagnostic::new(
                Code::MissingEnd,
                self.last.no,
                1,
                format!(
                    "no `[[END]]`: the envelope was taken to end at line {}; add `[[END]]` as its last line",
                    self.last.no
                ),
            ));
        }
        if bytes > opts.size_limit {
            self.diags.push(too_large(
                bytes,
                opts.size_limit,
                banner_line.no,
                banner_col,
            ));
        }
    }

    /// Reads sections until `[[END]]` (returns true) or until the envelope evidently stops.
    ///
    /// Each line is first asked what ends or continues a section (blank lines, what follows
    /// `sig:`, a continued META value); a `key: value` line is then read by its key
    /// ([`Block::keyed`]), and any other by [`Block::unkeyed`].
    fn run(&mut self) -> bool {
        let mut state = State::Headers;
        while let Some(v) = self.peek() {
            let c: &str = v.cleaned();
            if lines::is_end_marker(c) {
                self.structural(&v);
                return true;
            }
            if scan::opens_envelope(c) || lines::is_fence(c) {
                return false;
            }
            if lines::is_blank(c) {
                self.consume(&v, false);
                if state == State::Meta {
                    state = State::Headers;
                    self.close_meta_entry();
                }
                continue;
            }
            if self.pos.sig.is_some() && !self.may_follow_sig(c) {
                // Nothing after `sig:` is content: the signature does not cover it.
                if !self.end_ahead() {
                    return false;
                }
                self.outside_signed(&v);
                continue;
            }
            if state == State::Meta && self.continues_meta_value(c) {
                self.append_meta_value(c);
                self.consume(&v, true);
                continue;
            }
            self.close_meta_entry();
            let read = match lines::split_key(c) {
                Some((key, value, voff)) => self.keyed(&v, c, (key, value, voff), state),
                None => self.unkeyed(&v, c, state).then_some(state),
            };
            match read {
                Some(next) => state = next,
                None => return false,
            }
        }
        false
    }

    /// A line that is not `key: value`, read in `state`; whether the envelope goes on.
    fn unkeyed(&mut self, v: &View<'a>, c: &str, state: State) -> bool {
        if !self.terminator_ahead(v.line.no) {
            return false;
        }
        if state == State::AfterBody {
            // A header after the body ended it, and text follows before `sig:` or
            // `[[END]]`: most likely body text around a line that looked like a header.
            // Reading the envelope as ending here would drop that text and call its `sig:`
            // and `[[END]]` missing.
            self.unread_after_body(v);
            return true;
        }
        // Fixed text, not a copy per line: an envelope at the size limit can be half a
        // million such lines, each with its finding.
        let (code, message) = if state == State::Meta {
            (
                Code::BadMetaEntry,
                "this line inside a META block is not `Key: value`; write it as `Key: value`, or move it into the body",
            )
        } else {
            (
                Code::UnexpectedLine,
                "this line is not a header, a META block or the body; write it as `Key: value`, or move it into the body",
            )
        };
        self.diags.push(Diagnostic::new(
            code,
            v.line.no,
            v.col(lines::indent_of(c).1),
            message,
        ));
        self.seen = true;
        self.structural(v);
        true
    }

    /// A `key: value` line (its value at `voff`), read in `state`: the state after it, or
    /// `None` where the envelope stops.
    fn keyed(
        &mut self,
        v: &View<'a>,
        c: &str,
        (key, value, voff): (&str, &str, usize),
        state: State,
    ) -> Option<State> {
        // Inside a META block keys are case-sensitive: only the lower-case structural keys
        // end it, so `User:` or `Body:` stay entries of the block.
        let lower = structural_key(key, state == State::Meta);
        let after_body = state == State::AfterBody;
        match lower {
            "body" | "response" => {
                self.seen = true;
                self.reply_form = lower == "response";
                let (indent, lead) = lines::indent_of(c);
                self.pos.body = Some(v.pos(lead));
                let key = body::KeyLine {
                    name: if self.reply_form { "response" } else { "body" },
                    value,
                    at: v.pos(voff),
                    indent,
                };
                self.structural(v);
                self.body(&key);
                Some(State::AfterBody)
            }
            "sig" | "hash" => {
                self.seen = true;
                let p = Some(v.pos(lines::indent_of(c).1));
                if lower == "sig" {
                    self.env.sig = Some(v.part(value));
                    self.pos.sig = p;
                } else {
                    self.env.hash = Some(v.part(value));
                    self.pos.hash = p;
                }
                self.structural(v);
                Some(State::AfterBody)
            }
            "meta" => {
                self.seen = true;
                if after_body {
                    self.after_body(v);
                }
                Some(self.meta_key(v, c, value, voff))
            }
            k if is_known(k) || state != State::Meta => {
                if after_body && !is_known(k) && !self.terminator_ahead(v.line.no) {
                    return None;
                }
                self.seen = true;
                if after_body {
                    self.after_body(v);
                }
                // Kept as written: the canonical form must not change what was signed.
                self.env.headers.push(HeaderRef {
                    key: v.part(key),
                    value: v.part(value),
                });
                self.pos.headers.push(v.pos(voff));
                self.structural(v);
                Some(if after_body { state } else { State::Headers })
            }
            _ => {
                self.meta_entry_line(v, c, key, value, voff)?;
                Some(state)
            }
        }
    }

    /// A `meta:` line opening a block named `value` (at `voff`): the state after it.
    fn meta_key(&mut self, v: &View<'a>, c: &str, value: &str, voff: usize) -> State {
        let mpos = v.pos(lines::indent_of(c).1);
        let legacy = value.starts_with('|');
        let namespace = if legacy {
            Cow::Borrowed("legacy")
        } else {
            v.part(value)
        };
        // A block holds a handful of entries (`meta: privacy` five): room for eight at once,
        // instead of four and then eight.
        let entries = self.spare.entries(8);
        self.env.meta.push(MetaRef { namespace, entries });
        let entry_pos = self.spare.entry_pos(8);
        self.pos.meta.push((mpos, entry_pos));
        self.structural(v);
        if !legacy {
            return State::Meta;
        }
        self.diags.push(Diagnostic::new(
            Code::LegacyMeta,
            mpos.line,
            mpos.column,
            "the older `meta: |` layout was read as `meta: legacy`; write META blocks as `meta: <namespace>` followed by `Key: value` lines",
        ));
        // Words after `|` belong to no entry: unread, so said (and a signature cannot vouch
        // for them).
        let after =
            value[1..].trim_start_matches(|c: char| c.is_ascii_digit() || c == '-' || c == '+');
        let rest = after.trim();
        if !rest.is_empty() {
            // Where the words start: after `|`, its flags and the spaces.
            let at = v.pos(voff + value.len() - after.trim_start().len());
            let shown = lines::excerpt(rest, 40);
            self.diags.push(Diagnostic::new(
                Code::BadMetaEntry,
                at.line,
                at.column,
                format!(
                    "`{shown}` after `meta: |` was not read (the block's entries are the indented `key: value` lines below it); move it into the body"
                ),
            ));
        }
        self.legacy_meta();
        State::Headers
    }

    /// An entry of the open META block (keys are case-sensitive); `None` when no block is
    /// open.
    fn meta_entry_line(
        &mut self,
        v: &View<'a>,
        c: &str,
        key: &str,
        value: &str,
        voff: usize,
    ) -> Option<()> {
        let (block, positions) = match (self.env.meta.last_mut(), self.pos.meta.last_mut()) {
            (Some(b), Some((_, p))) => (b, p),
            _ => return None,
        };
        block.entries.push((v.part(key), v.part(value)));
        positions.push(v.pos(voff));
        self.meta_entry = Some(MetaEntry {
            indent: lines::indent_of(c).0,
            continued: false,
            base: None,
            flow: Flow::of(value),
        });
        self.structural(v);
        Some(())
    }

    /// Whether a line may stand between `sig:` and `[[END]]`: only the one `hash:` (it covers
    /// the text through the `sig:` line, so it comes after it).
    fn may_follow_sig(&self, c: &str) -> bool {
        self.env.hash.is_none()
            && lines::split_key(c).is_some_and(|(k, _, _)| k.eq_ignore_ascii_case("hash"))
    }

    /// Whether `[[END]]` follows before the next banner or fence, reading from the line not
    /// yet consumed. Decided once per envelope, at its first line after `sig:`: the answer
    /// decides whether those lines belong to the envelope (unread, reported) or end it.
    fn end_ahead(&mut self) -> bool {
        if let Some(known) = self.end_after_sig {
            return known;
        }
        let found = self.find_end();
        self.end_after_sig = Some(found);
        found
    }

    fn find_end(&self) -> bool {
        let mut c = self.cur;
        while let Some(l) = c.next_line() {
            let Some(s) = lines::strip_prefix_strict(l.text, self.prefix) else {
                return false;
            };
            let cl = lines::clean(s);
            if lines::is_end_marker(&cl) {
                return true;
            }
            if scan::opens_envelope(&cl) || lines::is_fence(&cl) {
                return false;
            }
        }
        false
    }

    /// A line between `sig:` and `[[END]]`: consumed, never read, and reported. With a real
    /// signature it is an error, because a valid signature would otherwise vouch for an
    /// envelope whose meaning includes text it never covered.
    fn outside_signed(&mut self, v: &View<'a>) {
        let signed = self
            .env
            .sig
            .as_deref()
            .is_some_and(|s| !s.trim().is_empty() && !s.trim().eq_ignore_ascii_case("none"));
        let sig_line = self.pos.sig.map_or(0, |p| p.line);
        let d = if signed {
            Diagnostic::new(
                Code::ContentAfterSig,
                v.line.no,
                v.pcols + 1,
                format!(
                    "this line comes after `sig:` (line {sig_line}), outside the signed text, and was not read; the envelope cannot be verified. Only `hash:` may stand between `sig:` and `[[END]]`: ask the sender to put the line above `sig:` and sign again"
                ),
            )
        } else {
            Diagnostic::new(
                Code::IgnoredAfterSig,
                v.line.no,
                v.pcols + 1,
                format!(
                    "this line comes after `sig:` (line {sig_line}) and was not read; only `hash:` may stand between `sig:` and `[[END]]`: move it above `sig:`"
                ),
            )
        };
        self.diags.push(d);
        self.seen = true;
        self.structural(v);
    }

    /// Whether a line inside a META block continues the value of the entry before it rather
    /// than starting a new entry. The spec says "use YAML for complex data", so values are
    /// written over several lines: a flow list or mapping (`Targets: [` … `]`) continues
    /// until its brackets close, up to a `Key: value` line at column 1 (the next entry or
    /// the envelope's own structure); otherwise a line indented deeper than the entry's key continues it unless
    /// it is itself `Key: value` after a complete one-line value (then it is an entry, as
    /// blocks whose entries are all indented alike are read).
    fn continues_meta_value(&self, c: &str) -> bool {
        let Some(entry) = &self.meta_entry else {
            return false;
        };
        if entry.flow.depth > 0 {
            // An unclosed bracket must not swallow the block: a `Key: value` line at the
            // start of a line (the next entry, or the envelope's own structure) ends it.
            return !(lines::indent_of(c).0 == 0 && lines::split_key(c).is_some());
        }
        let value_empty = self
            .env
            .meta
            .last()
            .and_then(|b| b.entries.last())
            .is_some_and(|(_, v)| v.is_empty());
        lines::indent_of(c).0 > entry.indent
            && (entry.continued || value_empty || lines::split_key(c).is_none())
    }

    /// Adds a continuation line to the open entry's value. The line keeps its indentation
    /// relative to the entry's first continuation line: nested YAML (`server:` over `host:`,
    /// a `|` block holding an indented `if`) means something only through it, and the
    /// canonical form writes it back the same way.
    fn append_meta_value(&mut self, c: &str) {
        let (indent, lead) = lines::indent_of(c);
        let line = c[lead..].trim_end();
        let base = match &mut self.meta_entry {
            Some(entry) => *entry.base.get_or_insert(indent),
            None => indent,
        };
        if let Some((_, v)) = self.env.meta.last_mut().and_then(|b| b.entries.last_mut()) {
            let v = v.to_mut();
            v.push('\n');
            (0..indent.saturating_sub(base)).for_each(|_| v.push(' '));
            v.push_str(line);
        }
        if let Some(entry) = &mut self.meta_entry {
            entry.continued = true;
            // Kept up to date line by line: rescanning the value would cost its length
            // on every line of a long list.
            entry.flow.feed('\n');
            line.chars().for_each(|ch| entry.flow.feed(ch));
        }
    }

    /// Ends the open META entry, warning when its flow list never closed (the lines it
    /// took are in its value; nothing was dropped, but the value is incomplete).
    #[inline]
    fn close_meta_entry(&mut self) {
        // Asked on every line: inlined, so that a line with no open entry costs no call.
        if let Some(entry) = self.meta_entry.take()
            && entry.flow.depth > 0
        {
            self.unclosed_meta_value();
        }
    }

    /// The warning for a META entry whose flow collection never closed.
    fn unclosed_meta_value(&mut self) {
        let (Some(block), Some((_, positions))) = (self.env.meta.last(), self.pos.meta.last())
        else {
            return;
        };
        if let (Some((key, _)), Some(pos)) = (block.entries.last(), positions.last()) {
            self.diags.push(Diagnostic::new(
                Code::UnclosedMetaValue,
                pos.line,
                pos.column,
                format!(
                    "the value of `{key}` opens a list or mapping that never closes; it was read up to the end of the META block. Close it with `]` or `}}`"
                ),
            ));
        }
    }

    /// A line after the body that is no header, `sig:` or `[[END]]`, with one of those
    /// ahead: consumed, never read, and reported as the error it is (the envelope would
    /// otherwise be stored without it).
    fn unread_after_body(&mut self, v: &View<'a>) {
        self.diags.push(Diagnostic::new(
            Code::UnexpectedLine,
            v.line.no,
            v.pcols + 1,
            "this line comes after the body, which a header line above it ended, and was not read; if the header line is body text, indent it like the body, otherwise move this line into the body",
        ));
        self.seen = true;
        self.structural(v);
    }

    fn after_body(&mut self, v: &View<'a>) {
        self.diags.push(Diagnostic::new(
            Code::HeaderAfterBody,
            v.line.no,
            v.pcols + 1,
            "a header after the body; it was kept, and the canonical form moves it before `body:`",
        ));
    }

    /// Entries of an old-style `meta: |` block: the indented `key: value` lines after it.
    fn legacy_meta(&mut self) {
        while let Some(v) = self.peek() {
            let c: &str = v.cleaned();
            if lines::indent_of(c).0 == 0 || lines::is_blank(c) {
                return;
            }
            let Some((key, value, voff)) = lines::split_key(c) else {
                return;
            };
            if let (Some(b), Some((_, p))) = (self.env.meta.last_mut(), self.pos.meta.last_mut()) {
                b.entries.push((v.part(key), v.part(value)));
                p.push(v.pos(voff));
            }
            self.consume(&v, true);
        }
    }

    /// Whether `[[END]]` or an unindented `sig:` comes before the next banner, reading from
    /// line `from` (the line not yet consumed). Cached, so repeated questions cost nothing.
    fn terminator_ahead(&mut self, from: u32) -> bool {
        if let Some((until, found)) = self.lookahead
            && from <= until
        {
            return found.is_some();
        }
        let mut c = self.cur;
        let mut result = (u32::MAX, None);
        while let Some(l) = c.next_line() {
            let Some(s) = lines::strip_prefix_strict(l.text, self.prefix) else {
                result = (l.no, None);
                break;
            };
            let cl = lines::clean(s);
            if lines::is_end_marker(&cl)
                || is_unindented_key(&cl, "sig")
                || is_unindented_key(&cl, "hash")
            {
                result = (l.no, Some(l.no));
                break;
            }
            if scan::opens_envelope(&cl) {
                result = (l.no, None);
                break;
            }
        }
        self.lookahead = Some(result);
        result.1.is_some()
    }
}

/// Whether a cleaned line is `key:` at column one (case-insensitive key).
pub(super) fn is_unindented_key(c: &str, key: &str) -> bool {
    c.len() > key.len()
        && c.as_bytes()[key.len()] == b':'
        && c[..key.len()].eq_ignore_ascii_case(key)
}

/// Lines that end an indented body when they appear less indented: the envelope's own
/// structure, not body text that lost its indentation.
pub(super) fn is_structural(c: &str) -> bool {
    if lines::is_end_marker(c) || scan::opens_envelope(c) || lines::is_fence(c) {
        return true;
    }
    match lines::split_key(c) {
        Some((k, _, _)) => {
            let k = structural_key(k, false);
            matches!(k, "sig" | "hash" | "meta") || is_known(k)
        }
        None => false,
    }
}

/// An open META entry: the indentation of its key, whether it already took a continuation
/// line, and the state of its flow collection.
#[derive(Debug, Clone, Copy)]
struct MetaEntry {
    indent: usize,
    continued: bool,
    /// The indentation of its first continuation line, from which later ones are measured.
    base: Option<usize>,
    flow: Flow,
}

/// How many brackets of a YAML flow collection are open in a META value read so far: none
/// unless the value starts with `[` or `{` (so `:-[` in prose opens nothing). Brackets
/// inside double-quoted strings do not count.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Flow {
    active: bool,
    /// Brackets still open.
    pub depth: usize,
    quoted: bool,
    escaped: bool,
}

impl Flow {
    /// The state after reading `value`.
    pub(crate) fn of(value: &str) -> Flow {
        let mut f = Flow {
            active: value.starts_with(['[', '{']),
            ..Flow::default()
        };
        if f.active {
            value.chars().for_each(|ch| f.feed(ch));
        }
        f
    }

    /// Reads one more character of the value.
    fn feed(&mut self, ch: char) {
        if !self.active {
            return;
        }
        if self.quoted {
            match ch {
                _ if self.escaped => self.escaped = false,
                '\\' => self.escaped = true,
                '"' => self.quoted = false,
                _ => {}
            }
            return;
        }
        match ch {
            '"' => self.quoted = true,
            '[' | '{' => self.depth += 1,
            ']' | '}' => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
    }
}
