//! The delivery ledger and the queue on temporary databases: to relay → relayed, addressed to
//! the operator → answered, awaiting by intent (REQUEST, ACK, POLL with targets and quorum),
//! missing parents marked and cleared, times as they arrived (never from ids), relays inferred
//! from the replies they drew, a CLOSE and a HANDOFF ending waits, items settled by hand and
//! threads archived, the state filter of the
//! thread list, and the queue's sections and order.

use crosstalk::ids::IdGenerator;
use crosstalk::store::{Section, StateFilter, Store};
use tempfile::TempDir;

fn store() -> (TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("d.db")).unwrap();
    (dir, s)
}

fn ids(n: usize) -> Vec<String> {
    let g = IdGenerator::new();
    (0..n).map(|_| g.next_id()).collect()
}

/// A v1.1 envelope; `meta` is inserted before the body as written.
fn env(
    from: &str,
    to: &str,
    thread: &str,
    parent: Option<&str>,
    message: &str,
    intent: &str,
    meta: &str,
) -> String {
    let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
    format!(
        "[[{from}→{to} v1]]\nuser: kalle\nsession: 2025-10-09T16Z a7f3d1\nthread: {thread}\n\
         {parent}message: {message}\ncontext: delivery\nintent: {intent}\n{meta}body: |\n  \
         {intent} from {from}\nsig: none\n[[END]]\n"
    )
}

fn import(s: &mut Store, text: &str) {
    let r = s.import_text("<test>", text, &Default::default()).unwrap();
    assert!(
        r.items
            .iter()
            .all(|i| i.outcome != crosstalk::store::Outcome::Rejected),
        "{:?}",
        r.items
    );
}

fn section(s: &Store, which: Section) -> Vec<String> {
    s.queue(100)
        .unwrap()
        .sections
        .into_iter()
        .find(|x| x.section == which)
        .unwrap()
        .rows
        .into_iter()
        .map(|r| r.message)
        .collect()
}

fn state(s: &Store, id: &str) -> Option<String> {
    s.delivery(id).unwrap().unwrap().state
}

#[test]
fn a_received_envelope_for_someone_else_is_to_relay_until_copied_then_relayed() {
    let (_d, mut s) = store();
    s.set_operator_addresses(&["Human@Desk".into()]).unwrap();
    let v = ids(3);
    import(
        &mut s,
        &env("CLAUDE", "CHATGPT", &v[0], None, &v[1], "BROADCAST", ""),
    );
    assert_eq!(state(&s, &v[1]).as_deref(), Some("to_relay"));
    assert_eq!(section(&s, Section::ToRelay), [v[1].clone()]);
    assert!(s.mark_relayed(&v[1], "OSC 52").unwrap());
    let d = s.delivery(&v[1]).unwrap().unwrap();
    assert_eq!(d.state, None, "a relayed BROADCAST leaves nothing to do");
    assert_eq!(d.relayed.as_ref().map(|r| r.1.as_str()), Some("OSC 52"));
    assert!(section(&s, Section::ToRelay).is_empty());
    // Relaying twice records nothing new.
    assert!(!s.mark_relayed(&v[1], "file").unwrap());
}

#[test]
fn addressed_to_me_until_the_operator_composes_a_reply_case_insensitively() {
    let (_d, mut s) = store();
    s.set_operator_addresses(&["human@desk".into()]).unwrap();
    let v = ids(2);
    import(
        &mut s,
        &env("CLAUDE", "HUMAN@DESK", &v[0], None, &v[1], "REQUEST", ""),
    );
    assert_eq!(state(&s, &v[1]).as_deref(), Some("to_me"));
    assert_eq!(section(&s, Section::ToMe), [v[1].clone()]);
    assert!(section(&s, Section::ToRelay).is_empty());
    // Not something to relay: `y` on it records nothing.
    assert!(!s.mark_relayed(&v[1], "OSC 52").unwrap());
    s.create_reply(&v[1], "human@desk", None, "Done.", "kalle")
        .unwrap();
    assert_eq!(state(&s, &v[1]), None);
    assert!(section(&s, Section::ToMe).is_empty());
    // A draft filed and never copied is listed under drafts.
    assert_eq!(section(&s, Section::Drafts).len(), 1);
}

#[test]
fn changing_the_operator_addresses_reclassifies_what_is_stored() {
    let (_d, mut s) = store();
    let v = ids(3);
    import(
        &mut s,
        &env("CLAUDE", "kalle", &v[0], None, &v[1], "REQUEST", ""),
    );
    import(
        &mut s,
        &env("CLAUDE", "kalle", &v[0], None, &v[2], "BROADCAST", ""),
    );
    assert_eq!(state(&s, &v[1]).as_deref(), Some("to_relay"));
    assert!(s.set_operator_addresses(&["KALLE".into()]).unwrap());
    assert_eq!(state(&s, &v[1]).as_deref(), Some("to_me"));
    // Addressed to the operator and asking nothing: read, neither relayed nor answered.
    assert_eq!(state(&s, &v[2]), None);
    assert!(
        !s.set_operator_addresses(&["kalle ".into()]).unwrap(),
        "no change"
    );
    assert!(s.set_operator_addresses(&[]).unwrap());
    assert_eq!(state(&s, &v[1]).as_deref(), Some("to_relay"));
}

#[test]
fn a_request_awaits_an_ack_does_not_and_a_respond_ends_the_wait() {
    let (_d, mut s) = store();
    let v = ids(6);
    let t = &v[0];
    import(
        &mut s,
        &env("CLAUDE", "CHATGPT", t, None, &v[1], "REQUEST", ""),
    );
    import(&mut s, &env("CLAUDE", "CHATGPT", t, None, &v[2], "ACK", ""));
    s.mark_relayed(&v[1], "OSC 52").unwrap();
    s.mark_relayed(&v[2], "OSC 52").unwrap();
    assert_eq!(state(&s, &v[1]).as_deref(), Some("awaiting"));
    assert_eq!(
        s.delivery(&v[1]).unwrap().unwrap().awaiting_from,
        ["CHATGPT"]
    );
    assert_eq!(state(&s, &v[2]), None);
    assert_eq!(section(&s, Section::Awaiting), [v[1].clone()]);
    // An ACK to the request does not answer it; a RESPOND does.
    import(
        &mut s,
        &env("CHATGPT", "CLAUDE", t, Some(&v[1]), &v[3], "ACK", ""),
    );
    assert_eq!(
        s.delivery(&v[1]).unwrap().unwrap().awaiting_from,
        ["CHATGPT"]
    );
    import(
        &mut s,
        &env("CHATGPT", "CLAUDE", t, Some(&v[1]), &v[4], "RESPOND", ""),
    );
    assert!(s.delivery(&v[1]).unwrap().unwrap().awaiting_from.is_empty());
    assert!(section(&s, Section::Awaiting).is_empty());
    // The thread list's awaiting marker followed.
    assert!(
        s.thread_rows("", 10).unwrap()[0]
            .summary
            .awaiting_since
            .is_none()
    );
}

#[test]
fn a_poll_awaits_each_target_until_its_quorum() {
    let (_d, mut s) = store();
    s.set_operator_addresses(&["human@desk".into()]).unwrap();
    let v = ids(6);
    let t = &v[0];
    let meta = "meta: routing\nTargets: [\"claude://s/a\", \"chatgpt://t/x\", \"gemini://g\"]\n\
                meta: poll\nType: consensus\nQuorum: 2-of-3\n";
    // The operator's own poll, filed and copied.
    let text = env("human@desk", "POLL", t, None, &v[1], "POLL", meta);
    let parsed = crosstalk::protocol::extract(&text, &Default::default());
    let e = parsed.envelopes[0].envelope.clone();
    s.file_composed(&e).unwrap();
    assert_eq!(state(&s, &v[1]), None, "not copied yet: it awaits nothing");
    s.mark_copied(&v[1]).unwrap();
    let d = s.delivery(&v[1]).unwrap().unwrap();
    assert_eq!(d.awaiting_from.len(), 3);
    assert_eq!(d.awaiting_needed, Some(2));
    import(
        &mut s,
        &env(
            "claude://s/a",
            "human@desk",
            t,
            Some(&v[1]),
            &v[2],
            "RESPOND",
            "",
        ),
    );
    let d = s.delivery(&v[1]).unwrap().unwrap();
    assert_eq!(d.awaiting_from, ["chatgpt://t/x", "gemini://g"]);
    assert_eq!(d.awaiting_needed, Some(1));
    // A second answer from the same target does not count twice.
    import(
        &mut s,
        &env(
            "CLAUDE://s/a",
            "human@desk",
            t,
            Some(&v[1]),
            &v[3],
            "RESPOND",
            "",
        ),
    );
    assert_eq!(s.delivery(&v[1]).unwrap().unwrap().awaiting_needed, Some(1));
    import(
        &mut s,
        &env(
            "gemini://g",
            "human@desk",
            t,
            Some(&v[1]),
            &v[4],
            "RESPOND",
            "",
        ),
    );
    assert_eq!(state(&s, &v[1]), None, "quorum reached");
}

#[test]
fn a_missing_parent_is_marked_and_cleared_when_the_parent_arrives() {
    let (_d, mut s) = store();
    let v = ids(4);
    let t = &v[0];
    // The reply arrives first: its parent was never relayed.
    import(
        &mut s,
        &env("CHATGPT", "CLAUDE", t, Some(&v[1]), &v[2], "RESPOND", ""),
    );
    assert!(s.delivery(&v[2]).unwrap().unwrap().missing_parent);
    assert_eq!(section(&s, Section::MissingParent), [v[2].clone()]);
    assert_eq!(s.thread_rows("", 10).unwrap()[0].missing_parents, 1);
    let only = s
        .thread_rows_in("", StateFilter::Only(Section::MissingParent), 10)
        .unwrap();
    assert_eq!(only.len(), 1);
    // Then the parent (a REQUEST): the mark goes, and the request is answered already.
    import(
        &mut s,
        &env("CLAUDE", "CHATGPT", t, None, &v[1], "REQUEST", ""),
    );
    assert!(!s.delivery(&v[2]).unwrap().unwrap().missing_parent);
    assert!(section(&s, Section::MissingParent).is_empty());
    assert!(s.thread_rows("", 10).unwrap()[0].missing_parents == 0);
    assert!(
        s.thread_rows_in("", StateFilter::Only(Section::MissingParent), 10)
            .unwrap()
            .is_empty()
    );
    s.mark_relayed(&v[1], "file").unwrap();
    assert_eq!(state(&s, &v[1]), None, "its answer arrived before it");
}

#[test]
fn sections_are_oldest_first_by_arrival_whatever_the_ids_claim_and_filters_pick_threads() {
    let (_d, mut s) = store();
    // ULIDs of three different days, imported newest first: each arrives when imported.
    let day = 86_400_000u64;
    let now = jiff::Timestamp::now().as_millisecond() as u64;
    let at = |ago: u64| ulid::Ulid::from_parts(now - ago * day, 7).to_string();
    let (t1, t2, t3) = (ids(1).remove(0), at(9), at(8));
    let (old, mid, new) = (at(3), at(2), at(1));
    let before = jiff::Timestamp::now();
    import(&mut s, &env("A", "B", &t1, None, &new, "BROADCAST", ""));
    import(&mut s, &env("A", "B", &t2, None, &old, "BROADCAST", ""));
    import(&mut s, &env("A", "B", &t3, None, &mid, "BROADCAST", ""));
    assert_eq!(
        section(&s, Section::ToRelay),
        [new.clone(), old.clone(), mid.clone()]
    );
    // Its time is when it arrived here, not the three days ago its id claims.
    let d = s.delivery(&old).unwrap().unwrap();
    let arrived: jiff::Timestamp = d.sent_at.parse().unwrap();
    assert!(
        arrived
            >= before
                .checked_sub(jiff::SignedDuration::from_secs(1))
                .unwrap(),
        "{d:?}"
    );
    let m = s.message(&old).unwrap().unwrap();
    assert_eq!(m.arrived_at, d.sent_at);
    let claimed: jiff::Timestamp = m.claimed_at.as_deref().unwrap().parse().unwrap();
    assert_eq!(Some(claimed), crosstalk::store::ulid_time(&old));
    s.mark_relayed(&old, "OSC 52").unwrap();
    let relay = s
        .thread_rows_in("", StateFilter::Only(Section::ToRelay), 10)
        .unwrap();
    let mut got: Vec<String> = relay.iter().map(|r| r.summary.id.clone()).collect();
    got.sort();
    let mut want = vec![t1.clone(), t3.clone()];
    want.sort();
    assert_eq!(got, want);
    assert_eq!(s.thread_rows("", 10).unwrap().len(), 3);
    // The filter cycles through every section, the archived threads, and back.
    let mut f = StateFilter::All;
    for _ in 0..=Section::ALL.len() {
        f = f.next();
        assert_ne!(f, StateFilter::All);
    }
    assert_eq!(f, StateFilter::Archived);
    assert_eq!(f.next(), StateFilter::All);
}

/// One thing that changes the ledger.
#[derive(Debug, Clone)]
enum Event {
    /// An envelope arrives: from, to (indexes into `PARTIES`), intent, and the earlier
    /// envelope it answers (an index, taken modulo how many there are), or a parent never
    /// received.
    Arrive(usize, usize, &'static str, Option<usize>),
    /// The operator copies envelope n (modulo) for its recipient.
    Relay(usize),
    /// The operator composes a reply to envelope n, and copies it (or not).
    Reply(usize, bool),
    /// The config names these parties as the operator's addresses.
    Operator(Vec<usize>),
}

const PARTIES: [&str; 3] = ["CLAUDE", "CHATGPT", "human@desk"];

fn event() -> impl proptest::strategy::Strategy<Value = Event> {
    use proptest::prelude::*;
    prop_oneof![
        4 => (
            0..3usize,
            0..3usize,
            proptest::sample::select(vec!["REQUEST", "RESPOND", "ACK", "INFORM"]),
            proptest::option::of(0..50usize),
        )
            .prop_map(|(f, t, i, p)| Event::Arrive(f, t, i, p)),
        2 => (0..50usize).prop_map(Event::Relay),
        1 => (0..50usize, proptest::bool::ANY).prop_map(|(n, c)| Event::Reply(n, c)),
        1 => proptest::collection::vec(0..3usize, 0..3).prop_map(Event::Operator),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(24)
    ))]

    /// Whatever happens to the messages, each one's stored ledger state (what the queue and
    /// the thread list read through their indexes) is what its ledger columns say.
    #[test]
    fn the_stored_ledger_state_always_follows_the_columns(
        events in proptest::collection::vec(event(), 1..30)
    ) {
        let (_d, mut s) = store();
        let fresh = IdGenerator::new();
        let thread = fresh.next_id();
        let mut stored: Vec<String> = Vec::new();
        for e in events {
            match e {
                Event::Arrive(from, to, intent, parent) => {
                    let id = fresh.next_id();
                    let parent = match parent {
                        Some(n) if !stored.is_empty() => stored[n % stored.len()].clone(),
                        Some(_) => fresh.next_id(),
                        None => String::new(),
                    };
                    let parent = (!parent.is_empty()).then_some(parent.as_str());
                    import(
                        &mut s,
                        &env(PARTIES[from], PARTIES[to], &thread, parent, &id, intent, ""),
                    );
                    stored.push(id);
                }
                Event::Relay(n) if !stored.is_empty() => {
                    s.mark_relayed(&stored[n % stored.len()], "test").unwrap();
                }
                Event::Reply(n, copied) if !stored.is_empty() => {
                    let reply = s.create_reply(&stored[n % stored.len()], "human@desk", None, "ok", "kalle")
                        .unwrap();
                    if copied {
                        s.mark_copied(&reply.id).unwrap();
                    }
                }
                Event::Operator(parties) => {
                    let addresses: Vec<String> =
                        parties.iter().map(|p| PARTIES[*p].to_lowercase()).collect();
                    s.set_operator_addresses(&addresses).unwrap();
                }
                _ => {}
            }
            let raw = rusqlite::Connection::open(s.path()).unwrap();
            let wrong: i64 = raw
                .query_row(
                    "SELECT count(*) FROM messages WHERE ledger_state IS NOT CASE
                        WHEN direction = 'received' AND to_me = 0 AND relayed_at IS NULL
                            THEN 'to_relay'
                        WHEN to_me = 1 AND answered_at IS NULL AND (intent IS NULL
                            OR intent IN ('REQUEST', 'POLL', 'ESCALATE', 'HANDOFF'))
                            THEN 'to_me'
                        WHEN awaiting_from IS NOT NULL THEN 'awaiting' END",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            proptest::prop_assert_eq!(wrong, 0);
        }
    }
}

/// The parties of a conversation; the last is the operator.
const VOICES: [&str; 4] = ["claude://s/a", "chatgpt://t/x", "gemini://g", "human@desk"];

/// One envelope of a conversation: from, to (indexes into [`VOICES`], or past them a POLL to
/// the other three), intent, and the envelope it answers (an index into the conversation,
/// before or after it, itself, or none).
type Said = (usize, usize, &'static str, Option<usize>);

fn conversation() -> impl proptest::strategy::Strategy<Value = Vec<Said>> {
    proptest::collection::vec(
        (
            0..4usize,
            0..5usize,
            proptest::sample::select(vec!["REQUEST", "RESPOND", "ACK", "POLL", "INFORM"]),
            proptest::option::weighted(0.8, 0..40usize),
        ),
        1..40,
    )
}

/// The conversation as envelopes of one thread.
fn envelopes(said: &[Said], thread: &str, v: &[String]) -> Vec<String> {
    said.iter()
        .enumerate()
        .map(|(i, (from, to, intent, parent))| {
            let parent = parent.map(|p| v[p % v.len()].as_str());
            let (to, meta) = match VOICES.get(*to) {
                Some(to) => (*to, String::new()),
                None => (
                    "POLL",
                    "meta: routing\nTargets: [\"claude://s/a\", \"chatgpt://t/x\", \"gemini://g\"]\n\
                     meta: poll\nType: consensus\nQuorum: 2-of-3\n"
                        .to_string(),
                ),
            };
            env(VOICES[*from], to, thread, parent, &v[i], intent, &meta)
        })
        .collect()
}

/// Every message's ledger columns, in arrival order.
fn ledger_rows(s: &Store) -> Vec<String> {
    let raw = rusqlite::Connection::open(s.path()).unwrap();
    let mut stmt = raw
        .prepare(
            "SELECT id, awaiting_from, awaiting_needed, missing_parent, to_me, ledger_state,
                    answered_at IS NULL, status
             FROM messages ORDER BY seq",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok(format!(
            "{} {:?} {:?} {} {} {:?} {} {}",
            r.get::<_, String>(0)?,
            r.get::<_, Option<String>>(1)?,
            r.get::<_, Option<i64>>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, i64>(4)?,
            r.get::<_, Option<String>>(5)?,
            r.get::<_, bool>(6)?,
            r.get::<_, String>(7)?,
        ))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(48)
    ))]

    /// A conversation pasted at once leaves the ledger as pasting its envelopes one by one
    /// does: what an import keeps in memory between its envelopes (the parents it stored and
    /// whether they still wait, the ids it stored) never changes what is stored. Replies
    /// arrive before and after their parents, answer POLLs and the operator.
    #[test]
    fn one_paste_of_many_envelopes_stores_the_ledger_of_one_paste_each(said in conversation()) {
        let v = ids(said.len());
        let thread = ids(1).remove(0);
        let texts = envelopes(&said, &thread, &v);
        let (_d1, mut at_once) = store();
        let (_d2, mut one_by_one) = store();
        for s in [&mut at_once, &mut one_by_one] {
            s.set_operator_addresses(&["human@desk".into()]).unwrap();
        }
        at_once.import_text("<test>", &texts.concat(), &Default::default()).unwrap();
        for text in &texts {
            one_by_one.import_text("<test>", text, &Default::default()).unwrap();
        }
        proptest::prop_assert_eq!(ledger_rows(&at_once), ledger_rows(&one_by_one));
    }
}

/// What a composed message reads as once copied: a REQUEST awaits its reply, a RESPOND or an
/// ACK awaits none and reads `sent`, as `show --json` and the tree say; an answer to the
/// REQUEST makes it `answered`.
#[test]
fn a_copied_message_that_awaits_nothing_reads_sent() {
    let (_d, mut s) = store();
    let v = ids(6);
    let t = &v[0];
    let file = |s: &mut Store, text: &str| {
        let parsed = crosstalk::protocol::extract(text, &Default::default());
        s.file_composed(&parsed.envelopes[0].envelope).unwrap();
    };
    file(
        &mut s,
        &env("kalle", "CLAUDE", t, None, &v[1], "REQUEST", ""),
    );
    file(
        &mut s,
        &env("kalle", "CLAUDE", t, None, &v[2], "RESPOND", ""),
    );
    file(&mut s, &env("kalle", "CLAUDE", t, None, &v[3], "ACK", ""));
    let status = |s: &Store, id: &str| s.message(id).unwrap().unwrap().status;
    assert_eq!(status(&s, &v[2]), "draft");
    for id in &v[1..4] {
        s.mark_copied(id).unwrap();
    }
    assert_eq!(status(&s, &v[1]), "awaiting_reply");
    assert_eq!(status(&s, &v[2]), "sent");
    assert_eq!(status(&s, &v[3]), "sent");
    let tree = s.thread_outline(t).unwrap().unwrap();
    let row = |id: &str| {
        tree.rows
            .iter()
            .find(|r| r.id == id)
            .unwrap()
            .status
            .clone()
    };
    assert_eq!(row(&v[1]), "awaiting_reply");
    assert_eq!(row(&v[2]), "sent");
    import(
        &mut s,
        &env("CLAUDE", "kalle", t, Some(&v[1]), &v[4], "RESPOND", ""),
    );
    assert_eq!(status(&s, &v[1]), "answered");
}

/// A message relayed by copying, then delivered over HTTP (a peer took it): the ledger says
/// the delivery, time and method, not the first copy; a delivery first is recorded as any
/// relay is, and a message addressed to the operator is not relayed by either.
#[test]
fn a_later_http_delivery_is_the_relay_on_record() {
    let (_d, mut s) = store();
    s.set_operator_addresses(&["human@desk".into()]).unwrap();
    let v = ids(4);
    let t = &v[0];
    import(
        &mut s,
        &env("CLAUDE", "CHATGPT", t, None, &v[1], "REQUEST", ""),
    );
    import(
        &mut s,
        &env("CLAUDE", "GEMINI", t, None, &v[2], "REQUEST", ""),
    );
    import(
        &mut s,
        &env("CLAUDE", "human@desk", t, None, &v[3], "REQUEST", ""),
    );
    let how = |s: &Store, id: &str| s.delivery(id).unwrap().unwrap().relayed.map(|r| r.1);
    assert!(s.mark_relayed(&v[1], "system clipboard").unwrap());
    assert!(!s.mark_delivered(&v[1], "http").unwrap(), "relayed before");
    assert_eq!(how(&s, &v[1]).as_deref(), Some("http"));
    assert_ne!(state(&s, &v[1]).as_deref(), Some("to_relay"));
    assert!(s.mark_delivered(&v[2], "http").unwrap(), "waiting");
    assert_eq!(how(&s, &v[2]).as_deref(), Some("http"));
    assert!(!s.mark_delivered(&v[3], "http").unwrap());
    assert_eq!(how(&s, &v[3]), None);
    assert_eq!(state(&s, &v[3]).as_deref(), Some("to_me"));
}

/// What the ledger infers from what arrived: a message answered by its recipient's reply was
/// carried (to relay no more, the relay told as inferred), in either order of arrival; the
/// sender's own follow-up proves nothing.
#[test]
fn a_reply_from_the_other_side_shows_its_parent_was_carried() {
    let (_d, mut s) = store();
    let v = ids(5);
    import(
        &mut s,
        &env("CLAUDE", "CHATGPT", &v[0], None, &v[1], "REQUEST", ""),
    );
    // Claude's own follow-up is no evidence that ChatGPT got it.
    import(
        &mut s,
        &env(
            "CLAUDE",
            "CHATGPT",
            &v[0],
            Some(&v[1]),
            &v[2],
            "BROADCAST",
            "",
        ),
    );
    assert_eq!(state(&s, &v[1]).as_deref(), Some("to_relay"));
    import(
        &mut s,
        &env(
            "CHATGPT",
            "CLAUDE",
            &v[0],
            Some(&v[1]),
            &v[3],
            "RESPOND",
            "",
        ),
    );
    let d = s.delivery(&v[1]).unwrap().unwrap();
    assert_eq!(d.state, None, "carried and answered: {d:?}");
    assert_eq!(
        d.relayed.map(|r| r.1).as_deref(),
        Some("inferred from CHATGPT's reply")
    );
    assert!(!section(&s, Section::ToRelay).contains(&v[1]));
    // The reply first, its parent after: the same.
    let w = ids(3);
    import(
        &mut s,
        &env("GEMINI", "CLAUDE", &w[0], Some(&w[1]), &w[2], "RESPOND", ""),
    );
    import(
        &mut s,
        &env("CLAUDE", "GEMINI", &w[0], None, &w[1], "REQUEST", ""),
    );
    let d = s.delivery(&w[1]).unwrap().unwrap();
    assert_eq!(d.state, None, "{d:?}");
    assert_eq!(
        d.relayed.map(|r| r.1).as_deref(),
        Some("inferred from GEMINI's reply")
    );
}

/// A CLOSE ends every wait of its thread, not only of the message it answers; a HANDOFF's
/// wait ends once its new owner writes in the thread.
#[test]
fn a_close_ends_every_wait_of_its_thread_and_a_handoff_ends_when_its_owner_writes() {
    let (_d, mut s) = store();
    let v = ids(6);
    let text = [
        env("CLAUDE", "CHATGPT", &v[0], None, &v[1], "REQUEST", ""),
        env(
            "CLAUDE",
            "CHATGPT",
            &v[0],
            Some(&v[1]),
            &v[2],
            "REQUEST",
            "",
        ),
    ]
    .concat();
    import(&mut s, &text);
    for m in [&v[1], &v[2]] {
        s.mark_relayed(m, "file").unwrap();
        assert_eq!(state(&s, m).as_deref(), Some("awaiting"));
    }
    import(
        &mut s,
        &env("CHATGPT", "CLAUDE", &v[0], Some(&v[2]), &v[3], "CLOSE", ""),
    );
    assert_eq!(state(&s, &v[1]), None, "the CLOSE ends the first wait too");
    assert_eq!(state(&s, &v[2]), None);
    assert!(section(&s, Section::Awaiting).is_empty());

    let w = ids(4);
    import(
        &mut s,
        &env("CLAUDE", "GEMINI", &w[0], None, &w[1], "HANDOFF", ""),
    );
    s.mark_relayed(&w[1], "file").unwrap();
    assert_eq!(state(&s, &w[1]).as_deref(), Some("awaiting"));
    // Someone else writing in the thread ends nothing; the new owner writing does, whatever
    // message it answers.
    import(
        &mut s,
        &env(
            "CLAUDE",
            "GEMINI",
            &w[0],
            Some(&w[1]),
            &w[2],
            "BROADCAST",
            "",
        ),
    );
    assert_eq!(state(&s, &w[1]).as_deref(), Some("awaiting"));
    import(
        &mut s,
        &env("GEMINI", "CLAUDE", &w[0], Some(&w[2]), &w[3], "ACK", ""),
    );
    assert_eq!(state(&s, &w[1]), None, "its new owner wrote in the thread");
}

/// The operator settles any queue item by hand, and undoes it; archives a thread, which
/// comes back when something new arrives in it.
#[test]
fn queue_items_are_settled_by_hand_and_threads_archived() {
    let (_d, mut s) = store();
    s.set_operator_addresses(&["human@desk".into()]).unwrap();
    let v = ids(4);
    import(
        &mut s,
        &env("CLAUDE", "human@desk", &v[0], None, &v[1], "REQUEST", ""),
    );
    assert_eq!(section(&s, Section::ToMe), [v[1].clone()]);
    assert!(s.settle(&v[1], crosstalk::store::Settled::Done).unwrap());
    assert!(
        !s.settle(&v[1], crosstalk::store::Settled::Dismissed)
            .unwrap(),
        "once"
    );
    assert!(section(&s, Section::ToMe).is_empty());
    let d = s.delivery(&v[1]).unwrap().unwrap();
    assert_eq!(d.settled.map(|x| x.1).as_deref(), Some("done"));
    assert_eq!(s.thread_rows("", 10).unwrap()[0].to_me, 0);
    assert!(s.unsettle(&v[1]).unwrap());
    assert_eq!(section(&s, Section::ToMe), [v[1].clone()]);
    assert!(
        s.settle(
            "01ZZZZZZZZZZZZZZZZZZZZZZZZ",
            crosstalk::store::Settled::Done
        )
        .is_err()
    );

    assert!(s.archive_thread(&v[0], true).unwrap());
    assert!(
        s.thread_rows("", 10).unwrap().is_empty(),
        "archived: out of the list"
    );
    let archived = s.thread_rows_in("", StateFilter::Archived, 10).unwrap();
    assert_eq!(archived.len(), 1);
    assert!(archived[0].summary.archived_at.is_some());
    // Its queue item stays: archiving hides a thread, it settles nothing.
    assert_eq!(section(&s, Section::ToMe), [v[1].clone()]);
    // Something new in it brings it back, as mail does.
    import(
        &mut s,
        &env(
            "CLAUDE",
            "human@desk",
            &v[0],
            Some(&v[1]),
            &v[2],
            "BROADCAST",
            "",
        ),
    );
    assert_eq!(s.thread_rows("", 10).unwrap().len(), 1);
    assert!(s.archive_thread(&v[0], true).unwrap());
    assert!(s.archive_thread(&v[0], false).unwrap());
    assert_eq!(s.thread_rows("", 10).unwrap().len(), 1);
    assert!(
        s.archive_thread("01ZZZZZZZZZZZZZZZZZZZZZZZZ", true)
            .is_err()
    );
}

/// The sections a message is said to be in are those the queue lists it under: one, two (a
/// reply to relay whose parent never came), none (settled, or needing nothing), a filed
/// envelope never copied among the drafts; no such message is `None`.
#[test]
fn a_messages_sections_are_those_the_queue_lists_it_under() {
    let (_d, mut s) = store();
    s.set_operator_addresses(&["human@desk".into()]).unwrap();
    let v = ids(8);
    let text = [
        env("CLAUDE", "CHATGPT", &v[0], None, &v[1], "REQUEST", ""),
        env("CLAUDE", "human@desk", &v[2], None, &v[3], "REQUEST", ""),
        env(
            "CHATGPT",
            "GEMINI",
            &v[4],
            Some(&v[7]),
            &v[5],
            "RESPOND",
            "",
        ),
        env("CLAUDE", "human@desk", &v[2], Some(&v[3]), &v[6], "ACK", ""),
    ]
    .concat();
    import(&mut s, &text);
    let filed = s.new_id();
    let draft = env(
        "human@desk",
        "CLAUDE",
        &v[2],
        Some(&v[3]),
        &filed,
        "RESPOND",
        "",
    );
    let parsed = crosstalk::protocol::extract(&draft, &Default::default());
    s.file_composed(&parsed.envelopes[0].envelope).unwrap();
    let listed = |s: &Store, id: &str| -> Vec<Section> {
        let q = s.queue(100).unwrap();
        (q.sections.iter())
            .filter(|x| x.rows.iter().any(|r| r.message == id))
            .map(|x| x.section)
            .collect()
    };
    let mut seen = std::collections::BTreeSet::new();
    for id in [&v[1], &v[3], &v[5], &v[6], &filed] {
        let sections = s.queue_sections(id).unwrap().unwrap();
        assert_eq!(sections, listed(&s, id), "{id}");
        seen.insert(sections.len());
    }
    assert_eq!(
        s.queue_sections(&v[5]).unwrap().unwrap(),
        [Section::ToRelay, Section::MissingParent]
    );
    assert_eq!(
        s.queue_sections(&filed).unwrap().unwrap(),
        [Section::Drafts]
    );
    assert_eq!(seen, [0, 1, 2].into(), "an ACK for me is in none");
    // Settled, in none; undone, back in both.
    s.settle(&v[5], crosstalk::store::Settled::Dismissed)
        .unwrap();
    assert_eq!(s.queue_sections(&v[5]).unwrap().unwrap(), []);
    assert_eq!(listed(&s, &v[5]), []);
    s.settle(&filed, crosstalk::store::Settled::Dismissed)
        .unwrap();
    assert_eq!(s.queue_sections(&filed).unwrap().unwrap(), []);
    assert!(s.unsent_messages(10).unwrap().is_empty());
    s.unsettle(&v[5]).unwrap();
    assert_eq!(s.queue_sections(&v[5]).unwrap().unwrap().len(), 2);
    // Any case of an id, as ids are compared; no message, `None`.
    assert!(s.queue_sections(&v[1].to_lowercase()).unwrap().is_some());
    assert_eq!(
        s.queue_sections("01ZZZZZZZZZZZZZZZZZZZZZZZZ").unwrap(),
        None
    );
}

/// The META of a POLL to three windows.
const THREE_TARGETS: &str =
    "meta: routing\nTargets: [\"claude://s/a\", \"chatgpt://t/x\", \"gemini://g\"]\n";

/// Who of `id`'s targets it went to, and how.
fn carried(s: &Store, id: &str) -> Vec<(String, Option<String>)> {
    s.delivery(id)
        .unwrap()
        .unwrap()
        .targets
        .into_iter()
        .map(|t| (t.target, t.relayed.map(|r| r.1)))
        .collect()
}

/// A POLL goes to each of its targets: it is relayed once it went to every one of them, each
/// copy recorded with its own method; a second copy to a target changes nothing, and a party
/// that is no target is no copy of it.
#[test]
fn a_poll_is_relayed_once_it_went_to_every_target() {
    let (_d, mut s) = store();
    s.set_operator_addresses(&["human@desk".into()]).unwrap();
    let v = ids(2);
    import(
        &mut s,
        &env("CLAUDE", "POLL", &v[0], None, &v[1], "POLL", THREE_TARGETS),
    );
    assert_eq!(
        s.waiting_for(&v[1])
            .unwrap()
            .iter()
            .map(|w| w.to.as_str())
            .collect::<Vec<_>>(),
        ["claude://s/a", "chatgpt://t/x", "gemini://g"]
    );
    let r = s.mark_relayed_to(&v[1], "claude://s/a", "OSC 52").unwrap();
    assert!(r.newly);
    assert_eq!(r.carried.map(|c| (c.to, c.of)), Some((1, 3)));
    assert_eq!(state(&s, &v[1]).as_deref(), Some("to_relay"));
    // The same window again, a stranger: nothing new.
    assert!(
        !s.mark_relayed_to(&v[1], "CLAUDE://s/a", "file")
            .unwrap()
            .newly
    );
    assert!(!s.mark_relayed_to(&v[1], "mistral", "file").unwrap().newly);
    s.mark_relayed_to(&v[1], "chatgpt://t/x", "system clipboard")
        .unwrap();
    // The queue says how far it went.
    let q = s.queue(10).unwrap();
    let row = q.rows().find(|(_, r)| r.message == v[1]).unwrap();
    assert_eq!(row.0, Section::ToRelay);
    assert_eq!(row.1.carried.map(|c| (c.to, c.of)), Some((2, 3)));
    // What is left for `>`: the one window that has not had it.
    let left: Vec<String> = s
        .waiting_for(&v[1])
        .unwrap()
        .into_iter()
        .map(|w| w.to)
        .collect();
    assert_eq!(left, ["gemini://g"]);
    let r = s.mark_relayed_to(&v[1], "gemini://g", "OSC 52").unwrap();
    assert_eq!(r.carried.map(|c| (c.to, c.of)), Some((3, 3)));
    let d = s.delivery(&v[1]).unwrap().unwrap();
    assert_ne!(d.state.as_deref(), Some("to_relay"), "{d:?}");
    assert_eq!(d.relayed.map(|r| r.1).as_deref(), Some("OSC 52"));
    assert_eq!(
        carried(&s, &v[1]),
        [
            ("claude://s/a".to_string(), Some("OSC 52".to_string())),
            (
                "chatgpt://t/x".to_string(),
                Some("system clipboard".to_string())
            ),
            ("gemini://g".to_string(), Some("OSC 52".to_string())),
        ]
    );
    // Every window had it: carried anew, it goes to all of them again.
    assert_eq!(s.waiting_for(&v[1]).unwrap().len(), 3);
    // Any other message goes to its recipient, once, as before.
    let w = ids(2);
    import(
        &mut s,
        &env(
            "CLAUDE",
            "CHATGPT",
            &w[0],
            None,
            &w[1],
            "REQUEST",
            THREE_TARGETS,
        ),
    );
    let to: Vec<String> = s
        .waiting_for(&w[1])
        .unwrap()
        .into_iter()
        .map(|w| w.to)
        .collect();
    assert_eq!(to, ["CHATGPT"]);
    let r = s.mark_relayed_to(&w[1], "whoever", "OSC 52").unwrap();
    assert!(r.newly && r.carried.is_none());
    assert!(s.delivery(&w[1]).unwrap().unwrap().targets.is_empty());
}

/// A reply to a POLL shows that its sender's window had the POLL, and no other: the POLL
/// stays to relay for the targets that did not answer, in either order of arrival. A reply
/// from a party it does not target shows nothing.
#[test]
fn an_answer_to_a_poll_shows_only_its_target_had_it() {
    let (_d, mut s) = store();
    let v = ids(5);
    import(
        &mut s,
        &env("CLAUDE", "POLL", &v[0], None, &v[1], "POLL", THREE_TARGETS),
    );
    let answer = |from: &str, id: &str| env(from, "CLAUDE", &v[0], Some(&v[1]), id, "RESPOND", "");
    import(&mut s, &answer("CHATGPT://t/x", &v[2]));
    import(&mut s, &answer("mistral://m", &v[3]));
    assert_eq!(state(&s, &v[1]).as_deref(), Some("to_relay"));
    assert_eq!(
        carried(&s, &v[1]),
        [
            ("claude://s/a".to_string(), None),
            (
                "chatgpt://t/x".to_string(),
                Some("inferred from CHATGPT://t/x's reply".to_string())
            ),
            ("gemini://g".to_string(), None),
        ]
    );
    // Its sender is no window it goes to; the two left are carried by hand.
    let left: Vec<String> = s
        .waiting_for(&v[1])
        .unwrap()
        .into_iter()
        .map(|w| w.to)
        .collect();
    assert_eq!(left, ["claude://s/a", "gemini://g"]);
    s.mark_relayed_to(&v[1], "claude://s/a", "OSC 52").unwrap();
    import(&mut s, &answer("gemini://g", &v[4]));
    let d = s.delivery(&v[1]).unwrap().unwrap();
    assert_eq!(
        d.relayed.map(|r| r.1).as_deref(),
        Some("inferred from gemini://g's reply")
    );
    assert_ne!(d.state.as_deref(), Some("to_relay"));

    // The answers first, the POLL after: the same.
    let w = ids(4);
    let answer = |from: &str, id: &str| env(from, "GEMINI", &w[0], Some(&w[1]), id, "RESPOND", "");
    import(&mut s, &answer("claude://s/a", &w[2]));
    import(&mut s, &answer("gemini://g", &w[3]));
    import(
        &mut s,
        &env(
            "gemini://g",
            "POLL",
            &w[0],
            None,
            &w[1],
            "POLL",
            THREE_TARGETS,
        ),
    );
    // Its sender's own answer shows nothing: Gemini wrote it, and its window is no target.
    assert_eq!(state(&s, &w[1]).as_deref(), Some("to_relay"));
    assert_eq!(
        carried(&s, &w[1])
            .iter()
            .map(|(t, how)| (t.as_str(), how.is_some()))
            .collect::<Vec<_>>(),
        [("claude://s/a", true), ("chatgpt://t/x", false)]
    );
}

/// The first envelope a window gets comes with its contact's preamble: a POLL put up for a
/// target counts as carried to that target's window, not to the banner's `POLL`.
#[test]
fn a_poll_put_up_for_a_target_counts_as_carried_to_its_window() {
    use crosstalk::contacts::{AddressBook, Contact};
    use crosstalk::transport::route::{self, Carrier, HopPlan};
    let (_d, mut s) = store();
    let book = AddressBook {
        contacts: vec![Contact {
            name: "CHATGPT".into(),
            address: Some("chatgpt://t/x".into()),
            fence: true,
            preamble: Some("Answer in envelopes.".into()),
            ..Default::default()
        }],
        fenced_recipients: Vec::new(),
    };
    let carrier = Carrier::now(&book, None);
    let v = ids(4);
    import(
        &mut s,
        &env("CLAUDE", "POLL", &v[0], None, &v[1], "POLL", THREE_TARGETS),
    );
    let Some(HopPlan::Relay { ready, next }) = route::put_up(&s, &v[1], None, &carrier).unwrap()
    else {
        panic!("not put up");
    };
    assert_eq!(ready.to, "claude://s/a");
    assert_eq!(ready.turn.map(|t| (t.n, t.of)), Some((1, 3)));
    assert!(!ready.fenced && !ready.preamble, "{ready:?}");
    assert_eq!(
        next.iter().map(|w| w.to.as_str()).collect::<Vec<_>>(),
        ["chatgpt://t/x", "gemini://g"]
    );
    // ChatGPT's window by its address: fenced, after its preamble.
    let Some(HopPlan::Relay { ready, next }) =
        route::put_up(&s, &v[1], Some("chatgpt://t/x"), &carrier).unwrap()
    else {
        panic!("not put up");
    };
    assert!(next.is_empty());
    assert_eq!(ready.turn.map(|t| (t.n, t.of)), Some((2, 3)));
    assert!(ready.fenced && ready.preamble, "{ready:?}");
    assert!(
        ready
            .text
            .starts_with("Answer in envelopes.\n\n```\n[[CLAUDE→POLL v1]]")
    );
    s.mark_relayed_to(&v[1], "chatgpt://t/x", "OSC 52").unwrap();
    // The next envelope for that window comes without it.
    import(
        &mut s,
        &env("CLAUDE", "chatgpt://t/x", &v[2], None, &v[3], "REQUEST", ""),
    );
    let m = s.message(&v[3]).unwrap().unwrap();
    let ready = route::for_recipient(&s, &m, &carrier).unwrap();
    assert!(ready.fenced && !ready.preamble, "{ready:?}");
}

/// A message answered a little later in the same paste is stored relayed (inferred from the
/// answer), as it is when the two come in two pastes: the ledger is the same either way.
#[test]
fn a_paste_and_the_same_envelopes_one_at_a_time_give_the_same_ledger() {
    let v = ids(7);
    let envs = [
        env("CLAUDE", "CHATGPT", &v[0], None, &v[1], "REQUEST", ""),
        env(
            "CHATGPT",
            "CLAUDE",
            &v[0],
            Some(&v[1]),
            &v[2],
            "RESPOND",
            "",
        ),
        env(
            "CLAUDE",
            "CHATGPT",
            &v[0],
            Some(&v[2]),
            &v[3],
            "REQUEST",
            "",
        ),
        env(
            "CLAUDE",
            "CHATGPT",
            &v[0],
            Some(&v[3]),
            &v[4],
            "BROADCAST",
            "",
        ),
        env("CHATGPT", "CLAUDE", &v[0], Some(&v[4]), &v[5], "ACK", ""),
    ];
    let ledger = |s: &Store| -> Vec<(Option<String>, Option<String>)> {
        v[1..6]
            .iter()
            .map(|id| {
                let d = s.delivery(id).unwrap().unwrap();
                (d.state, d.relayed.map(|r| r.1))
            })
            .collect()
    };
    let (_a, mut at_once) = store();
    import(&mut at_once, &envs.concat());
    let (_b, mut one_by_one) = store();
    for e in &envs {
        import(&mut one_by_one, e);
    }
    assert_eq!(ledger(&at_once), ledger(&one_by_one));
    let l = ledger(&at_once);
    assert_eq!(l[0].1.as_deref(), Some("inferred from CHATGPT's reply"));
    // Claude's own follow-up proves nothing: the REQUEST it follows was answered by ChatGPT.
    assert_eq!(l[2].1.as_deref(), None, "{l:?}");
    assert_eq!(l[2].0.as_deref(), Some("to_relay"));
}

/// The same for a v1.0 conversation, whose places the import infers: in one paste, or one
/// envelope at a time, or into a database holding its start already.
#[test]
fn a_v10_conversation_gives_the_same_ledger_however_it_is_pasted() {
    let turns = [
        ("CLAUDE", "CHATGPT", "intent: REQUEST\nbody: |\n  one?"),
        ("CHATGPT", "CLAUDE", "response: |\n  two"),
        ("CLAUDE", "CHATGPT", "intent: REQUEST\nbody: |\n  three?"),
        ("CLAUDE", "CHATGPT", "intent: BROADCAST\nbody: |\n  four"),
        ("CHATGPT", "CLAUDE", "response: |\n  five"),
    ];
    let text: Vec<String> = turns
        .iter()
        .map(|(f, t, b)| format!("[[{f}→{t} v1]]\nsession: s-v10\n{b}\n[[END]]\n"))
        .collect();
    let states = |s: &Store| -> Vec<(Option<String>, Option<String>)> {
        let thread = s.thread_rows("", 1).unwrap()[0].summary.id.clone();
        // In tree order, the same for every way of pasting.
        let view = s.thread(&thread).unwrap().unwrap();
        view.messages
            .iter()
            .map(|m| {
                let d = s.delivery(&m.id).unwrap().unwrap();
                (d.state, d.relayed.map(|r| r.1))
            })
            .collect()
    };
    let (_a, mut at_once) = store();
    import(&mut at_once, &text.concat());
    let (_b, mut one_by_one) = store();
    for t in &text {
        import(&mut one_by_one, t);
    }
    let (_c, mut halves) = store();
    import(&mut halves, &text[..2].concat());
    import(&mut halves, &text[2..].concat());
    let want = states(&one_by_one);
    assert_eq!(states(&at_once), want);
    assert_eq!(states(&halves), want);
    assert!(
        want.iter()
            .any(|(_, r)| r.as_deref() == Some("inferred from CHATGPT's reply")),
        "{want:?}"
    );
}
