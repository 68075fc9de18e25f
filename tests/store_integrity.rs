//! Nothing pasted is silently dropped: a message id pasted again with other content is an
//! `id-conflict` kept as a version; parent cycles across imports are found and every walk
//! ends; invalid ids can be replaced with fresh ones that keep the original as an alias.

use crosstalk::protocol::{Code, IdGenerator, Options, extract};
use crosstalk::store::{ImportReport, Outcome, Store};
use tempfile::TempDir;

fn store() -> (TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("crosstalk.db")).unwrap();
    (dir, store)
}

fn import(store: &mut Store, text: &str) -> ImportReport {
    store.import_text("<test>", text, &Options::default()).unwrap()
}

fn ids(n: usize) -> Vec<String> {
    let g = IdGenerator::new();
    (0..n).map(|_| g.next_id()).collect()
}

fn env(thread: &str, parent: Option<&str>, message: &str, body: &str) -> String {
    let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
    format!(
        "[[claude→gpt v1]]\nuser: kalle\nthread: {thread}\n{parent}message: {message}\n\
         context: integrity\nintent: REQUEST\nbody: |\n  {body}\nsig: none\n[[END]]\n"
    )
}

#[test]
fn same_id_other_content_is_a_loud_conflict_kept_as_a_version() {
    let (_d, mut s) = store();
    let id = ids(2);
    let first = import(&mut s, &env(&id[0], None, &id[1], "the original"));
    assert_eq!(first.items[0].outcome, Outcome::Imported);

    // The same text again, even with transport damage (indent stripped), is a duplicate.
    let stripped = env(&id[0], None, &id[1], "the original").replace("  the original", "the original");
    let again = import(&mut s, &stripped);
    assert_eq!(again.items[0].outcome, Outcome::Duplicate, "{again:?}");
    assert!(s.message_versions(&id[1]).unwrap().is_empty());

    // Other content under the same id: an error that names the stored message, kept as a version.
    let other = env(&id[0], None, &id[1], "someone changed this");
    let dry = {
        let kept = s.keep_text("<paste>", &other).unwrap();
        s.import_kept(&kept, &Options::default(), &mut |_| {}, false).unwrap()
    };
    assert_eq!(dry.items[0].outcome, Outcome::Conflict);
    assert_eq!(s.version_count(&id[1]).unwrap(), 0, "a dry run writes nothing");
    let r = import(&mut s, &other);
    let item = &r.items[0];
    assert_eq!(item.outcome, Outcome::Conflict);
    assert_eq!(item.message.as_deref(), Some(id[1].as_str()));
    assert_eq!(item.thread.as_deref(), Some(id[0].as_str()));
    let d = &item.diagnostics[0];
    assert_eq!(d.code, Code::IdConflict);
    assert!(d.is_error());
    assert!(d.message.contains(&id[1]), "{}", d.message);
    assert!(d.message.contains("integrity"), "names the thread: {}", d.message);
    assert!(d.message.contains("received"), "{}", d.message);
    assert!(d.message.contains("version 1"), "{}", d.message);

    // The stored message is unchanged; the new text is reachable.
    let m = s.message(&id[1]).unwrap().unwrap();
    assert_eq!(m.envelope.body.as_deref(), Some("the original"));
    let versions = s.message_versions(&id[1]).unwrap();
    assert_eq!(versions.len(), 1);
    assert_eq!(versions[0].paste_id, Some(r.paste_id));
    assert!(versions[0].canonical.contains("someone changed this"));
    let v = s.version_message(&id[1], 1).unwrap().unwrap();
    assert_eq!(v.envelope.body.as_deref(), Some("someone changed this"));
    assert_eq!(v.thread, id[0]);

    // The same conflicting paste twice stores the conflict once, and still says so.
    let r2 = import(&mut s, &other);
    assert_eq!(r2.items[0].outcome, Outcome::Conflict);
    assert!(r2.items[0].diagnostics[0].message.contains("kept before"));
    assert_eq!(s.version_count(&id[1]).unwrap(), 1);

    // A third text is a second version.
    import(&mut s, &env(&id[0], None, &id[1], "a third text"));
    assert_eq!(s.version_count(&id[1]).unwrap(), 2);
    // And the thread still has one message.
    assert_eq!(s.thread(&id[0]).unwrap().unwrap().messages.len(), 1);
}

#[test]
fn a_conflict_inside_one_paste_is_caught_too() {
    let (_d, mut s) = store();
    let id = ids(2);
    let text = format!(
        "{}\n{}",
        env(&id[0], None, &id[1], "first"),
        env(&id[0], None, &id[1], "second")
    );
    let r = import(&mut s, &text);
    let outcomes: Vec<Outcome> = r.items.iter().map(|i| i.outcome).collect();
    assert_eq!(outcomes, [Outcome::Imported, Outcome::Conflict]);
    assert_eq!(s.version_count(&id[1]).unwrap(), 1);
}

#[test]
fn check_against_the_store_reports_the_conflict_without_writing() {
    let (_d, mut s) = store();
    let id = ids(2);
    import(&mut s, &env(&id[0], None, &id[1], "the original"));
    let other = env(&id[0], None, &id[1], "changed");
    let parsed = extract(&other, &Options::default()).envelopes;
    let d = s.id_conflict(&parsed[0]).unwrap().expect("a conflict");
    assert_eq!(d.code, Code::IdConflict);
    let same = extract(&env(&id[0], None, &id[1], "the original"), &Options::default()).envelopes;
    assert!(s.id_conflict(&same[0]).unwrap().is_none());
    assert_eq!(s.version_count(&id[1]).unwrap(), 0);
}
