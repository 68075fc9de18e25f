//! `parse`, `fmt` and `check`: reading pastes.

use std::io::Write;
use std::path::Path;

use crate::cli::input::{self, Input};
use crate::cli::output::Stdout;
use crate::cli::reading::check_stream::{self, Job, Place};
use crate::cli::{EXIT_INVALID, Failure};
use crate::ids::IdGenerator;
use crate::json;
use crate::protocol::{self, Diagnostic, Extractor, Options, Parsed, Step};
use crate::sanitize::{sanitize, sanitize_line};

fn status(ok: bool) -> u8 {
    if ok { 0 } else { EXIT_INVALID }
}

/// `crosstalk parse`: the envelopes found, for people or (`--json`) for scripts.
pub(crate) fn parse(file: Option<&Path>, as_json: bool, opts: &Options) -> Result<u8, Failure> {
    let inp = input::read_envelopes(file, opts, None)?;
    if as_json {
        return parse_json(&inp, opts);
    }
    let ex = inp.extract(opts);
    let mut out = Stdout::new();
    for d in &ex.diagnostics {
        let _ = writeln!(
            out,
            "{}:{}",
            sanitize_line(&inp.name),
            sanitize_line(&d.to_string())
        );
    }
    let mut sessions = protocol::Sessions::default();
    for (i, p) in ex.envelopes.iter().enumerate() {
        let intent = sessions.intent(p);
        let _ = human(&mut out, &inp.name, i + 1, p, intent.as_ref());
    }
    out.finish()?;
    Ok(status(ex.error_count() == 0 && !ex.envelopes.is_empty()))
}

/// `parse --json`, written envelope by envelope so that memory stays near the input's own
/// size: holding every envelope, then a JSON tree of them all, then the whole text cost
/// about a hundred times the input.
///
/// The output is serde_json's pretty layout of `{"diagnostics", "envelopes"}` (keys in that
/// order), the same bytes as encoding the whole [`crate::json::extraction`] at once. The
/// diagnostics outside envelopes come first: a first pass writes them as it finds them
/// (on every core, as `check` reads, dropping envelopes as they come), a second writes the
/// envelopes.
fn parse_json(inp: &Input, opts: &Options) -> Result<u8, Failure> {
    let mut out = Stdout::new();
    let ok = write_json(&mut out, inp, opts)
        .map_err(|e| Failure::usage(format!("cannot write JSON to standard output: {e}")))?;
    out.finish()?;
    Ok(status(ok))
}

/// Writes the `parse --json` document for `inp` to `out`; true when it found envelopes and
/// no errors.
fn write_json(out: &mut impl Write, inp: &Input, opts: &Options) -> serde_json::Result<bool> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    write_json_with(out, inp, opts, cores, OutsideJob::HOLD)
}

/// [`write_json`] reading the first pass on `workers` threads, writing the diagnostics
/// outside envelopes every `hold` of them.
fn write_json_with(
    out: &mut impl Write,
    inp: &Input,
    opts: &Options,
    workers: usize,
    hold: usize,
) -> serde_json::Result<bool> {
    let io = serde_json::Error::io;
    out.write_all(b"{\n  \"diagnostics\": [").map_err(io)?;
    let mut list = OutsideList {
        out: &mut *out,
        any: false,
        errors: 0,
        envelopes: 0,
    };
    list.diagnostics(&inp.decoding).map_err(io)?;
    let job = OutsideJob { opts, hold };
    // Small inputs are one part: a thread per core would cost more than reading it.
    let workers = if inp.text.len() < check_stream::BLOCK {
        1
    } else {
        workers
    };
    check_stream::run_text(&inp.text, check_stream::BLOCK, workers, &job, |c| {
        list.envelopes += c.envelopes;
        list.errors += c.errors;
        list.text(&c.text)
    })
    .map_err(io)?;
    if list.envelopes == 0 {
        list.diagnostics(&[protocol::no_envelope()]).map_err(io)?;
    }
    let (any, mut errors) = (list.any, list.errors);
    out.write_all(if any { b"\n  ]" } else { b"]" })
        .map_err(io)?;
    out.write_all(b",\n  \"envelopes\": [").map_err(io)?;
    let mut written = 0usize;
    let mut sessions = protocol::Sessions::default();
    // The diagnostics outside envelopes were written by the first pass: this one drops them
    // as it goes rather than holding one for every stray line of the input.
    let mut ex = Extractor::new(&inp.text, opts.clone());
    loop {
        let p = match ex.next_step(OutsideJob::HOLD) {
            Step::Envelope(p) => p.into_parsed(),
            Step::Held => {
                ex.take_diagnostics();
                continue;
            }
            Step::End => break,
        };
        errors += p.diagnostics.iter().filter(|d| d.is_error()).count();
        let sep: &[u8] = if written == 0 { b"\n    " } else { b",\n    " };
        out.write_all(sep).map_err(io)?;
        let intent = sessions.intent(&p);
        json::write_at(out, &json::envelope_json(&p, intent.as_ref()), 2)?;
        written += 1;
    }
    let end: &[u8] = if written == 0 {
        b"]\n}\n"
    } else {
        b"\n  ]\n}\n"
    };
    out.write_all(end).map_err(io)?;
    Ok(errors == 0 && written > 0)
}

/// The first pass of `parse --json` on one part: the diagnostics outside envelopes, written
/// as items of the document's first list, and the envelopes counted.
struct OutsideJob<'o> {
    opts: &'o Options,
    /// How many diagnostics are held before they are written.
    hold: usize,
}

impl OutsideJob<'_> {
    const HOLD: usize = crate::cli::reading::check_cmd::HOLD;
}

/// What [`OutsideJob`] hands the writer.
struct Outside {
    /// The diagnostics as list items, each preceded by `,`.
    text: String,
    errors: usize,
    envelopes: usize,
}

impl Job for OutsideJob<'_> {
    type Chunk = Outside;

    fn read(&self, text: &str, place: Place, send: &mut dyn FnMut(Outside)) {
        let mut ex = Extractor::with_first_line(text, place.first_line, self.opts.clone());
        if place.start {
            ex = ex.at_input_start();
        }
        let mut envelopes = 0;
        loop {
            match ex.next_step(self.hold) {
                Step::Envelope(p) => {
                    envelopes += 1;
                    ex.recycle(p);
                }
                // Found in order: each can go as it is.
                Step::Held => send(outside(&ex.take_diagnostics(), 0)),
                Step::End => break,
            }
        }
        send(outside(&ex.into_diagnostics(), envelopes));
    }
}

/// `diags` as items of the first list of `parse --json`.
fn outside(diags: &[Diagnostic], envelopes: usize) -> Outside {
    let mut bytes = Vec::with_capacity(diags.len() * 200);
    for d in diags {
        bytes.extend_from_slice(b",\n    ");
        // Writing to memory does not fail.
        let _ = json::write_at(&mut bytes, &json::diagnostic(d), 2);
    }
    Outside {
        // JSON is UTF-8.
        text: String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        errors: diags.iter().filter(|d| d.is_error()).count(),
        envelopes,
    }
}

/// The writer's side of the first list of `parse --json`.
struct OutsideList<'w, W: Write> {
    out: &'w mut W,
    /// Whether an item was written (the next needs its `,`).
    any: bool,
    errors: usize,
    envelopes: usize,
}

impl<W: Write> OutsideList<'_, W> {
    fn diagnostics(&mut self, diags: &[Diagnostic]) -> std::io::Result<()> {
        let items = outside(diags, 0);
        self.errors += items.errors;
        self.text(&items.text)
    }

    fn text(&mut self, text: &str) -> std::io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        let text = match self.any {
            false => text.strip_prefix(',').unwrap_or(text),
            true => text,
        };
        self.any = true;
        self.out.write_all(text.as_bytes())
    }
}

/// One envelope for people: banner, headers, META, body, signature, then diagnostics;
/// `intent` as read in its input. Every value passes through `sanitize`: it came from
/// someone else's text.
fn human(
    out: &mut impl Write,
    name: &str,
    n: usize,
    p: &Parsed,
    intent: Option<&protocol::Intent>,
) -> std::io::Result<()> {
    let e = &p.envelope;
    let s = |v: &str| sanitize_line(v).into_owned();
    let verdict = if p.has_errors() { "INVALID" } else { "ok" };
    writeln!(
        out,
        "envelope {n} (lines {}-{}) {verdict}: {} → {} {}",
        p.span.start_line,
        p.span.end_line,
        crate::sanitize::marked_id(&e.banner.from),
        crate::sanitize::marked_id(&e.banner.to),
        s(&e.banner.version)
    )?;
    for h in &e.headers {
        writeln!(out, "  {}: {}", s(&h.key), s(&h.value))?;
    }
    if let (Some(i), None) = (intent, e.intent_raw()) {
        let why = if p.reply_form {
            "a v1.0 `response:` reply"
        } else if e.parent().is_some() {
            "a `body:` answering its `parent`"
        } else {
            "a `body:` answering the envelope before it in its session"
        };
        writeln!(out, "  (intent {i}: {why})")?;
    }
    for m in &e.meta {
        writeln!(out, "  meta: {}", s(&m.namespace))?;
        for (k, v) in &m.entries {
            writeln!(out, "    {}: {}", s(k), s(v))?;
        }
    }
    match &e.body {
        Some(b) => {
            writeln!(out, "  body:")?;
            for line in sanitize(b).split('\n') {
                writeln!(out, "    | {line}")?;
            }
        }
        None => writeln!(out, "  (no body)")?,
    }
    if let Some(sig) = &e.sig {
        writeln!(out, "  sig: {}", s(sig))?;
    }
    if let Some(hash) = &e.hash {
        writeln!(out, "  hash: {}", s(hash))?;
    }
    for d in &p.diagnostics {
        writeln!(out, "  {}:{}", s(name), s(&d.to_string()))?;
    }
    writeln!(out)
}

/// `crosstalk fmt`: canonical envelopes, one blank line between; diagnostics on stderr.
pub(crate) fn fmt(file: Option<&Path>, fill_ids: bool, opts: &Options) -> Result<u8, Failure> {
    let inp = input::read_envelopes(file, opts, None)?;
    let ex = inp.extract(opts);
    let ids = IdGenerator::new();
    let mut out = Stdout::new();
    let mut kept = Vec::new();
    for (i, p) in ex.envelopes.iter().enumerate() {
        let mut env = p.envelope.clone();
        if fill_ids {
            protocol::fill_ids(&mut env, &ids);
        }
        if i > 0 {
            let _ = writeln!(out);
        }
        let key = protocol::render::body_key(p);
        let canonical = protocol::render::render_as(&env, key);
        // A signature or hash over bytes the canonical form would change keeps them.
        let received = p.received_text(&inp.text);
        let (text, as_written) = protocol::carry::carried_as(&received, &canonical, None);
        if as_written {
            kept.push(p.span.start_line);
        }
        let _ = out.write_all(text.as_bytes());
    }
    out.finish()?;
    report(&inp.name, ex.all_diagnostics());
    for line in kept {
        eprintln!(
            "{}:{line}: note: written as received, not in canonical form: its signature or hash covers the text as written, which the canonical form would change{}",
            sanitize_line(&inp.name),
            if fill_ids {
                " (so no ids were filled in)"
            } else {
                ""
            },
        );
    }
    Ok(status(ex.error_count() == 0 && !ex.envelopes.is_empty()))
}

/// Diagnostics on standard error as `file:line:col: severity: message [code]`; the file
/// name is sanitized as the messages are (it may hold anything a file name can).
pub(crate) fn report<'a>(name: &str, diags: impl Iterator<Item = &'a Diagnostic>) {
    let name = sanitize_line(name);
    let mut err = std::io::stderr().lock();
    let mut sorted: Vec<_> = diags.collect();
    sorted.sort_by_key(|d| (d.line, d.column));
    for d in sorted {
        let _ = writeln!(err, "{name}:{}", sanitize_line(&d.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn input(text: &str) -> Input {
        Input {
            name: "<test>".into(),
            text: text.into(),
            decoding: Vec::new(),
        }
    }

    /// The streamed document is byte for byte the whole extraction encoded at once, however
    /// many threads read the first pass and however often it writes.
    fn same_as_whole(text: &str) {
        let opts = Options::default();
        let inp = input(text);
        let ex = inp.extract(&opts);
        let mut whole = Vec::new();
        json::write(&mut whole, &json::extraction(&ex)).expect("write");
        whole.push(b'\n');
        for (workers, hold) in [(1, OutsideJob::HOLD), (2, 1), (3, 3)] {
            let mut streamed = Vec::new();
            let ok = write_json_with(&mut streamed, &inp, &opts, workers, hold).expect("write");
            assert_eq!(
                String::from_utf8_lossy(&streamed),
                String::from_utf8_lossy(&whole)
            );
            assert_eq!(ok, ex.error_count() == 0 && !ex.envelopes.is_empty());
        }
    }

    const ENVELOPE: &str = "[[A→B v1]]\nuser: u\nsession: 2025-10-09T16Z abc123\nintent: REQUEST\ncontext: c\nbody: |\n  hi\nsig: none\n[[END]]\n";

    #[test]
    fn streamed_json_matches_the_whole_document() {
        same_as_whole("");
        same_as_whole("prose only\n");
        same_as_whole(ENVELOPE);
        same_as_whole(&format!("[[END]]\n{ENVELOPE}\n[[X→Y v1]]\n\n{ENVELOPE}"));
        same_as_whole(
            "[[A→B v1]] user: u intent: REQUEST body: | one sig: none [[END]] [[A→B v1]] user: v body: | two sig: none [[END]]\n",
        );
    }

    /// Inputs over 1 MiB are read in pieces on every core for the diagnostics outside
    /// envelopes: they still come in order, with the input's own line numbers.
    #[test]
    fn streamed_json_matches_for_large_inputs() {
        let mut text = String::new();
        let mut n = 0;
        while text.len() < (1 << 20) + 4096 {
            text.push_str(ENVELOPE);
            if n % 997 == 0 {
                text.push_str("[[END]]\n[[A→B v1]]\n\n");
            }
            n += 1;
        }
        same_as_whole(&text);
    }

    /// A byte-order mark before a banner further on in a large input is the same finding
    /// however the input is cut: only the one starting the input is skipped.
    #[test]
    fn a_byte_order_mark_past_the_start_is_reported_in_every_piece() {
        let bom = format!("\u{feff}{ENVELOPE}");
        let text = bom.repeat((1 << 20) / bom.len() + 100);
        same_as_whole(&text);
        let check = crate::cli::reading::check_cmd::check_bytes;
        let whole = check(text.as_bytes(), text.len() + 1, 1, usize::MAX, None);
        for (block, workers) in [(1 << 19, 2), (100_000, 3), (4096, 7)] {
            assert_eq!(check(text.as_bytes(), block, workers, 64, None), whole);
        }
        let invisible = whole
            .1
            .iter()
            .filter(|d| d.code == protocol::Code::InvisibleChars);
        assert_eq!(invisible.count(), whole.0 - 1);
    }

    proptest! {
        #[test]
        fn streamed_json_matches_for_arbitrary_pastes(
            parts in prop::collection::vec(prop_oneof![
                Just(ENVELOPE.to_string()),
                Just("[[END]]\n".to_string()),
                Just("[[A→B v1]] intent: POLL body: | x sig: none [[END]]\n".to_string()),
                Just("[[A→B v1]]\n".to_string()),
                "[a-z \\[\\]:|\n\u{1b}\u{202e}]{0,30}",
            ], 0..8)
        ) {
            same_as_whole(&parts.concat());
        }
    }
}
