//! Properties that keep what crosstalk writes and verifies tied to what envelopes mean:
//! the canonical form re-parses to the same meaning and is idempotent, even on mangled
//! input; a valid signature vouches exactly for what the parser reads; and every banner
//! outside an envelope is accounted for.

use crosstalk::ids::IdGenerator;
use crosstalk::protocol::audit::{DigestCheck, Relay, append_hop, timeline, without_hops};
use crosstalk::protocol::error_envelope::error_envelope;
use crosstalk::protocol::keys::parse_private_key;
use crosstalk::protocol::render::{body_key, nfc, render_as};
use crosstalk::protocol::signature::{SigError, SigFormat, sign_envelope, verify_parsed};
use crosstalk::protocol::{
    Banner, Code, Envelope, Header, Intent, MetaBlock, Options, Parsed, extract,
};
use proptest::prelude::*;

/// Cases per property: 768, or `PROPTEST_CASES` for a longer run.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(768)
}

const PRIVATE_PEM: &str = include_str!("../../fixtures/rc1/private.pem");

/// What `crosstalk fmt` writes for `text`: each envelope in canonical form, under the body
/// key it was received with, one blank line between.
fn fmt(text: &str) -> String {
    let ex = extract(text, &Options::default());
    let parts: Vec<String> = (ex.envelopes.iter())
        .map(|p| render_as(&p.envelope, body_key(p)))
        .collect();
    parts.join("\n")
}

/// What an envelope means: its content and its intent as read.
fn readings(text: &str) -> Vec<(Envelope, Option<Intent>)> {
    let ex = extract(text, &Options::default());
    ex.envelopes
        .into_iter()
        .map(|p| {
            let intent = p.intent();
            // Header order says nothing: the canonical form puts known headers first.
            let mut env = p.envelope;
            env.headers = env.canonical_headers().into_iter().cloned().collect();
            (env, intent)
        })
        .collect()
}

fn word() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9][a-zA-Z0-9 ,.!?'\"/@#%&*+=_→é漢-]{0,24}".prop_map(|s| s.trim().to_string())
}

fn id() -> impl Strategy<Value = String> {
    "0[0-9A-HJKMNP-TV-Z]{25}"
}

/// A META entry written over one or several lines, as the text of its lines.
fn meta_entry() -> impl Strategy<Value = String> {
    let key = "[A-Z][A-Za-z0-9-]{0,8}";
    prop_oneof![
        3 => (key, word()).prop_map(|(k, v)| format!("{k}: {v}")),
        1 => (key, proptest::collection::vec(word(), 1..4), any::<bool>()).prop_map(|(k, items, indent)| {
            let pad = if indent { "  " } else { "" };
            let lines: Vec<String> = items.iter().map(|i| format!("{pad}\"{i}\",")).collect();
            format!("{k}: [\n{}\n{pad}]", lines.join("\n"))
        }),
        1 => (key, proptest::collection::vec(word(), 1..3)).prop_map(|(k, items)| {
            let lines: Vec<String> = items.iter().map(|i| format!("  - {i}")).collect();
            format!("{k}:\n{}", lines.join("\n"))
        }),
        1 => (key, word(), word()).prop_map(|(k, a, b)| format!("{k}: {a}\n    {b}")),
    ]
}

/// A META block in either layout; the old `meta: |` layout with entries named like headers.
fn meta_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => ("[a-z][a-z0-9-]{0,8}", proptest::collection::vec(meta_entry(), 0..4))
            .prop_map(|(ns, e)| format!("meta: {ns}\n{}", e.join("\n"))),
        1 => proptest::collection::vec(
                (prop_oneof![Just("intent"), Just("parent"), Just("body"), Just("user"), Just("Note"), Just("sig")], word()),
                1..4,
            )
            .prop_map(|e| {
                let lines: Vec<String> = e.iter().map(|(k, v)| format!("  {k}: {v}")).collect();
                format!("meta: |\n{}", lines.join("\n"))
            }),
    ]
}

fn body_lines() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(
        prop_oneof![
            4 => word(),
            1 => Just(String::new()),
            1 => Just("    indented code".to_string()),
            1 => Just("sig: looks like a trailer".to_string()),
            1 => Just("[[END]]".to_string()),
        ],
        0..5,
    )
}

prop_compose! {
    /// An envelope as a chat window might show it: v1.0 or v1.1, `body:` or `response:`,
    /// with or without intent, META in both layouts and over several lines.
    fn envelope_text()(
        from in "[A-Z]{2,8}", to in "[A-Z]{2,8}",
        session in proptest::option::of(word()),
        thread in proptest::option::of(id()),
        parent in proptest::option::of(id()),
        intent in proptest::option::of(prop_oneof![Just("REQUEST"), Just("RESPOND"), Just("ANSWER"), Just("POLL")]),
        meta in proptest::collection::vec(meta_text(), 0..3),
        response in any::<bool>(),
        body in body_lines(),
        sig in proptest::option::of(Just("none")),
        end in any::<bool>(),
    ) -> String {
        let mut t = format!("[[{from}→{to} v1]]\nuser: kalle\n");
        if let Some(s) = session { t.push_str(&format!("session: {s}\n")); }
        if let Some(s) = thread { t.push_str(&format!("thread: {s}\n")); }
        if let Some(s) = parent { t.push_str(&format!("parent: {s}\n")); }
        if let Some(s) = intent { t.push_str(&format!("intent: {s}\n")); }
        for m in meta { t.push('\n'); t.push_str(&m); t.push('\n'); }
        t.push_str(if response { "response: |\n" } else { "body: |\n" });
        for l in body {
            if !l.is_empty() { t.push_str("  "); t.push_str(&l); }
            t.push('\n');
        }
        if let Some(s) = sig { t.push_str(&format!("sig: {s}\n")); }
        if end { t.push_str("[[END]]\n"); }
        t
    }
}

/// A line a hostile or clumsy hand might put anywhere.
fn stray_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("body: |".to_string()),
        Just("  evil body line".to_string()),
        Just("parent: 01J9J3D3M6A4M3WQX8G1ZQ0S7K".to_string()),
        Just("intent: REQUEST".to_string()),
        Just("meta: routing".to_string()),
        Just("meta: audit".to_string()),
        Just("Received-By: mallory".to_string()),
        Just("X-Priority: high".to_string()),
        Just("X-Extra: value".to_string()),
        Just("hash: deadbeef".to_string()),
        Just("sig: none".to_string()),
        Just("[[END]]".to_string()),
        Just("[[EVIL→ANY v1]]".to_string()),
        Just("```".to_string()),
        Just("Targets: [".to_string()),
        Just("\u{200B}".to_string()),
        Just("    deeply indented".to_string()),
        "[ -~]{0,30}",
    ]
}

/// Line-level damage: lines inserted, deleted, duplicated or stripped of indentation.
fn mangle(text: &str, edits: &[(prop::sample::Index, u8, String)]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for (at, op, extra) in edits {
        let i = at.index(lines.len() + 1);
        match op % 4 {
            0 => lines.insert(i, extra.clone()),
            1 if i < lines.len() => {
                lines.remove(i);
            }
            2 if i < lines.len() => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            _ if i < lines.len() => lines[i] = lines[i].trim_start().to_string(),
            _ => {}
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// The transport wrappings a chat window or mail client adds.
fn wrap(text: &str, how: u8) -> String {
    match how % 5 {
        0 => text.to_string(),
        1 => format!("Here it is:\n```text\n{text}```\nThanks.\n"),
        2 => text.lines().map(|l| format!("> {l}\n")).collect(),
        3 => text.replace('\n', "\r\n"),
        _ => format!("{}\n", text.trim_end().replace('\n', " ")),
    }
}

proptest! {
    // `PROPTEST_CASES=100000 cargo test --test meaning_props` runs a longer fuzz.
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn fmt_keeps_meaning_and_is_idempotent(
        envs in proptest::collection::vec(envelope_text(), 1..3),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), stray_line()), 0..4),
        how in any::<u8>(),
    ) {
        let text = nfc(&wrap(&mangle(&envs.concat(), &edits), how));
        let once = fmt(&text);
        let twice = fmt(&once);
        prop_assert_eq!(&twice, &once, "input:\n{}", text);
        let before = readings(&text);
        let after = readings(&once);
        prop_assert_eq!(after.len(), before.len(), "input:\n{}\nfmt:\n{}", text, once);
        for (a, b) in after.iter().zip(&before) {
            prop_assert_eq!(a, b, "input:\n{}\nfmt:\n{}", text, once);
        }
    }

    #[test]
    fn fmt_of_arbitrary_character_damage_is_idempotent(
        env in envelope_text(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<char>()), 1..10),
    ) {
        let mut text: Vec<char> = env.chars().collect();
        let structural = ['[', ']', ':', '\n', '|', '→', '>', '`', ' ', '-', '"', '{'];
        for (at, op, c) in edits {
            if text.is_empty() { break; }
            let i = at.index(text.len());
            match op {
                0 => { text.remove(i); }
                1 => text.insert(i, c),
                2 => text.insert(i, structural[(c as usize) % structural.len()]),
                _ => text[i] = structural[(c as usize) % structural.len()],
            }
        }
        let text = nfc(&text.into_iter().collect::<String>());
        let once = fmt(&text);
        prop_assert_eq!(fmt(&once), once.clone(), "input:\n{:?}", text);
        let before = readings(&text);
        let after = readings(&once);
        prop_assert_eq!(after, before, "input:\n{:?}\nfmt:\n{}", text, once);
    }

    #[test]
    fn a_line_inserted_into_a_signed_envelope_fails_verification_or_changes_nothing(
        env in signable_envelope(),
        jws in any::<bool>(),
        at in any::<prop::sample::Index>(),
        line in stray_line(),
        how in 0u8..4,
    ) {
        let key = parse_private_key(PRIVATE_PEM).expect("test key");
        let mut signed = env;
        let format = if jws { SigFormat::Jws } else { SigFormat::Ed25519 };
        sign_envelope(&mut signed, &key, format, "rc1@example");
        let text = crosstalk::protocol::render(&signed);
        let mut lines: Vec<&str> = text.lines().collect();
        lines.insert(at.index(lines.len() + 1), &line);
        let mut tampered = lines.join("\n");
        tampered.push('\n');
        let tampered = wrap(&tampered, how);
        let public = key.verifying_key();
        let ex = extract(&tampered, &Options::default());
        // What the signer's own text is found to be wrong with, if anything.
        let signed_errors = errors(&extract(&wrap(&text, how), &Options::default()).envelopes[0]);
        for p in &ex.envelopes {
            if verify_parsed(p, &tampered, &public).is_ok() {
                // A transport checksum after `sig:` is not content, nor are audit hops (any
                // relay may add one): compare without them.
                let mut read = without_hops(&p.envelope).into_owned();
                read.hash = None;
                prop_assert_eq!(&read, &signed, "verified but reads differently:\n{}", tampered);
                // Reading the same is not enough: a line the parser skipped (an error) stands
                // in the envelope unread, and a signature must not vouch for it.
                let found = errors(p);
                prop_assert!(
                    found.iter().all(|c| signed_errors.contains(c)),
                    "verified despite {:?}:\n{}", found, tampered
                );
            }
        }
    }

    #[test]
    fn words_a_one_line_meta_block_drops_are_reported_and_never_verified(
        env in signable_envelope(),
        jws in any::<bool>(),
        words in "[a-z(][a-z ().,!?]{0,30}",
    ) {
        let key = parse_private_key(PRIVATE_PEM).expect("test key");
        let mut signed = env;
        if signed.meta.is_empty() {
            signed.meta.push(MetaBlock {
                namespace: "routing".into(),
                entries: vec![("X-Priority".into(), "high".into())],
            });
        }
        let format = if jws { SigFormat::Jws } else { SigFormat::Ed25519 };
        sign_envelope(&mut signed, &key, format, "rc1@example");
        let one_line = wrap(&crosstalk::protocol::render(&signed), 4);
        let namespace = format!("meta: {} ", signed.meta[0].namespace);
        let text = one_line.replacen(&namespace, &format!("{namespace}{} ", words.trim()), 1);
        let column = text[..text.find(&namespace).expect("namespace") + namespace.len()]
            .chars()
            .count() as u32
            + 1;
        let p = extract(&text, &Options::default()).envelopes.remove(0);
        prop_assert!(p.collapsed);
        prop_assert!(
            p.diagnostics.iter().any(|d| d.code == Code::BadMetaEntry && (d.line, d.column) == (1, column)),
            "{:?}\n{}", p.diagnostics, text
        );
        prop_assert_eq!(
            verify_parsed(&p, &text, &key.verifying_key()),
            Err(SigError::Unread { line: 1, column }),
            "{}", text
        );
    }

    #[test]
    fn headers_on_the_banner_line_are_read_as_on_their_own_lines(
        env in envelope_text(),
        joined in 1usize..3,
        how in 0u8..4,
    ) {
        // A lost line break after the banner (or after its first header too).
        let mut text = env.clone();
        for _ in 0..joined {
            let Some(nl) = text.find('\n') else { break };
            let next = &text[nl + 1..];
            if !["user:", "session:", "thread:", "parent:", "intent:"].iter().any(|k| next.starts_with(k)) { break }
            text.replace_range(nl..nl + 1, " ");
        }
        let text = wrap(&text, how);
        let original = wrap(&env, how);
        prop_assert_eq!(readings(&text), readings(&original), "input:\n{}", text);
    }

    #[test]
    fn audit_hops_never_break_a_signature_and_their_digests_match(
        env in signable_envelope(),
        jws in any::<bool>(),
        relays in proptest::collection::vec("[a-z]{1,8}(@[a-z]{1,6})?", 1..4),
        how in 0u8..4,
    ) {
        let key = parse_private_key(PRIVATE_PEM).expect("test key");
        let mut signed = env;
        let format = if jws { SigFormat::Jws } else { SigFormat::Ed25519 };
        sign_envelope(&mut signed, &key, format, "rc1@example");
        let mut relayed = signed.clone();
        for by in &relays {
            // Each relay reads what the previous one sent, then adds its hop.
            let text = crosstalk::protocol::render(&relayed);
            relayed = extract(&text, &Options::default()).envelopes.remove(0).envelope;
            append_hop(&mut relayed, &Relay { by, received_at: "2026-11-23T10:00:00Z", now: jiff::Timestamp::UNIX_EPOCH });
        }
        let text = wrap(&crosstalk::protocol::render(&relayed), how);
        let p = extract(&text, &Options::default()).envelopes.remove(0);
        prop_assert!(verify_parsed(&p, &text, &key.verifying_key()).is_ok(), "{}", text);
        let hops = timeline(&p.envelope);
        prop_assert_eq!(hops.len(), relays.len());
        prop_assert!(hops.iter().all(|h| h.digest_check == DigestCheck::Matches), "{:?}", hops);
        prop_assert_eq!(without_hops(&p.envelope).into_owned(), signed);
    }

    #[test]
    fn an_error_reply_to_anything_is_valid(
        env in envelope_text(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), stray_line()), 0..4),
        bad_id in prop_oneof![Just("01J9J3D3M6A4M3WQX8G1ZQ0SUU"), Just("c5a1b6e2-1f3d-4c8e-9a6b-2d4e6f8a0b1c"), Just("")],
    ) {
        let text = mangle(&env, &edits).replace("user: kalle", &format!("user: kalle\nmessage: {bad_id}"));
        let ids = IdGenerator::new();
        for p in extract(&text, &Options::default()).envelopes {
            let reply = error_envelope(Some(&p.envelope), "E-FORMAT", None, &p.diagnostics, &ids);
            let rendered = crosstalk::protocol::render(&reply);
            let ex = extract(&rendered, &Options::default());
            prop_assert_eq!(ex.envelopes.len(), 1, "{}", rendered);
            prop_assert!(!ex.envelopes[0].has_errors(), "{}\n{:?}", rendered, ex.envelopes[0].diagnostics);
        }
    }

    #[test]
    fn every_banner_outside_an_envelope_is_accounted_for(
        parts in proptest::collection::vec(prop_oneof![
            2 => "[a-z ,.]{0,30}",
            1 => ("[a-z $>*'-]{0,12}", "[a-z .]{0,12}").prop_map(|(a, b)| format!("{a}[[X→Y v1]]{b}")),
            1 => ("[a-z $>*'-]{0,12}").prop_map(|a| format!("{a}[[X→Y v1]]\nsession: s 1\nintent: ACK\nbody: |\n  ok\nsig: none\n[[END]]")),
            1 => envelope_text(),
        ], 1..8),
    ) {
        let text = parts.join("\n");
        let ex = extract(&text, &Options::default());
        let covered = |line: u32| ex.envelopes.iter().any(|p| p.span.start_line <= line && line <= p.span.end_line);
        let said = |line: u32| ex.diagnostics.iter().any(|d| d.line == line);
        for (i, l) in text.split('\n').enumerate() {
            let no = i as u32 + 1;
            if has_versioned_banner(l) && !covered(no) {
                prop_assert!(said(no), "banner on line {} neither read nor reported:\n{}", no, text);
            }
        }
    }
}

prop_compose! {
    /// An unsigned v1.1 envelope in canonical order, ready to be signed.
    fn signable_envelope()(
        from in "[A-Z]{2,8}", to in "[A-Z]{2,8}",
        session in word(), thread in id(), message in id(),
        intent in prop_oneof![Just("REQUEST"), Just("RESPOND"), Just("ACK")],
        meta in proptest::collection::vec(("[a-z]{2,8}", proptest::collection::vec(("[A-Z][a-z]{1,6}", word()), 1..3)), 0..2),
        body in proptest::collection::vec(word(), 1..4),
    ) -> Envelope {
        let headers = [("user", "kalle".to_string()), ("session", session), ("thread", thread), ("message", message), ("intent", intent.to_string())]
            .into_iter()
            .map(|(k, v)| Header { key: k.to_string(), value: v })
            .collect();
        Envelope {
            banner: Banner { from, to, version: "v1".into() },
            headers,
            meta: meta.into_iter().map(|(namespace, entries)| MetaBlock { namespace, entries }).collect(),
            body: Some(body.join("\n")),
            sig: None,
            hash: None,
        }
    }
}

/// The codes of an envelope's errors.
fn errors(p: &Parsed) -> Vec<Code> {
    (p.diagnostics.iter())
        .filter(|d| d.is_error())
        .map(|d| d.code)
        .collect()
}

/// Whether a line holds `[[X→Y vN]]` other than as inline code.
fn has_versioned_banner(line: &str) -> bool {
    let mut rest = line;
    while let Some(at) = rest.find("[[") {
        let after = &rest[at + 2..];
        if let Some(close) = after.find("]]") {
            let inner = &after[..close];
            let versioned = inner.contains('→')
                && inner.rsplit_once(' ').is_some_and(|(_, v)| {
                    v.len() > 1 && v.starts_with('v') && v[1..].bytes().all(|b| b.is_ascii_digit())
                });
            let code = rest[..at].ends_with('`') && after[close + 2..].starts_with('`');
            if versioned && !code && !inner.contains("[[") {
                return true;
            }
        }
        rest = after;
    }
    false
}

prop_compose! {
    /// An envelope with ids, as the desk stores it: v1.1, a routing block or none, a body of
    /// words and blank lines.
    fn stored_envelope()(
        from in "[A-Z]{2,8}", to in "[A-Z]{2,8}",
        thread in id(), message in id(),
        context in word(),
        intent in prop_oneof![Just("REQUEST"), Just("RESPOND"), Just("BROADCAST")],
        priority in proptest::option::of(prop_oneof![Just("high"), Just("low")]),
        body in proptest::collection::vec(prop_oneof![4 => word(), 1 => Just(String::new())], 1..5),
    ) -> Envelope {
        let mut e = Envelope::new(from, to);
        for (k, v) in [("user", "kalle".to_string()), ("session", "2026-12-01T21Z abc".into()),
            ("thread", thread), ("message", message), ("context", context), ("intent", intent.into())] {
            e.headers.push(Header { key: k.into(), value: v });
        }
        if let Some(p) = priority {
            e.meta.push(MetaBlock { namespace: "routing".into(), entries: vec![("X-Priority".into(), p.into())] });
        }
        // A body with some text: blank lines only would be no body to change.
        let mut lines = body;
        lines.insert(0, "hello".into());
        e.body = Some(lines.join("\n"));
        e.sig = Some("none".into());
        e
    }
}

/// What a transport does to an envelope's text on the way, one step.
fn carried(text: &str, how: u8) -> String {
    match how % 8 {
        // A mail gateway's record of the mail it came in.
        0 => text.replacen(
            "body: |",
            "meta: email\nMessage-ID: <a1@mail.example>\nSubject: [AI Crosstalk] hi\nbody: |",
            1,
        ),
        1 => text.replace('\n', "\r\n"),
        // A terminal's paste: LF as CR, and so CR LF as CR CR.
        2 => text.replace('\n', "\r"),
        3 => text.lines().map(|l| format!("> {l}\n")).collect(),
        4 => format!("Here it is:\n```text\n{}\n```\nThanks.\n", text.trim_end()),
        5 => format!("\n\n{text}"),
        // CR LF through a terminal's paste: CR CR.
        6 => text.replace("\r\n", "\n").replace('\n', "\r\r"),
        // A relay's audit hop.
        _ => {
            let ex = extract(text, &Options::default());
            match ex.envelopes.into_iter().next() {
                Some(p) => {
                    let mut env = p.envelope;
                    append_hop(
                        &mut env,
                        &Relay {
                            by: "desk",
                            received_at: "2026-12-01T21:00:00Z",
                            now: jiff::Timestamp::UNIX_EPOCH,
                        },
                    );
                    crosstalk::protocol::render(&env)
                }
                None => text.to_string(),
            }
        }
    }
}

/// `steps` of [`carried`] in the order transports meet an envelope: a gateway's or relay's
/// block, a quote or fence around it, then the line ends of the last copy.
fn in_transport_order(mut steps: Vec<u8>) -> Vec<u8> {
    steps.sort_by_key(|s| match s % 8 {
        0 | 7 => 0,
        3..=5 => 1,
        _ => 2,
    });
    steps
}

/// The outcome of importing `text` into `store`: its one envelope's.
fn outcome(store: &mut crosstalk::store::Store, text: &str) -> crosstalk::store::Outcome {
    let r = store
        .import_text("<copy>", text, &Options::default())
        .unwrap();
    assert_eq!(r.items.len(), 1, "{text:?}: {:?}", r.items);
    r.items[0].outcome
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases() / 4))]

    /// Whatever transports do to a stored envelope on the way — a gateway's block, audit hops,
    /// CR LF or CR line ends, a terminal's paste, a quote, a fence, blank lines — the copy
    /// imports as the message it is: a duplicate, never a conflicting version.
    #[test]
    fn a_copy_carried_any_way_is_the_same_message(
        env in stored_envelope(),
        steps in proptest::collection::vec(0u8..8, 1..4),
    ) {
        use crosstalk::store::Outcome;
        let mut store = crosstalk::store::Store::open_in_memory().unwrap();
        let text = crosstalk::protocol::render(&env);
        prop_assert_eq!(outcome(&mut store, &text), Outcome::Imported);
        let steps = in_transport_order(steps);
        let mut copy = text.clone();
        for s in &steps {
            copy = carried(&copy, *s);
        }
        prop_assert_eq!(outcome(&mut store, &copy), Outcome::Duplicate, "{:?}", copy);
        let id = env.message().unwrap();
        prop_assert_eq!(store.version_count(id).unwrap(), 0);
        // And the other way round: the carried copy first, the plain text after.
        let mut other = crosstalk::store::Store::open_in_memory().unwrap();
        prop_assert_eq!(outcome(&mut other, &copy), Outcome::Imported, "{:?}", copy);
        prop_assert_eq!(outcome(&mut other, &text), Outcome::Duplicate);
    }

    /// A change of meaning under a stored id is still a conflict, however it was carried.
    #[test]
    fn a_change_of_meaning_under_a_stored_id_is_a_conflict(
        env in stored_envelope(),
        steps in proptest::collection::vec(0u8..8, 0..3),
        change in 0u8..4,
        word in "[a-z]{3,8}",
    ) {
        use crosstalk::store::Outcome;
        let mut store = crosstalk::store::Store::open_in_memory().unwrap();
        prop_assert_eq!(outcome(&mut store, &crosstalk::protocol::render(&env)), Outcome::Imported);
        let mut changed = env.clone();
        match change {
            0 => changed.body = Some(format!("{} {word}", changed.body.clone().unwrap_or_default())),
            1 => changed.set_header("context", format!("{word} else")),
            2 => changed.set_header("intent", "CLOSE"),
            _ => changed.banner.to = format!("{}X", changed.banner.to),
        }
        let mut copy = crosstalk::protocol::render(&changed);
        let steps = in_transport_order(steps);
        for s in &steps {
            copy = carried(&copy, *s);
        }
        prop_assert_eq!(outcome(&mut store, &copy), Outcome::Conflict, "{:?}", copy);
    }
}
