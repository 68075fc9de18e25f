//! Writing threads out: canonical envelopes (to re-import or relay), JSON (for scripts) or
//! markdown (for people). Used by `crosstalk export` and the app's `:export`; the whole
//! database is written one thread at a time, so a backup never holds more than one thread
//! in memory.

use std::io::{self, Write};
use std::path::Path;

use serde_json::{Value, json};

use crate::json::stored;
use crate::sanitize::{sanitize, sanitize_line};
use crate::store::{Store, StoreError, ThreadView};

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Every envelope in canonical form, tree order, META kept; importing it into an empty
    /// database rebuilds the same tree with the same ids (a signed or hashed envelope whose
    /// ids were made on receipt is written as received, and gets ids anew).
    Crosstalk,
    /// The `show --json` object.
    Json,
    /// A readable transcript.
    Markdown,
    /// One e-mail message (RFC 5322; Message-ID, In-Reply-To and References thread it in
    /// mail clients), for a thread of one message. An .eml holds one message, so a thread of
    /// several is refused, on standard output too, and nothing is written: `--split DIR`
    /// writes one .eml per message, `mbox` one mailbox. To a FILE named .mbox: a mailbox.
    // (The refusal is `ExportError::NotOneMessage`; this text is also `--help`'s.)
    Eml,
    /// Every message as an e-mail in one mboxrd mailbox, threaded as `eml` is, however many
    /// there are: what notmuch, mutt and Thunderbird read as one folder.
    Mbox,
}

/// The file extensions that choose a format (`:export FILE`, `export -o FILE`), compared
/// without regard to case; any other name writes envelopes ([`Format::Crosstalk`]). The one
/// table the choice, help and the messages that name the formats are made from.
pub(crate) const EXTENSIONS: &[(&str, Format)] = &[
    ("json", Format::Json),
    ("md", Format::Markdown),
    ("markdown", Format::Markdown),
    ("eml", Format::Eml),
    ("mbox", Format::Mbox),
    ("mbx", Format::Mbox),
];

impl Format {
    /// The format a file name asks for (see [`EXTENSIONS`]): `.json` → JSON, `.md` or
    /// `.markdown` → markdown, `.eml` → e-mail, `.mbox`/`.mbx` → mailbox, anything else
    /// (`.crosstalk`, `.aict`, `.txt`, none) → envelopes.
    pub(crate) fn from_path(path: &Path) -> Format {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        EXTENSIONS
            .iter()
            .find(|(e, _)| ext.as_deref() == Some(*e))
            .map_or(Format::Crosstalk, |(_, f)| *f)
    }

    /// The extensions and what any other name gets, as help says it:
    /// "`.json`, `.md`/`.markdown`, `.eml`, `.mbox`, else envelopes".
    pub(crate) fn by_extension() -> String {
        let mut groups: Vec<(Format, Vec<String>)> = Vec::new();
        for (ext, format) in EXTENSIONS {
            match groups.iter_mut().find(|(f, _)| f == format) {
                Some((_, exts)) => exts.push(format!(".{ext}")),
                None => groups.push((*format, vec![format!(".{ext}")])),
            }
        }
        let mut parts: Vec<String> = groups.into_iter().map(|(_, e)| e.join("/")).collect();
        parts.push("else envelopes".into());
        parts.join(", ")
    }

    /// The format's name, as `--format` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Crosstalk => "crosstalk",
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Eml => "eml",
            Format::Mbox => "mbox",
        }
    }
}

/// What an export wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    /// Threads written.
    pub threads: usize,
    /// Messages written.
    pub messages: usize,
}

/// Why an export stopped.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Reading the database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing the output failed.
    #[error("{0}")]
    Write(#[from] io::Error),
    /// E-mail asked for as one message (`eml`) for what is not one message: a thread of
    /// several, or every thread. Nothing is written: an `.eml` file that held a mailbox would
    /// be read as one message by mail clients, its `From ` lines and all.
    #[error(
        "{}, and an .eml file holds one message",
        match (thread, messages) {
            (Some(t), n) => format!("thread {t} has {n} messages"),
            (None, 0) => "the database holds no message".to_string(),
            (None, _) => "every thread holds more than one message".to_string(),
        }
    )]
    NotOneMessage {
        /// The thread, or `None` for every thread.
        thread: Option<String>,
        /// Its messages (for every thread: 0, or 2 when there are more than one).
        messages: usize,
    },
}

/// The format mail is written in to `output`: a file named `.mbox` (or `.mbx`) is a mailbox
/// even when `eml` was asked for, since that name says what it holds; anything else as
/// asked. `None` when `format` is `mbox` and the name is `.eml`: a mailbox never goes under
/// a name that says it is one message.
pub(crate) fn for_output(format: Format, output: Option<&Path>) -> Option<Format> {
    let named = output.map(Format::from_path);
    match (format, named) {
        (Format::Eml, Some(Format::Mbox)) => Some(Format::Mbox),
        (Format::Mbox, Some(Format::Eml)) => None,
        (f, _) => Some(f),
    }
}

/// Writes every thread in the database to `out` in `format`, oldest thread first:
/// envelopes one after another (importing them into an empty database rebuilds every
/// thread with the same ids), a JSON array of `show --json` objects, or the markdown
/// transcripts one after another.
pub fn write_all(
    store: &Store,
    format: Format,
    out: &mut dyn Write,
) -> Result<Written, ExportError> {
    let mut written = Written::default();
    if format == Format::Eml {
        only_one_message(store)?;
    }
    if format == Format::Json {
        out.write_all(b"[")?;
    }
    for id in store.thread_ids()? {
        // A thread removed between the listing and now is simply not written.
        let Some(t) = store.thread(&id)? else {
            continue;
        };
        match format {
            Format::Crosstalk => {
                if written.threads > 0 {
                    out.write_all(b"\n")?;
                }
                out.write_all(t.exported_text().as_bytes())?;
            }
            Format::Json => {
                out.write_all(if written.threads > 0 {
                    b",\n  "
                } else {
                    b"\n  "
                })?;
                crate::json::write_at(&mut &mut *out, &thread_json(&t), 1)
                    .map_err(io::Error::from)?;
            }
            Format::Markdown => {
                if written.threads > 0 {
                    out.write_all(b"\n---\n\n")?;
                }
                out.write_all(markdown(&t).as_bytes())?;
            }
            Format::Eml => out.write_all(mail(&t, Format::Eml).as_bytes())?,
            Format::Mbox => out.write_all(mail(&t, Format::Mbox).as_bytes())?,
        }
        written.threads += 1;
        written.messages += t.messages.len();
    }
    if format == Format::Json {
        out.write_all(if written.threads > 0 {
            b"\n]\n"
        } else {
            b"]\n"
        })?;
    }
    out.flush()?;
    Ok(written)
}

/// Writes a file through `write`: into a temporary file beside `path` (0600), synced, then
/// renamed over `path`, so an interrupted or failed export never leaves half a backup under
/// the name asked for, and what it holds is readable by its owner only.
/// Why a file may not be written: it is the database (or its log), or it exists and was not
/// to be replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TargetProblem {
    /// `file` is the database, its write-ahead log or its shared memory: replacing it would
    /// lose what is stored (the app would go on writing a file no longer there).
    Database,
    /// `file` exists and `force` was not given.
    Exists,
}

/// Whether `file` may be written (by [`write_file`], a backup) while `database` is in use: a
/// command replaces nothing it was not told to, and never the database.
pub(crate) fn target_problem(file: &Path, database: &Path, force: bool) -> Option<TargetProblem> {
    // Where a path leads, whether the file is there or not yet (SQLite makes its log and
    // journal as it writes): links and `..` resolved through the folder that holds it.
    let resolved = |p: &Path| -> Option<std::path::PathBuf> {
        if let Ok(p) = p.canonicalize() {
            return Some(p);
        }
        let name = p.file_name()?;
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        Some(dir.canonicalize().ok()?.join(name))
    };
    let target = resolved(file);
    // A hard link is the same file under another name.
    let inode = |p: &Path| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
    };
    let same = |a: &Path| {
        (target.is_some() && resolved(a) == target)
            || inode(a).is_some_and(|i| inode(file) == Some(i))
    };
    let own = crate::store::DATABASE_FILES.map(|suffix| crate::store::beside(database, suffix));
    if own.iter().any(|d| same(d)) {
        return Some(TargetProblem::Database);
    }
    (!force && (file.exists() || file.is_symlink())).then_some(TargetProblem::Exists)
}

pub fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<Written, ExportError>,
) -> Result<Written, ExportError> {
    let dir = crate::store::folder_of(path);
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    let written = {
        let mut buffered = io::BufWriter::new(file.as_file_mut());
        let written = write(&mut buffered)?;
        buffered.flush()?;
        written
    };
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(written)
}

/// Refuses, before anything is written, to write every thread as one `.eml` message unless
/// the database holds exactly one message. Threads are read only until a second message is
/// found.
fn only_one_message(store: &Store) -> Result<(), ExportError> {
    let mut messages = 0;
    for id in store.thread_ids()? {
        messages += store.thread(&id)?.map_or(0, |t| t.messages.len());
        if messages > 1 {
            break;
        }
    }
    match messages {
        1 => Ok(()),
        n => Err(ExportError::NotOneMessage {
            thread: None,
            messages: n.min(2),
        }),
    }
}

/// Writes one thread in `format`; as `eml` only a thread of one message (see
/// [`ExportError::NotOneMessage`]), refused before anything is written.
pub fn write_thread(
    t: &ThreadView,
    format: Format,
    out: &mut dyn Write,
) -> Result<Written, ExportError> {
    if format == Format::Eml && t.messages.len() != 1 {
        return Err(ExportError::NotOneMessage {
            thread: Some(t.id.clone()),
            messages: t.messages.len(),
        });
    }
    out.write_all(render(t, format).as_bytes())?;
    out.flush()?;
    Ok(Written {
        threads: 1,
        messages: t.messages.len(),
    })
}

/// Replies are indented one step per level down to this depth; deeper ones stay at this
/// indentation and say their depth as a number, as mail clients do. Indenting every level
/// made output quadratic in a chain's length: a 20 000-deep chain printed hundreds of
/// megabytes.
pub(crate) const MAX_INDENT: usize = 8;

/// How many indentation steps a message at `depth` gets, and the `[depth N]` label that
/// stands in for the rest when it is deeper than [`MAX_INDENT`].
pub fn indent(depth: usize) -> (usize, Option<String>) {
    if depth > MAX_INDENT {
        (MAX_INDENT, Some(format!("[depth {depth}]")))
    } else {
        (depth, None)
    }
}

/// `{"id", "context", "messages": [...]}` with messages in tree order.
pub(crate) fn thread_json(t: &ThreadView) -> Value {
    json!({
        "id": t.id,
        "context": t.context,
        "messages": t.messages.iter().map(stored).collect::<Vec<_>>(),
    })
}

/// The thread in `format` (as [`Format::Eml`], one message: [`write_thread`] refuses more).
fn render(t: &ThreadView, format: Format) -> String {
    match format {
        Format::Crosstalk => t.exported_text(),
        Format::Json => {
            let mut buf = Vec::new();
            // Writing to memory cannot fail, and the value holds only strings and numbers.
            let _ = crate::json::write(&mut buf, &thread_json(t));
            buf.push(b'\n');
            String::from_utf8_lossy(&buf).into_owned()
        }
        Format::Markdown => markdown(t),
        Format::Eml | Format::Mbox => mail(t, format),
    }
}

/// The thread's envelopes as mail, threaded by References up to its root: the message
/// alone in [`Format::Eml`] (its callers see to it that there is one), else an mbox. Mail is
/// ASCII throughout (headers encoded, bodies 7bit, quoted-printable or base64), so it is
/// text.
fn mail(t: &ThreadView, format: Format) -> String {
    use crate::transport::mail::{Outgoing, build, write_mbox};
    let outgoing = Outgoing::thread(t);
    if let (Format::Eml, [one]) = (format, outgoing.as_slice()) {
        return String::from_utf8_lossy(&build(one)).into_owned();
    }
    let mut buf = Vec::new();
    // Writing to memory cannot fail.
    let _ = write_mbox(outgoing.iter().map(|o| (o, build(o))), &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// A transcript for people: one section per message in tree order, replies marked with
/// their depth, bodies quoted, META as lists. Text is sanitized: it came from elsewhere.
fn markdown(t: &ThreadView) -> String {
    let mut out = String::new();
    let title = t.context.as_deref().unwrap_or("Untitled thread");
    out.push_str(&format!("# {}\n\n", sanitize_line(title)));
    out.push_str(&format!(
        "Thread `{}`, {} messages.\n",
        t.id,
        t.messages.len()
    ));
    for m in &t.messages {
        let e = &m.envelope;
        let arrow = match indent(m.depth) {
            (0, _) => String::new(),
            (steps, None) => format!("{} ", "↳".repeat(steps)),
            (steps, Some(label)) => format!("{} {label} ", "↳".repeat(steps)),
        };
        out.push_str(&format!(
            "\n## {arrow}{} → {} · {} · {}\n\n",
            sanitize_line(&e.banner.from),
            sanitize_line(&e.banner.to),
            sanitize_line(m.intent.as_deref().unwrap_or("(no intent)")),
            m.received_at
                .replace('T', " ")
                .get(..16)
                .unwrap_or(&m.received_at),
        ));
        out.push_str(&format!("Message `{}`", m.id));
        if let Some(p) = &m.parent {
            out.push_str(&format!(", in reply to `{p}`"));
        }
        out.push_str(&format!(", {}.\n\n", m.status.replace('_', " ")));
        for block in &e.meta {
            out.push_str(&format!("- **{}**:", sanitize_line(&block.namespace)));
            for (k, v) in &block.entries {
                out.push_str(&format!(" {}: {};", sanitize_line(k), sanitize_line(v)));
            }
            out.push('\n');
        }
        if !e.meta.is_empty() {
            out.push('\n');
        }
        match &e.body {
            Some(b) if !b.is_empty() => {
                for line in sanitize(b).split('\n') {
                    out.push_str(if line.is_empty() { ">" } else { "> " });
                    out.push_str(line);
                    out.push('\n');
                }
            }
            _ => out.push_str("*(empty body)*\n"),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A format added to the enum gets an extension here, so `:export` and help know it.
    #[test]
    fn every_format_has_an_extension_and_the_extension_chooses_it() {
        use clap::ValueEnum as _;
        for f in Format::value_variants() {
            assert!(
                *f == Format::Crosstalk || EXTENSIONS.iter().any(|(_, g)| g == f),
                "{} has no extension in EXTENSIONS",
                f.name()
            );
        }
        for (ext, f) in EXTENSIONS {
            let upper = format!("thread.{}", ext.to_ascii_uppercase());
            assert_eq!(Format::from_path(Path::new(&upper)), *f, "{upper}");
        }
        assert_eq!(
            Format::from_path(Path::new("backup.txt")),
            Format::Crosstalk
        );
        assert_eq!(
            Format::by_extension(),
            ".json, .md/.markdown, .eml, .mbox/.mbx, else envelopes"
        );
    }
}
