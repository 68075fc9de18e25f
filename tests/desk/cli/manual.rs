//! The completion scripts and manual pages, read by the programs that read them: bash sources
//! the script and completes with it; `man -l` renders every page.

use std::process::Command;

use crate::helpers::common::run;

/// Every command a script reaches (the nested ones too), as the completion and the pages
/// must know them.
const COMMANDS: &[&str] = &[
    "parse",
    "fmt",
    "check",
    "new",
    "error",
    "sign",
    "import",
    "threads",
    "archive",
    "consent",
    "queue",
    "show",
    "export",
    "search",
    "reply",
    "delete",
    "primer",
    "watch",
    "poll",
    "verify",
    "backup",
    "pastes",
    "keys",
    "attachments",
    "serve",
    "send",
    "completions",
    "man",
];

/// What bash offers after `words` (the last one being completed), with the script loaded.
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let line = words.join(" ");
    let program = format!(
        "source '{}'\nCOMP_WORDS=({line})\nCOMP_CWORD={}\nCOMP_LINE='{line}'\nCOMP_POINT=${{#COMP_LINE}}\n\
         _crosstalk crosstalk '{}' '{}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        words.len() - 1,
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_loads_the_completion_and_completes_commands_and_flags() {
    let r = run(&["completions", "bash"], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("crosstalk.bash");
    std::fs::write(&script, &r.stdout).unwrap();
    let syntax = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        syntax.status.success(),
        "{}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    let registered = Command::new("bash")
        .args([
            "--norc",
            "-c",
            &format!("source '{}'; complete -p crosstalk", script.display()),
        ])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&registered.stdout).contains("crosstalk"),
        "{}",
        String::from_utf8_lossy(&registered.stderr)
    );
    let all = bash_completes(&script, &["crosstalk", ""]);
    for c in COMMANDS {
        assert!(all.iter().any(|w| w == c), "`{c}` not offered: {all:?}");
    }
    assert_eq!(bash_completes(&script, &["crosstalk", "que"]), ["queue"]);
    let flags = bash_completes(&script, &["crosstalk", "threads", "--"]);
    for f in ["--json", "--limit", "--archived", "--db"] {
        assert!(flags.iter().any(|w| w == f), "`{f}` not offered: {flags:?}");
    }
}

#[test]
fn every_shell_gets_a_script_and_an_unknown_one_is_a_usage_error() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let r = run(&["completions", shell], "");
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        assert!(
            r.stdout.contains("crosstalk") && r.stdout.contains("threads"),
            "{shell}"
        );
    }
    // Where the shell is installed, it reads its script without an error.
    for (shell, args) in [("zsh", &["-n"][..]), ("fish", &["--no-execute"][..])] {
        if Command::new(shell).arg("--version").output().is_err() {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("script");
        std::fs::write(&file, run(&["completions", shell], "").stdout).unwrap();
        let out = Command::new(shell).args(args).arg(&file).output().unwrap();
        assert!(
            out.status.success(),
            "{shell}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let r = run(&["completions", "tcsh"], "");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("possible values"), "{}", r.stderr);
}

/// A page as `man -l` shows it, in plain text.
fn rendered(page: &std::path::Path) -> String {
    let out = Command::new("man")
        .arg("-l")
        .arg(page)
        .env("MANWIDTH", "80")
        .env("MAN_KEEP_FORMATTING", "0")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
        .expect("man (man-db) is installed by .ci/run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Bold and underline as overstrikes (`N\bN`), taken out as `col -b` would.
    let text = String::from_utf8_lossy(&out.stdout);
    let mut plain = String::new();
    for c in text.chars() {
        if c == '\u{8}' {
            plain.pop();
        } else {
            plain.push(c);
        }
    }
    plain
}

#[test]
fn man_renders_every_page_with_its_options_exit_statuses_and_examples() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&["man", "--dir", dir.path().to_str().unwrap()], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let main = rendered(&dir.path().join("crosstalk.1"));
    for section in ["NAME", "SYNOPSIS", "COMMANDS", "EXIT STATUS", "EXAMPLES"] {
        assert!(main.contains(section), "no {section}: {main}");
    }
    for c in COMMANDS {
        let page = dir.path().join(format!("crosstalk-{c}.1"));
        assert!(page.exists(), "no page for {c}");
    }
    let done = rendered(&dir.path().join("crosstalk-queue-done.1"));
    assert!(done.contains("crosstalk-queue-done"), "{done}");
    assert!(
        done.contains("EXIT STATUS") && done.contains("no message has that id"),
        "{done}"
    );
    assert!(done.contains("crosstalk queue done 01J9J3DB"), "{done}");
    let threads = rendered(&dir.path().join("crosstalk-threads.1"));
    assert!(
        threads.contains("--limit") && threads.contains("--archived"),
        "{threads}"
    );
    // One page on standard output, the same as the one written.
    let r = run(&["man", "queue", "done"], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        std::fs::read_to_string(dir.path().join("crosstalk-queue-done.1")).unwrap()
    );
    let r = run(&["man", "nosuch"], "");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("is no command"), "{}", r.stderr);
}

#[test]
fn every_commands_help_ends_with_its_exit_statuses_and_an_example() {
    for c in COMMANDS {
        let r = run(&[c, "--help"], "");
        assert_eq!(r.code, 0, "{c}: {}", r.stderr);
        let tail = r
            .stdout
            .split("Exit status:")
            .nth(1)
            .unwrap_or_else(|| panic!("{c}: {}", r.stdout));
        assert!(
            tail.contains("  0  ") && tail.contains("  2  "),
            "{c}: {tail}"
        );
        let examples = tail
            .split("Examples:")
            .nth(1)
            .unwrap_or_else(|| panic!("{c}: {tail}"));
        assert!(
            examples.contains(&format!("crosstalk {c}")),
            "{c}: {examples}"
        );
    }
}
