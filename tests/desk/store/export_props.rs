//! `export --all` is a backup that `import` restores: whatever a store holds of its envelopes
//! must come back from the exported text byte for byte, in an empty database: the same ids,
//! threads and parents, and the same headers, META and body as written. Tested on generated
//! and mangled relay transcripts, with text that Unicode normalization would change (a body
//! is kept as written, so an export in NFC alone would give back other bytes).

use crosstalk::export::{Format, write_all};
use crosstalk::protocol::Options;
use crosstalk::store::{Store, StoredMessage};
use crosstalk::synth::{TranscriptSpec, transcript};
use proptest::prelude::*;

/// Every stored message, by id.
fn messages(store: &Store) -> std::collections::BTreeMap<String, StoredMessage> {
    let mut all = std::collections::BTreeMap::new();
    for t in store.thread_ids().unwrap() {
        for m in store.thread(&t).unwrap().unwrap().messages {
            all.insert(m.id.clone(), m);
        }
    }
    all
}

/// Exports `store` whole, in the envelope format.
fn exported(store: &Store) -> String {
    let mut out = Vec::new();
    write_all(store, Format::Crosstalk, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Imports `text`, exports everything, imports the export into an empty database, and
/// compares the two stores message by message.
fn round_trip(text: &str) -> Result<(), TestCaseError> {
    let opts = Options::default();
    let mut first = Store::open_in_memory().unwrap();
    first.import_text("props", text, &opts).unwrap();
    let backup = exported(&first);
    let mut second = Store::open_in_memory().unwrap();
    second.import_text("backup", &backup, &opts).unwrap();
    let (a, b) = (messages(&first), messages(&second));
    prop_assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "messages lost or added; the export:\n{}",
        backup
    );
    for (id, m) in &a {
        let n = &b[id];
        prop_assert_eq!(&m.thread, &n.thread, "thread of {}", id);
        prop_assert_eq!(&m.parent, &n.parent, "parent of {}", id);
        prop_assert_eq!(&m.intent, &n.intent, "intent of {}", id);
        prop_assert_eq!(&m.envelope.banner, &n.envelope.banner, "banner of {}", id);
        prop_assert_eq!(&m.envelope.body, &n.envelope.body, "body of {}", id);
        prop_assert_eq!(&m.envelope.meta, &n.envelope.meta, "META of {}", id);
        prop_assert_eq!(&m.envelope.sig, &n.envelope.sig, "signature of {}", id);
        prop_assert_eq!(&m.canonical, &n.canonical, "canonical text of {}", id);
        let mut h = m.envelope.headers.clone();
        let mut k = n.envelope.headers.clone();
        h.sort_by(|x, y| x.key.cmp(&y.key));
        k.sort_by(|x, y| x.key.cmp(&y.key));
        prop_assert_eq!(h, k, "headers of {}", id);
    }
    // And the backup of the restored database is the backup it was restored from.
    prop_assert_eq!(exported(&second), backup);
    Ok(())
}

/// Text that NFC changes: a decomposed accent, a Kelvin sign, a Hebrew letter with its point
/// as a precomposed form that NFC decomposes, Hangul jamo that NFC composes.
fn unnormalized() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("e\u{301}"),
        Just("\u{212A}"),
        Just("\u{FB38}"),
        Just("\u{1100}\u{1161}"),
        Just("a\u{328}\u{301}"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn an_export_restores_every_message_as_it_was(
        envelopes in 1usize..20,
        threads in 1usize..4,
        seed in any::<u64>(),
        mangled in 0u32..=100,
        odd in unnormalized(),
        every in 1usize..5,
        ends in 0u8..3,
    ) {
        let spec = TranscriptSpec { envelopes, threads, seed, mangled_percent: mangled };
        let text = transcript(&spec);
        // Text NFC would change, in some of the body lines (and whatever else a line of
        // two-space indentation holds).
        let text: String = text
            .split_inclusive('\n')
            .enumerate()
            .map(|(i, line)| match line.strip_prefix("  ") {
                Some(rest) if i % every == 0 => format!("  {odd}{rest}"),
                _ => line.to_string(),
            })
            .collect();
        // Line ends as a chat window or a transport left them: LF, CRLF, or CR CR LF.
        let text = match ends {
            0 => text,
            1 => text.replace('\n', "\r\n"),
            _ => text.replace('\n', "\r\r\n"),
        };
        round_trip(&text)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Transcripts edited at random, a character at a time, with the characters that make
    /// an envelope's structure and any other: whatever was imported comes back the same.
    #[test]
    fn an_export_restores_mutated_transcripts(
        seed in any::<u64>(),
        mangled in 0u32..=100,
        edits in proptest::collection::vec(
            (any::<prop::sample::Index>(), 0u8..4, any::<char>()),
            1..16,
        ),
    ) {
        let spec = TranscriptSpec { envelopes: 6, threads: 2, seed, mangled_percent: mangled };
        let mut text: Vec<char> = transcript(&spec).chars().collect();
        let structural = ['[', ']', ':', '\n', '|', '→', '>', '`', ' ', '\t', '\r', '\u{301}'];
        for (at, op, c) in edits {
            if text.is_empty() {
                break;
            }
            let i = at.index(text.len());
            match op {
                0 => {
                    text.remove(i);
                }
                1 => text.insert(i, c),
                2 => text.insert(i, structural[(c as usize) % structural.len()]),
                _ => text[i] = structural[(c as usize) % structural.len()],
            }
        }
        round_trip(&text.into_iter().collect::<String>())?;
    }
}

/// A body written with a combining accent comes back with it, not composed.
#[test]
fn a_decomposed_body_is_restored_as_written() {
    let text = "[[Alice→Bob v1]]\nthread: 01JABCDEFGHJKMNPQRSTVWXYZ0\n\
                message: 01JABCDEFGHJKMNPQRSTVWXYZ1\nintent: REQUEST\nbody: |\n  cafe\u{301}\n\
                sig: none\n[[END]]\n";
    round_trip(text).expect("restored");
}
