//! The companion's spool: clipboard texts that could not reach the desk, kept raw until it
//! answers again. It is all a companion stores on the operator's machine.
//!
//! One file per text, named by a ULID so that names sort in the order the texts were copied,
//! written to a temporary name and renamed (a crash never leaves half a text under a real
//! name; a failed write removes its temporary file, and one left by a crash is removed by
//! [`Spool::sweep`]), readable by the owner only (it holds whatever was copied). A text
//! leaves the spool only once the desk has answered it: stored, or refused and then moved to
//! the folder beside it ([`Spool::aside`]) for the operator, never deleted unsent.
//!
//! Only files the spool wrote are read: each is opened without following a link and must be
//! a regular file of this user with no other name (see [`regular_file::open_own`]). Anything
//! else found under a spool's name — a link planted to make the companion send a file from
//! elsewhere, a FIFO, someone else's file — is a [`Stranger`]: never read, never sent, left
//! where it is, and named to the caller so that the operator hears of it.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::regular_file::{self, NotRegular};

/// The spool's directory and what it holds.
#[derive(Debug, Clone)]
pub struct Spool {
    dir: PathBuf,
    aside: PathBuf,
}

/// One spooled text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spooled {
    /// Its file.
    pub path: PathBuf,
    /// The text as copied (bytes that are not UTF-8 read as U+FFFD, as the desk would).
    pub text: String,
    /// Its size in bytes, as spooled.
    pub size: u64,
}

/// A name in the spool that is not a copy the spool wrote: not read, not sent.
#[derive(Debug)]
pub struct Stranger {
    /// Its path.
    pub path: PathBuf,
    /// What it is instead.
    pub why: NotRegular,
}

/// The oldest copy waiting, and the strangers passed over on the way to it.
#[derive(Debug, Default)]
pub struct Oldest {
    /// The copy to send next, when one waits.
    pub copy: Option<Spooled>,
    /// Names older than it that are not the spool's copies.
    pub strangers: Vec<Stranger>,
}

/// What the spool holds, for a report.
#[derive(Debug, Default)]
pub(crate) struct Survey {
    /// Copies waiting to be sent.
    pub waiting: usize,
    /// Names that are not the spool's copies.
    pub strangers: Vec<Stranger>,
    /// Copies the desk refused, kept aside.
    pub aside: usize,
}

/// The suffix of spooled files; anything else in the directory is not the spool's.
const SUFFIX: &str = ".txt";

/// The suffix of a text being written; renamed to [`SUFFIX`] once whole.
const TMP_SUFFIX: &str = ".tmp";

/// How old a temporary file must be before [`Spool::sweep`] takes it for a crash's leftover:
/// a text is written and renamed in milliseconds, so one this old has no writer any more
/// (even with a second companion on the same spool, or a slow disk).
const STALE: Duration = Duration::from_secs(60);

impl Spool {
    /// The spool in `dir` (created on the first text spooled, not before); copies the desk
    /// refuses go to `<dir>-refused` beside it.
    pub fn new(dir: PathBuf) -> Spool {
        let aside = match dir.file_name() {
            Some(name) => {
                let mut name = name.to_os_string();
                name.push("-refused");
                dir.with_file_name(name)
            }
            None => dir.join("refused"),
        };
        Spool { dir, aside }
    }

    /// Its directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder where copies the desk refused are kept for the operator.
    pub fn aside(&self) -> &Path {
        &self.aside
    }

    /// Keeps `text`; returns its file. On a failure (a full disk) nothing is left behind.
    pub fn push(&self, text: &str) -> std::io::Result<PathBuf> {
        self.push_with(text, |file, bytes| file.write_all(bytes))
    }

    /// [`Spool::push`], the bytes written by `fill` (tests make it fail half-way).
    fn push_with(
        &self,
        text: &str,
        fill: impl FnOnce(&mut std::fs::File, &[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<PathBuf> {
        make_private_dir(&self.dir)?;
        let name = next_name();
        let path = self.dir.join(format!("{name}{SUFFIX}"));
        let tmp = self.dir.join(format!(".{name}{TMP_SUFFIX}"));
        let mut options = std::fs::OpenOptions::new();
        // `create_new`: never through a name planted beforehand, link or not.
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&tmp)?;
        let written = fill(&mut file, text.as_bytes())
            .and_then(|()| file.sync_all())
            .and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = written {
            drop(file);
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        Ok(path)
    }

    /// The names spooled copies go by, oldest first (what each really is, is checked when
    /// it is opened).
    fn names(&self) -> std::io::Result<Vec<PathBuf>> {
        let entries = match own_dir(&self.dir)? {
            true => std::fs::read_dir(&self.dir)?,
            false => return Ok(Vec::new()),
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(SUFFIX) && !n.starts_with('.'))
            })
            .collect();
        files.sort();
        Ok(files)
    }

    /// How many texts wait (strangers not counted).
    pub fn len(&self) -> usize {
        self.survey().map(|s| s.waiting).unwrap_or(0)
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What the spool holds: copies waiting, strangers, copies kept aside.
    pub(crate) fn survey(&self) -> std::io::Result<Survey> {
        let mut survey = Survey::default();
        for path in self.names()? {
            match regular_file::open_own(&path) {
                Ok(_) => survey.waiting += 1,
                Err(NotRegular::Missing) => {}
                Err(why) => survey.strangers.push(Stranger { path, why }),
            }
        }
        if own_dir(&self.aside).unwrap_or(false) {
            survey.aside = std::fs::read_dir(&self.aside)
                .map(|d| d.filter_map(Result::ok).count())
                .unwrap_or(0);
        }
        Ok(survey)
    }

    /// The oldest text waiting, and the strangers found before it.
    pub fn oldest(&self) -> std::io::Result<Oldest> {
        let mut oldest = Oldest::default();
        for path in self.names()? {
            let (mut file, meta) = match regular_file::open_own(&path) {
                Ok(opened) => opened,
                // Sent and removed since the listing.
                Err(NotRegular::Missing) => continue,
                Err(why) => {
                    oldest.strangers.push(Stranger { path, why });
                    continue;
                }
            };
            let mut bytes = Vec::with_capacity(meta.len() as usize);
            if let Err(e) = file.read_to_end(&mut bytes) {
                oldest.strangers.push(Stranger {
                    path,
                    why: NotRegular::Io(e),
                });
                continue;
            }
            oldest.copy = Some(Spooled {
                path,
                size: bytes.len() as u64,
                text: String::from_utf8_lossy(&bytes).into_owned(),
            });
            break;
        }
        Ok(oldest)
    }

    /// Drops a text the desk has answered.
    pub fn remove(&self, spooled: &Spooled) -> std::io::Result<()> {
        match std::fs::remove_file(&spooled.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Moves a text the desk refused to [`Spool::aside`], under the same name: it is not
    /// sent again, and it is not lost. Returns where it is now.
    pub fn set_aside(&self, spooled: &Spooled) -> std::io::Result<PathBuf> {
        make_private_dir(&self.aside)?;
        let name = spooled
            .path
            .file_name()
            .ok_or_else(|| std::io::Error::other("a spooled copy without a file name"))?;
        let to = self.aside.join(name);
        std::fs::rename(&spooled.path, &to)?;
        Ok(to)
    }

    /// Removes the temporary files of writes that never finished (a crash, a kill, power
    /// lost) once they are [`STALE`]: they are never sent, and not kept either. Only the
    /// spool's own are removed; returns them.
    pub(crate) fn sweep(&self) -> Vec<PathBuf> {
        self.sweep_older_than(STALE)
    }

    fn sweep_older_than(&self, age: Duration) -> Vec<PathBuf> {
        let Ok(true) = own_dir(&self.dir) else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let now = SystemTime::now();
        let mut removed = Vec::new();
        for path in entries.filter_map(Result::ok).map(|e| e.path()) {
            let temporary = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.') && n.ends_with(TMP_SUFFIX));
            if !temporary {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let own = meta.is_file()
                && regular_file::check_own(&meta, regular_file::effective_uid()).is_ok();
            let stale = meta
                .modified()
                .ok()
                .and_then(|m| now.duration_since(m).ok())
                .is_some_and(|a| a >= age);
            if own && stale && std::fs::remove_file(&path).is_ok() {
                removed.push(path);
            }
        }
        removed
    }
}

/// Whether `dir` is there as a directory of this user's (not a link to one elsewhere, which
/// would make the spool read and write there); an error says what it is instead.
fn own_dir(dir: &Path) -> std::io::Result<bool> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    let refuse = |what: String| {
        Err(std::io::Error::other(format!(
            "{} is {what}, not a folder of this user's: it is not used; move it away and a new one is made",
            dir.display()
        )))
    };
    if !meta.is_dir() {
        return refuse(regular_file::kind_of(&meta).to_string());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if meta.uid() != regular_file::effective_uid() {
            return refuse(format!("owned by uid {}", meta.uid()));
        }
    }
    Ok(true)
}

/// Makes `dir` (and what leads to it) if missing, private to the owner (0700).
fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    if !own_dir(dir)? {
        std::fs::create_dir_all(dir)?;
        own_dir(dir)?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// A ULID later than any this process made before, so two texts spooled in one millisecond
/// still sort in the order they came.
fn next_name() -> String {
    static IDS: std::sync::Mutex<Option<ulid::Generator>> = std::sync::Mutex::new(None);
    let mut ids = IDS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let generator = ids.get_or_insert_with(ulid::Generator::new);
    generator
        .generate()
        .unwrap_or_else(|_| ulid::Ulid::new())
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn empty_until_something_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::new(dir.path().join("spool"));
        assert!(spool.is_empty());
        assert_eq!(spool.oldest().unwrap().copy, None);
        assert!(
            !spool.dir().exists(),
            "nothing is created before a text is spooled"
        );
    }

    #[cfg(unix)]
    #[test]
    fn private_to_the_owner() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::new(dir.path().join("spool"));
        let path = spool.push("secret").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(spool.dir()), 0o700);
    }

    #[test]
    fn strangers_and_half_written_files_are_not_the_spools() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::new(dir.path().to_path_buf());
        std::fs::write(dir.path().join(".01ABC.tmp"), "half").unwrap();
        std::fs::write(dir.path().join("notes.md"), "mine").unwrap();
        assert!(spool.is_empty());
        spool.push("kept").unwrap();
        assert_eq!(spool.oldest().unwrap().copy.unwrap().text, "kept");
    }

    /// Links planted in the spool, to a file outside it and to a folder, a FIFO and a hard
    /// link: none is read, the copy behind them is, and each is named with what it is.
    #[cfg(unix)]
    #[test]
    fn planted_names_are_never_read_and_are_named() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("id_ed25519");
        std::fs::write(&outside, "PRIVATE KEY").unwrap();
        let spool = Spool::new(dir.path().join("spool"));
        let mine = spool.push("my copy").unwrap();
        // Names that sort before the copy's, so each is met first.
        let at = |n: u8| {
            spool
                .dir()
                .join(format!("00000000000000000000000{n:03}.txt"))
        };
        symlink(&outside, at(1)).unwrap();
        symlink(dir.path(), at(2)).unwrap();
        let fifo = std::process::Command::new("mkfifo").arg(at(3)).status();
        assert!(fifo.unwrap().success());
        std::fs::hard_link(&outside, at(4)).unwrap();

        let oldest = spool.oldest().unwrap();
        let copy = oldest.copy.unwrap();
        assert_eq!(
            (copy.path, copy.text.as_str(), copy.size),
            (mine, "my copy", 7)
        );
        let why: Vec<(PathBuf, String)> = (oldest.strangers.iter())
            .map(|s| (s.path.clone(), s.why.to_string()))
            .collect();
        assert_eq!(
            why,
            [
                (
                    at(1),
                    format!("a symbolic link to {}, not followed", outside.display())
                ),
                (
                    at(2),
                    format!("a symbolic link to {}, not followed", dir.path().display())
                ),
                (at(3), "a FIFO, not a regular file".to_string()),
                (
                    at(4),
                    "a file with 2 names (hard links), not one of its own".to_string()
                ),
            ]
        );
        let survey = spool.survey().unwrap();
        assert_eq!((survey.waiting, survey.strangers.len()), (1, 4));
        assert_eq!(spool.len(), 1);
        // Once the copy is sent, nothing is left to send: the strangers stay as they were.
        spool
            .remove(&spool.oldest().unwrap().copy.unwrap())
            .unwrap();
        let oldest = spool.oldest().unwrap();
        assert_eq!((oldest.copy, oldest.strangers.len()), (None, 4));
        assert_eq!(std::fs::read_link(at(1)).unwrap(), outside);
    }

    /// A spool folder that is a link (to a folder of someone else's choosing) is not used:
    /// nothing is read from it nor written to it.
    #[cfg(unix)]
    #[test]
    fn a_spool_folder_that_is_a_link_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("01ABC.txt"), "not mine").unwrap();
        let spool = Spool::new(dir.path().join("spool"));
        std::os::unix::fs::symlink(&elsewhere, spool.dir()).unwrap();
        let e = spool.oldest().unwrap_err().to_string();
        assert!(
            e.contains("is a symbolic link, not a folder of this user's"),
            "{e}"
        );
        assert!(spool.push("secret").is_err());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 1);
    }

    /// A disk that fills up half-way through a text: the error comes back, and neither the
    /// half-written file nor a copy under a real name is left.
    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::new(dir.path().join("spool"));
        let full = spool.push_with("a long text", |f, bytes| {
            f.write_all(&bytes[..4])?;
            Err(std::io::Error::from(std::io::ErrorKind::StorageFull))
        });
        assert_eq!(full.unwrap_err().kind(), std::io::ErrorKind::StorageFull);
        let left: Vec<_> = std::fs::read_dir(spool.dir()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    /// A temporary file left by a crash is never sent, and removed once stale; a fresh one
    /// (a write under way) and names that are not the spool's are left alone.
    #[test]
    fn a_crashs_leftover_is_swept() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::new(dir.path().join("spool"));
        spool.push("kept").unwrap();
        let old = spool.dir().join(".01OLD.tmp");
        let file = std::fs::File::create(&old).unwrap();
        file.set_modified(SystemTime::now() - 2 * STALE).unwrap();
        drop(file);
        let fresh = spool.dir().join(".01NEW.tmp");
        std::fs::write(&fresh, "under way").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc/passwd", spool.dir().join(".01LINK.tmp")).unwrap();
        assert_eq!(spool.len(), 1);
        assert_eq!(spool.oldest().unwrap().copy.unwrap().text, "kept");
        assert_eq!(spool.sweep(), std::slice::from_ref(&old));
        assert!(!old.exists() && fresh.exists());
        assert_eq!(spool.sweep_older_than(Duration::ZERO), [fresh]);
        assert_eq!(spool.len(), 1);
    }

    /// A copy the desk refused goes to the folder beside the spool, private, under its own
    /// name: not sent again, not lost.
    #[test]
    fn a_refused_copy_is_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::new(dir.path().join("spool"));
        assert_eq!(spool.aside(), dir.path().join("spool-refused"));
        let path = spool.push("too large").unwrap();
        let copy = spool.oldest().unwrap().copy.unwrap();
        let to = spool.set_aside(&copy).unwrap();
        assert_eq!(to, spool.aside().join(path.file_name().unwrap()));
        assert_eq!(std::fs::read_to_string(&to).unwrap(), "too large");
        assert!(spool.oldest().unwrap().copy.is_none());
        let survey = spool.survey().unwrap();
        assert_eq!((survey.waiting, survey.aside), (0, 1));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(spool.aside())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// Texts come back byte for byte, oldest first, each once, and survive a new handle
        /// (a restarted companion).
        #[test]
        fn texts_come_back_in_order(texts in proptest::collection::vec(any::<String>(), 1..8)) {
            let dir = tempfile::tempdir().unwrap();
            let spool = Spool::new(dir.path().join("spool"));
            for t in &texts {
                spool.push(t).unwrap();
            }
            let again = Spool::new(dir.path().join("spool"));
            prop_assert_eq!(again.len(), texts.len());
            let mut back = Vec::new();
            while let Some(s) = again.oldest().unwrap().copy {
                back.push(s.text.clone());
                again.remove(&s).unwrap();
            }
            prop_assert_eq!(back, texts);
            prop_assert!(again.is_empty());
        }
    }
}
