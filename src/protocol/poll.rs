//! POLL collation: who of a POLL's targets answered, how each voted, whether the quorum is
//! reached and how long the poll still runs. Pure: the store gathers the POLL and its replies,
//! the CLI and the app show the [`Tally`], and the closing envelopes are built here too.
//!
//! The rule (also in `docs/PROTOCOL.md` §11, "POLL collation"):
//! - **Targets and quorum** are those of [`awaiting::expectation`]: `Targets:` of
//!   `meta: routing`, else the banner's recipient; `Quorum:` of `meta: poll` (`2-of-3`, `2`,
//!   `all`, `majority`, `any`), else every target.
//! - **Options**: `Options:` of `meta: poll` (split on `|` or `,`), else the first body line
//!   holding a `|` between at least two words (`SQLITE | FILES | ABSTAIN?`; a trailing `?` marks
//!   an optional choice and is dropped; a label before a `:` is dropped).
//! - **Replies** count only from a target (the sender compared as addresses are). An ACK or
//!   any intent that is no answer ([`awaiting::is_answer`]) is ignored. A target's latest
//!   answer (by time, then by order given) replaces its earlier ones, so a NACK after a vote
//!   withdraws it. A response later than the deadline is marked late and does not count (a
//!   NACK, ERROR or CLOSE after it still ends the target's turn).
//! - **Vote** of a RESPOND (or a v1.0 reply without intent): `Vote:` of its `meta: poll`, else
//!   the one option named as a whole word (any case) on its first body line; naming none or
//!   several is "answered, no vote". When the poll lists options, a `Vote:` naming none of them
//!   is no vote either; when it lists none, the `Vote:` value is counted as written.
//! - **Quorum reached** when as many targets responded (RESPOND, with a vote or not) as the
//!   quorum needs. NACK, ERROR and CLOSE end a target's turn without responding. **Out of
//!   reach** when it is not reached and the targets still silent (none once the deadline is
//!   past) are too few to reach it: a poll all of whose targets declined waits for nobody,
//!   and says so rather than "not reached".

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::awaiting::{self, same_party};
use super::{Envelope, Intent, MetaBlock};

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
    /// When it was written, when known.
    pub time: Option<Timestamp>,
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

/// A META entry of namespace `ns`, both matched in any case.
fn meta_value<'m>(meta: &'m [MetaBlock], ns: &str, key: &str) -> Option<&'m str> {
    meta.iter()
        .filter(|m| m.namespace.trim().eq_ignore_ascii_case(ns))
        .flat_map(|m| m.entries.iter())
        .find(|(k, _)| k.trim().eq_ignore_ascii_case(key))
        .map(|(_, v)| v.trim())
}

/// Whether `s` can be an option name: short, one word of letters, digits and `-_.+/`.
fn is_option_word(s: &str) -> bool {
    !s.is_empty()
        && s.chars().count() <= 40
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '/'))
}

/// Splits an options list on `sep`, or `None` when fewer than two parts read as options.
fn split_options(line: &str, sep: char) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for part in line.split(sep) {
        let word = part
            .trim()
            .trim_matches(|c| matches!(c, '*' | '`' | '"' | '\''))
            .trim_end_matches('?')
            .trim();
        if !is_option_word(word) {
            return None;
        }
        if !out.iter().any(|o| o.eq_ignore_ascii_case(word)) {
            out.push(word.to_string());
        }
    }
    (out.len() >= 2).then_some(out)
}

/// The options a POLL offers (see the module's rule).
pub fn options(poll: &Envelope) -> Vec<String> {
    if let Some(v) = meta_value(&poll.meta, "poll", "Options") {
        let sep = if v.contains('|') { '|' } else { ',' };
        if let Some(o) = split_options(v, sep) {
            return o;
        }
    }
    let body = poll.body.as_deref().unwrap_or("");
    for line in body.lines().filter(|l| l.contains('|')) {
        let first_bar = line.find('|').unwrap_or(0);
        let start = line[..first_bar].rfind(':').map(|i| i + 1).unwrap_or(0);
        if let Some(o) = split_options(&line[start..], '|') {
            return o;
        }
    }
    Vec::new()
}

/// The options named as whole words (any case) on `line`, each once, in `options` order.
fn named_on(line: &str, options: &[String]) -> Vec<String> {
    let words: Vec<String> = line
        .split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '/')))
        .map(|w| w.trim_end_matches('.').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect();
    options
        .iter()
        .filter(|o| words.iter().any(|w| *w == o.to_lowercase()))
        .cloned()
        .collect()
}

/// The vote a RESPOND carries, by the module's rule.
pub fn vote_of(reply_meta: &[MetaBlock], body: &str, options: &[String]) -> Option<String> {
    if let Some(v) = meta_value(reply_meta, "poll", "Vote").filter(|v| !v.is_empty()) {
        if options.is_empty() {
            return Some(v.chars().take(80).collect());
        }
        return options.iter().find(|o| o.eq_ignore_ascii_case(v)).cloned();
    }
    let named = named_on(super::model::first_line(body), options);
    match named.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

fn rfc3339(t: &Timestamp) -> String {
    t.to_string()
}

/// A POLL's `Deadline:` (of `meta: poll`) read as a time: a response after it is late, and
/// counts neither as a vote nor for the quorum (nor, so, for the POLL's wait).
pub fn deadline(meta: &[MetaBlock]) -> Option<Timestamp> {
    meta_value(meta, "poll", "Deadline")
        .filter(|d| !d.is_empty())
        .and_then(super::validate::parse_time)
}

/// Whether a reply with `intent` at `time` comes too late for a poll with `deadline`: only a
/// response can be (a refusal or an error still ends the target's turn).
pub fn is_late(
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
    let options = options(poll);
    let deadline_raw = meta_value(&poll.meta, "poll", "Deadline")
        .filter(|d| !d.is_empty())
        .map(str::to_string);
    let deadline = deadline(&poll.meta);
    // Latest first: by time (unknown times count as earliest), then by the order given.
    let mut order: Vec<usize> = (0..replies.len()).collect();
    order.sort_by(|&a, &b| (replies[b].time, b).cmp(&(replies[a].time, a)));
    let mut targets = Vec::with_capacity(exp.targets.len());
    let mut counts: Vec<(String, usize)> = options.iter().map(|o| (o.clone(), 0)).collect();
    for target in &exp.targets {
        let mut line = TargetResult {
            target: target.clone(),
            standing: Standing::Silent,
            vote: None,
            answer: None,
            at: None,
            message: None,
        };
        let answers = order
            .iter()
            .map(|&i| &replies[i])
            .filter(|r| same_party(&r.sender, target) && awaiting::is_answer(r.intent.as_ref()));
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
                    line.vote = vote_of(&r.meta, &r.body, &options);
                    line.standing = if line.vote.is_some() {
                        Standing::Voted
                    } else {
                        Standing::NoVote
                    };
                }
                _ => line.standing = Standing::Declined,
            }
            break;
        }
        if line.standing == Standing::Silent {
            if let Some(r) = late {
                line.standing = Standing::Late;
                line.answer = Some(answer_label(r));
                line.at = r.time.as_ref().map(rfc3339);
                line.message = Some(r.id.clone());
            }
        }
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
        .find(|r| r.intent == Some(Intent::Close) && same_party(&r.sender, &poll.banner.from))
        .map(|r| r.id.clone());
    Some(Tally {
        closed_by,
        kind: meta_value(&poll.meta, "poll", "Type").map(str::to_string),
        options,
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

/// `RESPOND`, `NACK`, `ERROR E-TIMEOUT`, or `v1.0 reply` for an answer.
fn answer_label(r: &PollReply) -> String {
    match &r.intent {
        None => "v1.0 reply".into(),
        Some(Intent::Error) => match meta_value(&r.meta, "error", "Code") {
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
    pub fn vote_cell(&self) -> String {
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

pub use close::{can_close, result_envelope, summary_lines, timeout_envelopes};

#[cfg(test)]
mod tests;
