//! The command line's history: `↑`/`C-p` recalls the commands run before, newest first, as in
//! a shell or vim's `:`; `↓`/`C-n` goes back towards what was being typed.

/// Commands kept: enough for a session, bounded so the list never grows without end.
const KEPT: usize = 200;

/// The commands run, oldest first, and where a recall stands.
#[derive(Debug, Clone, Default)]
pub(crate) struct History {
    entries: Vec<String>,
    /// The entry shown, while recalling.
    at: Option<usize>,
    /// What was typed before the first recall, given back past the newest entry.
    typed: String,
}

impl History {
    /// Records a command run (not a blank one, nor the same as the one before it) and ends
    /// any recall.
    pub(crate) fn push(&mut self, line: &str) {
        let line = line.trim();
        self.at = None;
        self.typed.clear();
        if line.is_empty() || self.entries.last().is_some_and(|l| l == line) {
            return;
        }
        if self.entries.len() == KEPT {
            self.entries.remove(0);
        }
        self.entries.push(line.to_string());
    }

    /// The entry before the one shown (the newest at first), given what is typed now;
    /// `None` when there is none older.
    pub(crate) fn older(&mut self, typed: &str) -> Option<&str> {
        let at = match self.at {
            None if self.entries.is_empty() => return None,
            None => {
                self.typed = typed.to_string();
                self.entries.len() - 1
            }
            Some(0) => return None,
            Some(i) => i - 1,
        };
        self.at = Some(at);
        self.entries.get(at).map(String::as_str)
    }

    /// The entry after the one shown, or what was typed before recalling past the newest;
    /// `None` when not recalling.
    pub(crate) fn newer(&mut self) -> Option<&str> {
        let at = self.at?;
        if at + 1 < self.entries.len() {
            self.at = Some(at + 1);
            return self.entries.get(at + 1).map(String::as_str);
        }
        self.at = None;
        Some(&self.typed)
    }

    /// The text was edited: the next recall starts again from the newest entry.
    pub(crate) fn edited(&mut self) {
        self.at = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recalls_newest_first_and_gives_back_what_was_typed() {
        let mut h = History::default();
        assert_eq!(h.older("x"), None, "nothing run yet");
        for c in [
            "open 01J",
            "export a.md",
            "export a.md",
            "  ",
            "search port",
        ] {
            h.push(c);
        }
        assert_eq!(h.older("exp"), Some("search port"));
        assert_eq!(h.older("ignored"), Some("export a.md"), "repeats kept once");
        assert_eq!(h.older(""), Some("open 01J"));
        assert_eq!(h.older(""), None, "nothing older");
        assert_eq!(h.newer(), Some("export a.md"));
        assert_eq!(h.newer(), Some("search port"));
        assert_eq!(h.newer(), Some("exp"), "what was typed comes back");
        assert_eq!(h.newer(), None);
        h.edited();
        assert_eq!(h.older("e"), Some("search port"));
    }

    #[test]
    fn keeps_a_bounded_number() {
        let mut h = History::default();
        for i in 0..KEPT + 10 {
            h.push(&format!("open {i}"));
        }
        let mut n = 0;
        while h.older("").is_some() {
            n += 1;
        }
        assert_eq!(n, KEPT);
    }
}
