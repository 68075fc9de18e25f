//! Lines of pasted text and the small normalizations applied to structural lines.
//!
//! Structural lines (banner, headers, META, `sig:`, `[[END]]`) are read through [`clean`]:
//! chat windows and rich-text editors sprinkle zero-width characters and non-breaking spaces
//! into them. Body lines are never cleaned: they are the message, kept as written.

use std::borrow::Cow;

/// One input line without its line ending.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'a> {
    /// The text, with `\n` and the `\r`s before it removed.
    pub text: &'a str,
    /// 1-based line number.
    pub no: u32,
    /// Byte offset of the line's first byte in the input.
    pub start: usize,
    /// Byte offset just past the line ending (the next line's start).
    pub end: usize,
}

/// A position in the input that can be copied to look ahead without consuming.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    line: u32,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `text`, numbering lines from `first_line`.
    pub(crate) fn new(text: &'a str, first_line: u32) -> Self {
        Cursor {
            text,
            pos: 0,
            line: first_line,
        }
    }

    /// The number the next line gets.
    pub(crate) fn line(&self) -> u32 {
        self.line
    }

    /// Moves past the first `n` bytes of the current line (a byte-order mark).
    pub(crate) fn skip(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.text.len());
    }

    /// The next line, consumed.
    #[inline]
    pub(crate) fn next_line(&mut self) -> Option<Line<'a>> {
        if self.pos >= self.text.len() {
            return None;
        }
        let rest = &self.text[self.pos..];
        let (raw, advance) = match find_newline(rest.as_bytes()) {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        // CR LF is a line break, and so is CR CR LF: text passed twice through a conversion
        // to CR LF (a Windows clipboard, a mail gateway) gets one CR more each time. A CR kept
        // at a line's end would be content no renderer can write back (the canonical text's
        // CR LF reads as a plain break), so `parse(fmt(x))` would differ from `parse(x)`.
        let text = if raw.ends_with('\r') {
            raw.trim_end_matches('\r')
        } else {
            raw
        };
        let line = Line {
            text,
            no: self.line,
            start: self.pos,
            end: self.pos + advance,
        };
        self.pos += advance;
        self.line += 1;
        Some(line)
    }

    /// Moves past `line`, a line this cursor's [`Cursor::peek_line`] returned, without
    /// searching for its end again: every line of an envelope is peeked before it is
    /// consumed, and finding each line's end twice was a tenth of `check`'s time.
    #[inline]
    pub(crate) fn skip_peeked(&mut self, line: &Line<'a>) {
        debug_assert_eq!(line.start, self.pos, "a line peeked at this position");
        self.pos = line.end;
        self.line = line.no + 1;
    }

    /// Moves to the start of the next line that holds `byte`, counting the lines passed, and
    /// returns true; at the end of the text when no line does (then false). One search over
    /// the stretch instead of two per line: most lines of a transcript are prose.
    pub(crate) fn skip_to_line_with(&mut self, byte: u8) -> bool {
        let rest = &self.text.as_bytes()[self.pos..];
        let (start, found) = match memchr::memchr(byte, rest) {
            Some(i) => (
                memchr::memrchr(b'\n', &rest[..i]).map_or(0, |j| j + 1),
                true,
            ),
            None => (rest.len(), false),
        };
        self.line += memchr::memchr_iter(b'\n', &rest[..start]).count() as u32;
        self.pos += start;
        found
    }

    /// The text not yet read.
    pub(crate) fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    /// Moves past `bytes` bytes of [`Cursor::rest`] that hold `lines` whole lines (a reader
    /// that found their ends itself).
    pub(crate) fn skip_lines(&mut self, bytes: usize, lines: u32) {
        self.pos = (self.pos + bytes).min(self.text.len());
        self.line += lines;
    }

    /// The next line, not consumed.
    #[inline]
    pub(crate) fn peek_line(&self) -> Option<Line<'a>> {
        let mut c = *self;
        c.next_line()
    }
}

/// The offset of the first `\n` in `b`. Most lines an envelope is made of are short: their
/// first 64 bytes are looked at eight at a time without a call, and only a longer line is
/// handed to the vectorized search, whose set-up on every line of an envelope cost more than
/// the search (it was a tenth of `check`'s time).
#[inline]
pub(crate) fn find_newline(b: &[u8]) -> Option<usize> {
    newline_in::<false>(b).0
}

/// [`find_newline`], and whether the bytes before the line break (all of them when there is
/// none) are ASCII: one look at the words for both, where a body line would otherwise be
/// read twice.
#[inline]
pub(crate) fn find_newline_ascii(b: &[u8]) -> (Option<usize>, bool) {
    newline_in::<true>(b)
}

/// The search of [`find_newline`]; with `ASCII`, also whether the bytes before the break are
/// ASCII (else `true`, unlooked at).
#[inline(always)]
fn newline_in<const ASCII: bool>(b: &[u8]) -> (Option<usize>, bool) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = ONES * b'\n' as u64;
    let mut i = 0;
    let mut seen = 0u64;
    while i + 8 <= b.len() && i < 64 {
        let mut word = [0u8; 8];
        word.copy_from_slice(&b[i..i + 8]);
        let w = u64::from_le_bytes(word);
        let x = w ^ NL;
        // The lowest byte flagged is the first that was `\n` (a borrow can flag bytes above
        // it, never below).
        let found = x.wrapping_sub(ONES) & !x & HIGH;
        if found != 0 {
            let at = (found.trailing_zeros() / 8) as usize;
            if !ASCII {
                return (Some(i + at), true);
            }
            // Only the bytes before the break count.
            let before = if at == 0 {
                0
            } else {
                w & (u64::MAX >> (64 - 8 * at))
            };
            return (Some(i + at), (seen | before) & HIGH == 0);
        }
        if ASCII {
            seen |= w;
        }
        i += 8;
    }
    let at = if i < 64 {
        b[i..].iter().position(|&c| c == b'\n')
    } else {
        memchr::memchr(b'\n', &b[i..])
    }
    .map(|p| i + p);
    if !ASCII {
        return (at, true);
    }
    let end = at.unwrap_or(b.len());
    (at, seen & HIGH == 0 && b[i..end].is_ascii())
}

/// Splits text into lines without line endings (`\n`, with any `\r`s before it).
pub(crate) fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut c = Cursor::new(text, 1);
    std::iter::from_fn(move || c.next_line().map(|l| l.text))
}

/// The first offset in `hay` where the two bytes `pair` stand side by side. The markers
/// searched for on every bracketed line (`[[`, `]]`, `->`) are two bytes long and the lines
/// short, where setting up a general substring search costs more than the search.
pub(crate) fn find_pair(hay: &[u8], pair: [u8; 2]) -> Option<usize> {
    memchr::memchr_iter(pair[0], hay).find(|&i| hay.get(i + 1) == Some(&pair[1]))
}

/// The first offset of `→` in `hay`: its lead byte found by `memchr`, the other two
/// compared. (A `str` search for the character costs more to set up than this takes on a
/// banner, and every banner is searched.)
pub(crate) fn find_arrow(hay: &[u8]) -> Option<usize> {
    const ARROW: &[u8] = "→".as_bytes();
    memchr::memchr_iter(ARROW[0], hay).find(|&i| hay[i..].starts_with(ARROW))
}

/// Characters that carry no visible content and are dropped from structural lines.
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}'
    )
}

/// A header value as the operator typed it (or as a form took it from another envelope), as
/// it may go into an envelope: control characters, invisible characters and bidi controls
/// left out, odd spaces made ordinary ones. A reader drops invisible characters from the
/// envelope's structural lines and refuses bidi controls there, so a value keeping them would
/// read otherwise at the other end than in the sender's store; a control character would
/// reach the next chat window, or terminal, as it is.
pub(crate) fn typed_header_value(s: &str) -> Cow<'_, str> {
    let drop = |c: char| c.is_control() || is_invisible(c) || is_bidi_control(c);
    if (s.is_ascii() && !s.bytes().any(|b| b.is_ascii_control()))
        || !s.chars().any(|c| drop(c) || is_odd_space(c))
    {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .filter(|c| !drop(*c))
            .map(|c| if is_odd_space(c) { ' ' } else { c })
            .collect(),
    )
}

/// Spaces that chat windows substitute for ordinary ones.
pub(crate) fn is_odd_space(c: char) -> bool {
    matches!(c, '\u{00A0}' | '\u{2007}' | '\u{202F}')
}

/// Bidirectional control characters, which can make text display in another order than it is.
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Whether `s` holds a bidirectional control character: `s.chars().any(is_bidi_control)`.
/// Every one is encoded starting with the byte D8 (U+061C) or E2 (the rest), so only the
/// characters those bytes start are decoded; a value with `→` in it is otherwise decoded
/// whole, and every header and META value is asked.
pub(crate) fn has_bidi_control(s: &str) -> bool {
    // Each of these bytes starts a character, so `s[i..]` is a character boundary.
    memchr::memchr2_iter(0xD8, 0xE2, s.as_bytes())
        .any(|i| s[i..].chars().next().is_some_and(is_bidi_control))
}

/// Whitespace that counts as indentation: space, tab and the odd spaces.
pub(crate) fn is_indent(c: char) -> bool {
    c == ' ' || c == '\t' || is_odd_space(c)
}

/// A structural line with invisible characters removed and odd spaces made plain. A carriage
/// return inside a line (line endings are `\n` or `\r\n`) is a space too: the canonical form
/// cannot write it as anything else, so reading it otherwise would change a value between
/// `fmt` and a second `fmt`. Borrowed (no copy) for the common all-ASCII line.
pub(crate) fn clean(s: &str) -> Cow<'_, str> {
    let cr = memchr::memchr(b'\r', s.as_bytes()).is_some();
    if !cr && (s.is_ascii() || !any_char_from(s, |c| is_invisible(c) || is_odd_space(c))) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .filter(|c| !is_invisible(*c))
            .map(|c| if is_odd_space(c) || c == '\r' { ' ' } else { c })
            .collect(),
    )
}

/// Whether `s` is ASCII without a carriage return: what [`clean`] leaves as it is, and whose
/// columns are its byte offsets. Judged eight bytes at a time (a byte loop is not vectorized
/// and a library search costs its set-up on lines this short): structural lines are many.
/// The words' findings are gathered without a branch per word, and the bytes after the last
/// whole word are read as one more word that overlaps it, not one by one.
#[inline]
pub(crate) fn is_plain_ascii(s: &str) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const CR: u64 = ONES * b'\r' as u64;
    let b = s.as_bytes();
    if b.len() < 8 {
        return b.iter().all(|&c| c < 0x80 && c != b'\r');
    }
    let flags = |at: usize| {
        let mut word = [0u8; 8];
        word.copy_from_slice(&b[at..at + 8]);
        let w = u64::from_le_bytes(word);
        // A byte of `x` is zero where `w` holds `\r`; `(x - ONES) & !x` sets the high bit of
        // some byte exactly when one is zero (given no high bit in `w`, else `w` sets it).
        let x = w ^ CR;
        w | (x.wrapping_sub(ONES) & !x)
    };
    let mut found = flags(b.len() - 8);
    let mut at = 0;
    while at + 8 <= b.len() {
        found |= flags(at);
        at += 8;
    }
    found & HIGH == 0
}

/// The first `max` characters of `text`, with `…` when cut: how a message quotes text.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Whether [`clean`] removed any invisible character from `s`.
#[inline]
pub(crate) fn had_invisible(s: &str) -> bool {
    !s.is_ascii() && any_char_from(s, is_invisible)
}

/// Whether `s` holds a character that `pred` accepts, where `pred` accepts only invisible
/// characters and odd spaces. Those are encoded starting with the byte C2, E2 or EF, so the
/// search jumps from one such byte to the next instead of decoding every character: a
/// banner's `→` alone puts every banner line on this path.
fn any_char_from(s: &str, pred: impl Fn(char) -> bool) -> bool {
    // Each of these bytes starts a character, so `s[i..]` is a character boundary.
    memchr::memchr3_iter(0xC2, 0xE2, 0xEF, s.as_bytes())
        .any(|i| s[i..].chars().next().is_some_and(&pred))
}

/// A line read for structure: its cleaned text, and the way back from a cleaned byte offset
/// to the original's column and byte offset. One long line can hold many one-line envelopes,
/// each asking for several positions, so a non-ASCII line gets a table of checkpoints built
/// once (linear) rather than a walk from the line start per question.
pub(crate) struct LineMap<'a> {
    /// The line as written.
    pub original: &'a str,
    /// The line through [`clean`].
    pub cleaned: Cow<'a, str>,
    ascii: bool,
    /// Every [`STEP`] cleaned bytes, where the character covering that byte stands (see
    /// [`Checkpoint`]). Built on first use, for long non-ASCII lines only. (A row for every
    /// cleaned byte answered without a walk, but took eight bytes per byte of the line:
    /// 128 MB for a 16 MiB line of collapsed envelopes.)
    table: std::cell::OnceCell<Vec<Checkpoint>>,
}

/// Lines shorter than this answer position questions by walking; longer ones build a table.
pub(super) const TABLE_FROM: usize = 1024;

/// Cleaned bytes between two checkpoints: a question walks at most this far.
pub(super) const STEP: usize = 64;

/// The character of the original that covers a cleaned byte: its column, its original byte
/// offset and the cleaned offset its bytes start at.
#[derive(Clone, Copy)]
struct Checkpoint {
    column: u32,
    original: u32,
    cleaned: u32,
}

impl<'a> LineMap<'a> {
    /// Cleans `original`.
    pub(crate) fn new(original: &'a str) -> Self {
        LineMap {
            original,
            cleaned: clean(original),
            ascii: original.is_ascii(),
            table: std::cell::OnceCell::new(),
        }
    }

    fn table(&self) -> &[Checkpoint] {
        self.table.get_or_init(|| {
            let mut t = Vec::with_capacity(self.cleaned.len() / STEP + 2);
            let (mut column, mut cleaned) = (1u32, 0usize);
            for (i, c) in self.original.char_indices() {
                if !is_invisible(c) {
                    let n = if is_odd_space(c) { 1 } else { c.len_utf8() };
                    // A checkpoint for each multiple of `STEP` among the bytes it covers.
                    while t.len() * STEP < cleaned + n {
                        t.push(Checkpoint {
                            column,
                            original: i as u32,
                            cleaned: cleaned as u32,
                        });
                    }
                    cleaned += n;
                }
                column += 1;
            }
            t
        })
    }

    /// How many checkpoints the line holds (none until a position is asked of a long line).
    #[cfg(test)]
    pub(super) fn checkpoints(&self) -> usize {
        self.table.get().map_or(0, Vec::len)
    }

    /// The column and original offset of the first character at cleaned byte `off` or after
    /// it (none: the end), as [`column`] and [`original_offset`] walk to it from the line's
    /// start, walking from the checkpoint before it. (Every character before the checkpoint's
    /// starts before `off`, so the two walks agree, inside a character too.)
    fn look_up(&self, off: usize) -> (u32, usize) {
        let t = self.table();
        let Some(from) = t.get(off / STEP).or(t.last()) else {
            return (1, 0);
        };
        let mut column = from.column;
        let mut cleaned = from.cleaned as usize;
        let start = from.original as usize;
        for (i, c) in self.original[start..].char_indices() {
            if !is_invisible(c) {
                if cleaned >= off {
                    return (column, start + i);
                }
                cleaned += if is_odd_space(c) { 1 } else { c.len_utf8() };
            }
            column += 1;
        }
        (column, self.original.len())
    }

    /// Whether cleaning left the line as it was (nothing invisible, no odd space, no
    /// carriage return): then a cleaned offset is an original one. A banner's `→` or a
    /// word like `für` leaves most non-ASCII lines so, collapsed envelopes among them.
    pub(crate) fn unchanged(&self) -> bool {
        matches!(self.cleaned, Cow::Borrowed(_))
    }

    /// Whether cleaning removed an invisible character: never when it left the line as it
    /// was, so only a changed line is searched again.
    pub(crate) fn had_invisible(&self) -> bool {
        !self.unchanged() && had_invisible(self.original)
    }

    /// The 1-based column in the original of cleaned byte offset `off`.
    pub(crate) fn column(&self, off: usize) -> u32 {
        if self.ascii {
            return off.min(self.original.len()) as u32 + 1;
        }
        if self.original.len() < TABLE_FROM {
            if self.unchanged() {
                return plain_column(self.original, off);
            }
            return column(self.original, off);
        }
        // A long line is asked many columns (one per envelope collapsed on it): counting
        // from its start each time would cost the line's length per question.
        self.look_up(off).0
    }

    /// The original byte offset of cleaned byte offset `off`.
    pub(crate) fn original_offset(&self, off: usize) -> usize {
        if self.ascii {
            return off.min(self.original.len());
        }
        if self.unchanged() {
            // The first character that starts at `off` or after it.
            let mut at = off.min(self.original.len());
            while !self.original.is_char_boundary(at) {
                at += 1;
            }
            return at;
        }
        if self.original.len() < TABLE_FROM {
            return original_offset(self.original, off);
        }
        self.look_up(off).1
    }
}

/// The original byte offset of byte offset `off` in `clean(original)`.
pub(super) fn original_offset(original: &str, off: usize) -> usize {
    let mut cleaned = 0usize;
    for (i, c) in original.char_indices() {
        if is_invisible(c) {
            continue;
        }
        if cleaned >= off {
            return i;
        }
        cleaned += if is_odd_space(c) { 1 } else { c.len_utf8() };
    }
    original.len()
}

/// [`column`] for a line that cleaning leaves as it is: one more than the number of
/// characters that start before `off` (a character `off` falls inside counts, as the walk
/// counts it), found by counting the bytes that start a character instead of decoding them.
pub(crate) fn plain_column(original: &str, off: usize) -> u32 {
    let before = &original.as_bytes()[..off.min(original.len())];
    // Continuation bytes are 0b10xx_xxxx, which as signed bytes are below -0x40.
    before.iter().filter(|&&b| (b as i8) >= -0x40).count() as u32 + 1
}

/// The 1-based character column in `original` of byte offset `off` in `clean(original)`.
pub(crate) fn column(original: &str, off: usize) -> u32 {
    if original.is_ascii() {
        return off.min(original.len()) as u32 + 1;
    }
    // Nothing that cleaning drops or narrows: offsets are the original's.
    if !any_char_from(original, |c| is_invisible(c) || is_odd_space(c)) {
        return plain_column(original, off);
    }
    let mut cleaned = 0usize;
    let mut col = 1u32;
    for c in original.chars() {
        if is_invisible(c) {
            col += 1;
            continue;
        }
        if cleaned >= off {
            return col;
        }
        cleaned += if is_odd_space(c) { 1 } else { c.len_utf8() };
        col += 1;
    }
    col
}

/// The length of the run of ASCII spaces and tabs that begins `s`, and whether a non-ASCII
/// character follows it (then an odd space may continue the indentation). Structural lines
/// are read several times each, so the common ASCII case is answered byte by byte.
#[inline]
fn ascii_indent(s: &str) -> (usize, bool) {
    let b = s.as_bytes();
    let n = b.iter().take_while(|&&c| c == b' ' || c == b'\t').count();
    (n, b.get(n).is_some_and(|&c| !c.is_ascii()))
}

/// A body line's indentation, read once: what [`is_blank`], [`indent_of`] and
/// [`strip_indent`] (and [`is_space_only`] of what is left) answer, from one look at its
/// start when that is ASCII. Body lines are the most numerous lines of an envelope.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Indent {
    /// Whether the line is [`is_blank`].
    pub blank: bool,
    /// The number of indentation characters, as [`indent_of`] counts them.
    pub depth: usize,
    /// Whether the indentation is ASCII and followed by ASCII (or nothing): then `depth` is
    /// also its length in bytes, and nothing after it is indentation or invisible.
    ascii: bool,
}

impl Indent {
    /// The indentation of `s`.
    #[inline]
    pub(crate) fn of(s: &str) -> Indent {
        let (n, more) = ascii_indent(s);
        if !more {
            return Indent {
                blank: n == s.len(),
                depth: n,
                ascii: true,
            };
        }
        Indent {
            blank: is_blank(s),
            depth: indent_of(s).0,
            ascii: false,
        }
    }

    /// `strip_indent(s, n)` for the line `s` this was read from, and whether what is left is
    /// [`is_space_only`].
    #[inline]
    pub(crate) fn strip<'a>(&self, s: &'a str, n: usize) -> (&'a str, bool) {
        if self.ascii {
            // What is left is the rest of the indentation, then ASCII that is not.
            return (&s[self.depth.min(n)..], self.blank);
        }
        let rest = strip_indent(s, n);
        (rest, is_space_only(rest))
    }
}

/// Number of leading indentation characters and their byte length.
#[inline]
pub(crate) fn indent_of(s: &str) -> (usize, usize) {
    let (ascii, more) = ascii_indent(s);
    if !more {
        return (ascii, ascii);
    }
    let mut n = ascii;
    let mut bytes = ascii;
    for c in s[ascii..].chars() {
        if !is_indent(c) {
            break;
        }
        n += 1;
        bytes += c.len_utf8();
    }
    (n, bytes)
}

/// Removes up to `n` leading indentation characters.
#[inline]
pub(crate) fn strip_indent(s: &str, n: usize) -> &str {
    let (ascii, more) = ascii_indent(s);
    if ascii >= n || !more {
        return &s[ascii.min(n)..];
    }
    let mut bytes = 0;
    for (i, c) in s.chars().enumerate() {
        if i >= n || !is_indent(c) {
            break;
        }
        bytes += c.len_utf8();
    }
    &s[bytes..]
}

/// Whether the line is empty or only indentation.
#[inline]
pub(crate) fn is_blank(s: &str) -> bool {
    let (ascii, more) = ascii_indent(s);
    if !more {
        return ascii == s.len();
    }
    s[ascii..].chars().all(|c| is_indent(c) || is_invisible(c))
}

/// Whether the line holds nothing but indentation: unlike [`is_blank`], an invisible
/// character counts as text. A body keeps such a line wherever it is (body text is never
/// cleaned), while its structure still reads it as blank.
#[inline]
pub(crate) fn is_space_only(s: &str) -> bool {
    let (ascii, more) = ascii_indent(s);
    if !more {
        return ascii == s.len();
    }
    s[ascii..].chars().all(is_indent)
}

/// Removes a quote/indent prefix; a line holding only the prefix's non-space part (a bare `>`
/// for a blank quoted line) becomes empty. Lines without the prefix are returned unchanged.
pub(crate) fn strip_prefix_loose<'a>(line: &'a str, prefix: &str) -> &'a str {
    if prefix.is_empty() {
        return line;
    }
    if let Some(rest) = line.strip_prefix(prefix) {
        return rest;
    }
    if line.trim_end() == prefix.trim_end() {
        return "";
    }
    line
}

/// Removes a quote/indent prefix strictly: `None` when the line does not carry it (the quote
/// or indented region has ended). Blank lines pass when the prefix is only whitespace.
///
/// Inlined for the usual empty prefix, which every line of most envelopes is read through.
#[inline]
pub(crate) fn strip_prefix_strict<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    if prefix.is_empty() {
        return Some(line);
    }
    strip_some_prefix(line, prefix)
}

/// [`strip_prefix_strict`] for a prefix that is not empty.
fn strip_some_prefix<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    if let Some(rest) = line.strip_prefix(prefix) {
        return Some(rest);
    }
    let t = line.trim_end();
    if t == prefix.trim_end() || (t.is_empty() && prefix.trim().is_empty()) {
        return Some("");
    }
    // `>text` continues a `> ` quote: markdown reads both as quoted.
    let bare = prefix.trim_end();
    if bare.ends_with('>') && bare.len() < prefix.len() {
        return line.strip_prefix(bare);
    }
    None
}

/// Whether a (cleaned) line opens or closes a markdown code fence.
#[inline]
pub(crate) fn is_fence(s: &str) -> bool {
    // Asked of every line of an envelope: one that starts with another ASCII character is
    // answered before trimming, where it is asked.
    if s.as_bytes()
        .first()
        .is_some_and(|&b| b.is_ascii() && !matches!(b, b' ' | b'\t' | b'>' | b'`' | b'~'))
    {
        return false;
    }
    is_fence_trimmed(s)
}

/// [`is_fence`] for a line that may start with indentation or a quote.
fn is_fence_trimmed(s: &str) -> bool {
    let t = s.trim_start_matches(|c: char| is_indent(c) || c == '>');
    t.starts_with("```") || t.starts_with("~~~")
}

/// Whether a (cleaned, prefix-stripped) line is `[[END]]` (spaces and case tolerated).
#[inline]
pub(crate) fn is_end_marker(s: &str) -> bool {
    // Every line of an envelope is asked: one that starts with an ASCII character other
    // than `[` and white space is answered before trimming, where it is asked.
    if edge_rules_out(s.as_bytes().first(), b'[') {
        return false;
    }
    is_end_marker_trimmed(s)
}

/// Whether byte `b` is ASCII white space as `str::trim` sees it (space, `\t` to `\r`).
#[inline]
pub(crate) fn is_trim_space(b: u8) -> bool {
    b == b' ' || (b'\t'..=b'\r').contains(&b)
}

/// Whether a line whose first (or last) byte is `edge` cannot be a marker that, once
/// trimmed, has `keep` there: that byte is ASCII and neither `keep` nor white space.
#[inline]
pub(crate) fn edge_rules_out(edge: Option<&u8>, keep: u8) -> bool {
    edge.is_some_and(|&b| b.is_ascii() && b != keep && !is_trim_space(b))
}

/// [`is_end_marker`] for a line that may start with `[` or white space.
fn is_end_marker_trimmed(s: &str) -> bool {
    let t = trim(s);
    let Some(inner) = t.strip_prefix("[[").and_then(|r| r.strip_suffix("]]")) else {
        return false;
    };
    trim(inner).eq_ignore_ascii_case("END")
}

/// Splits `key: value` where the key is a word (`[A-Za-z][A-Za-z0-9_-]*`) after optional
/// indentation. Returns the key, the value (trimmed) and the value's byte offset.
pub(crate) fn split_key(s: &str) -> Option<(&str, &str, usize)> {
    // Most keys start their line: no indentation to measure.
    let lead = if s.as_bytes().first().is_some_and(u8::is_ascii_alphabetic) {
        0
    } else {
        indent_of(s).1
    };
    let rest = &s[lead..];
    // The key is the run of word bytes at the start; it is a key only when `:` ends it
    // (any other byte, or a first byte that is not a letter, makes the line no key).
    let b = rest.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let colon = b.iter().take_while(|c| KEY_BYTE[**c as usize]).count();
    if b.get(colon) != Some(&b':') {
        return None;
    }
    let key = &rest[..colon];
    let after = &rest[colon + 1..];
    // `claude://x` is an address, not a key named `claude`.
    if after.starts_with("//") {
        return None;
    }
    let value = trim_indent_start(after);
    let value_off = lead + colon + 1 + (after.len() - value.len());
    Some((key, trim_end(value), value_off))
}

/// The bytes of a key after its first letter: ASCII letters, digits, `-` and `_` (a table:
/// every structural line's key is measured with it).
pub(crate) const KEY_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
        b += 1;
    }
    t
};

/// `s.trim_start_matches(is_indent)`: the ASCII spaces and tabs are skipped byte by byte,
/// and only a non-ASCII character after them (an odd space, perhaps) is decoded.
pub(crate) fn trim_indent_start(s: &str) -> &str {
    let (n, more) = ascii_indent(s);
    if more {
        s[n..].trim_start_matches(is_indent)
    } else {
        &s[n..]
    }
}

/// `s.trim()`: leading and trailing ASCII white space dropped byte by byte, characters
/// decoded only when a non-ASCII one is at an edge. Ids, intents, signatures and end
/// markers are trimmed on every envelope.
#[inline]
pub(crate) fn trim(s: &str) -> &str {
    let n = s.bytes().take_while(|&b| is_trim_space(b)).count();
    let rest = &s[n..];
    let rest = if rest.as_bytes().first().is_some_and(|b| !b.is_ascii()) {
        rest.trim_start()
    } else {
        rest
    };
    trim_end(rest)
}

/// `s.trim_end()`: trailing ASCII white space is dropped byte by byte, and characters are
/// decoded only when a non-ASCII one ends what is left (it may be white space too). Every
/// header and META value is trimmed.
pub(crate) fn trim_end(s: &str) -> &str {
    let b = s.as_bytes();
    let mut end = b.len();
    while end > 0 {
        match b[end - 1] {
            b' ' | b'\t'..=b'\r' => end -= 1,
            c if c.is_ascii() => return &s[..end],
            _ => return s[..end].trim_end(),
        }
    }
    ""
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_handles_crlf_and_last_line() {
        let v: Vec<_> = split_lines("a\r\nb\n\nc").collect();
        assert_eq!(v, ["a", "b", "", "c"]);
        assert_eq!(split_lines("a\n").count(), 1);
        // Text converted to CR LF twice: still one break per line, no CR left in a line.
        let v: Vec<_> = split_lines("a\r\r\nb\r\r\r\n\r\nc\r\r").collect();
        assert_eq!(v, ["a", "b", "", "c"]);
    }

    #[test]
    fn clean_and_column() {
        let s = "\u{200B}user:\u{00A0}kalle";
        assert_eq!(clean(s), "user: kalle");
        // `k` is at byte 6 of the cleaned line and column 8 of the original.
        assert_eq!(column(s, 6), 8);
        assert!(had_invisible(s));
        let m = LineMap::new(s);
        assert_eq!(m.column(6), 8);
        assert_eq!(m.original_offset(6), 10);
        assert_eq!(m.column(m.cleaned.len()), 13);
        // The table for long lines gives the same answers as the walk, at every character
        // (and past the end) of lines of wide, invisible and odd characters.
        for unit in [
            "é\u{200B}x",
            "\u{200B}\u{200B}\u{200B}\u{00A0}😀",
            "ab\u{3000}",
            "→",
        ] {
            let long = format!("{s}{}", unit.repeat(TABLE_FROM / unit.len() + 40));
            let m = LineMap::new(&long);
            let boundaries = (0..m.cleaned.len() + 3)
                .filter(|off| *off > m.cleaned.len() || m.cleaned.is_char_boundary(*off));
            for off in boundaries {
                assert_eq!(m.column(off), column(&long, off), "{unit:?} {off}");
                assert_eq!(
                    m.original_offset(off),
                    original_offset(&long, off),
                    "{unit:?} {off}"
                );
            }
        }
    }

    #[test]
    fn skipping_to_a_line_counts_the_lines_passed() {
        let mut c = Cursor::new("a\nb\r\nc [x\nd\n", 5);
        assert!(c.skip_to_line_with(b'['));
        let l = c.next_line().expect("line");
        assert_eq!((l.text, l.no, l.start), ("c [x", 7, 5));
        assert!(!c.skip_to_line_with(b'['));
        assert!(c.next_line().is_none());
        // A line that holds the byte is not skipped.
        let mut c = Cursor::new("[first\n", 1);
        assert!(c.skip_to_line_with(b'['));
        assert_eq!(c.next_line().map(|l| l.no), Some(1));
    }

    #[test]
    fn pairs() {
        assert_eq!(find_pair(b"a]b]]c]]", *b"]]"), Some(3));
        assert_eq!(find_pair(b"[[[", *b"[["), Some(0));
        assert_eq!(find_pair(b"x-y->", *b"->"), Some(3));
        assert_eq!(find_pair(b"-", *b"->"), None);
        assert_eq!(find_pair(b"", *b"[["), None);
    }

    #[test]
    fn keys() {
        assert_eq!(split_key("user: kalle"), Some(("user", "kalle", 6)));
        assert_eq!(
            split_key("  X-Route:  a → b "),
            Some(("X-Route", "a → b", 12))
        );
        assert_eq!(split_key("claude://session/abc"), None);
        assert_eq!(split_key("no colon here"), None);
        assert_eq!(split_key("two words: x"), None);
    }

    #[test]
    fn end_markers_and_plain_lines() {
        for end in [
            "[[END]]",
            " [[ end ]] ",
            "\t[[END]]",
            "\u{b}[[END]]",
            "\u{3000}[[END]]\r",
        ] {
            assert!(is_end_marker(end), "{end:?}");
        }
        for not in [
            "",
            "x [[END]]",
            "\u{1c}[[END]]",
            "[[END]] x",
            "]]",
            "é[[END]]",
        ] {
            assert!(!is_end_marker(not), "{not:?}");
        }
        assert!(is_plain_ascii("user: kalle"));
        assert!(is_plain_ascii(""));
        let long = "k".repeat(40);
        assert!(!is_plain_ascii(&format!("{long}\r")));
        assert!(!is_plain_ascii(&format!("{long}\u{a0}")));
        assert!(!is_plain_ascii("a\u{200b}b"));
        // Every position in and after the eight-byte words, every byte value.
        for len in [1, 7, 8, 9, 16, 23] {
            for at in 0..len {
                for b in 0..=0x7fu8 {
                    let mut bytes = vec![b'k'; len];
                    bytes[at] = b;
                    let text = String::from_utf8(bytes).expect("ASCII");
                    assert_eq!(is_plain_ascii(&text), b != b'\r', "{text:?}");
                }
                let text = format!("{}é{}", "k".repeat(at), "k".repeat(len - at));
                assert!(!is_plain_ascii(&text));
            }
        }
    }

    /// The byte search finds every invisible character and odd space, and only them.
    #[test]
    fn invisible_and_odd_characters_found_by_their_bytes() {
        let odd = [
            '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{00AD}',
        ];
        let odd = odd.into_iter().chain(['\u{00A0}', '\u{2007}', '\u{202F}']);
        for c in odd {
            for text in [format!("{c}"), format!("a→b {c}x"), format!("é{c}")] {
                let want = text.chars().any(|c| is_invisible(c) || is_odd_space(c));
                assert!(want);
                assert!(any_char_from(&text, |c| is_invisible(c) || is_odd_space(c)));
                assert_eq!(had_invisible(&text), text.chars().any(is_invisible));
            }
        }
        for plain in ["a→b", "é ü ÿ ¢", "\u{2028}\u{20AC}\u{FFFD}\u{E000}"] {
            assert!(!any_char_from(plain, |c| is_invisible(c) || is_odd_space(c)));
            assert_eq!(clean(plain), plain);
        }
    }

    #[test]
    fn prefixes() {
        assert_eq!(strip_prefix_strict("> a", "> "), Some("a"));
        assert_eq!(strip_prefix_strict(">", "> "), Some(""));
        assert_eq!(strip_prefix_strict("a", "> "), None);
        assert_eq!(strip_prefix_strict(">a", "> "), Some("a"));
        assert_eq!(strip_prefix_strict("", "    "), Some(""));
        assert!(is_end_marker(" [[ end ]] "));
        assert!(is_fence("> ```text"));
    }
}
