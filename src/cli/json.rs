//! The JSON shapes of the command line, kept in one place because scripts depend on them.

use serde::Serialize;
use serde_json::{Value, json};

use crate::protocol::{Diagnostic, Envelope, Extraction, Parsed};
use crate::store::StoredMessage;

/// One envelope as `parse --json` prints it: the spec's fields flat (absent ones `null`),
/// every header and META block in order, the span and the diagnostics.
pub fn envelope(p: &Parsed) -> Value {
    let mut v = fields(&p.envelope, p.intent().map(|i| i.to_string()));
    v["span"] = json!(p.span);
    v["collapsed"] = json!(p.collapsed);
    v["reply_form"] = json!(p.reply_form);
    v["diagnostics"] = json!(p.diagnostics);
    v
}

/// A stored message: the envelope fields of `parse --json` plus where it stands.
pub fn stored(m: &StoredMessage) -> Value {
    let mut v = fields(&m.envelope, m.intent.clone());
    v["status"] = json!(m.status);
    v["direction"] = json!(m.direction);
    v["received_at"] = json!(m.received_at);
    v["depth"] = json!(m.depth);
    v["diagnostics"] = m.diagnostics.clone();
    v
}

/// The envelope's own fields, shared by parsed and stored envelopes.
fn fields(e: &Envelope, intent: Option<String>) -> Value {
    json!({
        "from": e.banner.from,
        "to": e.banner.to,
        "version": e.banner.version,
        "user": e.user(),
        "session": e.session(),
        "thread": e.thread(),
        "parent": e.parent(),
        "message": e.message(),
        "context": e.context(),
        "intent": intent,
        "intent_raw": e.intent_raw(),
        "body": e.body,
        "sig": e.sig,
        "hash": e.hash,
        "headers": e.headers.iter().map(|h| [&h.key, &h.value]).collect::<Vec<_>>(),
        "meta": e.meta.iter().map(|m| json!({
            "namespace": m.namespace,
            "entries": m.entries.iter().map(|(k, v)| [k, v]).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// The whole `parse --json` object.
pub fn extraction(ex: &Extraction) -> Value {
    json!({
        "envelopes": ex.envelopes.iter().map(envelope).collect::<Vec<_>>(),
        "diagnostics": ex.diagnostics,
    })
}

/// One file of `check --json`.
#[derive(Serialize)]
pub struct CheckFile<'a> {
    /// File name as given.
    pub file: &'a str,
    /// Envelopes found.
    pub envelopes: usize,
    /// Error count.
    pub errors: usize,
    /// Warning count.
    pub warnings: usize,
    /// All diagnostics, outside and inside envelopes, in line order.
    pub diagnostics: Vec<&'a Diagnostic>,
}

/// Prints a value as pretty JSON on standard output.
pub fn print(v: &impl Serialize) {
    match serde_json::to_string_pretty(v) {
        Ok(s) => out!("{s}\n"),
        Err(e) => eprintln!("crosstalk: cannot encode JSON: {e}"),
    }
}
