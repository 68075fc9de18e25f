//! `meta: attachments`: references to files that travel beside an envelope.
//!
//! The spec writes an entry as `A1: text/plain;name=summary.txt;digest=sha256:<hex>`. Entries
//! are written by hand and by other tools, so reading is tolerant (docs/PROTOCOL.md,
//! "Attachments"): parameters in any order and any case, spaces around `;` and `=`, quoted
//! values (`name="a; b.txt"`), `filename=` for `name=`, `size=`/`length=` in bytes, the digest
//! as `digest=sha256:<hex>`, `digest=sha256=<hex>` or `sha256=<hex>`, in hex or base64, and
//! the media type anywhere or missing. Nothing here panics on any input: a part that cannot
//! be read is kept in [`Attachment::unread`] and shown, never dropped. Pure: comparing a
//! file's bytes with an entry is here, reading the file is the caller's.

use sha2::{Digest, Sha256, Sha512};

use crate::protocol::{Envelope, MetaBlock, namespaces};

/// One `A{N}` entry, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// The entry's key as written (`A1`).
    pub key: String,
    /// The media type (`text/plain`), lower-case.
    pub mime: Option<String>,
    /// The file name, as written (untrusted: see [`safe_name`]).
    pub name: Option<String>,
    /// The size in bytes, when given.
    pub size: Option<u64>,
    /// The digest, when given in a form we read.
    pub digest: Option<FileDigest>,
    /// Parts that were not understood, as written, so nothing the sender said is lost.
    pub unread: Vec<String>,
}

/// A digest named by its algorithm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDigest {
    /// The algorithm, lower-case (`sha256`).
    pub algorithm: String,
    /// The digest bytes; `None` when the value was neither hex nor base64 of the right length.
    pub bytes: Option<Vec<u8>>,
    /// The value as written, for showing when it could not be decoded.
    pub written: String,
}

impl FileDigest {
    /// The digest as `algo:hex`, or as written when it could not be decoded.
    pub fn display(&self) -> String {
        match &self.bytes {
            Some(b) => format!("{}:{}", self.algorithm, hex(b)),
            None => format!("{}:{}", self.algorithm, self.written),
        }
    }
}

/// How a file compares with its entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// The digest (and size, when given) match.
    Ok,
    /// No file of that name.
    Missing,
    /// The file's digest differs.
    DigestMismatch,
    /// The digest matches nothing because the size already differs.
    SizeMismatch,
    /// The entry has no digest (or one that could not be decoded): nothing to check against.
    NoDigest,
    /// The digest algorithm is not one we compute (only sha256 and sha512 are).
    Unsupported,
    /// The entry has no name, or one that is not a plain file name (`../x`, `a/b`).
    UnsafeName,
    /// There is something of that name, but not a file that could be read (a directory, a
    /// pipe, no permission, a read error).
    Unreadable,
    /// The name is a symbolic link: not followed, so a link in the folder never vouches for
    /// a file elsewhere.
    Link,
}

impl Check {
    /// How the check reads for people.
    pub fn label(self) -> &'static str {
        match self {
            Check::Ok => "ok",
            Check::Missing => "missing",
            Check::DigestMismatch => "digest mismatch",
            Check::SizeMismatch => "size mismatch",
            Check::NoDigest => "no digest to check",
            Check::Unsupported => "unsupported digest algorithm",
            Check::UnsafeName => "no safe file name",
            Check::Unreadable => "not a file that could be read",
            Check::Link => "a symbolic link, not followed",
        }
    }
}

/// Whether `key` names an attachment entry: `A` (any case) followed by digits.
pub(crate) fn is_entry_key(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some('A' | 'a')) && key.len() > 1 && chars.all(|c| c.is_ascii_digit())
}

/// Every attachment entry of every `meta: attachments` block, in order.
pub fn attachments(env: &Envelope) -> Vec<Attachment> {
    env.meta
        .iter()
        .filter(|m| m.namespace.eq_ignore_ascii_case(namespaces::ATTACHMENTS))
        .flat_map(|m| m.entries.iter())
        .filter(|(k, _)| is_entry_key(k))
        .map(|(k, v)| parse_entry(k, v))
        .collect()
}

/// Reads one entry's value.
pub fn parse_entry(key: &str, value: &str) -> Attachment {
    let mut a = Attachment {
        key: key.to_string(),
        mime: None,
        name: None,
        size: None,
        digest: None,
        unread: Vec::new(),
    };
    for part in split_params(value) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let Some((k, v)) = part.split_once('=') else {
            if a.mime.is_none() && is_media_type(part) {
                a.mime = Some(part.to_ascii_lowercase());
            } else {
                a.unread.push(part.to_string());
            }
            continue;
        };
        let k = k.trim().to_ascii_lowercase();
        let v = unquote(v.trim());
        match k.as_str() {
            "name" | "filename" if a.name.is_none() && !v.is_empty() => a.name = Some(v),
            "size" | "length" if a.size.is_none() => match v.parse::<u64>() {
                Ok(n) => a.size = Some(n),
                Err(_) => a.unread.push(part.to_string()),
            },
            "digest" | "hash" if a.digest.is_none() => {
                match v.split_once(':').or_else(|| v.split_once('=')) {
                    Some((alg, d)) if !alg.trim().is_empty() => {
                        a.digest = Some(digest(alg, d));
                    }
                    _ => a.unread.push(part.to_string()),
                }
            }
            "sha256" | "sha512" | "sha-256" | "sha-512" if a.digest.is_none() => {
                a.digest = Some(digest(&k, &v));
            }
            _ => a.unread.push(part.to_string()),
        }
    }
    a
}

/// Splits at `;` outside double quotes.
fn split_params(value: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in value.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ';' if !quoted => {
                parts.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&value[start..]);
    parts
}

fn unquote(v: &str) -> String {
    let Some(inner) = v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) else {
        return v.to_string();
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

fn is_media_type(s: &str) -> bool {
    let token = |t: &str| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-._".contains(c))
    };
    matches!(s.split_once('/'), Some((a, b)) if token(a) && token(b))
}

/// An algorithm name normalized: `SHA-256` → `sha256`.
fn algorithm(alg: &str) -> String {
    alg.trim().to_ascii_lowercase().replace('-', "")
}

fn digest(alg: &str, value: &str) -> FileDigest {
    let algorithm = algorithm(alg);
    let written = value.trim().to_string();
    let want = match algorithm.as_str() {
        "sha256" => Some(32),
        "sha512" => Some(64),
        _ => None,
    };
    let bytes = decode_hex(&written)
        .or_else(|| crate::protocol::keys::decode_base64(&written).ok())
        .filter(|b| want.is_none_or(|n| b.len() == n));
    FileDigest {
        algorithm,
        bytes,
        written,
    }
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The sha256 of `bytes` as an entry writes it: `sha256:<hex>`.
pub fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

/// Compares a file's bytes (`None`: there is no such file) with the entry.
pub fn check(a: &Attachment, file: Option<&[u8]>) -> Check {
    match file {
        None if a.name.as_deref().and_then(safe_name).is_some() => Check::Missing,
        None => Check::UnsafeName,
        Some(bytes) => check_reader(a, bytes.len() as u64, bytes).unwrap_or(Check::Unreadable),
    }
}

/// [`check`] of a file of `len` bytes read from `reader` as it is hashed: the size is judged
/// first, from `len` alone, and the content is never held whole (an attached file may be
/// larger than memory). An error reading is the caller's to name.
pub(crate) fn check_reader(
    a: &Attachment,
    len: u64,
    mut reader: impl std::io::Read,
) -> std::io::Result<Check> {
    if a.name.as_deref().and_then(safe_name).is_none() {
        return Ok(Check::UnsafeName);
    }
    if a.size.is_some_and(|n| n != len) {
        return Ok(Check::SizeMismatch);
    }
    let Some(d) = &a.digest else {
        return Ok(Check::NoDigest);
    };
    let algorithm = d.algorithm.as_str();
    if !matches!(algorithm, "sha256" | "sha512") {
        return Ok(Check::Unsupported);
    }
    let Some(want) = &d.bytes else {
        return Ok(Check::NoDigest);
    };
    let actual = if algorithm == "sha256" {
        digest_of::<Sha256>(&mut reader)?
    } else {
        digest_of::<Sha512>(&mut reader)?
    };
    Ok(if *want == actual {
        Check::Ok
    } else {
        Check::DigestMismatch
    })
}

/// The digest `D` of what `reader` yields, read a block at a time.
fn digest_of<D: Digest>(reader: &mut impl std::io::Read) -> std::io::Result<Vec<u8>> {
    let mut hasher = D::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok(hasher.finalize().to_vec()),
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// `name` when it is a plain file name to look up in a directory: not empty, not `.` or
/// `..`, no path separator, no control character, not absolute. Names come from envelopes,
/// so anything else could reach outside the directory the operator chose.
pub fn safe_name(name: &str) -> Option<&str> {
    let bad = name.is_empty()
        || name == "."
        || name == ".."
        || name.len() > 255
        || name
            .chars()
            .any(|c| c == '/' || c == '\\' || c == ':' || c.is_control());
    (!bad).then_some(name)
}

/// An entry's value in the spec's form: `type;name=…;size=…;digest=sha256:…`. Names with
/// `;`, `"` or spaces are quoted.
pub fn entry_value(mime: &str, name: &str, size: u64, bytes: &[u8]) -> String {
    let name = if name.contains([';', '"', '=', '\\']) || name.chars().any(char::is_whitespace) {
        format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        name.to_string()
    };
    format!("{mime};name={name};size={size};digest={}", sha256(bytes))
}

/// Adds an attachment to `env`, or replaces the entry with the same name: the first
/// `meta: attachments` block takes it (one is made when there is none) under the next free
/// `A{N}` key.
pub(crate) fn upsert(env: &mut Envelope, name: &str, value: String) {
    let same = |(k, v): &(String, String)| {
        is_entry_key(k) && parse_entry(k, v).name.as_deref() == Some(name)
    };
    for block in env
        .meta
        .iter_mut()
        .filter(|m| m.namespace.eq_ignore_ascii_case(namespaces::ATTACHMENTS))
    {
        if let Some(entry) = block.entries.iter_mut().find(|e| same(e)) {
            entry.1 = value;
            return;
        }
    }
    let used: Vec<u64> = attachments(env)
        .iter()
        .filter_map(|a| a.key.get(1..).and_then(|n| n.parse().ok()))
        .collect();
    let next = (1..).find(|n| !used.contains(n)).unwrap_or(1);
    let entry = (format!("A{next}"), value);
    match env
        .meta
        .iter_mut()
        .find(|m| m.namespace.eq_ignore_ascii_case(namespaces::ATTACHMENTS))
    {
        Some(block) => block.entries.push(entry),
        None => env.meta.push(MetaBlock {
            namespace: namespaces::ATTACHMENTS.to_string(),
            entries: vec![entry],
        }),
    }
}

/// A media type guessed from a file name's extension, for attaching: text files by their
/// usual extensions, envelopes as text, anything else as bytes.
pub(crate) fn guess_mime(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("txt" | "text" | "log" | "crosstalk" | "aict") => "text/plain",
        Some("md" | "markdown") => "text/markdown",
        Some("csv") => "text/csv",
        Some("json") => "application/json",
        Some("html" | "htm") => "text/html",
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("zip") => "application/zip",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    #[test]
    fn reads_the_spec_form() {
        let a = parse_entry(
            "A1",
            &format!("text/plain;name=summary.txt;digest=sha256:{ABC}"),
        );
        assert_eq!(a.mime.as_deref(), Some("text/plain"));
        assert_eq!(a.name.as_deref(), Some("summary.txt"));
        assert_eq!(
            a.digest.as_ref().map(FileDigest::display).unwrap(),
            format!("sha256:{ABC}")
        );
        assert!(a.unread.is_empty());
        assert_eq!(check(&a, Some(b"abc")), Check::Ok);
        assert_eq!(check(&a, Some(b"abd")), Check::DigestMismatch);
        assert_eq!(check(&a, None), Check::Missing);
    }

    #[test]
    fn reads_variants_written_by_hand() {
        let a = parse_entry(
            "a2",
            &format!(
                " filename=\"my; notes.txt\" ; SHA-256={} ; Text/Plain ; size=3",
                ABC.to_uppercase()
            ),
        );
        assert_eq!(a.name.as_deref(), Some("my; notes.txt"));
        assert_eq!(a.mime.as_deref(), Some("text/plain"));
        assert_eq!(a.size, Some(3));
        assert_eq!(check(&a, Some(b"abc")), Check::Ok);
        assert_eq!(check(&a, Some(b"abcd")), Check::SizeMismatch);
        // The spec's own example elides the digest: kept as written, nothing to check.
        let e = parse_entry("A1", "image/png;name=s.png;digest=sha256:def456...");
        assert_eq!(e.digest.as_ref().unwrap().bytes, None);
        assert_eq!(e.digest.unwrap().display(), "sha256:def456...");
        assert_eq!(parse_entry("A1", "x;y=z;name=a").unread, vec!["x", "y=z"]);
    }

    #[test]
    fn names_that_leave_the_directory_are_not_looked_up() {
        for name in [
            "../etc/passwd",
            "a/b",
            "..",
            "/abs",
            "c:\\x",
            "a\u{1b}b",
            "",
        ] {
            let a = parse_entry("A1", &format!("name={name};digest=sha256:{ABC}"));
            assert_eq!(check(&a, Some(b"abc")), Check::UnsafeName, "{name:?}");
        }
    }

    #[test]
    fn upsert_adds_then_replaces_by_name() {
        let mut env = Envelope::new("A", "B");
        upsert(
            &mut env,
            "n.txt",
            entry_value("text/plain", "n.txt", 3, b"abc"),
        );
        upsert(
            &mut env,
            "m.txt",
            entry_value("text/plain", "m.txt", 1, b"m"),
        );
        upsert(
            &mut env,
            "n.txt",
            entry_value("text/plain", "n.txt", 1, b"x"),
        );
        let list = attachments(&env);
        assert_eq!(list.len(), 2);
        assert_eq!((list[0].key.as_str(), list[0].size), ("A1", Some(1)));
        assert_eq!(list[1].key, "A2");
        let odd = entry_value("text/plain", "a \"b\";c", 0, b"");
        assert_eq!(parse_entry("A1", &odd).name.as_deref(), Some("a \"b\";c"));
    }
}
