//! What the `crosstalk` binary lets reach a terminal, and what it keeps exact.
//!
//! Envelope text is someone else's: on a terminal (a pseudo-terminal here, made by
//! util-linux `script`) no escape sequence, C1 control or bidi control from it may arrive
//! raw, whichever command prints it; through a pipe the commands that reproduce envelopes
//! keep the exact bytes. JSON escapes everything a terminal would act on, error messages
//! sanitize the file names and arguments they quote, and deep reply chains print in
//! output linear in their length.

use crate::helpers::common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::{Run, run};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_crosstalk");

/// Sets the clipboard (OSC 52, BEL-terminated), the window title, clears the screen, uses
/// an 8-bit CSI, reverses the reading direction, hides a character, and hides the words
/// "rm -rf" in Unicode tag characters (invisible text a model reads).
const PAYLOAD: &str = "\u{1b}]52;c;cm0gLXJmIH4vKg==\u{7}\u{1b}]0;pwned\u{1b}\\\u{1b}[2J\u{9b}31m\u{202e}gpj.exe\u{200b}\u{E0072}\u{E006D}\u{E0020}\u{E002D}\u{E0072}\u{E0066}";

fn evil_envelope() -> String {
    format!(
        "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nsession: 2025-10-09T16Z abc123\ncontext: review \u{202e}txt\nintent: REQUEST\nbody: |\n  zebraword {PAYLOAD} end\nsig: none\n[[END]]\n"
    )
}

/// The characters of `s` a terminal would act on or that hide or reorder text: every
/// control character (C0, DEL, C1) except line endings, and the bidi and zero-width
/// format characters. Listed here independently of the sanitizer under test.
fn raw_controls(s: &str) -> Vec<char> {
    s.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\r')
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{061c}' | '\u{feff}' | '\u{e0000}'..='\u{e007f}')
        })
        .collect()
}

fn assert_clean(what: &str, s: &str) {
    let raw = raw_controls(s);
    assert!(raw.is_empty(), "{what} let {raw:?} through raw: {s:?}");
}

/// Runs `sh -c command` with its standard output and error on a pseudo-terminal, with
/// `$CT` naming the binary and `env` set, and returns everything the terminal received.
fn on_terminal(command: &str, env: &[(&str, &str)]) -> (i32, String) {
    let mut cmd = Command::new("script");
    cmd.args(["-qec", command, "/dev/null"])
        .env("CT", BIN)
        .env("SHELL", "/bin/sh")
        .env("XDG_CONFIG_HOME", "/nonexistent/crosstalk-test-config")
        .env_remove("CROSSTALK_CONFIG")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap_or_else(|e| {
        panic!(
            "cannot run `script` (util-linux) to give the binary a terminal: {e}; install util-linux"
        )
    });
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), text)
}

fn json_of(r: &Run) -> Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", r.stdout, r.stderr))
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A database holding the evil envelope; returns its thread and message ids.
fn evil_store(db: &Path) -> (String, String) {
    let db = db.to_str().expect("utf-8 path");
    let r = run(&["--db", db, "import", "-"], &evil_envelope());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let threads = json_of(&run(&["--db", db, "threads", "--json"], ""));
    let thread = threads[0]["id"].as_str().expect("thread id").to_string();
    let shown = json_of(&run(&["--db", db, "show", &thread, "--json"], ""));
    let message = shown["messages"][0]["message"]
        .as_str()
        .expect("message id")
        .to_string();
    (thread, message)
}

#[test]
fn no_command_lets_envelope_controls_reach_a_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("evil.txt");
    std::fs::write(&file, evil_envelope()).expect("write");
    let db = dir.path().join("t.db");
    let (thread, message) = evil_store(&db);
    let env = [
        ("F", file.to_str().expect("utf-8")),
        ("DB", db.to_str().expect("utf-8")),
        ("T", thread.as_str()),
        ("M", message.as_str()),
        ("KEY", &fixture("rc1/private.pem")),
        ("PUB", &fixture("rc1/public.pem")),
        ("EVIL", PAYLOAD),
    ];
    // Commands whose job is to reproduce envelope text: on a terminal it is shown with
    // placeholders, and standard error says so once.
    let reproducing = [
        r#""$CT" fmt "$F""#,
        r#""$CT" error --code E-ROUTE --reason "$EVIL" "$F""#,
        r#""$CT" sign --key "$KEY" "$F""#,
        r#""$CT" --db "$DB" export "$T""#,
        r#""$CT" --db "$DB" reply "$M" --body "$EVIL""#,
        r#""$CT" new --from A --to B --intent REQUEST --context c --body "$EVIL""#,
    ];
    for command in reproducing {
        let (_, screen) = on_terminal(command, &env);
        assert_clean(command, &screen);
        assert!(
            screen.contains('␛')
                && screen.contains("⟨U+202E⟩")
                && screen.contains("⟨tags: rm -rf⟩"),
            "{command}: the controls are shown as placeholders: {screen}"
        );
        let notes: Vec<_> = screen.match_indices("note: ").collect();
        assert_eq!(notes.len(), 1, "{command}: one note: {screen}");
        assert!(
            screen.contains("shown as placeholders; redirect to a file for the exact bytes"),
            "{command}: {screen}"
        );
    }
    // Commands for people, and JSON: nothing raw either, and nothing to note.
    let readable = [
        r#""$CT" parse "$F""#,
        r#""$CT" parse --json "$F""#,
        r#""$CT" check "$F""#,
        r#""$CT" verify --key "$PUB" "$F""#,
        r#""$CT" --db "$DB" show "$T""#,
        r#""$CT" --db "$DB" show --json "$T""#,
        r#""$CT" --db "$DB" export --format markdown "$T""#,
        r#""$CT" --db "$DB" export --format json "$T""#,
        r#""$CT" --db "$DB" threads"#,
        r#""$CT" --db "$DB" search zebraword"#,
        r#""$CT" --db "$DB" search --json zebraword"#,
    ];
    for command in readable {
        let (_, screen) = on_terminal(command, &env);
        assert_clean(command, &screen);
        assert!(!screen.contains("note: "), "{command}: {screen}");
    }
    // The hidden words are named where the envelope is read.
    let (_, screen) = on_terminal(r#""$CT" parse "$F""#, &env);
    assert!(
        screen.contains("hidden-text") && screen.contains("“rm -rf”"),
        "{screen}"
    );
    // The exit status is the command's own.
    assert_eq!(on_terminal(r#""$CT" fmt "$F""#, &env).0, 0);
    assert_eq!(on_terminal(r#""$CT" parse /nonexistent"#, &env).0, 2);
}

#[test]
fn through_a_pipe_the_bytes_are_exact() {
    let evil = evil_envelope();
    let r = run(&["fmt"], &evil);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(PAYLOAD), "{:?}", r.stdout);
    assert!(!r.stderr.contains("note: "), "{}", r.stderr);
    assert_clean("fmt's diagnostics", &r.stderr);

    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("t.db");
    let (thread, message) = evil_store(&db);
    let db = db.to_str().expect("utf-8");
    let exported = run(&["--db", db, "export", &thread], "");
    assert_eq!(exported.code, 0, "{}", exported.stderr);
    assert!(exported.stdout.contains(PAYLOAD), "{:?}", exported.stdout);
    assert!(!exported.stderr.contains("note: "), "{}", exported.stderr);
    let reply = run(&["--db", db, "reply", &message, "--body", PAYLOAD], "");
    assert_eq!(reply.code, 0, "{}", reply.stderr);
    assert!(reply.stdout.contains(PAYLOAD), "{:?}", reply.stdout);
    let signed = run(&["sign", "--key", &fixture("rc1/private.pem")], &evil);
    assert!(signed.stdout.contains(PAYLOAD), "{:?}", signed.stdout);
    let verified = run(
        &["verify", "--key", &fixture("rc1/public.pem")],
        &signed.stdout,
    );
    assert_eq!(verified.code, 0, "{}{}", verified.stdout, verified.stderr);
}

#[test]
fn json_escapes_del_c1_bidi_and_zero_width_and_decodes_to_the_same_text() {
    let body = "a\u{7f}b\u{85}c\u{9b}d\u{202e}e\u{2066}f\u{200b}g\u{feff}h\u{ad}i\u{1b}j é 😀";
    let text = format!(
        "[[A→B v1]]\nuser: u\nsession: 2025-10-09T16Z abc123\ncontext: c\u{200f}\nintent: REQUEST\nbody: |\n  {body}\nsig: none\n[[END]]\n"
    );
    let r = run(&["parse", "--json"], &text);
    assert_clean("parse --json", &r.stdout);
    for escape in [
        "\\u007f", "\\u0085", "\\u009b", "\\u202e", "\\u2066", "\\u200b", "\\u00ad",
    ] {
        assert!(r.stdout.contains(escape), "{escape} in {}", r.stdout);
    }
    let v = json_of(&r);
    assert_eq!(v["envelopes"][0]["body"], body);
    assert_eq!(v["envelopes"][0]["context"], "c\u{200f}");

    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("t.db");
    let db = db.to_str().expect("utf-8");
    assert_eq!(run(&["--db", db, "import", "-"], &text).code, 0);
    let threads = run(&["--db", db, "threads", "--json"], "");
    assert_clean("threads --json", &threads.stdout);
    let thread = json_of(&threads)[0]["id"].as_str().expect("id").to_string();
    for args in [
        &["show", "--json", thread.as_str()][..],
        &["export", "--format", "json", thread.as_str()],
    ] {
        let r = run(&[&["--db", db][..], args].concat(), "");
        assert_clean(&format!("{args:?}"), &r.stdout);
        assert_eq!(json_of(&r)["messages"][0]["body"], body);
    }
}

#[test]
fn file_names_and_arguments_in_errors_are_sanitized() {
    let dir = tempfile::tempdir().expect("tempdir");
    let evil_name = "x\u{1b}]52;c;cm0gLXJmIH4vKg==\u{7}\u{1b}[2J\u{202e}txt.exe";
    let missing = dir.path().join(evil_name);
    let missing = missing.to_str().expect("utf-8");
    let db = dir.path().join("t.db");
    let db = db.to_str().expect("utf-8");
    let key = fixture("rc1/private.pem");
    let cases: Vec<Vec<&str>> = vec![
        vec!["check", missing],
        vec!["parse", missing],
        vec!["fmt", missing],
        vec!["sign", "--key", &key, missing],
        vec!["sign", "--key", missing],
        vec!["verify", "--key", missing],
        vec!["--db", db, "import", missing],
        vec!["--db", db, "show", evil_name],
        vec!["--db", db, "export", evil_name],
        vec!["--db", db, "reply", evil_name],
        vec!["error", "--code", evil_name],
        vec!["parse", "--bogus\u{1b}[2J\u{202e}"],
    ];
    for args in cases {
        let r = run(&args, "");
        assert!(r.code == 1 || r.code == 2, "{args:?}: exit {}", r.code);
        assert_clean(&format!("{args:?} stderr"), &r.stderr);
        // The argument parser's own messages too show escape sequences as placeholders.
        assert!(
            r.stderr.contains('␛') && r.stderr.contains("⟨U+202E⟩"),
            "{args:?}: the name is still shown, with placeholders: {}",
            r.stderr
        );
    }

    // A real file with such a name: its diagnostics name it with placeholders too.
    let real = dir.path().join(evil_name);
    std::fs::write(&real, "[[END]]\n").expect("write");
    let real = real.to_str().expect("utf-8");
    for args in [&["check", real][..], &["parse", real], &["fmt", real]] {
        let r = run(args, "");
        assert_eq!(r.code, 1, "{args:?}");
        assert_clean(&format!("{args:?} stdout"), &r.stdout);
        assert_clean(&format!("{args:?} stderr"), &r.stderr);
        assert!(
            format!("{}{}", r.stdout, r.stderr).contains("⟨U+202E⟩txt.exe:1:1:"),
            "{args:?}: {}{}",
            r.stdout,
            r.stderr
        );
    }
}

/// clap's usage errors quote the argument as given, escape sequences shown as placeholders
/// rather than dropped (dropped, `pars\e[31me` read as the command `parse`); help and
/// version are still clap's own text, exit 0.
#[test]
fn usage_errors_show_the_arguments_escape_sequences() {
    let r = run(&["pars\u{1b}[31me"], "");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("'pars␛[31me'"), "{}", r.stderr);
    assert!(!r.stderr.contains('\u{1b}'), "{:?}", r.stderr);
    let r = run(&["pastes", "show", "9\u{1b}]0;X\u{7}"], "");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("invalid value '9␛]0;X"), "{}", r.stderr);
    assert_clean("pastes show stderr", &r.stderr);
    for flag in ["--help", "--version"] {
        let r = run(&[flag], "");
        assert_eq!(r.code, 0, "{flag}: {}", r.stderr);
        assert!(r.stdout.contains("crosstalk"), "{flag}: {}", r.stdout);
    }
    let r = run(&["search", "--help"], "");
    assert!(r.stdout.contains("Usage: crosstalk search"), "{}", r.stdout);
}

/// A ULID-shaped id, distinct for each `n`.
fn id(n: usize) -> String {
    const CROCKFORD: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let tail: String = (0..6)
        .rev()
        .map(|i| CROCKFORD[(n >> (5 * i)) & 31] as char)
        .collect();
    format!("01J9J3D3M6A4M3WQX8G1Z{}", &tail[1..])
}

#[test]
fn a_deep_chain_prints_in_output_linear_in_its_length() {
    const DEPTH: usize = 5_000;
    let thread = id(0);
    let mut text = String::new();
    for n in 0..DEPTH {
        let parent = if n == 0 {
            String::new()
        } else {
            format!("parent: {}\n", id(n - 1))
        };
        text.push_str(&format!(
            "[[A→B v1]]\nuser: u\nsession: 2025-10-09T16Z abc123\nthread: {thread}\n{parent}message: {}\ncontext: chain\nintent: REQUEST\nbody: |\n  step {n}\nsig: none\n[[END]]\n\n",
            id(n)
        ));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("t.db");
    let db = db.to_str().expect("utf-8");
    let r = run(&["--db", db, "import", "--json", "-"], &text);
    assert_eq!(r.code, 0, "{}", r.stderr);

    let show = run(&["--db", db, "show", &thread], "");
    assert_eq!(show.code, 0, "{}", show.stderr);
    assert_eq!(show.stdout.lines().count(), DEPTH + 1);
    // Each line is bounded whatever its depth: indentation would make the total quadratic
    // (about 25 MB here; a 20 000-deep chain printed 402 MB).
    let longest = show.stdout.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 160, "a line of {longest} bytes");
    assert!(
        show.stdout.len() < DEPTH * 160,
        "{} bytes",
        show.stdout.len()
    );
    let last = show.stdout.lines().last().expect("a line");
    assert!(
        last.starts_with(&format!("{}[depth {}] REQUEST", "  ".repeat(9), DEPTH - 1)),
        "{last}"
    );
    let shallow: Vec<&str> = show.stdout.lines().skip(1).take(9).collect();
    for (depth, line) in shallow.iter().enumerate() {
        let indent = line.len() - line.trim_start().len();
        assert_eq!(indent, 2 * (depth + 1), "{line}");
        assert!(!line.contains("[depth"), "{line}");
    }

    let md = run(&["--db", db, "export", "--format", "markdown", &thread], "");
    assert_eq!(md.code, 0, "{}", md.stderr);
    let longest = md.stdout.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 200, "a line of {longest} bytes");
    assert!(md.stdout.len() < DEPTH * 300, "{} bytes", md.stdout.len());
    assert!(
        md.stdout
            .contains(&format!("## {} [depth {}] A → B", "↳".repeat(8), DEPTH - 1)),
        "the deepest reply says its depth"
    );
    assert!(md.stdout.contains(&format!("## {} A → B", "↳".repeat(8))));
}

/// Output meant for people is clean through a pipe too (`| head`, `| less -R`, `tee`): only
/// the commands that reproduce envelopes keep the exact bytes. Here the payload sits in the
/// intent, the context and a META block as well as the body, and in an argument a
/// command quotes back in its error.
#[test]
fn human_output_is_clean_through_a_pipe_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("t.db");
    let db = db.to_str().expect("utf-8");
    let evil = format!(
        "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nsession: 2025-10-09T16Z abc123\ncontext: c{PAYLOAD}\nintent: X{PAYLOAD}\n\nmeta: privacy\nPII: present\nConsent: explicit_yes{PAYLOAD}\nConsent-ID: c{PAYLOAD}\n\nbody: |\n  zebraword {PAYLOAD} end\nsig: none\n[[END]]\n"
    );
    let r = run(&["--db", db, "import", "-"], &evil);
    assert_clean("import", &format!("{}{}", r.stdout, r.stderr));
    let thread = json_of(&run(&["--db", db, "threads", "--json"], ""))[0]["id"]
        .as_str()
        .expect("thread id")
        .to_string();
    for args in [
        vec!["queue"],
        vec!["threads"],
        vec!["show", thread.as_str()],
        vec!["search", "zebraword"],
        vec!["consent"],
        vec!["keys", "list"],
    ] {
        let mut all = vec!["--db", db];
        all.extend(args.iter().copied());
        let r = run(&all, "");
        assert_clean(&args.join(" "), &format!("{}{}", r.stdout, r.stderr));
    }
    let to = format!("claude://x y{PAYLOAD}");
    let r = run(&["--db", db, "primer", "--to", &to], "");
    assert_ne!(r.code, 0);
    assert_clean("primer's error", &r.stderr);
}

/// Bytes hidden in a run of variation selectors (each selector spells one byte) are named
/// where the envelope is read, shown as placeholders on a terminal and escaped in JSON; a
/// single U+FE0F after an emoji stays as it is.
#[test]
fn variation_selector_runs_are_named_and_shown() {
    let hidden: String = "IGNORE PREVIOUS"
        .bytes()
        .map(|b| char::from_u32(0xE0100 + u32::from(b) - 16).expect("a selector"))
        .collect();
    let text = format!(
        "[[A→B v1]]\nuser: u\nsession: 2025-10-09T16Z abc123\ncontext: c\nintent: REQUEST\nbody: |\n  Hello \u{2764}\u{FE0F}{hidden} world\nsig: none\n[[END]]\n"
    );
    let r = run(&["parse"], &text);
    let out = format!("{}{}", r.stdout, r.stderr);
    assert!(out.contains("hidden-text"), "{out}");
    assert!(out.contains("“IGNORE PREVIOUS”"), "{out}");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("vs.txt");
    std::fs::write(&file, &text).expect("write");
    let (_, screen) = on_terminal(
        r#""$CT" parse "$F""#,
        &[("F", file.to_str().expect("utf-8"))],
    );
    assert!(!screen.contains(&hidden), "{screen}");
    assert!(screen.contains("⟨U+E0139⟩"), "{screen}");
    assert!(screen.contains("\u{2764}\u{FE0F}"), "{screen}");
    let json = run(&["parse", "--json"], &text).stdout;
    assert!(!json.contains('\u{E0139}'), "{json}");
}
