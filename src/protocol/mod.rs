//! The protocol core: text in, envelopes and diagnostics out, and envelopes back into text.
//!
//! Pure: no I/O, no SQL, no terminal. Everything here works on `&str` and returns values, so
//! the CLI, the store and the TUI share one implementation and tests need no fixtures on disk.
//!
//! - [`extract`] finds every envelope in pasted text (transcripts, fences, quotes, mangled
//!   pastes), repairs what it safely can and reports the rest as [`Diagnostic`]s.
//! - [`render()`] writes the canonical form (see `docs/PROTOCOL.md`).
//! - [`signature`] signs and verifies in both `sig:` forms; [`keys`] reads the key formats.
//! - [`error_envelope`] builds the ERROR reply the spec describes.
//!
//! The rooms below keep its jobs apart: `model` (what an envelope is and says), `read` (finding
//! and reading envelopes in text), `check` (diagnostics, validation, sameness), `write` (the
//! canonical form, replies), `sign` (signatures, keys, trust) and `meta` (the META namespaces
//! with meaning). They are private: this module re-exports what the rest of the crate uses,
//! items by name and, where functions are named by their module (`pii::find`), the module.

mod check;
mod meta;
mod model;
mod read;
mod sign;
mod write;

pub use check::{diagnostic, meaning, validate};
pub use meta::{attachments, audit, consent, namespaces, pii, poll, safety};
pub use model::{address, answers, awaiting, claim, id, intent};
pub use read::line_ends;
pub use sign::{did_key, keys, signature, trust};
pub use write::{ack, carry, error_envelope, render};

use read::{borrowed, collapsed, lines, parse, quick, scan};

pub use answers::Sessions;
pub(crate) use answers::placed_by_session;
pub(crate) use borrowed::ParsedRef;
pub(crate) use diagnostic::Diagnostic;
pub use diagnostic::{Code, Severity};
pub(crate) use id::{NewIds, check_id, fill_ids};
pub use id::{is_id, timestamp_ms};
pub use intent::Intent;
pub(crate) use intent::IntentKind;
pub(crate) use lines::typed_header_value;
pub use model::{Banner, Envelope, Header, MetaBlock, first_line};
pub use render::render;
pub(crate) use scan::Extractor;
pub(crate) use scan::Step;

use std::ops::Range;

/// The default size limit for one envelope: 1 MiB, past which it is `E-TOO-LARGE`.
pub(crate) const DEFAULT_SIZE_LIMIT: usize = 1024 * 1024;

/// Settings for extraction and validation.
#[derive(Debug, Clone)]
pub struct Options {
    /// Largest envelope, in bytes of input, accepted without a `too-large` error.
    pub size_limit: usize,
    /// "Now", for judging `Expires`; `None` skips the already-past check (the protocol core
    /// does not read the clock itself, so results are reproducible).
    pub now: Option<jiff::Timestamp>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            size_limit: DEFAULT_SIZE_LIMIT,
            now: None,
        }
    }
}

/// A position in the input: 1-based line and column (columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column in characters.
    pub column: u32,
}

/// The first and last input line of an envelope, 1-based and inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Span {
    /// Line of the banner.
    pub start_line: u32,
    /// Line of `[[END]]`, or the last line that belonged to the envelope when it had none.
    pub end_line: u32,
}

/// Where each part of an envelope was found, for diagnostics that name a line and column.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Positions {
    /// The banner's `[[`.
    pub banner: Pos,
    /// The value of each header, parallel to `Envelope::headers`.
    pub headers: Vec<Pos>,
    /// Each META block's `meta:` line and the value of each entry, parallel to
    /// `Envelope::meta`.
    pub meta: Vec<(Pos, Vec<Pos>)>,
    /// The `body:` (or `response:`) key.
    pub body: Option<Pos>,
    /// The `sig:` key.
    pub sig: Option<Pos>,
    /// The `hash:` key.
    pub hash: Option<Pos>,
}

/// One envelope found in the input, with where it was and what was said about it.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The envelope's content.
    pub envelope: Envelope,
    /// The input lines it occupied.
    pub span: Span,
    /// The input bytes it occupied: whole lines, or for a collapsed one-line envelope the
    /// bytes from `[[` through `[[END]]`.
    pub byte_range: Range<usize>,
    /// Findings about this envelope, in line order.
    pub diagnostics: Vec<Diagnostic>,
    /// The quote or indentation prefix (`> `, `  `) removed from each of its lines.
    pub prefix: String,
    /// Whether it arrived collapsed onto one line.
    pub collapsed: bool,
    /// Whether the body was a v1.0 `response:` block (a reply to its session's latest message).
    pub reply_form: bool,
    /// Whether it ended with `[[END]]`.
    pub terminated: bool,
    /// Where each part was.
    pub positions: Positions,
}

impl Parsed {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The normalized intent: the `intent` header; else RESPOND for a v1.0 `response:` reply,
    /// or for a body without `intent:` that names a `parent` (it answers that message).
    pub fn intent(&self) -> Option<Intent> {
        self.intent_answering(self.envelope.parent().is_some())
    }

    /// The normalized intent once the reader knows whether the envelope answers a message:
    /// a `body:` without `intent:` is a reply when it names a parent or when an earlier
    /// envelope of its session is there to answer (the rule is [`answers`]'s), and is read
    /// as RESPOND, like the v1.0 `response:` form.
    pub fn intent_answering(&self, answers: bool) -> Option<Intent> {
        self.envelope.intent().or_else(|| {
            (self.reply_form || (answers && self.envelope.body.is_some()))
                .then_some(Intent::Respond)
        })
    }

    /// The envelope's lines as received, with the transport wrapping undone: quote prefix
    /// removed, CRLF read as LF, and on the banner line anything before `[[` (a byte-order
    /// mark, an invisible character) dropped.
    fn unwrapped_lines<'i>(&self, input: &'i str) -> impl Iterator<Item = &'i str> {
        let text = &input[self.byte_range.clone()];
        lines::split_lines(text).enumerate().map(|(i, line)| {
            let line = lines::strip_prefix_loose(line, &self.prefix);
            if i == 0 {
                // Anything before the banner's `[[` (a byte-order mark, an invisible
                // character, a list bullet or `echo '`) is not part of the envelope.
                let at = line.find("[[").or_else(|| line.find('['));
                at.map_or(line, |at| &line[at..])
            } else {
                line
            }
        })
    }

    /// The envelope's text as received, with the transport wrapping undone (quote prefix,
    /// CRLF), each line ending in LF.
    pub fn received_text(&self, input: &str) -> String {
        if self.collapsed {
            return format!("{}\n", &input[self.byte_range.clone()]);
        }
        let mut out = String::with_capacity(self.byte_range.len() + 1);
        for line in self.unwrapped_lines(input) {
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    /// The signable portion as received: banner through the line before `sig:`, LF line
    /// endings, characters exactly as received (verification tries their NFC form too),
    /// without the lines of audit hops ([`audit::unsigned_lines`]).
    /// `None` when there is no `sig:` line or the envelope arrived collapsed (its line
    /// breaks are gone, so only the canonical form can be checked).
    pub fn signable_received(&self, input: &str) -> Option<String> {
        self.signable_received_all(input)?.into_iter().next()
    }

    /// [`Parsed::signable_received`] in each way of leaving audit hops out (one text when
    /// there are none).
    pub(crate) fn signable_received_all(&self, input: &str) -> Option<Vec<String>> {
        let sig = self.positions.sig?;
        if self.collapsed {
            return None;
        }
        let count = sig.line.checked_sub(self.span.start_line)? as usize;
        let lines: Vec<&str> = self.unwrapped_lines(input).take(count).collect();
        Some(self.signed_lines(&lines))
    }

    /// `lines` (the envelope's first lines, as received) joined with LF, leaving out those
    /// of audit hops, which no signature covers: one text per way of leaving them out
    /// ([`audit::Blanks`]), without repeats.
    pub(crate) fn signed_lines(&self, lines: &[&str]) -> Vec<String> {
        let join = |skip: &[u32]| {
            let mut out = String::with_capacity(self.byte_range.len());
            for (i, line) in lines.iter().enumerate() {
                if skip
                    .binary_search(&(self.span.start_line + i as u32))
                    .is_ok()
                {
                    continue;
                }
                out.push_str(line.strip_suffix('\n').unwrap_or(line));
                out.push('\n');
            }
            out
        };
        if !self.envelope.meta.iter().any(audit::is_audit) {
            return vec![join(&[])];
        }
        let mut out: Vec<String> = Vec::with_capacity(3);
        for blanks in [
            audit::Blanks::Before,
            audit::Blanks::After,
            audit::Blanks::Both,
        ] {
            let text = join(&audit::unsigned_lines(self, lines, blanks));
            if !out.contains(&text) {
                out.push(text);
            }
        }
        out
    }
}

/// Everything found in one input.
#[derive(Debug, Clone, Default)]
pub struct Extraction {
    /// The envelopes, in input order.
    pub envelopes: Vec<Parsed>,
    /// Findings outside any envelope (no envelope at all, stray `[[END]]`, invalid UTF-8).
    pub diagnostics: Vec<Diagnostic>,
}

impl Extraction {
    /// Number of error diagnostics, in envelopes and outside them.
    pub fn error_count(&self) -> usize {
        self.all_diagnostics().filter(|d| d.is_error()).count()
    }

    /// All diagnostics, outside and inside envelopes.
    pub fn all_diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .chain(self.envelopes.iter().flat_map(|p| p.diagnostics.iter()))
    }
}

/// Finds, repairs and validates every envelope in `input`.
///
/// Adds a `no-envelope` error when there is none, so callers can report "nothing found" the
/// same way as any other problem.
pub fn extract(input: &str, opts: &Options) -> Extraction {
    // A text without LF (a terminal's paste, CR line ends) is read by its CRs (see
    // `line_ends`): byte for byte in place, so spans are those of `input`.
    let input = &*line_ends::normalize(input);
    let mut ex = Extractor::new(input, opts.clone());
    let mut envelopes = Vec::new();
    for p in ex.by_ref() {
        envelopes.push(p);
    }
    let mut diagnostics = ex.into_diagnostics();
    if envelopes.is_empty() {
        diagnostics.push(no_envelope());
    }
    Extraction {
        envelopes,
        diagnostics,
    }
}

/// Where text may be cut so that both sides extract exactly as the whole would: after the
/// last line that is exactly `[[END]]` (it always closes the envelope before it, or stands
/// alone), else before the last line that starts with a banner (it always ends whatever
/// came before). `None` when the text has neither. Large inputs are extracted in pieces —
/// on several cores, or read back from the store a piece at a time — cut this way.
pub(crate) fn last_safe_cut(text: &str) -> Option<usize> {
    last_safe_cut_bytes(text.as_bytes())
}

/// [`last_safe_cut`] for bytes that may not all be UTF-8, read as the text their invalid
/// sequences replaced with U+FFFD reads: the markers are ASCII, and a line that starts with
/// `[[` is decoded as far as a banner can reach. A cut comes after a line break, which no
/// UTF-8 sequence holds, so each side decodes as it does within the whole.
pub(crate) fn last_safe_cut_bytes(b: &[u8]) -> Option<usize> {
    let mut end = b.len();
    while let Some(i) = memchr::memmem::rfind(&b[..end], b"\n[[END]]") {
        let after = i + "\n[[END]]".len();
        if b[after..].starts_with(b"\n") {
            return Some(after + 1);
        }
        if b[after..].starts_with(b"\r\n") {
            return Some(after + 2);
        }
        end = i;
    }
    let mut end = b.len();
    while let Some(i) = memchr::memmem::rfind(&b[..end], b"\n[[") {
        if i > 0 && starts_banner_bytes(&b[i + 1..]) {
            return Some(i + 1);
        }
        end = i;
    }
    None
}

/// [`scan::starts_banner`] of the text `line` (which starts with `[[`) decodes to. A banner
/// closes within [`scan::MAX_BANNER`] bytes of its start, and each byte decodes to at least
/// one, so twice that much of the line decides.
fn starts_banner_bytes(line: &[u8]) -> bool {
    let head = &line[..line.len().min(2 * scan::MAX_BANNER + 8)];
    match std::str::from_utf8(head) {
        Ok(text) => scan::starts_banner(text),
        Err(e) if e.error_len().is_none() => {
            // Cut inside the last character only: the text before it decides.
            scan::starts_banner(std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""))
        }
        Err(_) => scan::starts_banner(&String::from_utf8_lossy(head)),
    }
}

/// Cuts `input` into at most `parts` pieces of about equal size at [`last_safe_cut`] places,
/// and returns their byte ranges in order.
pub fn split_points(input: &str, parts: usize) -> Vec<Range<usize>> {
    let mut out = Vec::with_capacity(parts.max(1));
    let mut start = 0;
    for k in 1..parts.max(1) {
        let mut target = input.len() / parts * k;
        while !input.is_char_boundary(target) {
            target -= 1;
        }
        if target <= start {
            continue;
        }
        if let Some(cut) = last_safe_cut(&input[start..target]).filter(|c| *c > 0) {
            out.push(start..start + cut);
            start += cut;
        }
    }
    out.push(start..input.len());
    out
}

/// The `no-envelope` error, for inputs in which nothing was found.
pub(crate) fn no_envelope() -> Diagnostic {
    Diagnostic::new(
        Code::NoEnvelope,
        1,
        1,
        "no envelope found: an envelope starts with a banner like `[[CLAUDE→CHATGPT v1]]` on a line of its own",
    )
}

/// Decodes bytes as UTF-8, replacing invalid sequences, and reports where the first one was.
pub fn decode(bytes: &[u8]) -> (std::borrow::Cow<'_, str>, Option<Diagnostic>) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (std::borrow::Cow::Borrowed(s), None),
        Err(e) => {
            let at = e.valid_up_to();
            let before = &bytes[..at];
            let line = memchr::memchr_iter(b'\n', before).count() as u32 + 1;
            let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
            let column = String::from_utf8_lossy(&before[line_start..])
                .chars()
                .count() as u32
                + 1;
            let d = Diagnostic::new(
                Code::InvalidUtf8,
                line,
                column,
                "bytes that are not UTF-8 were replaced with U+FFFD; save the text as UTF-8",
            );
            (String::from_utf8_lossy(bytes), Some(d))
        }
    }
}
