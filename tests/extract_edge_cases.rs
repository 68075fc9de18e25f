//! Small edge cases of reading envelopes, each pinned to the rule `docs/PROTOCOL.md` states.

use crosstalk::protocol::{Code, Options, Parsed, extract};

fn one(text: &str) -> Parsed {
    let mut ex = extract(text, &Options::default());
    assert_eq!(ex.envelopes.len(), 1, "{text}\n{:?}", ex.diagnostics);
    ex.envelopes.remove(0)
}

fn codes(p: &Parsed) -> Vec<Code> {
    p.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn text_after_the_block_indicator_is_the_body() {
    let p = one("[[A→B v1]]\nuser: u\nbody: | hello there\nsig: none\n[[END]]\n");
    assert_eq!(p.envelope.body.as_deref(), Some("hello there"));
    let p = one("[[A→B v1]]\nbody: |2-\n    x\nsig: none\n[[END]]\n");
    assert_eq!(p.envelope.body.as_deref(), Some("  x"));
}

#[test]
fn one_line_body_may_mention_sig_and_hash() {
    let p = one("[[A→B v1]] user: u body: | check sig: and hash: handling. sig: none [[END]]");
    assert_eq!(
        p.envelope.body.as_deref(),
        Some("check sig: and hash: handling.")
    );
    assert_eq!(p.envelope.sig.as_deref(), Some("none"));
    assert_eq!(p.envelope.hash, None);
    let p = one("[[A→B v1]] user: u body: |2- indicator stripped sig: none [[END]]");
    assert_eq!(p.envelope.body.as_deref(), Some("indicator stripped"));
}

#[test]
fn capitalized_words_after_a_banner_are_not_a_one_line_envelope() {
    let ex = extract("[[A→B v1]] User: x Body: | hi [[END]]", &Options::default());
    assert!(ex.envelopes.is_empty());
}

#[test]
fn unknown_header_between_sig_and_end_is_kept() {
    let p = one("[[A→B v1]]\nuser: u\nbody: |\n  hi\nsig: none\nX-Foo: bar\n[[END]]\n");
    assert!(p.terminated);
    assert_eq!(p.envelope.header("X-Foo"), Some("bar"));
    assert!(codes(&p).contains(&Code::HeaderAfterBody));
}

#[test]
fn invisible_characters_are_reported_only_inside_the_envelope() {
    let ex = extract(
        "[[A→B v1]]\nuser: u\nbody: |\n  hi\nsig: none\n\u{200B}Some prose after.\n",
        &Options::default(),
    );
    let p = &ex.envelopes[0];
    assert!(
        !codes(p).contains(&Code::InvisibleChars),
        "{:?}",
        p.diagnostics
    );
    assert!(p.diagnostics.iter().all(|d| d.line <= p.span.end_line));
}

#[test]
fn quote_markers_without_a_space_continue_the_quote() {
    let p = one("> [[A→B v1]]\n>user: u\n> body: |\n>   hi\n>sig: none\n> [[END]]\n");
    assert_eq!(p.envelope.user(), Some("u"));
    assert_eq!(p.envelope.body.as_deref(), Some("hi"));
    assert!(p.terminated);
}

#[test]
fn expires_without_offset_is_utc() {
    let text = "[[A→B v1]]\nthread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K\n\nmeta: privacy\nExpires: 2026-11-21T23:59\n\nbody: |\n  hi\nsig: none\n[[END]]\n";
    let before: jiff::Timestamp = "2026-11-21T21:00Z".parse().expect("time");
    let p = extract(
        text,
        &Options {
            now: Some(before),
            ..Options::default()
        },
    )
    .envelopes
    .remove(0);
    assert!(!codes(&p).contains(&Code::Expired), "{:?}", p.diagnostics);
    let after: jiff::Timestamp = "2026-11-22T00:00Z".parse().expect("time");
    let p = extract(
        text,
        &Options {
            now: Some(after),
            ..Options::default()
        },
    )
    .envelopes
    .remove(0);
    assert!(codes(&p).contains(&Code::Expired));
}

#[test]
fn stripped_body_stops_at_hash_too() {
    let p = one("[[A→B v1]]\nuser: u\nbody: |\nnot indented\nhash: 00000000\nsig: none\n[[END]]\n");
    assert_eq!(p.envelope.body.as_deref(), Some("not indented"));
    assert_eq!(p.envelope.hash.as_deref(), Some("00000000"));
}
