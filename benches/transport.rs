//! The mail transport against the lean baseline: importing N envelopes from an mbox (each in
//! its own quoted-printable or 7bit mail, decoded, the raw mailbox kept too) against importing
//! the same N envelopes as one plain text file, each into a fresh database, in the same run.
//!
//! `cargo bench --bench transport`

use crosstalk::protocol::Options;
use crosstalk::store::Store;
use crosstalk::transport::mail::{MailKind, Outgoing, build, write_mbox};
use crosstalk::transport::mail_import::import_mail;
use divan::counter::ItemsCount;
use divan::{Bencher, black_box};

/// The allocator the `crosstalk` binary uses (src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

/// N envelopes of one thread, each answering the one before, with accents and a long line so
/// that their mails are quoted-printable.
fn envelopes(n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| {
            let id = format!("01K{:023}", i);
            let parent = if i == 0 {
                String::new()
            } else {
                format!("parent: 01K{:023}\n", i - 1)
            };
            let text = format!(
                "[[ALICE→BOB v1.1]]\nuser: kalle\nthread: 01K{:023}\n{parent}message: {id}\n\
                 context: bench\nintent: REQUEST\nbody: |\n  Message {i}: café, naïve, → {}\n  \
                 second line\nsig: none\n[[END]]\n",
                0,
                "word ".repeat(30)
            );
            (id, text)
        })
        .collect()
}

fn plain(n: usize) -> String {
    envelopes(n)
        .iter()
        .map(|(_, t)| t.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn mbox(n: usize) -> Vec<u8> {
    let env = envelopes(n);
    let outgoing: Vec<Outgoing<'_>> = env
        .iter()
        .enumerate()
        .map(|(i, (id, text))| Outgoing {
            message: id,
            parent: (i > 0).then(|| env[i - 1].0.as_str()),
            references: (i > 0).then(|| env[i - 1].0.as_str()).into_iter().collect(),
            context: Some("bench"),
            intent: Some("REQUEST"),
            from: "ALICE",
            to: "BOB",
            date: 1_700_000_000,
            envelope: text.as_str().into(),
        })
        .collect();
    let mut out = Vec::new();
    write_mbox(outgoing.iter().map(|o| (o, build(o))), &mut out).expect("to memory");
    out
}

const SIZES: [usize; 2] = [1_000, 5_000];

fn fresh() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let store = Store::open(&dir.path().join("b.db")).expect("database");
    (dir, store)
}

/// The baseline: the envelopes as one plain text file.
#[divan::bench(args = SIZES, sample_count = 10)]
fn import_plain(b: Bencher, n: usize) {
    let text = plain(n);
    b.counter(ItemsCount::new(n))
        .with_inputs(fresh)
        .bench_local_values(|(dir, mut store)| {
            let r = store
                .import_text("plain", &text, &Options::default())
                .expect("import");
            assert_eq!(r.items.len(), n);
            black_box((dir, r))
        });
}

/// The same envelopes, one mail each, in an mbox.
#[divan::bench(args = SIZES, sample_count = 10)]
fn import_mbox(b: Bencher, n: usize) {
    let bytes = mbox(n);
    b.counter(ItemsCount::new(n))
        .with_inputs(fresh)
        .bench_local_values(|(dir, mut store)| {
            let r = import_mail(
                &mut store,
                "mbox",
                &mut bytes.as_slice(),
                MailKind::Mbox,
                &Options::default(),
                &mut |_| {},
                false,
            )
            .expect("import")
            .0;
            assert_eq!(r.items.len(), n);
            black_box((dir, r))
        });
}
