//! `parse`, `fmt` and `check`: reading pastes.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::json::{self, CheckFile};
use super::{EXIT_INVALID, Failure, input};
use crate::protocol::{self, Diagnostic, IdGenerator, Parsed};
use crate::sanitize::{sanitize, sanitize_line};

fn status(ok: bool) -> u8 {
    if ok { 0 } else { EXIT_INVALID }
}

/// `crosstalk parse`: the envelopes found, for people or (`--json`) for scripts.
pub fn parse(file: Option<&Path>, as_json: bool) -> Result<u8, Failure> {
    let inp = input::read(file)?;
    let ex = inp.extract(&input::options());
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
pub fn fmt(file: Option<&Path>, fill_ids: bool) -> Result<u8, Failure> {
    let inp = input::read(file)?;
    let ex = inp.extract(&input::options());
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
        let _ = out.write_all(protocol::render(&env).as_bytes());
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

/// `crosstalk check`: every diagnostic of every file, then a summary.
pub fn check(files: &[PathBuf], as_json: bool) -> Result<u8, Failure> {
    let stdin = [PathBuf::from("-")];
    let files = if files.is_empty() { &stdin[..] } else { files };
    let opts = input::options();
    let mut out = BufWriter::new(std::io::stdout().lock());
    let (mut envelopes, mut errors, mut warnings) = (0, 0, 0);
    let mut ok = true;
    let mut reports = Vec::new();
    for f in files {
        let inp = input::read(Some(f))?;
        let ex = inp.extract(&opts);
        let mut diags: Vec<&Diagnostic> = ex.all_diagnostics().collect();
        diags.sort_by_key(|d| (d.line, d.column));
        let (e, w) = (ex.error_count(), ex.warning_count());
        ok &= e == 0 && !ex.envelopes.is_empty();
        envelopes += ex.envelopes.len();
        errors += e;
        warnings += w;
        if as_json {
            reports.push(
                serde_json::to_value(CheckFile {
                    file: &inp.name,
                    envelopes: ex.envelopes.len(),
                    errors: e,
                    warnings: w,
                    diagnostics: diags,
                })
                .unwrap_or_default(),
            );
        } else {
            for d in diags {
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
