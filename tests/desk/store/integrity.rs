//! Nothing pasted is silently dropped: a message id pasted again with other content is an
//! `id-conflict` kept as a version; parent cycles across imports are found and every walk
//! ends; invalid ids can be replaced with fresh ones that keep the original as an alias.

use crosstalk::ids::IdGenerator;
use crosstalk::protocol::{Code, Options, extract};
use crosstalk::store::{ImportReport, Outcome, Store};
use tempfile::TempDir;

fn store() -> (TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("crosstalk.db")).unwrap();
    (dir, store)
}

fn import(store: &mut Store, text: &str) -> ImportReport {
    store
        .import_text("<test>", text, &Options::default())
        .unwrap()
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
    let stripped =
        env(&id[0], None, &id[1], "the original").replace("  the original", "the original");
    let again = import(&mut s, &stripped);
    assert_eq!(again.items[0].outcome, Outcome::Duplicate, "{again:?}");
    assert!(s.message_versions(&id[1]).unwrap().is_empty());

    // Other content under the same id: an error that names the stored message, kept as a version.
    let other = env(&id[0], None, &id[1], "someone changed this");
    let dry = {
        let kept = s.keep_text("<paste>", &other).unwrap();
        s.import_kept(&kept, &Options::default(), &mut |_| {}, false)
            .unwrap()
    };
    assert_eq!(dry.items[0].outcome, Outcome::Conflict);
    assert_eq!(
        s.version_count(&id[1]).unwrap(),
        0,
        "a dry run writes nothing"
    );
    let r = import(&mut s, &other);
    let item = &r.items[0];
    assert_eq!(item.outcome, Outcome::Conflict);
    assert_eq!(item.message.as_deref(), Some(id[1].as_str()));
    assert_eq!(item.thread.as_deref(), Some(id[0].as_str()));
    let d = &item.diagnostics[0];
    assert_eq!(d.code, Code::IdConflict);
    assert!(d.is_error());
    assert!(d.message.contains(&id[1]), "{}", d.message);
    assert!(
        d.message.contains("integrity"),
        "names the thread: {}",
        d.message
    );
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
    let same = extract(
        &env(&id[0], None, &id[1], "the original"),
        &Options::default(),
    )
    .envelopes;
    assert!(s.id_conflict(&same[0]).unwrap().is_none());
    assert_eq!(s.version_count(&id[1]).unwrap(), 0);
}

/// The spec's example ids carry a `U`, which ULIDs leave out.
const BAD_THREAD: &str = "01J9J3D9C2V8M4P1R6S8T9U0V1";
const BAD_MESSAGE: &str = "01J9J3D9C2V8M4P1R6S8T9U0V2";
const OTHER_BAD_MESSAGE: &str = "01J9J3D9C2V8M4P1R6S8T9U0V3";

fn import_fresh(store: &mut Store, text: &str) -> ImportReport {
    store
        .import_reader_with(
            "<test>",
            &mut text.as_bytes(),
            &Options::default(),
            &mut |_| {},
            true,
        )
        .unwrap()
}

#[test]
fn invalid_ids_get_fresh_ones_and_replies_naming_the_original_thread_under_them() {
    let (_d, mut s) = store();
    let original = env(BAD_THREAD, None, BAD_MESSAGE, "example ids copied");
    // As it is: rejected, nothing stored.
    let r = import(&mut s, &original);
    assert_eq!(r.items[0].outcome, Outcome::Rejected);
    // With fresh ids: imported, the original kept as an alias, a warning says so.
    let r = import_fresh(&mut s, &original);
    let item = &r.items[0];
    assert_eq!(item.outcome, Outcome::Imported, "{item:?}");
    let id = item.message.clone().unwrap();
    let thread = item.thread.clone().unwrap();
    assert_ne!(id, BAD_MESSAGE);
    assert!(crosstalk::protocol::is_id(&id) && crosstalk::protocol::is_id(&thread));
    assert!(item.diagnostics.iter().all(|d| d.code != Code::BadId));
    assert!(item.diagnostics.iter().any(|d| d.code == Code::FreshId));
    assert_eq!(s.alias_of(&id).unwrap().as_deref(), Some(BAD_MESSAGE));
    assert_eq!(
        s.resolve_alias(BAD_MESSAGE).unwrap().as_deref(),
        Some(id.as_str())
    );
    // The same paste again with fresh ids: a duplicate, not a second message.
    let again = import_fresh(&mut s, &original);
    assert_eq!(again.items[0].outcome, Outcome::Duplicate, "{again:?}");
    // A reply naming the original ids, imported plainly in a later paste, threads under it.
    let reply_id = ids(1).remove(0);
    let reply = env(
        BAD_THREAD,
        Some(BAD_MESSAGE),
        &reply_id,
        "a reply to the example",
    );
    let r = import(&mut s, &reply);
    assert_eq!(r.items[0].outcome, Outcome::Imported, "{r:?}");
    let m = s.message(&reply_id).unwrap().unwrap();
    assert_eq!(m.parent.as_deref(), Some(id.as_str()));
    assert_eq!(m.thread, thread);
    let view = s.thread(&thread).unwrap().unwrap();
    assert_eq!(view.messages.len(), 2);
    assert_eq!(view.messages[1].depth, 1);
}

#[test]
fn a_reply_in_the_same_paste_threads_under_the_fresh_id() {
    let (_d, mut s) = store();
    let reply_id = ids(1).remove(0);
    let text = format!(
        "{}\n{}",
        env(BAD_THREAD, None, BAD_MESSAGE, "first"),
        env(BAD_THREAD, Some(BAD_MESSAGE), &reply_id, "second")
    );
    let r = import_fresh(&mut s, &text);
    assert!(
        r.items.iter().all(|i| i.outcome == Outcome::Imported),
        "{r:?}"
    );
    let first = r.items[0].message.clone().unwrap();
    let m = s.message(&reply_id).unwrap().unwrap();
    assert_eq!(m.parent.as_deref(), Some(first.as_str()));
    assert_eq!(m.thread, r.items[0].thread.clone().unwrap());
}

/// The same paste imported again with fresh ids stores nothing new: a reply whose own id and
/// parent both were invalid is the duplicate it is, found under the ids its parent and it
/// were given the first time.
#[test]
fn a_paste_imported_again_with_fresh_ids_adds_nothing() {
    let (_d, mut s) = store();
    let text = format!(
        "{}\n{}",
        env(BAD_THREAD, None, BAD_MESSAGE, "first"),
        env(BAD_THREAD, Some(BAD_MESSAGE), OTHER_BAD_MESSAGE, "second")
    );
    let first = import_fresh(&mut s, &text);
    assert!(
        first.items.iter().all(|i| i.outcome == Outcome::Imported),
        "{first:?}"
    );
    let again = import_fresh(&mut s, &text);
    let outcomes: Vec<Outcome> = again.items.iter().map(|i| i.outcome).collect();
    assert_eq!(
        outcomes,
        [Outcome::Duplicate, Outcome::Duplicate],
        "{again:?}"
    );
    let ids = |r: &ImportReport| -> Vec<Option<String>> {
        r.items.iter().map(|i| i.message.clone()).collect()
    };
    assert_eq!(ids(&again), ids(&first));
    let thread = first.items[0].thread.clone().unwrap();
    assert_eq!(s.thread(&thread).unwrap().unwrap().messages.len(), 2);
}

#[test]
fn an_example_id_reused_for_other_content_is_a_new_message_with_fresh_ids() {
    let (_d, mut s) = store();
    let a = import_fresh(&mut s, &env(BAD_THREAD, None, BAD_MESSAGE, "one model"));
    let b = import_fresh(&mut s, &env(BAD_THREAD, None, BAD_MESSAGE, "another model"));
    assert_eq!(b.items[0].outcome, Outcome::Imported, "{b:?}");
    assert_ne!(a.items[0].message, b.items[0].message);
    // Other errors are not hidden by fresh ids.
    let broken =
        env(BAD_THREAD, None, BAD_MESSAGE, "x").replace("[[claude→gpt v1]]", "[[claude→gpt v9]]");
    let r = import_fresh(&mut s, &broken);
    assert_eq!(r.items[0].outcome, Outcome::Rejected);
}

#[test]
fn a_cycle_across_imports_is_diagnosed_and_both_messages_are_shown_once() {
    let (_d, mut s) = store();
    let id = ids(3);
    let a = import(&mut s, &env(&id[0], Some(&id[2]), &id[1], "A answers B"));
    assert!(
        a.items[0]
            .diagnostics
            .iter()
            .all(|d| d.code != Code::ParentCycle)
    );
    let b = import(&mut s, &env(&id[0], Some(&id[1]), &id[2], "B answers A"));
    assert_eq!(b.items[0].outcome, Outcome::Imported);
    assert!(
        b.items[0]
            .diagnostics
            .iter()
            .any(|d| d.code == Code::ParentCycle),
        "{b:?}"
    );
    // The warning is stored with the message too.
    let m = s.message(&id[2]).unwrap().unwrap();
    assert!(
        m.diagnostics.to_string().contains("parent-cycle"),
        "{}",
        m.diagnostics
    );
    let view = s.thread(&id[0]).unwrap().unwrap();
    assert_eq!(view.messages.len(), 2);
    let outline = s.thread_outline(&id[0]).unwrap().unwrap();
    assert_eq!(outline.rows.len(), 2);
}

mod cycles {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    /// Whether following `parent` from some message comes back to it.
    fn has_cycle(parent: &[Option<usize>]) -> bool {
        (0..parent.len()).any(|start| {
            let mut at = parent[start];
            for _ in 0..parent.len() {
                match at {
                    Some(p) if p == start => return true,
                    Some(p) => at = parent[p],
                    None => return false,
                }
            }
            false
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        /// Any parent graph (cycles included), imported in any order and any grouping into
        /// pastes: every walk ends, each message is in its thread's tree exactly once, and a
        /// cycle is reported exactly when the graph has one.
        #[test]
        fn any_parent_graph_in_any_order_shows_every_message_once(
            n in 1usize..9,
            raw_parents in proptest::collection::vec(proptest::option::of(0usize..9), 9),
            order_seed in proptest::collection::vec(any::<u32>(), 9),
            cuts in proptest::collection::vec(any::<bool>(), 9),
        ) {
            // No self-parents (those are rejected on their own) and only ids in the graph.
            let parent: Vec<Option<usize>> = (0..n)
                .map(|i| raw_parents[i].filter(|p| *p < n && *p != i))
                .collect();
            let id = ids(n + 1);
            let thread = &id[n];
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by_key(|i| order_seed[*i]);
            let (_d, mut s) = store();
            let mut paste = String::new();
            let mut reports = Vec::new();
            for (k, &i) in order.iter().enumerate() {
                let p = parent[i].map(|p| id[p].as_str());
                paste.push_str(&env(thread, p, &id[i], &format!("message {i}")));
                if cuts[k] || k + 1 == n {
                    reports.push(import(&mut s, &std::mem::take(&mut paste)));
                }
            }
            let items: Vec<_> = reports.iter().flat_map(|r| &r.items).collect();
            prop_assert!(items.iter().all(|i| i.outcome == Outcome::Imported));
            let cycle_reported = items
                .iter()
                .any(|i| i.diagnostics.iter().any(|d| d.code == Code::ParentCycle));
            prop_assert_eq!(cycle_reported, has_cycle(&parent));
            let view = s.thread(thread).unwrap().unwrap();
            let shown: Vec<&str> = view.messages.iter().map(|m| m.id.as_str()).collect();
            let unique: HashSet<&str> = shown.iter().copied().collect();
            prop_assert_eq!(shown.len(), n);
            prop_assert_eq!(unique.len(), n);
            let outline = s.thread_outline(thread).unwrap().unwrap();
            prop_assert_eq!(outline.rows.len(), n);
            for r in &outline.rows {
                prop_assert!(r.depth < n);
            }
        }
    }
}

/// Ids are read in either case (docs/PROTOCOL.md §5), the invalid ones an alias stands for
/// too: a reply naming the original ids in lower case threads under the fresh ones, and the
/// alias is found by `:open` and `show` in any case.
#[test]
fn an_alias_is_found_in_either_case() {
    let (_d, mut s) = store();
    let r = import_fresh(&mut s, &env(BAD_THREAD, None, BAD_MESSAGE, "example ids"));
    let (id, thread) = (r.items[0].message.clone(), r.items[0].thread.clone());
    let (id, thread) = (id.unwrap(), thread.unwrap());
    let lower = |s: &str| s.to_ascii_lowercase();
    assert_eq!(
        s.resolve_alias(&lower(BAD_MESSAGE)).unwrap().as_deref(),
        Some(id.as_str())
    );
    let reply_id = ids(1).remove(0);
    let reply = env(
        &lower(BAD_THREAD),
        Some(&lower(BAD_MESSAGE)),
        &reply_id,
        "a reply naming the example ids in lower case",
    );
    let r = import(&mut s, &reply);
    assert_eq!(r.items[0].outcome, Outcome::Imported, "{r:?}");
    let m = s.message(&reply_id).unwrap().unwrap();
    assert_eq!(m.parent.as_deref(), Some(id.as_str()));
    assert_eq!(m.thread, thread);
    // The same paste again in lower case with fresh ids: the same message, not a new one.
    let again = import_fresh(
        &mut s,
        &env(&lower(BAD_THREAD), None, &lower(BAD_MESSAGE), "example ids"),
    );
    assert_eq!(again.items[0].outcome, Outcome::Duplicate, "{again:?}");
    assert_eq!(again.items[0].message.as_deref(), Some(id.as_str()));
    assert_eq!(s.thread(&thread).unwrap().unwrap().messages.len(), 2);
}
