//! A 64 KiB markdown body as the inspector shows it: the one-time load of the code grammars,
//! rendering it (what selecting the message costs), and the inspector's refresh when nothing
//! changed (what every later action and frame costs), against the baseline of the same text
//! made safe and wrapped line by line unrendered, as the inspector showed bodies before.
//!
//! The first render in a process also compiles the regexes of the grammars it uses; divan
//! repeats a benchmark in one process, so that one-time cost is timed once in `main`, before
//! the benchmarks run, and printed.

use std::time::Instant;

use crosstalk::app::panes::inspector::Inspector;
use crosstalk::app::text::{safe, wrap};
use crosstalk::markdown;
use crosstalk::protocol::Options;
use crosstalk::store::{Store, StoredMessage};
use divan::{Bencher, black_box};

/// The allocator the `crosstalk` binary uses (src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The inspector's inner width at 120×40.
const WIDTH: usize = 76;

fn main() {
    let text = body();
    let t = Instant::now();
    markdown::preload();
    let load = t.elapsed();
    let t = Instant::now();
    let first = markdown::render(&text, WIDTH);
    let render = t.elapsed();
    let t = Instant::now();
    black_box(markdown::render(&text, WIDTH));
    let again = t.elapsed();
    eprintln!(
        "{} bytes, {} lines, {} code blocks: grammars loaded in {load:?}; first render {render:?}, second {again:?}",
        text.len(),
        first.lines.len(),
        first.blocks.len()
    );
    divan::main();
}

/// Words for the prose.
const WORDS: &[&str] = &[
    "the",
    "shard",
    "map",
    "moves",
    "to",
    "a",
    "consistent",
    "hash",
    "ring",
    "so",
    "that",
    "adding",
    "a",
    "node",
    "only",
    "rebalances",
    "its",
    "neighbours",
    "and",
    "the",
    "write",
    "path",
    "keeps",
    "its",
    "latency",
    "budget",
    "under",
    "load",
    "with",
    "retries",
    "bounded",
];

/// A paragraph of `n` words hard-wrapped at 72 columns, as models write them.
fn paragraph(seed: usize, n: usize) -> String {
    let mut out = String::new();
    let mut col = 0;
    for i in 0..n {
        let w = WORDS[(seed * 7 + i * 13) % WORDS.len()];
        let w = if i % 17 == 5 {
            format!("**{w}**")
        } else if i % 23 == 9 {
            format!("`{w}`")
        } else {
            w.to_string()
        };
        if col + w.len() + 1 > 72 {
            out.push('\n');
            col = 0;
        } else if col > 0 {
            out.push(' ');
            col += 1;
        }
        out.push_str(&w);
        col += w.len();
    }
    out
}

/// A section: a heading, two long hard-wrapped paragraphs, a nested list, a table, a Rust and
/// a Python code block, a quote.
fn section(n: usize) -> String {
    let mut s = format!("## {n}. Storage layout, part {n}\n\n");
    s += &paragraph(n, 120);
    s += "\n\n";
    s += &paragraph(n + 1, 90);
    s += "\n\n";
    for i in 0..5 {
        s += &format!("- step {i}: {}\n", paragraph(n + i, 12).replace('\n', " "));
        if i == 2 {
            s += "  - nested detail with a [link](https://example.org/design) in it\n";
        }
    }
    s += "\n| shard | owner | p99 latency |\n|---|---|--:|\n";
    for i in 0..5 {
        s += &format!("| s{n}-{i} | node-{} | {} ms |\n", (n + i) % 7, 3 + i);
    }
    s += "\n```rust\n";
    s += "/// Picks the node that owns `key` on the ring.\n";
    s += "pub fn owner(ring: &[(u64, NodeId)], key: &[u8]) -> Option<NodeId> {\n";
    s += "    let h = xxhash(key);\n";
    s += "    let at = ring.partition_point(|(p, _)| *p < h);\n";
    s += "    ring.get(at).or_else(|| ring.first()).map(|(_, n)| *n) // wraps around\n";
    s += "}\n```\n\n";
    s += "```python\n";
    s += "def rebalance(ring, node):\n";
    s += "    \"\"\"Move the keys the new node now owns.\"\"\"\n";
    s += "    for key in ring.keys_between(node.prev, node.start):\n";
    s += "        copy(key, node)  # then delete from the old owner\n";
    s += "    return len(ring)\n```\n\n";
    s += "> A quoted note: ";
    s += &paragraph(n + 3, 30).replace('\n', "\n> ");
    s += "\n\n";
    s
}

/// About 64 KiB of markdown.
fn body() -> String {
    let mut s = String::from("# Design review\n\n");
    let mut n = 1;
    while s.len() < 64 * 1024 {
        s += &section(n);
        n += 1;
    }
    s
}

/// The body in a stored message, as the inspector gets it.
fn message(text: &str) -> StoredMessage {
    let mut store = Store::open_in_memory().expect("store");
    let body: String = text
        .lines()
        .map(|l| {
            if l.is_empty() {
                "\n".to_string()
            } else {
                format!("  {l}\n")
            }
        })
        .collect();
    let envelope = format!(
        "[[CLAUDE→human://op v1.1]]\nuser: kalle\nthread: 01KA0000000000000000000000\nmessage: 01KA0000000000000000000001\nintent: REQUEST\nbody: |\n{body}sig: none\n[[END]]\n"
    );
    store
        .import_text("bench", &envelope, &Options::default())
        .expect("import");
    let m = store
        .message("01KA0000000000000000000001")
        .expect("read")
        .expect("stored");
    let stored = m.envelope.body.as_deref().unwrap_or("");
    assert_eq!(stored.trim_end(), text.trim_end());
    m
}

/// Loading the code grammars afresh: what the first code block of a process waits for.
#[divan::bench(sample_count = 20)]
fn grammars_load(b: Bencher) {
    b.bench_local(|| black_box(markdown::load_syntaxes_uncached()));
}

/// The baseline: the body made safe and each line wrapped, unrendered (the inspector before).
#[divan::bench]
fn unrendered_64k(b: Bencher) {
    let text = body();
    b.bench_local(|| {
        let mut rows = Vec::new();
        for line in safe(&text).lines() {
            rows.extend(wrap(line, WIDTH));
        }
        black_box(rows.len())
    });
}

/// Rendering the body (grammars loaded): a new selection or width.
#[divan::bench]
fn render_64k(b: Bencher) {
    let text = body();
    markdown::preload();
    b.bench_local(|| black_box(markdown::render(&text, WIDTH).lines.len()));
}

/// Rendering the body with its code blocks left uncoloured (languages no grammar knows): what
/// of [`render_64k`] is the colouring.
#[divan::bench]
fn render_64k_uncoloured(b: Bencher) {
    let text = body()
        .replace("```rust", "```none")
        .replace("```python", "```none");
    b.bench_local(|| black_box(markdown::render(&text, WIDTH).lines.len()));
}

/// The inspector's rows built for the message: headers, the rendered body, the rest.
#[divan::bench]
fn inspector_rows_64k(b: Bencher) {
    let m = message(&body());
    let mut inspector = Inspector::default();
    b.bench_local(|| {
        inspector.built_for = None;
        inspector.refresh(Some(&m), WIDTH as u16, 36, "H");
        black_box(inspector.rows.len())
    });
}

/// The inspector's refresh when nothing changed: what each later action costs.
#[divan::bench]
fn inspector_cached_64k(b: Bencher) {
    let m = message(&body());
    let mut inspector = Inspector::default();
    inspector.refresh(Some(&m), WIDTH as u16, 36, "H");
    b.bench_local(|| {
        inspector.refresh(Some(&m), WIDTH as u16, 36, "H");
        black_box(inspector.rows.len())
    });
}
