//! Messages are stored once (the canonical text rendered from the columns, the received text
//! as an edit of it, headers without the values columns hold): whatever a store gives back
//! for an imported message must be what was received and what its columns render to, for
//! generated and mangled relay transcripts, replies arriving before what they answer (moved to
//! its thread later), and headers holding the separators of the stored form.

use crosstalk::protocol::render::nfc;
use crosstalk::protocol::{Header, Options, extract, render};
use crosstalk::store::{Outcome, Store};
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
