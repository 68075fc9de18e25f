//! `export --all` as a backup that `import` restores byte for byte, `--output` with the
//! format its extension asks for, and `delete` as scripts and people use it.

use crate::helpers::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::Run;
use serde_json::Value;

fn run(db: &Path, args: &[&str]) -> Run {
    let mut all = vec!["--db", db.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    common::run(&all, "")
}

fn demo_files() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "crosstalk"))
        .map(|p| p.to_str().unwrap().to_string())
        .collect();
    files.sort();
    files
}

fn thread_ids(db: &Path) -> Vec<String> {
    let r = run(db, &["threads", "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn export_all_is_a_backup_that_import_restores_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    let mut args = vec!["import"];
    let files = demo_files();
    args.extend(files.iter().map(String::as_str));
    assert_eq!(run(&a, &args).code, 0);

    let backup = dir.path().join("backup.crosstalk");
    let r = run(&a, &["export", "--all", "-o", backup.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.is_empty());
    let n = thread_ids(&a).len();
    assert!(
        r.stderr.contains(&format!("wrote {n} threads")) && r.stderr.contains("as crosstalk"),
        "{}",
        r.stderr
    );
    let mode = std::fs::metadata(&backup).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "a backup is readable by its owner only");

    let r = run(&b, &["import", backup.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let again = run(&b, &["export", "--all"]);
    assert_eq!(again.code, 0);
    assert_eq!(
        again.stdout,
        std::fs::read_to_string(&backup).unwrap(),
        "restoring a backup and exporting it again gives the same bytes"
    );
    let mut ids_a = thread_ids(&a);
    let mut ids_b = thread_ids(&b);
    ids_a.sort();
    ids_b.sort();
    assert_eq!(ids_a, ids_b);
}

#[test]
fn output_names_the_format_and_a_thread_prefix_is_enough() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let files = demo_files();
    assert_eq!(run(&db, &["import", &files[0]]).code, 0);
    let id = thread_ids(&db).remove(0);

    let md = dir.path().join("t.md");
    let r = run(&db, &["export", &id[..10], "-o", md.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(std::fs::read_to_string(&md).unwrap().starts_with("# "));

    let js = dir.path().join("all.JSON");
    assert_eq!(
        run(&db, &["export", "--all", "-o", js.to_str().unwrap()]).code,
        0
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&js).unwrap()).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["id"], id.as_str());

    // --format wins over the extension.
    let r = run(
        &db,
        &[
            "export",
            &id,
            "--format",
            "json",
            "--force",
            "-o",
            md.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0);
    assert!(std::fs::read_to_string(&md).unwrap().starts_with('{'));

    // An empty database is an empty backup, still valid JSON.
    let empty = dir.path().join("empty.db");
    drop(crosstalk::store::Store::open(&empty).unwrap());
    let r = run(&empty, &["export", "--all", "--format", "json"]);
    assert_eq!(r.code, 0);
    assert_eq!(
        serde_json::from_str::<Value>(&r.stdout).unwrap(),
        Value::Array(vec![])
    );

    // Nothing is written under the name asked for when the directory is missing.
    let r = run(
        &db,
        &["export", "--all", "-o", "/nonexistent-dir/x.crosstalk"],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("cannot write"), "{}", r.stderr);

    let r = run(&db, &["export"]);
    assert_eq!(r.code, 2, "a thread or --all is required");
}

#[test]
fn delete_asks_for_yes_in_scripts_then_erases_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let files = demo_files();
    assert_eq!(run(&db, &["import", &files[0], &files[1]]).code, 0);
    let ids = thread_ids(&db);
    let (gone, kept) = (&ids[0], &ids[1]);

    let r = run(&db, &["delete", "thread", gone]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("not deleted") && r.stderr.contains("--yes"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("Backups and exports made before this still hold the erased text"),
        "the refusal says what erasing cannot reach: {}",
        r.stderr
    );
    assert_eq!(thread_ids(&db).len(), 2, "nothing went without --yes");

    let r = run(&db, &["delete", "thread", &gone[..12], "--yes", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["threads"], 1);
    assert!(v["messages"].as_u64().unwrap() >= 1);
    assert_eq!(v["earlier_copies_untouched"], true);
    assert!(
        v["note"].as_str().unwrap().contains("Backups and exports"),
        "{v}"
    );
    assert_eq!(thread_ids(&db), vec![kept.clone()]);

    let show = run(&db, &["show", kept, "--json"]);
    let v: Value = serde_json::from_str(&show.stdout).unwrap();
    let first = v["messages"][0]["message"].as_str().unwrap().to_string();
    let count = v["messages"].as_array().unwrap().len();
    // An id typed in lower case names the same message.
    let r = run(
        &db,
        &["delete", "message", &first.to_ascii_lowercase(), "--yes"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("erased message"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("Backups and exports made before this still hold the erased text"),
        "{}",
        r.stdout
    );
    let show = run(&db, &["show", kept, "--json"]);
    let v: Value = serde_json::from_str(&show.stdout).unwrap();
    assert_eq!(v["messages"].as_array().unwrap().len(), count - 1);

    let r = run(&db, &["delete", "message", "01NOPE", "--yes"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("no message"), "{}", r.stderr);
    let r = run(&db, &["delete", "pastes", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// A paste whose envelope import rejected is its only copy: `pastes` lists it, `pastes show`
/// gives its bytes back exactly, `delete pastes` (the unused ones) keeps it, and `delete
/// paste ID` erases it when the operator says so.
#[test]
fn a_rejected_paste_is_listed_shown_kept_and_erased_only_by_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    // Not UTF-8 at the end, and an id that is no ULID: import rejects the envelope.
    let mut bytes = b"[[A\xe2\x86\x92B v1]]\nuser: u\nmessage: not-an-id\nintent: REQUEST\nbody: |\n  keep me\nsig: none\n[[END]]\n".to_vec();
    bytes.extend_from_slice(b"\xff\r\n");
    let file = dir.path().join("rejected.txt");
    std::fs::write(&file, &bytes).unwrap();
    let r = run(&db, &["import", file.to_str().unwrap()]);
    assert_ne!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let noise = dir.path().join("noise.txt");
    std::fs::write(&noise, "no envelope here\n").unwrap();
    run(&db, &["import", noise.to_str().unwrap()]);
    // A good envelope, then the same text again with a note: every envelope of the second
    // paste is a duplicate, so no message came from it, and it is unused.
    let good = "[[A→B v1]]\nuser: u\nmessage: 01J9J3DBC4N7P2Q3R5S7T9V1V2\nthread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K\nintent: REQUEST\nbody: |\n  hi\nsig: none\n[[END]]\n";
    let first = dir.path().join("good.txt");
    std::fs::write(&first, good).unwrap();
    assert_eq!(run(&db, &["import", first.to_str().unwrap()]).code, 0);
    let again = dir.path().join("again.txt");
    std::fs::write(&again, format!("once more:\n{good}")).unwrap();
    run(&db, &["import", again.to_str().unwrap()]);

    let r = run(&db, &["pastes", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let list: Value = serde_json::from_str(&r.stdout).unwrap();
    let rejected = (list.as_array().unwrap().iter())
        .find(|p| p["source"].as_str().unwrap().ends_with("rejected.txt"))
        .unwrap_or_else(|| panic!("{list}"));
    assert_eq!(rejected["messages"], 0);
    assert_eq!(rejected["bytes"], bytes.len());
    let id = rejected["id"].as_i64().unwrap().to_string();
    let r = run(&db, &["pastes"]);
    assert!(
        r.stdout.contains("no message stored from it"),
        "{}",
        r.stdout
    );

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_crosstalk"))
        .args(["--db", db.to_str().unwrap(), "pastes", "show", &id])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, bytes);

    let r = run(&db, &["delete", "pastes", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run(&db, &["pastes", "--json"]);
    let left: Value = serde_json::from_str(&r.stdout).unwrap();
    let sources: Vec<&str> = (left.as_array().unwrap().iter())
        .map(|p| p["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources.len(), 2, "the noise and the duplicates go: {left}");
    assert!(
        sources.iter().any(|s| s.ends_with("rejected.txt")),
        "{left}"
    );
    assert!(sources.iter().any(|s| s.ends_with("good.txt")), "{left}");
    let r = run(&db, &["delete", "paste", &id, "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run(&db, &["pastes", "show", &id]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stderr.contains("no paste"), "{}", r.stderr);
}

#[test]
fn backup_copies_what_export_leaves_out_and_never_replaces_a_file_unasked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let mut args = vec!["import"];
    let files = demo_files();
    args.extend(files.iter().map(String::as_str));
    assert_eq!(run(&db, &args).code, 0);

    let copy = dir.path().join("copy.db");
    let q = copy.to_str().unwrap();
    let r = run(&db, &["backup", q, "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(v["messages"].as_i64().unwrap() > 0, "{v}");
    assert_eq!(
        v["bytes"].as_u64().unwrap(),
        std::fs::metadata(&copy).unwrap().len()
    );
    let mode = std::fs::metadata(&copy).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "a backup is readable by its owner only");
    // The copy opens as a database and says what the original says, raw pastes included.
    for what in [
        &["export", "--all"][..],
        &["pastes", "--json"],
        &["queue", "--json"],
        &["keys", "list", "--json"],
    ] {
        let (x, y) = (run(&db, what), run(&copy, what));
        assert_eq!(x.code, 0, "{what:?}: {}", x.stderr);
        assert_eq!(x.stdout, y.stdout, "{what:?}");
    }
    // An existing file is kept unless --force says otherwise.
    let before = std::fs::read(&copy).unwrap();
    let r = run(&db, &["backup", q]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    let r = run(&db, &["backup", q, "--force"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(" messages in "), "{}", r.stdout);
}

/// A backup of a database that is not there (a mistyped --db) is refused, and makes nothing.
#[test]
fn backup_of_a_database_that_is_not_there_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("nonexist.sqlite");
    let out = dir.path().join("copy.db");
    let r = run(&typo, &["backup", out.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("no database at"), "{}", r.stderr);
    assert!(!typo.exists() && !out.exists());
}

#[test]
fn delete_with_nothing_to_erase_asks_nothing_and_a_missing_paste_points_to_pastes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let files = demo_files();
    assert_eq!(run(&db, &["import", &files[0]]).code, 0);
    let r = run(&db, &["delete", "pastes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("nothing to erase"), "{}", r.stdout);
    let r = run(&db, &["delete", "--yes", "paste", "99"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("`crosstalk pastes`"), "{}", r.stderr);
}

/// A draft is saved under the message id it will be filed with: `delete message` with that
/// id (whole, its start, in either case) says it is a draft's and how to discard it, where it
/// said there was no such message.
#[test]
fn delete_message_with_a_drafts_id_says_it_is_a_draft() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/examples/v11-request.crosstalk");
    assert_eq!(run(&db, &["import", example.to_str().unwrap()]).code, 0);
    let r = run(
        &db,
        &["reply", "01J9J3DBC4N7P2Q3R5S7T9V1V2", "--body", "Later."],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let draft = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("message: "))
        .expect("the draft's message id")
        .to_string();
    for id in [
        draft.clone(),
        draft[..12].to_string(),
        draft.to_ascii_lowercase(),
    ] {
        let r = run(&db, &["delete", "--yes", "message", &id]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(r.stderr.contains("is a draft's id"), "{}", r.stderr);
        assert!(r.stderr.contains("`x` there discards"), "{}", r.stderr);
    }
    let r = run(&db, &["delete", "--yes", "message", "01ZZZZZZZZ"]);
    assert!(r.stderr.contains("no message"), "{}", r.stderr);
}

#[test]
fn export_replaces_nothing_it_was_not_told_to_and_never_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let mut args = vec!["import"];
    let files = demo_files();
    args.extend(files.iter().map(String::as_str));
    assert_eq!(run(&db, &args).code, 0);
    let threads = thread_ids(&db);
    let db_arg = db.to_str().unwrap();

    for extra in [&[][..], &["--force"][..]] {
        let mut args = vec!["export", "--all", "-o", db_arg];
        args.extend_from_slice(extra);
        let r = run(&db, &args);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains("is the database itself"), "{}", r.stderr);
    }
    let r = run(&db, &["backup", "--force", db_arg]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("is the database itself"), "{}", r.stderr);
    // Its log, journal and full-text index, whether there or not yet, under any name that
    // leads to them.
    let link = dir.path().join("link.db");
    std::fs::hard_link(&db, &link).unwrap();
    let wal = format!("{db_arg}-wal");
    let index = format!("{db_arg}-search");
    let journal = dir.path().join("sub/../a.db-journal");
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    for target in [
        wal.as_str(),
        index.as_str(),
        journal.to_str().unwrap(),
        link.to_str().unwrap(),
    ] {
        let r = run(&db, &["backup", "--force", target]);
        assert_eq!(r.code, 2, "{target}: {}", r.stderr);
        assert!(r.stderr.contains("is the database itself"), "{}", r.stderr);
        let r = run(&db, &["export", "--all", "--force", "-o", target]);
        assert_eq!(r.code, 2, "{target}: {}", r.stderr);
    }
    assert_eq!(thread_ids(&db), threads, "the database is untouched");

    let kept = dir.path().join("notes.txt");
    std::fs::write(&kept, "my notes\n").unwrap();
    let r = run(&db, &["export", "--all", "-o", kept.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("exists; give --force"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "my notes\n");
    let r = run(
        &db,
        &["export", "--all", "--force", "-o", kept.to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(std::fs::read_to_string(&kept).unwrap().contains("[[END]]"));

    let r = run(&db, &["backup", "-"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(!Path::new("-").exists() && !dir.path().join("-").exists());
}

#[test]
fn a_named_database_that_is_not_there_is_refused_not_made() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("typo/sub/crosstlak.db");
    let missing = dir.path().join("crosstlak.db");
    for args in [
        &["threads"][..],
        &["export", "--all"],
        &["search", "port"],
        &["queue"],
        &["pastes"],
        &["keys", "list"],
        &["consent"],
    ] {
        for db in [&typo, &missing] {
            let r = run(db, args);
            assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
            assert!(
                r.stderr.contains("no database at"),
                "{args:?}: {}",
                r.stderr
            );
            assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
        }
    }
    // Importing makes a new database (and its directories).
    let files = demo_files();
    for db in [&typo, &missing] {
        assert_eq!(run(db, &["import", &files[0]]).code, 0);
        assert_eq!(run(db, &["threads"]).code, 0);
    }
}
