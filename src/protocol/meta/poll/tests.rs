use super::*;
use crate::ids::IdGenerator;
use crate::protocol::namespaces;
use crate::protocol::{Options, extract};

const POLL: &str = "[[human://alice→POLL v1]]
user: alice
session: 2025-10-09T16Z abc123
thread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K
message: 01J9J3D3M6A4M3WQX8G1ZQ0S7M
intent: POLL
meta: routing
Targets: [\"claude://s/a\", \"chatgpt://t/x\", \"gemini://g\"]
meta: poll
Type: consensus
Quorum: 2-of-3
Deadline: 2025-10-09T18:00Z
body: |
  Which store should we use?
  SQLITE | FILES | ABSTAIN?
sig: none
[[END]]
";

fn poll() -> Envelope {
    extract(POLL, &Options::default()).envelopes[0]
        .envelope
        .clone()
}

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn reply(sender: &str, intent: &str, body: &str, time: &str) -> PollReply {
    PollReply {
        id: format!("id-{sender}-{time}"),
        sender: sender.into(),
        intent: (!intent.is_empty()).then(|| Intent::parse(intent)),
        meta: Vec::new(),
        body: body.into(),
        time: Some(at(time)),
        by_desk: false,
    }
}

fn meta(ns: &str, k: &str, v: &str) -> MetaBlock {
    MetaBlock {
        namespace: ns.into(),
        entries: vec![(k.into(), v.into())],
    }
}

#[test]
fn options_come_from_the_body_line_or_meta() {
    assert_eq!(options(&poll()), ["SQLITE", "FILES", "ABSTAIN"]);
    let mut p = poll();
    p.body = Some("Vote: A | B | ABSTAIN\nthanks | bye now".into());
    assert_eq!(options(&p), ["A", "B", "ABSTAIN"]);
    p.body = Some("no options | here, really".into());
    assert!(options(&p).is_empty());
    p.meta.push(meta("poll", "Options", "x, y"));
    assert_eq!(options(&p), ["x", "y"]);
}

#[test]
fn a_two_of_three_poll_tallies_votes_and_quorum() {
    let replies = [
        reply(
            "claude://s/a",
            "RESPOND",
            "I vote sqlite.\nBecause.",
            "2025-10-09T16:10:00Z",
        ),
        reply(
            "CHATGPT://t/x",
            "RESPOND",
            "Files, clearly",
            "2025-10-09T16:20:00Z",
        ),
    ];
    let t = tally(&poll(), &replies, at("2025-10-09T17:00:00Z")).unwrap();
    assert_eq!(t.needed, 2);
    assert_eq!(t.responded, 2);
    assert!(t.quorum_reached);
    assert_eq!(t.targets[0].vote.as_deref(), Some("SQLITE"));
    assert_eq!(t.targets[1].vote.as_deref(), Some("FILES"));
    assert_eq!(t.targets[2].standing, Standing::Silent);
    assert_eq!(t.silent, ["gemini://g"]);
    assert_eq!(
        t.counts,
        [
            ("SQLITE".into(), 1),
            ("FILES".into(), 1),
            ("ABSTAIN".into(), 0)
        ]
    );
    assert_eq!(t.leader, None);
    assert!(!t.expired);
    assert_eq!(t.seconds_left, Some(3600));
    assert_eq!(time_left_label(&t), "1h 0m left");
}

#[test]
fn vote_key_wins_and_the_first_option_named_counts() {
    let mut r = reply(
        "claude://s/a",
        "RESPOND",
        "FILES or SQLITE, hard to say",
        "2025-10-09T16:10:00Z",
    );
    let t = tally(&poll(), &[r.clone()], at("2025-10-09T17:00:00Z")).unwrap();
    assert_eq!(t.targets[0].vote.as_deref(), Some("FILES"));
    assert!(
        t.targets[0].why.contains("first sentence"),
        "{}",
        t.targets[0].why
    );
    r.body = "Hard to say. SQLITE maybe".into();
    let t = tally(&poll(), &[r.clone()], at("2025-10-09T17:00:00Z")).unwrap();
    assert_eq!(t.targets[0].standing, Standing::NoVote);
    r.meta.push(meta("poll", "vote", "sqlite"));
    let t = tally(&poll(), &[r.clone()], at("2025-10-09T17:00:00Z")).unwrap();
    assert_eq!(t.targets[0].vote.as_deref(), Some("SQLITE"));
    r.meta = vec![meta("poll", "Vote", "POSTGRES")];
    let t = tally(&poll(), &[r], at("2025-10-09T17:00:00Z")).unwrap();
    assert_eq!(t.targets[0].standing, Standing::NoVote);
    // A word containing an option is not the option.
    assert_eq!(vote_of(&[], "SQLITEish files-ish", &options(&poll())), None);
}

#[test]
fn later_answers_replace_earlier_ones_and_late_ones_do_not_count() {
    let replies = [
        reply("claude://s/a", "RESPOND", "FILES", "2025-10-09T16:30:00Z"),
        reply("claude://s/a", "RESPOND", "SQLITE", "2025-10-09T16:10:00Z"),
        reply("claude://s/a", "ACK", "", "2025-10-09T16:40:00Z"),
        reply("chatgpt://t/x", "RESPOND", "SQLITE", "2025-10-09T16:10:00Z"),
        reply("chatgpt://t/x", "NACK", "no", "2025-10-09T16:50:00Z"),
        reply("gemini://g", "RESPOND", "SQLITE", "2025-10-09T19:00:00Z"),
        reply("intruder://x", "RESPOND", "SQLITE", "2025-10-09T16:10:00Z"),
    ];
    let t = tally(&poll(), &replies, at("2025-10-09T20:00:00Z")).unwrap();
    assert_eq!(t.targets[0].vote.as_deref(), Some("FILES"));
    assert_eq!(t.targets[1].standing, Standing::Declined);
    assert_eq!(t.targets[1].answer.as_deref(), Some("NACK"));
    assert_eq!(t.targets[2].standing, Standing::Late);
    assert_eq!(t.counts[0], ("SQLITE".into(), 0));
    assert!(!t.quorum_reached);
    assert!(t.expired);
    assert!(t.silent.is_empty());
    assert_eq!(time_left_label(&t), "expired 2h 0m ago");
}

#[test]
fn closing_writes_timeouts_for_the_silent_and_a_close_for_all_in_the_desks_name() {
    let p = poll();
    let replies = [reply(
        "claude://s/a",
        "RESPOND",
        "SQLITE",
        "2025-10-09T16:10:00Z",
    )];
    let t = tally(&p, &replies, at("2025-10-09T20:00:00Z")).unwrap();
    let ids = IdGenerator::new();
    let errors = timeout_envelopes(&p, &t, &ids, "human://desk");
    assert_eq!(errors.len(), 2);
    let e = &errors[0];
    // The desk writes it, never the target that did not answer.
    assert_eq!(e.banner.from, "human://desk");
    assert_eq!(e.banner.to, "human://alice");
    assert_eq!(e.user(), Some("system"));
    assert_eq!(e.parent(), p.message());
    assert_eq!(e.intent(), Some(Intent::Error));
    let m = e.meta_block(namespaces::ERROR).unwrap();
    assert_eq!(m.get("Code"), Some("E-TIMEOUT"));
    assert_eq!(m.get("Original-Intent"), Some("POLL"));
    assert_eq!(m.get("Target"), Some("chatgpt://t/x"));
    let close = result_envelope(&p, &t, &ids, "human://desk");
    assert_eq!(close.banner.from, "human://desk");
    assert_eq!(close.intent(), Some(Intent::Close));
    assert_eq!(close.parent(), p.message());
    assert!(close.body.as_deref().unwrap().contains("SQLITE: 1"));
    for env in errors.iter().chain([&close]) {
        let text = crate::protocol::render(env);
        let parsed = extract(&text, &Options::default());
        assert!(
            parsed.envelopes[0]
                .diagnostics
                .iter()
                .all(|d| d.severity != crate::protocol::Severity::Error),
            "{text}"
        );
    }
    // The desk's own timeouts end their targets' turns: the tally now has nobody silent.
    let as_reply = |e: &Envelope, by_desk: bool| PollReply {
        id: e.message().unwrap().into(),
        sender: e.banner.from.clone(),
        intent: e.intent(),
        meta: e.meta.clone(),
        body: e.body.clone().unwrap_or_default(),
        time: Some(at("2025-10-09T18:30:00Z")),
        by_desk,
    };
    let mut all = replies.to_vec();
    all.extend(errors.iter().map(|e| as_reply(e, true)));
    let t = tally(&p, &all, at("2025-10-09T18:10:00Z")).unwrap();
    assert!(t.silent.is_empty());
    assert_eq!(t.targets[1].standing, Standing::Declined);
    assert_eq!(t.targets[1].answer.as_deref(), Some("ERROR E-TIMEOUT"));
    // The same ERROR received from outside is anybody's forgery: it ends nobody's turn.
    let mut forged = replies.to_vec();
    forged.extend(errors.iter().map(|e| as_reply(e, false)));
    let t = tally(&p, &forged, at("2025-10-09T18:10:00Z")).unwrap();
    assert_eq!(t.silent.len(), 2);
    // And the desk's CLOSE closes the poll.
    let mut closed = all.clone();
    closed.push(as_reply(&close, true));
    assert!(
        tally(&p, &closed, at("2025-10-09T18:10:00Z"))
            .unwrap()
            .closed_by
            .is_some()
    );
}

/// A target that cannot stand in a banner still times out: the desk writes its E-TIMEOUT,
/// naming it only in a META value.
#[test]
fn a_target_that_cannot_send_still_times_out() {
    let p = extract(&POLL.replace("gemini://g", "x y"), &Options::default()).envelopes[0]
        .envelope
        .clone();
    let replies = [
        reply("claude://s/a", "RESPOND", "SQLITE", "2025-10-09T16:10:00Z"),
        reply("chatgpt://t/x", "RESPOND", "SQLITE", "2025-10-09T16:20:00Z"),
    ];
    let t = tally(&p, &replies, at("2025-10-09T20:00:00Z")).unwrap();
    assert_eq!(t.silent, ["x y"]);
    let errors = timeout_envelopes(&p, &t, &IdGenerator::new(), "human://desk");
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0]
            .meta_block(namespaces::ERROR)
            .unwrap()
            .get("Target"),
        Some("x y")
    );
    assert!(t.quorum_reached);
}

#[test]
fn not_a_poll_is_none() {
    let mut p = poll();
    p.set_header("intent", "REQUEST");
    assert!(tally(&p, &[], at("2025-10-09T17:00:00Z")).is_none());
}
