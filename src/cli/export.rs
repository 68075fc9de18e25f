//! Writing a thread out: canonical envelopes (to re-import or relay), JSON (for scripts) or
//! markdown (for people).

use serde_json::{Value, json};

use super::json::stored;
use crate::sanitize::{sanitize, sanitize_line};
use crate::store::ThreadView;

/// Export formats.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// Every envelope in canonical form, tree order, META kept; importing it into an empty
    /// database rebuilds the same tree with the same ids.
    Crosstalk,
    /// The `show --json` object.
    Json,
    /// A readable transcript.
    Markdown,
}

/// Replies are indented one step per level down to this depth; deeper ones stay at this
/// indentation and say their depth as a number, as mail clients do. Indenting every level
/// made output quadratic in a chain's length: a 20 000-deep chain printed hundreds of
/// megabytes.
pub const MAX_INDENT: usize = 8;

/// How many indentation steps a message at `depth` gets, and the `[depth N]` label that
/// stands in for the rest when it is deeper than [`MAX_INDENT`].
pub fn indent(depth: usize) -> (usize, Option<String>) {
    if depth > MAX_INDENT {
        (MAX_INDENT, Some(format!("[depth {depth}]")))
    } else {
        (depth, None)
    }
}

/// `{"id", "context", "messages": [...]}` with messages in tree order.
pub fn thread_json(t: &ThreadView) -> Value {
    json!({
        "id": t.id,
        "context": t.context,
        "messages": t.messages.iter().map(stored).collect::<Vec<_>>(),
    })
}

/// The thread in `format`.
pub fn render(t: &ThreadView, format: Format) -> String {
    match format {
        Format::Crosstalk => t.canonical_text(),
        Format::Json => {
            let mut buf = Vec::new();
            // Writing to memory cannot fail, and the value holds only strings and numbers.
            let _ = super::json::write(&mut buf, &thread_json(t));
            buf.push(b'\n');
            String::from_utf8_lossy(&buf).into_owned()
        }
        Format::Markdown => markdown(t),
    }
}

/// A transcript for people: one section per message in tree order, replies marked with
/// their depth, bodies quoted, META as lists. Text is sanitized: it came from elsewhere.
fn markdown(t: &ThreadView) -> String {
    let mut out = String::new();
    let title = t.context.as_deref().unwrap_or("Untitled thread");
    out.push_str(&format!("# {}\n\n", sanitize_line(title)));
    out.push_str(&format!(
        "Thread `{}`, {} messages.\n",
        t.id,
        t.messages.len()
    ));
    for m in &t.messages {
        let e = &m.envelope;
        let arrow = match indent(m.depth) {
            (0, _) => String::new(),
            (steps, None) => format!("{} ", "↳".repeat(steps)),
            (steps, Some(label)) => format!("{} {label} ", "↳".repeat(steps)),
        };
        out.push_str(&format!(
            "\n## {arrow}{} → {} · {} · {}\n\n",
            sanitize_line(&e.banner.from),
            sanitize_line(&e.banner.to),
            sanitize_line(m.intent.as_deref().unwrap_or("(no intent)")),
            m.received_at
                .replace('T', " ")
                .get(..16)
                .unwrap_or(&m.received_at),
        ));
        out.push_str(&format!("Message `{}`", m.id));
        if let Some(p) = &m.parent {
            out.push_str(&format!(", in reply to `{p}`"));
        }
        out.push_str(&format!(", {}.\n\n", m.status.replace('_', " ")));
        for block in &e.meta {
            out.push_str(&format!("- **{}**:", sanitize_line(&block.namespace)));
            for (k, v) in &block.entries {
                out.push_str(&format!(" {}: {};", sanitize_line(k), sanitize_line(v)));
            }
            out.push('\n');
        }
        if !e.meta.is_empty() {
            out.push('\n');
        }
        match &e.body {
            Some(b) if !b.is_empty() => {
                for line in sanitize(b).split('\n') {
                    out.push_str(if line.is_empty() { ">" } else { "> " });
                    out.push_str(line);
                    out.push('\n');
                }
            }
            _ => out.push_str("*(empty body)*\n"),
        }
    }
    out
}
