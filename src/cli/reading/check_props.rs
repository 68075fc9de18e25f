//! `check` reads inputs its own way (in blocks on every core, never whole; envelopes dropped
//! as soon as their diagnostics are taken, only some kept for the database; diagnostics
//! handed on in chunks as they are found), but through the one parser: these properties hold
//! it to the full extraction, for generated transcripts with every kind of mangling and for
//! hostile edits of them, however the input is cut and however often its findings go.

use proptest::prelude::*;

use crate::cli::reading::check_cmd::check_bytes;
use crate::protocol::{self, Code, Diagnostic, Options};
use crate::store::Store;
use crate::synth::{TranscriptSpec, transcript};

/// What `check` must report for `text`, from the full parse path: the envelopes' diagnostics
/// and those outside them in line order (ties in the order found), with a store the
/// `id-conflict` errors of every envelope placed by line, and `no-envelope` last.
fn expected(text: &str, store: Option<&Store>) -> (usize, Vec<Diagnostic>) {
    expected_bytes(text.as_bytes(), store)
}

/// [`expected`] for bytes that may not be UTF-8: read as their text with U+FFFD for each
/// invalid sequence, the first of them reported first among the findings at its place.
fn expected_bytes(bytes: &[u8], store: Option<&Store>) -> (usize, Vec<Diagnostic>) {
    let (text, decoding) = protocol::decode(bytes);
    let text = protocol::line_ends::normalize(&text);
    let ex = protocol::extract(&text, &Options::default());
    let mut diags: Vec<Diagnostic> = ex
        .envelopes
        .iter()
        .flat_map(|p| p.diagnostics.iter().cloned())
        .chain(
            (ex.diagnostics.iter())
                .filter(|d| d.code != Code::NoEnvelope)
                .cloned(),
        )
        .collect();
    diags.splice(0..0, decoding);
    diags.sort_by_key(|d| (d.line, d.column));
    if let Some(store) = store {
        for p in &ex.envelopes {
            diags.extend(store.id_conflict(p).expect("the store answers"));
        }
        diags.sort_by_key(|d| (d.line, d.column));
    }
    if ex.envelopes.is_empty() {
        diags.push(protocol::no_envelope());
    }
    (ex.envelopes.len(), diags)
}

/// What `check` reports for `text` read in blocks of `block` bytes on `workers` threads,
/// each handing on its findings every `hold` diagnostics.
fn streamed(
    text: &[u8],
    block: usize,
    workers: usize,
    hold: usize,
    store: Option<&Store>,
) -> (usize, Vec<Diagnostic>) {
    check_bytes(text, block, workers, hold, store)
}

/// Text spliced into transcripts: the constructs whose handling differs between a line and
/// its neighbours (markers, banners, fences, quotes, line endings, invisible characters).
const SNIPPETS: [&str; 12] = [
    "[[END]]\n",
    "\n[[A→B v1]]\n",
    "[[X→Y]] user: u body: | x sig: none [[END]]",
    "\n```\n",
    "\n> ",
    "\r\n",
    "\u{200B}",
    "\u{00A0}",
    "\u{202E}",
    "sig: none\n",
    "meta: routing\nX-Route: a → b\n",
    "\nbody: |\n",
];

/// Applies `edits` (position, what) to `text`: insert a snippet, or delete up to 40 bytes.
fn mangle(text: &str, edits: &[(usize, usize)]) -> String {
    let mut t = text.to_string();
    for &(at, what) in edits {
        let mut at = at % (t.len() + 1);
        while !t.is_char_boundary(at) {
            at -= 1;
        }
        match SNIPPETS.get(what) {
            Some(s) => t.insert_str(at, s),
            None => {
                let mut end = (at + what % 40).min(t.len());
                while !t.is_char_boundary(end) {
                    end += 1;
                }
                t.replace_range(at..end, "");
            }
        }
    }
    t
}

fn spec(seed: u64, envelopes: usize, mangled_percent: u32) -> TranscriptSpec {
    TranscriptSpec {
        envelopes,
        threads: envelopes.div_ceil(4),
        seed,
        mangled_percent,
    }
}

fn edits() -> impl Strategy<Value = Vec<(usize, usize)>> {
    prop::collection::vec((any::<usize>(), 0..SNIPPETS.len() + 4), 0..12)
}

/// How often a worker hands on its findings: every few, to make every place a chunk may end
/// at one, or as `check` does.
fn holds() -> impl Strategy<Value = usize> {
    prop_oneof![1usize..8, Just(crate::cli::reading::check_cmd::HOLD)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Read in blocks, however small, checked on several threads and handed on however
    /// often, an input reports what the full parse finds.
    #[test]
    fn check_in_blocks_reports_what_the_full_parse_finds(
        seed in any::<u64>(),
        envelopes in 0usize..40,
        mangled in prop_oneof![Just(0u32), Just(5), Just(50), Just(100)],
        edits in edits(),
        block in prop_oneof![1usize..64, 64usize..4096, Just(1 << 20)],
        workers in 1usize..4,
        hold in holds(),
    ) {
        let text = mangle(&transcript(&spec(seed, envelopes, mangled)), &edits);
        prop_assert_eq!(
            streamed(text.as_bytes(), block, workers, hold, None),
            expected(&text, None)
        );
    }

    /// Bytes that are not UTF-8 read as their text with U+FFFD for each invalid sequence,
    /// and the first of them is reported at its place, however the input is cut.
    #[test]
    fn bytes_that_are_not_utf8_are_read_as_the_whole_reads_them(
        seed in any::<u64>(),
        envelopes in 0usize..30,
        edits in edits(),
        block in prop_oneof![1usize..64, 64usize..4096],
        workers in 1usize..4,
        hold in holds(),
        invalid in prop::collection::vec((any::<usize>(), prop_oneof![Just(0xffu8), Just(0xc3), Just(0x80)]), 1..4),
    ) {
        let text = mangle(&transcript(&spec(seed, envelopes, 20)), &edits);
        let mut bytes = text.into_bytes();
        for (at, byte) in invalid {
            bytes.insert(at % (bytes.len() + 1), byte);
        }
        prop_assert_eq!(
            streamed(&bytes, block, workers, hold, None),
            expected_bytes(&bytes, None)
        );
    }

    /// With a database holding the unmangled transcript, edited copies of its envelopes are
    /// `id-conflict` errors: `check` finds the same ones as the full path.
    #[test]
    fn check_with_a_database_reports_the_same_conflicts(
        seed in any::<u64>(),
        envelopes in 1usize..25,
        mangled in prop_oneof![Just(0u32), Just(30)],
        edits in edits(),
        parts in 1usize..4,
        hold in holds(),
    ) {
        let original = transcript(&spec(seed, envelopes, 0));
        let mut store = Store::open_in_memory().expect("store");
        store.import_text("original", &original, &Options::default()).expect("import");
        let edited = transcript(&spec(seed, envelopes, mangled)).replace(" the ", " THE ");
        let text = mangle(&edited, &edits);
        let got = streamed(text.as_bytes(), 512 * parts, parts, hold, Some(&store));
        prop_assert_eq!(&got, &expected(&text, Some(&store)));
    }
}

/// The property above must be able to fail: edited envelopes do conflict with the store.
#[test]
fn edited_copies_are_conflicts() {
    let original = transcript(&spec(7, 20, 0));
    let mut store = Store::open_in_memory().expect("store");
    store
        .import_text("original", &original, &Options::default())
        .expect("import");
    let edited = original.replace(" the ", " THE ");
    let (_, diags) = streamed(edited.as_bytes(), 1024, 3, 4, Some(&store));
    assert!(
        diags.iter().any(|d| d.code == Code::IdConflict),
        "{diags:?}"
    );
}
