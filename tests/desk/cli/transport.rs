//! The mail and file transports through the real binary: importing `.eml`, mbox and
//! directories of `.crosstalk` files, `export --format eml|mbox`, `export --split DIR`, and
//! `attachments verify`.

use crate::helpers::common;

use std::path::Path;

use common::Run;
use serde_json::Value;

fn run(db: &Path, args: &[&str], stdin: &str) -> Run {
    let mut all = vec!["--db", db.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    common::run(&all, stdin)
}

const THREAD: &str = "01K0000000000000000000000A";

fn env(message: &str, parent: Option<&str>, body: &str, meta: &str) -> String {
    let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
    format!(
        "[[CLAUDE→CHATGPT v1.1]]\nuser: kalle\nthread: {THREAD}\n{parent}message: {message}\n\
         context: mail test\nintent: REQUEST\n{meta}body: |\n  {body}\nsig: none\n[[END]]\n"
    )
}

fn two() -> String {
    format!(
        "{}\n{}",
        env(
            "01K0000000000000000000000A",
            None,
            "From the start, café = 1",
            ""
        ),
        env(
            "01K0000000000000000000000B",
            Some("01K0000000000000000000000A"),
            "second",
            ""
        )
    )
}

fn show(db: &Path) -> Value {
    let r = run(db, &["show", THREAD, "--json"], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

#[test]
fn mbox_export_imports_back_to_the_same_envelopes() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    assert_eq!(run(&a, &["import", "-"], &two()).code, 0);
    let out = dir.path().join("t.mbox");
    let r = run(&a, &["export", THREAD, "-o", out.to_str().unwrap()], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mbox = std::fs::read_to_string(&out).unwrap();
    assert!(mbox.starts_with("From "), "{mbox}");
    assert!(mbox.contains("Subject: [AI Crosstalk] mail test - REQUEST"));
    assert!(mbox.contains("In-Reply-To: <01K0000000000000000000000A@crosstalk.invalid>"));
    // Into a fresh database: the same envelopes, nothing added.
    let r = run(&b, &["import", out.to_str().unwrap()], "");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("2 imported"), "{}", r.stdout);
    let canon = |db: &Path| {
        let r = run(db, &["export", THREAD], "");
        r.stdout
    };
    assert_eq!(canon(&a), canon(&b));
    // Back into the first: duplicates, not conflicts.
    let r = run(&a, &["import", out.to_str().unwrap()], "");
    assert!(r.stdout.contains("0 imported, 2 duplicate"), "{}", r.stdout);
    assert_eq!(r.code, 0);
}

#[test]
fn a_foreign_eml_on_stdin_is_decoded_and_gets_meta_email() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let body = env(
        "01K0000000000000000000000C",
        None,
        "hello =E2=9C=93 there",
        "",
    )
    .replace('→', "=E2=86=92");
    let mail = format!(
        "From: Kalle <kalle@example.com>\r\nTo: bot@example.com\r\nSubject: relay\r\n\
         Message-ID: <x1@mail.example>\r\nIn-Reply-To: <x0@mail.example>\r\n\
         Date: Mon, 6 Jan 2025 10:00:00 +0000\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/alternative; boundary=\"b\"\r\n\r\n--b\r\n\
         Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n\
         {body}\r\n--b\r\nContent-Type: text/html\r\n\r\n<p>ignored</p>\r\n--b--\r\n"
    );
    let r = run(&db, &["import"], &mail);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("1 imported"), "{}", r.stdout);
    let t = show(&db);
    let m = &t["messages"][0];
    assert_eq!(m["message"], "01K0000000000000000000000C");
    let text = run(&db, &["export", THREAD], "").stdout;
    assert!(text.contains("meta: email\nMessage-ID: <x1@mail.example>\nIn-Reply-To: <x0@mail.example>\nSubject: relay\nFrom: Kalle <kalle@example.com>\nDate: 2025-01-06T10:00:00Z"), "{text}");
    assert!(text.contains("hello ✓ there"), "{text}");
    // The raw mail is kept too: the same bytes again store nothing new.
    let r = run(&db, &["import"], &mail);
    assert!(r.stdout.contains("1 duplicate"), "{}", r.stdout);
}

/// A note whose first lines merely look like a mailbox's, above an envelope whose body has
/// `>From ` and column-1 `From ` lines and lost its indentation.
const NOTE: &str = "From the desk of Kalle, Monday\nRe: the deploy question\n\n\
[[KALLE→CLAUDE v1.1]]\nuser: kalle\nthread: 01K0000000000000000000000A\n\
message: 01K0000000000000000000000E\ncontext: mbox-sniff\nintent: REQUEST\nbody: |\n\
Plan:\n>From the logs, the build is green.\nFrom now on we deploy on Mondays.\n\
sig: none\n[[END]]\n";

#[test]
fn text_that_only_looks_like_mail_is_imported_as_parse_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("note.txt");
    std::fs::write(&file, NOTE).unwrap();
    let parsed = run(&dir.path().join("p.db"), &["parse", "--json", "-"], NOTE);
    assert_eq!(parsed.code, 0, "{}", parsed.stderr);
    assert!(parsed.stderr.is_empty(), "{}", parsed.stderr);
    let parsed: Value = serde_json::from_str(&parsed.stdout).unwrap();
    let body = &parsed["envelopes"][0]["body"];
    assert_eq!(
        body,
        "Plan:\n>From the logs, the build is green.\nFrom now on we deploy on Mondays."
    );
    for (db, args, stdin) in [
        ("f.db", vec!["import", file.to_str().unwrap()], ""),
        ("s.db", vec!["import"], NOTE),
    ] {
        let db = dir.path().join(db);
        let r = run(&db, &args, stdin);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        assert!(!r.stdout.contains("read as mail"), "{}", r.stdout);
        let m = &show(&db)["messages"][0];
        assert_eq!(&m["body"], body, "{m:#}");
        assert_eq!(m["sig"], "none", "{m:#}");
        let stored = run(&db, &["export", THREAD], "").stdout;
        assert!(stored.contains("  >From the logs"), "{stored}");
        assert!(stored.ends_with("sig: none\n[[END]]\n"), "{stored}");
    }
    let r = run(
        &dir.path().join("c.db"),
        &["check", file.to_str().unwrap()],
        "",
    );
    assert!(r.stdout.contains("1 envelope, 0 errors"), "{}", r.stdout);
}

#[test]
fn mail_read_as_mail_is_said_so_by_import_parse_and_check() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    assert_eq!(run(&a, &["import", "-"], &two()).code, 0);
    let r = run(&a, &["export", THREAD, "--format", "mbox"], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Sniffed on standard input and in a file of no telling name: the same reading.
    let file = dir.path().join("mail.txt");
    std::fs::write(&file, &r.stdout).unwrap();
    let said = "read as mail (an mbox mailbox of 2 messages)";
    let imported = run(&b, &["import"], &r.stdout);
    assert!(imported.stdout.contains(said), "{}", imported.stdout);
    assert!(
        imported.stdout.contains("2 imported"),
        "{}",
        imported.stdout
    );
    let json = run(&b, &["import", "--json", file.to_str().unwrap()], "");
    let reports: Value = serde_json::from_str(&json.stdout).unwrap();
    let note = &reports[0]["read_as_mail"];
    assert_eq!(
        (&note["format"], &note["messages"]),
        (&"mbox".into(), &2.into())
    );
    assert_eq!(reports[0]["items"][0]["outcome"], "duplicate");
    let check = run(&b, &["check", file.to_str().unwrap()], "");
    assert!(check.stderr.contains(said), "{}", check.stderr);
    assert!(
        check.stdout.contains("2 envelopes, 0 errors"),
        "{}",
        check.stdout
    );
    let parse = run(&b, &["parse", file.to_str().unwrap()], "");
    assert!(parse.stderr.contains(said), "{}", parse.stderr);
    assert!(
        parse.stdout.contains("From the start, café = 1"),
        "{}",
        parse.stdout
    );
    // Plain text says nothing of mail.
    let plain = run(&b, &["check", "-"], &two());
    assert!(!plain.stderr.contains("read as mail"), "{}", plain.stderr);
}

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mail")
        .join(name)
}

/// `parse --json`'s first envelope of `file`, without the gateway's `meta: email` block (and
/// the lines it spans, which the block makes longer), and that block.
fn parsed(db: &Path, file: &Path) -> (Value, Value) {
    let r = run(db, &["parse", "--json", file.to_str().unwrap()], "");
    assert_eq!(r.code, 0, "{}: {}{}", file.display(), r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let mut e = v["envelopes"][0].clone();
    let meta = e["meta"].take();
    e["span"].take();
    (e, meta)
}

/// `plain.crosstalk`'s envelope as the mail clients that write only HTML send it (Outlook's
/// Word HTML in quoted-printable, Gmail's and Apple Mail's one `<div>` per line, Thunderbird's
/// `<br>` lines and its `<pre>`), and forwarded as an attachment (base64 `message/rfc822`
/// holding plain text and HTML alternatives): `parse`, `fmt`, `check` and `import` all read
/// the plain text's envelope, its body's lines and indentation, entities decoded.
#[test]
fn html_only_and_forwarded_mail_give_the_plain_texts_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let (want, _) = parsed(&dir.path().join("p.db"), &fixture("plain.crosstalk"));
    assert_eq!(
        want["body"],
        "Please check the <config> & the port.\n\nSteps:\n  1. open the file\n  2. set port = 8080"
    );
    let plain_fmt = run(
        &dir.path().join("p.db"),
        &["fmt", fixture("plain.crosstalk").to_str().unwrap()],
        "",
    );
    for (name, message_id) in [
        (
            "outlook",
            "<AM0PR01MB12340A@AM0PR01MB1234.eurprd01.prod.outlook.com>",
        ),
        ("gmail", "<CAF3x8yZ1+abc@mail.gmail.com>"),
        (
            "apple_mail",
            "<4F1C2B3A-1D2E-4F5A-9B8C-7D6E5F4A3B2C@example.com>",
        ),
        (
            "thunderbird_br",
            "<0d5e7a9c-1b2f-4c3d-8e9f-a0b1c2d3e4f5@example.com>",
        ),
        (
            "thunderbird_pre",
            "<1d5e7a9c-1b2f-4c3d-8e9f-a0b1c2d3e4f5@example.com>",
        ),
        // The block names the mail that carried the envelope, not the forward.
        ("forwarded_as_attachment", "<orig-7@mail.example>"),
    ] {
        let file = fixture(&format!("{name}.eml"));
        let f = file.to_str().unwrap();
        let db = dir.path().join(format!("{name}.db"));
        let (got, meta) = parsed(&db, &file);
        assert_eq!(got, want, "{name}");
        assert_eq!(meta[0]["namespace"], "email", "{name}: {meta}");
        assert_eq!(meta[0]["entries"][0][1], message_id, "{name}: {meta}");
        let fmt = run(&db, &["fmt", f], "");
        assert_eq!(fmt.code, 0, "{name}: {}", fmt.stderr);
        let without_block = |t: &str| {
            let (head, rest) = t.split_once("\nmeta: email\n").unwrap_or((t, ""));
            let rest = rest.split_once("\n\n").map_or("", |(_, r)| r);
            format!("{head}{rest}")
        };
        assert_eq!(without_block(&fmt.stdout), plain_fmt.stdout, "{name}");
        let check = run(&db, &["check", f], "");
        assert!(
            check.stdout.contains("1 envelope, 0 errors, 0 warnings"),
            "{name}: {}",
            check.stdout
        );
        let import = run(&db, &["import", f], "");
        assert!(
            import.stdout.contains("1 imported"),
            "{name}: {}",
            import.stdout
        );
        let m = &run_show(&db, "01K0000000000000000000000H")["messages"][0];
        assert_eq!(m["body"], want["body"], "{name}");
    }
}

fn run_show(db: &Path, thread: &str) -> Value {
    let r = run(db, &["show", thread, "--json"], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

/// An HTML part holding the envelope on one line, with no markup between its lines: read as
/// a one-line envelope, and said so by every command, naming the part.
#[test]
fn an_html_envelope_without_lines_is_said_to_have_lost_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let file = fixture("html_one_line.eml");
    let f = file.to_str().unwrap();
    let said = "mail 1, text part 1 (HTML): an envelope stands on one line";
    for cmd in ["parse", "fmt", "check", "import"] {
        let r = run(&db, &[cmd, f], "");
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(all.contains(said), "{cmd}: {all}");
        assert!(
            all.contains("[html-lines-lost]") || cmd == "import",
            "{cmd}: {all}"
        );
    }
    let json = run(&db, &["import", "--json", f], "");
    let v: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v[0]["diagnostics"][0]["code"], "html-lines-lost", "{v:#}");
}

/// A mail part in a character set that cannot be converted is read as UTF-8, and every
/// command that reads mail says so, naming the mail, the part and the character set.
#[test]
fn a_part_in_an_unknown_character_set_is_named_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let file = dir.path().join("klingon.eml");
    let mut mail = format!(
        "From: k@example.com\r\nSubject: s\r\nMIME-Version: 1.0\r\n\
         Content-Type: text/plain; charset=x-klingon\r\n\
         Content-Transfer-Encoding: 8bit\r\n\r\n{}",
        env("01K0000000000000000000000B", None, "qapla", "").replace('\n', "\r\n")
    )
    .into_bytes();
    mail.extend_from_slice(b"caf\xe9\r\n");
    std::fs::write(&file, mail).unwrap();
    let f = file.to_str().unwrap();
    let said =
        "mail 1, text part 1: its character set `x-klingon` is not one crosstalk can convert";
    for cmd in ["parse", "check", "import"] {
        let r = run(&db, &[cmd, f], "");
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(all.contains(said), "{cmd}: {all}");
        assert!(
            all.contains("[unknown-charset]") || cmd == "import",
            "{cmd}: {all}"
        );
    }
    let json = run(&db, &["import", "--json", f], "");
    let v: Value = serde_json::from_str(&json.stdout).unwrap();
    let codes: Vec<&str> = (v[0]["diagnostics"].as_array().unwrap().iter())
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert!(codes.contains(&"unknown-charset"), "{v:#}");
}

#[test]
fn a_directory_of_envelope_files_imports_sorted_and_split_writes_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let src = dir.path().join("in");
    std::fs::create_dir(&src).unwrap();
    // The reply sorts first by name but is imported after its parent: names are sorted.
    std::fs::write(
        src.join("1.crosstalk"),
        env("01K0000000000000000000000A", None, "one", ""),
    )
    .unwrap();
    std::fs::write(
        src.join("2.AICT"),
        env(
            "01K0000000000000000000000B",
            Some("01K0000000000000000000000A"),
            "two",
            "",
        ),
    )
    .unwrap();
    std::fs::write(src.join("notes.txt"), "not an envelope file").unwrap();
    let r = run(&db, &["import", src.to_str().unwrap()], "");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("1.crosstalk: 1 imported"), "{}", r.stdout);
    assert!(r.stdout.contains("2.AICT: 1 imported"), "{}", r.stdout);
    assert!(!r.stdout.contains("notes.txt"));
    let out = dir.path().join("out");
    let r = run(
        &db,
        &["export", "--all", "--split", out.to_str().unwrap()],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let a = out.join("01K0000000000000000000000A.crosstalk");
    assert!(std::fs::read_to_string(&a).unwrap().contains("one"));
    assert!(out.join("01K0000000000000000000000B.crosstalk").is_file());
    // Again: the same content is left alone.
    let r = run(
        &db,
        &["export", "--all", "--split", out.to_str().unwrap()],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("2 already there"), "{}", r.stderr);
    // A link to nothing among the inputs is named as an input that cannot be read (exit 2),
    // not passed over; the others are imported all the same.
    std::os::unix::fs::symlink(dir.path().join("gone"), src.join("3.crosstalk")).unwrap();
    let r = run(&db, &["import", src.to_str().unwrap()], "");
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("3.crosstalk"), "{}", r.stderr);
    assert!(r.stdout.contains("1.crosstalk: 0 imported"), "{}", r.stdout);
    // A file where the directory should be is said to be no directory.
    let r = run(
        &db,
        &["export", "--all", "--split", a.to_str().unwrap()],
        "",
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("is not a directory"), "{}", r.stderr);
    // A different file of that name is never overwritten.
    std::fs::write(&a, "mine").unwrap();
    let r = run(
        &db,
        &["export", "--all", "--split", out.to_str().unwrap()],
        "",
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not overwritten"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "mine");
    // One .eml per message, which imports back.
    let eml = dir.path().join("eml");
    let r = run(
        &db,
        &[
            "export",
            THREAD,
            "--format",
            "eml",
            "--split",
            eml.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let one = eml.join("01K0000000000000000000000B.eml");
    let db2 = dir.path().join("d2.db");
    let r = run(&db2, &["import", one.to_str().unwrap()], "");
    assert!(r.stdout.contains("1 imported"), "{}{}", r.stdout, r.stderr);
    // Formats that are not one file per message are refused.
    let r = run(
        &db,
        &[
            "export",
            "--all",
            "--format",
            "json",
            "--split",
            eml.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(r.code, 2);
}

#[test]
fn attachments_verify_reports_ok_missing_and_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v.db");
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    std::fs::write(files.join("notes.txt"), "abc").unwrap();
    std::fs::write(files.join("bad.txt"), "abd").unwrap();
    let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    let meta = format!(
        "meta: attachments\nA1: text/plain;name=notes.txt;digest=sha256:{abc}\n\
         A2: text/plain; name=\"bad.txt\"; digest=sha256:{abc}\nA3: name=gone.txt;sha256={abc}\n\
         A4: text/plain;name=../notes.txt;digest=sha256:{abc}\n         A5: name=adir;digest=sha256:{abc}\n         A6: name=notes.txt;size=99999999999999999999999;digest=sha256:{abc}\n         A7: name=big.bin;size=5;digest=sha256:{abc}\n\n"
    );
    // A directory is no file; a size past any number is shown as not read; a file whose
    // size differs is judged without reading it (its length alone says so).
    std::fs::create_dir(files.join("adir")).unwrap();
    std::fs::File::create(files.join("big.bin"))
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let e = env("01K0000000000000000000000F", None, "see files", &meta);
    let f = dir.path().join("m.crosstalk");
    std::fs::write(&f, &e).unwrap();
    let r = run(
        &db,
        &[
            "attachments",
            "verify",
            f.to_str().unwrap(),
            "--dir",
            files.to_str().unwrap(),
            "--json",
        ],
        "",
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let status: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        status,
        [
            "ok",
            "digest-mismatch",
            "missing",
            "unsafe-name",
            "unreadable",
            "ok",
            "size-mismatch"
        ]
    );
    assert_eq!(v[5]["unread"][0], "size=99999999999999999999999");
    // By stored message id (a prefix of it), only the good one: exit 0.
    let good = env(
        "01K0000000000000000000000G",
        None,
        "one file",
        &format!("meta: attachments\nA1: text/plain;name=notes.txt;digest=sha256:{abc}\n\n"),
    );
    assert_eq!(run(&db, &["import", "-"], &good).code, 0);
    let r = run(
        &db,
        &[
            "attachments",
            "verify",
            "01K0000000000000000000000G",
            "--dir",
            files.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("A1  notes.txt  text/plain"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.trim_end().ends_with("ok"), "{}", r.stdout);
}

/// A link in the folder to a file outside it, whose digest matches: not followed, so never
/// `ok`; the verdict says it is a link and where it points (in `--json` as `reason`), and the
/// exit is 1. The file itself, copied in, is `ok`.
#[cfg(unix)]
#[test]
fn attachments_verify_does_not_follow_a_link_out_of_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v.db");
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let outside = dir.path().join("elsewhere.txt");
    std::fs::write(&outside, "abc").unwrap();
    std::os::unix::fs::symlink(&outside, files.join("notes.txt")).unwrap();
    std::os::unix::fs::symlink(dir.path(), files.join("up")).unwrap();
    let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    let meta = format!(
        "meta: attachments\nA1: text/plain;name=notes.txt;digest=sha256:{abc}\n\
         A2: name=up;digest=sha256:{abc}\n\n"
    );
    let f = dir.path().join("m.crosstalk");
    std::fs::write(&f, env("01K0000000000000000000000H", None, "linked", &meta)).unwrap();
    let verify = |json: bool| {
        let mut args = vec![
            "attachments",
            "verify",
            f.to_str().unwrap(),
            "--dir",
            files.to_str().unwrap(),
        ];
        if json {
            args.push("--json");
        }
        run(&db, &args, "")
    };
    let r = verify(true);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        (v[0]["status"].as_str(), v[1]["status"].as_str()),
        (Some("link"), Some("link"))
    );
    assert_eq!(
        v[0]["reason"].as_str(),
        Some(format!("points to {}", outside.display()).as_str())
    );
    let r = verify(false);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let line = r.stdout.lines().next().unwrap();
    assert!(
        line.ends_with(&format!(
            "a symbolic link, not followed (points to {})",
            outside.display()
        )),
        "{}",
        r.stdout
    );
    // The file itself in the folder is vouched for.
    std::fs::remove_file(files.join("notes.txt")).unwrap();
    std::fs::copy(&outside, files.join("notes.txt")).unwrap();
    std::fs::remove_file(files.join("up")).unwrap();
    std::fs::write(files.join("up"), "abc").unwrap();
    let r = verify(false);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// What a mail client sends as `format=flowed; delsp=yes` (RFC 3676): lines that begin with
/// a space are stuffed with one more, and lines longer than `width` are cut after a space,
/// the client adding a space of its own before each cut.
fn flowed_delsp(text: &str, width: usize) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut rest = match line.starts_with(' ') {
            true => format!(" {line}"),
            false => line.to_string(),
        };
        while rest.len() > width {
            let Some(i) = rest[..width].rfind(' ').filter(|&i| i > 1) else {
                break;
            };
            out.push_str(&rest[..=i]);
            out.push_str(" \r\n");
            rest = rest[i + 1..].to_string();
        }
        out.push_str(&rest);
        out.push_str("\r\n");
    }
    out
}

#[test]
fn a_signed_envelope_in_a_flowed_mail_imports_whole_and_still_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let fixture = |name: &str| format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let long = "This body line is much longer than any mail client's line width, so a client \
                that flows its text cuts it into several lines with a space before each cut.";
    let envelope = env("01K0000000000000000000000F", None, long, "");
    let signed = run(
        &db,
        &[
            "sign",
            "--key",
            &fixture("rc1/private.pem"),
            "--format",
            "ed25519",
            "--pkid",
            "k1",
        ],
        &envelope,
    );
    assert_eq!(signed.code, 0, "{}", signed.stderr);
    let body = flowed_delsp(&signed.stdout, 60);
    assert!(body.contains(" \r\n"), "nothing was cut: {body}");
    assert!(body.contains("\r\n   This body"), "not stuffed: {body}");
    let mail = format!(
        "From: Kalle <kalle@example.com>\r\nTo: bot@example.com\r\nSubject: relay\r\n\
         Message-ID: <f1@mail.example>\r\nMIME-Version: 1.0\r\n\
         Content-Type: text/plain; charset=utf-8; format=flowed; delsp=yes\r\n\
         Content-Transfer-Encoding: 8bit\r\n\r\n{body}"
    );
    let file = dir.path().join("flowed.eml");
    std::fs::write(&file, &mail).unwrap();
    let r = run(&db, &["import", file.to_str().unwrap()], "");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("1 imported"), "{}", r.stdout);
    let text = run(&db, &["export", THREAD], "").stdout;
    assert!(text.contains(&format!("body: |\n  {long}\n")), "{text}");
    let r = run(&db, &["verify", "--key", &fixture("rc1/public.pem")], &text);
    assert_eq!(r.code, 0, "{}{}\n{text}", r.stdout, r.stderr);
    // The same text in a mail that does not say it is flowed is read as it is: cut.
    let fixed = mail.replace("; format=flowed; delsp=yes", "");
    let r = run(&dir.path().join("g.db"), &["parse", "--json", "-"], &fixed);
    assert!(!r.stdout.contains(long), "{}", r.stdout);
}

/// A v1.0 envelope (no ids: recognized by its text and place) in a mail of its own.
fn mailed(envelope: &str, message_id: &str) -> String {
    format!(
        "From: Kalle <kalle@example.com>\r\nTo: bot@example.com\r\nSubject: relay\r\n\
         Message-ID: <{message_id}>\r\nDate: Mon, 6 Jan 2025 10:00:00 +0000\r\n\
         MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{}",
        envelope.replace('\n', "\r\n")
    )
}

const V10: &str = "[[KALLE→CLAUDE v1]]\nuser: kalle\nsession: s-mail\nbody: |\n  Is the \
                   mirror up again?\n[[END]]\n";

#[test]
fn a_v10_envelope_pasted_then_mailed_is_one_message() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let r = run(&db, &["import", "-"], V10);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("1 imported"), "{}", r.stdout);
    let r = run(&db, &["import"], &mailed(V10, "v1@mail.example"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("0 imported, 1 duplicate"), "{}", r.stdout);
    let r = run(&db, &["threads", "--json"], "");
    let threads: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(threads.as_array().unwrap().len(), 1, "{threads}");
    assert_eq!(threads[0]["message_count"], 1, "{threads}");
}

#[test]
fn a_v10_envelope_mailed_then_pasted_or_mailed_again_is_one_message() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let r = run(&db, &["import"], &mailed(V10, "v1@mail.example"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("1 imported"), "{}", r.stdout);
    // Its mail headers are kept with it.
    let r = run(&db, &["export", "--all"], "");
    assert!(
        r.stdout
            .contains("meta: email\nMessage-ID: <v1@mail.example>"),
        "{}",
        r.stdout
    );
    let r = run(&db, &["import", "-"], V10);
    assert!(r.stdout.contains("0 imported, 1 duplicate"), "{}", r.stdout);
    // Another gateway's mail of the same envelope.
    let r = run(&db, &["import"], &mailed(V10, "v1-again@mail.example"));
    assert!(r.stdout.contains("0 imported, 1 duplicate"), "{}", r.stdout);
    let r = run(&db, &["threads", "--json"], "");
    let threads: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(threads[0]["message_count"], 1, "{threads}");
}

/// A mail whose text says it is UTF-8 but holds a byte that is not, sent 8bit, quoted-
/// printable or base64: `import`, `parse` and `check` warn where (mail, part, line, column of
/// its text) instead of reading it as U+FFFD without a word. A part in Latin-1, or valid
/// UTF-8, gets no warning.
#[test]
fn mail_text_that_is_not_the_utf8_it_says_is_warned_about() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let body = |bad: &[u8]| -> Vec<u8> {
        let mut b = env("01K0000000000000000000000D", None, "caf", "").into_bytes();
        let at = b.windows(3).position(|w| w == b"caf").unwrap() + 3;
        b.splice(at..at, bad.iter().copied());
        b
    };
    let mail = |charset: &str, encoding: &str, text: &[u8]| -> Vec<u8> {
        let mut m = format!(
            "From: k@example.com\r\nSubject: s\r\nMIME-Version: 1.0\r\n\
             Content-Type: text/plain; charset={charset}\r\n\
             Content-Transfer-Encoding: {encoding}\r\n\r\n"
        )
        .into_bytes();
        m.extend_from_slice(text);
        m
    };
    let bad = body(b"\xff\xfe");
    let qp: Vec<u8> = bad
        .iter()
        .flat_map(|&b| match b {
            b'=' | 0x80.. => format!("={b:02X}").into_bytes(),
            b => vec![b],
        })
        .collect();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&bad);
    let cases: [(&str, Vec<u8>, bool); 5] = [
        ("8bit", mail("utf-8", "8bit", &bad), true),
        ("qp", mail("UTF-8", "quoted-printable", &qp), true),
        ("b64", mail("utf-8", "base64", b64.as_bytes()), true),
        ("latin1", mail("iso-8859-1", "8bit", &body(b"\xe9")), false),
        ("good", mail("utf-8", "8bit", &body("é".as_bytes())), false),
    ];
    for (name, bytes, warned) in cases {
        let file = dir.path().join(format!("{name}.eml"));
        std::fs::write(&file, &bytes).unwrap();
        let f = file.to_str().unwrap();
        let r = run(&db, &["import", f], "");
        assert!(r.code <= 1, "{name}: {}{}", r.stdout, r.stderr);
        let said = format!("{}{}", r.stdout, r.stderr);
        assert_eq!(said.contains("invalid-utf8"), warned, "{name}: {said}");
        if warned {
            assert!(
                said.contains("mail 1, text part 1, line 8, column 6 of its text"),
                "{name}: {said}"
            );
        }
        for cmd in ["parse", "check"] {
            let r = run(&db, &[cmd, f], "");
            let said = format!("{}{}", r.stdout, r.stderr);
            assert_eq!(
                said.contains("invalid-utf8"),
                warned,
                "{cmd} {name}: {said}"
            );
        }
    }
    // In a mailbox, the mail is named by its place.
    let mut mbox = b"From k@example.com Mon Jan  6 10:00:00 2025\n".to_vec();
    mbox.extend(mail("utf-8", "8bit", &body("é".as_bytes())));
    mbox.extend(b"\n\nFrom k@example.com Mon Jan  6 10:01:00 2025\n");
    mbox.extend(mail("utf-8", "8bit", &body(b"\xff")));
    let file = dir.path().join("box.mbox");
    std::fs::write(&file, &mbox).unwrap();
    let r = run(&db, &["import", file.to_str().unwrap()], "");
    let said = format!("{}{}", r.stdout, r.stderr);
    assert!(said.contains("mail 2, text part 1, line 8"), "{said}");
    assert!(!said.contains("mail 1,"), "{said}");
}
