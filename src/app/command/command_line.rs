//! The `:` command line: running its commands, `~` in paths, Tab completion of command
//! names, file paths and ids.

use std::path::PathBuf;

use crate::app::command::commands::{self, Arg, Cmd};
use crate::app::popups::popup::Popup;
use crate::app::popups::search::SEARCH_LIMIT;
use crate::app::{Action, App};
use crate::export;

impl App {
    /// The command line's keys: editing, history, Tab completion, Enter runs it.
    pub(in crate::app) fn command_action(&mut self, action: Action) -> anyhow::Result<()> {
        let Some(Popup::Command(prompt)) = self.popup.as_mut() else {
            return Ok(());
        };
        match action {
            Action::Input(ev) if prompt.edit(&ev, &mut self.kill) => self.command_history.edited(),
            Action::Paste(s) => {
                prompt.insert(&s);
                self.command_history.edited();
            }
            Action::Undo | Action::Redo if prompt.step(action == Action::Redo) => {
                self.command_history.edited()
            }
            Action::Up => {
                if let Some(line) = self.command_history.older(&prompt.text) {
                    prompt.set(line);
                }
            }
            Action::Down => {
                if let Some(line) = self.command_history.newer() {
                    prompt.set(line);
                }
            }
            Action::Open => {
                let line = std::mem::take(&mut prompt.text);
                self.popup = None;
                self.command_history.push(&line);
                return self.run_command(&line);
            }
            Action::Complete => {
                let store = &self.store;
                let c = crate::app::command::command_line::complete(&prompt.text, |p| {
                    store
                        .ids_with_prefix(p, crate::app::command::command_line::ID_CANDIDATES)
                        .map(|m| {
                            m.threads
                                .into_iter()
                                .chain(m.messages.into_iter().map(|(id, _)| id))
                                .collect()
                        })
                        .unwrap_or_default()
                });
                prompt.set(c.text);
                prompt.candidates = c.candidates;
            }
            _ => {}
        }
        Ok(())
    }

    /// Runs a `:` command.
    pub(in crate::app) fn run_command(&mut self, line: &str) -> anyhow::Result<()> {
        let line = line.trim();
        let (typed, arg) = line.split_once(' ').unwrap_or((line, ""));
        let arg = arg.trim();
        if typed.is_empty() {
            return Ok(());
        }
        let Some((command, bang)) = commands::find(typed) else {
            self.error(format!(
                "Unknown command `:{typed}`; commands: {}.",
                commands::listing()
            ));
            return Ok(());
        };
        if arg.is_empty() {
            if let Some(hint) = command.needs(typed) {
                self.warn(hint);
                return Ok(());
            }
        }
        match command.cmd {
            Cmd::Quit => self.quit = true,
            Cmd::Help => self.popup = Some(Popup::help()),
            Cmd::Messages => {
                // Opened at the newest: what was just cut off is what is looked for.
                let scroll = crate::app::popups::messages::last_scroll(&self.messages, self.size);
                self.popup = Some(Popup::Messages { scroll });
            }
            Cmd::Drafts => self.open_drafts()?,
            Cmd::New => self.compose_new()?,
            Cmd::Reply => self.compose_reply()?,
            Cmd::Raw => {
                self.inspector.view = self.inspector.view.next();
                self.refresh_inspector();
            }
            Cmd::Search => {
                let mut s = crate::app::popups::popup::Search::default();
                s.prompt.text = arg.to_string();
                s.run(&self.store, SEARCH_LIMIT);
                self.popup = Some(Popup::Search(s));
            }
            Cmd::Import => {
                let path = crate::app::command::command_line::expand_home(arg);
                let text = std::fs::read(&path)
                    .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
                let (text, _) = crate::protocol::decode(&text);
                self.preview_paste(arg, &text)?;
            }
            Cmd::Open => self.open_id(arg)?,
            Cmd::Export => self.export(arg, false, bang)?,
            Cmd::ExportAll => self.export(arg, true, bang)?,
            Cmd::Attach => self.attach_file(arg)?,
            Cmd::Pipe => self.request_pipe(arg, false)?,
            Cmd::PipeThread => self.request_pipe(arg, true)?,
        }
        Ok(())
    }
}

impl App {
    /// `:open ID`: a thread or message by its id or the first characters of one; when the
    /// characters fit several, they are listed (Tab completes them on the command line).
    fn open_id(&mut self, arg: &str) -> anyhow::Result<()> {
        if self.store.has_thread(arg)? {
            return self.reveal(arg, None);
        }
        if let Some(m) = self.store.message(arg)? {
            return self.reveal(&m.thread, Some(arg));
        }
        let found = self.store.ids_with_prefix(arg, ID_CANDIDATES)?;
        // (id, thread, message): a thread's first message usually has the thread's id, so
        // the two are one match.
        let mut ids: Vec<(String, String, Option<String>)> = found
            .threads
            .into_iter()
            .map(|t| (t.clone(), t, None))
            .collect();
        for (message, thread) in found.messages {
            match ids.iter_mut().find(|(id, ..)| *id == message) {
                Some(same) => same.2 = Some(message),
                None => ids.push((message.clone(), thread, Some(message))),
            }
        }
        match ids.as_slice() {
            [] => self.error(format!("No thread or message id starts with `{arg}`.")),
            [(_, thread, message)] => {
                let (thread, message) = (thread.clone(), message.clone());
                self.reveal(&thread, message.as_deref())?;
            }
            many => {
                let n = many.len();
                let some: Vec<&str> = many.iter().take(3).map(|(id, ..)| id.as_str()).collect();
                self.warn(format!(
                    "`{arg}` starts {}{n} ids ({}…): type more of it, or Tab on the command line.",
                    if n >= ID_CANDIDATES { "at least " } else { "" },
                    some.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// `:export FILE`: the open thread to FILE (`~` is home), in the format its extension
    /// asks for (see [`export::EXTENSIONS`]); `:export-all FILE`: every thread, a
    /// backup that `:import` or `crosstalk import` restores when written as envelopes.
    /// `:export FILE` (`all`: `:export-all`); `force` (`:export!`) replaces an existing file.
    fn export(&mut self, arg: &str, all: bool, force: bool) -> anyhow::Result<()> {
        let path = expand_home(arg);
        let format = export::Format::from_path(&path);
        let shown = crate::sanitize::sanitize_line(&path.display().to_string()).into_owned();
        let bang = if all { ":export-all!" } else { ":export!" };
        match export::target_problem(&path, self.store.path(), force) {
            Some(export::TargetProblem::Database) => {
                self.error(format!(
                    "Not written: {shown} is the database itself. Export to another file."
                ));
                return Ok(());
            }
            Some(export::TargetProblem::Exists) => {
                self.warn(format!(
                    "Not written: {shown} exists. Give another name, or {bang} {arg} to replace it."
                ));
                return Ok(());
            }
            None => {}
        }
        let written = if all {
            export::write_file(&path, |out| export::write_all(&self.store, format, out))
        } else {
            let id = self.tree.as_ref().map(|t| t.outline.id.clone());
            let Some(view) = id.map(|id| self.store.thread(&id)).transpose()?.flatten() else {
                self.warn("Open a thread to export (or :export-all FILE for every thread).");
                return Ok(());
            };
            export::write_file(&path, |out| export::write_thread(&view, format, out))
        };
        match written {
            Ok(w) => self.info(format!(
                "Wrote {} thread{} ({} message{}) to {shown} as {}.",
                w.threads,
                if w.threads == 1 { "" } else { "s" },
                w.messages,
                if w.messages == 1 { "" } else { "s" },
                format.name()
            )),
            Err(export::ExportError::Store(e)) => return Err(e.into()),
            Err(e @ export::ExportError::NotOneMessage { .. }) => self.warn(format!(
                "Not written: {e}. Export to a .mbox file for one mailbox, or run `crosstalk export --split DIR --format eml` for one .eml per message."
            )),
            Err(export::ExportError::Write(e)) => self.error(format!(
                "Not written: cannot write {shown}: {e}. Check that the directory exists and is writable."
            )),
        }
        Ok(())
    }
}

/// Ids listed at most for an id prefix.
pub(in crate::app) const ID_CANDIDATES: usize = 8;

/// What a command that takes an argument says when typed without one (`:export` alone):
/// the command is known, so "unknown command" would mislead; this says what to add.
#[cfg(test)]
fn needs_argument(cmd: &str) -> Option<String> {
    commands::find(cmd).and_then(|(c, _)| c.needs(cmd))
}

/// `~` and `~/…` name the home directory, as in a shell (`~user` is not expanded).
pub(crate) fn expand_home(arg: &str) -> PathBuf {
    let home = || directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf());
    if arg == "~" {
        if let Some(h) = home() {
            return h;
        }
    } else if let Some(rest) = arg.strip_prefix("~/") {
        if let Some(h) = home() {
            return h.join(rest);
        }
    }
    PathBuf::from(arg)
}

/// What Tab does to a command line: the new text, and the candidates to show when more
/// than one remains.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    /// The line after completing as far as every candidate agrees.
    pub text: String,
    /// The candidates, when there is more than one.
    pub candidates: Vec<String>,
}

/// Completes the command name, or a path argument of `import`/`export`; `ids` completes
/// the argument of `open` (ids starting with what is typed). A line with nothing to
/// complete comes back as it was.
pub fn complete(line: &str, ids: impl Fn(&str) -> Vec<String>) -> Completion {
    let Some((cmd, arg)) = line.split_once(' ') else {
        return finish("", line, commands::names_starting(line), " ");
    };
    let arg = arg.trim_start();
    let head = &line[..line.len() - arg.len()];
    match commands::find(cmd).and_then(|(c, _)| c.arg) {
        Some((_, Arg::File)) => return complete_path(head, arg),
        Some((_, Arg::Id)) if !arg.is_empty() => return finish(head, arg, ids(arg), ""),
        _ => {}
    }
    Completion {
        text: line.to_string(),
        candidates: Vec::new(),
    }
}

/// `head` followed by the longest common prefix of `names` (each a completion of `typed`);
/// a single name gets `suffix` after it.
fn finish(head: &str, typed: &str, mut names: Vec<String>, suffix: &str) -> Completion {
    names.sort();
    names.dedup();
    match names.len() {
        0 => Completion {
            text: format!("{head}{typed}"),
            candidates: Vec::new(),
        },
        1 => {
            let only = &names[0];
            let end = if only.ends_with('/') { "" } else { suffix };
            Completion {
                text: format!("{head}{only}{end}"),
                candidates: Vec::new(),
            }
        }
        _ => {
            let common = common_prefix(&names);
            let typed_longer = typed.chars().count() > common.chars().count();
            Completion {
                text: format!("{head}{}", if typed_longer { typed } else { &common }),
                candidates: names,
            }
        }
    }
}

fn common_prefix(names: &[String]) -> String {
    let Some(first) = names.first() else {
        return String::new();
    };
    let mut end = first.len();
    for n in &names[1..] {
        end = first
            .char_indices()
            .zip(n.chars())
            .take_while(|((_, a), b)| a == b)
            .last()
            .map(|((i, a), _)| i + a.len_utf8())
            .unwrap_or(0)
            .min(end);
    }
    first[..end].to_string()
}

/// Completes the file name after the last `/` of `arg` from its directory (listed with `~`
/// expanded, shown as typed). Hidden files are offered only when the name typed starts
/// with a dot; directories end in `/`.
fn complete_path(head: &str, arg: &str) -> Completion {
    let (dir, name) = match arg.rfind('/') {
        Some(i) => (&arg[..=i], &arg[i + 1..]),
        None => ("", arg),
    };
    let listed = if dir.is_empty() {
        PathBuf::from(".")
    } else {
        expand_home(dir)
    };
    let mut names = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&listed) {
        for e in entries.flatten() {
            let Ok(file) = e.file_name().into_string() else {
                continue;
            };
            if !file.starts_with(name) || (file.starts_with('.') && !name.starts_with('.')) {
                continue;
            }
            let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false)
                || (e.file_type().map(|t| t.is_symlink()).unwrap_or(false) && e.path().is_dir());
            names.push(format!("{dir}{file}{}", if is_dir { "/" } else { "" }));
        }
    }
    let mut c = finish(head, arg, names, "");
    // Candidates are shown by their file name alone: the directory is on the line.
    for n in c.candidates.iter_mut() {
        *n = n[dir.len()..].to_string();
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn completes_commands_to_the_common_prefix() {
        let c = complete("ex", |_| Vec::new());
        assert_eq!(c.text, "export");
        assert_eq!(
            c.candidates,
            ["export", "export-all"].map(String::from).to_vec()
        );
        assert_eq!(complete("export-", |_| Vec::new()).text, "export-all ");
        assert_eq!(complete("re", |_| Vec::new()).text, "reply ");
        let c = complete("r", |_| Vec::new());
        assert_eq!(c.text, "r");
        assert_eq!(c.candidates, ["raw", "reply"].map(String::from).to_vec());
        assert_eq!(complete("zz", |_| Vec::new()).text, "zz");
    }

    #[test]
    fn completes_paths_and_ids() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("notes")).unwrap();
        std::fs::write(dir.path().join("thread-a.crosstalk"), "").unwrap();
        std::fs::write(dir.path().join("thread-b.crosstalk"), "").unwrap();
        std::fs::write(dir.path().join(".hidden"), "").unwrap();
        let base = format!("{}/", dir.path().display());
        let c = complete(&format!("export {base}no"), |_| Vec::new());
        assert_eq!(c.text, format!("export {base}notes/"));
        let c = complete(&format!("import {base}th"), |_| Vec::new());
        assert_eq!(c.text, format!("import {base}thread-"));
        assert_eq!(c.candidates.len(), 2);
        assert!(c.candidates[0].starts_with("thread-"));
        let c = complete(&format!("import {base}"), |_| Vec::new());
        assert!(!c.candidates.iter().any(|n| n.starts_with('.')));
        let c = complete("open 01k", |p| {
            assert_eq!(p, "01k");
            vec!["01KABC".into()]
        });
        assert_eq!(c.text, "open 01KABC");
    }

    #[test]
    fn commands_typed_without_their_argument_say_what_they_need() {
        assert_eq!(
            needs_argument("export").as_deref(),
            Some(
                "`:export` needs a file name: `:export FILE` (.json, .md/.markdown, .eml, .mbox/.mbx, else envelopes)."
            )
        );
        for cmd in ["export-all", "import", "read", "attach"] {
            let m = needs_argument(cmd).unwrap_or_default();
            assert!(
                m.starts_with(&format!("`:{cmd}` needs a file name: `:{cmd} FILE`")),
                "{m}"
            );
        }
        for cmd in ["open", "thread"] {
            let m = needs_argument(cmd).unwrap_or_default();
            assert!(
                m.starts_with(&format!("`:{cmd}` needs an id: `:{cmd} ID`")),
                "{m}"
            );
        }
        assert_eq!(needs_argument("frobnicate"), None);
        assert_eq!(needs_argument("quit"), None);
    }

    #[test]
    fn home_and_formats() {
        if let Some(home) = directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf()) {
            assert_eq!(expand_home("~/a.md"), home.join("a.md"));
            assert_eq!(expand_home("~"), home);
        }
        assert_eq!(expand_home("a/~/b"), PathBuf::from("a/~/b"));
        use crate::export::Format;
        assert_eq!(Format::from_path(Path::new("t.JSON")), Format::Json);
        assert_eq!(Format::from_path(Path::new("t.md")), Format::Markdown);
        assert_eq!(Format::from_path(Path::new("t.markdown")), Format::Markdown);
        assert_eq!(
            Format::from_path(Path::new("t.crosstalk")),
            Format::Crosstalk
        );
        assert_eq!(Format::from_path(Path::new("backup")), Format::Crosstalk);
    }
}
