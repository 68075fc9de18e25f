//! Extraction from realistic pastes: each test loads one file of `tests/fixtures/paste/` (text
//! as a chat window, an e-mail client or an operator hands it over) and checks everything
//! `extract` reports about it: envelopes, spans, content and diagnostics.

use crosstalk::protocol::{Code, Extraction, Intent, Options, Parsed, Pos, Severity, extract};

/// The text of a fixture, compiled into the test binary so the tests run on any checkout.
macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!("../../fixtures/paste/", $name))
    };
}

/// Extracts with default options.
fn parse(text: &str) -> Extraction {
    parse_with(text, &Options::default())
}

/// Extracts, and checks that nothing was reported outside the envelopes (every fixture
/// holds only prose and envelopes).
fn parse_with(text: &str, opts: &Options) -> Extraction {
    let ex = extract(text, opts);
    assert!(
        ex.diagnostics.is_empty(),
        "diagnostics outside envelopes: {:#?}",
        ex.diagnostics
    );
    ex
}

/// Everything expected of one envelope.
struct Want<'a> {
    /// First and last line, 1-based and inclusive.
    span: (u32, u32),
    /// From, to, version.
    banner: (&'a str, &'a str, &'a str),
    /// Every header in the order written.
    headers: &'a [(&'a str, &'a str)],
    /// Every META block with its entries, in the order written.
    meta: &'a [(&'a str, &'a [(&'a str, &'a str)])],
    body: Option<&'a str>,
    sig: Option<&'a str>,
    /// Every diagnostic as (code, line); compared in line order, whatever their order
    /// within one line.
    diags: &'a [(Code, u32)],
}

fn check(p: &Parsed, want: &Want<'_>) {
    let at = format!("envelope at line {}", p.span.start_line);
    let env = &p.envelope;
    assert_eq!(
        (p.span.start_line, p.span.end_line),
        want.span,
        "{at}: span"
    );
    let b = &env.banner;
    assert_eq!(
        (b.from.as_str(), b.to.as_str(), b.version.as_str()),
        want.banner,
        "{at}: banner"
    );
    let headers: Vec<(&str, &str)> = env
        .headers
        .iter()
        .map(|h| (h.key.as_str(), h.value.as_str()))
        .collect();
    assert_eq!(headers, want.headers, "{at}: headers");
    let meta: Vec<(&str, Vec<(&str, &str)>)> = env
        .meta
        .iter()
        .map(|m| {
            let entries = m
                .entries
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            (m.namespace.as_str(), entries)
        })
        .collect();
    let want_meta: Vec<(&str, Vec<(&str, &str)>)> = want
        .meta
        .iter()
        .map(|(ns, entries)| (*ns, entries.to_vec()))
        .collect();
    assert_eq!(meta, want_meta, "{at}: META blocks");
    assert_eq!(env.body.as_deref(), want.body, "{at}: body");
    assert_eq!(env.sig.as_deref(), want.sig, "{at}: sig");
    let by_line = |v: &mut Vec<(Code, u32)>| v.sort_by_key(|(c, l)| (*l, c.as_str()));
    let mut diags: Vec<(Code, u32)> = p.diagnostics.iter().map(|d| (d.code, d.line)).collect();
    let mut want_diags = want.diags.to_vec();
    by_line(&mut diags);
    by_line(&mut want_diags);
    assert_eq!(diags, want_diags, "{at}: diagnostics {:#?}", p.diagnostics);
    assert!(
        p.diagnostics
            .windows(2)
            .all(|w| (w[0].line, w[0].column) <= (w[1].line, w[1].column)),
        "{at}: diagnostics in position order: {:#?}",
        p.diagnostics
    );
    for d in &p.diagnostics {
        assert_eq!(
            d.severity,
            d.code.severity(),
            "{at}: severity of {}",
            d.code
        );
    }
}

/// The column of the one diagnostic with `code` on `line`.
fn column_of(p: &Parsed, code: Code, line: u32) -> u32 {
    let found: Vec<_> = p
        .diagnostics
        .iter()
        .filter(|d| d.code == code && d.line == line)
        .collect();
    assert_eq!(found.len(), 1, "one {code} on line {line}: {found:#?}");
    found[0].column
}

/// The headers most fixtures share.
const KALLE: [(&str, &str); 2] = [("user", "kalle"), ("session", "2025-10-09T16Z abc123")];
const BROTHER: [(&str, &str); 2] = [("user", "brother"), ("session", "2025-10-09T16Z abc123")];

/// `KALLE` or `BROTHER` followed by `context` and `intent`.
fn v10(
    who: [(&'static str, &'static str); 2],
    context: &'static str,
    intent: &'static str,
) -> Vec<(&'static str, &'static str)> {
    let mut h = who.to_vec();
    h.push(("context", context));
    h.push(("intent", intent));
    h
}

// 1. Code fences, with and without a language tag.
#[test]
fn fences_with_and_without_language_tag() {
    let ex = parse(fixture!("fences.txt"));
    assert_eq!(ex.envelopes.len(), 2);
    check(
        &ex.envelopes[0],
        &Want {
            span: (4, 13),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "protocol-review", "REQUEST"),
            meta: &[],
            body: Some("Please review section 3 of the draft.\nFocus on the META grammar."),
            sig: Some("none"),
            diags: &[],
        },
    );
    check(
        &ex.envelopes[1],
        &Want {
            span: (19, 27),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "protocol-review", "BROADCAST"),
            meta: &[],
            body: Some("Draft v2 is in the shared folder."),
            sig: Some("none"),
            diags: &[],
        },
    );
    assert!(ex.envelopes.iter().all(|p| p.terminated && !p.collapsed));
}

// 2. A language label and a "Copy code" line, copied from a rendered page.
#[test]
fn copy_code_label_lines_before_banner() {
    let ex = parse(fixture!("copy_code_label.txt"));
    assert_eq!(ex.envelopes.len(), 2);
    check(
        &ex.envelopes[0],
        &Want {
            span: (7, 17),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &v10(BROTHER, "protocol-review", "RESPOND"),
            meta: &[],
            body: Some(
                "Section 3 reads well. Two nits:\n\
                 - say whether META keys are case-sensitive\n\
                 - give an example of a custom namespace",
            ),
            sig: Some("none"),
            diags: &[],
        },
    );
    check(
        &ex.envelopes[1],
        &Want {
            span: (23, 31),
            banner: ("CHATGPT", "human://relay", "v1"),
            headers: &v10(BROTHER, "protocol-review", "ACK"),
            meta: &[],
            body: Some("Forwarded."),
            sig: Some("none"),
            diags: &[],
        },
    );
}

// 3. Prose before, between and after several envelopes; banners mentioned inline in prose
// are not envelopes.
#[test]
fn prose_around_several_envelopes() {
    let ex = parse(fixture!("prose_between.txt"));
    assert_eq!(ex.envelopes.len(), 3);
    check(
        &ex.envelopes[0],
        &Want {
            span: (5, 13),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "naming", "REQUEST"),
            meta: &[],
            body: Some("Should the tool be called crosstalk or xtalk?"),
            sig: Some("none"),
            diags: &[],
        },
    );
    check(
        &ex.envelopes[1],
        &Want {
            span: (15, 23),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &v10(BROTHER, "naming", "RESPOND"),
            meta: &[],
            body: Some("crosstalk. Nobody can pronounce xtalk."),
            sig: Some("none"),
            diags: &[],
        },
    );
    check(
        &ex.envelopes[2],
        &Want {
            span: (27, 35),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "naming", "CLOSE"),
            meta: &[],
            body: Some("Agreed, crosstalk it is."),
            sig: Some("none"),
            diags: &[],
        },
    );
}

// 4. An e-mail reply: `> ` on every line, `>` alone on blank quoted lines, and a nested
// `> > ` quote.
#[test]
fn quote_prefixes_single_and_nested() {
    let ex = parse(fixture!("quoted.txt"));
    assert_eq!(ex.envelopes.len(), 2);
    let outer = &ex.envelopes[0];
    check(
        outer,
        &Want {
            span: (4, 20),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &[
                ("user", "kalle"),
                ("session", "2025-10-09T16Z abc123"),
                ("thread", "01J9J3D3M6A4M3WQX8G1ZQ0S7K"),
                ("message", "01J9J3DBC4N7P2Q3R5S7T9V1W2"),
                ("context", "protocol-review"),
                ("intent", "REQUEST"),
            ],
            meta: &[("routing", &[("X-Reply-To", "claude://session/abc123")])],
            body: Some(
                "First paragraph of the request.\n\nSecond paragraph, after a blank quoted line.",
            ),
            sig: Some("none"),
            diags: &[],
        },
    );
    assert_eq!(outer.prefix, "> ");
    // Columns count the quote prefix.
    assert_eq!(outer.positions.banner, Pos { line: 4, column: 3 });
    assert_eq!(
        outer.positions.body,
        Some(Pos {
            line: 15,
            column: 3
        })
    );
    assert_eq!(
        outer.positions.headers[2],
        Pos {
            line: 7,
            column: 11
        }
    );

    let inner = &ex.envelopes[1];
    check(
        inner,
        &Want {
            span: (23, 33),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &[
                ("user", "brother"),
                ("session", "2025-10-09T15Z 04f07f"),
                ("context", "protocol-review"),
                ("intent", "ACK"),
            ],
            meta: &[],
            body: Some("Received, reading now.\n\nWill reply by five."),
            sig: Some("none"),
            diags: &[],
        },
    );
    assert_eq!(inner.prefix, "> > ");
    assert_eq!(
        inner.positions.sig,
        Some(Pos {
            line: 32,
            column: 5
        })
    );
}

// 5. CRLF line endings; the `hash:` was computed over the LF form.
#[test]
fn crlf_line_endings() {
    let text = fixture!("crlf.txt");
    assert!(
        text.contains("\r\n"),
        "the fixture must keep its CRLF line endings"
    );
    let ex = parse(text);
    assert_eq!(ex.envelopes.len(), 1);
    let p = &ex.envelopes[0];
    check(
        p,
        &Want {
            span: (3, 14),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "windows-relay", "REQUEST"),
            meta: &[],
            body: Some("Pasted from Notepad on Windows.\n\nLine endings are CRLF."),
            sig: Some("none"),
            diags: &[],
        },
    );
    assert_eq!(p.envelope.hash.as_deref(), Some("30fee78b"));
    assert!(!p.received_text(text).contains('\r'));
}

// 6. A leading byte-order mark, as some editors write at the start of a file. It is the
// file's encoding signature, not a paste artifact, so it is dropped silently.
#[test]
fn leading_byte_order_mark() {
    let text = fixture!("bom.txt");
    assert!(text.starts_with('\u{FEFF}'));
    let ex = parse(text);
    assert_eq!(ex.envelopes.len(), 1);
    check(
        &ex.envelopes[0],
        &Want {
            span: (1, 9),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &v10(BROTHER, "file-transport", "BROADCAST"),
            meta: &[],
            body: Some("Saved as reply.crosstalk by an editor that writes a byte-order mark."),
            sig: Some("none"),
            diags: &[],
        },
    );
}

// 7. Body lines indented with non-breaking spaces (U+00A0, alone or mixed with spaces) and
// with tabs. Only the indentation is removed; the rest of a body line is kept as written.
#[test]
fn nbsp_and_tab_indentation() {
    let ex = parse(fixture!("nbsp_tab_indent.txt"));
    assert_eq!(ex.envelopes.len(), 2);
    check(
        &ex.envelopes[0],
        &Want {
            span: (3, 14),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &v10(BROTHER, "layout", "RESPOND"),
            meta: &[],
            body: Some(
                "Indented with two non-breaking spaces.\n\
                 Mixed: a non-breaking space, then a plain one.\n\
                 \u{A0}\u{A0}Nested two deeper.\n\
                 Distance: 10\u{A0}km.",
            ),
            sig: Some("none"),
            diags: &[],
        },
    );
    check(
        &ex.envelopes[1],
        &Want {
            span: (18, 28),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "layout", "REQUEST"),
            meta: &[],
            body: Some("Tab-indented line.\n\tDeeper by one tab.\nBack to one tab."),
            sig: Some("none"),
            diags: &[],
        },
    );
}

// 8. Zero-width spaces in the banner and in header lines are removed with a warning; in the
// body they are part of the message.
#[test]
fn zero_width_characters() {
    let ex = parse(fixture!("zero_width.txt"));
    assert_eq!(ex.envelopes.len(), 2);
    let first = &ex.envelopes[0];
    check(
        first,
        &Want {
            span: (3, 11),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "protocol-review", "REQUEST"),
            meta: &[],
            body: Some("The zero\u{200B}width space in this body line is part of the message."),
            sig: Some("none"),
            diags: &[
                (Code::InvisibleChars, 3),
                (Code::InvisibleChars, 5),
                (Code::InvisibleChars, 6),
                (Code::InvisibleChars, 7),
            ],
        },
    );
    assert!(
        first
            .diagnostics
            .iter()
            .all(|d| d.severity == Severity::Warning)
    );
    assert_eq!(column_of(first, Code::InvisibleChars, 3), 1);
    // The session value starts after the zero-width space and `session: `.
    assert_eq!(
        first.positions.headers[1],
        Pos {
            line: 5,
            column: 11
        }
    );

    let second = &ex.envelopes[1];
    check(
        second,
        &Want {
            span: (13, 21),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &v10(BROTHER, "protocol-review", "ACK"),
            meta: &[],
            body: Some("Got it."),
            sig: Some("none"),
            diags: &[(Code::InvisibleChars, 13)],
        },
    );
    // The zero-width space before the banner counts as a column: `[[` is in column 2.
    assert_eq!(column_of(second, Code::InvisibleChars, 13), 2);
    assert_eq!(
        second.positions.banner,
        Pos {
            line: 13,
            column: 2
        }
    );
}

// 8. A zero-width space between the two `[` of the banner is removed like anywhere else in
// the banner: the envelope is still found.
#[test]
fn zero_width_inside_banner_brackets() {
    let ex = parse(fixture!("zero_width_split_banner.txt"));
    assert_eq!(ex.envelopes.len(), 1);
    check(
        &ex.envelopes[0],
        &Want {
            span: (3, 11),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "wiki-paste", "REQUEST"),
            meta: &[],
            body: Some("Found this in the wiki, please confirm it is still current."),
            sig: Some("none"),
            diags: &[(Code::InvisibleChars, 3)],
        },
    );
}

// 8 and 14. Zero-width spaces removed from an envelope collapsed onto one line are reported
// as in a multi-line one.
#[test]
fn zero_width_in_collapsed_envelope() {
    let ex = parse(fixture!("zero_width_collapsed.txt"));
    assert_eq!(ex.envelopes.len(), 1);
    check(
        &ex.envelopes[0],
        &Want {
            span: (3, 3),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "protocol-review", "REQUEST"),
            meta: &[],
            body: Some("Please review section 3."),
            sig: Some("none"),
            diags: &[(Code::CollapsedNewlines, 3), (Code::InvisibleChars, 3)],
        },
    );
}

// 9. Banner spellings: ASCII and Unicode arrows, spaces inside the brackets, addresses on
// either side, versions v1 and v1.1.
#[test]
fn banner_arrows_spaces_addresses_versions() {
    let ex = parse(fixture!("banners.txt"));
    let banners: Vec<(u32, u32, &str, &str, &str)> = ex
        .envelopes
        .iter()
        .map(|p| {
            let b = &p.envelope.banner;
            (
                p.span.start_line,
                p.span.end_line,
                b.from.as_str(),
                b.to.as_str(),
                b.version.as_str(),
            )
        })
        .collect();
    assert_eq!(
        banners,
        [
            (4, 12, "CLAUDE", "CHATGPT", "v1"),
            (15, 23, "CLAUDE", "CHATGPT", "v1"),
            (
                26,
                34,
                "claude://session/abc",
                "chatgpt://thread/xyz",
                "v1.1"
            ),
            (37, 45, "human://a@b.example", "POLL", "v1"),
            (
                48,
                56,
                "supportbot@acme.com",
                "human://support.acme.com/queue/billing",
                "v1"
            ),
        ]
    );
    check(
        &ex.envelopes[3],
        &Want {
            span: (37, 45),
            banner: ("human://a@b.example", "POLL", "v1"),
            headers: &[
                ("user", "alice"),
                ("session", "2025-10-09T17Z 9be210"),
                ("context", "architecture-vote"),
                ("intent", "POLL"),
            ],
            meta: &[],
            body: Some("MICROSERVICES | MONOLITH | ABSTAIN"),
            sig: Some("none"),
            diags: &[],
        },
    );
    check(
        &ex.envelopes[4],
        &Want {
            span: (48, 56),
            banner: (
                "supportbot@acme.com",
                "human://support.acme.com/queue/billing",
                "v1",
            ),
            headers: &[
                ("user", "supportbot"),
                ("session", "2025-10-09T18Z 5d2c01"),
                ("context", "refund"),
                ("intent", "HANDOFF"),
            ],
            meta: &[],
            body: Some("Customer asks for a refund of invoice 2291."),
            sig: Some("none"),
            diags: &[],
        },
    );
    let bodies: Vec<_> = ex
        .envelopes
        .iter()
        .take(3)
        .map(|p| p.envelope.body.as_deref())
        .collect();
    assert_eq!(
        bodies,
        [
            Some("Typed with an ASCII arrow."),
            Some("Spaced out."),
            Some("Addressed.")
        ]
    );
    for p in &ex.envelopes {
        assert!(p.diagnostics.is_empty(), "{:#?}", p.diagnostics);
    }
}

// 10. Block body up to the first less-indented line, single-line body, empty body, and the
// v1.0 `response: |` reply.
#[test]
fn body_forms_and_v10_response_reply() {
    let ex = parse(fixture!("bodies.txt"));
    assert_eq!(ex.envelopes.len(), 4);
    check(
        &ex.envelopes[0],
        &Want {
            span: (3, 16),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "bodies", "REQUEST"),
            meta: &[],
            body: Some(
                "A block body keeps its blank lines\n\
                 \n\
                 and relative indentation:\n  \
                 - nested item\n\
                 and ends at the first less-indented line.",
            ),
            sig: Some("none"),
            diags: &[],
        },
    );
    check(
        &ex.envelopes[1],
        &Want {
            span: (18, 25),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &v10(BROTHER, "bodies", "ACK"),
            meta: &[],
            body: Some("Single-line body, no block indicator."),
            sig: Some("none"),
            diags: &[],
        },
    );
    check(
        &ex.envelopes[2],
        &Want {
            span: (27, 34),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "bodies", "CLOSE"),
            meta: &[],
            body: Some(""),
            sig: Some("none"),
            diags: &[],
        },
    );
    let reply = &ex.envelopes[3];
    check(
        reply,
        &Want {
            span: (38, 42),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &[("session", "2025-10-09T16Z abc123")],
            meta: &[],
            body: Some("Yes, ship it."),
            sig: None,
            diags: &[],
        },
    );
    assert!(reply.reply_form);
    assert_eq!(reply.envelope.intent_raw(), None);
    assert_eq!(reply.intent(), Some(Intent::Respond));
    assert!(ex.envelopes[..3].iter().all(|p| !p.reply_form));
}

// 11. Inside an indented body, lines that look like a banner, `sig:` or `[[END]]` are text.
#[test]
fn lookalikes_inside_body_stay_body() {
    let ex = parse(fixture!("body_lookalikes.txt"));
    assert_eq!(ex.envelopes.len(), 1);
    check(
        &ex.envelopes[0],
        &Want {
            span: (3, 21),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "docs-example", "REQUEST"),
            meta: &[],
            body: Some(
                "Does this example render correctly in your window?\n\
                 \n\
                 [[ALICE→BOB v1]]\n\
                 user: alice\n\
                 meta: routing\n\
                 body: |\n  \
                 hi\n\
                 sig: none\n\
                 [[END]]\n\
                 \n\
                 The lines above are part of my message.",
            ),
            sig: Some("none"),
            diags: &[],
        },
    );
}

// 12. No `[[END]]`: the envelope ends at the next banner, at prose that cannot belong to
// it, or at the end of the input, with a `missing-end` warning on its last line.
#[test]
fn missing_end_marker() {
    let ex = parse(fixture!("missing_end.txt"));
    assert_eq!(ex.envelopes.len(), 4);
    check(
        &ex.envelopes[0],
        &Want {
            span: (3, 10),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "truncation", "REQUEST"),
            meta: &[],
            body: Some("Part one of the question."),
            sig: Some("none"),
            diags: &[(Code::MissingEnd, 10)],
        },
    );
    check(
        &ex.envelopes[1],
        &Want {
            span: (12, 20),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &v10(BROTHER, "truncation", "ACK"),
            meta: &[],
            body: Some("Got part one."),
            sig: Some("none"),
            diags: &[],
        },
    );
    check(
        &ex.envelopes[2],
        &Want {
            span: (24, 30),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &v10(BROTHER, "truncation", "ACK"),
            meta: &[],
            body: Some("Got part two."),
            sig: None,
            diags: &[(Code::MissingSig, 24), (Code::MissingEnd, 30)],
        },
    );
    check(
        &ex.envelopes[3],
        &Want {
            span: (36, 42),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "truncation", "REQUEST"),
            meta: &[],
            body: Some("Part three, the paste ended here."),
            sig: None,
            diags: &[(Code::MissingSig, 36), (Code::MissingEnd, 42)],
        },
    );
    let terminated: Vec<bool> = ex.envelopes.iter().map(|p| p.terminated).collect();
    assert_eq!(terminated, [false, true, false, false]);
}

// 13. A body whose indentation a chat window stripped, entirely or on some lines.
#[test]
fn body_indentation_stripped_and_partial() {
    let ex = parse(fixture!("indent_stripped.txt"));
    assert_eq!(ex.envelopes.len(), 2);
    let stripped = &ex.envelopes[0];
    check(
        stripped,
        &Want {
            span: (3, 14),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &v10(BROTHER, "release-plan", "RESPOND"),
            meta: &[],
            body: Some("Hi Claude,\nDeadline: Friday, per the thread.\n\nThanks."),
            sig: Some("none"),
            diags: &[(Code::BodyIndentStripped, 9)],
        },
    );
    assert_eq!(column_of(stripped, Code::BodyIndentStripped, 9), 1);
    let partial = &ex.envelopes[1];
    check(
        partial,
        &Want {
            span: (16, 27),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "release-plan", "REQUEST"),
            meta: &[],
            body: Some(
                "Two things to settle:\n- the banner arrow\n- the META grammar\nThat is all for today.",
            ),
            sig: Some("none"),
            diags: &[(Code::BodyIndentPartial, 23)],
        },
    );
}

// 14. Envelopes collapsed onto one line: the field notes' example (a session value with a
// space), and two envelopes on one line after some prose.
#[test]
fn collapsed_onto_one_line() {
    let text = fixture!("collapsed.txt");
    let ex = parse(text);
    assert_eq!(ex.envelopes.len(), 3);
    let notes = &ex.envelopes[0];
    check(
        notes,
        &Want {
            span: (3, 3),
            banner: ("A", "B", "v1"),
            headers: &[
                ("user", "x"),
                ("session", "2025-10-09T15Z 04f07f"),
                ("context", "y"),
                ("intent", "QUESTION"),
            ],
            meta: &[],
            body: Some("text"),
            sig: Some("none"),
            diags: &[(Code::CollapsedNewlines, 3), (Code::LegacyIntent, 3)],
        },
    );
    assert!(notes.collapsed && notes.terminated);
    assert_eq!(column_of(notes, Code::CollapsedNewlines, 3), 1);
    // Points at `QUESTION`.
    assert_eq!(column_of(notes, Code::LegacyIntent, 3), 70);
    assert_eq!(notes.intent(), Some(Intent::Request));

    let first = &ex.envelopes[1];
    check(
        first,
        &Want {
            span: (5, 5),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "review", "REQUEST"),
            meta: &[],
            body: Some("Please look at section 3."),
            sig: Some("none"),
            diags: &[(Code::CollapsedNewlines, 5)],
        },
    );
    // After `Sure! `.
    assert_eq!(column_of(first, Code::CollapsedNewlines, 5), 7);
    let second = &ex.envelopes[2];
    check(
        second,
        &Want {
            span: (5, 5),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &v10(BROTHER, "review", "ACK"),
            meta: &[],
            body: Some("On it."),
            sig: Some("none"),
            diags: &[(Code::CollapsedNewlines, 5)],
        },
    );
    assert_eq!(column_of(second, Code::CollapsedNewlines, 5), 156);
    assert!(ex.envelopes.iter().all(|p| p.collapsed && p.terminated));
    // Each occupies exactly its own `[[` … `[[END]]`.
    for p in &ex.envelopes {
        let bytes = &text[p.byte_range.clone()];
        assert!(
            bytes.starts_with("[[") && bytes.ends_with("[[END]]"),
            "{bytes}"
        );
    }
}

// 15. META blocks: separated by blank lines, back to back before `body:`, duplicate keys,
// an unknown namespace, unknown headers, and the older `meta: |` layout.
#[test]
fn meta_blocks_layouts_and_unknowns() {
    let ex = parse(fixture!("meta_blocks.txt"));
    assert_eq!(ex.envelopes.len(), 3);
    check(
        &ex.envelopes[0],
        &Want {
            span: (3, 31),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &[
                ("user", "kalle"),
                ("session", "2025-10-09T16Z abc123"),
                ("thread", "01J9J3D3M6A4M3WQX8G1ZQ0S7K"),
                ("message", "01J9J3DBC4N7P2Q3R5S7T9V1W2"),
                ("context", "protocol-review"),
                ("model", "claude-opus"),
                ("intent", "REQUEST"),
                ("X-Trace-Id", "7f3a-22"),
            ],
            meta: &[
                (
                    "routing",
                    &[
                        (
                            "X-Route",
                            "claude://session/abc → human://relay → chatgpt://thread/xyz",
                        ),
                        ("X-Reply-To", "claude://session/abc"),
                        ("X-Priority", "high"),
                    ],
                ),
                (
                    "audit",
                    &[
                        ("Received-By", "human://relay"),
                        ("Received-At", "2025-10-09T16:01Z"),
                        ("Received-By", "chatgpt://thread/xyz"),
                        ("Received-At", "2025-10-09T16:02Z"),
                    ],
                ),
                (
                    "custom-acme",
                    &[
                        ("Ticket", "ACME-1234"),
                        ("x-lowercase-key", "kept as written"),
                    ],
                ),
            ],
            body: Some("Please review the META section."),
            sig: Some("none"),
            diags: &[],
        },
    );
    check(
        &ex.envelopes[1],
        &Want {
            span: (33, 49),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "deploy", "REQUEST"),
            meta: &[
                ("action", &[("Type", "deploy"), ("Target", "staging")]),
                ("routing", &[("X-Priority", "normal")]),
                ("privacy", &[("PII", "none"), ("Scope", "general")]),
            ],
            body: Some("Deploy build 412 to staging."),
            sig: Some("none"),
            diags: &[],
        },
    );
    let legacy = &ex.envelopes[2];
    check(
        legacy,
        &Want {
            span: (51, 62),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &v10(BROTHER, "design-notes", "BROADCAST"),
            meta: &[("legacy", &[("priority", "low"), ("tags", "design, v1.1")])],
            body: Some("Notes from the older META proposal."),
            sig: Some("none"),
            diags: &[(Code::LegacyMeta, 56)],
        },
    );
    assert_eq!(column_of(legacy, Code::LegacyMeta, 56), 1);
}

// 15. META keys are case-sensitive: `User:` and `Context:` inside a META block are entries
// of that block, not the `user` and `context` headers.
#[test]
fn meta_keys_named_like_headers_stay_in_block() {
    let ex = parse(fixture!("meta_key_names.txt"));
    assert_eq!(ex.envelopes.len(), 1);
    check(
        &ex.envelopes[0],
        &Want {
            span: (3, 17),
            banner: (
                "supportbot@acme.com",
                "human://support.acme.com/queue/billing",
                "v1",
            ),
            headers: &[
                ("user", "supportbot"),
                ("session", "2025-10-09T18Z 5d2c01"),
                ("context", "refund"),
                ("intent", "HANDOFF"),
            ],
            meta: &[(
                "custom-acme-crm",
                &[
                    ("User", "cust-88412"),
                    ("Context", "invoice 2291, charged twice"),
                    ("Ticket", "ACME-1234"),
                ],
            )],
            body: Some("Customer asks for a refund of invoice 2291."),
            sig: Some("none"),
            diags: &[],
        },
    );
}

// 16. Ids that are neither ULID nor UUIDv7, including the specification's own examples.
#[test]
fn bad_ids() {
    let ex = parse(fixture!("bad_ids.txt"));
    assert_eq!(ex.envelopes.len(), 2);
    let spec = &ex.envelopes[0];
    check(
        spec,
        &Want {
            span: (3, 25),
            banner: ("SENDER", "RECEIVER", "v1"),
            headers: &[
                ("user", "username"),
                ("session", "2025-10-09T16Z abc123"),
                ("thread", "01J9J3D3M6A4M3WQX8G1ZQ0S7K"),
                ("parent", "01J9J3D9C2V8M4..."),
                ("message", "01J9J3DBC4N7P2..."),
                ("context", "topic"),
                ("intent", "REQUEST"),
            ],
            meta: &[
                (
                    "routing",
                    &[
                        ("X-Route", "claude://session/abc → chatgpt://thread/xyz"),
                        ("X-Reply-To", "claude://session/abc"),
                        ("X-Priority", "high"),
                    ],
                ),
                (
                    "privacy",
                    &[
                        ("PII", "redacted"),
                        ("Consent", "explicit_yes_2025-10-09T16:00Z"),
                        ("Scope", "general"),
                    ],
                ),
            ],
            body: Some("Message content"),
            sig: Some("none"),
            diags: &[(Code::BadId, 7), (Code::BadId, 8)],
        },
    );
    // The columns point at the values.
    assert_eq!(column_of(spec, Code::BadId, 7), 9);
    assert_eq!(column_of(spec, Code::BadId, 8), 10);

    let examples = &ex.envelopes[1];
    check(
        examples,
        &Want {
            span: (29, 40),
            banner: ("CHATGPT", "CLAUDE", "v1.1"),
            headers: &[
                ("user", "brother"),
                ("session", "2025-10-09T16Z abc123"),
                ("thread", "550e8400-e29b-41d4-a716-446655440000"),
                ("parent", "01J9J3D9C2V8M4P1R6S8T9U0V1"),
                ("message", "018c8e5a-3b2f-7890-abcd-ef1234567890"),
                ("context", "topic"),
                ("intent", "RESPOND"),
            ],
            meta: &[],
            body: Some("Replying with the example IDs."),
            sig: Some("none"),
            diags: &[(Code::BadId, 32), (Code::BadId, 33)],
        },
    );
    assert_eq!(column_of(examples, Code::BadId, 32), 9);
    assert_eq!(column_of(examples, Code::BadId, 33), 9);
    let parent = examples
        .diagnostics
        .iter()
        .find(|d| d.line == 33)
        .map(|d| &*d.message);
    assert!(
        parent.is_some_and(|m| m.contains('U')),
        "the message names the offending character: {parent:?}"
    );
    assert!(examples.has_errors());
}

// 16. Intent ERROR without `meta: error` `Code`, with a code outside the taxonomy, and the
// spec's error envelope done right.
#[test]
fn error_intent_codes() {
    let ex = parse(fixture!("error_intent.txt"));
    assert_eq!(ex.envelopes.len(), 3);
    let missing = &ex.envelopes[0];
    check(
        missing,
        &Want {
            span: (3, 11),
            banner: ("SYSTEM", "CLAUDE", "v1"),
            headers: &[
                ("user", "system"),
                ("session", "2025-10-09T16Z abc123"),
                ("context", "protocol-review"),
                ("intent", "ERROR"),
            ],
            meta: &[],
            body: Some("Something went wrong, but no code was given."),
            sig: Some("none"),
            diags: &[(Code::ErrorCodeMissing, 7)],
        },
    );
    assert_eq!(column_of(missing, Code::ErrorCodeMissing, 7), 9);
    let unknown = &ex.envelopes[1];
    check(
        unknown,
        &Want {
            span: (13, 26),
            banner: ("SYSTEM", "CLAUDE", "v1"),
            headers: &[
                ("user", "system"),
                ("session", "2025-10-09T16Z abc123"),
                ("context", "protocol-review"),
                ("intent", "ERROR"),
            ],
            meta: &[(
                "error",
                &[("Code", "E-NOTFOUND"), ("Reason", "Thread not found")],
            )],
            body: Some("The thread does not exist."),
            sig: Some("none"),
            diags: &[(Code::ErrorCodeUnknown, 20)],
        },
    );
    assert_eq!(column_of(unknown, Code::ErrorCodeUnknown, 20), 7);
    check(
        &ex.envelopes[2],
        &Want {
            span: (28, 46),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &[
                ("user", "system"),
                ("session", "2025-10-09T16Z abc123"),
                ("thread", "01J9J3D3M6A4M3WQX8G1ZQ0S7K"),
                ("parent", "01J9J3DBC4N7P2Q3R5S7T9V1W2"),
                ("message", "01J9J3DF0A1B2C3D4E5F6G7H8J"),
                ("context", "protocol-review"),
                ("intent", "ERROR"),
            ],
            meta: &[(
                "error",
                &[
                    ("Code", "E-ROUTE"),
                    ("Reason", "Destination unreachable"),
                    ("Original-Intent", "REQUEST"),
                ],
            )],
            body: Some(
                "Could not deliver message to chatgpt://thread/xyz789.\n\
                 Recipient may be offline or address invalid.",
            ),
            sig: Some("none"),
            diags: &[],
        },
    );
    assert_eq!(ex.envelopes[2].intent(), Some(Intent::Error));
}

// 16. Malformed banner names and addresses, `X-Route` and `X-Reply-To`.
#[test]
fn bad_addresses_routes_and_reply_to() {
    let ex = parse(fixture!("bad_addresses.txt"));
    assert_eq!(ex.envelopes.len(), 4);
    let spaced = &ex.envelopes[0];
    check(
        spaced,
        &Want {
            span: (3, 11),
            banner: ("Claude Code", "CHATGPT", "v1"),
            headers: &v10(KALLE, "addressing", "REQUEST"),
            meta: &[],
            body: Some("The sender name has a space."),
            sig: Some("none"),
            diags: &[(Code::BadAddress, 3)],
        },
    );
    assert_eq!(column_of(spaced, Code::BadAddress, 3), 1);
    check(
        &ex.envelopes[1],
        &Want {
            span: (13, 21),
            banner: ("claude:/session/abc", "CHATGPT", "v1"),
            headers: &v10(KALLE, "addressing", "REQUEST"),
            meta: &[],
            body: Some("The sender address lost a slash."),
            sig: Some("none"),
            diags: &[(Code::BadAddress, 13)],
        },
    );
    let routing = &ex.envelopes[2];
    check(
        routing,
        &Want {
            span: (23, 37),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "addressing", "REQUEST"),
            meta: &[(
                "routing",
                &[
                    ("X-Route", "claude://session/abc, chatgpt://thread/xyz"),
                    ("X-Reply-To", "the claude session"),
                    ("X-Delivery", "copy_paste"),
                ],
            )],
            body: Some("Route written with a comma, reply-to written in prose."),
            sig: Some("none"),
            diags: &[(Code::BadRoute, 30), (Code::BadReplyTo, 31)],
        },
    );
    assert_eq!(column_of(routing, Code::BadRoute, 30), 10);
    assert_eq!(column_of(routing, Code::BadReplyTo, 31), 13);
    check(
        &ex.envelopes[3],
        &Want {
            span: (39, 52),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "addressing", "REQUEST"),
            meta: &[(
                "routing",
                &[
                    ("X-Route", "claude://abc -> human://relay → chatgpt://xyz"),
                    ("X-Reply-To", "email:kalle@example.com"),
                ],
            )],
            body: Some("This one is fine."),
            sig: Some("none"),
            diags: &[],
        },
    );
}

fn small_limit() -> Options {
    Options {
        size_limit: 200,
        ..Default::default()
    }
}

// 16. An envelope over the size limit (E-TOO-LARGE), next to one under it.
#[test]
fn too_large() {
    let text = fixture!("too_large.txt");
    let ex = parse_with(text, &small_limit());
    assert_eq!(ex.envelopes.len(), 2);
    let big = &ex.envelopes[0];
    assert!(big.byte_range.len() > 200);
    check(
        big,
        &Want {
            span: (3, 12),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "size-limit", "REQUEST"),
            meta: &[],
            body: Some(
                "This body is long enough to push the whole envelope past the\n\
                 two hundred byte limit that the relay was configured with today.",
            ),
            sig: Some("none"),
            diags: &[(Code::TooLarge, 3)],
        },
    );
    assert_eq!(column_of(big, Code::TooLarge, 3), 1);
    let small = &ex.envelopes[1];
    assert!(small.byte_range.len() <= 200);
    check(
        small,
        &Want {
            span: (14, 20),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &[("user", "brother"), ("intent", "ACK")],
            meta: &[],
            body: Some("Short."),
            sig: Some("none"),
            diags: &[(Code::MissingSession, 14)],
        },
    );
    // The default limit (1 MiB) takes both.
    let ex = parse(text);
    assert!(!ex.envelopes.iter().any(|p| p.has_errors()));
    assert!(ex.envelopes[0].diagnostics.is_empty());
}

// 16. The size limit applies to an envelope that arrived collapsed onto one line as well.
#[test]
fn too_large_collapsed() {
    let ex = parse_with(fixture!("too_large_collapsed.txt"), &small_limit());
    assert_eq!(ex.envelopes.len(), 1);
    let p = &ex.envelopes[0];
    assert!(p.byte_range.len() > 200);
    check(
        p,
        &Want {
            span: (3, 3),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "size-limit", "REQUEST"),
            meta: &[],
            body: Some(
                "This body is long enough to push the whole envelope past the two hundred byte limit that the relay was configured with today.",
            ),
            sig: Some("none"),
            diags: &[(Code::CollapsedNewlines, 3), (Code::TooLarge, 3)],
        },
    );
}

// 17. Legacy intents are mapped (and kept as written); an unknown intent is kept as written.
#[test]
fn legacy_and_unknown_intents() {
    let ex = parse(fixture!("intents.txt"));
    let got: Vec<(u32, Option<&str>, Option<Intent>)> = ex
        .envelopes
        .iter()
        .map(|p| (p.span.start_line, p.envelope.intent_raw(), p.intent()))
        .collect();
    assert_eq!(
        got,
        [
            (3, Some("QUESTION"), Some(Intent::Request)),
            (13, Some("ANSWER"), Some(Intent::Respond)),
            (23, Some("STATUS"), Some(Intent::Broadcast)),
            (33, Some("PATCH"), Some(Intent::Request)),
            (43, Some("NOTE"), Some(Intent::Broadcast)),
            (53, Some("Vote"), Some(Intent::Unknown("VOTE".into()))),
        ]
    );
    let diags: Vec<Vec<(Code, u32, u32)>> = ex
        .envelopes
        .iter()
        .map(|p| {
            p.diagnostics
                .iter()
                .map(|d| (d.code, d.line, d.column))
                .collect()
        })
        .collect();
    assert_eq!(
        diags,
        [
            vec![(Code::LegacyIntent, 7, 9)],
            vec![(Code::LegacyIntent, 17, 9)],
            vec![(Code::LegacyIntent, 27, 9)],
            vec![(Code::LegacyIntent, 37, 9)],
            vec![(Code::LegacyIntent, 47, 9)],
            vec![(Code::UnknownIntent, 57, 9)],
        ]
    );
    check(
        &ex.envelopes[5],
        &Want {
            span: (53, 61),
            banner: ("human://alice@example.com", "POLL", "v1"),
            headers: &[
                ("user", "alice"),
                ("session", "2025-10-08T14:23Z a7f3d1"),
                ("context", "architecture"),
                ("intent", "Vote"),
            ],
            meta: &[],
            body: Some("MICROSERVICES | MONOLITH | ABSTAIN"),
            sig: Some("none"),
            diags: &[(Code::UnknownIntent, 57)],
        },
    );
    assert!(!ex.envelopes.iter().any(Parsed::has_errors));
}

// 17. A v1.1 RESPOND without `parent`, next to the corrected one.
#[test]
fn respond_without_parent() {
    let ex = parse(fixture!("respond_without_parent.txt"));
    assert_eq!(ex.envelopes.len(), 2);
    let orphan = &ex.envelopes[0];
    check(
        orphan,
        &Want {
            span: (3, 13),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &[
                ("user", "brother"),
                ("session", "2025-10-09T16Z abc123"),
                ("thread", "01J9J3D3M6A4M3WQX8G1ZQ0S7K"),
                ("message", "01J9J3DF0A1B2C3D4E5F6G7H8J"),
                ("context", "protocol-review"),
                ("intent", "RESPOND"),
            ],
            meta: &[],
            body: Some("Looks good to me."),
            sig: Some("none"),
            diags: &[(Code::RespondWithoutParent, 9)],
        },
    );
    assert_eq!(column_of(orphan, Code::RespondWithoutParent, 9), 9);
    check(
        &ex.envelopes[1],
        &Want {
            span: (17, 28),
            banner: ("CHATGPT", "CLAUDE", "v1"),
            headers: &[
                ("user", "brother"),
                ("session", "2025-10-09T16Z abc123"),
                ("thread", "01J9J3D3M6A4M3WQX8G1ZQ0S7K"),
                ("parent", "01J9J3DBC4N7P2Q3R5S7T9V1W2"),
                ("message", "01J9J3DF0A1B2C3D4E5F6G7H8K"),
                ("context", "protocol-review"),
                ("intent", "RESPOND"),
            ],
            meta: &[],
            body: Some("Looks good to me."),
            sig: Some("none"),
            diags: &[],
        },
    );
}

// 17. Unknown X-Priority and PII values, an Expires that is not ISO 8601, one in the past
// and one still ahead (judged against a fixed "now").
#[test]
fn meta_value_warnings_and_expiry() {
    let opts = Options {
        now: Some("2025-10-11T12:00:00Z".parse().expect("a timestamp")),
        ..Default::default()
    };
    let ex = parse_with(fixture!("meta_values.txt"), &opts);
    assert_eq!(ex.envelopes.len(), 3);
    let odd = &ex.envelopes[0];
    check(
        odd,
        &Want {
            span: (3, 20),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "triage", "REQUEST"),
            meta: &[
                ("routing", &[("X-Priority", "urgent")]),
                (
                    "privacy",
                    &[
                        ("PII", "partial"),
                        ("Consent", "explicit_yes_2025-10-09T16:00Z"),
                        ("Expires", "tomorrow 5pm"),
                    ],
                ),
            ],
            body: Some("Values outside the vocabulary."),
            sig: Some("none"),
            diags: &[
                (Code::UnknownPriority, 10),
                (Code::UnknownPii, 13),
                (Code::BadExpires, 15),
            ],
        },
    );
    assert_eq!(column_of(odd, Code::UnknownPriority, 10), 13);
    assert_eq!(column_of(odd, Code::UnknownPii, 13), 6);
    assert_eq!(column_of(odd, Code::BadExpires, 15), 10);
    assert!(!odd.has_errors());
    let lapsed = &ex.envelopes[1];
    check(
        lapsed,
        &Want {
            span: (22, 37),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &v10(KALLE, "triage", "REQUEST"),
            meta: &[(
                "privacy",
                &[
                    ("PII", "redacted"),
                    ("Scope", "medical"),
                    ("Expires", "2025-10-10T16:00Z"),
                    ("Jurisdiction", "HIPAA"),
                ],
            )],
            body: Some("Consent that lapsed yesterday."),
            sig: Some("none"),
            diags: &[(Code::Expired, 31)],
        },
    );
    assert_eq!(column_of(lapsed, Code::Expired, 31), 10);
    check(
        &ex.envelopes[2],
        &Want {
            span: (39, 52),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &[
                ("user", "kalle"),
                ("session", "2025-10-11T09Z abc124"),
                ("context", "triage"),
                ("intent", "REQUEST"),
            ],
            meta: &[(
                "privacy",
                &[("PII", "present"), ("Expires", "2025-10-12T16:00Z")],
            )],
            body: Some("Consent still valid."),
            sig: Some("none"),
            diags: &[],
        },
    );
    // Without a "now" nothing is judged expired.
    let ex = parse(fixture!("meta_values.txt"));
    assert!(ex.envelopes[1].diagnostics.is_empty());
}

// 17. The `hash:` field: CRC32 of the text from `[[` through the `sig:` line, LF-terminated.
// The first envelope's headers are not in canonical order, so only the text as received
// matches its hash.
#[test]
fn hash_field_match_and_mismatch() {
    let ex = parse(fixture!("hash.txt"));
    assert_eq!(ex.envelopes.len(), 2);
    let headers = [
        ("user", "kalle"),
        ("session", "2025-10-09T16Z abc123"),
        ("intent", "REQUEST"),
        ("context", "integrity"),
    ];
    let whole = &ex.envelopes[0];
    check(
        whole,
        &Want {
            span: (3, 12),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &headers,
            meta: &[],
            body: Some("This paste arrived whole."),
            sig: Some("none"),
            diags: &[],
        },
    );
    assert_eq!(whole.envelope.hash.as_deref(), Some("9a09d0f7"));
    let edited = &ex.envelopes[1];
    check(
        edited,
        &Want {
            span: (16, 25),
            banner: ("CLAUDE", "CHATGPT", "v1"),
            headers: &headers,
            meta: &[],
            body: Some("This paste was edited after hashing."),
            sig: Some("none"),
            diags: &[(Code::HashMismatch, 24)],
        },
    );
    assert_eq!(edited.envelope.hash.as_deref(), Some("d067f4c0"));
    assert_eq!(
        edited.positions.hash,
        Some(Pos {
            line: 24,
            column: 1
        })
    );
}

// 6 and 17. The hash covers the text from `[[`, so a byte-order mark before the banner is not
// part of it. The headers are not in canonical order, so only the text as received matches.
#[test]
fn hash_ignores_bom_before_banner() {
    let ex = parse(fixture!("bom_hash.txt"));
    assert_eq!(ex.envelopes.len(), 1);
    let p = &ex.envelopes[0];
    assert_eq!(p.envelope.hash.as_deref(), Some("cbb99115"));
    assert_eq!(p.envelope.context(), Some("file-transport"));
    // Whether the BOM itself is reported is `leading_byte_order_mark`'s business.
    let codes: Vec<(Code, u32)> = p
        .diagnostics
        .iter()
        .filter(|d| d.code != Code::InvisibleChars)
        .map(|d| (d.code, d.line))
        .collect();
    assert_eq!(codes, []);
}
