//! `check` reads inputs its own way (cut into pieces read on every core, or a large file in
//! blocks, never whole; envelopes dropped
//! as soon as their diagnostics are taken, only some kept for the database), but through the
//! one parser: these properties hold it to the full extraction, for generated transcripts
//! with every kind of mangling and for hostile edits of them, however the input is cut.

use proptest::prelude::*;

use super::parse_cmd::{check_pieces, check_reader, pieces_in, tally};
use crate::protocol::{self, Code, Diagnostic, Options};
use crate::store::Store;
use crate::synth::{TranscriptSpec, transcript};

/// What `check` must report for `text`, from the full parse path: the envelopes' diagnostics
/// and those outside them in line order (ties in the order found), `no-envelope` last, then
/// with a store the `id-conflict` errors of every envelope, placed by line.
fn expected(text: &str, store: Option<&Store>) -> (usize, Vec<Diagnostic>) {
    let ex = protocol::extract(text, &Options::default());
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
    diags.sort_by_key(|d| (d.line, d.column));
    if ex.envelopes.is_empty() {
        diags.push(protocol::no_envelope());
    }
    if let Some(store) = store {
        for p in &ex.envelopes {
            diags.extend(store.id_conflict(p).expect("the store answers"));
        }
        diags.sort_by_key(|d| (d.line, d.column));
    }
    (ex.envelopes.len(), diags)
}

/// What `check` reports for `text` cut into at most `parts` pieces.
fn checked(text: &str, parts: usize, store: Option<&Store>) -> (usize, Vec<Diagnostic>) {
    let (n, mut diags) = check_pieces(&pieces_in(text, parts), &Options::default(), store);
    if store.is_some() {
        diags.sort_by_key(|d| (d.line, d.column));
    }
    (n, diags)
}

/// What `check` reports for `text` read in blocks of `block` bytes on `workers` threads, as
/// it reads large files.
fn streamed(
    text: &[u8],
    block: usize,
    workers: usize,
    store: Option<&Store>,
) -> Option<(usize, Vec<Diagnostic>)> {
    let got = check_reader(text, block, workers, &Options::default(), store)
        .expect("reading from memory does not fail");
    got.map(|(n, mut diags)| {
        if store.is_some() {
            diags.sort_by_key(|d| (d.line, d.column));
        }
        (n, diags)
    })
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn check_reports_what_the_full_parse_finds(
        seed in any::<u64>(),
        envelopes in 0usize..40,
        mangled in prop_oneof![Just(0u32), Just(5), Just(50), Just(100)],
        edits in edits(),
        parts in 1usize..5,
    ) {
        let text = mangle(&transcript(&spec(seed, envelopes, mangled)), &edits);
        prop_assert_eq!(checked(&text, parts, None), expected(&text, None));
    }

    /// Read in blocks, however small, and checked on several threads, an input reports what
    /// the full parse finds; bytes that are not UTF-8 anywhere send it back to be read whole.
    #[test]
    fn check_in_blocks_reports_what_the_full_parse_finds(
        seed in any::<u64>(),
        envelopes in 0usize..40,
        mangled in prop_oneof![Just(0u32), Just(5), Just(50), Just(100)],
        edits in edits(),
        block in prop_oneof![1usize..64, 64usize..4096],
        workers in 1usize..4,
        invalid_at in proptest::option::of(any::<usize>()),
    ) {
        let text = mangle(&transcript(&spec(seed, envelopes, mangled)), &edits);
        match invalid_at {
            None => prop_assert_eq!(
                streamed(text.as_bytes(), block, workers, None),
                Some(expected(&text, None))
            ),
            Some(at) => {
                let mut bytes = text.into_bytes();
                bytes.insert(at % (bytes.len() + 1), 0xff);
                prop_assert_eq!(streamed(&bytes, block, workers, None), None);
            }
        }
    }

    /// A part read in blocks is checked with its lines numbered from 1 and moved down to its
    /// place afterwards: that reports what numbering it from its place does (positions,
    /// spans and the line numbers messages name), with and without the envelopes kept for
    /// the database, and the lines it counts are its line breaks.
    #[test]
    fn a_part_moved_down_reports_what_it_reports_in_place(
        seed in any::<u64>(),
        envelopes in 0usize..30,
        mangled in prop_oneof![Just(0u32), Just(50), Just(100)],
        edits in edits(),
        first in prop_oneof![1u32..3, 3u32..100_000],
        keep in any::<bool>(),
    ) {
        let mut text = mangle(&transcript(&spec(seed, envelopes, mangled)), &edits);
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let opts = Options::default();
        let mut moved = tally(&text, 1, true, &opts, keep);
        prop_assert_eq!(
            moved.lines() as usize,
            memchr::memchr_iter(b'\n', text.as_bytes()).count()
        );
        moved.move_down(first - 1);
        let placed = tally(&text, first, true, &opts, keep);
        prop_assert_eq!(format!("{moved:?}"), format!("{placed:?}"));
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
    ) {
        let original = transcript(&spec(seed, envelopes, 0));
        let mut store = Store::open_in_memory().expect("store");
        store.import_text("original", &original, &Options::default()).expect("import");
        let edited = transcript(&spec(seed, envelopes, mangled)).replace(" the ", " THE ");
        let text = mangle(&edited, &edits);
        let got = checked(&text, parts, Some(&store));
        prop_assert_eq!(&got, &expected(&text, Some(&store)));
        let in_blocks = streamed(text.as_bytes(), 512 * parts, parts, Some(&store));
        prop_assert_eq!(in_blocks.as_ref(), Some(&got));
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
    let (_, diags) = checked(&edited, 3, Some(&store));
    assert!(
        diags.iter().any(|d| d.code == Code::IdConflict),
        "{diags:?}"
    );
}
