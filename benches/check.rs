//! Extraction throughput: a realistic transcript against a line count of the same bytes (the
//! in-process stand-in for `wc -l`), and the pathological inputs at two sizes each, to show
//! the cost grows linearly. Figures and how to read them: `docs/BENCHMARKS.md`.

use crosstalk::protocol::{Options, extract};
use crosstalk::synth::{TranscriptSpec, transcript};
use divan::Bencher;
use divan::counter::BytesCount;

/// The allocator the `crosstalk` binary uses (src/main.rs), so that what is measured here is
/// what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

fn text(envelopes: usize) -> String {
    transcript(&TranscriptSpec {
        envelopes,
        threads: envelopes / 20,
        ..TranscriptSpec::default()
    })
}

fn opts() -> Options {
    Options {
        size_limit: usize::MAX,
        ..Options::default()
    }
}

/// Baseline: counting the lines of the same transcript.
#[divan::bench(args = [10_000, 20_000])]
fn line_count_baseline(b: Bencher, envelopes: usize) {
    let t = text(envelopes);
    b.counter(BytesCount::of_str(&t))
        .bench(|| memchr::memchr_iter(b'\n', divan::black_box(t.as_bytes())).count());
}

/// Finding, repairing and validating every envelope of a realistic transcript.
#[divan::bench(args = [10_000, 20_000])]
fn extract_transcript(b: Bencher, envelopes: usize) {
    let t = text(envelopes);
    b.counter(BytesCount::of_str(&t))
        .bench(|| extract(divan::black_box(&t), &opts()).envelopes.len());
}

fn bench_text(b: Bencher, t: String) {
    b.counter(BytesCount::of_str(&t))
        .bench(|| extract(divan::black_box(&t), &opts()).envelopes.len());
}

/// One line of noise full of `[[`, keys and near-banners (1 and 2 MB).
#[divan::bench(args = [1, 2])]
fn noise_line(b: Bencher, mb: usize) {
    let unit = "[[ noise [[A→ ]] user: x body: | sig: ";
    bench_text(b, unit.repeat(mb * 1024 * 1024 / unit.len()));
}

/// One envelope collapsed onto a single 1 or 2 MB line.
#[divan::bench(args = [1, 2])]
fn collapsed_line(b: Bencher, mb: usize) {
    let body = "word context: intent: [[x]] ".repeat(mb * 1024 * 1024 / 28);
    bench_text(
        b,
        format!(
            "[[A→B v1]] user: x session: 2025-10-09T15Z 04f07f context: y intent: QUESTION body: | {body} sig: none [[END]]"
        ),
    );
}

/// A body of 100 000 and 200 000 lines.
#[divan::bench(args = [100_000, 200_000])]
fn long_body(b: Bencher, lines: usize) {
    let mut t =
        String::from("[[A→B v1]]\nuser: u\nsession: s\ncontext: c\nintent: REQUEST\nbody: |\n");
    for i in 0..lines {
        t.push_str(&format!("  line {i}\n"));
    }
    t.push_str("sig: none\n[[END]]\n");
    bench_text(b, t);
}

/// 10 000 and 20 000 banners, none closed by `[[END]]`.
#[divan::bench(args = [10_000, 20_000])]
fn unclosed_banners(b: Bencher, n: usize) {
    bench_text(b, "[[A→B v1]]\nuser: u\nbody: |\n  hi\n".repeat(n));
}

/// 10 000 and 20 000 envelopes whose bodies lost their indentation and have no `sig:`,
/// each making the parser look ahead to the next banner.
#[divan::bench(args = [10_000, 20_000])]
fn stripped_bodies(b: Bencher, n: usize) {
    bench_text(
        b,
        "[[A→B v1]]\nuser: u\nbody: |\nnot indented\nmore\n".repeat(n),
    );
}

/// A META list opened and never closed, continued by 100 000 and 200 000 lines.
#[divan::bench(args = [100_000, 200_000])]
fn open_meta_list(b: Bencher, lines: usize) {
    let mut t = String::from("[[A→B v1]]\nuser: u\nmeta: routing\nTargets: [\n");
    t.push_str(&"  \"claude://session/abc\",\n".repeat(lines));
    t.push_str("body: |\n  hi\nsig: none\n[[END]]\n");
    bench_text(b, t);
}

/// 10 000 and 20 000 banners after other text on their line (`echo '`), each opening an
/// envelope, and as many in prose with nothing after them.
#[divan::bench(args = [10_000, 20_000])]
fn banners_after_text(b: Bencher, n: usize) {
    bench_text(
        b,
        "echo '[[A→B v1]]\nuser: u\nbody: |\n  hi\nsig: none\n[[END]]'\nso the banner [[C→D v1]]\n"
            .repeat(n),
    );
}

/// One signed envelope followed by 100 000 and 200 000 lines before its `[[END]]`.
#[divan::bench(args = [100_000, 200_000])]
fn lines_after_sig(b: Bencher, lines: usize) {
    let mut t = String::from("[[A→B v1]]\nuser: u\nbody: |\n  hi\nsig: ed25519:pkid=k;sig=AAAA\n");
    t.push_str(&"parent: x\n".repeat(lines));
    t.push_str("[[END]]\n");
    bench_text(b, t);
}

/// 40 000 and 80 000 banners on one line, nothing after any of them.
#[divan::bench(args = [40_000, 80_000])]
fn banners_on_one_line(b: Bencher, n: usize) {
    bench_text(b, format!("{}\n", "[[A→B v1]] ".repeat(n)));
}

/// One META block of 50 000 and 100 000 entries, each with a key of its own.
#[divan::bench(args = [50_000, 100_000])]
fn distinct_meta_keys(b: Bencher, n: usize) {
    let mut t = String::from("[[A→B v1]]\nuser: u\nmeta: ns\n");
    for i in 0..n {
        t.push_str(&format!("K{i}: v\n"));
    }
    t.push_str("body: |\n  hi\nsig: none\n[[END]]\n");
    bench_text(b, t);
}
