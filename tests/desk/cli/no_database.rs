//! Commands that only read never make a database: on a machine where nothing was stored yet
//! they say so and how to start, and leave no empty database behind.

use crate::helpers::common::run_env;

/// Every command that reads what is stored, as a script would first try it.
const READERS: &[&[&str]] = &[
    &["threads"],
    &["threads", "--json"],
    &["show", "01J0000000000000000000000"],
    &["search", "hello"],
    &["export", "--all"],
    &["queue"],
    &["consent"],
    &["poll", "01J0000000000000000000000"],
    &["pastes"],
    &["keys", "list"],
    &["archive", "01J0000000000000000000000"],
];

#[test]
fn reading_commands_on_a_new_machine_make_no_database_and_say_how_to_start() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let data_home = data.to_str().unwrap();
    for args in READERS {
        let r = run_env(args, "", &[("XDG_DATA_HOME", data_home)]);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("no database yet at")
                && r.stderr.contains("crosstalk import FILE")
                && r.stderr.contains("crosstalk --demo"),
            "{args:?}: {}",
            r.stderr
        );
        assert!(
            !data.join("crosstalk").join("crosstalk.db").exists(),
            "{args:?} made a database"
        );
    }
    // What stores makes it, where the message said.
    let r = run_env(
        &["import", "-"],
        "no envelope here\n",
        &[("XDG_DATA_HOME", data_home)],
    );
    assert!(
        data.join("crosstalk").join("crosstalk.db").exists(),
        "{}",
        r.stderr
    );
    let r = run_env(&["threads"], "", &[("XDG_DATA_HOME", data_home)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn a_backup_of_no_database_is_refused_and_makes_none() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.db");
    let copy = dir.path().join("copy.db");
    let r = run_env(
        &[
            "--db",
            db.to_str().unwrap(),
            "backup",
            copy.to_str().unwrap(),
        ],
        "",
        &[],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("no database at"), "{}", r.stderr);
    assert!(!db.exists() && !copy.exists());
}
