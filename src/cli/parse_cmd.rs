//! `parse`, `fmt` and `check`: reading pastes.

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use super::check_stream;
use super::input::{self, Input};
use super::output::Stdout;
use super::{EXIT_INVALID, Failure};
use crate::ids::IdGenerator;
use crate::json::{self, CheckFile};
use crate::protocol::{self, Diagnostic, Extractor, Options, Parsed, ParsedRef};
use crate::sanitize::{sanitize, sanitize_line};

fn status(ok: bool) -> u8 {
    if ok { 0 } else { EXIT_INVALID }
}

/// `crosstalk parse`: the envelopes found, for people or (`--json`) for scripts.
pub fn parse(file: Option<&Path>, as_json: bool, opts: &Options) -> Result<u8, Failure> {
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
/// diagnostics outside envelopes come first but are known only once the input has been read
/// through, so a first pass collects them (dropping envelopes as they come) and a second
/// writes the envelopes.
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
    let (found, mut outside) = outside_diagnostics(&inp.text, opts);
    outside.splice(0..0, inp.decoding.iter().cloned());
    if found == 0 {
        outside.push(protocol::no_envelope());
    }
    let mut errors = outside.iter().filter(|d| d.is_error()).count();
    let io = serde_json::Error::io;
    out.write_all(b"{\n  \"diagnostics\": ").map_err(io)?;
    // As a JSON value, like the rest of the document: its keys sorted.
    json::write_at(out, &serde_json::to_value(&outside)?, 1)?;
    out.write_all(b",\n  \"envelopes\": [").map_err(io)?;
    let mut written = 0usize;
    let mut sessions = protocol::Sessions::default();
    for p in Extractor::new(&inp.text, opts.clone()) {
        errors += p.diagnostics.iter().filter(|d| d.is_error()).count();
        let sep: &[u8] = if written == 0 { b"\n    " } else { b",\n    " };
        out.write_all(sep).map_err(io)?;
        let intent = sessions.intent(&p);
        json::write_at(out, &json::envelope(&p, intent.as_ref()), 2)?;
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

/// The number of envelopes in `text` and the diagnostics outside them, in the order
/// [`protocol::extract`] gives them (without its `no-envelope`); envelopes are dropped as
/// they are found, and large inputs are read on every core as `check` reads them.
fn outside_diagnostics(text: &str, opts: &Options) -> (usize, Vec<Diagnostic>) {
    let pieces = pieces(text);
    let found = on_threads(&pieces, |i, (p, first)| {
        let mut ex = Extractor::with_first_line(p, first, opts.clone());
        if i == 0 {
            ex = ex.at_input_start();
        }
        let n = ex.by_ref().count();
        (n, ex.into_diagnostics())
    });
    let n = found.iter().map(|f| f.0).sum();
    (n, found.into_iter().flat_map(|f| f.1).collect())
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
pub fn fmt(file: Option<&Path>, fill_ids: bool, opts: &Options) -> Result<u8, Failure> {
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
pub fn report<'a>(name: &str, diags: impl Iterator<Item = &'a Diagnostic>) {
    let name = sanitize_line(name);
    let mut err = std::io::stderr().lock();
    let mut sorted: Vec<_> = diags.collect();
    sorted.sort_by_key(|d| (d.line, d.column));
    for d in sorted {
        let _ = writeln!(err, "{name}:{}", sanitize_line(&d.to_string()));
    }
}

/// What `check` takes from one piece of an input: the number of envelopes, their
/// diagnostics and those outside them (in line order), and the envelopes the database may
/// hold another version of ([`may_conflict`]), in input order.
#[cfg_attr(test, derive(Debug))]
pub(super) struct Tally {
    envelopes: usize,
    diagnostics: Vec<Diagnostic>,
    kept: Vec<Parsed>,
    /// The number of line breaks in the piece, when it ends with one: where the next piece's
    /// lines start, counted while the piece was read.
    lines: u32,
}

impl Tally {
    /// The number of line breaks in the piece, for a piece that ends with one.
    pub(super) fn lines(&self) -> u32 {
        self.lines
    }

    /// The tally of the same piece standing `by` lines further down in the input.
    pub(super) fn move_down(&mut self, by: u32) {
        self.diagnostics.iter_mut().for_each(|d| d.move_down(by));
        self.kept.iter_mut().for_each(|p| p.move_down(by));
    }
}

/// Extracts one piece of an input whose first line is `first_line` (`start`: the piece that
/// starts the input, whose byte-order mark is skipped), keeping only the diagnostics:
/// envelopes are dropped as they come, so memory stays small whatever the input's size.
/// With `keep`, the envelopes the database is asked about are kept, so the input is read
/// once whether or not there is a database; without, plain envelopes are only counted (see
/// `protocol::quick`).
pub(super) fn tally(text: &str, first_line: u32, start: bool, opts: &Options, keep: bool) -> Tally {
    let mut ex = Extractor::with_first_line(text, first_line, opts.clone());
    if start {
        ex = ex.at_input_start();
    }
    if !keep {
        // Only the findings and the count are wanted: envelopes with nothing to report are
        // counted by the quick reader.
        ex = ex.counting_clean();
    }
    let mut diagnostics = Vec::new();
    let mut kept = Vec::new();
    let mut envelopes = 0;
    // Envelopes are read in the reader's borrowed form: only those kept are copied out.
    while let Some(mut p) = ex.next_ref() {
        envelopes += 1;
        if keep && may_conflict(&p) {
            let p = p.into_parsed();
            diagnostics.extend(p.diagnostics.iter().cloned());
            kept.push(p);
        } else {
            diagnostics.append(&mut p.diagnostics);
            // Its storage serves the next envelope.
            ex.recycle(p);
        }
    }
    envelopes += ex.clean_count();
    let lines = ex.line().saturating_sub(first_line);
    diagnostics.extend(ex.into_diagnostics());
    diagnostics.sort_by_key(|d| (d.line, d.column));
    Tally {
        envelopes,
        diagnostics,
        kept,
        lines,
    }
}

/// Whether the database could report an `id-conflict` for `p`: it names its message and has
/// no errors (the same test `Store::id_conflict` makes first).
fn may_conflict(p: &ParsedRef<'_>) -> bool {
    !p.has_errors() && p.envelope.header("message").is_some()
}

/// Runs `f` on each piece on its own thread and returns the results in order.
fn on_threads<P: Copy + Send + Sync, T: Send>(
    pieces: &[P],
    f: impl Fn(usize, P) -> T + Sync,
) -> Vec<T> {
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = pieces
            .iter()
            .enumerate()
            .map(|(i, piece)| {
                let piece = *piece;
                s.spawn(move || f(i, piece))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Cuts an input for reading on every core: where no envelope can span the cut
/// ([`protocol::split_points`]), one piece per core for large inputs. Each piece comes with
/// the number of its first line (lines are counted first, in parallel), so every piece
/// reports the input's own line numbers.
fn pieces(text: &str) -> Vec<(&str, u32)> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    pieces_in(text, if text.len() < 1 << 20 { 1 } else { cores })
}

/// [`pieces`] for at most `parts` pieces, whatever the input's size.
pub(super) fn pieces_in(text: &str, parts: usize) -> Vec<(&str, u32)> {
    let pieces: Vec<&str> = protocol::split_points(text, parts)
        .into_iter()
        .map(|r| &text[r])
        .collect();
    let counts = on_threads(&pieces, |_, p| {
        memchr::memchr_iter(b'\n', p.as_bytes()).count()
    });
    let firsts = counts.iter().scan(1u32, |line, n| {
        let first = *line;
        *line += *n as u32;
        Some(first)
    });
    pieces.into_iter().zip(firsts).collect()
}

/// Checks one input on every core, piece by piece ([`pieces`]): the number of envelopes and
/// every diagnostic, with the `id-conflict` errors against `store` when there is one.
fn check_text(
    text: &str,
    opts: &Options,
    store: Option<&crate::store::Store>,
) -> (usize, Vec<Diagnostic>) {
    check_pieces(&pieces(text), opts, store)
}

/// [`check_text`] over an input already cut into pieces.
pub(super) fn check_pieces(
    pieces: &[(&str, u32)],
    opts: &Options,
    store: Option<&crate::store::Store>,
) -> (usize, Vec<Diagnostic>) {
    let keep = store.is_some();
    let tallies = on_threads(pieces, |i, (p, first)| tally(p, first, i == 0, opts, keep));
    merge(tallies, store)
}

/// The envelopes and diagnostics of an input's pieces, checked in order, with `no-envelope`
/// when there were none and the `id-conflict` errors against `store` when there is one.
fn merge(tallies: Vec<Tally>, store: Option<&crate::store::Store>) -> (usize, Vec<Diagnostic>) {
    let envelopes = tallies.iter().map(|t| t.envelopes).sum();
    // Sized once: this runs on one core after the others have finished.
    let mut diagnostics = Vec::with_capacity(tallies.iter().map(|t| t.diagnostics.len()).sum());
    let mut kept = Vec::new();
    for t in tallies {
        diagnostics.extend(t.diagnostics);
        kept.extend(t.kept);
    }
    if envelopes == 0 {
        diagnostics.push(protocol::no_envelope());
    }
    if let Some(store) = store {
        diagnostics.extend(super::check_db::conflicts(store, &kept));
    }
    (envelopes, diagnostics)
}

/// [`check_text`] for a large regular file, read in blocks ([`check_stream`]) instead of
/// whole. `None` for standard input, small files and files that are not UTF-8, which are read
/// whole.
fn check_streamed(
    path: &Path,
    opts: &Options,
    store: Option<&crate::store::Store>,
) -> Result<Option<(usize, Vec<Diagnostic>)>, Failure> {
    let cannot =
        |e: std::io::Error| Failure::usage(format!("cannot read `{}`: {e}", path.display()));
    if path.as_os_str() == "-" {
        return Ok(None);
    }
    let file = std::fs::File::open(path).map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if !meta.is_file() || meta.len() < check_stream::BLOCK as u64 {
        return Ok(None);
    }
    // Mail is decoded whole, as `import` decodes it.
    let mut head = Vec::new();
    (&file)
        .take(crate::transport::mail_sniff::HEAD as u64)
        .read_to_end(&mut head)
        .map_err(cannot)?;
    if crate::transport::mail::sniff(Some(path), &head).is_some() {
        return Ok(None);
    }
    (&file).seek(std::io::SeekFrom::Start(0)).map_err(cannot)?;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    check_reader(file, check_stream::BLOCK, cores, opts, store).map_err(cannot)
}

/// [`check_text`] for what `reader` yields, read in blocks of about `block` bytes and checked
/// on `workers` threads. `None` when it is not UTF-8.
pub(super) fn check_reader(
    reader: impl std::io::Read,
    block: usize,
    workers: usize,
    opts: &Options,
    store: Option<&crate::store::Store>,
) -> std::io::Result<Option<(usize, Vec<Diagnostic>)>> {
    let tallies = check_stream::tallies(reader, block, workers, opts, store.is_some())?;
    Ok(tallies.map(|t| merge(t, store)))
}

/// `crosstalk check`: every diagnostic of every file, then a summary.
pub fn check(
    files: &[PathBuf],
    as_json: bool,
    opts: &Options,
    store: Option<&crate::store::Store>,
) -> Result<u8, Failure> {
    let stdin = [PathBuf::from("-")];
    let files = if files.is_empty() { &stdin[..] } else { files };
    let mut out = Stdout::new();
    let (mut envelopes, mut errors, mut warnings) = (0, 0, 0);
    let mut ok = true;
    let mut reports = Vec::new();
    for f in files {
        let (name, n, mut diags) = match check_streamed(f, opts, store)? {
            Some((n, diags)) => (f.display().to_string(), n, diags),
            None => {
                let inp = input::read_envelopes(Some(f), opts, store)?;
                let (n, mut diags) = check_text(&inp.text, opts, store);
                diags.splice(0..0, inp.decoding);
                (inp.name, n, diags)
            }
        };
        if store.is_some() {
            diags.sort_by_key(|d| (d.line, d.column));
        }
        let e = diags.iter().filter(|d| d.is_error()).count();
        let w = diags.len() - e;
        ok &= e == 0 && n > 0;
        envelopes += n;
        errors += e;
        warnings += w;
        if as_json {
            reports.push(
                serde_json::to_value(CheckFile {
                    file: &name,
                    envelopes: n,
                    errors: e,
                    warnings: w,
                    diagnostics: diags.iter().collect(),
                })
                .unwrap_or_default(),
            );
        } else {
            for text in diagnostic_lines(&name, &diags) {
                let _ = out.write_all(text.as_bytes());
            }
        }
    }
    if as_json {
        super::output::print_json(&mut out, &reports)?;
    } else {
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let _ = writeln!(
            out,
            "{}, {}, {}",
            plural(envelopes, "envelope"),
            plural(errors, "error"),
            plural(warnings, "warning")
        );
    }
    out.finish()?;
    Ok(status(ok))
}

/// The diagnostics as `check` prints them, `file:line:col: severity: message [code]` one a
/// line, sanitized, in pieces to write in order. A large transcript has tens of thousands of
/// them, written after every core has finished checking: they are formatted on every core.
fn diagnostic_lines(name: &str, diags: &[Diagnostic]) -> Vec<String> {
    let name = sanitize_line(name);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    // Few enough lines are formatted where they are: a thread costs more than they do.
    let per = diags.len().div_ceil(cores).max(4096);
    let chunks: Vec<&[Diagnostic]> = diags.chunks(per).collect();
    let render = |_, chunk: &[Diagnostic]| {
        let mut text = String::with_capacity(chunk.len() * 160);
        let mut line = String::new();
        let (mut at, mut column) = ([0; 10], [0; 10]);
        for d in chunk {
            line.clear();
            d.parts(&mut at, &mut column)
                .into_iter()
                .for_each(|p| line.push_str(p));
            text.push_str(&name);
            text.push(':');
            text.push_str(&sanitize_line(&line));
            text.push('\n');
        }
        text
    };
    match chunks.as_slice() {
        [] => Vec::new(),
        [one] => vec![render(0, one)],
        _ => on_threads(&chunks, render),
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

    /// The streamed document is byte for byte the whole extraction encoded at once.
    fn same_as_whole(text: &str) {
        let opts = Options::default();
        let inp = input(text);
        let mut streamed = Vec::new();
        let ok = write_json(&mut streamed, &inp, &opts).expect("write");
        let ex = inp.extract(&opts);
        let mut whole = Vec::new();
        json::write(&mut whole, &json::extraction(&ex)).expect("write");
        whole.push(b'\n');
        assert_eq!(
            String::from_utf8_lossy(&streamed),
            String::from_utf8_lossy(&whole)
        );
        assert_eq!(ok, ex.error_count() == 0 && !ex.envelopes.is_empty());
    }

    /// Formatted on several cores, the lines are those of one loop over the diagnostics.
    #[test]
    fn diagnostic_lines_are_in_order_whatever_the_chunks() {
        let diags: Vec<Diagnostic> = (0..10_000u32)
            .map(|i| {
                let code = [protocol::Code::MissingSig, protocol::Code::BadId][i as usize % 2];
                Diagnostic::new(code, i + 1, i % 7 + 1, format!("message {i}\t\u{1b}[2J"))
            })
            .collect();
        let name = "dir/\u{202e}name.txt";
        let mut want = String::new();
        for d in &diags {
            want.push_str(&format!(
                "{}:{}\n",
                sanitize_line(name),
                sanitize_line(&d.to_string())
            ));
        }
        assert_eq!(diagnostic_lines(name, &diags).concat(), want);
        assert_eq!(diagnostic_lines(name, &diags[..3]).concat(), {
            let n = want.match_indices('\n').nth(2).map_or(0, |(i, _)| i + 1);
            want[..n].to_string()
        });
        assert!(diagnostic_lines(name, &[]).is_empty());
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
        let whole = check_pieces(&pieces_in(&text, 1), &Options::default(), None);
        for parts in [2, 3, 7] {
            assert_eq!(
                check_pieces(&pieces_in(&text, parts), &Options::default(), None),
                whole
            );
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
