//! The app opens where the operator left it: the thread and message that were selected, the
//! list's filter and state filter, and the focused pane, remembered when it quits in a small
//! file in the state directory (`$XDG_STATE_HOME/crosstalk/last-place.json`), one entry per
//! database. It is a convenience and nothing depends on it: a file that cannot be read or
//! written is ignored (and logged), a thread erased meanwhile leaves the list as a fresh
//! start shows it, without a word. The demo's throwaway database is never remembered.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::app::{App, Pane};
use crate::store::{Section, StateFilter};

/// The name of the file in the state directory.
pub const FILE: &str = "last-place.json";

/// Databases remembered at most: the most recently left are kept.
const KEPT: usize = 32;

/// Where the app was in one database.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Place {
    /// The open thread.
    pub thread: Option<String>,
    /// The selected message.
    pub message: Option<String>,
    /// The thread list's filter text.
    pub filter: String,
    /// The state filter (`to_relay`, `to_me`, …; none: all threads).
    pub state: Option<String>,
    /// The focused pane (`list`, `tree`, `inspector`).
    pub focus: String,
    /// When it was left (RFC 3339), to keep the most recent.
    pub left_at: String,
}

/// The file: places by database path.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
struct Places {
    databases: BTreeMap<String, Place>,
}

/// The key a database is remembered under: its absolute path.
fn key(db: &Path) -> String {
    std::fs::canonicalize(db)
        .unwrap_or_else(|_| db.to_path_buf())
        .display()
        .to_string()
}

fn read(file: &Path) -> Places {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Places::default();
    };
    serde_json::from_str(&text).unwrap_or_else(|e| {
        tracing::warn!("{} is not read: {e}", file.display());
        Places::default()
    })
}

/// Where the app was in `db`, as `file` remembers it.
pub fn load(file: &Path, db: &Path) -> Option<Place> {
    read(file).databases.remove(&key(db))
}

/// Remembers `place` for `db` in `file` (written whole, then renamed over the old one).
pub fn save(file: &Path, db: &Path, place: Place) -> std::io::Result<()> {
    let mut all = read(file);
    all.databases.insert(key(db), place);
    while all.databases.len() > KEPT {
        let oldest = all
            .databases
            .iter()
            .min_by(|a, b| a.1.left_at.cmp(&b.1.left_at))
            .map(|(k, _)| k.clone());
        match oldest {
            Some(k) => all.databases.remove(&k),
            None => break,
        };
    }
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    serde_json::to_writer_pretty(&mut tmp, &all)?;
    tmp.persist(file).map_err(|e| e.error)?;
    Ok(())
}

/// The state filter's name in the file.
fn state_name(state: StateFilter) -> Option<String> {
    match state {
        StateFilter::All => None,
        StateFilter::Only(s) => serde_json::to_value(s)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string)),
        StateFilter::Archived => Some("archived".into()),
    }
}

fn state_named(name: Option<&str>) -> StateFilter {
    if name == Some("archived") {
        return StateFilter::Archived;
    }
    Section::ALL
        .into_iter()
        .find(|s| state_name(StateFilter::Only(*s)).as_deref() == name)
        .map_or(StateFilter::All, StateFilter::Only)
}

impl App {
    /// Where the operator is, as the next start reopens it.
    pub(crate) fn place_to_remember(&self) -> Place {
        Place {
            thread: (self.tree.as_ref().map(|t| t.outline.id.clone()))
                .or_else(|| self.list.selected_id().map(str::to_string)),
            message: self.selected_id().map(str::to_string),
            filter: self.list.filter.clone(),
            state: state_name(self.list.state),
            focus: match self.focus {
                Pane::List => "list",
                Pane::Tree => "tree",
                Pane::Inspector => "inspector",
            }
            .into(),
            left_at: self.now.to_string(),
        }
    }

    /// As the app ends: remembers where it was (see the module's doc).
    pub(in crate::app) fn remember_place(&self) {
        let (Some(file), Some(db)) = (&self.settings.place_file, &self.settings.db_path) else {
            return;
        };
        if let Err(e) = save(file, db, self.place_to_remember()) {
            tracing::warn!(
                "where the app was is not remembered in {}: {e}",
                file.display()
            );
        }
    }

    /// At start: reopens the place remembered for this database. Whether it did; a thread
    /// that is gone (erased, or no longer in the filter) leaves the list to open as usual.
    pub(in crate::app) fn reopen_place(&mut self) -> anyhow::Result<bool> {
        let (Some(file), Some(db)) = (&self.settings.place_file, &self.settings.db_path) else {
            return Ok(false);
        };
        let Some(place) = load(file, db) else {
            return Ok(false);
        };
        let state = state_named(place.state.as_deref());
        if !place.filter.is_empty() || state != StateFilter::All {
            self.list.filter = place.filter.clone();
            self.list.state = state;
            self.list.refilter(&self.store)?;
        }
        let Some(thread) = place.thread else {
            return Ok(false);
        };
        // Far down a long list: fetched as far as the thread (up to ten pages).
        self.list.fetch_until(
            &thread,
            10 * crate::app::panes::thread_list::PAGE,
            &self.store,
        )?;
        if !self.list.rows.iter().any(|r| r.summary.id == thread) {
            return Ok(false);
        }
        self.list.select_id(&thread);
        self.load_thread(&thread, place.message.as_deref())?;
        self.focus = match place.focus.as_str() {
            "tree" => Pane::Tree,
            "inspector" => Pane::Inspector,
            _ => Pane::List,
        };
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_kept_per_database_the_most_recent_first_and_a_bad_file_is_no_place() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state").join(FILE);
        let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
        assert_eq!(load(&file, &a), None);
        let place = |thread: &str, at: &str| Place {
            thread: Some(thread.into()),
            filter: "plan".into(),
            state: state_name(StateFilter::Only(Section::ToMe)),
            left_at: at.into(),
            ..Place::default()
        };
        save(&file, &a, place("A", "2026-01-01T00:00:00Z")).unwrap();
        save(&file, &b, place("B", "2026-01-02T00:00:00Z")).unwrap();
        let got = load(&file, &a).unwrap();
        assert_eq!(got.thread.as_deref(), Some("A"));
        assert_eq!(
            state_named(got.state.as_deref()),
            StateFilter::Only(Section::ToMe)
        );
        assert_eq!(load(&file, &b).unwrap().thread.as_deref(), Some("B"));
        for i in 0..KEPT {
            let db = dir.path().join(format!("{i}.db"));
            save(
                &file,
                &db,
                place("C", &format!("2026-02-{:02}T00:00:00Z", i % 28 + 1)),
            )
            .unwrap();
        }
        assert_eq!(load(&file, &a), None, "the oldest goes first");
        std::fs::write(&file, "not json").unwrap();
        assert_eq!(load(&file, &b), None);
        save(&file, &b, place("B", "2026-03-01T00:00:00Z")).unwrap();
        assert!(load(&file, &b).is_some(), "written anew");
        assert_eq!(state_named(Some("nonsense")), StateFilter::All);
    }
}
