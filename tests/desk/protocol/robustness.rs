//! Pathological inputs: each must finish, without panicking, with the expected result.
//! (Their cost is measured by `cargo bench --bench check`, not timed here.)

use crosstalk::protocol::{Code, Options, extract};

fn codes(p: &crosstalk::protocol::Parsed) -> Vec<Code> {
    p.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn one_megabyte_single_line_of_noise() {
    let unit = "[[ noise [[A→ ]] user: x body: | sig: ";
    let line = unit.repeat(1024 * 1024 / unit.len());
    let ex = extract(&line, &Options::default());
    // `[[A→ ]] user: …` reads as one-line envelopes with no recipient: each is found and
    // rejected, none swallows the rest of the line.
    assert_eq!(ex.envelopes.len(), line.matches("[[A→").count());
    assert!(
        ex.envelopes
            .iter()
            .all(|p| codes(p).contains(&Code::BadAddress))
    );
}

#[test]
fn one_megabyte_collapsed_envelope() {
    let body = "word context: intent: [[x]] ".repeat(40_000);
    let line = format!(
        "[[A→B v1]] user: x session: 2025-10-09T15Z 04f07f context: y intent: QUESTION body: | {body} sig: none [[END]]"
    );
    assert!(line.len() > 1_000_000);
    let ex = extract(&line, &Options::default());
    assert_eq!(ex.envelopes.len(), 1);
    let p = &ex.envelopes[0];
    assert_eq!(p.envelope.session(), Some("2025-10-09T15Z 04f07f"));
    assert_eq!(p.envelope.body.as_deref(), Some(body.trim()));
    assert!(codes(p).contains(&Code::CollapsedNewlines));
    assert!(codes(p).contains(&Code::TooLarge));
}

#[test]
fn hundred_thousand_line_body() {
    let mut text =
        String::from("[[A→B v1]]\nuser: u\nsession: s\ncontext: c\nintent: REQUEST\nbody: |\n");
    for i in 0..100_000 {
        text.push_str(&format!("  line {i}\n"));
    }
    text.push_str("sig: none\n[[END]]\n");
    let ex = extract(
        &text,
        &Options {
            size_limit: usize::MAX,
            ..Options::default()
        },
    );
    assert_eq!(ex.envelopes.len(), 1);
    let body = ex.envelopes[0].envelope.body.as_deref().unwrap_or_default();
    assert_eq!(body.lines().count(), 100_000);
    assert_eq!(ex.envelopes[0].span.end_line, 100_008);
}

#[test]
fn ten_thousand_banners_without_end() {
    let text = "[[A→B v1]]\nuser: u\nbody: |\n  hi\n".repeat(10_000);
    let ex = extract(&text, &Options::default());
    assert_eq!(ex.envelopes.len(), 10_000);
    for (i, p) in ex.envelopes.iter().enumerate() {
        assert_eq!(p.span.start_line, 1 + 4 * i as u32);
        assert_eq!(p.span.end_line, 4 + 4 * i as u32);
        assert!(codes(p).contains(&Code::MissingEnd));
    }
}

#[test]
fn ten_thousand_stripped_bodies_without_terminator() {
    // Each look-ahead for `sig:` stops at the next banner, so this stays linear.
    let text = "[[A→B v1]]\nuser: u\nbody: |\nnot indented\nmore\n".repeat(10_000);
    let ex = extract(&text, &Options::default());
    assert_eq!(ex.envelopes.len(), 10_000);
    assert_eq!(
        ex.envelopes[0].envelope.body.as_deref(),
        Some("not indented\nmore")
    );
}

#[test]
fn many_unexpected_lines_before_a_terminator() {
    let mut text = String::from("[[A→B v1]]\nuser: u\n");
    text.push_str(&"stray prose line\n".repeat(50_000));
    text.push_str("body: |\n  hi\nsig: none\n[[END]]\n");
    let ex = extract(
        &text,
        &Options {
            size_limit: usize::MAX,
            ..Options::default()
        },
    );
    assert_eq!(ex.envelopes.len(), 1);
    let unexpected = codes(&ex.envelopes[0])
        .iter()
        .filter(|c| **c == Code::UnexpectedLine)
        .count();
    assert_eq!(unexpected, 50_000);
}

#[test]
fn binary_garbage() {
    let bytes: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let (text, diag) = crosstalk::protocol::decode(&bytes);
    assert!(diag.is_some());
    let ex = extract(&text, &Options::default());
    assert!(ex.envelopes.is_empty());
    assert_eq!(
        ex.diagnostics.last().map(|d| d.code),
        Some(Code::NoEnvelope)
    );
}
