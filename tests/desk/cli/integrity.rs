//! The CLI side of the import's integrity rules: `import` reports an id conflict and exits 1,
//! `check` finds it in the database read-only (`--no-db` does not look), and
//! `import --fresh-ids` imports envelopes with invalid ids.

use crate::helpers::common;

use common::run_env;

const THREAD: &str = "01KAQ4W5J8Z0000000000000T1";
const MESSAGE: &str = "01KAQ4W5J8Z0000000000000M1";

fn env(thread: &str, message: &str, body: &str) -> String {
    format!(
        "[[claude→gpt v1.1]]\nthread: {thread}\nmessage: {message}\ncontext: cli\nintent: REQUEST\n\
         body: |\n  {body}\nsig: none\n[[END]]\n"
    )
}

#[test]
fn conflicts_exit_1_and_check_finds_them_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let db = db.to_str().unwrap();
    let home = dir.path().to_str().unwrap();
    let vars = [("HOME", home), ("XDG_DATA_HOME", home)];
    let r = run_env(
        &["--db", db, "import", "-"],
        &env(THREAD, MESSAGE, "one"),
        &vars,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = run_env(
        &["--db", db, "import", "-"],
        &env(THREAD, MESSAGE, "one"),
        &vars,
    );
    assert_eq!(r.code, 0, "a duplicate is harmless: {}", r.stdout);
    let r = run_env(
        &["--db", db, "import", "-"],
        &env(THREAD, MESSAGE, "two"),
        &vars,
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("[id-conflict]"), "{}", r.stdout);
    assert!(r.stdout.contains("1 id conflict"), "{}", r.stdout);

    let modified = std::fs::metadata(db).unwrap().modified().unwrap();
    let r = run_env(
        &["--db", db, "check"],
        &env(THREAD, MESSAGE, "three"),
        &vars,
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("[id-conflict]"), "{}", r.stdout);
    assert!(r.stdout.contains("received"), "{}", r.stdout);
    let r = run_env(
        &["--db", db, "check", "--no-db"],
        &env(THREAD, MESSAGE, "three"),
        &vars,
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    let r = run_env(&["--db", db, "check"], &env(THREAD, MESSAGE, "one"), &vars);
    assert_eq!(r.code, 0, "the same text is no conflict: {}", r.stdout);
    assert_eq!(std::fs::metadata(db).unwrap().modified().unwrap(), modified);

    // A database that does not exist is not created by check.
    let missing = dir.path().join("missing.db");
    let r = run_env(
        &["--db", missing.to_str().unwrap(), "check"],
        &env(THREAD, MESSAGE, "x"),
        &vars,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(!missing.exists());
}

#[test]
fn fresh_ids_import_what_invalid_ids_blocked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let db = db.to_str().unwrap();
    let home = dir.path().to_str().unwrap();
    let vars = [("HOME", home), ("XDG_DATA_HOME", home)];
    let bad = env(
        "01J9J3D9C2V8M4P1R6S8T9U0V1",
        "01J9J3D9C2V8M4P1R6S8T9U0V2",
        "example",
    );
    let r = run_env(&["--db", db, "import", "-"], &bad, &vars);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("--fresh-ids"), "{}", r.stdout);
    let r = run_env(&["--db", db, "import", "--fresh-ids", "-"], &bad, &vars);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("1 imported"), "{}", r.stdout);
}
