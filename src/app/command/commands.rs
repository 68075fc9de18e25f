//! The `:` commands, kept once: the command line dispatches by this table, Tab completes
//! from it, and help, the error for an unknown command and the hint for a missing argument
//! are written from it. A command added here is offered, described and explained
//! everywhere at once; one missing from any of those places fails a test below.

/// What a command does: the command line's `match` on it is exhaustive, so a command in
/// the table cannot go undispatched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    Quit,
    Help,
    Messages,
    Drafts,
    New,
    Reply,
    Raw,
    Search,
    Import,
    Open,
    Export,
    ExportAll,
    Pipe,
    PipeThread,
    Attach,
}

/// What a command's argument is, for completion and for the hint when it is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// A file path: Tab completes it, `~` is home.
    File,
    /// A thread's or message's id, or its first characters: Tab completes stored ids.
    Id,
    /// Free text (a search, a shell command).
    Text,
}

/// One `:` command.
#[derive(Debug)]
pub struct Command {
    pub cmd: Cmd,
    /// The name completion offers and help shows.
    pub name: &'static str,
    /// Other names it answers to (`:q`), accepted but not offered.
    pub aliases: &'static [&'static str],
    /// Its argument, as help writes it (`FILE`), and what it is.
    pub arg: Option<(&'static str, Arg)>,
    /// Whether the command does nothing without its argument (then it says what it needs).
    pub required: bool,
    /// Whether `!` after the name (`:export!`) replaces a file that exists.
    pub bang: bool,
    /// What help says of it; [`FORMATS`] stands for the export formats.
    pub help: &'static str,
    /// Said after the usage when the argument is missing.
    pub note: &'static str,
}

/// Where a command's help or note names the export formats: filled in from
/// [`crate::export::EXTENSIONS`], so a format added there is listed here too.
pub(crate) const FORMATS: &str = "{formats}";

/// The commands, in help's order.
pub(crate) const COMMANDS: &[Command] = &[
    Command {
        cmd: Cmd::Help,
        name: "help",
        aliases: &["h"],
        arg: None,
        required: false,
        bang: false,
        help: "this help",
        note: "",
    },
    Command {
        cmd: Cmd::Messages,
        name: "messages",
        aliases: &["mes"],
        arg: None,
        required: false,
        bang: false,
        help: "what the status line said, whole, newest last",
        note: "",
    },
    Command {
        cmd: Cmd::Import,
        name: "import",
        aliases: &["read"],
        arg: Some(("FILE", Arg::File)),
        required: true,
        bang: false,
        help: "preview and import a file (~ is home; Tab completes)",
        note: " (its envelopes are previewed first)",
    },
    Command {
        cmd: Cmd::Export,
        name: "export",
        aliases: &[],
        arg: Some(("FILE", Arg::File)),
        required: true,
        bang: true,
        help: "write the open thread as {formats}",
        note: " ({formats})",
    },
    Command {
        cmd: Cmd::ExportAll,
        name: "export-all",
        aliases: &[],
        arg: Some(("FILE", Arg::File)),
        required: true,
        bang: true,
        help: "write every thread, a backup: {formats}",
        note: " ({formats})",
    },
    Command {
        cmd: Cmd::Open,
        name: "open",
        aliases: &["thread"],
        arg: Some(("ID", Arg::Id)),
        required: true,
        bang: false,
        help: "open a thread or message by id or its first characters",
        note: " (a thread's or message's, or its first characters)",
    },
    Command {
        cmd: Cmd::Search,
        name: "search",
        aliases: &["s"],
        arg: Some(("TEXT", Arg::Text)),
        required: false,
        bang: false,
        help: "full-text search",
        note: "",
    },
    Command {
        cmd: Cmd::Pipe,
        name: "pipe",
        aliases: &[],
        arg: Some(("CMD", Arg::Text)),
        required: true,
        bang: false,
        help: "run CMD with the envelope on its input",
        note: " (e.g. `:pipe less`)",
    },
    Command {
        cmd: Cmd::PipeThread,
        name: "pipe-thread",
        aliases: &[],
        arg: Some(("CMD", Arg::Text)),
        required: true,
        bang: false,
        help: "run CMD with the whole thread on its input",
        note: " (e.g. `:pipe-thread wc -l`)",
    },
    Command {
        cmd: Cmd::Attach,
        name: "attach",
        aliases: &[],
        arg: Some(("FILE", Arg::File)),
        required: true,
        bang: false,
        help: "attach a file to the draft (in the composer)",
        note: " (in the composer)",
    },
    Command {
        cmd: Cmd::Drafts,
        name: "drafts",
        aliases: &[],
        arg: None,
        required: false,
        bang: false,
        help: "list drafts",
        note: "",
    },
    Command {
        cmd: Cmd::New,
        name: "new",
        aliases: &[],
        arg: None,
        required: false,
        bang: false,
        help: "compose a new envelope",
        note: "",
    },
    Command {
        cmd: Cmd::Reply,
        name: "reply",
        aliases: &[],
        arg: None,
        required: false,
        bang: false,
        help: "compose a reply to the selected message",
        note: "",
    },
    Command {
        cmd: Cmd::Raw,
        name: "raw",
        aliases: &["view"],
        arg: None,
        required: false,
        bang: false,
        help: "cycle fields / as received / canonical",
        note: "",
    },
    Command {
        cmd: Cmd::Quit,
        name: "quit",
        aliases: &["q"],
        arg: None,
        required: false,
        bang: false,
        help: "quit",
        note: "",
    },
];

/// A command line's command found in the table: `export!` is `export` with `bang`.
pub fn find(typed: &str) -> Option<(&'static Command, bool)> {
    let (name, bang) = match typed.strip_suffix('!') {
        Some(name) => (name, true),
        None => (typed, false),
    };
    let c = COMMANDS
        .iter()
        .find(|c| c.name == name || c.aliases.contains(&name))?;
    (!bang || c.bang).then_some((c, bang))
}

impl Command {
    /// How it is typed, `:export FILE`.
    pub fn usage(&self, typed: &str) -> String {
        match self.arg {
            Some((usage, _)) => format!(":{typed} {usage}"),
            None => format!(":{typed}"),
        }
    }

    /// What it says when typed as `typed` without its argument.
    pub fn needs(&self, typed: &str) -> Option<String> {
        let (usage, kind) = self.arg.filter(|_| self.required)?;
        let what = match kind {
            Arg::File => "a file name",
            Arg::Id => "an id",
            Arg::Text => "a command",
        };
        let note = self
            .note
            .replace(FORMATS, &crate::export::Format::by_extension());
        Some(format!(
            "`:{typed}` needs {what}: `:{typed} {usage}`{note}."
        ))
    }
}

/// Help's rows for the commands: (`:name ARG`, what it does), a `!` form after its command.
pub fn help_rows() -> Vec<(String, String)> {
    let formats = crate::export::Format::by_extension();
    let mut rows = Vec::new();
    for c in COMMANDS {
        let mut what = c.help.replace(FORMATS, &formats);
        if !c.aliases.is_empty() {
            let aliases: Vec<String> = c.aliases.iter().map(|a| format!(":{a}")).collect();
            what = format!("{what} (also {})", aliases.join(", "));
        }
        rows.push((c.usage(c.name), what));
        if c.bang {
            rows.push((
                c.usage(&format!("{}!", c.name)),
                format!("as :{}, replacing the file if it exists", c.name),
            ));
        }
    }
    rows
}

/// The commands an unknown one is answered with: `quit, help, …, attach FILE`.
pub fn listing() -> String {
    let names: Vec<String> = COMMANDS
        .iter()
        .map(|c| c.usage(c.name).trim_start_matches(':').to_string())
        .collect();
    names.join(", ")
}

/// The names Tab offers for what is typed.
pub(crate) fn names_starting(typed: &str) -> Vec<String> {
    (COMMANDS.iter())
        .filter(|c| c.name.starts_with(typed))
        .map(|c| c.name.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command is in the table once, under names no other command answers to.
    #[test]
    fn each_command_once_and_each_name_once() {
        let all = [
            Cmd::Quit,
            Cmd::Help,
            Cmd::Messages,
            Cmd::Drafts,
            Cmd::New,
            Cmd::Reply,
            Cmd::Raw,
            Cmd::Search,
            Cmd::Import,
            Cmd::Open,
            Cmd::Export,
            Cmd::ExportAll,
            Cmd::Pipe,
            Cmd::PipeThread,
            Cmd::Attach,
        ];
        // A new variant must be added to `all` (the match has no wildcard).
        for c in all {
            match c {
                Cmd::Quit
                | Cmd::Help
                | Cmd::Messages
                | Cmd::Drafts
                | Cmd::New
                | Cmd::Reply
                | Cmd::Raw
                | Cmd::Search
                | Cmd::Import
                | Cmd::Open
                | Cmd::Export
                | Cmd::ExportAll
                | Cmd::Pipe
                | Cmd::PipeThread
                | Cmd::Attach => {}
            }
            assert_eq!(
                COMMANDS.iter().filter(|e| e.cmd == c).count(),
                1,
                "{c:?} is not in the table once"
            );
        }
        assert_eq!(COMMANDS.len(), all.len());
        let mut names: Vec<&str> = COMMANDS
            .iter()
            .flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied()))
            .collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "a name answers for two commands");
    }

    /// Help, completion, the unknown command's answer and the missing argument's hint name
    /// every command: none is left out of one of them (help once lacked `:attach`).
    #[test]
    fn every_command_is_described_offered_and_explained() {
        // The rows the help screen shows, not only the ones this table writes.
        let help = crate::app::keymap::Keymap::default().help_rows();
        let listing = listing();
        for c in COMMANDS {
            assert!(
                help.iter().any(|(keys, _)| keys == &c.usage(c.name)),
                "help leaves out :{}",
                c.name
            );
            assert!(
                names_starting(c.name).contains(&c.name.to_string()),
                "Tab does not offer :{}",
                c.name
            );
            assert!(
                listing
                    .split(", ")
                    .any(|l| l.split(' ').next() == Some(c.name)),
                "the unknown command's answer leaves out {}",
                c.name
            );
            for typed in std::iter::once(c.name).chain(c.aliases.iter().copied()) {
                assert_eq!(find(typed).map(|(f, _)| f.cmd), Some(c.cmd), "{typed}");
                assert_eq!(c.needs(typed).is_some(), c.required, "{typed}");
            }
            assert_eq!(find(&format!("{}!", c.name)).is_some(), c.bang);
        }
        let formats = crate::export::Format::by_extension();
        for (keys, what) in &help {
            assert!(!what.contains(FORMATS), "{keys}: {what}");
            if keys.starts_with(":export ") {
                assert!(what.contains(&formats), "{keys}: {what}");
            }
        }
        assert!(find("frobnicate").is_none() && find("quit!").is_none());
    }
}
