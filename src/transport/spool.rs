//! The companion's spool: clipboard texts that could not reach the desk, kept raw until it
//! answers again. It is all a companion stores on the operator's machine.
//!
//! One file per text, named by a ULID so that names sort in the order the texts were copied,
//! written to a temporary name and renamed (a crash never leaves half a text under a real
//! name), readable by the owner only (it holds whatever was copied). A text leaves the spool
//! only once the desk has answered it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The spool's directory and what it holds.
#[derive(Debug, Clone)]
pub struct Spool {
    dir: PathBuf,
}

/// One spooled text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spooled {
    /// Its file.
    pub path: PathBuf,
    /// The text as copied (bytes that are not UTF-8 read as U+FFFD, as the desk would).
    pub text: String,
}

/// The suffix of spooled files; anything else in the directory is not the spool's.
const SUFFIX: &str = ".txt";

impl Spool {
    /// The spool in `dir` (created on the first text spooled, not before).
    pub fn new(dir: PathBuf) -> Spool {
        Spool { dir }
    }

    /// Its directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Keeps `text`; returns its file.
    pub fn push(&self, text: &str) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(&self.dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))?;
        }
        let name = next_name();
        let path = self.dir.join(format!("{name}{SUFFIX}"));
        let tmp = self.dir.join(format!(".{name}.tmp"));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&tmp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&tmp, &path)?;
        Ok(path)
    }

    /// The spooled files, oldest first.
    fn files(&self) -> std::io::Result<Vec<PathBuf>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
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

    /// How many texts wait.
    pub fn len(&self) -> usize {
        self.files().map(|f| f.len()).unwrap_or(0)
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The oldest text waiting.
    pub fn oldest(&self) -> std::io::Result<Option<Spooled>> {
        let Some(path) = self.files()?.into_iter().next() else {
            return Ok(None);
        };
        let bytes = std::fs::read(&path)?;
        Ok(Some(Spooled {
            path,
            text: String::from_utf8_lossy(&bytes).into_owned(),
        }))
    }

    /// Drops a text the desk has answered.
    pub fn remove(&self, spooled: &Spooled) -> std::io::Result<()> {
        match std::fs::remove_file(&spooled.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
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
        assert_eq!(spool.oldest().unwrap(), None);
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
        assert_eq!(spool.oldest().unwrap().unwrap().text, "kept");
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
            while let Some(s) = again.oldest().unwrap() {
                back.push(s.text.clone());
                again.remove(&s).unwrap();
            }
            prop_assert_eq!(back, texts);
            prop_assert!(again.is_empty());
        }
    }
}
