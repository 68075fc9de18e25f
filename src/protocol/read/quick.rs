//! The quick reader: envelopes in their plainest shape, recognized in one pass over their
//! lines and only counted.
//!
//! `check` of a transcript spends nearly all its time on envelopes with nothing wrong in
//! them, building for each the headers, META blocks, body and positions that only a finding
//! would use. Most envelopes are written exactly as the specification shows them: the
//! banner alone on its line, `key: value` headers, `Key: value` META entries, `body: |` with
//! every line indented by two spaces (or v1.0's `response: |`), `sig: none` and `[[END]]`.
//! For an envelope in that shape, [`read`] answers whether the full reader (`parse_block`,
//! then `validate_ref`) would report nothing but an intent under its v1.0 name (which it
//! reports itself), asking the very checks the validator asks of the values (ids,
//! addresses, intents, the routing and privacy values, hidden text, undeclared personal
//! data). Anything outside the shape (another indentation, a repeated header, a signature, a
//! body on the key's line, a line that cleaning would change) answers `false`, and the full
//! reader reads the envelope as before: the quick reader only ever declines.
//!
//! That the two agree is held three ways: a debug build reads every envelope the quick
//! reader accepts with the full reader too and asserts that it finds the same (so every
//! test that runs `check` compares them); a property test compares `check`'s findings with
//! and without the quick reader on envelopes mutated with the characters that matter; and
//! the benchmark transcripts' reports are compared byte for byte (docs/BENCHMARKS.md).

use crate::protocol::address::check_address;
use crate::protocol::lines::{self, Cursor, Line};
use crate::protocol::model::KNOWN_HEADERS;
use crate::protocol::namespaces;
use crate::protocol::parse::Flow;
use crate::protocol::scan::BannerMatch;
use crate::protocol::validate::{legacy_intent, meta_value_finding};
use crate::protocol::{Diagnostic, Intent, IntentKind, Options, Pos};

/// Indices of the headers in [`KNOWN_HEADERS`] the checks ask about.
const SESSION: usize = 1;
const THREAD: usize = 2;
const PARENT: usize = 3;
const MESSAGE: usize = 4;
const INTENT: usize = 6;

/// Entries a META block may hold and still be read quickly: the repeated-key check looks
/// back over them.
const MAX_ENTRIES: usize = 16;

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Headers,
    Meta,
    Body,
    Sig,
}

/// The META block being read: its namespace and its keys so far.
struct Block<'a> {
    namespace: &'a str,
    keys: [&'a str; MAX_ENTRIES],
    n: usize,
}

/// Whether the envelope whose banner `bm` stands alone on `banner` (from its first column,
/// unchanged by cleaning, no quote prefix) is in the plainest shape and would be read with
/// no finding but an intent under its v1.0 name, which is added to `found` then. When it
/// is, `cur` (standing after the banner) is moved past its `[[END]]` line, where the full
/// reader leaves it; otherwise `cur` and `found` are left as they were.
///
/// In two steps: the lines read in their shape ([`Reading::lines`]), then what the
/// validator asks of the envelope as a whole ([`Reading::intent`]).
pub(crate) fn read<'a>(
    banner: &Line<'a>,
    bm: &BannerMatch<'_>,
    cur: &mut Cursor<'a>,
    opts: &Options,
    found: &mut Vec<Diagnostic>,
) -> bool {
    let v11 = match bm.version {
        Some("v1") => false,
        Some("v1.1") => true,
        _ => return false,
    };
    if !(bm.from.is_ascii() && bm.to.is_ascii())
        || check_address(bm.from).is_err()
        || check_address(bm.to).is_err()
    {
        return false;
    }
    let mut r = Reading {
        c: *cur,
        v11,
        headers: [None; KNOWN_HEADERS.len()],
        intent_line: 0,
        reply_form: false,
        block: None,
        pii_declared: None,
        state: State::Headers,
        body_from: *cur,
        body_lines: 0,
        body_bytes: 0,
        body_ascii: true,
    };
    let Some(end) = r.lines(opts) else {
        return false;
    };
    if end - banner.start > opts.size_limit {
        return false;
    }
    let Some((intent, legacy)) = r.intent() else {
        return false;
    };
    if legacy && let Some(raw) = r.headers[INTENT] {
        let pos = Pos {
            line: r.intent_line,
            column: "intent: ".len() as u32 + 1,
        };
        found.push(legacy_intent(raw, &intent, pos));
    }
    *cur = r.c;
    true
}

/// An envelope being read by [`read`]: where it stands, and what it said so far. Every
/// method answers `None` where the envelope leaves the plainest shape (the quick reader
/// declines).
struct Reading<'a> {
    c: Cursor<'a>,
    /// It is v1.1: said by its banner, or by a header or META block only v1.1 has.
    v11: bool,
    headers: [Option<&'a str>; KNOWN_HEADERS.len()],
    /// The line of the `intent:` header (its value stands at column 9: the line is ASCII).
    intent_line: u32,
    /// Whether the body is v1.0's `response: |`, which needs no `sig:` and is a reply.
    reply_form: bool,
    block: Option<Block<'a>>,
    pii_declared: Option<&'a str>,
    state: State,
    /// Where the body's lines start, and how many there are (read again only when personal
    /// data must be looked for in them).
    body_from: Cursor<'a>,
    body_lines: usize,
    body_bytes: usize,
    body_ascii: bool,
}

impl<'a> Reading<'a> {
    /// Reads the envelope's lines through its `[[END]]`, and says where that line ends.
    fn lines(&mut self, opts: &Options) -> Option<usize> {
        loop {
            let line = self.c.next_line()?;
            let t = line.text;
            match self.state {
                State::Headers | State::Meta => {
                    if t.is_empty() {
                        self.state = State::Headers;
                        continue;
                    }
                    self.structural(&line, opts)?;
                }
                // The line after the body's lines: what ends it.
                State::Body => {
                    if self.reply_form && t == "[[END]]" {
                        return Some(line.end);
                    }
                    if t != "sig: none" {
                        return None;
                    }
                    self.state = State::Sig;
                }
                State::Sig => return (t == "[[END]]").then_some(line.end),
            }
        }
    }

    /// A line of the headers or a META block: a `key: value` header, META entry, or the
    /// `body: |` or `meta:` key that opens the part after it.
    fn structural(&mut self, line: &Line<'a>, opts: &Options) -> Option<()> {
        let t = line.text;
        if !structural_ok(t) {
            return None;
        }
        let indent = t.bytes().take_while(|&b| b == b' ').count();
        let (key, value) = key_value(&t[indent..])?;
        if self.state == State::Meta && key.as_bytes()[0].is_ascii_uppercase() && indent <= 4 {
            return self.entry(key, value, opts);
        }
        if indent != 0 {
            return None;
        }
        match key {
            "body" | "response" if value == "|" => {
                self.reply_form = key == "response";
                self.body_from = self.c;
                let (bytes, lines, ascii) = body_lines_at(self.c.rest().as_bytes())?;
                self.c.skip_lines(bytes, lines);
                (self.body_bytes, self.body_lines, self.body_ascii) =
                    (bytes, lines as usize, ascii);
                self.state = State::Body;
            }
            "meta" if !value.starts_with('|') => {
                self.v11 = true;
                self.block = Some(Block {
                    namespace: value,
                    keys: [""; MAX_ENTRIES],
                    n: 0,
                });
                self.state = State::Meta;
            }
            _ => self.header(line, key, value)?,
        }
        Some(())
    }

    /// An entry of the open META block.
    fn entry(&mut self, key: &'a str, value: &'a str, opts: &Options) -> Option<()> {
        let b = self.block.as_mut()?;
        if !entry_ok(b, key, value, opts) {
            return None;
        }
        // Personal data is declared in `meta: privacy` in any case.
        if self.pii_declared.is_none()
            && key.eq_ignore_ascii_case("PII")
            && b.namespace.eq_ignore_ascii_case(namespaces::PRIVACY)
        {
            self.pii_declared = Some(value);
        }
        Some(())
    }

    /// A known header, given once, its id (if it is one) valid.
    fn header(&mut self, line: &Line<'a>, key: &str, value: &'a str) -> Option<()> {
        let i = header_index(key)?;
        if self.headers[i].is_some() {
            return None;
        }
        if i == INTENT {
            if !line.text.is_ascii() {
                return None;
            }
            self.intent_line = line.no;
        }
        if matches!(i, THREAD | PARENT | MESSAGE) {
            crate::protocol::check_id(value).ok()?;
            self.v11 = true;
        }
        self.headers[i] = Some(value);
        self.state = State::Headers;
        Some(())
    }

    /// What the validator asks of the envelope as a whole, once its lines are read: its
    /// intent, and whether it is written under its v1.0 name. Without `intent:`, the
    /// `response:` form is a reply; any other body is reported.
    fn intent(&self) -> Option<(Intent, bool)> {
        let headers = &self.headers;
        let (intent, legacy) = match headers[INTENT].map(Intent::classify) {
            Some((i, IntentKind::Core)) => (i, false),
            Some((i, IntentKind::Legacy)) => (i, true),
            None if self.reply_form => (Intent::Respond, false),
            _ => return None,
        };
        if intent == Intent::Error
            || (intent == Intent::Respond && self.v11 && headers[PARENT].is_none())
            || (!self.v11 && headers[SESSION].is_none())
        {
            return None;
        }
        if let (Some(parent), Some(message)) = (headers[PARENT], headers[MESSAGE])
            && parent.eq_ignore_ascii_case(message)
        {
            return None;
        }
        // The body's text is made only when it must be searched: for hidden text when it is
        // not ASCII, for personal data when the envelope says it holds none.
        let pii_none = (self.pii_declared)
            .is_some_and(|d| d.eq_ignore_ascii_case("none") || d.eq_ignore_ascii_case("redacted"));
        if pii_none || !self.body_ascii {
            let body = body_text(self.body_from, self.body_lines, self.body_bytes);
            if crate::sanitize::hidden::find(&body).is_some()
                || (pii_none && !crate::protocol::pii::find(&body).is_empty())
            {
                return None;
            }
        }
        Some((intent, legacy))
    }
}

/// Whether a header or META line reads as written: ASCII without a carriage return, or
/// text that cleaning leaves as it is with nothing the validator reports in a value
/// (bidirectional controls, hidden text) and already in NFC (the form values are checked
/// in); and not ending with `]`, as a line that ends an envelope with a banner would.
/// (Such a line starts with a letter, so it starts no banner, fence or `[[END]]`; control
/// characters in it are read as written and reported nowhere.)
fn structural_ok(t: &str) -> bool {
    if t.ends_with(']') {
        return false;
    }
    lines::is_plain_ascii(t)
        || ascii_and_arrows(t)
        || (matches!(lines::clean(t), std::borrow::Cow::Borrowed(_))
            && !lines::has_bidi_control(t)
            && crate::sanitize::hidden::find(t).is_none()
            && !crate::protocol::render::needs_nfc(t))
}

/// Whether `t` is ASCII without a carriage return but for `→` (the arrow of every route):
/// such a line is what cleaning leaves as it is, holds no bidirectional control or hidden
/// text, and is in NFC (ASCII and U+2192 are all starters that no composition involves), so
/// none of the searches for those need to run over it.
pub(in crate::protocol) fn ascii_and_arrows(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\r' => return false,
            0..0x80 => i += 1,
            0xe2 if b.get(i + 1..i + 3) == Some(&[0x86, 0x92]) => i += 3,
            _ => return false,
        }
    }
    true
}

/// `key: value` with one space after the colon and a value with no space at either edge;
/// the key is a word as [`lines::split_key`] reads one.
fn key_value(s: &str) -> Option<(&str, &str)> {
    let b = s.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let n = b
        .iter()
        .take_while(|c| lines::KEY_BYTE[**c as usize])
        .count();
    let value = s[n..].strip_prefix(": ")?;
    let v = value.as_bytes();
    let (&first, &last) = (v.first()?, v.last()?);
    // White space at an edge, looked at as a character only when it is not ASCII.
    let space = |b: u8, c: Option<char>| match b {
        b' ' | b'\t'..=b'\r' => true,
        0x80.. => c.is_some_and(char::is_whitespace),
        _ => false,
    };
    if space(
        first,
        (first >= 0x80).then(|| value.chars().next()).flatten(),
    ) || space(
        last,
        (last >= 0x80).then(|| value.chars().next_back()).flatten(),
    ) {
        return None;
    }
    Some((&s[..n], value))
}

/// Where `key` stands in [`KNOWN_HEADERS`] when it is written as it is there, in lower case
/// (the full reader takes any case; another case is left to it): what
/// `known_header_index` answers for such a key (a test holds them together), by one
/// comparison by length and bytes, where that one's case folding cost 6 % of `check`'s
/// instructions asked on every header line.
fn header_index(key: &str) -> Option<usize> {
    Some(match key {
        "user" => 0,
        "session" => 1,
        "thread" => 2,
        "parent" => 3,
        "message" => 4,
        "context" => 5,
        "intent" => 6,
        _ => return None,
    })
}

/// An entry of the open META block: a value that closes any list it opens, a key not seen
/// before in the block, and the values the validator checks as it checks them.
fn entry_ok<'a>(b: &mut Block<'a>, key: &'a str, value: &str, opts: &Options) -> bool {
    if value.starts_with(['[', '{']) && Flow::of(value).depth > 0 {
        return false;
    }
    if b.n == MAX_ENTRIES || b.keys[..b.n].contains(&key) {
        return false;
    }
    b.keys[b.n] = key;
    b.n += 1;
    meta_value_finding(b.namespace, key, value, opts).is_none()
}

/// The body's lines at the start of `b` (the line after `body: |`): the first indented by two
/// spaces and starting with text, the others empty or indented by two spaces or more, as the
/// full reader takes them with nothing to report. Their length in bytes with their line
/// breaks, their number, and whether they are ASCII; `None` when the input ends among them or
/// the first is not so. The lines are found here rather than one by one: they are most of
/// an envelope's lines, and only their first bytes matter.
fn body_lines_at(b: &[u8]) -> Option<(usize, u32, bool)> {
    if !(b.starts_with(b"  ") && matches!(b.get(2), Some(0x21..=0x7e))) {
        return None;
    }
    let (mut i, mut n, mut ascii) = (0, 0u32, true);
    loop {
        let rest = &b[i..];
        if rest.first() == Some(&b'\n') {
            i += 1;
        } else if rest.starts_with(b"  ") {
            let (end, a) = lines::find_newline_ascii(rest);
            i += end? + 1;
            ascii &= a;
        } else {
            return Some((i, n, ascii));
        }
        n += 1;
    }
}

/// The body as the full reader builds it from `n` lines at `from` (`bytes` long with their
/// line breaks): each line without the two spaces of indentation, joined by line breaks,
/// the trailing lines of only white space left out.
fn body_text(mut from: Cursor<'_>, n: usize, bytes: usize) -> String {
    let mut text = String::with_capacity(bytes);
    let mut kept = 0;
    for i in 0..n {
        let Some(line) = from.next_line() else {
            break;
        };
        let rest = line.text.get(2..).unwrap_or("");
        if i > 0 {
            text.push('\n');
        }
        text.push_str(rest);
        if !lines::is_space_only(rest) {
            kept = text.len();
        }
    }
    text.truncate(kept);
    text
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use crate::protocol::{Code, Diagnostic, Extractor, Options};

    /// What `check` makes of `text`: the number of envelopes, every finding in order, and the
    /// number of lines read; with or without the quick reader.
    fn findings(text: &str, opts: &Options, quick: bool) -> (usize, Vec<Diagnostic>, u32, usize) {
        let mut ex = Extractor::new(text, opts.clone());
        if quick {
            ex = ex.counting_clean();
        }
        let (mut n, mut found) = (0, Vec::new());
        while let Some(mut p) = ex.next_ref() {
            n += 1;
            found.append(&mut p.diagnostics);
        }
        let clean = ex.clean_count();
        let lines = ex.line();
        found.extend(ex.into_diagnostics());
        found.sort_by_key(|d| (d.line, d.column));
        (n + clean, found, lines, clean)
    }

    fn same_findings(text: &str, opts: &Options) -> usize {
        let (n, found, lines, clean) = findings(text, opts, true);
        let full = findings(text, opts, false);
        assert_eq!((n, &found, lines), (full.0, &full.1, full.2), "{text:?}");
        clean
    }

    const PLAIN: &str = "[[CLAUDE→CHATGPT v1.1]]\nuser: ops\nthread: 01K73RW3R10Y4N9BMD1T925451\n\
        message: 01K73RX1MZ10AB0WC9QCTMC2HY\ncontext: release 1.4.2\nintent: REQUEST\n\n\
        meta: routing\nX-Route: claude://session/fec554 → chatgpt://thread/60f22d\n\
        X-Priority: normal\n\nmeta: privacy\nPII: none\nConsent: explicit_yes_2025-10-09T06:00Z\n\
        Expires: 2030-12-01T00:00Z\n\nbody: |\n  First, invalidate the cache.\n\n  Zweitens: für das Team.\n\
        sig: none\n[[END]]\n";

    /// The plainest envelopes are counted by the quick reader, with the one finding it
    /// reports itself; everything else is left to the full reader.
    #[test]
    fn plain_envelopes_are_counted_and_others_read() {
        let opts = Options::default();
        assert_eq!(same_findings(PLAIN, &opts), 1);
        let reply = "[[CLAUDE→CHATGPT v1]]\nsession: 2025-10-09T06:00Z fec554\nresponse: |\n  ok\n[[END]]\n";
        assert_eq!(same_findings(reply, &opts), 1);
        // Case is not a finding: the validator reads intents in any case.
        let lower = PLAIN.replace("intent: REQUEST", "intent: request");
        assert_eq!(same_findings(&lower, &opts), 1);
        let legacy = PLAIN.replace("intent: REQUEST", "intent: QUESTION");
        assert_eq!(same_findings(&legacy, &opts), 1);
        let (_, found, _, _) = findings(&legacy, &opts, true);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].code, found[0].line, found[0].column),
            (Code::LegacyIntent, 6, 9)
        );
        for other in [
            PLAIN.replace("First", "Mail kalle@example.com first"),
            PLAIN.replace("X-Priority: normal", "X-Priority: urgent"),
            PLAIN.replace("Expires: 2030", "Expires: 2020"),
            PLAIN.replace("sig: none", "sig: ed25519:abc"),
            PLAIN.replace("  Zweitens", " Zweitens"),
            PLAIN.replace("user: ops", "user: ops\nuser: ops"),
            PLAIN.replace("release", "re\u{200b}lease"),
            PLAIN.replace("First,", "First\u{e0041},"),
        ] {
            let opts = Options {
                now: "2026-01-01T00:00Z".parse().ok(),
                ..Options::default()
            };
            assert_eq!(same_findings(&other, &opts), 0, "{other}");
        }
        let small = Options {
            size_limit: 200,
            ..Options::default()
        };
        assert_eq!(same_findings(PLAIN, &small), 0);
    }

    /// The quick reader's header look-up is the model's, for keys written in lower case.
    #[test]
    fn header_index_is_known_header_index_in_lower_case() {
        use crate::protocol::model::{KNOWN_HEADERS, STRUCTURAL_KEYS, known_header_index};
        for key in STRUCTURAL_KEYS
            .iter()
            .chain(&["User", "INTENT", "x-extra", "", "users"])
        {
            let exact = known_header_index(key).filter(|&i| KNOWN_HEADERS[i] == *key);
            assert_eq!(super::header_index(key), exact, "{key}");
        }
    }

    /// Lines an envelope is made of, right and nearly right.
    fn line() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "user: ops",
            "user:ops",
            "User: ops",
            "session: 2025-10-09T06:00Z fec554",
            "thread: 01K73RW3R10Y4N9BMD1T925451",
            "thread: 01k73rw3r10y4n9bmd1t925451",
            "thread: 01K73RW3R10Y4N9BMD1T92545",
            "parent: 01K73RX1MZ10AB0WC9QCTMC2HY",
            "message: 01K73RX1MZ10AB0WC9QCTMC2HY",
            "message: 01K73RZGMBDB37HFT6REBCC2PB",
            "context: release 1.4.2",
            "context: plan [[A→B v1]]",
            "context: a\u{202e}b",
            "context: ",
            "intent: REQUEST",
            "intent: RESPOND",
            "intent: ERROR",
            "intent: QUESTION",
            "intent: answer",
            "intent: BOGUS",
            "x-extra: 1",
            "meta: routing",
            "meta: privacy",
            "meta: Privacy",
            "meta: poll",
            "meta: error",
            "meta: |",
            "X-Route: claude://a → chatgpt://b",
            "X-Route: a -> b c",
            "X-Reply-To: claude://a",
            "X-Priority: high",
            "X-Priority: soon",
            "PII: none",
            "PII: present",
            "pii: none",
            "Consent: explicit_yes_2025-10-09T06:00Z",
            "Consent: sure",
            "Expires: 2030-12-01T00:00Z",
            "Expires: 2020-01-01",
            "Options: [a, b]",
            "Options: [a,",
            "  Note: indented",
            "      Deep: x",
            "Code: E-FORMAT",
            "Empty:",
            "",
            "  ",
            "body: |",
            "body: |2",
            "body: >",
            "body: hi",
            "response: |",
            "  hello there",
            "  mail kalle@example.com",
            "  call +49 30 1234567",
            "    deeper",
            " one space",
            "unindented text",
            "  [[END]]",
            "  [[A→B v1]]",
            "  ```",
            "  x\u{200b}y",
            "  tag\u{e0041}",
            "  für",
            "\tTab",
            "sig: none",
            "sig: NONE",
            "sig: ed25519:abc",
            "hash: 1234abcd",
            "[[END]]",
            "[[end]]",
            "[[ END ]]",
            "```",
            "[[CLAUDE→CHATGPT v1]]",
        ])
        .prop_map(str::to_string)
    }

    /// An envelope in the plainest shape, as lines: a banner, headers in any order, META
    /// blocks, the body (or v1.0's `response:`), `sig: none` and `[[END]]`.
    fn plain_envelope() -> impl Strategy<Value = Vec<String>> {
        let banner = prop::sample::select(vec![
            "[[CLAUDE→CHATGPT v1]]",
            "[[CLAUDE→CHATGPT v1.1]]",
            "[[claude://a→BOB v1.1]]",
            "[[A->B v1]]",
        ]);
        let headers = prop::sample::subsequence(
            vec![
                "user: ops",
                "thread: 01K73RW3R10Y4N9BMD1T925451",
                "message: 01K73RZGMBDB37HFT6REBCC2PB",
                "context: release 1.4.2 → prod",
            ],
            0..=4,
        )
        .prop_shuffle();
        let intent = prop::sample::select(vec!["REQUEST", "RESPOND", "QUESTION", "ANSWER", "Poll"]);
        // META values right, and now and then wrong in the way the validator reports.
        let value = |right: &'static str, wrong: &'static str| prop_oneof![4 => Just(right), 1 => Just(wrong)];
        let routing = (
            value("claude://a → chatgpt://b", "claude://a → not an address"),
            value("claude://a", "a b"),
            value("low", "soon"),
        )
            .prop_map(|(route, reply, priority)| {
                format!(
                    "meta: routing\nX-Route: {route}\nX-Reply-To: {reply}\nX-Priority: {priority}"
                )
            });
        let privacy = (
            value("none", "maybe"),
            value("explicit_yes_2025-10-09T06:00Z", "sure"),
            value("2030-12-01T00:00Z", "2020-01-01"),
        )
            .prop_map(|(pii, consent, expires)| {
                format!("meta: privacy\n  PII: {pii}\n  Consent: {consent}\n  Expires: {expires}")
            });
        let poll = Just("meta: poll\nOptions: [a, b]\nQuorum: 2".to_string());
        let meta = prop::collection::vec(prop_oneof![routing, privacy, poll], 0..3);
        let body = prop::collection::vec(
            prop::sample::select(vec![
                "  hello there",
                "",
                "    deeper",
                "  für das Team",
                "  call +49 30 1234567",
                "  [[END]]",
            ]),
            0..4,
        );
        let reply = any::<bool>();
        (banner, headers, intent, meta, body, reply).prop_map(
            |(banner, headers, intent, meta, body, reply)| {
                let mut lines = vec![
                    banner.to_string(),
                    "session: 2025-10-09T06:00Z fec554".into(),
                    "parent: 01K73RX1MZ10AB0WC9QCTMC2HY".into(),
                ];
                lines.extend(headers.iter().map(|h| h.to_string()));
                if !reply {
                    lines.push(format!("intent: {intent}"));
                }
                for m in meta {
                    lines.extend(m.split('\n').map(str::to_string));
                    lines.push(String::new());
                }
                lines.push(if reply { "response: |" } else { "body: |" }.into());
                lines.push("  First line.".into());
                lines.extend(body.iter().map(|l| l.to_string()));
                if !reply {
                    lines.push("sig: none".into());
                }
                lines.push("[[END]]".into());
                lines
            },
        )
    }

    /// A plain envelope with up to two of its lines replaced, inserted, removed or repeated.
    fn envelope() -> impl Strategy<Value = String> {
        let edit = (0..4u8, any::<prop::sample::Index>(), line());
        let edits = prop_oneof![1 => Just(Vec::new()), 1 => prop::collection::vec(edit, 1..3)];
        (plain_envelope(), edits).prop_map(|(mut lines, edits)| {
            for (kind, at, other) in edits {
                let i = at.index(lines.len());
                match kind {
                    0 => lines[i] = other,
                    1 => lines.insert(i, other),
                    2 => {
                        lines.remove(i);
                    }
                    _ => lines.insert(i, lines[i].clone()),
                }
            }
            lines.iter().map(|l| format!("{l}\n")).collect()
        })
    }

    /// Characters that change how a line is read.
    fn hostile() -> impl Strategy<Value = char> {
        prop::sample::select(vec![
            '\0',
            '\r',
            '\n',
            '\t',
            '\u{b}',
            '\u{a0}',
            '\u{200b}',
            '\u{feff}',
            '\u{202e}',
            '\u{e0041}',
            '\u{fe0f}',
            '→',
            ':',
            ' ',
            '[',
            ']',
            '`',
            '>',
            '|',
            'A',
            'é',
            'K',
            '\u{212a}',
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Whatever an input holds, `check` reports the same with the quick reader as without
        /// it: the same envelopes, findings in the same order, the same lines read. (A debug
        /// build also panics when the quick reader accepts an envelope the full reader finds
        /// other findings in.)
        #[test]
        fn the_quick_reader_changes_nothing_check_reports(
            envelopes in prop::collection::vec(envelope(), 1..4),
            edits in prop_oneof![
                2 => Just(Vec::new()),
                1 => prop::collection::vec((any::<prop::sample::Index>(), hostile(), any::<bool>()), 1..3),
            ],
            prose in prop::sample::select(vec!["", "Here it is:\n", "```text\n", "> "]),
            limit in prop_oneof![4 => Just(1usize << 20), 1 => Just(64usize), 1 => Just(300usize)],
        ) {
            let mut text: Vec<char> = format!("{prose}{}", envelopes.concat()).chars().collect();
            for (at, c, insert) in edits {
                let i = at.index(text.len() + 1);
                if insert || i == text.len() {
                    text.insert(i, c);
                } else {
                    text[i] = c;
                }
            }
            let text: String = text.into_iter().collect();
            for now in [None, "2026-01-01T00:00Z".parse().ok()] {
                let opts = Options { size_limit: limit, now };
                same_findings(&text, &opts);
            }
        }
    }
}
