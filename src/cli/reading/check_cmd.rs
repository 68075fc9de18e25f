//! `crosstalk check`: every diagnostic of every file, written as it is found.
//!
//! An input is read in blocks on every core ([`check_stream`]), never whole (mail excepted:
//! it is decoded whole, as `import` decodes it, and its text then read the same way).
//! Envelopes are dropped as soon as their diagnostics are taken, and the diagnostics are
//! written in input order as the parts are read: a worker holds at most about [`HOLD`] of
//! them before it hands them on, so a file of a million findings costs what a file of a few
//! thousand does. The order is the input's: line, then column, then (for findings at the same
//! place) those of an envelope before those outside envelopes; the id conflicts a database
//! finds take their place by line; `no-envelope` comes last.

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::cli::input;
use crate::cli::output::Stdout;
use crate::cli::reading::check_stream::{self, Job, Place};
use crate::cli::{EXIT_INVALID, Failure};
use crate::json;
use crate::protocol::{self, Diagnostic, Extractor, Options, Parsed, ParsedRef, Step};
use crate::sanitize::sanitize_line;

/// About how many diagnostics a worker holds before it hands them on: enough that handing
/// them on costs nothing next to finding them, few enough to be a few megabytes.
pub(in crate::cli) const HOLD: usize = 4096;

/// `crosstalk check`: every diagnostic of every file, then a summary.
pub(crate) fn check(
    files: &[PathBuf],
    as_json: bool,
    opts: &Options,
    store: Option<&crate::store::Store>,
) -> Result<u8, Failure> {
    let stdin = [PathBuf::from("-")];
    let files = if files.is_empty() { &stdin[..] } else { files };
    let mut out = Stdout::new();
    let mut total = Counts::default();
    let mut ok = true;
    if as_json {
        let _ = out.write_all(b"[");
    }
    for (i, f) in files.iter().enumerate() {
        let form = if as_json {
            Form::Json { first_file: i == 0 }
        } else {
            Form::Human
        };
        let counts = check_file(&mut out, f, form, opts, store)?;
        ok &= counts.errors == 0 && counts.envelopes > 0;
        total.add(&counts);
    }
    if as_json {
        let _ = out.write_all(b"\n]\n");
    } else {
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let _ = writeln!(
            out,
            "{}, {}, {}",
            plural(total.envelopes, "envelope"),
            plural(total.errors, "error"),
            plural(total.warnings, "warning")
        );
    }
    out.finish()?;
    Ok(if ok { 0 } else { EXIT_INVALID })
}

/// How a file's findings are written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(in crate::cli) enum Form {
    /// `file:line:col: severity: message [code]`, one a line.
    Human,
    /// One object of `check --json`'s list; the first opens the list.
    Json { first_file: bool },
    /// Not written: handed over as they are (for tests).
    #[cfg(test)]
    Kept,
}

/// Envelopes, errors and warnings found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(in crate::cli) struct Counts {
    pub envelopes: usize,
    pub errors: usize,
    pub warnings: usize,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        self.envelopes += other.envelopes;
        self.errors += other.errors;
        self.warnings += other.warnings;
    }

    fn count(&mut self, diags: &[Diagnostic]) {
        let errors = diags.iter().filter(|d| d.is_error()).count();
        self.errors += errors;
        self.warnings += diags.len() - errors;
    }
}

/// Checks one file (`-`: standard input) and writes its findings to `out`.
fn check_file(
    out: &mut impl Write,
    path: &Path,
    form: Form,
    opts: &Options,
    store: Option<&crate::store::Store>,
) -> Result<Counts, Failure> {
    let source = open(path, opts, store)?;
    let cannot = |e: std::io::Error| match path.as_os_str() == "-" {
        true => Failure::usage(format!("cannot read standard input: {e}")),
        false => Failure::usage(format!("cannot read `{}`: {e}", path.display())),
    };
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    match source {
        Source::Text {
            name,
            reader,
            small,
        } => {
            let workers = if small { 1 } else { cores };
            let mut sink = FileSink::new(out, &name, form, store);
            sink.start().map_err(cannot)?;
            let job = CheckJob::new(opts, store.is_some(), form, &name);
            check_stream::run(reader, check_stream::BLOCK, workers, &job, |c| {
                sink.chunk(c)
            })
            .map_err(cannot)?;
            sink.end().map_err(cannot)
        }
        Source::Mail(inp) => {
            let mut sink = FileSink::new(out, &inp.name, form, store);
            sink.start().map_err(cannot)?;
            // Every note on the mail's parts stands at the start of its decoded text.
            sink.diagnostics(inp.decoding.clone()).map_err(cannot)?;
            let job = CheckJob::new(opts, store.is_some(), form, &inp.name);
            // The decoded text is in memory: cut in place, not copied into blocks.
            let text = &inp.text;
            check_stream::run_text(text, check_stream::BLOCK, cores, &job, |c| sink.chunk(c))
                .map_err(cannot)?;
            sink.end().map_err(cannot)
        }
    }
}

/// An input to check: text read as it comes, or mail decoded whole.
enum Source {
    Text {
        name: String,
        reader: Box<dyn Read + Send>,
        /// Known to be smaller than a block: one worker reads it.
        small: bool,
    },
    Mail(input::Input),
}

/// Opens `path` (`-`: standard input) for `check`: mail, told by its name's extension or by
/// its first bytes as `import` tells it, is decoded whole; anything else is read as it comes.
fn open(
    path: &Path,
    opts: &Options,
    store: Option<&crate::store::Store>,
) -> Result<Source, Failure> {
    let head_size = crate::transport::mail_sniff::HEAD as u64;
    let mut head = Vec::new();
    if path.as_os_str() == "-" {
        let cannot = |e: std::io::Error| Failure::usage(format!("cannot read standard input: {e}"));
        let mut stdin = std::io::stdin();
        (&mut stdin)
            .take(head_size)
            .read_to_end(&mut head)
            .map_err(cannot)?;
        if let Some(kind) = crate::transport::mail::sniff(None, &head) {
            stdin.read_to_end(&mut head).map_err(cannot)?;
            return Ok(Source::Mail(input::mail(
                "<stdin>".into(),
                kind,
                &head,
                opts,
                store,
            )));
        }
        let small = head.len() < head_size as usize;
        return Ok(Source::Text {
            name: "<stdin>".into(),
            reader: Box::new(std::io::Cursor::new(head).chain(stdin)),
            small,
        });
    }
    let cannot =
        |e: std::io::Error| Failure::usage(format!("cannot read `{}`: {e}", path.display()));
    let mut file = std::fs::File::open(path).map_err(cannot)?;
    let small = file
        .metadata()
        .map_err(cannot)?
        .len()
        .lt(&(check_stream::BLOCK as u64));
    (&file)
        .take(head_size)
        .read_to_end(&mut head)
        .map_err(cannot)?;
    if crate::transport::mail::sniff(Some(path), &head).is_some() {
        return Ok(Source::Mail(input::read_envelopes(
            Some(path),
            opts,
            store,
        )?));
    }
    file.seek(std::io::SeekFrom::Start(0)).map_err(cannot)?;
    Ok(Source::Text {
        name: path.display().to_string(),
        reader: Box::new(file),
        small,
    })
}

/// What a worker hands the writer: diagnostics in input order, written out already when
/// nothing is to be added to them, with what they count.
pub(in crate::cli) struct Chunk {
    /// The diagnostics, when the writer is to add the database's findings (or, in tests,
    /// to keep them).
    diagnostics: Vec<Diagnostic>,
    /// The diagnostics as the file's output, otherwise.
    text: String,
    /// Whether `text` holds any diagnostic.
    any: bool,
    counts: Counts,
    /// The envelopes the database may hold another version of ([`may_conflict`]).
    kept: Vec<Parsed>,
}

/// `check`'s work on one part of an input.
pub(in crate::cli) struct CheckJob<'o> {
    opts: &'o Options,
    /// Whether the envelopes the database is asked about are kept.
    keep: bool,
    /// How the worker writes the diagnostics out; `None` when the writer does.
    form: Option<Form>,
    /// The file's name as written before each diagnostic.
    name: String,
    /// About how many diagnostics are held before they are handed on.
    hold: usize,
}

impl<'o> CheckJob<'o> {
    pub(in crate::cli) fn new(opts: &'o Options, keep: bool, form: Form, name: &str) -> Self {
        CheckJob {
            opts,
            keep,
            form: match form {
                // The database's findings join the others on the writer's side.
                _ if keep => None,
                #[cfg(test)]
                Form::Kept => None,
                form => Some(form),
            },
            name: sanitize_line(name).into_owned(),
            hold: HOLD,
        }
    }

    /// This job handing on its findings every `hold` diagnostics or so (tests make it small).
    #[cfg(test)]
    pub(in crate::cli) fn holding(mut self, hold: usize) -> Self {
        self.hold = hold.max(1);
        self
    }

    /// A chunk of `diagnostics`, written out when the worker writes them.
    fn chunk(&self, diagnostics: Vec<Diagnostic>, envelopes: usize, kept: Vec<Parsed>) -> Chunk {
        let mut counts = Counts {
            envelopes,
            ..Counts::default()
        };
        counts.count(&diagnostics);
        let mut text = String::new();
        let any = !diagnostics.is_empty();
        let diagnostics = match self.form {
            Some(form) => {
                write_diagnostics(&mut text, &self.name, form, &diagnostics);
                Vec::new()
            }
            None => diagnostics,
        };
        Chunk {
            diagnostics,
            text,
            any,
            counts,
            kept,
        }
    }
}

impl Job for CheckJob<'_> {
    type Chunk = Chunk;

    fn read(&self, text: &str, place: Place, send: &mut dyn FnMut(Chunk)) {
        let mut ex = Extractor::with_first_line(text, place.first_line, self.opts.clone());
        if place.start {
            ex = ex.at_input_start();
        }
        if !self.keep {
            // Only the findings and the count are wanted: envelopes with nothing to report
            // are counted by the quick reader.
            ex = ex.counting_clean();
        }
        let mut held = Held {
            first: place.decoding.into_iter().collect(),
            ..Held::default()
        };
        let mut kept = Vec::new();
        let mut envelopes = 0;
        let mut next = self.hold;
        loop {
            let room = next.saturating_sub(held.len());
            match ex.next_step(room) {
                // Envelopes are read in the reader's borrowed form: only those kept are
                // copied out.
                Step::Envelope(mut p) => {
                    envelopes += 1;
                    if self.keep && may_conflict(&p) {
                        let p = p.into_parsed();
                        held.envelope.extend(p.diagnostics.iter().cloned());
                        kept.push(p);
                    } else if held.envelope.is_empty() {
                        // Taken over rather than copied; the empty list serves the next
                        // envelope.
                        std::mem::swap(&mut held.envelope, &mut p.diagnostics);
                        ex.recycle(p);
                    } else {
                        held.envelope.append(&mut p.diagnostics);
                        // Its storage serves the next envelope.
                        ex.recycle(p);
                    }
                }
                Step::Held => {}
                Step::End => break,
            }
            if held.len() + ex.held() >= next {
                held.outside.append(&mut ex.take_diagnostics());
                let settled = held.take_before(ex.settled());
                if !settled.is_empty() || !kept.is_empty() {
                    self.hand_on(settled, envelopes, std::mem::take(&mut kept), send);
                    envelopes = 0;
                }
                // What could not go yet (all on the line being read) waits for twice as
                // much, so that a line of endless findings is not sorted over and over.
                next = self.hold.max(2 * held.len());
            }
        }
        envelopes += ex.clean_count();
        held.outside.append(&mut ex.into_diagnostics());
        let rest = held.take_before((u32::MAX, u32::MAX));
        self.hand_on(rest, envelopes, kept, send);
    }
}

impl CheckJob<'_> {
    /// Sends `diags` on in chunks of at most `hold` (one envelope can bring half a million
    /// findings, and every chunk but a part's last waits for the part's turn, so a worker
    /// ahead holds one chunk of text, not its envelope's whole report). With envelopes kept
    /// for the database they go as one: its findings are sorted in among them.
    fn hand_on(
        &self,
        diags: Vec<Diagnostic>,
        envelopes: usize,
        kept: Vec<Parsed>,
        send: &mut dyn FnMut(Chunk),
    ) {
        if !kept.is_empty() || diags.len() <= self.hold {
            send(self.chunk(diags, envelopes, kept));
            return;
        }
        let mut pieces = diags.chunks(self.hold).peekable();
        while let Some(piece) = pieces.next() {
            let last = pieces.peek().is_none();
            let n = if last { envelopes } else { 0 };
            send(self.chunk(piece.to_vec(), n, Vec::new()));
        }
    }
}

/// A worker's diagnostics not handed on yet, by where they come from: the input's first
/// invalid bytes, the envelopes' findings in envelope order, the findings outside envelopes
/// in the order found. In the input's order they are sorted by line and column, and for
/// findings at the same place in that order (the order a sort of them one after the other
/// keeps).
#[derive(Default)]
struct Held {
    first: Vec<Diagnostic>,
    envelope: Vec<Diagnostic>,
    outside: Vec<Diagnostic>,
}

impl Held {
    fn len(&self) -> usize {
        self.first.len() + self.envelope.len() + self.outside.len()
    }

    /// The diagnostics before `place` (line, column), in the input's order; the rest stay.
    /// Nothing found later stands before `place` ([`Extractor::settled`]), so the ones taken
    /// are sorted among themselves as they would be among all.
    fn take_before(&mut self, place: (u32, u32)) -> Vec<Diagnostic> {
        let before = |d: &Diagnostic| (d.line, d.column) < place;
        let mut taken = Vec::new();
        for list in [&mut self.first, &mut self.envelope, &mut self.outside] {
            if list.iter().all(before) {
                if taken.is_empty() {
                    // The usual case, one list going whole: it goes as it is, not copied.
                    std::mem::swap(&mut taken, list);
                } else {
                    taken.append(list);
                }
            } else {
                let (early, late): (Vec<_>, Vec<_>) = list.drain(..).partition(before);
                taken.extend(early);
                *list = late;
            }
        }
        let key = |d: &Diagnostic| (d.line, d.column);
        // Stable: findings at the same place keep the order above. Mostly they are in order
        // already, and a sort would set aside half their size again.
        if !taken.is_sorted_by_key(key) {
            taken.sort_by_key(key);
        }
        taken
    }
}

/// Whether the database could report an `id-conflict` for `p`: it names its message and has
/// no errors (the same test `Store::id_conflict` makes first).
fn may_conflict(p: &ParsedRef<'_>) -> bool {
    !p.has_errors() && p.envelope.header("message").is_some()
}

/// Writes `diags` to `text` in `form`: for people, `file:line:col: severity: message [code]`
/// one a line, sanitized; for `--json`, each an item of the file's list of diagnostics
/// (preceded by `,`: the writer drops the first one of a file).
fn write_diagnostics(text: &mut String, name: &str, form: Form, diags: &[Diagnostic]) {
    match form {
        Form::Human => {
            text.reserve(diags.len() * 160);
            let mut line = String::new();
            let (mut at, mut column) = ([0; 10], [0; 10]);
            for d in diags {
                line.clear();
                d.parts(&mut at, &mut column)
                    .into_iter()
                    .for_each(|p| line.push_str(p));
                text.push_str(name);
                text.push(':');
                text.push_str(&sanitize_line(&line));
                text.push('\n');
            }
        }
        Form::Json { .. } => {
            let mut bytes = std::mem::take(text).into_bytes();
            bytes.reserve(diags.len() * 200);
            for d in diags {
                bytes.extend_from_slice(b",\n      ");
                // Writing to memory does not fail.
                let _ = json::write_at(&mut bytes, &json::diagnostic(d), 3);
            }
            // JSON is UTF-8.
            *text = String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        }
        #[cfg(test)]
        Form::Kept => {}
    }
}

/// The writer's side of one file: the chunks in order, the database's findings added, the
/// file's counts at the end.
pub(in crate::cli) struct FileSink<'w, 's, W: Write> {
    out: &'w mut W,
    /// The file's name as given (JSON escapes it itself).
    name: String,
    /// The name as written before each diagnostic for people: sanitized.
    shown: String,
    form: Form,
    store: Option<&'s crate::store::Store>,
    counts: Counts,
    /// Whether a diagnostic was written (in JSON, the next one needs a `,`).
    any: bool,
    /// In tests: the diagnostics handed over unwritten.
    #[cfg(test)]
    pub kept: Vec<Diagnostic>,
}

impl<'w, 's, W: Write> FileSink<'w, 's, W> {
    pub(in crate::cli) fn new(
        out: &'w mut W,
        name: &str,
        form: Form,
        store: Option<&'s crate::store::Store>,
    ) -> Self {
        FileSink {
            out,
            name: name.to_string(),
            shown: sanitize_line(name).into_owned(),
            form,
            store,
            counts: Counts::default(),
            any: false,
            #[cfg(test)]
            kept: Vec::new(),
        }
    }

    /// Opens the file's object in JSON.
    pub(in crate::cli) fn start(&mut self) -> std::io::Result<()> {
        match self.form {
            Form::Json { first_file } => {
                let open: &[u8] = if first_file { b"\n  {" } else { b",\n  {" };
                self.out.write_all(open)?;
                self.out.write_all(b"\n    \"diagnostics\": [")
            }
            _ => Ok(()),
        }
    }

    /// Writes what a worker handed on: its text as it is, or its diagnostics with the
    /// database's findings among them.
    pub(in crate::cli) fn chunk(&mut self, mut c: Chunk) -> std::io::Result<()> {
        self.counts.envelopes += c.counts.envelopes;
        if let Some(store) = self.store {
            let conflicts = crate::cli::reading::check_db::conflicts(store, &c.kept);
            if !conflicts.is_empty() {
                c.diagnostics.extend(conflicts);
                c.diagnostics.sort_by_key(|d| (d.line, d.column));
            }
        }
        if c.text.is_empty() {
            return self.diagnostics(c.diagnostics);
        }
        self.counts.errors += c.counts.errors;
        self.counts.warnings += c.counts.warnings;
        self.text(&c.text, c.any)
    }

    /// Writes `diags`, in this order.
    pub(in crate::cli) fn diagnostics(&mut self, diags: Vec<Diagnostic>) -> std::io::Result<()> {
        self.counts.count(&diags);
        #[cfg(test)]
        if self.form == Form::Kept {
            self.kept.extend(diags);
            return Ok(());
        }
        let mut text = String::new();
        write_diagnostics(&mut text, &self.shown, self.form, &diags);
        self.text(&text, !diags.is_empty())
    }

    fn text(&mut self, text: &str, any: bool) -> std::io::Result<()> {
        if !any {
            return Ok(());
        }
        let text = match self.form {
            Form::Json { .. } if !self.any => text.strip_prefix(',').unwrap_or(text),
            _ => text,
        };
        self.any = true;
        self.out.write_all(text.as_bytes())
    }

    /// Writes `no-envelope` when there was none, closes the file's object in JSON; the
    /// file's counts.
    pub(in crate::cli) fn end(&mut self) -> std::io::Result<Counts> {
        if self.counts.envelopes == 0 {
            self.diagnostics(vec![protocol::no_envelope()])?;
        }
        if let Form::Json { .. } = self.form {
            let close: &[u8] = if self.any { b"\n    ]" } else { b"]" };
            self.out.write_all(close)?;
            let c = self.counts;
            write!(
                self.out,
                ",\n    \"envelopes\": {},\n    \"errors\": {},\n    \"file\": ",
                c.envelopes, c.errors
            )?;
            json::write_at(&mut self.out, &self.name, 2).map_err(std::io::Error::other)?;
            write!(self.out, ",\n    \"warnings\": {}\n  }}", c.warnings)?;
        }
        Ok(self.counts)
    }
}

/// What `check` reports for `bytes` read in blocks of `block` bytes on `workers` threads,
/// each handing on its findings every `hold` diagnostics: the number of envelopes and the
/// diagnostics in the order written.
#[cfg(test)]
pub(in crate::cli) fn check_bytes(
    bytes: &[u8],
    block: usize,
    workers: usize,
    hold: usize,
    store: Option<&crate::store::Store>,
) -> (usize, Vec<Diagnostic>) {
    let opts = Options::default();
    let mut out = Vec::new();
    let mut sink = FileSink::new(&mut out, "<test>", Form::Kept, store);
    let job = CheckJob::new(&opts, store.is_some(), Form::Kept, "<test>").holding(hold);
    check_stream::run(bytes, block, workers, &job, |c| sink.chunk(c))
        .expect("reading memory does not fail");
    let counts = sink.end().expect("writing memory does not fail");
    (counts.envelopes, std::mem::take(&mut sink.kept))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Code;

    fn diags() -> Vec<Diagnostic> {
        (0..50u32)
            .map(|i| {
                let code = [Code::MissingSig, Code::BadId][i as usize % 2];
                Diagnostic::new(
                    code,
                    i + 1,
                    i % 7 + 1,
                    format!("message {i}\t\u{1b}[2J \u{202e}"),
                )
            })
            .collect()
    }

    /// What one file writes in `form`, its diagnostics handed on in chunks of `per`.
    fn written(name: &str, form: Form, diags: &[Diagnostic], per: usize) -> (String, Counts) {
        let mut out = Vec::new();
        let opts = Options::default();
        let job = CheckJob::new(&opts, false, form, name);
        let mut sink = FileSink::new(&mut out, name, form, None);
        sink.start().expect("memory");
        for c in diags.chunks(per.max(1)) {
            sink.chunk(job.chunk(c.to_vec(), 1, Vec::new()))
                .expect("memory");
        }
        let counts = sink.end().expect("memory");
        (String::from_utf8(out).expect("UTF-8"), counts)
    }

    /// For people: `file:line:col: severity: message [code]`, sanitized, however the
    /// diagnostics were handed on.
    #[test]
    fn lines_for_people_are_the_diagnostics_shown() {
        let name = "dir/\u{202e}name.txt";
        let diags = diags();
        let want: String = (diags.iter())
            .map(|d| {
                format!(
                    "{}:{}\n",
                    sanitize_line(name),
                    sanitize_line(&d.to_string())
                )
            })
            .collect();
        for per in [1, 7, 50] {
            let (text, counts) = written(name, Form::Human, &diags, per);
            assert_eq!(text, want);
            assert_eq!((counts.errors, counts.warnings), (25, 25));
        }
    }

    /// `--json` is the layout of one JSON value of every file's report, written piece by
    /// piece.
    #[test]
    fn json_is_the_document_of_every_file() {
        let diags = diags();
        for (files, per) in [(1, 50), (2, 7), (3, 1)] {
            let mut text = String::from("[");
            let mut reports = Vec::new();
            for i in 0..files {
                let name = format!("f{i}\u{202e}.txt");
                let mine = &diags[..i * 20];
                let form = Form::Json { first_file: i == 0 };
                let (t, c) = written(&name, form, mine, per);
                text.push_str(&t);
                let mut all: Vec<&Diagnostic> = mine.iter().collect();
                let none = protocol::no_envelope();
                if mine.is_empty() {
                    // No chunk counted an envelope: `no-envelope` closes the list.
                    all.push(&none);
                }
                reports.push(
                    serde_json::to_value(json::CheckFile {
                        file: &name,
                        envelopes: c.envelopes,
                        errors: c.errors,
                        warnings: c.warnings,
                        diagnostics: all,
                    })
                    .expect("a value"),
                );
            }
            text.push_str("\n]\n");
            let mut whole = Vec::new();
            json::write(&mut whole, &reports).expect("memory");
            whole.push(b'\n');
            assert_eq!(text, String::from_utf8_lossy(&whole));
        }
    }
}
