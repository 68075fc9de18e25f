//! `crosstalk queue`: what is left to relay, to answer and to chase, oldest first per section.

use std::io::Write;
use std::path::Path;

use super::output::Stdout;
use super::{Failure, store_cmd};
use crate::sanitize::sanitize_line;
use crate::store::Section;

/// Prints the queue: `limit` rows per section, as text or JSON. The operator's addresses from
/// the config decide what is "addressed to me" (see `[operator]`).
pub fn queue(
    db: Option<&Path>,
    operator: &[String],
    limit: usize,
    as_json: bool,
) -> Result<u8, Failure> {
    let mut store = store_cmd::open_existing(db)?;
    store
        .set_operator_addresses(operator)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let queue = store
        .queue(limit)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let mut out = Stdout::new();
    if as_json {
        super::output::print_json(&mut out, &queue)?;
        out.finish()?;
        return Ok(0);
    }
    let now = jiff::Timestamp::now();
    for s in &queue.sections {
        let more = if s.more { "+" } else { "" };
        let _ = writeln!(out, "{} ({}{more})", s.section.title(), s.count);
        for r in &s.rows {
            let age = crate::app::text::age(&r.since, now);
            let mut line = format!(
                "  {:>4}  {}  {}→{}  {}  {}",
                age,
                sanitize_line(&r.message),
                sanitize_line(&r.from),
                sanitize_line(&r.to),
                sanitize_line(r.intent.as_deref().unwrap_or("-")),
                sanitize_line(&r.first_line),
            );
            if s.section == Section::Awaiting && !r.awaiting_from.is_empty() {
                let from: Vec<String> = r
                    .awaiting_from
                    .iter()
                    .map(|f| sanitize_line(f).into_owned())
                    .collect();
                line.push_str(&format!("  [awaiting {}", from.join(", ")));
                if let Some(n) = r.awaiting_needed.filter(|n| *n > 1) {
                    line.push_str(&format!(", {n} answers needed"));
                }
                line.push(']');
            }
            if let Some(c) = r.carried.filter(|c| c.partial() && r.relayed_at.is_none()) {
                let words = crate::app::text::carried_words(s.section, c);
                line.push_str(&format!("  [{words}]"));
            } else if let (Some(at), Some(how)) = (&r.relayed_at, &r.relay_method) {
                line.push_str(&format!(
                    "  [{}]",
                    sanitize_line(&crate::app::text::relay_words(at, how, now))
                ));
            }
            let _ = writeln!(out, "{line}");
        }
    }
    out.finish()?;
    Ok(0)
}
