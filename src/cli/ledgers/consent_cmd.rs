//! `crosstalk consent`: every consent the stored envelopes state, where it stands now, and the
//! REVOKEs that withdraw nothing now, each with the reason: an unverified signature, a time
//! before the statement in force or still to come, no such consent stored, or the consent
//! stated again since. The rules live in [`crate::protocol::consent`].

use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

use crate::cli::output::Stdout;
use crate::cli::{EXIT_INVALID, Failure, database::store_cmd};
use crate::protocol::consent::{Ledger, Record, State, Untaken, Why};
use crate::sanitize::sanitize_line;

/// Prints the ledger as lines or JSON. Exit 1 when a REVOKE withdraws nothing now and the
/// consent was not stated again since (something asks for consent to be withdrawn and it is
/// not withdrawn), else 0.
pub(crate) fn consent(db: Option<&Path>, as_json: bool) -> Result<u8, Failure> {
    let store = store_cmd::open_existing(db)?;
    let now = jiff::Timestamp::now();
    let ledger = store
        .consent_ledger(now)
        .map_err(store_cmd::store_failure)?;
    let mut out = Stdout::new();
    if as_json {
        crate::cli::output::print_json(&mut out, &to_json(&ledger))?;
    } else {
        print_lines(&mut out, &ledger);
    }
    out.finish()?;
    let attention = ledger.untaken.iter().any(Untaken::needs_attention);
    Ok(if ledger.unverified.is_empty() && !attention {
        0
    } else {
        EXIT_INVALID
    })
}

fn time(t: &jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn record_json(r: &Record) -> Value {
    json!({
        "consent_id": r.consent_id,
        "state": r.state,
        "kind": r.kind,
        "explicit": r.explicit,
        "since": time(&r.since),
        "expires": r.expires.as_ref().map(time),
        "unreadable_expires": r.unreadable_expires,
        "revoked_at": r.revoked.as_ref().map(|(t, _)| time(t)),
        "revoked_by": r.revoked.as_ref().map(|(_, m)| m),
        "scope": r.scope,
        "jurisdiction": r.jurisdiction,
        "transferred_from": r.transferred_from,
        "message": r.message,
        "threads": r.threads,
    })
}

fn untaken_json(u: &Untaken) -> Value {
    let (why, by, since) = match &u.why {
        Why::NotYet => ("not_yet", None, None),
        Why::BeforeStatement { message, since } => {
            ("before_statement", Some(message), Some(time(since)))
        }
        Why::Restated { message, since } => ("restated", Some(message), Some(time(since))),
        Why::NoGrant => ("no_grant", None, None),
    };
    json!({
        "message": u.message,
        "thread": u.thread,
        "consent_id": u.consent_id,
        "effective": time(&u.effective),
        "why": why,
        "statement_in_force": by,
        "statement_since": since,
        "needs_attention": u.needs_attention(),
    })
}

/// The ledger as `crosstalk consent --json` prints it.
pub(crate) fn to_json(ledger: &Ledger) -> Value {
    json!({
        "consents": ledger.records.iter().map(record_json).collect::<Vec<_>>(),
        "unverified_revocations": ledger.unverified,
        "untaken_revocations": ledger.untaken.iter().map(untaken_json).collect::<Vec<_>>(),
    })
}

fn print_lines(out: &mut Stdout, ledger: &Ledger) {
    if ledger.records.is_empty() {
        let _ = writeln!(
            out,
            "No envelope states consent (meta: privacy, Consent: …)."
        );
    }
    for r in &ledger.records {
        let name = match &r.consent_id {
            Some(id) => sanitize_line(id).into_owned(),
            None => format!("(thread {})", short(&r.threads[0])),
        };
        let kind = match (&r.state, &r.unreadable_expires) {
            (State::NotUnderstood, Some(e)) => {
                format!("{}, Expires `{}`", sanitize_line(&r.kind), sanitize_line(e))
            }
            (State::NotUnderstood, None) => format!("Consent `{}`", sanitize_line(&r.kind)),
            _ => sanitize_line(&r.kind).into_owned(),
        };
        let mut line = format!(
            "{:<8} {name}  {kind} since {}",
            r.state.as_str(),
            time(&r.since)
        );
        if let Some(e) = &r.expires {
            line.push_str(&format!(", expires {}", time(e)));
        }
        if let Some((at, by)) = &r.revoked {
            line.push_str(&format!(", revoked {} by {}", time(at), short(by)));
        }
        for (label, v) in [("scope", &r.scope), ("jurisdiction", &r.jurisdiction)] {
            if let Some(v) = v {
                line.push_str(&format!(", {label} {}", sanitize_line(v)));
            }
        }
        if let Some(from) = &r.transferred_from {
            line.push_str(&format!(", transferred from {}", sanitize_line(from)));
        }
        let threads: Vec<String> = r.threads.iter().map(|t| short(t)).collect();
        line.push_str(&format!("  [threads {}]", threads.join(" ")));
        match r.state {
            State::NotUnderstood if r.unreadable_expires.is_some() => {
                line.push_str(
                    "  (its Expires is no time: a limit that cannot be read is no consent, none is in force)",
                );
            }
            State::NotUnderstood => {
                line.push_str("  (neither a grant nor a refusal: no consent is in force)");
            }
            State::Granted if !r.explicit => {
                line.push_str("  (not explicit: personal data needs explicit consent)");
            }
            _ => {}
        }
        let _ = writeln!(out, "{line}");
    }
    for u in &ledger.unverified {
        let _ = writeln!(
            out,
            "NOT TAKEN  REVOKE {} of {}: its signature is not verified with a trusted key, so nothing was withdrawn",
            full(&u.message),
            consent_name(u.consent_id.as_deref(), &u.thread)
        );
    }
    for u in &ledger.untaken {
        let when = time(&u.effective);
        let why = match &u.why {
            Why::NotYet => format!("it takes effect at {when}; the consent is in force until then"),
            Why::BeforeStatement { message, since } => format!(
                "it takes effect at {when}, before the consent's statement in force ({} at {}), \
                 which was received before it, so it withdraws nothing; check its `Effective` time",
                full(message),
                time(since)
            ),
            Why::Restated { message, since } => format!(
                "the consent was stated again after it was received ({} at {}), and that \
                 statement stands",
                full(message),
                time(since)
            ),
            Why::NoGrant => {
                "no stored envelope grants that consent, so there is nothing to withdraw"
                    .to_string()
            }
        };
        let _ = writeln!(
            out,
            "NOT TAKEN  REVOKE {} of {}: {why}",
            full(&u.message),
            consent_name(u.consent_id.as_deref(), &u.thread)
        );
    }
}

/// A consent as a REVOKE names it: its id, else its thread's.
fn consent_name(id: Option<&str>, thread: &str) -> String {
    match id {
        Some(id) => sanitize_line(id).into_owned(),
        None => format!("the consent of thread {}", full(thread)),
    }
}

/// An id whole, where the operator must find the message it names (hand-written ids, like
/// the spec's examples, often share all but their last characters), sanitized.
fn full(id: &str) -> String {
    sanitize_line(id).into_owned()
}

/// An id as far as the operator needs it (sanitized: ids come from envelopes).
fn short(id: &str) -> String {
    sanitize_line(&id.chars().take(12).collect::<String>()).into_owned()
}
