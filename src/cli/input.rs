//! Reading command input: a file, or standard input for `-` or no file.

use std::io::Read;
use std::path::Path;

use super::Failure;
use crate::protocol::{self, Diagnostic, Extraction, Options};
use crate::transport::mail_import;

/// Text read from one input, with a name to prefix diagnostics.
pub(super) struct Input {
    /// `path` as given, or `<stdin>`; for mail, the name of its decoded text.
    pub name: String,
    /// The text, invalid UTF-8 replaced; for mail, the envelopes its messages hold.
    pub text: String,
    /// What reading it found before any envelope, in order: bytes that had to be replaced
    /// (the first place only); for mail, every part not read as its sender's client showed
    /// it (see `transport::mail_parts::Note`).
    pub decoding: Vec<Diagnostic>,
}

impl Input {
    /// Finds the envelopes, with what reading the input found first among the diagnostics.
    pub(super) fn extract(&self, opts: &Options) -> Extraction {
        let mut ex = protocol::extract(&self.text, opts);
        ex.diagnostics.splice(0..0, self.decoding.iter().cloned());
        ex
    }
}

/// Reads `path`, or standard input when it is `None` or `-`, as text.
pub(super) fn read(path: Option<&Path>) -> Result<Input, Failure> {
    let (name, bytes) = read_bytes(path)?;
    Ok(text(name, bytes))
}

/// Reads an input for its envelopes as `import` does: mail (by its name's extension, else by
/// its first bytes; see `transport::mail_sniff`) is decoded, with `store` saying which
/// messages are stored already (as the import asks it); anything else is text. A note on
/// standard error says when an input was read as mail, since line numbers are then those of
/// the decoded text.
pub(super) fn read_envelopes(
    path: Option<&Path>,
    opts: &Options,
    store: Option<&crate::store::Store>,
) -> Result<Input, Failure> {
    let (name, bytes) = read_bytes(path)?;
    let path = path.filter(|p| p.as_os_str() != "-");
    let Some(kind) = crate::transport::mail::sniff(path, &bytes) else {
        return Ok(text(name, bytes));
    };
    Ok(mail(name, kind, &bytes, opts, store))
}

/// The input `name`, whose `bytes` are mail of `kind`, decoded as [`read_envelopes`] decodes
/// it (saying so on standard error).
pub(super) fn mail(
    name: String,
    kind: crate::transport::mail::MailKind,
    bytes: &[u8],
    opts: &Options,
    store: Option<&crate::store::Store>,
) -> Input {
    let decoded = mail_import::decode_against(bytes, kind, opts, store);
    let note = decoded.note(&name);
    eprintln!(
        "crosstalk: note: {}",
        crate::sanitize::sanitize_line(&note.describe(&name))
    );
    Input {
        name: note.decoded_name,
        text: decoded.text,
        decoding: decoded.diagnostics,
    }
}

/// The name and bytes of `path`, or of standard input when it is `None` or `-`.
fn read_bytes(path: Option<&Path>) -> Result<(String, Vec<u8>), Failure> {
    match path {
        None => read_stdin(),
        Some(p) if p.as_os_str() == "-" => read_stdin(),
        Some(p) => Ok((
            p.display().to_string(),
            read_file(p)
                .map_err(|e| Failure::usage(format!("cannot read `{}`: {e}", p.display())))?,
        )),
    }
}

/// `bytes` as text: valid UTF-8 (the usual case) without a copy, else with replacements.
/// Its lines are read as `import` reads them: a text without LF by its CRs (see
/// `protocol::line_ends`).
fn text(name: String, bytes: Vec<u8>) -> Input {
    match String::from_utf8(bytes) {
        Ok(text) => Input {
            name,
            text: protocol::line_ends::normalize_owned(text),
            decoding: Vec::new(),
        },
        Err(e) => {
            let (text, utf8) = protocol::decode(e.as_bytes());
            Input {
                name,
                text: protocol::line_ends::normalize_owned(text.into_owned()),
                decoding: utf8.into_iter().collect(),
            }
        }
    }
}

/// Files from this size on are read on every core ([`read_parallel`]).
const PARALLEL_READ_FROM: u64 = 1 << 20;

/// The bytes of the file at `path`.
fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    #[cfg(unix)]
    if len >= PARALLEL_READ_FROM
        && let Ok(len) = usize::try_from(len)
    {
        return read_parallel(&file, len);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    (&file).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Reads a large file in one piece per core, each into its own part of one buffer. Reading
/// into fresh memory costs more than the copy: the kernel zeroes every page on first touch,
/// and one thread doing that for a whole transcript took longer than `wc -l` reading it.
/// Spread over the cores, the pages are touched, zeroed and filled at once. A file that
/// grew meanwhile is read to its end; one that shrank ends where it now ends.
#[cfg(unix)]
fn read_parallel(file: &std::fs::File, len: usize) -> std::io::Result<Vec<u8>> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut bytes = vec![0u8; len];
    let chunk = len.div_ceil(cores).max(1);
    let filled = std::thread::scope(|s| {
        let parts: Vec<_> = bytes
            .chunks_mut(chunk)
            .enumerate()
            .map(|(i, part)| s.spawn(move || fill_at(file, part, (i * chunk) as u64)))
            .collect();
        parts
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect::<std::io::Result<Vec<usize>>>()
    })?;
    // A part that came back short means the file is shorter now: keep what is contiguous.
    let mut end = 0;
    for (i, n) in filled.iter().enumerate() {
        end = i * chunk + n;
        if *n < chunk.min(len - i * chunk) {
            break;
        }
    }
    bytes.truncate(end);
    if end == len {
        let mut buf = [0u8; 64 * 1024];
        loop {
            let n = fill_at(file, &mut buf, bytes.len() as u64)?;
            bytes.extend_from_slice(&buf[..n]);
            if n < buf.len() {
                break;
            }
        }
    }
    Ok(bytes)
}

/// Fills `part` from `offset`; the number of bytes read (fewer at the end of the file).
#[cfg(unix)]
fn fill_at(file: &std::fs::File, part: &mut [u8], offset: u64) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut done = 0;
    while done < part.len() {
        match file.read_at(&mut part[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

fn read_stdin() -> Result<(String, Vec<u8>), Failure> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::usage(format!("cannot read standard input: {e}")))?;
    Ok(("<stdin>".to_string(), bytes))
}

/// Reads a key file's text.
pub(super) fn read_key(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("cannot read key `{}`: {e}", path.display())))
}

/// A header value given as an argument (`--intent`, `--user`, `--from`, …): one line. A line
/// break would be written as a space, so `--intent $'REQUEST\nparent: x'` would file
/// `intent: REQUEST parent: x`; it is refused with the option named instead.
pub(super) fn header_arg(option: &str, value: &str) -> Result<(), Failure> {
    if value.chars().any(char::is_control) {
        return Err(Failure::usage(format!(
            "{option} `{}` holds a line break or another control character; give it on one line",
            crate::sanitize::sanitize_line(value)
        )));
    }
    Ok(())
}

/// A `--body` argument: the text itself, or `-` to read it from standard input (without the
/// final line break a shell or editor adds). Absent means an empty body.
pub(super) fn body(arg: Option<&str>) -> Result<String, Failure> {
    match arg {
        Some("-") => {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).map_err(|e| {
                Failure::usage(format!("cannot read the body from standard input: {e}"))
            })?;
            Ok(s.trim_end_matches(['\n', '\r']).to_string())
        }
        Some(b) => Ok(b.to_string()),
        None => Ok(String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files on both sides of the size from which they are read on every core, of lengths
    /// that do not divide evenly, come back byte for byte.
    #[test]
    fn large_files_read_in_parts_are_whole() {
        let dir = tempfile::tempdir().expect("temporary folder");
        for len in [
            0,
            17,
            PARALLEL_READ_FROM as usize - 1,
            PARALLEL_READ_FROM as usize + 3,
        ] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let path = dir.path().join(format!("f{len}"));
            std::fs::write(&path, &bytes).expect("write");
            assert!(read_file(&path).expect("read") == bytes, "length {len}");
        }
    }
}
