//! The store's queries for the app: filtered thread rows with unread, awaiting and draft
//! markers; drafts; the light tree outline; the dry-run import behind the paste preview.

use crosstalk::protocol::Options;
use crosstalk::store::{Outcome, Store};

fn env(thread: &str, message: &str, parent: Option<&str>, context: &str, from: &str) -> String {
    let parent = parent.map(|p| format!("parent: {p}\n")).unwrap_or_default();
    format!(
        "[[{from}→Bob v1.1]]\nuser: u\nthread: {thread}\n{parent}message: {message}\ncontext: {context}\nintent: REQUEST\nbody: |\n  \n  first line of {message}\n  second\n[[END]]\n"
    )
}

const T1: &str = "01KA0000000000000000000001";
const T2: &str = "01KA0000000000000000000002";

fn store() -> Store {
    let mut s = Store::open_in_memory().unwrap();
    let text = [
        env(
            T1,
            "01KA0000000000000000000011",
            None,
            "rate 100% limiter",
            "Alice",
        ),
        env(
            T1,
            "01KA0000000000000000000012",
            Some("01KA0000000000000000000011"),
            "rate 100% limiter",
            "Bob",
        ),
        env(
            T2,
            "01KA0000000000000000000021",
            None,
            "snake_case names",
            "Carol",
        ),
    ]
    .concat();
    let r = s.import_text("t", &text, &Options::default()).unwrap();
    assert_eq!(r.count(Outcome::Imported), 3);
    s
}

#[test]
fn rows_filter_by_words_literally() {
    let s = store();
    let ids = |f: &str| -> Vec<String> {
        s.thread_rows(f, 10)
            .unwrap()
            .into_iter()
            .map(|r| r.summary.id)
            .collect()
    };
    assert_eq!(ids("").len(), 2);
    assert_eq!(ids("100%"), [T1]);
    assert_eq!(ids("RATE limiter"), [T1]);
    assert_eq!(ids("snake_case"), [T2]);
    assert!(ids("snake%case").is_empty(), "% is literal");
    assert!(ids("rate_100").is_empty(), "_ is literal");
    assert_eq!(ids("carol"), [T2]);
    assert_eq!(ids(T2), [T2]);
}

/// The counts behind the state filter's "3 of 12" are the rows it lists, whatever the
/// filter words and the state, and the number of all threads.
#[test]
fn thread_counts_are_the_rows_listed() {
    use crosstalk::store::{Section, StateFilter};
    let s = store();
    let mut states = vec![StateFilter::All];
    states.extend(Section::ALL.map(StateFilter::Only));
    for state in states {
        for f in [
            "",
            "100%",
            "rate limiter",
            "snake_case",
            "carol",
            "rate_100",
            "nothing",
        ] {
            let rows = s.thread_rows_in(f, state, usize::MAX >> 1).unwrap().len();
            assert_eq!(
                s.thread_counts(f, state).unwrap(),
                (rows, 2),
                "{state:?} {f:?}"
            );
        }
    }
}

#[test]
fn unread_until_seen_and_markers() {
    let mut s = store();
    assert!(s.thread_rows("", 10).unwrap().iter().all(|r| r.unread));
    s.mark_seen(T1).unwrap();
    let rows = s.thread_rows("", 10).unwrap();
    let row = |id: &str| rows.iter().find(|r| r.summary.id == id).unwrap().clone();
    assert!(!row(T1).unread && row(T2).unread);
    // A draft in T1, then sent and copied: awaiting.
    let original = s.message("01KA0000000000000000000012").unwrap().unwrap();
    let env = crosstalk::store::reply_envelope(&original, "op", None, "hi", "op", s.new_id());
    s.save_draft(&env, "text", "{}").unwrap();
    let rows = s.thread_rows("", 10).unwrap();
    assert_eq!(rows.iter().find(|r| r.summary.id == T1).unwrap().drafts, 1);
    assert_eq!(s.drafts_for(&original.id).unwrap().len(), 1);
    s.file_composed(&env).unwrap();
    assert!(s.drafts().unwrap().is_empty());
    let id = env.message().unwrap();
    assert!(s.mark_copied(id).unwrap());
    assert!(!s.mark_copied(id).unwrap(), "only once");
    let rows = s.thread_rows("", 10).unwrap();
    assert_eq!(rows[0].summary.id, T1);
    // Whether the copy awaits a reply follows the intent registry.
    let awaits = crosstalk::protocol::awaiting::expectation(
        env.intent().as_ref(),
        &env.banner.to,
        &env.meta,
    )
    .is_some();
    assert_eq!(
        !s.delivery(id).unwrap().unwrap().awaiting_from.is_empty(),
        awaits
    );
    // Bob's REQUEST answering Alice's shows hers was carried to him; it asks a question of
    // its own, so hers still awaits its answer, and the thread does.
    let alice = s.delivery("01KA0000000000000000000011").unwrap().unwrap();
    assert_eq!(
        alice.relayed.as_ref().map(|r| r.1.as_str()),
        Some("inferred from Bob's reply")
    );
    assert_eq!(alice.state.as_deref(), Some("awaiting"));
    assert!(rows[0].summary.awaiting_reply);
    assert!(
        !s.mark_copied("01KA0000000000000000000011").unwrap(),
        "received stays received"
    );
}

#[test]
fn outline_is_light_and_in_tree_order() {
    let s = store();
    let o = s.thread_outline(T1).unwrap().unwrap();
    assert_eq!(o.context.as_deref(), Some("rate 100% limiter"));
    let shape: Vec<(&str, usize, &str)> = o
        .rows
        .iter()
        .map(|r| (r.id.as_str(), r.depth, r.first_line.as_str()))
        .collect();
    assert_eq!(
        shape,
        [
            (
                "01KA0000000000000000000011",
                0,
                "first line of 01KA0000000000000000000011"
            ),
            (
                "01KA0000000000000000000012",
                1,
                "first line of 01KA0000000000000000000012"
            ),
        ]
    );
    assert!(s.thread_outline("nope").unwrap().is_none());
}

#[test]
fn dry_run_import_writes_nothing_but_the_paste() {
    let mut s = store();
    let text = env(
        "01KA0000000000000000000003",
        "01KA0000000000000000000031",
        None,
        "new",
        "Dan",
    );
    let kept = s.keep_text("<paste>", &text).unwrap();
    let dry = s
        .import_kept(&kept, &Options::default(), &mut |_| {}, false)
        .unwrap();
    assert_eq!(dry.count(Outcome::Imported), 1);
    assert_eq!(
        dry.items[0].thread.as_deref(),
        Some("01KA0000000000000000000003")
    );
    assert_eq!(s.thread_rows("", 10).unwrap().len(), 2, "nothing imported");
    let real = s
        .import_kept(&kept, &Options::default(), &mut |_| {}, true)
        .unwrap();
    assert_eq!(real.count(Outcome::Imported), 1);
    assert_eq!(s.thread_rows("", 10).unwrap().len(), 3);
    assert_eq!(
        s.search("first", 10).unwrap().len(),
        4,
        "indexed on the real import"
    );
}
