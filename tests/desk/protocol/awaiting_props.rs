//! Properties of the awaiting rule (src/protocol/model/awaiting.rs): what a message waits for
//! after any set of replies, in any order.

use crosstalk::protocol::awaiting::{expectation, is_answer, outstanding, same_party};
use crosstalk::protocol::{Intent, MetaBlock};
use proptest::prelude::*;

const INTENTS: [&str; 13] = [
    "REQUEST",
    "RESPOND",
    "ESCALATE",
    "HANDOFF",
    "POLL",
    "ACK",
    "NACK",
    "ERROR",
    "BROADCAST",
    "REVOKE",
    "CLOSE",
    "QUESTION",
    "VOTE",
];
const PARTIES: [&str; 5] = ["claude", "CHATGPT", "gemini", "human://op", "Other"];

fn intent() -> impl Strategy<Value = Option<Intent>> {
    proptest::option::weighted(
        0.9,
        proptest::sample::select(&INTENTS[..]).prop_map(Intent::parse),
    )
}

fn reply() -> impl Strategy<Value = (String, Option<Intent>)> {
    (proptest::sample::select(&PARTIES[..]), intent()).prop_map(|(p, i)| {
        // Senders vary in case: parties compare case-insensitively.
        (
            if p.len() % 2 == 0 {
                p.to_uppercase()
            } else {
                p.to_string()
            },
            i,
        )
    })
}

fn poll_meta() -> impl Strategy<Value = Vec<MetaBlock>> {
    (
        proptest::sample::subsequence(&PARTIES[..], 0..=PARTIES.len()),
        proptest::option::of(0usize..7),
    )
        .prop_map(|(targets, quorum)| {
            let mut m = vec![MetaBlock {
                namespace: "routing".into(),
                entries: vec![("Targets".into(), format!("[{}]", targets.join(", ")))],
            }];
            if let Some(q) = quorum {
                m.push(MetaBlock {
                    namespace: "poll".into(),
                    entries: vec![("Quorum".into(), format!("{q}-of-{}", targets.len()))],
                });
            }
            m
        })
}

proptest! {
    #[test]
    fn replies_only_ever_shrink_the_wait_and_order_does_not_matter(
        i in intent(),
        meta in poll_meta(),
        replies in proptest::collection::vec(reply(), 0..8),
        extra in reply(),
    ) {
        let Some(exp) = expectation(i.as_ref(), "POLL", &meta) else {
            // Only the asking intents wait.
            prop_assert!(!matches!(
                i,
                Some(Intent::Request | Intent::Escalate | Intent::Handoff | Intent::Poll)
            ));
            return Ok(());
        };
        prop_assert!(exp.needed >= 1);
        prop_assert!(exp.targets.is_empty() || exp.needed <= exp.targets.len());
        let before = outstanding(&exp, "POLL", &replies);
        let mut reversed = replies.clone();
        reversed.reverse();
        prop_assert_eq!(&before, &outstanding(&exp, "POLL", &reversed));
        let mut more = replies.clone();
        more.push(extra.clone());
        let after = outstanding(&exp, "POLL", &more);
        match (&before, &after) {
            (None, Some(_)) => prop_assert!(false, "a reply reopened the wait"),
            (Some(b), Some(a)) => {
                prop_assert!(a.needed <= b.needed);
                prop_assert!(a.from.iter().all(|p| b.from.contains(p)));
            }
            _ => {}
        }
        // A reply that is not an answer changes nothing.
        if !is_answer(extra.1.as_ref()) {
            prop_assert_eq!(&before, &after);
        }
        if let Some(o) = &before {
            // Who is awaited is a target that has not answered.
            for p in &o.from {
                if !exp.targets.is_empty() {
                    prop_assert!(exp.targets.contains(p));
                    prop_assert!(!replies.iter().any(|(s, i)| is_answer(i.as_ref()) && same_party(s, p)));
                }
            }
            prop_assert!(o.needed >= 1);
        }
        // For a poll, the wait ends exactly when enough distinct targets answered, or a CLOSE
        // ended it.
        if !exp.targets.is_empty() {
            let answered = exp.targets.iter().filter(|t| {
                replies.iter().any(|(s, i)| is_answer(i.as_ref()) && same_party(s, t))
            }).count();
            let closed = replies.iter().any(|(_, i)| *i == Some(Intent::Close));
            prop_assert_eq!(before.is_none(), closed || answered >= exp.needed);
        }
    }
}
