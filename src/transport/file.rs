//! The file binding: `.crosstalk` and `.aict` files (UTF-8 text holding envelopes), a
//! directory of them, one file per message, and the files `meta: attachments` names.
//!
//! File names made from message ids are made safe here: ids come from envelopes, so an id
//! such as `../../.bashrc` must name a file inside the chosen directory and nothing else.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::regular_file::{self, NotRegular};
use crate::protocol::attachments::{self, Attachment, Check};

/// Extensions of envelope files, lower-case.
pub(crate) const EXTENSIONS: [&str; 2] = ["crosstalk", "aict"];

/// Whether `path` names an envelope file by its extension (any case).
pub(crate) fn is_envelope_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// The inputs `paths` name: a directory stands for its envelope files (not those of its
/// subdirectories), sorted by name so an import is repeatable; anything else is itself. A
/// directory that cannot be listed or holds no envelope file stays itself, so that reading
/// it fails and is reported like any input that cannot be read, the others imported all the
/// same.
pub(crate) fn expand(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.as_os_str() == "-" || !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let mut files: Vec<PathBuf> = match std::fs::read_dir(p) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                // Files, and links to nothing: those are inputs that cannot be read, named
                // as such rather than passed over (a pipe or a directory is no input).
                .filter(|f| is_envelope_file(f) && (f.is_file() || dangling(f)))
                .collect(),
            Err(_) => Vec::new(),
        };
        if files.is_empty() {
            out.push(p.clone());
            continue;
        }
        files.sort();
        out.extend(files);
    }
    out
}

/// Whether `path` is a symbolic link to nothing.
fn dangling(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
        && std::fs::metadata(path).is_err()
}

/// The longest file name stem [`file_stem`] writes before it falls back to a digest.
const MAX_STEM: usize = 160;

/// A file name stem for message `id`: the id itself when it is made of letters, digits, `-`
/// and `_` (ULIDs and UUIDs are), else the id with every other byte written `%XX` (so no
/// separator, dot, control or non-ASCII character survives and distinct ids stay distinct);
/// an id whose stem would be longer than [`MAX_STEM`] is named by a digest instead.
pub fn file_stem(id: &str) -> String {
    let mut stem = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            stem.push(b as char);
        } else {
            stem.push_str(&format!("%{b:02X}"));
        }
    }
    if stem.is_empty() || stem.len() > MAX_STEM {
        let d = Sha256::digest(id.as_bytes());
        let hex: String = d[..16].iter().map(|b| format!("{b:02x}")).collect();
        return format!("id-{hex}");
    }
    stem
}

/// What writing one file per message did.
#[derive(Debug, Default)]
pub struct Split {
    /// Files written.
    pub written: Vec<PathBuf>,
    /// Files that already held exactly this content (left as they were).
    pub unchanged: Vec<PathBuf>,
    /// Files that exist with other content: not overwritten.
    pub refused: Vec<PathBuf>,
}

/// Writes each `(id, content)` to `dir/<file_stem(id)>.<ext>` (0600, through a temporary file
/// so no half-written file is left). A file that exists is never replaced: when it holds the
/// same bytes it counts as unchanged, else it is refused and reported. `dir` is made when
/// missing.
pub fn write_split(
    dir: &Path,
    ext: &str,
    items: impl IntoIterator<Item = (String, Vec<u8>)>,
) -> io::Result<Split> {
    std::fs::create_dir_all(dir)?;
    let mut split = Split::default();
    for (id, content) in items {
        let path = dir.join(format!("{}.{ext}", file_stem(&id)));
        if path.exists() {
            if std::fs::read(&path).is_ok_and(|old| old == content) {
                split.unchanged.push(path);
            } else {
                split.refused.push(path);
            }
            continue;
        }
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        tmp.write_all(&content)?;
        tmp.as_file().sync_all()?;
        match tmp.persist_noclobber(&path) {
            Ok(_) => split.written.push(path),
            // Made by someone else since the check: theirs stays.
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => split.refused.push(path),
            Err(e) => return Err(e.error),
        }
    }
    Ok(split)
}

/// Checks each attachment against the file of its name in `dir` (never outside it: names
/// that are not plain file names are not looked up, and a symbolic link is not followed).
pub(crate) fn check_dir(list: &[Attachment], dir: &Path) -> Vec<Check> {
    check_dir_why(list, dir)
        .into_iter()
        .map(|(c, _)| c)
        .collect()
}

/// [`check_dir`], with why a file was not read when it was not (where a link points, what
/// the name is instead of a file, the error).
pub(crate) fn check_dir_why(list: &[Attachment], dir: &Path) -> Vec<(Check, Option<String>)> {
    list.iter().map(|a| check_one(a, dir)).collect()
}

fn check_one(a: &Attachment, dir: &Path) -> (Check, Option<String>) {
    let Some(name) = a.name.as_deref().and_then(attachments::safe_name) else {
        return (Check::UnsafeName, None);
    };
    let (file, meta) = match regular_file::open(&dir.join(name)) {
        Ok(opened) => opened,
        Err(NotRegular::Missing) => return (Check::Missing, None),
        Err(NotRegular::Link(to)) => {
            let to = to.map(|to| format!("points to {}", to.display()));
            return (Check::Link, to);
        }
        Err(why) => return (Check::Unreadable, Some(why.to_string())),
    };
    // Read as it is hashed, never whole: an attached file may be larger than memory.
    match attachments::check_reader(a, meta.len(), file) {
        Ok(check) => (check, None),
        Err(e) => (Check::Unreadable, Some(format!("not readable: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_are_plain_names() {
        assert_eq!(
            file_stem("01J9J3D3M6A4M3WQX8G1ZQ0S7K"),
            "01J9J3D3M6A4M3WQX8G1ZQ0S7K"
        );
        assert_eq!(file_stem("../x"), "%2E%2E%2Fx");
        assert_eq!(file_stem("a\u{1b}b"), "a%1Bb");
        assert!(file_stem("").starts_with("id-"));
        assert!(file_stem(&"é".repeat(100)).starts_with("id-"));
    }

    #[test]
    fn an_existing_different_file_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let s = write_split(dir.path(), "crosstalk", [("a".into(), b"one".to_vec())]).unwrap();
        assert_eq!(s.written.len(), 1);
        let s = write_split(
            dir.path(),
            "crosstalk",
            [("a".into(), b"one".to_vec()), ("A".into(), b"two".to_vec())],
        )
        .unwrap();
        assert_eq!(s.unchanged.len(), 1);
        let s = write_split(dir.path(), "crosstalk", [("a".into(), b"other".to_vec())]).unwrap();
        assert_eq!(s.refused.len(), 1);
        assert_eq!(
            std::fs::read(dir.path().join("a.crosstalk")).unwrap(),
            b"one"
        );
    }
}
