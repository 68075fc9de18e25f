//! Finding envelopes in arbitrary text: the [`Extractor`] walks the input line by line,
//! recognizes banners (alone on a line, behind a quote prefix, or at the start of an envelope
//! collapsed onto one line) and hands each envelope to the block or one-line parser.
//!
//! Every line is visited a bounded number of times: banners must close within
//! [`MAX_BANNER`] bytes, and look-aheads stop at the next banner and are cached, so the whole
//! pass is linear in the input whatever it holds.

use super::borrowed::ParsedRef;
use super::lines::{self, Cursor, Line, LineMap};
use super::spare::Spare;
use crate::protocol::{Code, Diagnostic, Options, Parsed, collapsed, parse, quick, validate};

/// Longest banner accepted, from `[[` to `]]`, in bytes.
pub(crate) const MAX_BANNER: usize = 512;

/// A banner found in a line, its parts borrowed from the line: most banners are read only
/// to learn that a line is one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BannerMatch<'s> {
    pub from: &'s str,
    pub to: &'s str,
    pub version: Option<&'s str>,
    /// Byte offset of `[[` in the (cleaned) line.
    pub start: usize,
    /// Byte offset just past `]]`.
    pub end: usize,
}

/// What starts at a `[[`.
pub(crate) enum Bracket<'s> {
    Banner(BannerMatch<'s>),
    End { end: usize },
    Nothing,
}

/// Reads the bracket construct starting at byte `at` (which holds `[[`) of a cleaned line.
///
/// Every banner is read here, its parts trimmed with [`lines::trim`]: the standard trim
/// decodes each character at the edges as Unicode, and a banner's parts are ASCII at their
/// edges nearly always.
pub(crate) fn match_bracket(line: &str, at: usize) -> Bracket<'_> {
    let window_end = floor_char_boundary(line, (at + MAX_BANNER).min(line.len()));
    let window = &line[at + 2..window_end];
    let Some(close) = lines::find_pair(window.as_bytes(), *b"]]") else {
        return Bracket::Nothing;
    };
    let inner = &window[..close];
    let end = at + 2 + close + 2;
    if lines::trim(inner).eq_ignore_ascii_case("END") {
        return Bracket::End { end };
    }
    let ascii_arrow = lines::find_pair(inner.as_bytes(), *b"->");
    let (arrow, alen) = match (lines::find_arrow(inner.as_bytes()), ascii_arrow) {
        (Some(a), Some(b)) if b < a => (b, 2),
        (Some(a), _) => (a, '→'.len_utf8()),
        (None, Some(b)) => (b, 2),
        (None, None) => return Bracket::Nothing,
    };
    if memchr::memchr(b'\n', inner.as_bytes()).is_some()
        || lines::find_pair(inner.as_bytes(), *b"[[").is_some()
    {
        return Bracket::Nothing;
    }
    let from = lines::trim(&inner[..arrow]);
    let after = lines::trim(&inner[arrow + alen..]);
    let (to, version) = match after.rsplit_once(char::is_whitespace) {
        Some((to, v)) if is_version(v) => (lines::trim(to), Some(v)),
        _ if is_version(after) => ("", Some(after)),
        _ => (after, None),
    };
    if from.is_empty() && to.is_empty() {
        return Bracket::Nothing;
    }
    Bracket::Banner(BannerMatch {
        from,
        to,
        version,
        start: at,
        end,
    })
}

/// Whether `s` is `v` or `V` and numbers joined by dots (`v1`, `V1.1`). One pass over the
/// bytes (a `split` costs more than the short word it splits): every byte a digit or a dot,
/// and a dot only between two digits.
pub(super) fn is_version(s: &str) -> bool {
    let Some(rest) = s.strip_prefix(['v', 'V']) else {
        return false;
    };
    let mut digit_before = false;
    for &b in rest.as_bytes() {
        match b {
            b'0'..=b'9' => digit_before = true,
            b'.' if digit_before => digit_before = false,
            _ => return false,
        }
    }
    digit_before
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Whether a (cleaned, prefix-stripped) line starts with a banner: an envelope without
/// `[[END]]` stops where the next one begins, and large inputs may be cut before such a line.
#[inline]
pub(crate) fn starts_banner(s: &str) -> bool {
    // Most lines asked (every line of an envelope) start with a letter: no trimming for them,
    // and no call.
    if s.as_bytes()
        .first()
        .is_some_and(|&b| b.is_ascii() && !matches!(b, b' ' | b'\t' | b'['))
    {
        return false;
    }
    starts_banner_trimmed(s)
}

/// [`starts_banner`] for a line that may start with indentation or `[`.
fn starts_banner_trimmed(s: &str) -> bool {
    let t = s.trim_start_matches(lines::is_indent);
    t.starts_with("[[") && matches!(match_bracket(t, 0), Bracket::Banner(_))
}

/// Whether a (cleaned, prefix-stripped) line opens an envelope: it starts with a banner, or
/// ends with one that names a version after other text (`echo '[[A→B v1]]`, a bullet). Such
/// a line ends whatever envelope came before, and every look-ahead stops there, which keeps
/// extraction linear however many of them a paste holds.
#[inline]
pub(crate) fn opens_envelope(s: &str) -> bool {
    starts_banner(s) || ends_with_banner(s)
}

/// Whether the line ends with a versioned banner that is not inline code.
#[inline]
fn ends_with_banner(s: &str) -> bool {
    // A line that ends in an ASCII character other than `]` and white space does not.
    if lines::edge_rules_out(s.as_bytes().last(), b']') {
        return false;
    }
    ends_with_banner_trimmed(s)
}

/// [`ends_with_banner`] for a line that may end with `]` or white space.
fn ends_with_banner_trimmed(s: &str) -> bool {
    let t = s.trim_end();
    if !t.ends_with("]]") {
        return false;
    }
    let Some(at) = t.rfind("[[") else {
        return false;
    };
    if t[..at].ends_with('`') {
        return false;
    }
    matches!(match_bracket(t, at), Bracket::Banner(bm) if bm.version.is_some() && bm.end == t.len())
}

/// Whether everything before `[[` is indentation and quote markers, so the banner begins
/// the line.
fn begins_line(cleaned: &str, at: usize) -> bool {
    cleaned[..at]
        .chars()
        .all(|c| lines::is_indent(c) || c == '>')
}

/// An iterator over the envelopes of one input, in order. Diagnostics that belong to no
/// envelope are collected and handed over by [`Extractor::into_diagnostics`].
pub(crate) struct Extractor<'a> {
    input: &'a str,
    cur: Cursor<'a>,
    opts: Options,
    diags: Vec<Diagnostic>,
    /// A line partly consumed by a one-line envelope, and where to continue in it.
    resume: Option<(Line<'a>, LineMap<'a>, usize)>,
    /// Storage of envelopes given back, for the next ones.
    spare: Spare<'a>,
    /// Whether envelopes the quick reader finds nothing wrong in are counted instead of read
    /// ([`Extractor::counting_clean`]).
    quick: bool,
    /// How many envelopes were counted so.
    clean: usize,
}

impl<'a> Extractor<'a> {
    /// An extractor over the whole of `input`, numbering lines from 1.
    pub(crate) fn new(input: &'a str, opts: Options) -> Self {
        Self::with_first_line(input, 1, opts).at_input_start()
    }

    /// An extractor over a piece of a larger input that starts at line `first_line`, so
    /// callers that read a large file in pieces still get the file's line numbers. A
    /// U+FEFF at the piece's start is text here (reported on a structural line, as anywhere
    /// in a line); for the piece that starts the input, [`Extractor::at_input_start`].
    pub(crate) fn with_first_line(input: &'a str, first_line: u32, opts: Options) -> Self {
        Extractor {
            input,
            cur: Cursor::new(input, first_line),
            opts,
            diags: Vec::new(),
            resume: None,
            spare: Spare::default(),
            quick: false,
            clean: 0,
        }
    }

    /// This extractor for a piece that starts the input: a leading byte-order mark is the
    /// file's encoding signature, not text, and is skipped (byte offsets still refer to the
    /// input). Only there: a piece cut from the middle of a file that starts with U+FEFF
    /// holds it as the whole file read at once does.
    pub(crate) fn at_input_start(mut self) -> Self {
        let unread = self.cur.rest().len() == self.input.len();
        if unread && self.input.starts_with('\u{FEFF}') {
            self.cur.skip('\u{FEFF}'.len_utf8());
        }
        self
    }

    /// This extractor, counting the envelopes in which the quick reader ([`quick::read`])
    /// finds nothing wrong (but a v1.0 intent, which joins the extractor's own findings)
    /// instead of handing them out: for callers that want only the
    /// findings and the number of envelopes (`check`). [`Extractor::clean_count`] says how
    /// many were counted so.
    pub(crate) fn counting_clean(mut self) -> Self {
        self.quick = true;
        self
    }

    /// How many envelopes were counted without being handed out.
    pub(crate) fn clean_count(&self) -> usize {
        self.clean
    }

    /// Gives back an envelope (from [`Extractor::next_ref`]) the caller is done with: its
    /// lists and body text are reused for the envelopes read next instead of being freed
    /// and allocated again.
    pub(crate) fn recycle(&mut self, p: ParsedRef<'a>) {
        self.spare.recycle(p);
    }

    /// The number the next line read gets: once every envelope is read, the first line's
    /// number plus the number of line breaks in an input that ends with one.
    #[cfg(test)]
    pub(crate) fn line(&self) -> u32 {
        self.cur.line()
    }

    /// The diagnostics found outside envelopes.
    pub(crate) fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diags
    }

    /// How many diagnostics outside envelopes are held, waiting for
    /// [`Extractor::take_diagnostics`] or [`Extractor::into_diagnostics`].
    pub(crate) fn held(&self) -> usize {
        self.diags.len()
    }

    /// The diagnostics outside envelopes found so far, in the order found; the extractor goes
    /// on with none held. A caller that writes findings as it reads takes them every so
    /// often, so that an input of a million stray `[[END]]` lines is not held whole.
    pub(crate) fn take_diagnostics(&mut self) -> Vec<Diagnostic> {
        std::mem::take(&mut self.diags)
    }

    /// The first place, as (line, column), that may still get a diagnostic: every finding
    /// before it has been made, in envelopes handed out or among those held. On a line partly
    /// consumed by one-line envelopes that is where reading goes on: whatever is found there
    /// later (an envelope and its findings, a banner in text) stands at or after it, so a
    /// line of a million collapsed envelopes is not held whole. Otherwise it is the start of
    /// the next line to read (column 0: before any finding on it).
    pub(crate) fn settled(&self) -> (u32, u32) {
        match &self.resume {
            Some((line, map, from)) => (line.no, map.column(*from)),
            None => (self.cur.line(), 0),
        }
    }

    /// The banner `bm` at `at` ends its line (`whole`: it is all of the line): the start of
    /// an envelope (read quickly when it is in the plainest shape, else in full and
    /// validated), or a banner with nothing of an envelope after it, which is said.
    fn banner_alone(
        &mut self,
        line: Line<'a>,
        map: &LineMap<'a>,
        at: usize,
        bm: BannerMatch<'_>,
        whole: bool,
    ) -> Option<ParsedRef<'a>> {
        let c: &str = &map.cleaned;
        if self.quick && at == 0 && c[bm.end..].is_empty() && map.unchanged() {
            let mut ahead = self.cur;
            #[cfg(debug_assertions)]
            let had = self.diags.len();
            if quick::read(&line, &bm, &mut ahead, &self.opts, &mut self.diags) {
                #[cfg(debug_assertions)]
                self.assert_clean(line, map, bm, &ahead, had);
                self.cur = ahead;
                self.clean += 1;
                return None;
            }
        }
        let prefix = quote_prefix(line.text);
        let column = map.column(at);
        // `parse_block` moves the cursor only when it found an envelope.
        if let Some(mut p) = parse::parse_block(
            &self.opts,
            &mut self.spare,
            line,
            map,
            bm,
            &prefix,
            &mut self.cur,
            Vec::new(),
        ) {
            if !whole {
                p.diagnostics
                    .push(text_before_banner(&c[..at], line.no, column));
            }
            validate::validate_ref(&mut p, self.input, &self.opts);
            return Some(p);
        }
        let (code, message) = if whole {
            (
                Code::LoneBanner,
                "a banner with no headers or body after it was ignored; if it starts an envelope, put its headers on the lines after it",
            )
        } else {
            (
                Code::BannerInText,
                "a banner at the end of a line of text, with no headers or body after it, was not read as an envelope; if it starts one, put it on a line of its own with its headers after it",
            )
        };
        self.diags
            .push(Diagnostic::new(code, line.no, column, message));
        None
    }

    fn scan_line(
        &mut self,
        line: Line<'a>,
        map: LineMap<'a>,
        from: usize,
    ) -> Option<ParsedRef<'a>> {
        let c: &str = &map.cleaned;
        let mut search = from.min(c.len());
        // Offsets in `from` refer to the cleaned line (one-line envelopes are read cleaned).
        while let Some(rel) = lines::find_pair(&c.as_bytes()[search..], *b"[[") {
            let at = search + rel;
            search = at + 2;
            match match_bracket(c, at) {
                Bracket::Nothing => continue,
                Bracket::End { end } => {
                    if begins_line(c, at) && c[end..].trim().is_empty() {
                        self.diags.push(Diagnostic::new(
                            Code::StrayEnd,
                            line.no,
                            map.column(at),
                            "`[[END]]` with no envelope open: its banner is missing or was not copied",
                        ));
                    }
                }
                Bracket::Banner(bm) => {
                    let rest = &c[bm.end..];
                    // `[[FROM→TO v1]]` written as inline code is a mention of the format.
                    let mention = c[..at].ends_with('`') && rest.starts_with('`');
                    let versioned = bm.version.is_some() && !mention;
                    if rest.trim().is_empty() {
                        let whole = begins_line(c, at);
                        if !whole && !versioned {
                            // `[[Page→Other]]` at the end of prose: a wiki link, not a banner.
                            continue;
                        }
                        return self.banner_alone(line, &map, at, bm, whole);
                    }
                    if collapsed::looks_collapsed(rest) {
                        if let Some(p) = self.header_on_banner(line, &map, at, bm) {
                            return Some(p);
                        }
                        let (p, resume_at) = collapsed::parse_line(line, &map, bm, &self.opts);
                        let mut p = ParsedRef::owning(p);
                        validate::validate_ref(&mut p, self.input, &self.opts);
                        self.resume = resume_at.map(|off| (line, map, off));
                        return Some(p);
                    }
                    if versioned {
                        self.diags.push(Diagnostic::new(
                            Code::BannerInText,
                            line.no,
                            map.column(at),
                            "a banner inside a line of text was not read as an envelope; if it starts one, put it on a line of its own with its headers after it",
                        ));
                    }
                }
            }
        }
        None
    }
}

#[cfg(debug_assertions)]
impl<'a> Extractor<'a> {
    /// Reads an envelope the quick reader accepted with the full reader as well, and panics
    /// unless it finds nothing and stops where the quick reader stopped: in debug builds
    /// every test that runs `check` compares the two readers.
    fn assert_clean(
        &mut self,
        line: Line<'a>,
        map: &LineMap<'a>,
        bm: BannerMatch<'_>,
        ahead: &Cursor<'a>,
        had: usize,
    ) {
        let mut cur = self.cur;
        let p = parse::parse_block(
            &self.opts,
            &mut self.spare,
            line,
            map,
            bm,
            "",
            &mut cur,
            Vec::new(),
        );
        let Some(mut p) = p else {
            panic!(
                "the quick reader accepted line {} that holds no envelope",
                line.no
            );
        };
        validate::validate_ref(&mut p, self.input, &self.opts);
        let quick = &self.diags[had..];
        assert!(
            p.diagnostics == quick && cur.line() == ahead.line(),
            "the quick reader read the envelope at line {} to line {} with {quick:?}, the full reader to line {} with {:?}",
            line.no,
            ahead.line(),
            cur.line(),
            p.diagnostics
        );
        self.spare.recycle(p);
    }
}

impl Iterator for Extractor<'_> {
    type Item = Parsed;

    fn next(&mut self) -> Option<Parsed> {
        self.next_ref().map(ParsedRef::into_parsed)
    }
}

impl<'a> Extractor<'a> {
    /// The next envelope in the reader's own form, its text borrowed from the input: for
    /// callers that keep little of it (`check` keeps its diagnostics), which then need not
    /// copy the rest.
    pub(crate) fn next_ref(&mut self) -> Option<ParsedRef<'a>> {
        loop {
            match self.next_step(usize::MAX) {
                Step::Envelope(p) => return Some(p),
                Step::Held => {}
                Step::End => return None,
            }
        }
    }

    /// [`Extractor::next_ref`] that also stops between lines once `most` diagnostics outside
    /// envelopes are held ([`Step::Held`]): a text without envelopes would otherwise be
    /// read to its end, and its findings held, before the caller saw any of them.
    pub(crate) fn next_step(&mut self, most: usize) -> Step<'a> {
        loop {
            if self.diags.len() >= most {
                return Step::Held;
            }
            let (line, map, from) = match self.resume.take() {
                Some(r) => r,
                None => {
                    // Most lines are prose: skip them before any other work. (A single `[`
                    // is enough to look closer: an invisible character may sit between two.)
                    if !self.cur.skip_to_line_with(b'[') {
                        return Step::End;
                    }
                    let Some(line) = self.cur.next_line() else {
                        return Step::End;
                    };
                    (line, LineMap::new(line.text), 0)
                }
            };
            if let Some(p) = self.scan_line(line, map, from) {
                return Step::Envelope(p);
            }
        }
    }
}

/// What [`Extractor::next_step`] came to. (As large as the `Option<ParsedRef>` that
/// [`Extractor::next_ref`] returns, and moved once: boxing the envelope would allocate per
/// envelope.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Step<'a> {
    /// The next envelope.
    Envelope(ParsedRef<'a>),
    /// As many diagnostics outside envelopes as were asked for are held.
    Held,
    /// The input is read.
    End,
}

impl<'a> Extractor<'a> {
    /// `[[A→B v1]] user: kalle` followed by the envelope's other lines: the banner carries
    /// the first header because a line break after it was lost. Read as a block envelope
    /// whose first header is on the banner line; a one-line read would cut it after that
    /// header and lose every following line. `None` when the line holds more than headers
    /// or the next line does not continue an envelope (then it is a collapsed envelope).
    fn header_on_banner(
        &mut self,
        line: Line<'a>,
        map: &LineMap<'a>,
        at: usize,
        bm: BannerMatch<'_>,
    ) -> Option<ParsedRef<'a>> {
        let c: &str = &map.cleaned;
        if !begins_line(c, at) {
            return None;
        }
        let rest_at = bm.end;
        let found = collapsed::banner_headers(&c[rest_at..])?;
        let prefix = quote_prefix(line.text);
        // The next non-blank line decides (a blank line may stand before a META block).
        let mut ahead = self.cur;
        let next = loop {
            let l = ahead.next_line()?;
            let text = lines::clean(lines::strip_prefix_strict(l.text, &prefix)?);
            if !lines::is_blank(&text) {
                break text;
            }
        };
        if !continues_envelope(&next) {
            return None;
        }
        let first = (found.into_iter())
            .map(|(key, value, voff)| parse::BannerHeader {
                key,
                value,
                pos: crate::protocol::Pos {
                    line: line.no,
                    column: map.column(rest_at + voff),
                },
            })
            .collect();
        let mut p = parse::parse_block(
            &self.opts,
            &mut self.spare,
            line,
            map,
            bm,
            &prefix,
            &mut self.cur,
            first,
        )?;
        validate::validate_ref(&mut p, self.input, &self.opts);
        Some(p)
    }
}

/// The quote prefix of a banner line as written (it may hold odd spaces that `clean`
/// changed): the indentation and `>` that begin the line. Other text before the banner
/// (`echo '`, a bullet, a prompt) is not repeated on the envelope's lines, so it is no prefix.
fn quote_prefix(text: &str) -> String {
    let orig_at = lines::find_pair(text.as_bytes(), *b"[[").unwrap_or(0);
    text[..orig_at]
        .chars()
        .filter(|c| !lines::is_invisible(*c))
        .take_while(|c| lines::is_indent(*c) || *c == '>')
        .collect()
}

/// Whether a line reads as the next line of an envelope: a structural `key:` (any case) or
/// the end marker.
fn continues_envelope(c: &str) -> bool {
    if lines::is_end_marker(c) {
        return true;
    }
    lines::split_key(c).is_some_and(|(k, _, _)| {
        crate::protocol::model::STRUCTURAL_KEYS
            .iter()
            .any(|s| s.eq_ignore_ascii_case(k))
    })
}

/// The warning for text that stood before a banner on its line and was removed.
fn text_before_banner(lead: &str, line: u32, column: u32) -> Diagnostic {
    let lead = lead.trim();
    let shown: String = lead.chars().take(24).collect();
    let more = if lead.chars().count() > 24 { "…" } else { "" };
    Diagnostic::new(
        Code::TextBeforeBanner,
        line,
        column,
        format!(
            "`{shown}{more}` before the banner was removed and the envelope read from `[[`; a banner belongs on a line of its own"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answers before any trimming agree with the trimmed reading: banners and fences
    /// behind every kind of indentation and quote, and lines that only look close to them.
    #[test]
    fn banners_and_fences_behind_any_indentation() {
        for lead in ["", " ", "\t", "\u{a0}", "\u{2007}", "  \u{202f}", ">", "> "] {
            let banner = format!("{lead}[[A→B v1]]");
            assert!(opens_envelope(&banner), "{banner:?}");
            assert!(lines::is_fence(&format!("{lead}```text")), "{lead:?}");
            assert!(lines::is_fence(&format!("{lead}~~~")), "{lead:?}");
        }
        for lead in ["", " ", "\t", "\u{a0}", "  \u{202f}"] {
            assert!(starts_banner(&format!("{lead}[[A→B v1]]")), "{lead:?}");
        }
        for trail in ["", " ", "\t", "\r", "\u{b}", "\u{c}", "\u{3000}", "\u{85}"] {
            let line = format!("echo '[[A→B v1]]{trail}");
            assert!(opens_envelope(&line), "{line:?}");
        }
        for not in [
            "user: kalle",
            "x[[A→B v1]]y",
            "`[[A→B v1]]`",
            "a]",
            "\u{1c}[[A→B v1]]x",
            "é",
            "",
        ] {
            assert!(!opens_envelope(not), "{not:?}");
            assert!(!lines::is_fence(not), "{not:?}");
        }
        assert!(opens_envelope("[[A→B v1]] user: kalle"));
        assert!(!lines::is_fence("x```"));
        assert!(!starts_banner("> [[A→B v1]]"));
    }
}
