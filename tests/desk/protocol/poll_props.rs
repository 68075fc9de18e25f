//! Properties of the POLL tally (src/protocol/meta/poll/): any replies, in any order, with
//! hostile META, give a tally whose counts add up and where only targets count.

use crosstalk::protocol::awaiting::same_party;
use crosstalk::protocol::poll::{PollReply, Standing, tally};
use crosstalk::protocol::{Envelope, Header, Intent, MetaBlock};
use proptest::prelude::*;

const TARGETS: [&str; 3] = ["claude", "chatgpt", "gemini"];
const SENDERS: [&str; 5] = ["claude", "CHATGPT", "Gemini", "intruder", "human://op"];
const INTENTS: [&str; 6] = ["RESPOND", "ACK", "NACK", "ERROR", "CLOSE", "REQUEST"];
const BODIES: [&str; 6] = ["A", "b is best", "A or B", "nothing", "ABSTAIN.", ""];

fn poll(quorum: &str, deadline: &str) -> Envelope {
    let mut p = Envelope::new("human://op", "POLL");
    p.headers.push(Header {
        key: "intent".into(),
        value: "POLL".into(),
    });
    p.meta = vec![
        MetaBlock {
            namespace: "routing".into(),
            entries: vec![("Targets".into(), TARGETS.join(", "))],
        },
        MetaBlock {
            namespace: "poll".into(),
            entries: vec![
                ("Quorum".into(), quorum.into()),
                ("Deadline".into(), deadline.into()),
            ],
        },
    ];
    p.body = Some("Choose:\nA | B | ABSTAIN".into());
    p
}

fn reply() -> impl Strategy<Value = PollReply> {
    (
        proptest::sample::select(&SENDERS[..]),
        proptest::option::weighted(0.9, proptest::sample::select(&INTENTS[..])),
        proptest::sample::select(&BODIES[..]),
        proptest::option::of(".{0,12}"),
        proptest::option::weighted(0.9, 0i64..10_000),
    )
        .prop_map(|(s, i, b, vote, secs)| PollReply {
            id: format!("{s}-{secs:?}"),
            sender: s.into(),
            intent: i.map(Intent::parse),
            meta: vote
                .map(|v| {
                    vec![MetaBlock {
                        namespace: "poll".into(),
                        entries: vec![("Vote".into(), v)],
                    }]
                })
                .unwrap_or_default(),
            body: b.into(),
            time: secs.map(|s| jiff::Timestamp::from_second(1_700_000_000 + s).unwrap()),
            by_desk: false,
        })
}

proptest! {
    #[test]
    fn counts_add_up_and_only_targets_count(
        replies in proptest::collection::vec(reply(), 0..12),
        quorum in ".{0,10}",
        deadline in ".{0,24}",
        now in 0i64..20_000,
    ) {
        let p = poll(&quorum, &deadline);
        let now = jiff::Timestamp::from_second(1_700_000_000 + now).unwrap();
        let t = tally(&p, &replies, now).unwrap();
        prop_assert_eq!(t.targets.len(), TARGETS.len());
        let voted = t.targets.iter().filter(|l| l.standing == Standing::Voted).count();
        let counted: usize = t.counts.iter().map(|(_, n)| n).sum();
        prop_assert_eq!(counted, voted);
        prop_assert!(voted <= t.responded);
        prop_assert!(t.needed >= 1 && t.needed <= TARGETS.len());
        prop_assert_eq!(t.quorum_reached, t.responded >= t.needed);
        prop_assert!(!(t.quorum_reached && t.quorum_out_of_reach));
        // Out of reach: a RESPOND now from every target still silent does not reach it; not
        // out of reach while the poll runs: those answers do.
        if !t.expired && !t.quorum_reached {
            let mut all = replies.clone();
            for (i, target) in t.silent.iter().enumerate() {
                all.push(PollReply {
                    id: format!("late-comer-{i}"),
                    sender: target.clone(),
                    intent: Some(Intent::Respond),
                    meta: Vec::new(),
                    body: "A".into(),
                    time: Some(now),
                    by_desk: false,
                });
            }
            let after = tally(&p, &all, now).unwrap();
            prop_assert_eq!(after.quorum_reached, !t.quorum_out_of_reach, "{:?}", t);
        }
        for line in &t.targets {
            if let Some(id) = &line.message {
                let r = replies.iter().find(|r| &r.id == id).unwrap();
                prop_assert!(same_party(&r.sender, &line.target));
            }
            prop_assert_eq!(line.vote.is_some(), line.standing == Standing::Voted);
        }
        // Replies from a non-target change no count (the POLL's sender may close it).
        let targets_only: Vec<PollReply> = replies
            .iter()
            .filter(|r| TARGETS.iter().any(|t| same_party(t, &r.sender)))
            .cloned()
            .collect();
        let mut without = tally(&p, &targets_only, now).unwrap();
        without.closed_by = t.closed_by.clone();
        prop_assert_eq!(&without, &t);
    }

    #[test]
    fn a_later_vote_replaces_an_earlier_one(
        first in proptest::sample::select(&["A", "B", "ABSTAIN"][..]),
        second in proptest::sample::select(&["A", "B", "ABSTAIN"][..]),
        gap in 1i64..1000,
    ) {
        let p = poll("2-of-3", "2100-01-01T00:00Z");
        let r = |vote: &str, secs: i64| PollReply {
            id: vote.into(),
            sender: "claude".into(),
            intent: Some(Intent::Respond),
            meta: Vec::new(),
            body: vote.into(),
            time: Some(jiff::Timestamp::from_second(1_700_000_000 + secs).unwrap()),
            by_desk: false,
        };
        let now = jiff::Timestamp::from_second(1_700_100_000).unwrap();
        // In either order given, the later one counts.
        for replies in [[r(first, 0), r(second, gap)], [r(second, gap), r(first, 0)]] {
            let t = tally(&p, &replies, now).unwrap();
            prop_assert_eq!(t.targets[0].vote.as_deref(), Some(second));
            prop_assert_eq!(t.counts.iter().map(|(_, n)| n).sum::<usize>(), 1);
        }
    }

    #[test]
    fn hostile_meta_never_panics(
        ns in ".{0,8}", key in ".{0,10}", value in ".{0,40}", body in ".{0,60}",
        replies in proptest::collection::vec(reply(), 0..4),
    ) {
        let mut p = poll(&value, &value);
        p.meta.push(MetaBlock { namespace: ns.clone(), entries: vec![(key.clone(), value.clone())] });
        p.meta.push(MetaBlock { namespace: "routing".into(), entries: vec![("Targets".into(), value.clone())] });
        p.body = Some(body);
        let now = jiff::Timestamp::from_second(1_700_000_000).unwrap();
        if let Some(t) = tally(&p, &replies, now) {
            let ids = crosstalk::ids::IdGenerator::new();
            let errors = crosstalk::protocol::poll::timeout_envelopes(&p, &t, &ids, "human://desk");
            let close = crosstalk::protocol::poll::result_envelope(&p, &t, &ids, "human://desk");
            // Whatever the targets are called, each envelope the close writes is one envelope.
            for env in errors.iter().chain([&close]) {
                let text = crosstalk::protocol::render(env);
                let parsed = crosstalk::protocol::extract(&text, &crosstalk::protocol::Options::default());
                prop_assert_eq!(parsed.envelopes.len(), 1, "{}", text);
                prop_assert_eq!(&parsed.envelopes[0].envelope.banner.from, "human://desk");
            }
            let _ = crosstalk::protocol::poll::summary_lines(&t);
            let _ = crosstalk::protocol::poll::time_left_label(&t);
        }
    }
}

/// An option word as models write them (`DEC15`, `OPT2`).
fn option_word() -> impl Strategy<Value = String> {
    "[A-Z]{2,5}[0-9]{1,2}"
}

/// Prose without any option in it: words of letters alone, which no option (it holds a
/// digit) spells in any case.
fn prose() -> impl Strategy<Value = String> {
    proptest::collection::vec("[a-z]{3,9}", 0..6).prop_map(|w| w.join(" "))
}

proptest! {
    #[test]
    fn options_written_in_prose_are_read_exactly(
        options in proptest::collection::btree_set(option_word(), 2..5),
        before in prose(),
        after in prose(),
        how in 0u8..4,
    ) {
        use crosstalk::protocol::poll::reading::read_options;
        let options: Vec<String> = options.into_iter().collect();
        let body = match how {
            0 => format!("{before}\nOptions: {}.\n{after}", options.join(" | ")),
            1 => format!("{before}. Options: {}\n{after}", options.join(", ")),
            2 => format!(
                "{before}\n**Options:**\n{}\n\n{after}",
                options.iter().map(|o| format!("- {o}")).collect::<Vec<_>>().join("\n")
            ),
            _ => format!("{before}\n{}\n{after}", options.join(" | ")),
        };
        let read = read_options(&[], &body);
        prop_assert_eq!(&read.options, &options, "{}", body);
        prop_assert!(read.source.is_some());
    }

    #[test]
    fn a_vote_is_the_option_named_first_and_always_an_option(
        options in proptest::collection::btree_set(option_word(), 2..5),
        pick in any::<proptest::sample::Index>(),
        other in any::<proptest::sample::Index>(),
        before in prose(),
        after in prose(),
        lower in any::<bool>(),
        as_line in any::<bool>(),
        noise in ".{0,80}",
    ) {
        use crosstalk::protocol::poll::reading::read_vote;
        let options: Vec<String> = options.into_iter().collect();
        let chosen = pick.get(&options).clone();
        let second = other.get(&options).clone();
        let written = if lower { chosen.to_lowercase() } else { chosen.clone() };
        let body = if as_line {
            format!("{before}.\nVote: {written}, not {second}\n{after}")
        } else {
            format!("{before} {written} over {second}. {after}")
        };
        let read = read_vote(&[], &body, &options);
        prop_assert_eq!(read.vote.as_deref(), Some(chosen.as_str()), "{}", body);
        // Whatever the text, a vote read is one of the options, spelled as the POLL does.
        let any = read_vote(&[], &noise, &options);
        if let Some(v) = any.vote {
            prop_assert!(options.contains(&v), "{:?}", v);
        }
        prop_assert!(!any.why.is_empty());
    }
}
