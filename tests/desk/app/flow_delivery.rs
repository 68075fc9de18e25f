//! Delivery flows driven by actions: `y` on an envelope to relay records it relayed (method in
//! the inspector and the queue), the queue view opens its rows, `s` cycles the thread list's
//! state filter, `[relay] copy_on_import` copies a single new envelope for its recipient, and
//! the seeded demo shows every queue state with realistic ages.

use crate::helpers::support;

use crosstalk::app::{Action, Pane};
use crosstalk::store::{Section, StateFilter, Store};
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use support::{harness, store_in};

const NONE: KeyModifiers = KeyModifiers::NONE;

fn env(from: &str, to: &str, thread: &str, parent: Option<&str>, id: &str, intent: &str) -> String {
    let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
    format!(
        "[[{from}→{to} v1]]\nuser: kalle\nthread: {thread}\n{parent}message: {id}\n\
         context: relay {thread}\nintent: {intent}\nbody: |\n  {intent} for {to}\nsig: none\n[[END]]\n"
    )
}

fn ids(n: usize) -> Vec<String> {
    let g = crosstalk::ids::IdGenerator::new();
    (0..n).map(|_| g.next_id()).collect()
}

#[test]
fn y_on_an_envelope_to_relay_copies_it_and_records_it_relayed() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 120, 40);
    let v = ids(2);
    t.act(Action::Paste(env(
        "CLAUDE",
        "fenced-bot",
        &v[0],
        None,
        &v[1],
        "REQUEST",
    )));
    t.key(KeyCode::Enter, NONE);
    // The list marks the thread: something in it is to relay.
    assert!(t.selected_thread_row().starts_with('⇢'), "{}", t.screen());
    assert_eq!(
        t.app.delivery.as_ref().unwrap().state.as_deref(),
        Some("to_relay")
    );
    t.keys("y");
    // Copied for its recipient: in the fence configured for it.
    let copy = t.copies().pop().unwrap();
    assert!(copy.starts_with("```\n[[CLAUDE→fenced-bot"), "{copy}");
    assert!(
        t.status_line().contains("relayed (OSC 52)"),
        "{:?}",
        t.status_line()
    );
    let d = t.app.delivery.clone().unwrap();
    assert_eq!(d.relayed.as_ref().unwrap().1, "OSC 52");
    // Now it awaits the recipient's answer; the inspector says how it was relayed.
    assert_eq!(d.state.as_deref(), Some("awaiting"));
    let line = t.app.inspector.delivery_line.clone().unwrap();
    assert!(line.contains("relayed 0s ago by OSC 52"), "{line}");
    assert!(line.contains("⏳ awaiting fenced-bot"), "{line}");
    let s = t.screen();
    assert!(s.contains("OSC 52"), "{s}");
    assert!(!t.selected_thread_row().contains('⇢'), "{s}");
    // A second `y` copies again but records nothing new.
    t.keys("y");
    assert!(
        !t.status_line().contains("relayed"),
        "{:?}",
        t.status_line()
    );
}

#[test]
fn the_queue_lists_sections_and_opens_the_selected_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    store
        .set_operator_addresses(&["human@desk".into()])
        .unwrap();
    let v = ids(6);
    let text = format!(
        "{}{}{}",
        env("CLAUDE", "CHATGPT", &v[0], None, &v[1], "BROADCAST"),
        env("CLAUDE", "human@desk", &v[2], None, &v[3], "ESCALATE"),
        env("CHATGPT", "CLAUDE", &v[4], Some(&v[0]), &v[5], "RESPOND"),
    );
    store.import_text("t", &text, &Default::default()).unwrap();
    let mut t = harness(store, 120, 40);
    t.keys("Q");
    let s = t.screen();
    for heading in [
        "to relay (2)",
        "addressed to me (1)",
        "missing parent (1)",
        "drafts (0)",
    ] {
        assert!(s.contains(heading), "{heading}: {s}");
    }
    // Rows are in section order: to relay (oldest first), then to me, then the missing parent.
    t.keys("jj");
    t.key(KeyCode::Enter, NONE);
    assert!(t.app.popup.is_none());
    assert_eq!(t.focused_pane(), Pane::Tree);
    assert_eq!(t.shown_message_id().as_deref(), Some(v[3].as_str()));
    assert!(t.screen().contains("✉ to you"), "{}", t.screen());
    // Esc closes it without opening anything.
    t.keys("Q");
    t.key(KeyCode::Esc, NONE);
    assert!(t.app.popup.is_none());
    assert_eq!(t.shown_message_id().as_deref(), Some(v[3].as_str()));
}

#[test]
fn s_cycles_the_thread_list_through_the_states_and_shows_it_in_the_title() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    store
        .set_operator_addresses(&["human@desk".into()])
        .unwrap();
    let v = ids(4);
    let text = format!(
        "{}{}",
        env("CLAUDE", "CHATGPT", &v[0], None, &v[1], "BROADCAST"),
        env("CLAUDE", "human@desk", &v[2], None, &v[3], "REQUEST"),
    );
    store.import_text("t", &text, &Default::default()).unwrap();
    let mut t = harness(store, 120, 30);
    assert_eq!(t.thread_count(), 2);
    t.keys("s");
    assert_eq!(t.app.list.state, StateFilter::Only(Section::ToRelay));
    assert_eq!(t.thread_count(), 1);
    assert_eq!(t.app.list.rows[0].summary.id, v[0]);
    // The title says how many of all threads the filter shows.
    assert!(
        t.screen().contains("Threads [to relay] 1 of 2 "),
        "{}",
        t.screen()
    );
    assert!(
        t.status_line().contains("(1 of 2)"),
        "{:?}",
        t.status_line()
    );
    t.keys("s");
    assert_eq!(t.thread_count(), 1);
    assert_eq!(t.app.list.rows[0].summary.id, v[2]);
    assert!(t.screen().contains("Threads [addressed to me] 1 of 2 "));
    // In the narrow list of 80 columns the counts stay whole, the state's name is cut.
    t.act(crosstalk::app::Action::Resize(80, 24));
    let top = t.screen().lines().nth(1).unwrap_or_default().to_string();
    assert!(top.contains(" [addressed to …] 1 of 2 "), "{top}");
    t.act(crosstalk::app::Action::Resize(120, 30));
    // With the text filter too, what both let through.
    t.keys("s");
    t.keys("fzzz");
    let top = t.screen().lines().nth(1).unwrap_or_default().to_string();
    assert!(
        top.contains("[awaiting reply] 0 of 2") && top.contains("filter: zzz"),
        "{top}"
    );
    t.key(KeyCode::Esc, NONE);
    t.keys("s");
    assert_eq!(t.thread_count(), 0);
    assert!(
        t.screen().contains("No thread in this state"),
        "{}",
        t.screen()
    );
    t.keys("ss");
    // After the sections, the archived threads: none yet.
    assert_eq!(t.app.list.state, StateFilter::Archived);
    assert_eq!(t.thread_count(), 0);
    assert!(t.screen().contains("[archived]"), "{}", t.screen());
    t.keys("s");
    assert_eq!(t.app.list.state, StateFilter::All);
    assert_eq!(t.thread_count(), 2);
}

#[test]
fn copy_on_import_relays_exactly_one_new_envelope_for_someone_else() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    store
        .set_operator_addresses(&["human@desk".into()])
        .unwrap();
    let mut t = harness(store, 120, 30);
    t.app.settings.copy_on_import = true;
    let v = ids(6);
    // One new envelope for someone else: copied on and marked relayed.
    t.act(Action::Paste(env(
        "CLAUDE", "CHATGPT", &v[0], None, &v[1], "REQUEST",
    )));
    t.key(KeyCode::Enter, NONE);
    assert!(
        t.status_line()
            .contains("Ready for CHATGPT: paste it there"),
        "{:?}",
        t.status_line()
    );
    assert!(t.copies().pop().unwrap().starts_with("[[CLAUDE→CHATGPT"));
    assert!(
        t.app
            .store
            .delivery(&v[1])
            .unwrap()
            .unwrap()
            .relayed
            .is_some()
    );
    // Addressed to the operator: not copied, and the status says why.
    let before = t.copies().len();
    t.act(Action::Paste(env(
        "CLAUDE",
        "HUMAN@desk",
        &v[2],
        None,
        &v[3],
        "REQUEST",
    )));
    t.key(KeyCode::Enter, NONE);
    assert!(
        t.status_line()
            .contains("Not relayed: the envelope is addressed to you"),
        "{:?}",
        t.status_line()
    );
    assert_eq!(t.copies().len(), before);
    // Two new envelopes: not copied.
    t.act(Action::Paste(format!(
        "{}{}",
        env("A", "B", &v[4], None, &v[5], "BROADCAST"),
        env("A", "B", &v[4], Some(&v[5]), &ids(1)[0], "BROADCAST")
    )));
    t.key(KeyCode::Enter, NONE);
    assert!(
        t.status_line().contains("Not relayed: 2 new envelopes"),
        "{:?}",
        t.status_line()
    );
    assert_eq!(t.copies().len(), before);
}

#[test]
fn the_seeded_demo_shows_every_queue_state_with_ages_from_its_ulids() {
    let mut store = Store::open_in_memory().unwrap();
    let now = jiff::Timestamp::now();
    crosstalk::tui::demo::seed_at(&mut store, now).unwrap();
    let q = store.queue(50).unwrap();
    for s in &q.sections {
        assert!(
            !s.rows.is_empty(),
            "the demo has nothing {}",
            s.section.title()
        );
    }
    // Ages are spread over the last days, none in the future, from the ULID of each id.
    let mut ages = Vec::new();
    for (_, r) in q.rows() {
        let since: jiff::Timestamp = r.since.parse().unwrap();
        // (The draft was written while seeding, just after `now`.)
        assert!(since.as_second() <= now.as_second() + 60, "{r:?}");
        if !r.unsent_draft {
            let t = crosstalk::store::ulid_time(&r.message).unwrap();
            assert_eq!(t.as_millisecond() / 1000, since.as_millisecond() / 1000);
            ages.push(now.as_second() - since.as_second());
        }
    }
    assert!(ages.iter().any(|a| *a < 3600), "{ages:?}");
    assert!(ages.iter().any(|a| *a > 86_400), "{ages:?}");
    // The app shows the ages in the tree: the missed relay's thread is minutes old.
    let mut t = harness(store, 120, 40);
    t.app.fixed_now = Some(now);
    t.keys("s");
    t.keys("sss");
    assert_eq!(t.app.list.state, StateFilter::Only(Section::MissingParent));
    t.key(KeyCode::Enter, NONE);
    let s = t.screen();
    // The tree marks the message whose parent never came, and the list's to-do cell the
    // thread (a missed relay comes before what is to relay or answer there).
    assert!(s.contains("⚠ "), "{s}");
    assert!(t.selected_thread_row().contains('⚠'), "{s}");
    assert!(s.contains("38m") || s.contains("39m"), "{s}");
}

/// The demo's POLL reads as its own CLOSE tells it (CRDT, 2 votes to 1, quorum met): its
/// deadline moves with its votes when the demo's times are moved to now.
#[test]
fn the_demo_poll_tallies_as_its_close_says() {
    let mut store = Store::open_in_memory().unwrap();
    let now = jiff::Timestamp::now();
    crosstalk::tui::demo::seed_at(&mut store, now).unwrap();
    let poll = (store.thread_ids().unwrap().iter())
        .flat_map(|t| store.thread(t).unwrap().unwrap().messages)
        .find(|m| m.envelope.intent() == Some(crosstalk::protocol::Intent::Poll))
        .expect("the demo has a POLL");
    let tally = store.poll_view(poll, now).unwrap().unwrap().tally;
    assert!(tally.quorum_reached, "{tally:?}");
    assert_eq!(tally.leader.as_deref(), Some("CRDT"), "{tally:?}");
    assert!(
        !(tally.targets.iter()).any(|t| t.standing == crosstalk::protocol::poll::Standing::Late),
        "{tally:?}"
    );
}

/// An envelope with the time `at` in its id (`n` tells apart ids of one time).
fn id_at(at: &str, n: u128) -> String {
    let ms = at.parse::<jiff::Timestamp>().unwrap().as_millisecond() as u64;
    ulid::Ulid::from_parts(ms, n).to_string()
}

/// An app over a database whose operator is `kalle` (the desk), with one thread for someone
/// else already selected, watching the clipboard `file`.
fn watching(dir: &std::path::Path, file: &std::path::Path) -> (support::Harness, String) {
    let mut store = store_in(dir);
    store.set_operator_addresses(&["kalle".into()]).unwrap();
    let mut t = harness(store, 120, 40);
    t.app.settings.desk = "kalle".into();
    let v = ids(2);
    t.act(Action::Paste(env(
        "CLAUDE", "CHATGPT", &v[0], None, &v[1], "REQUEST",
    )));
    t.key(KeyCode::Enter, NONE);
    assert_eq!(t.shown_message_id().as_deref(), Some(v[1].as_str()));
    support::watch_file(&mut t, file);
    (t, v[1].clone())
}

/// A watched copy holding an envelope for the operator selects it, as a paste selects what
/// it added: the status line names it and `r` answers it, as the desk, to its sender. Of
/// several in one copy, the newest for the operator is the one, wherever it stands.
#[test]
fn a_watched_envelope_for_the_operator_is_selected_and_r_answers_it() {
    let dir = tempfile::tempdir().unwrap();
    let clip = dir.path().join("clipboard.txt");
    let (mut t, _) = watching(dir.path(), &clip);
    let v = ids(2);
    support::copy_watched(
        &mut t,
        &clip,
        &format!(
            "Gemini says:\n{}",
            env("GEMINI", "KALLE", &v[0], None, &v[1], "REQUEST")
        ),
        &v[1],
    );
    assert_eq!(t.shown_message_id().as_deref(), Some(v[1].as_str()));
    let status = &t.status_line();
    assert!(
        status.contains("1 new message(s) imported")
            && status.contains("Selected, for you: REQUEST GEMINI→KALLE")
            && status.contains("(r answers it)"),
        "{status}"
    );
    t.keys("r");
    let c = t.app.composer.as_ref().expect("the composer");
    assert_eq!(c.form.parent.as_deref(), Some(v[1].as_str()));
    assert_eq!(
        (c.form.from.as_str(), c.form.to.as_str()),
        ("kalle", "GEMINI")
    );
    assert_eq!(c.form.intent, "RESPOND");
    t.key(KeyCode::Esc, NONE);

    // Three in one copy: the newest for kalle first, then one for CHATGPT, then an older one
    // for kalle. The newest for kalle is selected, not the last in the copy.
    let thread = id_at("2025-10-09T16:00:00Z", 1);
    let (newest, other, older) = (
        id_at("2025-10-09T16:30:00Z", 2),
        id_at("2025-10-09T16:40:00Z", 3),
        id_at("2025-10-09T16:10:00Z", 4),
    );
    let copy = [
        env("CLAUDE", "kalle", &thread, None, &newest, "RESPOND"),
        env("CLAUDE", "CHATGPT", &thread, None, &other, "REQUEST"),
        env("GEMINI", "kalle", &thread, None, &older, "REQUEST"),
    ]
    .join("\n");
    support::copy_watched(&mut t, &clip, &copy, &older);
    assert_eq!(
        t.shown_message_id().as_deref(),
        Some(newest.as_str()),
        "{:?}",
        t.status_line()
    );
    t.keys("r");
    let c = t.app.composer.as_ref().expect("the composer");
    assert_eq!(c.form.parent.as_deref(), Some(newest.as_str()));
    assert_eq!(
        (c.form.from.as_str(), c.form.to.as_str()),
        ("kalle", "CLAUDE")
    );
    // A RESPOND is acknowledged.
    assert_eq!(c.form.intent, "ACK");

    // A copy with nothing for the operator leaves the selection alone.
    t.key(KeyCode::Esc, NONE);
    let before = t
        .shown_message_id()
        .expect("the inspector shows the selected envelope");
    let w = ids(2);
    support::copy_watched(
        &mut t,
        &clip,
        &env("CLAUDE", "CHATGPT", &w[0], None, &w[1], "REQUEST"),
        &w[1],
    );
    assert_eq!(t.shown_message_id(), Some(before));
}

/// While the operator types in the composer or has a popup open, a watched envelope for them
/// (or one the hop puts up for someone else) does not move the selection: the status line
/// names it and `a` opens it, named again as they leave.
#[test]
fn a_watched_envelope_does_not_steal_the_selection_from_the_composer_or_a_popup() {
    let dir = tempfile::tempdir().unwrap();
    let clip = dir.path().join("clipboard.txt");
    let (mut t, first) = watching(dir.path(), &clip);
    t.app.settings.copy_on_import = true;

    // In the composer, answering the first message.
    t.keys("r");
    t.keys("Half a repl");
    let v = ids(2);
    support::copy_watched(
        &mut t,
        &clip,
        &env("GEMINI", "kalle", &v[0], None, &v[1], "REQUEST"),
        &v[1],
    );
    let c = t.app.composer.as_ref().expect("still composing");
    assert_eq!(c.form.parent.as_deref(), Some(first.as_str()));
    assert!(c.form.body.contains("Half a repl"), "{}", c.form.body);
    assert_eq!(t.app.selected_id(), Some(first.as_str()));
    let status = &t.status_line();
    assert!(
        status.contains("Arrived for you: REQUEST GEMINI→kalle") && status.contains("(J opens it"),
        "{status}"
    );
    // Typing goes on into the body, `J` included.
    t.keys("y J");
    assert!(
        t.app
            .composer
            .as_ref()
            .unwrap()
            .form
            .body
            .ends_with("Half a reply J")
    );

    // The hop puts an envelope for someone else up, and still leaves the selection alone.
    let w = ids(2);
    support::copy_watched(
        &mut t,
        &clip,
        &env("CLAUDE", "GEMINI", &w[0], None, &w[1], "REQUEST"),
        &w[1],
    );
    assert!(
        t.status_line().contains("Ready for GEMINI"),
        "{:?}",
        t.status_line()
    );
    assert_eq!(t.app.selected_id(), Some(first.as_str()));

    // Leaving the composer names the arrival again after what leaving said.
    t.key(KeyCode::Esc, NONE);
    assert!(!t.composing());
    assert_eq!(t.shown_message_id().as_deref(), Some(first.as_str()));
    let status = &t.status_line();
    assert!(
        status.contains("Arrived for you meanwhile: REQUEST GEMINI→kalle")
            && status.contains("(J opens it)"),
        "{status}"
    );
    t.keys("J");
    assert_eq!(t.shown_message_id().as_deref(), Some(v[1].as_str()));
    assert!(
        t.status_line().contains("(r answers it)"),
        "{:?}",
        t.status_line()
    );
    t.keys("r");
    let c = t.app.composer.as_ref().expect("the composer");
    assert_eq!(c.form.parent.as_deref(), Some(v[1].as_str()));
    assert_eq!(
        (c.form.from.as_str(), c.form.to.as_str()),
        ("kalle", "GEMINI")
    );
    t.key(KeyCode::Esc, NONE);
    // Used: `a` has nothing more to open.
    t.keys("J");
    assert_eq!(t.shown_message_id().as_deref(), Some(v[1].as_str()));
    assert!(
        t.status_line().starts_with("Nothing arrived for you"),
        "{:?}",
        t.status_line()
    );

    // The help screen open: the same.
    t.keys("?");
    assert!(t.app.popup.is_some());
    let x = ids(2);
    support::copy_watched(
        &mut t,
        &clip,
        &env("CHATGPT", "kalle", &x[0], None, &x[1], "BROADCAST"),
        &x[1],
    );
    assert!(t.app.popup.is_some());
    assert_eq!(t.app.selected_id(), Some(v[1].as_str()));
    t.key(KeyCode::Esc, NONE);
    assert!(
        t.status_line()
            .contains("Arrived for you meanwhile: BROADCAST CHATGPT→kalle"),
        "{:?}",
        t.status_line()
    );
    t.keys("J");
    assert_eq!(t.shown_message_id().as_deref(), Some(x[1].as_str()));
}

/// The address book of the POLL flows: ChatGPT's window collapses newlines (fenced) and
/// gets a preamble first; Claude's and Gemini's get the envelope as it is.
fn three_windows() -> crosstalk::contacts::AddressBook {
    use crosstalk::contacts::{AddressBook, Contact};
    AddressBook {
        contacts: vec![
            Contact {
                name: "CHATGPT".into(),
                address: Some("chatgpt://t/x".into()),
                fence: true,
                preamble: Some("You are in a poll relayed by Kalle.".into()),
                ..Default::default()
            },
            Contact {
                name: "CLAUDE".into(),
                address: Some("claude://s/a".into()),
                ..Default::default()
            },
        ],
        fenced_recipients: Vec::new(),
    }
}

const THREE_TARGETS: &str = "meta: routing\nTargets: [claude://s/a, chatgpt://t/x, gemini://g]\n";

/// A received POLL for three targets.
fn poll_for_three(thread: &str, id: &str) -> String {
    format!(
        "[[mistral://m→POLL v1]]\nuser: kalle\nthread: {thread}\nmessage: {id}\n\
         context: cache poll\nintent: POLL\n{THREE_TARGETS}body: |\n  REDIS | MEMCACHED?\n\
         sig: none\n[[END]]\n"
    )
}

/// `y` on a POLL puts it up for its first target and `>` for each next one, each copy made
/// for its window (ChatGPT's fenced, after its preamble the first time it gets anything) with
/// this desk's audit hop; the inspector and the queue say how far it went, and it is relayed
/// once every target had it. A second POLL to the same windows comes without the preamble.
#[test]
fn y_then_gt_puts_a_poll_up_for_each_of_its_targets() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 140, 40);
    t.app.contacts = three_windows();
    t.app.settings.audit_by = Some("desk-kalle".into());
    let v = ids(4);
    t.act(Action::Paste(poll_for_three(&v[0], &v[1])));
    t.key(KeyCode::Enter, NONE);
    assert_eq!(t.shown_message_id().as_deref(), Some(v[1].as_str()));
    t.keys("y");
    let copy = t.copies().pop().unwrap();
    assert!(copy.starts_with("[[mistral://m→POLL v1]]\n"), "{copy}");
    let status = t.status_line();
    assert!(
        status.contains("POLL for claude://s/a (1 of 3): paste it there")
            && status.contains("> puts it up for chatgpt://t/x next"),
        "{status}"
    );
    let line = t.app.inspector.delivery_line.clone().unwrap();
    assert!(line.contains("⇢ to relay"), "{line}");
    assert!(
        line.contains("relayed to 1 of 3 targets (not yet: chatgpt://t/x, gemini://g)"),
        "{line}"
    );

    // ChatGPT's window: fenced, after its preamble.
    t.keys(">");
    let copy = t.copies().pop().unwrap();
    assert!(
        copy.starts_with("You are in a poll relayed by Kalle.\n\n```\n[[mistral://m→POLL v1]]\n"),
        "{copy}"
    );
    assert!(copy.ends_with("[[END]]\n```\n"), "{copy}");
    let status = t.status_line();
    assert!(
        status.contains("POLL for chatgpt://t/x (2 of 3): paste it there, its preamble first")
            && status.contains("> puts it up for gemini://g next"),
        "{status}"
    );
    t.keys("Q");
    assert!(
        t.screen().contains("relayed to 2 of 3 targets"),
        "{}",
        t.screen()
    );
    t.key(KeyCode::Esc, NONE);

    // Gemini's: the last; the POLL is relayed now, and awaits its answers.
    t.keys(">");
    let copy = t.copies().pop().unwrap();
    assert!(copy.starts_with("[[mistral://m→POLL v1]]\n"), "{copy}");
    let status = t.status_line();
    assert!(
        status.contains("POLL for gemini://g (3 of 3)")
            && status.contains("that was its last target"),
        "{status}"
    );
    // Each copy carries the hop of this desk.
    for copy in t.copies() {
        assert!(copy.contains("meta: audit\nReceived-At: "), "{copy}");
        assert!(copy.contains("Received-By: desk-kalle"), "{copy}");
    }
    let d = t.app.store.delivery(&v[1]).unwrap().unwrap();
    assert_eq!(d.state.as_deref(), Some("awaiting"), "{d:?}");
    let line = t.app.inspector.delivery_line.clone().unwrap();
    assert!(
        line.contains("relayed to all 3 targets, the last 0s ago by OSC 52"),
        "{line}"
    );
    assert_eq!(t.copies().len(), 3);
    t.keys(">");
    assert!(
        t.status_line().starts_with("Nothing waits"),
        "{:?}",
        t.status_line()
    );
    assert_eq!(t.copies().len(), 3);

    // The next POLL to the same windows: ChatGPT's had one, so no preamble now.
    t.act(Action::Paste(poll_for_three(&v[2], &v[3])));
    t.key(KeyCode::Enter, NONE);
    t.keys("y>");
    let copy = t.copies().pop().unwrap();
    assert!(copy.starts_with("```\n[[mistral://m→POLL v1]]\n"), "{copy}");
}

/// C-y on a POLL composed here: the same round, first target at once, `>` for the others;
/// the POLL awaits every target's answer, and the inspector says whom it was copied for.
#[test]
fn c_y_on_a_composed_poll_copies_it_for_each_target_in_turn() {
    let mut t = harness(Store::open_in_memory().unwrap(), 140, 40);
    t.app.contacts = three_windows();
    t.keys("n");
    t.keys("REDIS | MEMCACHED?");
    t.key(KeyCode::Tab, NONE);
    t.keys("human://op\nPOLL\n");
    // The intent picker: POLL is the fifth, four steps on from REQUEST.
    for _ in 0..4 {
        t.key(KeyCode::Right, NONE);
    }
    t.key(KeyCode::Enter, NONE);
    t.keys("cache poll");
    t.ctrl('t');
    t.keys("\nTargets: [claude://s/a, chatgpt://t/x, gemini://g]");
    t.ctrl('y');
    assert!(!t.composing(), "{:?}", t.status_line());
    let copy = t.copies().pop().unwrap();
    assert!(copy.starts_with("[[human://op→POLL v1]]\n"), "{copy}");
    let status = t.status_line();
    assert!(
        status.contains("POLL for claude://s/a (1 of 3)")
            && status.contains("> puts it up for chatgpt://t/x next")
            && status.contains("awaiting reply from claude://s/a, chatgpt://t/x, gemini://g"),
        "{status}"
    );
    let id = t.shown_message_id().unwrap();
    let line = t.app.inspector.delivery_line.clone().unwrap();
    assert!(
        line.contains("copied for 1 of 3 targets (not yet: chatgpt://t/x, gemini://g)"),
        "{line}"
    );
    t.keys(">");
    let copy = t.copies().pop().unwrap();
    assert!(
        copy.starts_with("You are in a poll relayed by Kalle.\n\n```\n[[human://op→POLL v1]]"),
        "{copy}"
    );
    t.keys(">");
    assert!(
        t.copies()
            .pop()
            .unwrap()
            .starts_with("[[human://op→POLL v1]]")
    );
    let d = t.app.store.delivery(&id).unwrap().unwrap();
    assert_eq!(d.awaiting_from.len(), 3, "{d:?}");
    assert!(d.targets.iter().all(|t| t.relayed.is_some()), "{d:?}");
    let line = t.app.inspector.delivery_line.clone().unwrap();
    assert!(line.contains("copied for all 3 targets"), "{line}");
}
