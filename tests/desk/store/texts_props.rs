//! Messages are stored once (the canonical text rendered from the columns, the received text
//! as an edit of it, headers without the values columns hold): whatever a store gives back
//! for an imported message must be what was received and what its columns render to, for
//! generated and mangled relay transcripts, replies arriving before what they answer (moved to
//! its thread later), and headers holding the separators of the stored form. And v1.0
//! conversations, whose envelopes have no ids, give the same messages and tree whether they
//! are pasted at once or in several pastes in order.

use crosstalk::protocol::render::nfc;
use crosstalk::protocol::{Header, Options, extract, render};
use crosstalk::store::{ImportReport, Outcome, Store};
use crosstalk::synth::{TranscriptSpec, transcript};
use proptest::prelude::*;

/// Ways a chat window or a relay mangles text, applied to a whole transcript.
fn mangle(text: &str, how: u8) -> String {
    match how % 5 {
        0 => text.to_string(),
        1 => text.replace('\n', "\r\n"),
        2 => text.lines().map(|l| format!("> {l}\n")).collect(),
        3 => text.replace("\n  ", "\n\t"),
        _ => text.replace("[[END]]\n", "[[END]]\n\n```\n"),
    }
}

/// The envelopes of `text` in reverse order: replies arrive before the messages they answer.
fn reversed(text: &str) -> String {
    let mut parts: Vec<String> = extract(text, &Options::default())
        .envelopes
        .iter()
        .map(|p| p.received_text(text))
        .collect();
    parts.reverse();
    parts.join("\n")
}

fn check(text: &str) -> Result<(), TestCaseError> {
    let opts = Options::default();
    let mut store = Store::open_in_memory().unwrap();
    let report = store.import_text("props", text, &opts).unwrap();
    let parsed = extract(text, &opts).envelopes;
    let mut threads = std::collections::BTreeSet::new();
    for item in &report.items {
        if item.outcome != Outcome::Imported {
            continue;
        }
        let id = item.message.as_deref().unwrap();
        let m = store.message(id).unwrap().unwrap();
        threads.insert(m.thread.clone());
        let p = parsed.iter().find(|p| p.span == item.span).unwrap();
        // The text as received, byte for byte.
        prop_assert_eq!(&m.raw, &p.received_text(text));
        // The canonical text is what the stored envelope renders to, and reads back as it.
        prop_assert_eq!(&m.canonical, &render(&m.envelope));
        // (The canonical text is in NFC; the stored envelope keeps values as received.)
        let again = extract(&m.canonical, &opts).envelopes;
        prop_assert_eq!(again.len(), 1);
        let normalized: Vec<Header> = (m.envelope.headers.iter())
            .map(|h| Header {
                key: nfc(&h.key),
                value: nfc(&h.value),
            })
            .collect();
        prop_assert_eq!(&again[0].envelope.headers, &normalized);
        // Every header received is there with its value, but the ids filled on receipt.
        for h in &p.envelope.headers {
            if ["thread", "message", "parent", "intent"].contains(&h.key.as_str()) {
                continue;
            }
            prop_assert!(m.envelope.headers.contains(h), "{:?} lost from {}", h, id);
        }
        prop_assert_eq!(&m.envelope.body, &p.envelope.body);
        prop_assert_eq!(&m.envelope.meta, &p.envelope.meta);
    }
    // A thread gives back the same texts as its messages one by one (export, copy).
    for t in &threads {
        let view = store.thread(t).unwrap().unwrap();
        for m in &view.messages {
            let one = store.message(&m.id).unwrap().unwrap();
            prop_assert_eq!(&m.canonical, &one.canonical);
            prop_assert_eq!(&m.raw, &one.raw);
        }
    }
    // The same text again is the same messages: the stored texts compare equal to what the
    // import computes (duplicates, never conflicts).
    let again = store.import_text("props", text, &opts).unwrap();
    for (a, b) in report.items.iter().zip(&again.items) {
        if a.outcome == Outcome::Imported && b.outcome != Outcome::Imported {
            prop_assert_eq!(b.outcome, Outcome::Duplicate, "{:?}", b.diagnostics);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn imported_messages_read_back_as_received_and_rendered(
        envelopes in 1usize..25,
        threads in 1usize..5,
        seed in any::<u64>(),
        mangled in 0u32..=100,
        how in any::<u8>(),
    ) {
        let spec = TranscriptSpec { envelopes, threads, seed, mangled_percent: mangled };
        check(&mangle(&transcript(&spec), how))?;
    }

    #[test]
    fn replies_before_their_parents_and_hostile_headers_read_back_as_received(
        envelopes in 1usize..25,
        threads in 1usize..4,
        seed in any::<u64>(),
        key in "[a-z][a-z-]{0,6}|thread|session|context|\\[x",
        value in "(\\PC|\u{1e}|\u{1f}|\\[){0,8}",
    ) {
        let spec = TranscriptSpec { envelopes, threads, seed, mangled_percent: 0 };
        let text = reversed(&transcript(&spec));
        check(&text)?;
        check(&text.replace("\nbody: |", &format!("\n{key}: {value}\nbody: |")))?;
    }
}

/// A header value that is not in NFC (U+FB38 decomposes) is kept as received; the canonical
/// text holds it normalized.
#[test]
fn a_header_value_not_in_nfc_is_kept_as_received() {
    let spec = TranscriptSpec {
        envelopes: 1,
        threads: 1,
        seed: 290483711876771083,
        mangled_percent: 0,
    };
    let text = transcript(&spec).replace("\nbody: |", "\na: \u{FB38}\nbody: |");
    check(&text).expect("read back as received");
}

/// A v1.0 conversation: envelopes of up to three sessions, interleaved, each with its
/// session. Wordings repeat (`Yes.` answers many questions), but never twice in a row in one
/// session, and each session opens with a question of its own: a paste opening with a
/// session's first or latest message would be that message pasted again (docs/PROTOCOL.md
/// §10).
fn conversation() -> impl Strategy<Value = Vec<(usize, String)>> {
    prop::collection::vec((0usize..3, any::<bool>(), 0usize..3), 1..14).prop_map(|steps| {
        let mut last: [Option<(bool, usize)>; 3] = [None; 3];
        steps
            .into_iter()
            .map(|(s, reply, mut word)| {
                let session = format!("2025-10-09T16Z 00000{s}");
                let Some(before) = last[s] else {
                    last[s] = Some((false, usize::MAX));
                    return (s, v10_envelope(&session, false, &format!("Opening {s}?")));
                };
                if before == (reply, word) {
                    word = (word + 1) % 3;
                }
                last[s] = Some((reply, word));
                let words = if reply {
                    ["Yes.", "No.", "Done."]
                } else {
                    ["Shall I go on?", "Is it green?", "Ready?"]
                };
                (s, v10_envelope(&session, reply, words[word]))
            })
            .collect()
    })
}

/// A v1.0 question (`body:`) or `response:` reply of `session`.
fn v10_envelope(session: &str, reply: bool, words: &str) -> String {
    if reply {
        format!("[[CLAUDE→KALLE v1]]\nsession: {session}\nresponse: |\n  {words}\n[[END]]\n")
    } else {
        format!(
            "[[KALLE→CLAUDE v1]]\nuser: kalle\nsession: {session}\ncontext: deploy\n\
             intent: QUESTION\nbody: |\n  {words}\nsig: none\n[[END]]\n"
        )
    }
}

/// Whether a piece `from..to` of `envelopes` opens some session by repeating, word for word,
/// the session's last messages before it: that is the session's end pasted again, not new
/// messages (docs/PROTOCOL.md §10).
fn repeats_an_end(envelopes: &[(usize, String)], from: usize, to: usize) -> bool {
    (0..3).any(|s| {
        let of = |r: std::ops::Range<usize>| -> Vec<&String> {
            envelopes[r]
                .iter()
                .filter(|e| e.0 == s)
                .map(|e| &e.1)
                .collect()
        };
        let (before, piece) = (of(0..from), of(from..to));
        (1..=before.len().min(piece.len())).any(|k| piece[..k] == before[before.len() - k..])
    })
}

/// Where to cut `envelopes` into pieces: `cuts`, less those that would open a piece with a
/// session's end (see [`repeats_an_end`]).
fn bounds(envelopes: &[(usize, String)], cuts: &std::collections::BTreeSet<usize>) -> Vec<usize> {
    let n = envelopes.len();
    let mut b: Vec<usize> = std::iter::once(0)
        .chain(cuts.iter().copied().filter(|&c| c < n))
        .chain(std::iter::once(n))
        .collect();
    // Dropping a cut makes the piece before it longer, which may make that one repeat an end.
    while let Some(i) = (1..b.len() - 1).find(|&i| repeats_an_end(envelopes, b[i], b[i + 1])) {
        b.remove(i);
    }
    b
}

/// Each stored message of `reports`, in order: its text as received, the position of the
/// message it answers and that of its thread's first message.
fn tree(store: &Store, reports: &[ImportReport]) -> Vec<(String, Option<usize>, usize)> {
    let ids: Vec<String> = reports
        .iter()
        .flat_map(|r| &r.items)
        .filter_map(|i| i.message.clone())
        .collect();
    let at = |id: &str| ids.iter().position(|x| x == id);
    let messages: Vec<_> = ids
        .iter()
        .map(|id| store.message(id).unwrap().unwrap())
        .collect();
    messages
        .iter()
        .map(|m| {
            let thread = messages.iter().position(|o| o.thread == m.thread);
            (
                m.raw.clone(),
                m.parent.as_deref().and_then(at),
                thread.unwrap(),
            )
        })
        .collect()
}

fn ids(reports: &[ImportReport]) -> Vec<Option<String>> {
    reports
        .iter()
        .flat_map(|r| &r.items)
        .map(|i| i.message.clone())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A v1.0 conversation pasted at once and in pieces (in order) stores the same messages in
    /// the same tree; each piece pasted again right away, and the whole conversation pasted
    /// over the pieces, finds each message stored.
    #[test]
    fn v10_conversations_give_one_tree_however_they_are_pasted(
        envelopes in conversation(),
        cuts in prop::collection::btree_set(1usize..14, 0..5),
    ) {
        let opts = Options::default();
        let whole: String = envelopes.iter().map(|e| e.1.as_str()).collect();
        let mut one = Store::open_in_memory().unwrap();
        let at_once = one.import_text("whole", &whole, &opts).unwrap();
        prop_assert_eq!(at_once.count(Outcome::Imported), envelopes.len(), "{:#?}", at_once);

        let bounds = bounds(&envelopes, &cuts);
        let mut many = Store::open_in_memory().unwrap();
        let mut apart = Vec::new();
        for (k, w) in bounds.windows(2).enumerate() {
            // Each piece opens with a line of its own: no two pieces are the same input.
            let piece: String = envelopes[w[0]..w[1]].iter().map(|e| e.1.as_str()).collect();
            let piece = format!("piece {k}:\n{piece}");
            let r = many.import_text("piece", &piece, &opts).unwrap();
            prop_assert_eq!(r.count(Outcome::Imported), r.items.len(), "{:#?}", r);
            let again = many.import_text("piece", &piece, &opts).unwrap();
            prop_assert_eq!(again.count(Outcome::Duplicate), r.items.len(), "{:#?}", again);
            prop_assert_eq!(ids(std::slice::from_ref(&again)), ids(std::slice::from_ref(&r)));
            apart.push(r);
        }
        prop_assert_eq!(tree(&many, &apart), tree(&one, &[at_once]));

        let over = many.import_text("whole", &format!("all of it:\n{whole}"), &opts).unwrap();
        prop_assert_eq!(over.count(Outcome::Duplicate), envelopes.len(), "{:#?}", over);
        prop_assert_eq!(ids(&[over]), ids(&apart));
    }
}
