//! POLL collation: who of a POLL's targets answered, how each voted, whether the quorum is
//! reached and how long the poll still runs. Pure: the store gathers the POLL and its replies,
//! the CLI and the app show the [`Tally`], and the closing envelopes are built here too.
//!
//! The rule (also in `docs/PROTOCOL.md` §11, "POLL collation"):
//! - **Targets and quorum** are those of [`awaiting::expectation`]: `Targets:` of
//!   `meta: routing`, else the banner's recipient; `Quorum:` of `meta: poll` (`2-of-3`, `2`,
//!   `all`, `majority`, `any`), else every target.
//! - **Options** and **votes** are read where models write them ([`reading`]): `Options:` of
//!   `meta: poll`, an `Options:` line or list in the body, a line `A | B | C`; a reply's vote
//!   is the option it names first (`Vote:` of its `meta: poll`, a `Vote:` line, else its first
//!   sentence). Each reading says where it came from.
//! - **Replies** count only from a target (the sender compared as addresses are), and an
//!   E-TIMEOUT the desk itself wrote for a target at the deadline (its `meta: error` names the
//!   `Target`). An ACK or any intent that is no answer ([`awaiting::is_answer`]) is ignored. A
//!   target's latest answer (by arrival, then by order given) replaces its earlier ones, so a
//!   NACK after a vote withdraws it. A response that arrived after the deadline is marked late
//!   and does not count (a NACK, ERROR or CLOSE after it still ends the target's turn). Times
//!   are those the desk saw, never those in ids a model wrote.
//! - **Quorum reached** when as many targets responded (RESPOND, with a vote or not) as the
//!   quorum needs. NACK, ERROR and CLOSE end a target's turn without responding. **Out of
//!   reach** when it is not reached and the targets still silent (none once the deadline is
//!   past) are too few to reach it: a poll all of whose targets declined waits for nobody,
//!   and says so rather than "not reached".

use crate::protocol::namespaces;
use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use crate::protocol::awaiting::{self, same_party};
use crate::protocol::{Envelope, Intent, MetaBlock};

/// One reply naming the POLL as its parent, as the tally needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PollReply {
    /// The reply's message id (shown, never interpreted).
    pub id: String,
    /// Its banner sender.
    pub sender: String,
    /// Its normalized intent; `None` for a v1.0 reply.
    pub intent: Option<Intent>,
    /// Its META blocks.
    pub meta: Vec<MetaBlock>,
    /// Its body.
    pub body: String,
    /// When it arrived at the desk (or, written there, was sent), when known.
    pub time: Option<Timestamp>,
    /// Written by this desk (an E-TIMEOUT or the CLOSE of the poll), not received.
    pub by_desk: bool,
}

/// Where a target stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// No answer yet.
    Silent,
    /// Responded and voted (see [`TargetResult::vote`]).
    Voted,
    /// Responded without a vote the rule can read.
    NoVote,
    /// Ended its turn without responding: NACK, ERROR (with its code when it names one) or CLOSE.
    Declined,
    /// Answered only after the deadline.
    Late,
}

/// One target's line of the tally.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TargetResult {
    /// The target as the POLL names it.
    pub target: String,
    /// Where it stands.
    pub standing: Standing,
    /// Its vote (an option's spelling as the poll writes it), when it voted.
    pub vote: Option<String>,
    /// The intent of the answer counted (`RESPOND`, `NACK`, `ERROR E-TIMEOUT`, …).
    pub answer: Option<String>,
    /// When that answer was written (RFC 3339), when known.
    pub at: Option<String>,
    /// That answer's message id.
    pub message: Option<String>,
    /// Why it stands so: where its vote was read, why it is none, when it came late.
    pub why: String,
}

/// The collated POLL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// `Type:` of `meta: poll` (e.g. `consensus`), as written.
    pub kind: Option<String>,
    /// One line per target, in the POLL's order.
    pub targets: Vec<TargetResult>,
    /// The options offered, in order.
    pub options: Vec<String>,
    /// Where they were read (`meta: poll Options`, `the body's Options: line (line 3)`);
    /// `None` when the POLL lists none.
    pub options_from: Option<String>,
    /// Votes per option (every option listed, then votes for unlisted values in order seen).
    pub counts: Vec<(String, usize)>,
    /// Responses the quorum needs.
    pub needed: usize,
    /// Targets that responded (RESPOND, with or without a vote).
    pub responded: usize,
    /// Whether `responded >= needed`.
    pub quorum_reached: bool,
    /// Whether the quorum is not reached and cannot be any more: too few targets are left
    /// who may still respond in time.
    pub quorum_out_of_reach: bool,
    /// The option with the most votes, when one leads alone.
    pub leader: Option<String>,
    /// `Deadline:` as written.
    pub deadline_raw: Option<String>,
    /// The deadline read as a time (RFC 3339), when it reads as one.
    pub deadline: Option<String>,
    /// Whether the deadline has passed.
    pub expired: bool,
    /// Seconds until the deadline (negative once past).
    pub seconds_left: Option<i64>,
    /// Targets with no answer at all.
    pub silent: Vec<String>,
    /// The id of a CLOSE answering the POLL from its own sender: the poll was closed.
    pub closed_by: Option<String>,
}

use reading::meta_value;

/// The options a POLL offers (see [`reading::read_options`]).
pub fn options(poll: &Envelope) -> Vec<String> {
    reading::read_options(&poll.meta, poll.body.as_deref().unwrap_or("")).options
}

/// The vote a RESPOND carries (see [`reading::read_vote`]).
#[cfg(test)]
pub(crate) fn vote_of(reply_meta: &[MetaBlock], body: &str, options: &[String]) -> Option<String> {
    reading::read_vote(reply_meta, body, options).vote
}

/// Whether `r` is the E-TIMEOUT the desk wrote for `target` when the poll's deadline passed:
/// an ERROR of this desk's own with `Code: E-TIMEOUT` and `Target:` naming it in its `meta:
/// error`. Only the desk's own counts: a received one could be anybody's forgery.
fn desk_timeout_for(r: &PollReply, target: &str) -> bool {
    r.by_desk
        && r.intent == Some(Intent::Error)
        && meta_value(&r.meta, namespaces::ERROR, "Code")
            .is_some_and(|c| c.eq_ignore_ascii_case("E-TIMEOUT"))
        && meta_value(&r.meta, namespaces::ERROR, "Target").is_some_and(|t| same_party(t, target))
}

fn rfc3339(t: &Timestamp) -> String {
    t.to_string()
}

/// A time as a why says it: `2025-10-09 18:00 UTC`.
fn short(t: &Timestamp) -> String {
    t.strftime("%Y-%m-%d %H:%M UTC").to_string()
}

/// A POLL's `Deadline:` (of `meta: poll`) read as a time: a response after it is late, and
/// counts neither as a vote nor for the quorum (nor, so, for the POLL's wait).
pub fn deadline(meta: &[MetaBlock]) -> Option<Timestamp> {
    meta_value(meta, namespaces::POLL, "Deadline")
        .filter(|d| !d.is_empty())
        .and_then(crate::protocol::validate::parse_time)
}

/// Whether a reply with `intent` at `time` comes too late for a poll with `deadline`: only a
/// response can be (a refusal or an error still ends the target's turn).
pub(crate) fn is_late(
    intent: Option<&Intent>,
    time: Option<Timestamp>,
    deadline: Option<Timestamp>,
) -> bool {
    let responds = matches!(intent, None | Some(Intent::Respond));
    responds && matches!((deadline, time), (Some(d), Some(t)) if t > d)
}

/// Collates `poll` with `replies` (every reply naming it as parent, any order) at `now`;
/// `None` when `poll` is not a POLL.
pub fn tally(poll: &Envelope, replies: &[PollReply], now: Timestamp) -> Option<Tally> {
    let intent = poll.intent();
    if intent != Some(Intent::Poll) {
        return None;
    }
    let exp = awaiting::expectation(intent.as_ref(), &poll.banner.to, &poll.meta)?;
    let read = reading::read_options(&poll.meta, poll.body.as_deref().unwrap_or(""));
    let options = read.options;
    let deadline_raw = meta_value(&poll.meta, namespaces::POLL, "Deadline")
        .filter(|d| !d.is_empty())
        .map(str::to_string);
    let deadline = deadline(&poll.meta);
    // Latest first: by time (unknown times count as earliest), then by the order given.
    let mut order: Vec<usize> = (0..replies.len()).collect();
    order.sort_by(|&a, &b| (replies[b].time, b).cmp(&(replies[a].time, a)));
    let mut targets = Vec::with_capacity(exp.targets.len());
    let mut counts: Vec<(String, usize)> = options.iter().map(|o| (o.clone(), 0)).collect();
    for target in &exp.targets {
        let line = target_result(target, replies, &order, &options, deadline, now);
        if let Some(v) = &line.vote {
            match counts.iter_mut().find(|(o, _)| o.eq_ignore_ascii_case(v)) {
                Some((_, n)) => *n += 1,
                None => counts.push((v.clone(), 1)),
            }
        }
        targets.push(line);
    }
    let responded = targets
        .iter()
        .filter(|t| matches!(t.standing, Standing::Voted | Standing::NoVote))
        .count();
    let top = counts.iter().map(|(_, n)| *n).max().unwrap_or(0);
    let leaders: Vec<&String> = counts
        .iter()
        .filter(|(_, n)| *n == top && top > 0)
        .map(|(o, _)| o)
        .collect();
    let silent: Vec<String> = targets
        .iter()
        .filter(|t| t.standing == Standing::Silent)
        .map(|t| t.target.clone())
        .collect();
    let expired = deadline.is_some_and(|d| now > d);
    // Who may still respond in time: the silent targets, until the deadline.
    let open = if expired { 0 } else { silent.len() };
    let closed_by = replies
        .iter()
        .find(|r| {
            r.intent == Some(Intent::Close)
                && (r.by_desk || same_party(&r.sender, &poll.banner.from))
        })
        .map(|r| r.id.clone());
    Some(Tally {
        closed_by,
        kind: meta_value(&poll.meta, namespaces::POLL, "Type").map(str::to_string),
        options,
        options_from: read.source,
        needed: exp.needed,
        responded,
        quorum_reached: responded >= exp.needed,
        quorum_out_of_reach: responded < exp.needed && responded + open < exp.needed,
        leader: match leaders.as_slice() {
            [one] => Some((*one).clone()),
            _ => None,
        },
        deadline: deadline.as_ref().map(rfc3339),
        expired,
        seconds_left: deadline.map(|d| d.duration_since(now).as_secs()),
        deadline_raw,
        counts,
        targets,
        silent,
    })
}

/// Where `target` stands in the poll: its latest answer (`order` holds the indices of
/// `replies`, latest first) in time before `deadline`, or else its first late one, or
/// silence (as of `now`).
fn target_result(
    target: &str,
    replies: &[PollReply],
    order: &[usize],
    options: &[String],
    deadline: Option<Timestamp>,
    now: Timestamp,
) -> TargetResult {
    let mut line = TargetResult {
        target: target.to_string(),
        standing: Standing::Silent,
        vote: None,
        answer: None,
        at: None,
        message: None,
        why: String::new(),
    };
    let answers = order.iter().map(|&i| &replies[i]).filter(|r| {
        (same_party(&r.sender, target) && awaiting::is_answer(r.intent.as_ref()))
            || desk_timeout_for(r, target)
    });
    let mut late = None;
    for r in answers {
        if is_late(r.intent.as_ref(), r.time, deadline) {
            late.get_or_insert(r);
            continue;
        }
        line.answer = Some(answer_label(r));
        line.at = r.time.as_ref().map(rfc3339);
        line.message = Some(r.id.clone());
        match r.intent {
            None | Some(Intent::Respond) => {
                let vote = reading::read_vote(&r.meta, &r.body, options);
                line.vote = vote.vote;
                line.standing = if line.vote.is_some() {
                    Standing::Voted
                } else {
                    Standing::NoVote
                };
                line.why = vote.why;
            }
            _ => {
                line.standing = Standing::Declined;
                line.why = if r.by_desk {
                    "timed out: the desk's E-TIMEOUT at the deadline".into()
                } else {
                    format!("answered {}", answer_label(r))
                };
            }
        }
        break;
    }
    if line.standing == Standing::Silent {
        if let Some(r) = late {
            line.standing = Standing::Late;
            line.answer = Some(answer_label(r));
            line.at = r.time.as_ref().map(rfc3339);
            line.message = Some(r.id.clone());
            line.why = format!(
                "arrived {}, after the deadline {}",
                r.time.as_ref().map(short).unwrap_or_default(),
                deadline.as_ref().map(short).unwrap_or_default()
            );
        } else {
            line.why = match deadline {
                Some(d) if now > d => "no answer arrived before the deadline".into(),
                _ => "no answer yet".into(),
            };
        }
    }
    line
}

/// `RESPOND`, `NACK`, `ERROR E-TIMEOUT`, or `v1.0 reply` for an answer.
fn answer_label(r: &PollReply) -> String {
    match &r.intent {
        None => "v1.0 reply".into(),
        Some(Intent::Error) => match meta_value(&r.meta, namespaces::ERROR, "Code") {
            Some(code) if !code.is_empty() => {
                format!("ERROR {}", code.chars().take(20).collect::<String>())
            }
            _ => "ERROR".into(),
        },
        Some(i) => i.to_string(),
    }
}

impl Standing {
    /// Whether the target answered, in one word: `no`, `yes`, `declined`, `late`.
    pub fn answered(&self) -> &'static str {
        match self {
            Standing::Silent => "no",
            Standing::Voted | Standing::NoVote => "yes",
            Standing::Declined => "declined",
            Standing::Late => "late",
        }
    }
}

impl TargetResult {
    /// The vote column: the vote, `(no vote)`, the answer that declined or came late, or `-`.
    /// As written in the envelopes: callers make it safe for where they show it.
    pub(crate) fn vote_cell(&self) -> String {
        match (&self.vote, &self.answer, &self.standing) {
            (Some(v), _, _) => v.clone(),
            (None, Some(a), Standing::Declined | Standing::Late) => a.clone(),
            (None, _, Standing::NoVote) => "(no vote)".into(),
            _ => "-".into(),
        }
    }
}

/// "2 of 3 needed" and "reached" / "not reached" / "out of reach": the quorum, worded alike
/// by the panel, the CLI and the result envelope (each sets them in its own line). Out of
/// reach only while the poll runs: after its deadline it was simply not reached.
pub fn quorum_label(t: &Tally) -> (String, &'static str) {
    let counts = format!("{} of {} needed", t.responded, t.needed);
    let word = if t.quorum_reached {
        "reached"
    } else if t.quorum_out_of_reach && !t.expired {
        "out of reach"
    } else {
        "not reached"
    };
    (counts, word)
}

/// "3h 20m left", "expired 5m ago", or "no deadline", for the time left.
pub fn time_left_label(t: &Tally) -> String {
    let Some(secs) = t.seconds_left else {
        return match &t.deadline_raw {
            Some(_) => "deadline unreadable".into(),
            None => "no deadline".into(),
        };
    };
    let span = human_span(SignedDuration::from_secs(secs.saturating_abs()));
    if secs >= 0 && !t.expired {
        format!("{span} left")
    } else {
        format!("expired {span} ago")
    }
}

fn human_span(d: SignedDuration) -> String {
    let s = d.as_secs().max(0);
    let (days, hours, mins) = (s / 86_400, s % 86_400 / 3600, s % 3600 / 60);
    if days > 0 {
        format!("{days}d {hours}h")
    } else if hours > 0 {
        format!("{hours}h {mins}m")
    } else if mins > 0 {
        format!("{mins}m")
    } else {
        format!("{s}s")
    }
}

mod close;
pub mod reading;

pub use close::{can_close, result_envelope, summary_lines, timeout_envelopes};

#[cfg(test)]
mod tests;
