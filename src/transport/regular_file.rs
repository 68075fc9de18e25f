//! Opening a file only when the name is a regular file itself: a symbolic link is not
//! followed, and a directory, FIFO, socket or device is not read. What a name is, is checked
//! on the handle opened (`fstat`), not on a look at the name before (`lstat`, then `open`):
//! a name swapped for a link between the two would otherwise be followed.
//!
//! Used where the names come from someone else: the companion's spool folder (whatever is
//! planted there is not sent to the desk: [`open_own`] also wants the file to be this user's
//! and to have no other name) and the folder `attachments verify` checks (a file outside it
//! is not vouched for by a link inside it).

use std::fs::{File, Metadata};
use std::io;
use std::path::{Path, PathBuf};

/// Why a name was not opened as a regular file.
#[derive(Debug)]
pub enum NotRegular {
    /// Nothing by that name.
    Missing,
    /// A symbolic link (to where, when it could be read), not followed.
    Link(Option<PathBuf>),
    /// Something other than a regular file: `"a directory"`, `"a FIFO"`, …
    Kind(&'static str),
    /// A regular file of another user (its uid, and ours): not one this user wrote.
    Owner { uid: u32, ours: u32 },
    /// A regular file with other names too (hard links, their count): what it holds may
    /// belong anywhere else, so it is not one written here alone.
    Linked(u64),
    /// It could not be opened or examined.
    Io(io::Error),
}

impl std::fmt::Display for NotRegular {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotRegular::Missing => write!(f, "missing"),
            NotRegular::Link(Some(to)) => {
                write!(f, "a symbolic link to {}, not followed", to.display())
            }
            NotRegular::Link(None) => write!(f, "a symbolic link, not followed"),
            NotRegular::Kind(kind) => write!(f, "{kind}, not a regular file"),
            NotRegular::Owner { uid, ours } => {
                write!(f, "owned by uid {uid}, not by this user (uid {ours})")
            }
            NotRegular::Linked(n) => {
                write!(f, "a file with {n} names (hard links), not one of its own")
            }
            NotRegular::Io(e) => write!(f, "not readable: {e}"),
        }
    }
}

impl std::error::Error for NotRegular {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NotRegular::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// What a file type is, for people.
pub(crate) fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a directory";
    }
    if t.is_symlink() {
        return "a symbolic link";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading if it is a regular file, without following a link in its last
/// component; its metadata from the handle.
pub fn open(path: &Path) -> Result<(File, Metadata), NotRegular> {
    let file = open_no_follow(path).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            return NotRegular::Missing;
        }
        // O_NOFOLLOW on a link fails (ELOOP on Linux and macOS, EMLINK on FreeBSD): which
        // one it was, the name itself says.
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => NotRegular::Link(std::fs::read_link(path).ok()),
            _ => NotRegular::Io(e),
        }
    })?;
    let meta = file.metadata().map_err(NotRegular::Io)?;
    if !meta.is_file() {
        return Err(NotRegular::Kind(kind_of(&meta)));
    }
    Ok((file, meta))
}

/// Opens `path` as [`open`] does if it is also a file of this user (the effective uid) with
/// no other name: a file this user's own program wrote and renamed into place, never a link
/// (symbolic or hard) planted to make it read something else.
pub(crate) fn open_own(path: &Path) -> Result<(File, Metadata), NotRegular> {
    open_owned_by(path, effective_uid())
}

/// [`open_own`] for the user `uid` (tests ask for another user's, which needs no root).
pub(crate) fn open_owned_by(path: &Path, uid: u32) -> Result<(File, Metadata), NotRegular> {
    let (file, meta) = open(path)?;
    check_own(&meta, uid)?;
    Ok((file, meta))
}

/// Whether `meta` is that of a file of `uid` with one name.
pub(crate) fn check_own(meta: &Metadata, uid: u32) -> Result<(), NotRegular> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if meta.uid() != uid {
            return Err(NotRegular::Owner {
                uid: meta.uid(),
                ours: uid,
            });
        }
        if meta.nlink() > 1 {
            return Err(NotRegular::Linked(meta.nlink()));
        }
    }
    let _ = (meta, uid);
    Ok(())
}

/// This process's effective uid: the owner of the files it creates.
#[cfg(unix)]
pub(crate) fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// No uids here: owners are not compared.
#[cfg(not(unix))]
pub(crate) fn effective_uid() -> u32 {
    0
}

/// `O_NOFOLLOW`, and `O_NONBLOCK` so that a FIFO does not hold the open until a writer comes
/// (it is then refused by its type); neither changes how a regular file reads.
#[cfg(unix)]
fn open_no_follow(path: &Path) -> io::Result<File> {
    use rustix::fs::OFlags;
    use std::os::unix::fs::OpenOptionsExt as _;
    let flags = OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
}

/// Elsewhere: a look at the name first (a link found then is not opened).
#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> io::Result<File> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return Err(io::Error::other("a symbolic link"));
    }
    File::open(path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Read as _;

    #[test]
    fn only_a_regular_file_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("plain"), "mine").unwrap();
        let (mut f, meta) = open(&d.join("plain")).unwrap();
        let mut text = String::new();
        f.read_to_string(&mut text).unwrap();
        assert_eq!((text.as_str(), meta.len()), ("mine", 4));

        std::os::unix::fs::symlink(d.join("plain"), d.join("link")).unwrap();
        assert!(
            matches!(open(&d.join("link")), Err(NotRegular::Link(Some(to))) if to == d.join("plain"))
        );
        std::os::unix::fs::symlink(d, d.join("to-dir")).unwrap();
        assert!(matches!(open(&d.join("to-dir")), Err(NotRegular::Link(_))));
        std::fs::create_dir(d.join("dir")).unwrap();
        assert!(matches!(
            open(&d.join("dir")),
            Err(NotRegular::Kind("a directory"))
        ));
        assert!(matches!(open(&d.join("none")), Err(NotRegular::Missing)));
        // A link to a file outside the folder: the reason says where it points.
        std::os::unix::fs::symlink("/etc/passwd", d.join("dir/passwd")).unwrap();
        let why = open(&d.join("dir/passwd")).unwrap_err().to_string();
        assert_eq!(why, "a symbolic link to /etc/passwd, not followed");
    }

    /// A file of another user, asked for as that user would (no root needed to test it): the
    /// owner on the handle is what counts.
    #[test]
    fn a_file_of_another_user_is_not_ones_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine");
        std::fs::write(&path, "mine").unwrap();
        let me = effective_uid();
        assert!(open_own(&path).is_ok());
        let other = me.wrapping_add(1);
        match open_owned_by(&path, other) {
            Err(NotRegular::Owner { uid, ours }) => assert_eq!((uid, ours), (me, other)),
            r => panic!("{r:?}"),
        }
        let why = open_owned_by(&path, other).unwrap_err().to_string();
        assert!(
            why.starts_with(&format!("owned by uid {me}, not by this user")),
            "{why}"
        );
        // A link to one's own file is still a link.
        std::os::unix::fs::symlink(&path, dir.path().join("link")).unwrap();
        assert!(matches!(
            open_own(&dir.path().join("link")),
            Err(NotRegular::Link(_))
        ));
    }

    /// A hard link planted beside one's own files reads as one's own file, but it has two
    /// names: refused by [`open_own`], still a regular file to [`open`].
    #[test]
    fn a_hard_link_is_not_a_file_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "elsewhere").unwrap();
        let planted = dir.path().join("planted");
        std::fs::hard_link(&outside, &planted).unwrap();
        assert!(matches!(open_own(&planted), Err(NotRegular::Linked(2))));
        assert!(open(&planted).is_ok());
    }

    /// A FIFO with no writer would hold a plain `open` forever; here it is refused at once.
    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(matches!(open(&fifo), Err(NotRegular::Kind("a FIFO"))));
        });
        let refused = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("the open returned");
        assert!(refused);
    }
}
