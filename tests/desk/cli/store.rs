//! The database commands as scripts use them: import, threads, show, export, search, reply.

use crate::helpers::common;

use std::path::Path;

use common::Run;
use serde_json::{Value, json};

const CONVERSATION: &str = "Operator notes, then the relay:

```
[[CLAUDE→BROTHER v1]]
user: kalle
session: 2025-10-09T16Z a7f3d1
context: naming the project
intent: QUESTION
body: |
  Which name reads better: crosstalk or relay?
sig: none
[[END]]
```

[[BROTHER→CLAUDE v1]]
session: 2025-10-09T16Z a7f3d1
response: |
  crosstalk, it says what the tool is for.
[[END]]

> [[claude://session/abc→chatgpt://thread/xyz v1]]
> user: kalle
> session: 2025-10-09T17Z b447a4
> thread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K
> message: 01J9J3DBC4N7P2Q3R5S7T9V1V2
> context: storage review
> intent: POLL
>
> meta: poll
> Type: consensus
>
> body: |
>   SQLITE | FILES | ABSTAIN?
> sig: none
> [[END]]
";

/// Runs the binary on the database `db`.
fn run(db: &Path, args: &[&str], stdin: &str) -> Run {
    let mut all = vec!["--db", db.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    common::run(&all, stdin)
}

fn json_of(r: &Run) -> Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", r.stdout, r.stderr))
}

/// `search storage review` as the README writes it: the words are one query, the same as
/// quoting them, and the options still apply wherever they stand.
#[test]
fn search_takes_several_words_as_one_query() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("history.db");
    assert_eq!(run(&db, &["import", "-"], CONVERSATION).code, 0);
    let words = run(&db, &["search", "storage", "review"], "");
    assert_eq!(words.code, 0, "{}", words.stderr);
    assert!(words.stdout.contains("storage"), "{}", words.stdout);
    let quoted = run(&db, &["search", "storage review"], "");
    assert_eq!(words.stdout, quoted.stdout);
    let hits = json_of(&run(
        &db,
        &["search", "storage", "--json", "review", "--limit", "1"],
        "",
    ));
    assert_eq!(hits.as_array().map(Vec::len), Some(1), "{hits}");
    assert_eq!(hits[0]["thread"], "01J9J3D3M6A4M3WQX8G1ZQ0S7K");
    assert_eq!(run(&db, &["search", "storage", "zebra"], "").code, 1);
    // Whole words: a word begun is not one (the app's `/`, as typed, finds it).
    assert_eq!(run(&db, &["search", "storage", "revi"], "").code, 1);
    assert_eq!(run(&db, &["search"], "").code, 2, "a query is still needed");
    let blank = run(&db, &["search", " "], "");
    assert_eq!(blank.code, 2, "a blank query is no query either");
    assert!(
        blank.stderr.contains("nothing to search for"),
        "{}",
        blank.stderr
    );
    // Nothing found is exit 1 in JSON too, with an empty list.
    let none = run(&db, &["search", "--json", "zebra"], "");
    assert_eq!((none.code, none.stdout.as_str()), (1, "[]\n"));
    // A list cut at --limit says so.
    let cut = run(&db, &["threads", "--limit", "0"], "");
    assert_eq!(cut.code, 0);
    assert!(
        cut.stderr.contains("--limit N shows more"),
        "{}",
        cut.stderr
    );
    assert!(cut.stdout.is_empty(), "{}", cut.stdout);
}

#[test]
fn import_threads_show_search_reply() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("nested/dir/history.db");
    let r = run(&db, &["import", "--json", "-"], CONVERSATION);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let report = json_of(&r);
    let items = report[0]["items"].as_array().expect("items");
    assert_eq!(items.len(), 3);
    assert!(items.iter().all(|i| i["outcome"] == "imported"), "{report}");
    assert_eq!(items[0]["span"], json!({"start_line": 4, "end_line": 12}));
    assert!(db.exists(), "the database and its folders are created");

    // Again: nothing new.
    let again = json_of(&run(&db, &["import", "--json", "-"], CONVERSATION));
    assert!(
        again[0]["items"]
            .as_array()
            .expect("items")
            .iter()
            .all(|i| i["outcome"] == "duplicate")
    );

    let threads = json_of(&run(&db, &["threads", "--json"], ""));
    let threads = threads.as_array().expect("threads");
    assert_eq!(threads.len(), 2);
    for t in threads {
        for key in [
            "id",
            "context",
            "participants",
            "message_count",
            "last_activity",
            "awaiting_reply",
        ] {
            assert!(t.get(key).is_some(), "missing {key} in {t}");
        }
        let time = t["last_activity"].as_str().expect("time");
        assert!(
            time.parse::<jiff::Timestamp>().is_ok(),
            "{time} is not RFC 3339"
        );
    }
    let naming = threads
        .iter()
        .find(|t| t["context"] == "naming the project")
        .expect("naming");
    assert_eq!(naming["message_count"], 2);
    assert_eq!(naming["participants"], json!(["CLAUDE", "BROTHER"]));
    assert_eq!(naming["awaiting_reply"], false);

    let id = naming["id"].as_str().expect("id");
    let show = json_of(&run(&db, &["show", id, "--json"], ""));
    assert_eq!(show["id"], id);
    let msgs = show["messages"].as_array().expect("messages");
    assert_eq!(msgs[0]["intent"], "REQUEST");
    assert_eq!(msgs[0]["intent_raw"], "QUESTION");
    assert_eq!(msgs[1]["intent"], "RESPOND");
    assert_eq!(msgs[1]["parent"], msgs[0]["message"]);
    assert_eq!(msgs[1]["body"], "crosstalk, it says what the tool is for.");
    for key in [
        "status",
        "received_at",
        "from",
        "to",
        "meta",
        "headers",
        "thread",
    ] {
        assert!(msgs[0].get(key).is_some(), "missing {key}");
    }
    let human = run(&db, &["show", id], "");
    assert!(
        human.stdout.contains("REQUEST CLAUDE → BROTHER"),
        "{}",
        human.stdout
    );

    let hits = json_of(&run(&db, &["search", "--json", "crosstalk"], ""));
    assert_eq!(hits[0]["thread"], id);
    assert!(
        hits[0]["snippet"]
            .as_str()
            .unwrap_or("")
            .contains("[crosstalk]")
    );
    assert_eq!(run(&db, &["search", "zebra"], "").code, 1);

    // Reply to the POLL: RESPOND from the desk to its sender, thread/session/context kept.
    // A desk with no address of its own is the human who writes (`--user`).
    let r = run(
        &db,
        &[
            "reply",
            "01J9J3DBC4N7P2Q3R5S7T9V1V2",
            "--body",
            "SQLITE",
            "--user",
            "mira",
        ],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let parsed = json_of(&run(&db, &["parse", "--json"], &r.stdout));
    let e = &parsed["envelopes"][0];
    assert_eq!(e["from"], "human://mira");
    assert_eq!(e["user"], "mira");
    assert_eq!(e["to"], "claude://session/abc");
    assert_eq!(e["intent"], "RESPOND");
    assert_eq!(e["parent"], "01J9J3DBC4N7P2Q3R5S7T9V1V2");
    assert_eq!(e["thread"], "01J9J3D3M6A4M3WQX8G1ZQ0S7K");
    assert_eq!(e["session"], "2025-10-09T17Z b447a4");
    assert_eq!(e["context"], "storage review");
    assert_ne!(e["message"], "01J9J3DBC4N7P2Q3R5S7T9V1V2");
    let show = json_of(&run(
        &db,
        &["show", "01J9J3D3M6A4M3WQX8G1ZQ0S7K", "--json"],
        "",
    ));
    // A draft, not a message: the thread still holds one message, the drafts table the reply.
    assert_eq!(show["messages"].as_array().unwrap().len(), 1, "{show}");
    assert!(r.stderr.contains("not yet a message"), "{}", r.stderr);
    let raw = rusqlite::Connection::open(&db).unwrap();
    let (id, parent): (String, String) = raw
        .query_row("SELECT id, parent_id FROM drafts", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(e["message"], id.as_str());
    assert_eq!(parent, "01J9J3DBC4N7P2Q3R5S7T9V1V2");

    assert_eq!(run(&db, &["reply", "01NOPE", "--body", "x"], "").code, 1);
    assert_eq!(run(&db, &["show", "01NOPE"], "").code, 1);
    // The first characters of an id will do, as for `show` and `poll`. With `[operator]
    // addresses` the desk writes as the first of them, whoever the user is.
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[operator]\naddresses = [\"kalle@desk\", \"other\"]\n[compose]\nfrom = \"CHATGPT\"\n",
    )
    .unwrap();
    let db_arg = db.to_str().unwrap();
    let by_prefix = common::run_env(
        &["--db", db_arg, "reply", "01J9J3DBC4N7", "--body", "again"],
        "",
        &[("CROSSTALK_CONFIG", config.to_str().unwrap())],
    );
    assert_eq!(by_prefix.code, 0, "{}", by_prefix.stderr);
    assert!(
        by_prefix
            .stdout
            .contains("parent: 01J9J3DBC4N7P2Q3R5S7T9V1V2"),
        "{}",
        by_prefix.stdout
    );
    assert!(
        by_prefix
            .stdout
            .starts_with("[[kalle@desk→claude://session/abc "),
        "{}",
        by_prefix.stdout
    );

    // What is wrong with a reply is said as it is saved: an ERROR without its code is an
    // error (exit 1, the draft kept to mend in the app), an unknown intent a warning, a
    // missing body a note; an option holding a line break is refused before anything is saved.
    let drafts = |db: &Path| -> i64 {
        rusqlite::Connection::open(db)
            .unwrap()
            .query_row("SELECT count(*) FROM drafts", [], |r| r.get(0))
            .unwrap()
    };
    let before = drafts(&db);
    let r = run(
        &db,
        &["reply", "01J9J3DBC4N7", "--intent", "ERROR", "--body", "x"],
        "",
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("error-code-missing"), "{}", r.stderr);
    let r = run(&db, &["reply", "01J9J3DBC4N7", "--intent", "FOO BAR"], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("unknown-intent"), "{}", r.stderr);
    assert!(r.stderr.contains("body is empty"), "{}", r.stderr);
    assert_eq!(drafts(&db), before + 2);
    let r = run(
        &db,
        &[
            "reply",
            "01J9J3DBC4N7",
            "--intent",
            "REQUEST\nparent: x",
            "--body",
            "x",
        ],
        "",
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--intent"), "{}", r.stderr);
    assert_eq!(drafts(&db), before + 2, "nothing saved");
}

#[test]
fn export_round_trips_into_an_empty_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = dir.path().join("a.db");
    let b = dir.path().join("b.db");
    run(&a, &["import", "-"], CONVERSATION);
    for t in json_of(&run(&a, &["threads", "--json"], ""))
        .as_array()
        .expect("threads")
    {
        let id = t["id"].as_str().expect("id");
        let exported = run(&a, &["export", id], "");
        assert_eq!(exported.code, 0);
        let r = run(&b, &["import", "-"], &exported.stdout);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        let tree = |db: &Path| -> Vec<(Value, Value, Value)> {
            json_of(&run(db, &["show", id, "--json"], ""))["messages"]
                .as_array()
                .expect("messages")
                .iter()
                .map(|m| (m["message"].clone(), m["parent"].clone(), m["body"].clone()))
                .collect()
        };
        assert_eq!(tree(&a), tree(&b));
        let md = run(&a, &["export", id, "--format", "markdown"], "");
        assert!(md.stdout.starts_with("# "), "{}", md.stdout);
        let js = json_of(&run(&a, &["export", id, "--format", "json"], ""));
        assert_eq!(js["id"], id);
    }
}

/// META that only the canonical form's care keeps: the older `meta: |` layout with entries
/// named like headers, and a YAML list over several lines.
const AWKWARD_META: &str = "[[CLAUDE→CHATGPT v1]]
user: kalle
session: 2025-10-09T16Z abc123
intent: REQUEST
meta: |
  intent: ESCALATE
  parent: 01J9J3D3M6A4M3WQX8G1ZQ0S7K
  body: not the body
meta: routing
Targets: [
  \"claude://session/abc\",
  \"chatgpt://thread/xyz\"
]
body: |
  The real body.
sig: none
[[END]]
";

#[test]
fn a_backup_keeps_meta_that_looks_like_headers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    let r = run(&a, &["import", "-"], AWKWARD_META);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let threads = json_of(&run(&a, &["threads", "--json"], ""));
    let id = threads[0]["id"].as_str().expect("id").to_string();
    let exported = run(&a, &["export", &id], "");
    let r = run(&b, &["import", "-"], &exported.stdout);
    assert_eq!(
        r.code, 0,
        "re-import of the export: {}{}",
        r.stdout, r.stderr
    );
    let message =
        |db: &Path| json_of(&run(db, &["show", &id, "--json"], ""))["messages"][0].clone();
    let (m_a, m_b) = (message(&a), message(&b));
    assert_eq!(m_a["parent"], Value::Null);
    assert_eq!(m_a["intent"], "REQUEST");
    assert_eq!(m_a["body"], "The real body.");
    for key in ["parent", "intent", "body", "meta", "message"] {
        assert_eq!(m_a[key], m_b[key], "{key}");
    }
    let meta = m_a["meta"].to_string();
    assert!(
        meta.contains("not the body") && meta.contains("chatgpt://thread/xyz"),
        "{meta}"
    );
    // A second export of the re-imported copy is byte for byte the first.
    assert_eq!(run(&b, &["export", &id], "").stdout, exported.stdout);
}

#[test]
fn rejected_envelopes_exit_one_and_name_the_problem() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("h.db");
    let bad = CONVERSATION.replace(
        "> thread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K",
        "> thread: 01J9J3D3M6A4M3WQX8G1ZQ0S7U",
    );
    let r = run(&db, &["import", "-"], &bad);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("<stdin>:21: rejected"), "{}", r.stdout);
    assert!(
        r.stdout.contains("<stdin>:24:11: error: thread:"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("2 imported, 0 duplicate, 1 rejected"),
        "{}",
        r.stdout
    );
}

#[test]
fn human_output_of_stored_text_is_sanitized() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("h.db");
    let evil = "[[EVIL→B v1]]\nsession: s1\ncontext: \u{1b}]0;pwned\u{7}title\nintent: REQUEST\nbody: |\n  \u{1b}[2Jwiped \u{202e}gnp.exe\nsig: none\n[[END]]\n";
    run(&db, &["import", "-"], evil);
    let threads = run(&db, &["threads"], "");
    let id = threads
        .stdout
        .split_whitespace()
        .next()
        .expect("id")
        .to_string();
    for args in [
        vec!["threads"],
        vec!["show", id.as_str()],
        vec!["search", "wiped"],
        vec!["export", id.as_str(), "--format", "markdown"],
    ] {
        let r = run(&db, &args, "");
        assert!(
            !r.stdout.contains(['\u{1b}', '\u{7}', '\u{202e}']),
            "{args:?} leaked: {:?}",
            r.stdout
        );
    }
}

#[test]
fn import_reads_every_input_it_can_and_names_those_it_cannot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("history.db");
    let (a, b) = (dir.path().join("a.md"), dir.path().join("b.md"));
    std::fs::write(&a, CONVERSATION).expect("write a");
    let b_text = CONVERSATION
        .replace("2025-10-09T16Z a7f3d1", "2025-10-10T09Z c0ffee")
        .replace("01J9J3DBC4N7P2Q3R5S7T9V1V2", "01J9J3DBC4N7P2Q3R5S7T9V1V3");
    std::fs::write(&b, b_text).expect("write b");
    // A missing file whose name carries an escape sequence, and a folder (opens, cannot be read).
    let missing = dir.path().join("missing\x1b[31m.md");
    let folder = dir.path().join("a-folder");
    std::fs::create_dir(&folder).expect("folder");
    let arg = |p: &Path| p.to_str().expect("utf-8 path").to_string();
    let r = run(
        &db,
        &["import", &arg(&a), &arg(&missing), &arg(&folder), &arg(&b)],
        "",
    );
    assert_eq!(r.code, 2, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    // Both readable inputs were imported, the one after the missing file included.
    let a_name = a.display().to_string();
    let b_name = b.display().to_string();
    assert!(
        r.stdout.contains(&format!("{a_name}: 3 imported")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!("{b_name}: 3 imported")),
        "{}",
        r.stdout
    );
    // Each unreadable input is named with its cause, escapes made visible.
    assert!(!r.stderr.contains('\x1b'), "{:?}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    let missing_line = lines
        .iter()
        .find(|l| l.contains("missing") && l.contains("cannot read"))
        .unwrap_or_else(|| panic!("{}", r.stderr));
    assert!(missing_line.contains("No such file"), "{missing_line}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("a-folder") && l.contains("cannot read")),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("2 of 4 inputs not read"), "{}", r.stderr);
    // With --json, each input has its place in the list: read ones with their reports, the
    // others with why (and no items); the exit status is the same.
    let db2 = dir.path().join("json.db");
    let r = run(
        &db2,
        &[
            "import",
            "--json",
            &arg(&a),
            &arg(&missing),
            &arg(&folder),
            &arg(&b),
        ],
        "",
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let entries = json_of(&r);
    let entries = entries.as_array().expect("a list");
    assert_eq!(entries.len(), 4, "{entries:?}");
    assert_eq!(entries[0]["items"].as_array().map(Vec::len), Some(3));
    assert!(entries[0].get("not_read").is_none());
    let source = entries[1]["source"].as_str().expect("a source");
    assert!(
        source.contains("missing") && !source.contains('\x1b'),
        "{source}"
    );
    assert!(
        entries[1]["not_read"]
            .as_str()
            .unwrap()
            .contains("No such file"),
        "{}",
        entries[1]
    );
    assert_eq!(entries[1]["items"].as_array().map(Vec::len), Some(0));
    assert!(entries[2]["not_read"].is_string(), "{}", entries[2]);
    assert_eq!(entries[3]["items"].as_array().map(Vec::len), Some(3));
    // a's two threads, b's session thread (its v1.1 message joins a's thread).
    let threads = json_of(&run(&db, &["threads", "--json"], ""));
    assert_eq!(threads.as_array().expect("threads").len(), 3);
}

#[test]
fn read_only_database_reads_and_refuses_import_with_its_name() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("history.db");
    assert_eq!(run(&db, &["import", "-"], CONVERSATION).code, 0);
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let threads = run(&db, &["threads"], "");
    assert_eq!(threads.code, 0, "{}", threads.stderr);
    assert!(threads.stdout.contains("naming the project"));
    let search = run(&db, &["search", "crosstalk"], "");
    assert_eq!(search.code, 0, "{}", search.stderr);
    let id = "01J9J3D3M6A4M3WQX8G1ZQ0S7K";
    assert_eq!(run(&db, &["show", id], "").code, 0);
    assert_eq!(run(&db, &["export", id], "").code, 0);

    let r = run(&db, &["import", "-"], CONVERSATION);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains(&db.display().to_string()) && r.stderr.contains("read-only"),
        "{}",
        r.stderr
    );
}

/// `import` files what arrives by the config's `[operator] addresses`, as the app does: an
/// envelope for the operator is theirs to answer, one for anyone else is to relay.
#[test]
fn import_files_arrivals_by_the_operator_addresses_in_the_config() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("c.db");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[operator]\naddresses = [\"chatgpt://thread/xyz\"]\n",
    )
    .unwrap();
    let r = run(
        &db,
        &["--config", config.to_str().unwrap(), "import"],
        CONVERSATION,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let c = rusqlite::Connection::open(&db).unwrap();
    let mut stmt = c
        .prepare(
            "SELECT m.recipient, d.state FROM delivery d JOIN messages m ON m.seq = d.seq
             ORDER BY m.seq",
        )
        .unwrap();
    let rows: Vec<(String, Option<String>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // The POLL for the operator is theirs to answer; the others are to relay, but for the
    // question BROTHER answered in the same paste: it was evidently carried to BROTHER.
    assert!(
        rows.iter()
            .any(|(to, state)| to == "chatgpt://thread/xyz" && state.as_deref() == Some("to_me")),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|(to, state)| to == "BROTHER" && state.is_none()),
        "{rows:?}"
    );
    let method: String = c
        .query_row(
            "SELECT relay_method FROM messages WHERE recipient = 'BROTHER'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(method, "inferred from BROTHER's reply");
    assert!(
        rows.iter()
            .any(|(to, state)| to == "CLAUDE" && state.as_deref() == Some("to_relay")),
        "{rows:?}"
    );
}

/// The database is closed on a thread of its own while a large import's report is printed;
/// the command returns only once it is closed (no log left beside it) and the report whole.
#[test]
fn a_large_import_prints_its_whole_report_and_returns_with_the_database_closed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let text: String = (0..300)
        .map(|i| {
            format!(
                "[[A→B v1]]\nsession: s{}\nresponse: |\n  answer {i}\n[[END]]\n\n",
                i % 7
            )
        })
        .collect();
    let r = run(&db, &["import", "-"], &text);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 301, "{}", r.stdout);
    assert!(lines[..300].iter().all(|l| l.contains(": imported ")));
    assert_eq!(lines[300], "<stdin>: 300 imported, 0 duplicate, 0 rejected");
    let mut wal = db.clone().into_os_string();
    wal.push("-wal");
    assert!(!Path::new(&wal).exists(), "the log is removed on close");
    let mut index_wal = db.clone().into_os_string();
    index_wal.push("-search-wal");
    assert!(
        !Path::new(&index_wal).exists(),
        "the search index's log too"
    );
    // A second import of the same file into the same database, closed as cleanly.
    let file = dir.path().join("in.txt");
    std::fs::write(&file, &text).unwrap();
    let r = run(&db, &["import", file.to_str().unwrap()], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.ends_with("300 duplicate, 0 rejected\n"),
        "{}",
        r.stdout
    );
    assert!(!Path::new(&wal).exists());
}

/// A `body:` without `intent:` answers the envelope before it in its session: `parse --json`
/// reads it so from the text alone, as `import` stores it (`intent: RESPOND`), and the first
/// of each session, which answers nothing in the text, has no intent in either.
#[test]
fn parse_and_import_read_a_body_without_intent_alike() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("h.db");
    let v10 = |from: &str, to: &str, session: &str, body: &str| {
        format!(
            "[[{from}→{to} v1]]\nuser: kalle\nsession: {session}\nbody: |\n  {body}\nsig: none\n[[END]]\n\n"
        )
    };
    let text = [
        v10("CLAUDE", "GEMINI", "2025-10-09T16Z s1", "Which one?"),
        v10("GEMINI", "CLAUDE", "2025-10-09T16Z s1", "The first."),
        v10("CLAUDE", "GEMINI", "2025-10-09T17Z s2", "Another question."),
        v10("GEMINI", "CLAUDE", "2025-10-09T16Z s1", "And why."),
    ]
    .concat();
    let parsed = json_of(&run(&db, &["parse", "--json", "-"], &text));
    let read: Vec<Value> = (parsed["envelopes"].as_array().expect("envelopes").iter())
        .map(|e| e["intent"].clone())
        .collect();
    assert_eq!(
        read,
        [Value::Null, json!("RESPOND"), Value::Null, json!("RESPOND")]
    );
    let r = run(&db, &["import", "--json", "-"], &text);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let report = json_of(&r);
    let stored: Vec<Value> = (report[0]["items"].as_array().expect("items").iter())
        .map(|item| {
            let show = json_of(&run(
                &db,
                &["show", item["thread"].as_str().unwrap(), "--json"],
                "",
            ));
            let messages = show["messages"].as_array().expect("messages");
            let m = messages
                .iter()
                .find(|m| m["message"] == item["message"])
                .expect("the item's message");
            m["intent"].clone()
        })
        .collect();
    assert_eq!(stored, read);
    // The human form says why.
    let human = run(&db, &["parse", "-"], &text).stdout;
    assert!(
        human.contains(
            "(intent RESPOND: a `body:` answering the envelope before it in its session)"
        ),
        "{human}"
    );
}

/// `show` cuts a message's first line by the cells a terminal gives it, not by characters: a
/// line of wide characters (two cells each) took 194 cells where 60 were meant.
#[test]
fn show_cuts_wide_characters_by_their_width() {
    use unicode_width::UnicodeWidthStr;
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("w.db");
    let wide = "日本語の文章".repeat(16);
    let text = format!(
        "[[CLAUDE→CHATGPT v1]]\nthread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K\nmessage: 01J9J3DBC4N7P2Q3R5S7T9V1V2\n\
         intent: INFORM\nbody: |\n  {wide}\nsig: none\n[[END]]\n"
    );
    run(&db, &["import", "-"], &text);
    let r = run(&db, &["show", "01J9J3D3M6A4M3WQX8G1ZQ0S7K"], "");
    let line = (r.stdout.lines())
        .find(|l| l.contains('日'))
        .unwrap_or_else(|| panic!("no message line: {}", r.stdout));
    let cut: String = line
        .chars()
        .filter(|c| !c.is_ascii() && *c != '→')
        .collect();
    assert!(cut.ends_with('…'), "{line}");
    assert!(cut.width() <= 60, "{} cells: {line}", cut.width());
    assert!(
        cut.width() >= 58,
        "cut short, {} cells: {line}",
        cut.width()
    );
}
