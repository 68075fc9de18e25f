//! What a message awaits, by the intent registry: who must still answer it, given the replies
//! that name it as parent. Pure: the store keeps the result in its delivery ledger, the app and
//! the CLI only show it.
//!
//! The rule:
//! - REQUEST, ESCALATE and HANDOFF await one answer from anyone (the spec: "expects RESPOND").
//! - POLL awaits its targets — `Targets:` of `meta: routing`, else the banner's recipient — until
//!   as many have answered as its quorum asks (`Quorum: 2-of-3` in `meta: poll`; all targets
//!   when it names none). Only a target's answer counts, once per target.
//! - ACK, NACK, BROADCAST, CLOSE, ERROR, RESPOND, REVOKE, unknown intents and envelopes without
//!   one await nothing.
//!
//! An answer is a reply whose intent is RESPOND (v1.0 ANSWER), or one that says no answer is
//! coming: NACK (refused), ERROR (failed) or CLOSE (the conversation is over). A v1.0 reply
//! with no intent at all (`response: |`) is an answer too: that is how v1.0 answers. An ACK only
//! confirms receipt, so a REQUEST stays awaited after one; so does any other intent.

use crate::protocol::namespaces;
use crate::protocol::{Intent, MetaBlock};

/// Who a message waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expectation {
    /// The parties whose answer counts, as written (compared case-insensitively). Empty for
    /// "anyone" (one answer from whoever replies).
    pub targets: Vec<String>,
    /// How many answers end the wait.
    pub needed: usize,
}

/// Who must still answer, while a message still waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outstanding {
    /// The parties not answered yet (for "anyone": the message's recipient).
    pub from: Vec<String>,
    /// How many answers are still needed.
    pub needed: usize,
}

/// Whether two addresses or names are the same party: case-insensitive, surrounding blanks
/// ignored (as the fence and recipient settings compare them).
pub fn same_party(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

/// Whether a reply with this intent ends a wait (see the module's rule).
pub fn is_answer(intent: Option<&Intent>) -> bool {
    matches!(
        intent,
        None | Some(Intent::Respond | Intent::Nack | Intent::Error | Intent::Close)
    )
}

/// What a message with `intent`, for `recipient`, with `meta` blocks, waits for; `None` when
/// it waits for nothing.
pub fn expectation(
    intent: Option<&Intent>,
    recipient: &str,
    meta: &[MetaBlock],
) -> Option<Expectation> {
    match intent? {
        Intent::Poll => {
            let mut targets: Vec<String> = Vec::new();
            let listed = meta
                .iter()
                .filter(|m| m.namespace.eq_ignore_ascii_case(namespaces::ROUTING))
                .find_map(|m| entry(m, "Targets"));
            for t in listed.map(parse_targets).unwrap_or_default() {
                if !targets.iter().any(|have| same_party(have, &t)) {
                    targets.push(t);
                }
            }
            if targets.is_empty() {
                targets.push(recipient.trim().to_string());
            }
            let quorum = meta
                .iter()
                .filter(|m| m.namespace.eq_ignore_ascii_case(namespaces::POLL))
                .find_map(|m| entry(m, "Quorum"));
            let needed = quorum
                .and_then(|q| parse_quorum(q, targets.len()))
                .unwrap_or(targets.len())
                .clamp(1, targets.len());
            Some(Expectation { targets, needed })
        }
        // Any other that asks for an answer (the registry's one list of them) asks anyone.
        i if i.expects_response() => Some(Expectation {
            targets: Vec::new(),
            needed: 1,
        }),
        _ => None,
    }
}

/// Who is still awaited after `replies` — (sender, intent) of every reply naming the message
/// as parent, in any order — or `None` once the wait is over.
pub fn outstanding(
    exp: &Expectation,
    recipient: &str,
    replies: &[(String, Option<Intent>)],
) -> Option<Outstanding> {
    // A CLOSE ends the conversation it answers, a POLL's too (its sender closed it): nobody
    // is awaited after it.
    if replies.iter().any(|(_, i)| *i == Some(Intent::Close)) {
        return None;
    }
    let answers = replies.iter().filter(|(_, i)| is_answer(i.as_ref()));
    if exp.targets.is_empty() {
        let got = answers.count();
        return (got < exp.needed).then(|| Outstanding {
            from: vec![recipient.trim().to_string()],
            needed: exp.needed - got,
        });
    }
    let answered: Vec<&String> = answers.map(|(s, _)| s).collect();
    let from: Vec<String> = exp
        .targets
        .iter()
        .filter(|t| !answered.iter().any(|s| same_party(s, t)))
        .cloned()
        .collect();
    let got = exp.targets.len() - from.len();
    (got < exp.needed).then(|| Outstanding {
        from,
        needed: exp.needed - got,
    })
}

/// A meta entry's value, the key matched case-insensitively.
fn entry<'m>(m: &'m MetaBlock, key: &str) -> Option<&'m str> {
    m.entries
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v.as_str())
}

/// `["a", "b"]`, `[a, b]` or `a, b` → the names, quotes and blanks removed, empty ones dropped.
pub(crate) fn parse_targets(value: &str) -> Vec<String> {
    let v = value.trim();
    let v = v.strip_prefix('[').unwrap_or(v);
    let v = v.strip_suffix(']').unwrap_or(v);
    v.split(',')
        .map(|t| t.trim().trim_matches(|c| c == '"' || c == '\'').trim())
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// `2-of-3`, `2/3`, `2`, `all`, `majority` → answers needed out of `targets`; `None` when it
/// says none of these (the poll then waits for every target).
pub(crate) fn parse_quorum(value: &str, targets: usize) -> Option<usize> {
    let v = value.trim().to_ascii_lowercase();
    match v.as_str() {
        "all" | "unanimous" => return Some(targets),
        "majority" => return Some(targets / 2 + 1),
        "any" => return Some(1),
        _ => {}
    }
    let first = v
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .filter(|d| !d.is_empty())?;
    first.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(ns: &str, entries: &[(&str, &str)]) -> MetaBlock {
        MetaBlock {
            namespace: ns.into(),
            entries: entries
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn reply(from: &str, intent: &str) -> (String, Option<Intent>) {
        (
            from.into(),
            (!intent.is_empty()).then(|| Intent::parse(intent)),
        )
    }

    #[test]
    fn a_request_awaits_one_answer_from_anyone() {
        let e = expectation(Some(&Intent::Request), "CHATGPT", &[]).unwrap();
        let o = outstanding(&e, "CHATGPT", &[]).unwrap();
        assert_eq!(o.from, ["CHATGPT"]);
        assert!(outstanding(&e, "CHATGPT", &[reply("CHATGPT", "ACK")]).is_some());
        assert!(outstanding(&e, "CHATGPT", &[reply("GEMINI", "RESPOND")]).is_none());
        assert!(outstanding(&e, "CHATGPT", &[reply("CHATGPT", "NACK")]).is_none());
        assert!(outstanding(&e, "CHATGPT", &[reply("CHATGPT", "error")]).is_none());
        assert!(outstanding(&e, "CHATGPT", &[reply("CHATGPT", "ANSWER")]).is_none());
        // A v1.0 reply without an intent answers.
        assert!(outstanding(&e, "CHATGPT", &[reply("CHATGPT", "")]).is_none());
        for i in ["ESCALATE", "HANDOFF", "QUESTION"] {
            assert!(
                expectation(Some(&Intent::parse(i)), "X", &[]).is_some(),
                "{i}"
            );
        }
    }

    #[test]
    fn the_others_await_nothing() {
        for i in [
            "ACK",
            "NACK",
            "BROADCAST",
            "CLOSE",
            "ERROR",
            "RESPOND",
            "REVOKE",
            "VOTE",
        ] {
            assert_eq!(expectation(Some(&Intent::parse(i)), "X", &[]), None, "{i}");
        }
        assert_eq!(expectation(None, "X", &[]), None);
    }

    #[test]
    fn a_poll_awaits_its_targets_up_to_its_quorum() {
        let m = [
            meta(
                "routing",
                &[(
                    "Targets",
                    r#"["claude://s/a", "chatgpt://t/x", "gemini://g"]"#,
                )],
            ),
            meta("poll", &[("Type", "consensus"), ("Quorum", "2-of-3")]),
        ];
        let e = expectation(Some(&Intent::Poll), "POLL", &m).unwrap();
        assert_eq!(e.targets.len(), 3);
        assert_eq!(e.needed, 2);
        let o = outstanding(&e, "POLL", &[reply("CLAUDE://s/a", "RESPOND")]).unwrap();
        assert_eq!(o.from, ["chatgpt://t/x", "gemini://g"]);
        assert_eq!(o.needed, 1);
        // The same target twice counts once; a non-target and an ACK do not count.
        let twice = [
            reply("claude://s/a", "RESPOND"),
            reply("claude://s/a", "RESPOND"),
            reply("other://x", "RESPOND"),
            reply("gemini://g", "ACK"),
        ];
        assert_eq!(outstanding(&e, "POLL", &twice).unwrap().needed, 1);
        let done = [
            reply("claude://s/a", "RESPOND"),
            reply("gemini://g", "NACK"),
        ];
        assert!(outstanding(&e, "POLL", &done).is_none());
    }

    #[test]
    fn a_poll_without_targets_awaits_its_recipient_and_without_quorum_all() {
        let e = expectation(Some(&Intent::Poll), "CLAUDE", &[]).unwrap();
        assert_eq!((e.targets.clone(), e.needed), (vec!["CLAUDE".into()], 1));
        let m = [meta("routing", &[("Targets", "a, b")])];
        let e = expectation(Some(&Intent::Poll), "POLL", &m).unwrap();
        assert_eq!(e.needed, 2);
        let m = [
            meta("routing", &[("Targets", "a, b")]),
            meta("poll", &[("Quorum", "9-of-9")]),
        ];
        assert_eq!(
            expectation(Some(&Intent::Poll), "POLL", &m).unwrap().needed,
            2
        );
    }

    #[test]
    fn quorum_forms() {
        assert_eq!(parse_quorum("2-of-3", 3), Some(2));
        assert_eq!(parse_quorum("2/3", 3), Some(2));
        assert_eq!(parse_quorum(" 1 ", 3), Some(1));
        assert_eq!(parse_quorum("majority", 4), Some(3));
        assert_eq!(parse_quorum("all", 4), Some(4));
        assert_eq!(parse_quorum("some", 4), None);
        assert_eq!(parse_targets(r#"["a", 'b' , ,c]"#), ["a", "b", "c"]);
    }
}
