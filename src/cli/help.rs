//! What each command's `--help` ends with, and its man page's EXIT STATUS and EXAMPLES: one
//! table, so the help, the man pages and the tests read the same words.
//!
//! A command is named by its path below `crosstalk` (`"queue done"`, `"keys add"`); the
//! program itself is `""`. A test walks `Cli::command()` and fails on a command without an
//! entry, and parses every example with clap, so an example cannot name a flag that is gone.

/// The exit statuses and examples of one command.
pub(crate) struct Entry {
    /// The command's path below `crosstalk`, words separated by one space.
    pub path: &'static str,
    /// What 0, 1 and 2 mean for it, in that order.
    pub exit: [&'static str; 3],
    /// Invocations that work, each with the program name first.
    pub examples: &'static [&'static str],
}

/// Exit 2, the same for every command.
const USAGE: &str = "usage error (a wrong flag or argument), or a file or the database could not be read or written";
/// Exit 1 for commands that never use it.
const UNUSED: &str = "not used";

/// Every command and nested command that has help of its own.
pub(crate) const ENTRIES: &[Entry] = &[
    Entry {
        path: "",
        exit: [
            "ok (the app quit normally, or the command succeeded)",
            "invalid input, no envelope found or a failed verification (see each command)",
            "usage or I/O error",
        ],
        examples: &["crosstalk --demo", "crosstalk threads --limit 5"],
    },
    Entry {
        path: "parse",
        exit: [
            "every envelope found is valid",
            "no envelope found, or one is invalid",
            USAGE,
        ],
        examples: &[
            "crosstalk parse transcript.txt",
            "crosstalk parse --json - < paste.txt",
        ],
    },
    Entry {
        path: "fmt",
        exit: [
            "every envelope was rewritten",
            "no envelope found, or one could not be read",
            USAGE,
        ],
        examples: &[
            "crosstalk fmt paste.txt",
            "crosstalk fmt --fill-ids < old.txt > new.crosstalk",
        ],
    },
    Entry {
        path: "check",
        exit: [
            "no errors in any file (warnings allowed)",
            "an error in some file",
            USAGE,
        ],
        examples: &[
            "crosstalk check a.crosstalk b.crosstalk",
            "crosstalk check --json --no-db paste.txt",
        ],
    },
    Entry {
        path: "new",
        exit: [
            "the envelope was written",
            "the envelope written is not valid (it is printed, with its diagnostics)",
            USAGE,
        ],
        examples: &[
            "crosstalk new --from human://kalle --to CLAUDE --intent REQUEST --context review --body 'Please review section 3.'",
        ],
    },
    Entry {
        path: "error",
        exit: [
            "an ERROR reply was written",
            UNUSED,
            "usage error (an unknown --code), or the input could not be read",
        ],
        examples: &["crosstalk error --code E-FORMAT paste.txt"],
    },
    Entry {
        path: "sign",
        exit: [
            "every envelope was signed",
            "no envelope found, or one could not be signed",
            "usage error, or the key or input could not be read",
        ],
        examples: &["crosstalk sign --key me.pem reply.crosstalk > signed.crosstalk"],
    },
    Entry {
        path: "import",
        exit: [
            "every input was stored (or already was)",
            "an input held no envelope or an invalid one",
            USAGE,
        ],
        examples: &[
            "crosstalk import transcript.txt",
            "crosstalk import --json mail/",
        ],
    },
    Entry {
        path: "threads",
        exit: ["the threads were listed", UNUSED, USAGE],
        examples: &[
            "crosstalk threads --limit 10",
            "crosstalk threads --archived --json",
        ],
    },
    Entry {
        path: "archive",
        exit: [
            "the thread is archived (or back, with --undo)",
            "no thread has that id, or the prefix names several",
            USAGE,
        ],
        examples: &[
            "crosstalk archive 01J9J3D3",
            "crosstalk archive --undo 01J9J3D3",
        ],
    },
    Entry {
        path: "consent",
        exit: [
            "every consent was listed, every REVOKE withdraws what it names",
            "a REVOKE withdraws nothing now (unverified, superseded, later, or naming nothing granted)",
            USAGE,
        ],
        examples: &["crosstalk consent", "crosstalk consent --json"],
    },
    Entry {
        path: "queue",
        exit: [
            "the queue was listed",
            UNUSED,
            "usage error (--limit with done, dismiss or undo), or the database could not be read",
        ],
        examples: &["crosstalk queue", "crosstalk queue --limit 5 --json"],
    },
    Entry {
        path: "queue done",
        exit: [
            "the message is settled as done",
            "no message has that id (or it is a draft)",
            USAGE,
        ],
        examples: &["crosstalk queue done 01J9J3DB"],
    },
    Entry {
        path: "queue dismiss",
        exit: [
            "the message is dismissed",
            "no message has that id (or it is a draft)",
            USAGE,
        ],
        examples: &["crosstalk queue dismiss 01J9J3DB --json"],
    },
    Entry {
        path: "queue undo",
        exit: [
            "the message is back where the ledger puts it",
            "no message has that id (or it is a draft)",
            USAGE,
        ],
        examples: &["crosstalk queue undo 01J9J3DB"],
    },
    Entry {
        path: "show",
        exit: [
            "the thread was shown",
            "no thread has that id, or the prefix names several",
            USAGE,
        ],
        examples: &["crosstalk show 01J9J3D3", "crosstalk show 01J9J3D3 --json"],
    },
    Entry {
        path: "export",
        exit: [
            "the thread (or every thread) was written",
            "no thread has that id, or the prefix names several",
            "usage error, or the output exists (without --force) or could not be written",
        ],
        examples: &[
            "crosstalk export 01J9J3D3 --format markdown",
            "crosstalk export --all -o backup.crosstalk",
        ],
    },
    Entry {
        path: "search",
        exit: [
            "something matched",
            "nothing matched (--json prints [])",
            USAGE,
        ],
        examples: &[
            "crosstalk search rate limiter",
            "crosstalk search --limit 5 --json review",
        ],
    },
    Entry {
        path: "reply",
        exit: [
            "the draft was saved and printed",
            "no message has that id, the prefix names several, or the draft written is not valid (it is printed, with its diagnostics)",
            USAGE,
        ],
        examples: &[
            "crosstalk reply 01J9J3DB --body 'Agreed.'",
            "crosstalk reply 01J9J3DB --intent ACK",
        ],
    },
    Entry {
        path: "delete",
        exit: [
            "erased",
            "nothing was erased: no such thread, message or paste, or the question was answered no",
            "usage error (no terminal to ask on and no --yes), or the database could not be written",
        ],
        examples: &[
            "crosstalk delete thread 01J9J3D3",
            "crosstalk delete pastes --yes",
        ],
    },
    Entry {
        path: "delete thread",
        exit: [
            "the thread was erased",
            "no thread has that id, or the answer was no",
            USAGE,
        ],
        examples: &["crosstalk delete thread 01J9J3D3 --yes"],
    },
    Entry {
        path: "delete message",
        exit: [
            "the message was erased",
            "no message has that id, or the answer was no",
            USAGE,
        ],
        examples: &["crosstalk delete message 01J9J3DB --yes --json"],
    },
    Entry {
        path: "delete pastes",
        exit: ["the unused pastes were erased", "the answer was no", USAGE],
        examples: &["crosstalk delete pastes --yes"],
    },
    Entry {
        path: "delete paste",
        exit: [
            "the paste was erased",
            "no paste has that id, or the answer was no",
            USAGE,
        ],
        examples: &["crosstalk delete paste 12 --yes"],
    },
    Entry {
        path: "primer",
        exit: [
            "the primer was printed (or copied)",
            "the first envelope could not be written (no contact or sender to write it)",
            USAGE,
        ],
        examples: &[
            "crosstalk primer --to CLAUDE",
            "crosstalk primer --to CLAUDE --context 'trip plan' --copy",
        ],
    },
    Entry {
        path: "watch",
        exit: [
            "stopped with Ctrl-C",
            UNUSED,
            "no clipboard can be read here, the database could not be opened, the desk refused the token (--to), or usage error",
        ],
        examples: &[
            "crosstalk watch",
            "crosstalk watch --to http://127.0.0.1:8787 --token TOKEN",
        ],
    },
    Entry {
        path: "poll",
        exit: [
            "the POLL was tallied (and closed, with --close)",
            "the id names no POLL",
            "usage error (--close before the deadline), or the database could not be read",
        ],
        examples: &["crosstalk poll 01J9J3DB", "crosstalk poll 01J9J3DB --close"],
    },
    Entry {
        path: "verify",
        exit: [
            "every signature is valid",
            "no envelope found, or a signature is missing, invalid or by an unknown key",
            USAGE,
        ],
        examples: &[
            "crosstalk verify signed.crosstalk",
            "crosstalk verify --key pub.pem --json signed.crosstalk",
        ],
    },
    Entry {
        path: "backup",
        exit: [
            "the copy was written",
            UNUSED,
            "usage error, or FILE exists (without --force) or could not be written",
        ],
        examples: &["crosstalk backup ~/crosstalk-backup.db"],
    },
    Entry {
        path: "pastes",
        exit: [
            "the pastes were listed (or one printed)",
            "no paste has that id",
            USAGE,
        ],
        examples: &["crosstalk pastes", "crosstalk pastes --json"],
    },
    Entry {
        path: "pastes show",
        exit: [
            "the paste was printed as received",
            "no paste has that id",
            USAGE,
        ],
        examples: &["crosstalk pastes show 12"],
    },
    Entry {
        path: "keys",
        exit: ["done", "see each subcommand", USAGE],
        examples: &[
            "crosstalk keys list",
            "crosstalk keys generate me@example.com -o me.pem",
        ],
    },
    Entry {
        path: "keys list",
        exit: ["the keys were listed", UNUSED, USAGE],
        examples: &["crosstalk keys list --json"],
    },
    Entry {
        path: "keys add",
        exit: [
            "the key is trusted for the id",
            "the key could not be read, or does not match a did:key id",
            USAGE,
        ],
        examples: &[
            "crosstalk keys add me@example.com ed25519:pk=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=",
        ],
    },
    Entry {
        path: "keys trust",
        exit: [
            "the changed key is accepted",
            "the id has no key, or no change to accept",
            USAGE,
        ],
        examples: &["crosstalk keys trust me@example.com"],
    },
    Entry {
        path: "keys remove",
        exit: ["the key is forgotten", "the id has no key", USAGE],
        examples: &["crosstalk keys remove me@example.com"],
    },
    Entry {
        path: "keys generate",
        exit: [
            "the key pair was made",
            "the id already has a key",
            "usage error, or the file exists or could not be written",
        ],
        examples: &["crosstalk keys generate me@example.com -o me.pem"],
    },
    Entry {
        path: "attachments",
        exit: [
            "every attachment checks out",
            "an attachment is missing, mismatched or a link",
            USAGE,
        ],
        examples: &["crosstalk attachments verify 01J9J3DB --dir ~/crosstalk-files"],
    },
    Entry {
        path: "attachments verify",
        exit: [
            "every attachment checks out",
            "an attachment is missing, mismatched or a link, or no message has that id",
            USAGE,
        ],
        examples: &["crosstalk attachments verify message.crosstalk --dir . --json"],
    },
    Entry {
        path: "serve",
        exit: [
            "stopped by SIGINT or SIGTERM after the requests in flight",
            UNUSED,
            "usage error (no token beyond loopback), the address is taken, or the database could not be opened",
        ],
        examples: &[
            "crosstalk serve",
            "crosstalk serve --listen 0.0.0.0:8787 --token TOKEN",
        ],
    },
    Entry {
        path: "send",
        exit: [
            "the peer took the envelope (ACK)",
            "the peer refused it (ERROR), or the input is not one valid envelope",
            "usage error, the peer could not be reached, or the database could not be written",
        ],
        examples: &["crosstalk send http://127.0.0.1:8787 reply.crosstalk --token TOKEN"],
    },
    Entry {
        path: "completions",
        exit: ["the script was printed", UNUSED, USAGE],
        examples: &[
            "crosstalk completions bash > ~/.local/share/bash-completion/completions/crosstalk",
            "crosstalk completions fish",
        ],
    },
    Entry {
        path: "man",
        exit: [
            "the page was printed (or the pages written)",
            UNUSED,
            "usage error (no such subcommand), or DIR could not be written",
        ],
        examples: &[
            "crosstalk man | man -l -",
            "crosstalk man --dir ~/.local/share/man/man1",
        ],
    },
];

/// The entry for `path` (`"queue done"`).
pub(crate) fn entry(path: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| e.path == path)
}

/// The text `--help` ends with: the exit statuses, then the examples.
pub(crate) fn after_help(entry: &Entry) -> String {
    let mut text = String::from("Exit status:\n");
    for (code, meaning) in entry.exit.iter().enumerate() {
        text.push_str(&format!("  {code}  {meaning}\n"));
    }
    text.push_str("\nExamples:\n");
    for example in entry.examples {
        text.push_str(&format!("  {example}\n"));
    }
    text.truncate(text.trim_end().len());
    text
}

/// `command` (the program's, from clap) with every command's `after_help` from the table.
pub(crate) fn annotate(command: clap::Command) -> clap::Command {
    annotate_at(command, "")
}

fn annotate_at(mut command: clap::Command, path: &str) -> clap::Command {
    if let Some(e) = entry(path) {
        command = command.after_help(after_help(e));
    }
    let names: Vec<String> = command
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        let child = if path.is_empty() {
            name.clone()
        } else {
            format!("{path} {name}")
        };
        command = command.mut_subcommand(&name, |s| annotate_at(s, &child));
    }
    command
}

/// Every command's path below the program (hidden and help commands left out), the
/// program's `""` first.
#[cfg(test)]
pub(crate) fn paths(command: &clap::Command) -> Vec<String> {
    let mut out = vec![String::new()];
    walk(command, "", &mut out);
    out
}

#[cfg(test)]
fn walk(command: &clap::Command, path: &str, out: &mut Vec<String>) {
    for sub in command.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let child = if path.is_empty() {
            sub.get_name().to_string()
        } else {
            format!("{path} {}", sub.get_name())
        };
        out.push(child.clone());
        walk(sub, &child, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn program() -> clap::Command {
        annotate(crate::cli::Cli::command())
    }

    #[test]
    fn every_command_has_an_entry() {
        let missing: Vec<String> = paths(&program())
            .into_iter()
            .filter(|p| entry(p).is_none())
            .collect();
        assert!(missing.is_empty(), "no help entry for {missing:?}");
    }

    #[test]
    fn every_entry_names_a_command() {
        let known = paths(&program());
        for e in ENTRIES {
            assert!(known.iter().any(|p| p == e.path), "no command `{}`", e.path);
        }
    }

    #[test]
    fn every_example_parses_and_runs_its_own_command() {
        for e in ENTRIES {
            assert!(!e.examples.is_empty(), "`{}` has no example", e.path);
            for example in e.examples {
                let words = shell_words(example);
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                assert_eq!(words[0], "crosstalk", "{example}");
                let matches = program()
                    .try_get_matches_from(&words)
                    .unwrap_or_else(|err| panic!("`{example}` does not parse: {err}"));
                let mut path = Vec::new();
                let mut m = &matches;
                while let Some((name, sub)) = m.subcommand() {
                    path.push(name);
                    m = sub;
                }
                assert!(
                    path.join(" ").starts_with(e.path),
                    "`{example}` runs `{}`, not `{}`",
                    path.join(" "),
                    e.path
                );
            }
        }
    }

    #[test]
    fn the_help_ends_with_the_exit_statuses_and_examples() {
        let mut p = program();
        let help = p
            .find_subcommand_mut("queue")
            .and_then(|q| q.find_subcommand_mut("done"))
            .map(|d| d.render_help().to_string())
            .unwrap_or_default();
        let tail = help.split("Exit status:").nth(1).unwrap_or_default();
        assert!(tail.contains("1  no message has that id"), "{help}");
        assert!(
            tail.trim_end().ends_with("crosstalk queue done 01J9J3DB"),
            "{help}"
        );
    }

    /// Splits an example as a shell would: words, quotes kept together, a redirection
    /// (`>`, `<`, `|` and what follows) and a leading `NAME=value` left out.
    fn shell_words(line: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut word = String::new();
        let mut quote = None;
        let mut started = false;
        for c in line.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => word.push(c),
                (None, '\'' | '"') => {
                    quote = Some(c);
                    started = true;
                }
                (None, ' ') => {
                    if started || !word.is_empty() {
                        words.push(std::mem::take(&mut word));
                    }
                    started = false;
                }
                (None, c) => word.push(c),
            }
        }
        if started || !word.is_empty() {
            words.push(word);
        }
        if let Some(at) = words
            .iter()
            .position(|w| matches!(w.as_str(), ">" | "<" | "|"))
        {
            words.truncate(at);
        }
        while words
            .first()
            .is_some_and(|w| w.contains('=') && !w.starts_with('-'))
        {
            words.remove(0);
        }
        words
    }
}
