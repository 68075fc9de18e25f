//! `parse`, `fmt` and `check`: reading pastes.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::json::{self, CheckFile};
use super::{EXIT_INVALID, Failure, input};
use crate::protocol::{self, Diagnostic, Extractor, IdGenerator, Options, Parsed};
use crate::sanitize::{sanitize, sanitize_line};

fn status(ok: bool) -> u8 {
    if ok { 0 } else { EXIT_INVALID }
}

/// `crosstalk parse`: the envelopes found, for people or (`--json`) for scripts.
pub fn parse(file: Option<&Path>, as_json: bool, opts: &Options) -> Result<u8, Failure> {
    let inp = input::read(file)?;
    let ex = inp.extract(opts);
    if as_json {
        json::print(&json::extraction(&ex));
    } else {
        let mut out = BufWriter::new(std::io::stdout().lock());
        for d in &ex.diagnostics {
            let _ = writeln!(out, "{}:{}", inp.name, sanitize_line(&d.to_string()));
        }
        for (i, p) in ex.envelopes.iter().enumerate() {
            let _ = human(&mut out, &inp.name, i + 1, p);
        }
        let _ = out.flush();
    }
    Ok(status(ex.error_count() == 0 && !ex.envelopes.is_empty()))
}

/// One envelope for people: banner, headers, META, body, signature, then diagnostics.
/// Every value passes through `sanitize`: it came from someone else's text.
fn human(out: &mut impl Write, name: &str, n: usize, p: &Parsed) -> std::io::Result<()> {
    let e = &p.envelope;
    let s = |v: &str| sanitize_line(v).into_owned();
    let verdict = if p.has_errors() { "INVALID" } else { "ok" };
    writeln!(
        out,
        "envelope {n} (lines {}-{}) {verdict}: {} → {} {}",
        p.span.start_line,
        p.span.end_line,
        s(&e.banner.from),
        s(&e.banner.to),
        s(&e.banner.version)
    )?;
    for h in &e.headers {
        writeln!(out, "  {}: {}", s(&h.key), s(&h.value))?;
    }
    if let (Some(i), None) = (p.intent(), e.intent_raw()) {
        writeln!(out, "  (intent {i}: a v1.0 `response:` reply)")?;
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
        writeln!(out, "  {name}:{}", s(&d.to_string()))?;
    }
    writeln!(out)
}

/// `crosstalk fmt`: canonical envelopes, one blank line between; diagnostics on stderr.
pub fn fmt(file: Option<&Path>, fill_ids: bool, opts: &Options) -> Result<u8, Failure> {
    let inp = input::read(file)?;
    let ex = inp.extract(opts);
    let ids = IdGenerator::new();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (i, p) in ex.envelopes.iter().enumerate() {
        let mut env = p.envelope.clone();
        if fill_ids {
            protocol::fill_ids(&mut env, &ids);
        }
        if i > 0 {
            let _ = writeln!(out);
        }
        let key = protocol::render::body_key(p);
        let _ = out.write_all(protocol::render::render_as(&env, key).as_bytes());
    }
    let _ = out.flush();
    report(&inp.name, ex.all_diagnostics());
    Ok(status(ex.error_count() == 0 && !ex.envelopes.is_empty()))
}

/// Diagnostics on standard error as `file:line:col: severity: message [code]`.
pub fn report<'a>(name: &str, diags: impl Iterator<Item = &'a Diagnostic>) {
    let mut err = std::io::stderr().lock();
    let mut sorted: Vec<_> = diags.collect();
    sorted.sort_by_key(|d| (d.line, d.column));
    for d in sorted {
        let _ = writeln!(err, "{name}:{}", sanitize_line(&d.to_string()));
    }
}

/// Extracts one piece of an input whose first line is `first_line`, keeping only the
/// diagnostics: envelopes are dropped as they come, so memory stays small whatever the
/// input's size.
fn tally(text: &str, first_line: u32, opts: &Options) -> (usize, Vec<Diagnostic>) {
    let mut ex = Extractor::with_first_line(text, first_line, opts.clone());
    let mut diagnostics = Vec::new();
    let mut envelopes = 0;
    for p in ex.by_ref() {
        envelopes += 1;
        diagnostics.extend(p.diagnostics);
    }
    diagnostics.extend(ex.into_diagnostics());
    diagnostics.sort_by_key(|d| (d.line, d.column));
    (envelopes, diagnostics)
}

/// Runs `f` on each piece on its own thread and returns the results in order.
fn on_threads<T: Send>(pieces: &[&str], f: impl Fn(usize, &str) -> T + Sync) -> Vec<T> {
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = pieces
            .iter()
            .enumerate()
            .map(|(i, piece)| s.spawn(move || f(i, piece)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Checks one input on every core: the text is cut where no envelope can span the cut
/// ([`protocol::split_points`]); each piece's lines are counted first so that every piece
/// reports the input's own line numbers.
fn check_text(text: &str, opts: &Options) -> (usize, Vec<Diagnostic>) {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let parts = if text.len() < 1 << 20 { 1 } else { cores };
    let pieces: Vec<&str> = protocol::split_points(text, parts)
        .into_iter()
        .map(|r| &text[r])
        .collect();
    let counts = on_threads(&pieces, |_, p| {
        memchr::memchr_iter(b'\n', p.as_bytes()).count()
    });
    let firsts: Vec<u32> = counts
        .iter()
        .scan(1u32, |line, n| {
            let first = *line;
            *line += *n as u32;
            Some(first)
        })
        .collect();
    let tallies = on_threads(&pieces, |i, p| tally(p, firsts[i], opts));
    let envelopes = tallies.iter().map(|t| t.0).sum();
    let mut diagnostics: Vec<Diagnostic> = tallies.into_iter().flat_map(|t| t.1).collect();
    if envelopes == 0 {
        diagnostics.push(protocol::no_envelope());
    }
    (envelopes, diagnostics)
}

/// `crosstalk check`: every diagnostic of every file, then a summary.
pub fn check(files: &[PathBuf], as_json: bool, opts: &Options) -> Result<u8, Failure> {
    let stdin = [PathBuf::from("-")];
    let files = if files.is_empty() { &stdin[..] } else { files };
    let mut out = BufWriter::new(std::io::stdout().lock());
    let (mut envelopes, mut errors, mut warnings) = (0, 0, 0);
    let mut ok = true;
    let mut reports = Vec::new();
    for f in files {
        let inp = input::read(Some(f))?;
        let (n, mut diags) = check_text(&inp.text, opts);
        if let Some(d) = &inp.utf8 {
            diags.insert(0, d.clone());
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
                    file: &inp.name,
                    envelopes: n,
                    errors: e,
                    warnings: w,
                    diagnostics: diags.iter().collect(),
                })
                .unwrap_or_default(),
            );
        } else {
            for d in &diags {
                let _ = writeln!(out, "{}:{}", inp.name, sanitize_line(&d.to_string()));
            }
        }
    }
    if as_json {
        let _ = out.flush();
        json::print(&reports);
    } else {
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let _ = writeln!(
            out,
            "{}, {}, {}",
            plural(envelopes, "envelope"),
            plural(errors, "error"),
            plural(warnings, "warning")
        );
        let _ = out.flush();
    }
    Ok(status(ok))
}
