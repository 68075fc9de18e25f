//! Properties of the canonical form and of extraction on arbitrary input, with proptest.

use crosstalk::protocol::{
    Banner, Code, Envelope, Header, MetaBlock, Options, Parsed, extract, render, render::nfc,
};
use proptest::prelude::*;

const RESERVED: [&str; 12] = [
    "user", "session", "thread", "parent", "message", "context", "intent", "meta", "body",
    "response", "sig", "hash",
];

/// Printable text without line breaks, control, invisible or odd-space characters (which the
/// parser normalizes in structural lines by design), trimmed and NFC.
fn value() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 ,.:;!?'\"()/@#%&*+=<>_|→é漢字😀-]{0,40}".prop_map(|s| nfc(s.trim()))
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Z][A-Z0-9_]{0,8}",
        "[a-z]{2,8}://[a-z0-9]{1,8}/[a-z0-9]{1,8}",
        "[a-z]{1,6}@[a-z]{1,6}\\.example",
    ]
}

fn key(first: &'static str) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("{first}[A-Za-z0-9-]{{0,10}}"))
        .expect("valid regex")
        .prop_filter("structural key", |k| {
            !RESERVED.iter().any(|r| r.eq_ignore_ascii_case(k))
        })
}

fn body_line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-zA-Z0-9 ,.:;!?'\"()/@#%&*+=<>_|→é\t-]{0,60}".prop_map(|s| nfc(&s)),
        1 => Just("[[END]]".to_string()),
        1 => Just("sig: forged".to_string()),
        1 => Just("[[EVIL→ANY v1]]".to_string()),
        1 => Just(String::new()),
        1 => "[ \t]{1,4}[a-z]{1,10}".prop_map(|s| s),
    ]
}

fn body() -> impl Strategy<Value = Option<String>> {
    proptest::option::weighted(
        0.9,
        proptest::collection::vec(body_line(), 0..8).prop_map(|mut lines| {
            // A block body cannot end in blank lines (they belong to no one).
            while lines.last().is_some_and(|l| l.trim().is_empty()) {
                lines.pop();
            }
            lines.join("\n")
        }),
    )
}

prop_compose! {
    /// An envelope whose headers are in canonical order (known keys first, then unknown ones).
    fn envelope()(
        from in name(), to in name(), v11 in any::<bool>(),
        known in proptest::collection::vec(proptest::option::of(value()), 7),
        unknown in proptest::collection::vec((key("X-"), value()), 0..3),
        meta in proptest::collection::vec(
            ("[a-z][a-z0-9-]{0,10}", proptest::collection::vec((key("[A-Z]"), value()), 0..4)),
            0..3),
        body in body(),
        sig in proptest::option::of(prop_oneof![Just("none".to_string()), "[A-Za-z0-9._=;:-]{1,60}"]),
        hash in proptest::option::of("[0-9a-f]{8}"),
    ) -> Envelope {
        let mut headers = Vec::new();
        for (k, v) in ["user", "session", "thread", "parent", "message", "context", "intent"].iter().zip(known) {
            if let Some(v) = v {
                headers.push(Header { key: k.to_string(), value: v });
            }
        }
        headers.extend(unknown.into_iter().map(|(key, value)| Header { key, value }));
        Envelope {
            banner: Banner { from, to, version: if v11 { "v1.1".into() } else { "v1".into() } },
            headers,
            meta: meta.into_iter().map(|(namespace, entries)| MetaBlock { namespace, entries }).collect(),
            body,
            sig,
            hash,
        }
    }
}

/// A body of `head` and then `rest`, its trailing blank lines dropped; a line that would end
/// a one-line body rather than continue it (structural, or indented deeper than the rest)
/// gets a plain line before it, so that the body goes on below its first line.
fn first_line_and_rest(head: &str, mut rest: Vec<String>) -> String {
    while rest.last().is_some_and(|l| l.trim().is_empty()) {
        rest.pop();
    }
    if let Some(i) = rest.iter().position(|l| !l.trim().is_empty()) {
        let l = &rest[i];
        if !l.starts_with(char::is_alphanumeric) || l.contains(':') || l.contains("[[") {
            rest.insert(i, "and more".into());
        }
    }
    let mut body = head.to_string();
    for l in rest {
        body.push('\n');
        body.push_str(&l);
    }
    body
}

/// Whether `body: <head>` would read as a block indicator (`|…`, `>`, `>2-`) rather than as
/// text.
fn ambiguous_plain(head: &str) -> bool {
    let indicator = |r: &str| {
        (r.trim_start_matches(|c: char| c.is_ascii_digit() || c == '-' || c == '+'))
            .trim()
            .is_empty()
    };
    head.starts_with('|') || head.strip_prefix('>').is_some_and(indicator)
}

fn only(text: &str) -> Parsed {
    let mut ex = extract(text, &Options::default());
    assert_eq!(
        ex.envelopes.len(),
        1,
        "expected one envelope in:\n{text}\n{:?}",
        ex.diagnostics
    );
    ex.envelopes.remove(0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parse_of_render_is_identity(e in envelope()) {
        let text = render(&e);
        let p = only(&text);
        prop_assert_eq!(&p.envelope, &e, "rendered:\n{}", text);
        prop_assert!(!p.collapsed);
        prop_assert!(p.terminated);
    }

    #[test]
    /// A body written with its first line on the `body:` line (after `| ` or alone) and the
    /// rest indented below, or under a folded `>` indicator, reads as the same envelope as
    /// its canonical block, whose text it round-trips to.
    fn a_first_line_on_the_body_line_or_a_folded_block_reads_as_the_block(
        e in envelope(),
        head in value().prop_filter("a first line", |h| !h.is_empty()),
        rest in proptest::collection::vec(body_line(), 0..6),
        how in 0u8..3,
    ) {
        let mut e = e;
        e.body = Some(first_line_and_rest(&head, rest));
        let canonical = render(&e);
        let block = format!("\nbody: |\n  {head}\n");
        prop_assert!(canonical.contains(&block), "{}", canonical);
        let one_line = !e.body.as_ref().is_some_and(|b| b.contains('\n'));
        let (spelled, code) = match how {
            0 => (format!("\nbody: | {head}\n"), Code::BodyOnKeyLine),
            1 if !ambiguous_plain(&head) => (format!("\nbody: {head}\n"), Code::BodyOnKeyLine),
            1 => (format!("\nbody: | {head}\n"), Code::BodyOnKeyLine),
            _ => (format!("\nbody: >\n  {head}\n"), Code::FoldedBody),
        };
        let text = canonical.replacen(&block, &spelled, 1);
        let p = only(&text);
        prop_assert_eq!(&p.envelope, &e, "spelled:\n{}", text);
        prop_assert_eq!(render(&p.envelope), canonical);
        let said = p.diagnostics.iter().any(|d| d.code == code);
        prop_assert_eq!(said, code == Code::FoldedBody || !one_line, "{:?}", p.diagnostics);
    }

    #[test]
    fn render_is_idempotent_and_orders_headers(e in envelope(), seed in any::<u64>()) {
        let mut shuffled = e.clone();
        // Any header order renders like the canonical order.
        let n = shuffled.headers.len();
        if n > 1 {
            shuffled.headers.rotate_left((seed as usize) % n);
        }
        let once = render(&shuffled);
        let twice = render(&only(&once).envelope);
        prop_assert_eq!(&once, &twice);
        let canonical: Vec<Header> = shuffled.canonical_headers().into_iter().cloned().collect();
        prop_assert_eq!(only(&once).envelope.headers, canonical);
    }

    #[test]
    fn unknown_meta_and_headers_survive_in_a_transcript(e in envelope(), before in "[a-z .\n]{0,80}", after in "[a-z .\n]{0,80}") {
        let text = format!("{before}\n```\n{}```\n{after}", render(&e));
        let p = only(&text);
        prop_assert_eq!(&p.envelope.meta, &e.meta);
        prop_assert_eq!(&p.envelope.headers, &e.headers);
    }

    #[test]
    /// Body text is never cleaned: controls, escape sequences, bidi and zero-width
    /// characters, tag characters, odd spaces and anything else but a line break (a CR
    /// closing a line is the CRLF line ending) come back exactly as written.
    fn hostile_bodies_round_trip_exactly(
        e in envelope(),
        lines in proptest::collection::vec(
            prop_oneof![
                "[\\x00-\\x09\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x{9f}\\u{a0}\\u{ad}\\u{200b}-\\u{200f}\\u{2028}-\\u{202f}\\u{2060}-\\u{2069}\\u{feff}\\u{e0000}-\\u{e007f}a-z \\[\\]:|→]{1,40}",
                "\\PC{1,40}",
            ],
            1..6,
        ),
    ) {
        // Line breaks are the body's own structure; the CR of a CRLF is dropped by design.
        let lines: Vec<String> = lines
            .iter()
            .map(|l| l.replace(['\n', '\r'], " "))
            .filter(|l| !l.trim().is_empty())
            .collect();
        prop_assume!(!lines.is_empty());
        let mut e = e;
        e.body = Some(nfc(&lines.join("\n")));
        let got = only(&render(&e));
        prop_assert_eq!(got.envelope.body, e.body);
    }

    #[test]
    /// Any number of CRs before each line break (CR LF, and CR CR LF from text converted to
    /// CR LF twice) reads as the LF text does, and its canonical text reads the same again.
    fn carriage_returns_before_line_breaks_read_as_plain_breaks(
        e in envelope(),
        crs in proptest::collection::vec(0usize..4, 1..64),
    ) {
        let lf = render(&e);
        let mut text = String::new();
        for (i, line) in lf.split_inclusive('\n').enumerate() {
            match line.strip_suffix('\n') {
                Some(l) => {
                    text.push_str(l);
                    text.push_str(&"\r".repeat(crs[i % crs.len()]));
                    text.push('\n');
                }
                None => text.push_str(line),
            }
        }
        let got = only(&text);
        prop_assert_eq!(&got.envelope, &e, "{:?}", text);
        prop_assert_eq!(render(&got.envelope), lf);
    }

    #[test]
    /// Transcripts as chat windows mangle them (collapsed, unindented, quoted, fenced, CR LF,
    /// without `[[END]]`): whatever is repaired without errors formats to what reads back.
    fn repaired_transcripts_format_to_what_reads_back(seed in any::<u64>(), mangled in 0u32..=100) {
        let text = crosstalk::synth::transcript(&crosstalk::synth::TranscriptSpec {
            envelopes: 12,
            threads: 3,
            seed,
            mangled_percent: mangled,
        });
        check_round_trip(&text);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let (text, _) = crosstalk::protocol::decode(&bytes);
        check_invariants(&text);
        check_round_trip(&text);
    }

    #[test]
    fn mutated_envelopes_never_panic(
        e in envelope(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<char>()), 1..12),
    ) {
        let mut text: Vec<char> = render(&e).chars().collect();
        for (at, op, c) in edits {
            if text.is_empty() { break; }
            let i = at.index(text.len());
            let structural = ['[', ']', ':', '\n', '|', '→', '>', '`', ' '];
            match op {
                0 => { text.remove(i); }
                1 => text.insert(i, c),
                2 => text.insert(i, structural[(c as usize) % structural.len()]),
                _ => text[i] = structural[(c as usize) % structural.len()],
            }
        }
        let text: String = text.into_iter().collect();
        check_invariants(&text);
        check_round_trip(&text);
    }
}

/// What `fmt` must keep for any input: every envelope found without errors renders to a text
/// that reads back as the same envelope (headers in the canonical order `fmt` writes them
/// in), and renders the same again.
fn check_round_trip(text: &str) {
    let ex = extract(text, &Options::default());
    for p in ex.envelopes.iter().filter(|p| !p.has_errors()) {
        let canonical = render(&p.envelope);
        let again = extract(&canonical, &Options::default());
        assert_eq!(again.envelopes.len(), 1, "{text:?}\n{canonical:?}");
        let mut ordered = p.envelope.clone();
        ordered.headers = p
            .envelope
            .canonical_headers()
            .into_iter()
            .cloned()
            .collect();
        assert_eq!(
            again.envelopes[0].envelope, ordered,
            "{text:?}\n{canonical:?}"
        );
        assert_eq!(render(&again.envelopes[0].envelope), canonical, "{text:?}");
    }
}

/// What must hold for any input: envelopes in order, spans and byte ranges inside the
/// input, on character boundaries, not overlapping; every diagnostic on an existing line.
fn check_invariants(text: &str) {
    let ex = extract(text, &Options::default());
    let lines = text.split('\n').count() as u32;
    let mut last_end = 0usize;
    for p in &ex.envelopes {
        assert!(p.span.start_line >= 1 && p.span.start_line <= p.span.end_line);
        assert!(p.span.end_line <= lines);
        assert!(p.byte_range.start >= last_end, "overlapping envelopes");
        assert!(p.byte_range.end <= text.len());
        assert!(
            text.is_char_boundary(p.byte_range.start) && text.is_char_boundary(p.byte_range.end)
        );
        last_end = p.byte_range.end;
        let _ = p.received_text(text);
        let _ = p.signable_received(text);
        let _ = render(&p.envelope);
        for d in &p.diagnostics {
            assert!(
                d.line >= 1 && d.line <= lines,
                "diagnostic on line {} of {lines}",
                d.line
            );
            assert!(d.column >= 1);
        }
    }
}
