//! Recovering an envelope whose newlines a chat window collapsed, so that it arrives as
//! `[[A→B v1]] user: x session: 2025-10-09T15Z 04f07f context: y intent: QUESTION body: | text sig: none [[END]]`.
//!
//! Values may contain spaces (the session does), so the line is cut at the known keys rather
//! than at whitespace: a header's value runs to the next known key; the body runs to the last
//! `sig:` (or `hash:`) before `[[END]]`, so body text may mention any key. Inside a META block
//! entries are cut at capitalized `Key:` words (`X-Route:`, `PII:`), the form META keys take.

use super::lines::{self, Line, LineMap};
use super::parse::banner_of;
use super::scan::{BannerMatch, Bracket, match_bracket};
use crate::protocol::model::{Envelope, Header, KNOWN_HEADERS, MetaBlock, STRUCTURAL_KEYS};
use crate::protocol::{Code, Diagnostic, Options, Parsed, Pos, Positions, Span};

/// Whether the text after a banner on the same line starts like an envelope's headers: with
/// a structural key and its `:`. Only the line's first bytes are looked at, so a line of many
/// banners costs each of them no more than the key's length.
pub(crate) fn looks_collapsed(rest: &str) -> bool {
    let t = rest.trim_start().as_bytes();
    STRUCTURAL_KEYS
        .iter()
        .any(|k| t.get(k.len()) == Some(&b':') && t.starts_with(k.as_bytes()))
}

/// The text after a banner when it is only known headers (`user: kalle session: …`) with
/// no body, META, signature or end marker: each key, its value trimmed (running to the next
/// key, as on a collapsed line) and the value's offset in `rest`.
pub(crate) fn banner_headers(rest: &str) -> Option<Vec<(&str, &str, usize)>> {
    let toks = tokens(rest, 0, rest.len());
    let first = toks.first()?;
    if !rest[..first.start].trim().is_empty() || rest.contains("[[") {
        return None;
    }
    let mut out = Vec::with_capacity(toks.len());
    for (i, t) in toks.iter().enumerate() {
        if !KNOWN_HEADERS.contains(&t.key) {
            return None;
        }
        let end = toks.get(i + 1).map_or(rest.len(), |n| n.start);
        let raw = &rest[t.value.min(end)..end];
        let lead = raw.len() - raw.trim_start().len();
        out.push((
            &rest[t.start..t.start + t.key.len()],
            raw.trim(),
            t.value + lead,
        ));
    }
    Some(out)
}

/// A `key:` found in the line: where the key starts and where its value starts.
#[derive(Debug, Clone, Copy)]
struct Token {
    key: &'static str,
    start: usize,
    value: usize,
}

/// Every known `key:` in `s[from..to]` that stands at a word start and is followed by a
/// space or the end.
fn tokens(s: &str, from: usize, to: usize) -> Vec<Token> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    for colon in memchr::memchr_iter(b':', &bytes[from..to]).map(|i| i + from) {
        if colon + 1 < to && !bytes[colon + 1].is_ascii_whitespace() {
            continue;
        }
        let word_start = bytes[..colon]
            .iter()
            .rposition(|b| !b.is_ascii_alphabetic())
            .map_or(0, |i| i + 1)
            .max(from);
        if word_start > from && !bytes[word_start - 1].is_ascii_whitespace() {
            continue;
        }
        let word = &s[word_start..colon];
        // Exact, lower-case keys only: META keys are capitalized (`User:` in a META block is
        // that block's entry, not the `user` header).
        if let Some(key) = STRUCTURAL_KEYS.iter().find(|k| **k == word) {
            out.push(Token {
                key,
                start: word_start,
                value: colon + 1,
            });
        }
    }
    out
}

/// Parses the one-line envelope that `bm` starts in `cleaned` (the cleaned text of `line`).
/// Returns it and, when more of the line follows, the offset to continue scanning from.
///
/// Where it stops is found first ([`Stop::find`]), then which keys are its structure
/// ([`structural`]), then their values are read ([`read_values`]) and the findings of the
/// line as a whole added.
pub(crate) fn parse_line(
    line: Line<'_>,
    map: &LineMap<'_>,
    bm: BannerMatch<'_>,
    opts: &Options,
) -> (Parsed, Option<usize>) {
    let cleaned: &str = &map.cleaned;
    let col = |off: usize| map.column(off);
    let pos = |off: usize| Pos {
        line: line.no,
        column: col(off),
    };
    let stop = Stop::find(cleaned, bm.end);
    let structural = structural(cleaned, bm.end, stop.stop);
    let mut env = Envelope {
        banner: banner_of(&bm),
        headers: Vec::new(),
        meta: Vec::new(),
        body: None,
        sig: None,
        hash: None,
    };
    let mut positions = Positions {
        banner: pos(bm.start),
        ..Positions::default()
    };
    let (reply_form, unread_meta) = read_values(
        cleaned,
        &structural,
        stop.stop,
        &pos,
        &mut env,
        &mut positions,
    );

    let start = map.original_offset(bm.start);
    let end = map.original_offset(stop.env_end);
    let mut diagnostics = vec![Diagnostic::new(
        Code::CollapsedNewlines,
        line.no,
        col(bm.start),
        "the envelope arrived on one line (a chat window collapsed its newlines) and was recovered by its header keys; check the values, and copy envelopes inside a code fence to keep line breaks",
    )];
    diagnostics.extend(super::parse::version_diag(&bm, line.no, col(bm.start)));
    diagnostics.extend(unread_meta);
    if lines::had_invisible(&line.text[start..end]) {
        diagnostics.push(Diagnostic::new(
            Code::InvisibleChars,
            line.no,
            col(bm.start),
            "invisible characters (zero-width space, byte-order mark) were removed from this envelope's headers; they often come from rich-text copies",
        ));
    }
    if end - start > opts.size_limit {
        diagnostics.push(super::parse::too_large(
            end - start,
            opts.size_limit,
            line.no,
            col(bm.start),
        ));
    }
    if !stop.terminated {
        diagnostics.push(Diagnostic::new(
            Code::MissingEnd,
            line.no,
            col(stop.stop),
            "no `[[END]]`: the envelope was taken to end here; add `[[END]]` at its end",
        ));
    }
    let parsed = Parsed {
        envelope: env,
        span: Span {
            start_line: line.no,
            end_line: line.no,
        },
        byte_range: line.start + start..line.start + end,
        diagnostics,
        prefix: String::new(),
        collapsed: true,
        reply_form,
        terminated: stop.terminated,
        positions,
    };
    (parsed, stop.resume)
}

/// Where a one-line envelope stops: at its `[[END]]`, or a following banner, or the end of
/// the line.
struct Stop {
    /// Where its last value ends.
    stop: usize,
    /// Where the envelope ends (after its `[[END]]`).
    env_end: usize,
    /// Where scanning goes on, when more of the line follows.
    resume: Option<usize>,
    /// It ends with `[[END]]`.
    terminated: bool,
}

impl Stop {
    /// Where the envelope whose banner ends at `from` in `cleaned` stops.
    fn find(cleaned: &str, from: usize) -> Stop {
        let mut search = from;
        while let Some(rel) = memchr::memmem::find(&cleaned.as_bytes()[search..], b"[[") {
            let at = search + rel;
            search = at + 2;
            match match_bracket(cleaned, at) {
                Bracket::End { end } => {
                    return Stop {
                        stop: at,
                        env_end: end,
                        resume: (end < cleaned.len()).then_some(end),
                        terminated: true,
                    };
                }
                Bracket::Banner(_) => {
                    return Stop {
                        stop: at,
                        env_end: at,
                        resume: Some(at),
                        terminated: false,
                    };
                }
                Bracket::Nothing => {}
            }
        }
        Stop {
            stop: cleaned.len(),
            env_end: cleaned.len(),
            resume: None,
            terminated: false,
        }
    }
}

/// The keys of `cleaned[from..stop]` that are the envelope's structure. After the body only
/// the last `sig:` and `hash:` count; before it, every key does.
fn structural(cleaned: &str, from: usize, stop: usize) -> Vec<Token> {
    let toks = tokens(cleaned, from, stop);
    let body_idx = toks
        .iter()
        .position(|t| t.key == "body" || t.key == "response");
    let mut structural: Vec<Token> = match body_idx {
        Some(i) => toks[..=i].to_vec(),
        None => toks.clone(),
    };
    if let Some(i) = body_idx {
        let after = &toks[i + 1..];
        // The body runs to the last `sig:`; a `hash:` counts only after it (the hash covers
        // the text through the `sig:` line, so it comes last).
        let sig = after.iter().rev().find(|t| t.key == "sig").copied();
        let from = sig.map_or(0, |s| s.start);
        let hash = after
            .iter()
            .rev()
            .find(|t| t.key == "hash" && t.start >= from)
            .copied();
        structural.extend(sig);
        structural.extend(hash);
    }
    structural
}

/// Reads the value of each of the `structural` keys (each runs to the next, the last to
/// `stop`) into `env`, and where each stands (by `pos`) into `positions`. Says whether the
/// body is v1.0's `response:`, and what META text was not read.
fn read_values(
    cleaned: &str,
    structural: &[Token],
    stop: usize,
    pos: &dyn Fn(usize) -> Pos,
    env: &mut Envelope,
    positions: &mut Positions,
) -> (bool, Vec<Diagnostic>) {
    let mut reply_form = false;
    let mut unread_meta = Vec::new();
    for (i, t) in structural.iter().enumerate() {
        let end = structural.get(i + 1).map_or(stop, |n| n.start);
        let raw = &cleaned[t.value..end];
        let value = raw.trim();
        let voff = t.value + (raw.len() - raw.trim_start().len());
        match t.key {
            "body" | "response" => {
                reply_form = t.key == "response";
                positions.body = Some(pos(t.start));
                let v = value
                    .strip_prefix('|')
                    .map(|r| {
                        r.trim_start_matches(|c: char| c.is_ascii_digit() || c == '-' || c == '+')
                    })
                    .unwrap_or(value);
                env.body = Some(v.trim().to_string());
            }
            "sig" => {
                env.sig = Some(value.to_string());
                positions.sig = Some(pos(t.start));
            }
            "hash" => {
                env.hash = Some(value.to_string());
                positions.hash = Some(pos(t.start));
            }
            "meta" => {
                let (block, entry_pos, unread) = meta_block(cleaned, voff, voff + value.len(), pos);
                env.meta.push(block);
                positions.meta.push((pos(t.start), entry_pos));
                unread_meta.extend(unread);
            }
            key => {
                debug_assert!(KNOWN_HEADERS.contains(&key));
                env.headers.push(Header {
                    key: key.to_string(),
                    value: value.to_string(),
                });
                positions.headers.push(pos(voff));
            }
        }
    }
    (reply_form, unread_meta)
}

/// `routing X-Route: a → b X-Priority: high` → namespace and entries, and a `bad-meta-entry`
/// for text between the namespace and the first entry: it is neither, so it is not read,
/// and it must not vanish without a word (a signature would otherwise vouch for it).
fn meta_block(
    s: &str,
    from: usize,
    to: usize,
    pos: &dyn Fn(usize) -> Pos,
) -> (MetaBlock, Vec<Pos>, Option<Diagnostic>) {
    let text = &s[from..to];
    let ns_end = text.find(char::is_whitespace).unwrap_or(text.len());
    // `meta: |` is the older layout, named `legacy` as in a multi-line envelope.
    let namespace = match &text[..ns_end] {
        ns if ns.starts_with('|') => "legacy".to_string(),
        ns => ns.to_string(),
    };
    let bytes = s.as_bytes();
    let mut keys = Vec::new();
    for colon in memchr::memchr_iter(b':', &bytes[from + ns_end..to]).map(|i| i + from + ns_end) {
        if colon + 1 < to && bytes[colon + 1] != b' ' {
            continue;
        }
        let word_start = bytes[..colon]
            .iter()
            .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_'))
            .map_or(0, |i| i + 1);
        if word_start <= from + ns_end || !bytes[word_start - 1].is_ascii_whitespace() {
            continue;
        }
        if bytes[word_start].is_ascii_uppercase() {
            keys.push((word_start, colon));
        }
    }
    let gap = &s[from + ns_end..keys.first().map_or(to, |k| k.0)];
    let unread = (!gap.trim().is_empty()).then(|| {
        let lead = gap.len() - gap.trim_start().len();
        let p = pos(from + ns_end + lead);
        Diagnostic::new(
            Code::BadMetaEntry,
            p.line,
            p.column,
            format!(
                "`{}` stands between the META namespace `{namespace}` and its first entry and was not read (on one line, a META block is its namespace and then `Key: value` entries); write it as an entry, or move it into the body",
                lines::excerpt(gap.trim(), 40)
            ),
        )
    });
    let mut entries = Vec::new();
    let mut positions = Vec::new();
    for (i, (ks, colon)) in keys.iter().enumerate() {
        let end = keys.get(i + 1).map_or(to, |n| n.0);
        let raw = &s[colon + 1..end];
        let voff = colon + 1 + (raw.len() - raw.trim_start().len());
        entries.push((s[*ks..*colon].to_string(), raw.trim().to_string()));
        positions.push(pos(voff));
    }
    (MetaBlock { namespace, entries }, positions, unread)
}
