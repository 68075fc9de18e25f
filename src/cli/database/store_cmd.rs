//! The commands over the database: `import`, `threads`, `show`, `export`, `search`, `reply`.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use crate::cli::output::Stdout;
use crate::cli::{EXIT_INVALID, EXIT_USAGE, Failure, export, input};
use crate::protocol::Options;
use crate::sanitize::sanitize_line;
use crate::store::{Outcome, Store, StoreError, ThreadView};

/// Opens the database named by `--db`, `$CROSSTALK_DB`, or the platform default.
pub(crate) fn open(db: Option<&Path>) -> Result<Store, Failure> {
    let path = db_path(db)?;
    let _ = OPENED.set(path.clone());
    let mut store = Store::open(&path).map_err(|e| match e {
        // These name the database themselves.
        StoreError::ReadOnly { .. }
        | StoreError::DiskFull { .. }
        | StoreError::Busy { .. }
        | StoreError::Corrupt { .. }
        | StoreError::CannotCreate { .. } => Failure::usage(e.to_string()),
        e => Failure::usage(format!("{}: {e}", path.display())),
    })?;
    store.remember_soundness_in(crate::config::state_dir().join("checked"));
    Ok(store)
}

/// The database this command opened, to name in errors of SQLite's that name no file (a
/// damaged page met while reading, a full disk): a command opens one database.
static OPENED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Refuses to write `file` over the database, whatever `force` says, and over any other
/// existing file unless `force` (see [`export::target_problem`]).
pub(in crate::cli) fn refuse_overwrite(
    db: Option<&Path>,
    file: &Path,
    force: bool,
) -> Result<(), Failure> {
    let shown = sanitize_line(&file.display().to_string()).into_owned();
    match export::target_problem(file, &db_path(db)?, force) {
        None => Ok(()),
        Some(export::TargetProblem::Database) => Err(Failure::usage(format!(
            "`{shown}` is the database itself; write to another file"
        ))),
        Some(export::TargetProblem::Exists) => Err(Failure::usage(format!(
            "`{shown}` exists; give --force to replace it, or write to another file"
        ))),
    }
}

/// Whether the database was named (`--db`, `CROSSTALK_DB`) rather than the default one.
fn named(db: Option<&Path>) -> bool {
    db.is_some() || std::env::var_os("CROSSTALK_DB").is_some()
}

/// [`open`] for a command that reads or changes what is stored: a database that does not
/// exist is refused, never made. A mistyped `--db` would otherwise get a new, empty database
/// and report success (no threads, an empty export), and `crosstalk threads` on a new machine
/// would leave an empty database behind; only what stores (`import`, `watch`, `serve`,
/// `send`, the app) makes one.
pub(crate) fn open_existing(db: Option<&Path>) -> Result<Store, Failure> {
    let path = db_path(db)?;
    if !path.exists() {
        let shown = sanitize_line(&path.display().to_string()).into_owned();
        return Err(Failure::usage(if named(db) {
            format!(
                "no database at `{shown}`; check the path given with --db or CROSSTALK_DB \
                 (`crosstalk import` makes a new one)"
            )
        } else {
            format!(
                "no database yet at `{shown}`: nothing has been stored; start with `crosstalk \
                 import FILE` or the app (`crosstalk`), or try `crosstalk --demo`"
            )
        }));
    }
    open(db)
}

/// The database the commands use: `--db`, else `CROSSTALK_DB`, else the default path.
pub(in crate::cli) fn db_path(db: Option<&Path>) -> Result<PathBuf, Failure> {
    match db
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("CROSSTALK_DB").map(PathBuf::from))
    {
        Some(p) => Ok(p),
        None => crate::store::default_path().ok_or_else(|| {
            Failure::usage("no home directory to keep the database in; name one with --db PATH")
        }),
    }
}

pub(in crate::cli) fn store_failure(e: StoreError) -> Failure {
    let e = match OPENED.get() {
        Some(path) => e.located(path),
        None => e,
    };
    Failure::usage(e.to_string())
}

/// Progress on standard error, only when it is a terminal: a bulk import of a large file
/// says how far it is instead of going silent.
struct Progress {
    total: Option<u64>,
    shown: std::time::Instant,
    on: bool,
    phase: &'static str,
    last: u64,
}

impl Progress {
    fn new(total: Option<u64>) -> Self {
        Progress {
            total,
            shown: std::time::Instant::now(),
            on: std::io::stderr().is_terminal(),
            phase: "storing",
            last: 0,
        }
    }

    fn update(&mut self, done: u64) {
        if done < self.last {
            self.phase = "importing";
        }
        self.last = done;
        if !self.on || self.shown.elapsed().as_millis() < 200 {
            return;
        }
        self.shown = std::time::Instant::now();
        let mb = |b: u64| b as f64 / 1e6;
        match self.total {
            Some(t) if t > 0 => eprint!(
                "\r{} {:.1}/{:.1} MB ({:.0}%)   ",
                self.phase,
                mb(done),
                mb(t),
                100.0 * done as f64 / t as f64
            ),
            _ => eprint!("\r{} {:.1} MB   ", self.phase, mb(done)),
        }
    }

    fn finish(&self) {
        if self.on && self.last > 0 {
            eprint!("\r\x1b[K");
        }
    }
}

/// One input's report for `import --json`: a script learns that an input was read as mail
/// as a person does.
#[derive(serde::Serialize)]
struct JsonReport {
    #[serde(flatten)]
    report: crate::store::ImportReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    read_as_mail: Option<crate::transport::mail_import::ReadAsMail>,
}

/// An input that could not be read, and why (already sanitized for the terminal). In
/// `import --json` it stands in the input's place in the list, with no items, so a script
/// learns which input was not imported and why without reading standard error.
#[derive(Clone, serde::Serialize)]
struct NotRead {
    #[serde(rename = "source")]
    name: String,
    #[serde(rename = "not_read")]
    why: String,
    items: [(); 0],
    diagnostics: [(); 0],
}

impl NotRead {
    fn new(name: String, why: String) -> Self {
        NotRead {
            name,
            why,
            items: [],
            diagnostics: [],
        }
    }
}

/// One entry of `import --json`: an input's report, or why it was not read.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum JsonEntry {
    Read(JsonReport),
    NotRead(NotRead),
}

/// `crosstalk import`: every input that can be read is imported (committed in pieces); a
/// report per envelope. Inputs that cannot be read are reported on standard error with why,
/// the others imported all the same, and the command then exits 2 (an I/O error).
pub(crate) fn import(
    db: Option<&Path>,
    files: &[PathBuf],
    as_json: bool,
    opts: &Options,
    fresh_ids: bool,
    operator: &[String],
) -> Result<u8, Failure> {
    let mut opened = open(db)?;
    // What arrives is "addressed to me" or "to relay" by the config's addresses, as in the app.
    opened
        .set_operator_addresses(operator)
        .map_err(store_failure)?;
    let mut store = Some(opened);
    // Joined when this returns, however it returns.
    let mut closing = Closing(None);
    let stdin = [PathBuf::from("-")];
    let files = if files.is_empty() { &stdin[..] } else { files };
    // A directory stands for its .crosstalk/.aict files, sorted.
    let expanded = crate::transport::file::expand(files);
    let files = &expanded[..];
    let mut ok = true;
    let mut reports = Reports {
        as_json,
        entries: Vec::new(),
        not_read: Vec::new(),
    };
    let mut out = Stdout::new();
    for (i, f) in files.iter().enumerate() {
        // File names reach the terminal: they may hold control characters too.
        let name = if f.as_os_str() == "-" {
            "<stdin>".to_string()
        } else {
            sanitize_line(&f.to_string_lossy()).into_owned()
        };
        let Some(open_store) = store.as_mut() else {
            break;
        };
        let (report, mail) = match import_file(open_store, f, &name, opts, fresh_ids) {
            Ok(done) => done,
            Err(Unimported::NotRead(why)) => {
                reports.not_read(&mut out, name, why);
                continue;
            }
            Err(Unimported::Failed(e)) => {
                // The database failed: nothing more can be imported. Say which inputs were
                // not (this one may be in part: importing it again completes it).
                let _ = out.flush();
                let rest: Vec<String> = files[i..]
                    .iter()
                    .map(|f| format!("`{}`", sanitize_line(&f.to_string_lossy())))
                    .collect();
                return Err(Failure::usage(format!(
                    "{e}\nnot imported (or not completely): {}",
                    rest.join(", ")
                )));
            }
        };
        if i + 1 == files.len() {
            // The last input is stored: the database is closed (the rest of the log copied
            // into it and the log removed) while the report is printed.
            closing.0 = store.take().map(|s| std::thread::spawn(move || drop(s)));
        }
        // A conflict is kept, yet an error: the operator must look at it.
        ok &= report.count(Outcome::Rejected) == 0
            && report.count(Outcome::Conflict) == 0
            && !report.items.is_empty();
        if as_json {
            reports.entries.push(JsonEntry::Read(JsonReport {
                report,
                read_as_mail: mail,
            }));
            continue;
        }
        print_report(&mut out, &name, &report, mail.as_ref());
    }
    if as_json {
        crate::cli::output::print_json(&mut out, &reports.entries)?;
    }
    out.finish()?;
    if !reports.not_read.is_empty() {
        let names: Vec<String> = (reports.not_read.iter())
            .map(|n| format!("`{}` ({})", n.name, n.why))
            .collect();
        eprintln!(
            "crosstalk: {} of {} inputs not read, so not imported: {}",
            reports.not_read.len(),
            files.len(),
            names.join(", ")
        );
        return Ok(EXIT_USAGE);
    }
    Ok(if ok { 0 } else { EXIT_INVALID })
}

/// Why an input was not imported: it could not be read (why, for the operator), or the
/// database failed.
enum Unimported {
    NotRead(String),
    Failed(StoreError),
}

/// Imports input `f` (shown as `name`) into `store`, with a progress line while it is read.
/// Mail (by extension, else by its first bytes) is decoded first.
fn import_file(
    store: &mut Store,
    f: &Path,
    name: &str,
    opts: &Options,
    fresh_ids: bool,
) -> Result<
    (
        crate::store::ImportReport,
        Option<crate::transport::mail_import::ReadAsMail>,
    ),
    Unimported,
> {
    let (mut reader, size) = open_input(f).map_err(|e| Unimported::NotRead(e.to_string()))?;
    let mut progress = Progress::new(size);
    let path = (f.as_os_str() != "-").then_some(f);
    let result = crate::transport::mail_import::import_input(
        store,
        name,
        path,
        &mut reader,
        opts,
        &mut |n| progress.update(n),
        fresh_ids,
    );
    progress.finish();
    result.map_err(|e| match e {
        // A directory is read for its envelope files; this one has none.
        StoreError::Read { error, .. } if f.is_dir() => {
            Unimported::NotRead(format!("{error}, and it holds no .crosstalk or .aict file"))
        }
        StoreError::Read { error, .. } => Unimported::NotRead(error.to_string()),
        e => Unimported::Failed(e),
    })
}

/// The input `f` opened, with its size when known (for the progress line); `-` is standard
/// input.
fn open_input(f: &Path) -> std::io::Result<(Box<dyn Read>, Option<u64>)> {
    if f.as_os_str() == "-" {
        return Ok((Box::new(std::io::stdin().lock()), None));
    }
    let file = std::fs::File::open(f)?;
    let size = file.metadata().ok().map(|m| m.len());
    Ok((Box::new(file), size))
}

/// What `import` says at the end: the inputs not read, and (with `--json`) every entry.
struct Reports {
    as_json: bool,
    entries: Vec<JsonEntry>,
    not_read: Vec<NotRead>,
}

impl Reports {
    /// Input `name` could not be read, for reason `why`: said on standard error now (after
    /// what standard output holds so far), and kept for the summary and the JSON list.
    fn not_read(&mut self, out: &mut Stdout, name: String, why: String) {
        let _ = out.flush();
        eprintln!("crosstalk: cannot read `{name}`: {why}; not imported");
        let n = NotRead::new(name, why);
        if self.as_json {
            self.entries.push(JsonEntry::NotRead(n.clone()));
        }
        self.not_read.push(n);
    }
}

/// The text report of input `name`: a line per envelope, with what needs the operator's eye
/// beneath it, and the counts.
fn print_report(
    out: &mut Stdout,
    name: &str,
    report: &crate::store::ImportReport,
    mail: Option<&crate::transport::mail_import::ReadAsMail>,
) {
    let name = sanitize_line(name);
    // Line numbers of mail are those of its decoded text, named as `check` names it.
    let at = match mail {
        Some(mail) => {
            let _ = writeln!(out, "{}", sanitize_line(&mail.describe(&name)));
            sanitize_line(&mail.decoded_name).into_owned()
        }
        None => name.to_string(),
    };
    for d in &report.diagnostics {
        let _ = writeln!(out, "{at}:{}", sanitize_line(&d.to_string()));
    }
    for item in &report.items {
        print_item(out, &at, item);
    }
    let conflicts = match report.count(Outcome::Conflict) {
        0 => String::new(),
        n => format!(", {n} id conflict{}", if n == 1 { "" } else { "s" }),
    };
    let _ = writeln!(
        out,
        "{name}: {} imported, {} duplicate, {} rejected{conflicts}{}",
        report.count(Outcome::Imported),
        report.count(Outcome::Duplicate),
        report.count(Outcome::Rejected),
        match report.count(Outcome::Signed) {
            0 => String::new(),
            n => format!(", {n} signed"),
        }
    );
}

/// One envelope's line of the text report (`at` names the input), with the trust alarms
/// and, for one not stored as it is, its errors.
fn print_item(out: &mut Stdout, at: &str, item: &crate::store::ImportItem) {
    let what = match item.outcome {
        Outcome::Imported => "imported",
        Outcome::Duplicate => "duplicate",
        Outcome::Rejected => "rejected",
        Outcome::Conflict => "id conflict, kept as a version of",
        Outcome::Signed => "signed copy of the stored (unsigned)",
    };
    let id = (item.message.as_deref())
        .map(|m| format!(" {m}"))
        .unwrap_or_default();
    let thread = (item.thread.as_deref())
        .map(|t| format!(" (thread {t})"))
        .unwrap_or_default();
    let _ = writeln!(out, "{at}:{}: {what}{id}{thread}", item.span.start_line);
    // Trust alarms are said even for an envelope imported fine: a changed key or a
    // revocation without effect is what the operator must act on; so is a consent that
    // grants nothing because its value or its limit cannot be read.
    let alarm = |d: &&crate::protocol::Diagnostic| {
        crate::store::is_trust_alarm(d.code)
            || matches!(
                d.code,
                crate::protocol::Code::BadExpires | crate::protocol::Code::UnknownConsent
            )
    };
    for d in item.diagnostics.iter().filter(alarm) {
        let _ = writeln!(out, "  {at}:{}", sanitize_line(&d.to_string()));
    }
    if matches!(item.outcome, Outcome::Rejected | Outcome::Conflict) {
        for d in item.diagnostics.iter().filter(|d| d.is_error()) {
            let _ = writeln!(out, "  {at}:{}", sanitize_line(&d.to_string()));
        }
        let bad_id = |d: &&crate::protocol::Diagnostic| d.code == crate::protocol::Code::BadId;
        let errors = || item.diagnostics.iter().filter(|d| d.is_error());
        if item.outcome == Outcome::Rejected && errors().all(|d| bad_id(&d)) {
            let _ = writeln!(
                out,
                "  hint: `crosstalk import --fresh-ids` imports it with fresh ids, keeping these as aliases"
            );
        }
    }
}

/// A database being closed on a thread of its own; dropping this waits for it.
struct Closing(Option<std::thread::JoinHandle<()>>);

impl Drop for Closing {
    fn drop(&mut self) {
        if let Some(closing) = self.0.take() {
            let _ = closing.join();
        }
    }
}

/// `crosstalk threads`: newest activity first.
pub(crate) fn threads(
    db: Option<&Path>,
    limit: usize,
    archived: bool,
    as_json: bool,
) -> Result<u8, Failure> {
    use crate::store::StateFilter;
    let store = open_existing(db)?;
    let state = if archived {
        StateFilter::Archived
    } else {
        StateFilter::All
    };
    // One more than shown says whether the list was cut.
    let mut threads: Vec<_> = store
        .thread_rows_in("", state, limit.saturating_add(1))
        .map_err(store_failure)?
        .into_iter()
        .map(|r| r.summary)
        .collect();
    let cut = threads.len() > limit;
    if cut {
        threads.truncate(limit);
        let n = match limit {
            1 => "the thread".to_string(),
            n => format!("the {n} threads"),
        };
        eprintln!("{n} with the newest activity shown, and more stored; --limit N shows more");
    }
    // Archived threads are left out as the app's list leaves them out: said, so that a
    // thread not listed is not taken for one lost.
    let left_out = if archived {
        0
    } else {
        let (listed, all) = store
            .thread_counts("", StateFilter::All)
            .map_err(store_failure)?;
        all.saturating_sub(listed)
    };
    match left_out {
        0 => {}
        1 => eprintln!("1 archived thread not listed; --archived lists it"),
        n => eprintln!("{n} archived threads not listed; --archived lists them"),
    }
    let mut out = Stdout::new();
    if as_json {
        crate::cli::output::print_json(&mut out, &threads)?;
        out.finish()?;
        return Ok(0);
    }
    for t in &threads {
        let waiting = if t.awaiting_reply {
            "  [awaiting reply]"
        } else {
            ""
        };
        let since = t.archived_at.as_deref().map_or(String::new(), |at| {
            format!("  [archived {}]", sanitize_line(&short_time(at)))
        });
        let _ = writeln!(
            out,
            "{}  {:>4} msgs  {}  {}  {}{waiting}{since}",
            t.id,
            t.message_count,
            short_time(&t.last_activity),
            sanitize_line(t.context.as_deref().unwrap_or("(no context)")),
            sanitize_line(&t.participants.join(", ")),
        );
    }
    if threads.is_empty() && archived && !cut {
        let _ = writeln!(
            out,
            "no archived threads (`crosstalk archive THREAD` archives one)"
        );
    } else if threads.is_empty() && left_out > 0 && !cut {
        let _ = writeln!(
            out,
            "no threads listed: every thread is archived (`crosstalk threads --archived` lists them)"
        );
    } else if threads.is_empty() && !cut {
        let _ = writeln!(
            out,
            "no threads yet: `crosstalk import FILE` or paste into `crosstalk import -`"
        );
    }
    out.finish()?;
    Ok(0)
}

/// A thread by its id or, when no thread has that id, by the first characters of exactly
/// one thread id.
pub(in crate::cli) fn load_thread(store: &Store, id: &str) -> Result<ThreadView, Failure> {
    if let Some(t) = store.thread(id).map_err(store_failure)? {
        return Ok(t);
    }
    let found = store.ids_with_prefix(id, 2).map_err(store_failure)?;
    let shown = sanitize_line(id).into_owned();
    match found.threads.as_slice() {
        [only] => store
            .thread(only)
            .map_err(store_failure)?
            .ok_or_else(|| Failure {
                code: EXIT_INVALID,
                message: format!("thread `{only}` was removed while being read"),
            }),
        [] => Err(Failure {
            code: EXIT_INVALID,
            message: format!("no thread `{shown}`; `crosstalk threads` lists them"),
        }),
        _ => Err(Failure {
            code: EXIT_INVALID,
            message: format!(
                "more than one thread id starts with `{shown}`; give more of it (`crosstalk threads` lists them)"
            ),
        }),
    }
}

/// `crosstalk show`: the thread as an indented tree, or JSON. Replies deeper than
/// [`export::MAX_INDENT`] are not indented further but say their depth.
pub(crate) fn show(db: Option<&Path>, id: &str, as_json: bool) -> Result<u8, Failure> {
    let store = open_existing(db)?;
    let t = load_thread(&store, id)?;
    let mut out = Stdout::new();
    if as_json {
        let mut json = export::thread_json(&t);
        crate::cli::database::integrity::annotate(&store, &mut json).map_err(store_failure)?;
        crate::cli::output::print_json(&mut out, &json)?;
        out.finish()?;
        return Ok(0);
    }
    let _ = writeln!(
        out,
        "thread {}  {}",
        t.id,
        sanitize_line(t.context.as_deref().unwrap_or("(no context)"))
    );
    for m in &t.messages {
        let e = &m.envelope;
        let first = e.first_line();
        let (steps, label) = export::indent(m.depth);
        let label = label.map(|l| l + " ").unwrap_or_default();
        let _ = writeln!(
            out,
            "{}{label}{} {} → {}  {}  {}  [{}]{}",
            "  ".repeat(steps + 1),
            sanitize_line(m.intent.as_deref().unwrap_or("?")),
            crate::sanitize::marked_id(&e.banner.from),
            crate::sanitize::marked_id(&e.banner.to),
            crate::cells::truncate(&sanitize_line(first), 60),
            short_time(&m.received_at),
            m.id,
            crate::cli::database::integrity::note(&store, &m.id).map_err(store_failure)?,
        );
    }
    out.finish()?;
    Ok(0)
}

/// `crosstalk export`: one thread (by id or the first characters of one) or every thread,
/// exact bytes to a file or pipe; on a terminal the text is shown with placeholders for what
/// a terminal would act on. A file is written beside its final name and renamed into place,
/// 0600, so an interrupted export never leaves half a backup under the name asked for.
pub(crate) fn export(
    db: Option<&Path>,
    thread: Option<&str>,
    all: bool,
    format: Option<export::Format>,
    output: Option<(&Path, bool)>,
) -> Result<u8, Failure> {
    let store = open_existing(db)?;
    if let Some((path, force)) = output {
        refuse_overwrite(db, path, force)?;
    }
    let output = output.map(|(path, _)| path);
    let format = format
        .or(output.map(export::Format::from_path))
        .unwrap_or(export::Format::Crosstalk);
    let Some(format) = export::for_output(format, output) else {
        return Err(Failure::usage(
            "an .eml file holds one message, not a mailbox: name the file .mbox, or drop --format mbox to write one message",
        ));
    };
    let one = match thread {
        Some(id) if !all => Some(load_thread(&store, id)?),
        _ => None,
    };
    let write = |out: &mut dyn Write| match &one {
        Some(t) => export::write_thread(t, format, out),
        None => export::write_all(&store, format, out),
    };
    let Some(path) = output else {
        let mut out = Stdout::new();
        write(&mut out).map_err(|e| export_failure(e, "standard output"))?;
        out.finish()?;
        return Ok(0);
    };
    let shown = sanitize_line(&path.display().to_string()).into_owned();
    let written = export::write_file(path, write).map_err(|e| export_failure(e, &shown))?;
    eprintln!(
        "wrote {} thread{} ({} message{}) to {shown} as {}",
        written.threads,
        if written.threads == 1 { "" } else { "s" },
        written.messages,
        if written.messages == 1 { "" } else { "s" },
        format.name()
    );
    Ok(0)
}

fn export_failure(e: export::ExportError, to: &str) -> Failure {
    match e {
        export::ExportError::Store(e) => store_failure(e),
        e @ export::ExportError::NotOneMessage { .. } => Failure::usage(format!(
            "{e}; nothing written: use `--split DIR` for one .eml per message, or `--format mbox` (or `-o FILE.mbox`) for one mailbox"
        )),
        export::ExportError::Write(e) => Failure::usage(format!(
            "cannot write {to}: {e} (check that the directory exists and is writable, and that the disk has room)"
        )),
    }
}

/// `crosstalk search`.
pub(crate) fn search(
    db: Option<&Path>,
    query: &str,
    limit: usize,
    as_json: bool,
) -> Result<u8, Failure> {
    if query.trim().is_empty() {
        return Err(Failure::usage(
            "nothing to search for: give one or more words (`crosstalk search port number`)",
        ));
    }
    let store = open_existing(db)?;
    let results = store.search_results(query, limit).map_err(store_failure)?;
    if let Some(n) = results.ranked_newest {
        eprintln!(
            "{} messages match; these are the best of the newest {n} (add a word to narrow the search)",
            results.matches
        );
    }
    let hits = results.hits;
    let mut out = Stdout::new();
    let found = if hits.is_empty() { EXIT_INVALID } else { 0 };
    if as_json {
        crate::cli::output::print_json(&mut out, &hits)?;
        out.finish()?;
        return Ok(found);
    }
    for h in &hits {
        // The text of a conflicting version kept beside the message says so.
        let version = h
            .version
            .map(|n| format!("  (conflicting version {n})"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{}  {}  {}  {}{version}",
            h.thread,
            h.message,
            sanitize_line(h.context.as_deref().unwrap_or("")),
            sanitize_line(&h.snippet)
        );
    }
    out.finish()?;
    Ok(found)
}

/// The message `id` names: its whole id or the first characters of one (as `show`, `poll`
/// and `delete` take them). Exit 1 when none or several match.
pub(in crate::cli) fn one_message(
    store: &Store,
    id: &str,
) -> Result<crate::store::StoredMessage, Failure> {
    use crate::store::MessageMatch;
    match store.find_message(id).map_err(store_failure)? {
        MessageMatch::One(m) => Ok(*m),
        MessageMatch::None => Err(Failure {
            code: EXIT_INVALID,
            message: format!("no message `{}` in the database", sanitize_line(id)),
        }),
        MessageMatch::Many(ids) => Err(Failure {
            code: EXIT_INVALID,
            message: format!(
                "`{}` starts several message ids ({}…); type more of it",
                sanitize_line(id),
                ids.join(", ")
            ),
        }),
    }
}

/// `crosstalk reply`: a draft reply (headers filled in), saved as a draft — in the app's
/// drafts list (`D`) and the thread's ✎, not yet a message of the thread — and printed.
/// The app files it as a message when the operator copies it (C-y). It is from `desk`
/// (`Config::desk_address_as`), as the app's `r` writes. The user header is `--user`
/// (checked as an option), else the config's `[compose] user`, as for `new`.
pub(crate) fn reply(
    db: Option<&Path>,
    message: &str,
    desk: &str,
    intent: Option<&str>,
    body: Option<&str>,
    (user, configured_user): (Option<&str>, Option<&str>),
    opts: &Options,
) -> Result<u8, Failure> {
    for (option, value) in [("--intent", intent), ("--user", user)] {
        if let Some(v) = value {
            input::header_arg(option, v)?;
        }
    }
    let body = input::body(body)?;
    if body.trim().is_empty() {
        eprintln!("note: the reply's body is empty (--body TEXT, or --body - to read it)");
    }
    let user = crate::config::user(user, configured_user);
    let mut store = open_existing(db)?;
    let original = one_message(&store, message)?;
    let env = crate::store::reply_envelope(&original, desk, intent, &body, &user, store.new_id());
    let text = crate::protocol::render(&env);
    // Checked as `new` checks what it writes: what is wrong is said now, not when the app
    // refuses to copy the draft.
    let ex = crate::protocol::extract(&text, opts);
    crate::cli::reading::parse_cmd::report("<reply>", ex.all_diagnostics());
    let form = crate::app::writing::composer::Form::from_envelope(&env);
    let form = serde_json::to_string(&form)
        .map_err(|e| Failure::usage(format!("cannot save the draft: {e}")))?;
    store
        .save_draft(&env, &text, &form)
        .map_err(store_failure)?;
    eprintln!(
        "draft {} saved in thread {} (not yet a message: `D` in the app resumes it, C-y there copies and files it)",
        sanitize_line(env.message().unwrap_or("?")),
        sanitize_line(&original.thread)
    );
    let mut out = Stdout::new();
    let _ = out.write_all(text.as_bytes());
    out.finish()?;
    Ok(if ex.error_count() == 0 {
        0
    } else {
        EXIT_INVALID
    })
}

/// `2026-11-21T21:30:05.123Z` → `2026-11-21 21:30`.
fn short_time(t: &str) -> String {
    let t = t.replace('T', " ");
    t.get(..16).unwrap_or(&t).to_string()
}
