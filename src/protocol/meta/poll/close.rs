//! Ending a poll: whether it may be closed, the tally as lines, and the envelopes that close it
//! (an E-TIMEOUT ERROR per silent target, a CLOSE with the tally for all participants).

use super::{Standing, Tally, time_left_label};
use crate::protocol::namespaces;
use crate::protocol::{Envelope, Header, MetaBlock, NewIds};

/// `s` on one line: control characters (a value read across lines) become spaces, so a
/// value copied into a new envelope cannot break its structure.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Whether the operator may close the poll now (write the E-TIMEOUTs and the CLOSE), or why not.
pub fn can_close(t: &Tally) -> Result<(), String> {
    if t.closed_by.is_some() {
        return Err("the poll is already closed".into());
    }
    match (t.expired, &t.deadline_raw) {
        (true, _) => Ok(()),
        // Nobody can time out, so it ends when its sender ends it: a CLOSE, no E-TIMEOUT.
        (false, None) => Ok(()),
        (false, Some(_)) if t.deadline.is_none() => {
            Err("the poll's deadline does not read as a time".into())
        }
        (false, Some(_)) => Err(format!(
            "the poll runs until its deadline ({})",
            time_left_label(t)
        )),
    }
}

/// The tally as plain lines: what a result envelope's body and the CLI's summary say.
pub fn summary_lines(t: &Tally) -> Vec<String> {
    let mut out = Vec::new();
    let votes: Vec<String> = t.counts.iter().map(|(o, n)| format!("{o}: {n}")).collect();
    out.push(format!(
        "Votes: {}",
        if votes.is_empty() {
            "none".to_string()
        } else {
            votes.join(", ")
        }
    ));
    let (counts, word) = super::quorum_label(t);
    out.push(format!("Quorum: {counts} responded ({word})"));
    if let Some(l) = &t.leader {
        out.push(format!("Leading: {l}"));
    }
    for line in &t.targets {
        let what = match (&line.standing, &line.vote) {
            (_, Some(v)) => format!("voted {v}"),
            (Standing::Silent, _) => "no answer".to_string(),
            (Standing::NoVote, _) => "answered, no vote".to_string(),
            (Standing::Late, _) => "answered after the deadline".to_string(),
            _ => format!(
                "declined ({})",
                line.answer.as_deref().unwrap_or("no answer")
            ),
        };
        out.push(format!("- {}: {what}", line.target));
    }
    out
}

/// The E-TIMEOUT ERROR for each silent target (none for a poll without a deadline, closed
/// when its sender chooses): the spec's ERROR form answering the POLL, written by the desk
/// (`desk`, the operator's address) to the POLL's sender, `user: system`, the reason naming
/// the target and the deadline, and `Target:` in its `meta: error` so the tally counts it as
/// that target's turn ended (only the desk's own do: see `tally`). Never in the target's
/// name: the desk does not write what a model did not send.
pub fn timeout_envelopes(
    poll: &Envelope,
    t: &Tally,
    ids: &dyn NewIds,
    desk: &str,
) -> Vec<Envelope> {
    if t.deadline_raw.is_none() {
        // A poll without a deadline: nobody missed one.
        return Vec::new();
    }
    t.silent
        .iter()
        .map(|target| {
            let reason = format!(
                "No response from {} before the deadline {}",
                one_line(target),
                one_line(t.deadline_raw.as_deref().unwrap_or("of the poll"))
            );
            let mut env = crate::protocol::error_envelope::error_envelope(
                Some(poll),
                "E-TIMEOUT",
                Some(&reason),
                &[],
                ids,
            );
            env.banner.from = desk.to_string();
            env.banner.to = poll.banner.from.clone();
            if let Some(block) = env
                .meta
                .iter_mut()
                .find(|m| m.namespace == namespaces::ERROR)
            {
                block.entries.push(("Target".into(), one_line(target)));
            }
            env
        })
        .collect()
}

/// The CLOSE that ends the poll for all participants: from the desk (`desk`), to the POLL's
/// recipient, `Targets:` repeated, the tally in `meta: poll` and the body.
pub fn result_envelope(poll: &Envelope, t: &Tally, ids: &dyn NewIds, desk: &str) -> Envelope {
    let mut env = Envelope::new(desk.to_string(), poll.banner.to.clone());
    env.banner.version = poll.banner.version.clone();
    let mut push = |key: &str, value: Option<String>| {
        if let Some(value) = value {
            env.headers.push(Header {
                key: key.into(),
                value,
            });
        }
    };
    let copy = |key: &str| poll.header(key).map(str::to_string);
    let copy_id = |key: &str| copy(key).filter(|v| crate::protocol::is_id(v));
    push("user", Some("system".into()));
    push("session", copy("session"));
    push("thread", copy_id("thread"));
    push("parent", copy_id("message"));
    push("message", Some(ids.next_id()));
    push("context", copy("context"));
    push("intent", Some("CLOSE".into()));
    let targets: Vec<String> = t
        .targets
        .iter()
        .map(|l| format!("\"{}\"", one_line(&l.target).replace('"', "")))
        .collect();
    env.meta.push(MetaBlock {
        namespace: namespaces::ROUTING.into(),
        entries: vec![("Targets".into(), format!("[{}]", targets.join(", ")))],
    });
    let votes: Vec<String> = t
        .counts
        .iter()
        .map(|(o, n)| format!("{}={n}", one_line(o)))
        .collect();
    let mut entries = vec![("Type".to_string(), "result".to_string())];
    if !votes.is_empty() {
        entries.push(("Votes".into(), votes.join("; ")));
    }
    entries.push((
        "Quorum-Reached".into(),
        if t.quorum_reached { "yes" } else { "no" }.into(),
    ));
    if let Some(l) = &t.leader {
        entries.push(("Result".into(), one_line(l)));
    }
    env.meta.push(MetaBlock {
        namespace: namespaces::POLL.into(),
        entries,
    });
    let mut body = vec!["The poll is closed.".to_string()];
    body.extend(summary_lines(t));
    env.body = Some(body.join("\n"));
    env.sig = Some("none".into());
    env
}
