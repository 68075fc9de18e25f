//! Reading in the real binary, in tmux, at 80×24 and 200×50: a markdown answer (a heading,
//! bold, a list, a table, code blocks in two languages) rendered with no markdown marker left
//! on screen; the reader opened with `o`, searched, a code block copied (what OSC 52 delivered,
//! read from tmux's buffer); a POLL's answers side by side with `C`.

use crate::helpers::tmux;

use tmux::Term;

const SH: &str = "cargo build --release\nstrip target/release/crosstalk";
const PY: &str = "def tally(votes):\n    return sorted(votes)";

/// A thread whose answer is markdown, and a POLL answered by three of four targets.
fn transcript() -> String {
    let body = format!(
        "# Release plan\n\nWe ship **Thursday**, after the *last* review.\n\n\
- build the binary\n- sign it\n  with the release key\n- publish\n\n\
| step | command | owner |\n|---|---|---|\n| build | `cargo build` | Kalle |\n| sign | `minisign` | Ana |\n\n\
```sh\n{SH}\n```\n\nThen count the votes:\n\n```python\n{PY}\n```\n\nSee the [checklist](https://example.com/list).\n"
    );
    let indent = |s: &str| s.lines().map(|l| format!("  {l}\n")).collect::<String>();
    let answer = |from: &str, id: &str, vote: &str, body: &str| {
        format!(
            "[[{from}→human://op v1]]\nuser: m\nthread: 01K76Q0Z00000000000000T002\n\
parent: 01K76Q0Z00000000000000P002\nmessage: {id}\nintent: RESPOND\nmeta: poll\nVote: {vote}\n\
body: |\n{}sig: none\n[[END]]\n\n",
            indent(body)
        )
    };
    format!(
        "[[CLAUDE→human://op v1]]\nuser: claude\nthread: 01K76Q0Z00000000000000T001\n\
message: 01K76Q0Z00000000000000M001\ncontext: release plan\nintent: RESPOND\nbody: |\n{}sig: none\n[[END]]\n\n\
[[human://op→POLL v1]]\nuser: kalle\nthread: 01K76Q0Z00000000000000T002\nmessage: 01K76Q0Z00000000000000P002\n\
context: which store\nintent: POLL\nmeta: routing\nTargets: [\"CLAUDE\", \"CHATGPT\", \"GEMINI\", \"MISTRAL\"]\n\
meta: poll\nType: consensus\nQuorum: 2-of-4\nDeadline: 2099-01-01T00:00Z\nbody: |\n  Which store?\n  \
Options: SQLITE | FILES\nsig: none\n[[END]]\n\n{}{}{}",
        indent(&body),
        answer(
            "CLAUDE",
            "01K76Q0Z00000000000000A001",
            "SQLITE",
            "**SQLite**: one file, WAL."
        ),
        answer(
            "CHATGPT",
            "01K76Q0Z00000000000000A002",
            "FILES",
            "Files: *greppable*."
        ),
        answer(
            "MISTRAL",
            "01K76Q0Z00000000000000A003",
            "SQLITE",
            "SQLite too."
        ),
    )
}

fn markers_left(screen: &str) -> Vec<&str> {
    ["**", "# Release", "```", "|---", "](https"]
        .into_iter()
        .filter(|m| screen.contains(m))
        .collect()
}

fn reading_at(width: u16, height: u16) {
    let Some(t) = Term::new() else { return };
    let file = t.path("t.txt");
    std::fs::write(&file, transcript()).unwrap();
    t.import(&[&file]);
    t.start(width, height, &[]);
    t.wait_for("release plan");
    t.keys(&[":"]);
    t.type_text("open 01K76Q0Z00000000000000M001");
    t.keys(&["Enter"]);
    t.wait_for("Release plan");
    // The reader: the whole answer on the screen, rendered.
    t.keys(&["o"]);
    let wanted = [
        "Release plan",
        "Thursday",
        "build the binary",
        "Kalle",
        "[1] sh",
        "/ searches",
    ];
    let s = t.wait_until("the reader", |s| wanted.iter().all(|w| s.contains(w)));
    assert_eq!(markers_left(&s), Vec::<&str>::new(), "{s}");
    for line in s.lines() {
        assert!(line.chars().count() <= width as usize, "{line}");
    }
    // Its end: the python block and the link, as text with its URL.
    t.keys(&["G"]);
    let s = t.wait_for("https://example.com/list");
    assert!(s.contains("checklist") && s.contains("def tally"), "{s}");
    assert_eq!(markers_left(&s), Vec::<&str>::new(), "{s}");
    // Searched: the match in sight and counted.
    t.keys(&["/"]);
    t.type_text("votes");
    t.keys(&["Enter"]);
    let s = t.wait_for("rows match “votes”");
    assert!(s.contains("count the votes"), "{s}");
    // The python block, copied as written, through OSC 52 into tmux's buffer.
    t.keys(&["2"]);
    t.wait_for("Copied code block [2]");
    assert_eq!(
        t.wait_buffer("the python block", |b| b.contains("def tally")),
        PY
    );
    t.keys(&["1"]);
    assert_eq!(
        t.wait_buffer("the sh block", |b| b.contains("cargo build")),
        SH
    );
    t.keys(&["q"]);
    t.wait_gone("CLAUDE → human://op · RESPOND");
    // The POLL's answers side by side, each with its vote.
    t.keys(&[":"]);
    t.type_text("open 01K76Q0Z00000000000000P002");
    t.keys(&["Enter"]);
    t.wait_for("Which store?");
    t.keys(&["C"]);
    let s = t.wait_until("the columns", |s| {
        s.contains("answers to the POLL") && s.contains("SQLite: one file") && s.contains("Files:")
    });
    let heads = s
        .lines()
        .find(|l| l.contains("CLAUDE · vote SQLITE"))
        .unwrap_or("");
    assert!(heads.contains("CHATGPT · vote FILES"), "{s}");
    assert!(
        s.contains("SQLite: one file, WAL.") && !s.contains("**"),
        "{s}"
    );
    if width >= 200 {
        assert!(
            heads.contains("GEMINI · vote - · silent") && heads.contains("MISTRAL"),
            "{s}"
        );
    } else {
        assert!(s.contains("columns 1–3 of 4 (←/→)"), "{s}");
        t.keys(&["Right"]);
        let s = t.wait_until("the fourth column", |s| {
            s.contains("columns 2–4 of 4") && s.contains("SQLite too.")
        });
        assert!(s.contains("MISTRAL · vote SQLITE"), "{s}");
    }
    t.keys(&["Escape"]);
    t.wait_gone("answers to the POLL");
}

#[test]
fn a_markdown_answer_is_read_searched_copied_and_compared_at_80_by_24() {
    reading_at(80, 24);
}

#[test]
fn a_markdown_answer_is_read_searched_copied_and_compared_at_200_by_50() {
    reading_at(200, 50);
}
