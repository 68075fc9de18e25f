//! Copy chain and paste, with a hand-built [`Env`]: arboard is never called (the test machine
//! may or may not have a display), so "system clipboard" here always fails over.

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine as _;

use super::*;

const TEXT: &str = "héllo — 日本語 🙂\nsecond line\n";

/// A local desktop session with no way to reach arboard; writes go to a terminal.
fn env() -> Env {
    Env {
        terminal: true,
        ..Env::default()
    }
}

fn clipboard(config: ClipboardConfig, env: Env, dir: &Path) -> Clipboard {
    Clipboard::new(config, env, dir.join("data"))
}

fn with_command(command: &str) -> ClipboardConfig {
    ClipboardConfig {
        command: Some(command.to_owned()),
        ..ClipboardConfig::default()
    }
}

/// The text an OSC 52 sequence carries, checking its framing.
fn decode_osc52(out: &[u8]) -> String {
    let s = std::str::from_utf8(out).unwrap();
    let b64 = s
        .strip_prefix("\x1b]52;c;")
        .unwrap()
        .strip_suffix('\x07')
        .unwrap();
    String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap(),
    )
    .unwrap()
}

/// A `PATH` directory holding an executable `name` script with `body`.
fn fake_program(dir: &Path, name: &str, body: &str) -> OsString {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The system directories stay after it, for `cat` and friends.
    std::env::join_paths([bin, "/usr/bin".into(), "/bin".into()]).unwrap()
}

#[test]
fn remote_session_sends_osc52_first_even_with_a_display() {
    let dir = tempfile::tempdir().unwrap();
    for ssh in [
        Env {
            ssh_connection: Some("10.0.0.1 5 10.0.0.2 22".into()),
            ..env()
        },
        Env {
            ssh_tty: Some("/dev/pts/3".into()),
            ..env()
        },
    ] {
        // A display (X forwarding) and a working system clipboard must not matter: the remote
        // machine's clipboard is not the operator's.
        let ssh = Env {
            display: Some(":0".into()),
            ..ssh
        };
        let mut cb = clipboard(ClipboardConfig::default(), ssh, dir.path());
        let mut out = Vec::new();
        let report = cb.copy(TEXT, &mut out).unwrap();
        assert_eq!(report.method, Method::Osc52);
        assert_eq!(report.bytes, TEXT.len());
        assert_eq!(report.warning, None);
        assert_eq!(decode_osc52(&out), TEXT);
        assert_eq!(out, osc52_sequence(TEXT).as_bytes());
    }
}

#[test]
fn osc52_sequence_is_plain_base64_with_bel() {
    assert_eq!(osc52_sequence("hi"), "\x1b]52;c;aGk=\x07");
    assert_eq!(osc52_sequence(""), "\x1b]52;c;\x07");
    assert_eq!(decode_osc52(osc52_sequence(TEXT).as_bytes()), TEXT);
}

#[test]
fn inside_tmux_the_sequence_is_not_wrapped() {
    let dir = tempfile::tempdir().unwrap();
    let tmux = Env {
        tmux: Some("/tmp/tmux-1000/default,1,0".into()),
        ..env()
    };
    let mut out = Vec::new();
    clipboard(ClipboardConfig::default(), tmux, dir.path())
        .copy("x", &mut out)
        .unwrap();
    assert_eq!(out, osc52_sequence("x").as_bytes());
}

#[test]
fn no_display_uses_osc52_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let mut cb = clipboard(ClipboardConfig::default(), env(), dir.path());
    let mut out = Vec::new();
    let report = cb.copy(TEXT, &mut out).unwrap();
    assert_eq!(report.method, Method::Osc52);
    assert_eq!(decode_osc52(&out), TEXT);
    assert!(!dir.path().join("data").exists(), "no file written");
}

#[test]
fn no_display_and_no_terminal_falls_back_to_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut cb = clipboard(ClipboardConfig::default(), Env::default(), dir.path());
    let mut out = Vec::new();
    let report = cb.copy(TEXT, &mut out).unwrap();
    assert!(out.is_empty(), "no escape codes in a pipe");
    let file = dir.path().join("data").join("clipboard.txt");
    assert_eq!(report.method, Method::File);
    assert_eq!(report.file.as_deref(), Some(file.as_path()));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), TEXT);
    assert_eq!(
        report.status_line(),
        format!(
            "saved {} bytes to {} (no clipboard available)",
            TEXT.len(),
            file.display()
        )
    );
    // Overwritten, not appended.
    cb.copy("second", &mut out).unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "second");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "private to the owner");
    }
}

#[test]
fn system_clipboard_failure_falls_through_to_osc52() {
    // Local with a display, but arboard unavailable (as when it cannot open the display).
    let dir = tempfile::tempdir().unwrap();
    let local = Env {
        display: Some(":0".into()),
        wayland_display: Some("wayland-0".into()),
        ..env()
    };
    let mut cb = clipboard(ClipboardConfig::default(), local.clone(), dir.path());
    let mut out = Vec::new();
    assert_eq!(cb.copy(TEXT, &mut out).unwrap().method, Method::Osc52);
    assert_eq!(decode_osc52(&out), TEXT);

    // Not a terminal either: the file, and the error trail is not in the report.
    let piped = Env {
        terminal: false,
        ..local
    };
    let mut cb = clipboard(
        ClipboardConfig {
            method: Method::System,
            ..Default::default()
        },
        piped,
        dir.path(),
    );
    let mut out = Vec::new();
    let report = cb.copy(TEXT, &mut out).unwrap();
    assert_eq!(report.method, Method::File);
    assert!(out.is_empty());
}

#[test]
fn configured_command_receives_exactly_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("copied");
    // Larger than a pipe buffer, so the writer must not block the wait.
    let text = TEXT.repeat(5000);
    let config = ClipboardConfig {
        method: Method::Command,
        ..with_command(&format!("cat > '{}'", target.display()))
    };
    let mut cb = clipboard(config, env(), dir.path());
    let mut out = Vec::new();
    let report = cb.copy(&text, &mut out).unwrap();
    assert_eq!(report.method, Method::Command);
    assert_eq!(report.warning, None);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), text);
    assert!(out.is_empty(), "a forced command skips OSC 52");
    assert_eq!(
        report.status_line(),
        "copied 186 KiB with the clipboard command"
    );
}

#[test]
fn failing_command_falls_through_to_the_file() {
    let dir = tempfile::tempdir().unwrap();
    // `false` fails; `true` exits 0 without reading: neither copied anything.
    for command in ["false", "true"] {
        let text = TEXT.repeat(5000); // more than a pipe holds, so `true` cannot hide it
        let config = ClipboardConfig {
            method: Method::Command,
            ..with_command(command)
        };
        let mut cb = clipboard(config, env(), dir.path());
        let report = cb.copy(&text, &mut Vec::new()).unwrap();
        assert_eq!(report.method, Method::File, "{command}");
        assert_eq!(report.warning.as_deref(), Some("no clipboard available"));
        assert!(
            !report.status_line().contains("command"),
            "{}",
            report.status_line()
        );
        assert_eq!(std::fs::read_to_string(cb.fallback_file()).unwrap(), text);
    }
}

#[test]
fn auto_tries_the_command_after_osc52_when_not_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("copied");
    let config = with_command(&format!("cat > '{}'", target.display()));
    let remote = Env {
        ssh_tty: Some("/dev/pts/0".into()),
        ..Env::default()
    };
    let report = clipboard(config, remote, dir.path())
        .copy(TEXT, &mut Vec::new())
        .unwrap();
    assert_eq!(report.method, Method::Command);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), TEXT);
}

#[test]
fn default_command_is_found_on_path_and_run_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("copied");
    let path = fake_program(
        dir.path(),
        "xclip",
        &format!("cat > '{}'", target.display()),
    );
    let x11 = Env {
        display: Some(":0".into()),
        path: Some(path),
        ..Env::default()
    };
    assert_eq!(
        command::default_copy(&x11),
        Some("xclip -selection clipboard")
    );
    assert_eq!(
        command::default_copy(&Env {
            display: None,
            ..x11.clone()
        }),
        None
    );
    let report = clipboard(ClipboardConfig::default(), x11, dir.path())
        .copy(TEXT, &mut Vec::new())
        .unwrap();
    assert_eq!(report.method, Method::Command);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), TEXT);
}

#[test]
fn forced_file_needs_no_excuse_and_total_failure_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = ClipboardConfig {
        method: Method::File,
        ..Default::default()
    };
    let report = clipboard(config.clone(), env(), dir.path())
        .copy("abc", &mut Vec::new())
        .unwrap();
    assert_eq!(report.warning, None);
    assert!(report.status_line().starts_with("saved 3 bytes to "));
    assert!(report.status_line().ends_with("clipboard.txt"));

    // The data directory is a file: nothing can work.
    let blocked = dir.path().join("blocked");
    std::fs::write(&blocked, "").unwrap();
    let mut cb = Clipboard::new(config, env(), blocked);
    let err = cb.copy("abc", &mut Vec::new()).unwrap_err();
    assert!(matches!(&err, ClipboardError::AllFailed(f) if f.len() == 1 && f[0].0 == Method::File));
    assert!(
        err.to_string()
            .starts_with("nothing could take the copy: file: "),
        "{err}"
    );
}

#[test]
fn large_osc52_copy_carries_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let text = "x".repeat(180 * 1024);
    let mut cb = clipboard(ClipboardConfig::default(), env(), dir.path());
    let report = cb.copy(&text, &mut Vec::new()).unwrap();
    assert_eq!(
        report.status_line(),
        "sent 180 KiB to the terminal via OSC 52 — 240 KiB encoded is more than many terminals accept"
    );
    // Under the threshold: no warning; the threshold counts the whole sequence.
    let config = ClipboardConfig {
        osc52_warn_bytes: osc52_sequence(&text).len(),
        ..Default::default()
    };
    let report = clipboard(config, env(), dir.path())
        .copy(&text, &mut Vec::new())
        .unwrap();
    assert_eq!(report.warning, None);
}

#[test]
fn status_lines() {
    let report = |method, bytes, warning: Option<&str>| CopyReport {
        method,
        bytes,
        warning: warning.map(str::to_owned),
        file: None,
    };
    assert_eq!(
        report(Method::System, 1229, None).status_line(),
        "copied 1.2 KiB to the system clipboard"
    );
    assert_eq!(
        report(
            Method::System,
            5,
            Some("it stays on the clipboard only while crosstalk runs")
        )
        .status_line(),
        "copied 5 bytes to the system clipboard — it stays on the clipboard only while crosstalk runs"
    );
    assert_eq!(
        report(Method::Osc52, 1, None).status_line(),
        "sent 1 byte to the terminal via OSC 52"
    );
    assert_eq!(
        report(Method::Command, 0, None).status_line(),
        "copied 0 bytes with the clipboard command"
    );
    let file = CopyReport {
        file: Some("/d/clipboard.txt".into()),
        ..report(Method::File, 3 << 20, None)
    };
    assert_eq!(file.status_line(), "saved 3.0 MiB to /d/clipboard.txt");
}

#[test]
fn human_sizes() {
    let cases = [
        (0, "0 bytes"),
        (1023, "1023 bytes"),
        (1024, "1.0 KiB"),
        (10_239, "10.0 KiB"),
    ];
    for (bytes, want) in cases {
        assert_eq!(human_size(bytes), want);
    }
    assert_eq!(human_size(10_240), "10 KiB");
    assert_eq!(human_size(1_048_576), "1.0 MiB");
}

#[test]
fn paste_reads_the_configured_command() {
    let config = ClipboardConfig {
        paste_command: Some("printf 'h\\303\\251llo\\n'".into()),
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    // Configured: used even in a remote session (the operator chose it).
    let remote = Env {
        ssh_tty: Some("/dev/pts/1".into()),
        ..Env::default()
    };
    assert_eq!(
        clipboard(config, remote, dir.path()).paste().as_deref(),
        Some("héllo\n")
    );

    for failing in ["printf ''", "exit 1"] {
        let config = ClipboardConfig {
            paste_command: Some(failing.into()),
            ..Default::default()
        };
        assert_eq!(
            clipboard(config, Env::default(), dir.path()).paste(),
            None,
            "{failing}"
        );
    }
}

#[test]
fn paste_defaults_only_for_a_local_display() {
    let dir = tempfile::tempdir().unwrap();
    let path = fake_program(dir.path(), "wl-paste", "printf 'from wayland'");
    let wayland = Env {
        wayland_display: Some("wayland-1".into()),
        path: Some(path),
        ..Env::default()
    };
    let mut cb = clipboard(ClipboardConfig::default(), wayland.clone(), dir.path());
    assert_eq!(cb.paste().as_deref(), Some("from wayland"));

    let remote = Env {
        ssh_connection: Some("a 1 b 22".into()),
        ..wayland
    };
    assert_eq!(
        clipboard(ClipboardConfig::default(), remote, dir.path()).paste(),
        None
    );
    assert_eq!(
        clipboard(ClipboardConfig::default(), Env::default(), dir.path()).paste(),
        None
    );
}

#[test]
fn a_hanging_command_is_stopped() {
    let started = Instant::now();
    let result = command::run(
        &Env::default(),
        "exec sleep 30",
        None,
        Duration::from_millis(200),
    );
    assert!(result.unwrap_err().contains("in time"));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn hold_helper_gets_the_text_and_a_newer_copy_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first");
    let hold = |file: &Path| -> Vec<OsString> {
        // Like the real helper: read everything, then keep running.
        let script = format!("cat > '{}'; exec sleep 30", file.display());
        vec!["/bin/sh".into(), "-c".into(), script.into()]
    };
    let mut holders = Vec::new();
    hold::spawn(Some(&hold(&first)), &mut holders, TEXT).unwrap();
    assert_eq!(holders.len(), 1);
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(&first).map_or(true, |s| s != TEXT) {
        assert!(Instant::now() < deadline, "helper never wrote the text");
        std::thread::sleep(Duration::from_millis(10));
    }
    let first_pid = holders[0].id();

    hold::spawn(Some(&hold(&dir.path().join("second"))), &mut holders, "new").unwrap();
    assert_eq!(holders.len(), 1, "the older helper was stopped and reaped");
    assert_ne!(holders[0].id(), first_pid);

    // No command: nothing runs, older helpers still stop.
    hold::spawn(None, &mut holders, "x").unwrap();
    assert!(holders.is_empty());

    let missing = vec![
        OsString::from("/nonexistent/crosstalk"),
        HOLD_SUBCOMMAND.into(),
    ];
    assert!(hold::spawn(Some(&missing), &mut holders, "x").is_err());
}

#[test]
fn config_from_toml() {
    let config: ClipboardConfig = toml::from_str("").unwrap();
    assert_eq!(config, ClipboardConfig::default());
    assert_eq!(config.osc52_warn_bytes, 100_000);
    let config: ClipboardConfig = toml::from_str(
        "method = \"osc52\"\ncommand = \"xclip -selection clipboard\"\nosc52_warn_bytes = 5000",
    )
    .unwrap();
    assert_eq!(config.method, Method::Osc52);
    assert_eq!(
        config.command.as_deref(),
        Some("xclip -selection clipboard")
    );
    assert_eq!(config.osc52_warn_bytes, 5000);
    for method in ["auto", "system", "command", "file"] {
        assert!(toml::from_str::<ClipboardConfig>(&format!("method = \"{method}\"")).is_ok());
    }
    assert!(toml::from_str::<ClipboardConfig>("method = \"OSC52\"").is_err());
    assert!(toml::from_str::<ClipboardConfig>("comand = \"x\"").is_err());
}
