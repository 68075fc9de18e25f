//! `parse` and `import` read the same input the same way: each envelope's intent as
//! `parse --json` reads it from the text alone is the intent `import` stores for it in a
//! database that holds nothing before, whatever mix of sessions, threads, parents, intents,
//! reply forms and rejected envelopes the input holds (`protocol::answers` is the rule).

use crosstalk::ids::IdGenerator;
use crosstalk::protocol::{Options, Sessions, extract};
use crosstalk::store::{Outcome, Store};
use proptest::prelude::*;

/// Cases: 128, or `PROPTEST_CASES` for a longer run.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128)
}

/// One envelope of an input, before its ids are made.
#[derive(Debug, Clone)]
struct Spec {
    /// `session: s{n}`, or none.
    session: Option<u8>,
    /// Names a thread (and a message id of its own).
    thread: bool,
    /// Names a message id without a thread.
    message: bool,
    /// Names an earlier envelope's message id (by index, when that one has one) as parent.
    parent: Option<prop::sample::Index>,
    intent: Option<&'static str>,
    /// `response:` instead of `body:`.
    reply_form: bool,
    /// An id that is not one: rejected.
    bad_id: bool,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        prop::option::weighted(0.85, 0u8..3),
        prop::bool::weighted(0.25),
        prop::bool::weighted(0.15),
        prop::option::weighted(0.2, any::<prop::sample::Index>()),
        prop::option::weighted(
            0.4,
            prop::sample::select(vec!["REQUEST", "RESPOND", "ACK", "ANSWER"]),
        ),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.1),
    )
        .prop_map(
            |(session, thread, message, parent, intent, reply_form, bad_id)| Spec {
                session,
                thread,
                message,
                parent,
                intent,
                reply_form,
                bad_id,
            },
        )
}

/// The input's text: each envelope in turn, prose between them.
fn input(specs: &[Spec]) -> String {
    let ids = IdGenerator::new();
    let threads: Vec<String> = (0..3).map(|_| ids.next_id()).collect();
    let mut messages: Vec<Option<String>> = Vec::new();
    let mut text = String::from("Pasted from the chats:\n\n");
    for (n, s) in specs.iter().enumerate() {
        let mut e = format!("[[A{n}→B v1]]\nuser: u\n");
        if let Some(session) = s.session {
            e.push_str(&format!("session: 2025-10-09T16Z s{session}\n"));
        }
        let mut own = None;
        if s.thread {
            let t = &threads[usize::from(s.session.unwrap_or(0))];
            e.push_str(&format!("thread: {t}\n"));
        }
        if s.thread || s.message {
            let id = ids.next_id();
            e.push_str(&format!("message: {id}\n"));
            own = Some(id);
        } else if s.bad_id {
            e.push_str("message: not-an-id\n");
        }
        let named: Vec<&String> = messages.iter().flatten().collect();
        if let (Some(pick), false) = (s.parent, named.is_empty()) {
            e.push_str(&format!("parent: {}\n", pick.get(&named)));
        }
        if let Some(intent) = s.intent {
            e.push_str(&format!("intent: {intent}\n"));
        }
        let key = if s.reply_form { "response" } else { "body" };
        e.push_str(&format!(
            "{key}: |\n  Envelope {n}.\nsig: none\n[[END]]\n\n"
        ));
        text.push_str(&e);
        messages.push(own);
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn parse_reads_the_intent_import_stores(specs in prop::collection::vec(spec(), 1..9)) {
        let text = input(&specs);
        let opts = Options::default();
        let mut sessions = Sessions::default();
        let read: Vec<(u32, Option<String>)> = extract(&text, &opts)
            .envelopes
            .iter()
            .map(|p| (p.span.start_line, sessions.intent(p).map(|i| i.to_string())))
            .collect();
        let mut store = Store::open_in_memory().unwrap();
        let report = store.import_text("paste", &text, &opts).unwrap();
        prop_assert_eq!(report.items.len(), read.len());
        for (item, (line, intent)) in report.items.iter().zip(&read) {
            prop_assert_eq!(item.span.start_line, *line);
            if item.outcome != Outcome::Imported {
                continue;
            }
            let id = item.message.as_deref().unwrap();
            let stored = store.message(id).unwrap().unwrap().intent;
            prop_assert_eq!(&stored, intent, "envelope at line {} of\n{}", line, text);
        }
    }
}
