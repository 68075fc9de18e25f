//! The inspector's content: one selected envelope laid out as rows of a given width —
//! banner and headers, META blocks as key/value tables, the body rendered as markdown (see
//! [`crate::markdown`]), its diagnostics and signature — or its text as received / in
//! canonical form, unrendered. Built once per selection, toggle or resize (a 1 MiB body is
//! rendered once, not at every frame); views only style the rows.

use ratatui::text::Span;

use crate::app::text::{safe, safe_line, short_time, truncate, width, wrap};
use crate::store::StoredMessage;

/// What a row shows, for styling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// A section title (`Headers`, `meta: routing`, `Body`).
    Title,
    /// A header or META entry: `key` then `text`.
    Field,
    /// Body text, plain (`(no body)`).
    Body,
    /// A row of the body rendered as markdown: its styled spans in [`Row::spans`], its text
    /// without styles in [`Row::text`].
    Markdown,
    /// An error diagnostic.
    Error,
    /// A warning diagnostic.
    Warning,
    /// Raw or canonical envelope text.
    Text,
    /// An empty separator row.
    Blank,
    /// The headers folded to one line.
    Folded,
}

/// One screen row of the inspector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// How to style it.
    pub kind: RowKind,
    /// The key column (fields), padded; empty otherwise.
    pub key: String,
    /// The rest of the row, safe to print.
    pub text: String,
    /// The styled spans of a [`RowKind::Markdown`] row (made safe, like `text`); empty for
    /// the other kinds, which the view styles by their kind.
    pub spans: Vec<Span<'static>>,
}

impl Row {
    fn new(kind: RowKind, key: impl Into<String>, text: impl Into<String>) -> Row {
        Row {
            kind,
            key: key.into(),
            text: text.into(),
            spans: Vec::new(),
        }
    }
}

/// What the inspector shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum View {
    /// Headers, META tables, body, diagnostics, signature.
    #[default]
    Fields,
    /// The envelope's text as it was received.
    Received,
    /// The envelope's canonical text (what a copy carries).
    Canonical,
}

impl View {
    /// The next view in the toggle's cycle.
    pub fn next(self) -> View {
        match self {
            View::Fields => View::Received,
            View::Received => View::Canonical,
            View::Canonical => View::Fields,
        }
    }
}

/// The inspector state.
#[derive(Debug, Default)]
pub struct Inspector {
    /// What it shows.
    pub view: View,
    /// First row shown.
    pub scroll: usize,
    /// The rows for the current selection and width.
    pub rows: Vec<Row>,
    /// Which message, width, view and header folding the rows were built for.
    pub built_for: Option<(String, u16, View, bool)>,
    /// The operator's choice to show or fold the headers; `None` folds them when the pane
    /// is short (at 80×24 the body would otherwise start below the fold).
    pub headers: Option<bool>,
    /// Whether the rows shown have the headers folded to one line.
    pub folded: bool,
    /// Which text of the message is shown: 0 the stored one, n its n-th conflicting version.
    pub version: usize,
    /// How many conflicting versions the message has.
    pub versions: usize,
    /// The message whose version `version` is (kept while it stays selected).
    pub version_of: Option<String>,
    /// Notes shown above the envelope (id conflicts, the id it was pasted with), safe to print.
    pub notes: Vec<String>,
    /// The selected message's delivery (to relay, relayed how and when, awaited from whom),
    /// shown under the title; set by the app before [`Inspector::refresh`].
    pub delivery_line: Option<String>,
    /// The delivery line the rows were built with.
    built_delivery: Option<String>,
    /// The selected message's signature verdict in words, and whether it is an alarm (a bad
    /// signature, a changed key); set by the app before [`Inspector::refresh`].
    pub signature_line: Option<(String, bool)>,
    /// The signature line the rows were built with.
    built_signature: Option<(String, bool)>,
    /// Where attached files are looked for (`[attachments] dir`, else the directory of the
    /// last file attached in the composer); `None`: attachments are listed, not checked.
    pub attachments_dir: Option<std::path::PathBuf>,
    /// The directory the rows were built with.
    built_dir: Option<std::path::PathBuf>,
    /// The body's code blocks, their `lines` as rows of [`Inspector::rows`]: rendered plain
    /// and coloured as they come into view (see [`Inspector::colour_in_view`]).
    code: Vec<crate::markdown::CodeBlock>,
}

/// Below this many rows the inspector shows the body first, the headers folded to one line.
pub(crate) const FOLD_BELOW: usize = 16;

impl Inspector {
    /// Rebuilds the rows when the message, the size, the view or the folding changed, and
    /// does nothing otherwise: the app calls it after every action, so a body is rendered
    /// once per selection, not at every frame. `unfold_key` names the key that shows the
    /// headers, for the folded line. (Public for the benchmarks.)
    pub fn refresh(
        &mut self,
        msg: Option<&StoredMessage>,
        width: u16,
        height: usize,
        unfold_key: &str,
    ) {
        let fold = !self.headers.unwrap_or(height >= FOLD_BELOW);
        self.folded = fold;
        let key = msg.map(|m| (m.id.clone(), width, self.view, fold));
        if key == self.built_for
            && self.delivery_line == self.built_delivery
            && self.signature_line == self.built_signature
            && self.attachments_dir == self.built_dir
        {
            return;
        }
        self.built_delivery = self.delivery_line.clone();
        self.built_signature = self.signature_line.clone();
        self.built_dir = self.attachments_dir.clone();
        if key.as_ref().map(|k| &k.0) != self.built_for.as_ref().map(|k| &k.0) {
            self.scroll = 0;
        }
        self.code.clear();
        self.rows = match msg {
            Some(m) => match self.view {
                View::Fields => field_rows(
                    m,
                    width as usize,
                    fold.then_some(unfold_key),
                    self.attachments_dir.as_deref(),
                    &mut self.code,
                ),
                View::Received => text_rows(&m.raw, width as usize),
                View::Canonical => text_rows(&m.canonical, width as usize),
            },
            None => Vec::new(),
        };
        if let (Some((line, alarm)), View::Fields) = (&self.signature_line, self.view) {
            // The stored verdict replaces the note that the signature is not checked here.
            let title =
                (self.rows.iter()).rposition(|r| r.kind == RowKind::Title && r.text == "signature");
            if let Some(at) = title {
                self.rows.truncate(at + 1);
                let kind = if *alarm {
                    RowKind::Error
                } else {
                    RowKind::Field
                };
                for part in wrap(&safe_line(line), width as usize) {
                    self.rows.push(Row::new(kind, "", part));
                }
            }
        }
        if let (Some(line), View::Fields, false) =
            (&self.delivery_line, self.view, self.rows.is_empty())
        {
            // Under the headers when they are shown (after `stored`), else under the folded
            // line: the body keeps its place at the top of a short pane.
            let at = self
                .rows
                .iter()
                .position(|r| r.key.starts_with("stored "))
                .map_or(2.min(self.rows.len()), |i| i + 1);
            for (i, part) in crate::app::text::wrap_parts(&safe_line(line), " · ", width as usize)
                .into_iter()
                .enumerate()
            {
                self.rows.insert(at + i, Row::new(RowKind::Field, "", part));
            }
        }
        if msg.is_some() {
            let notes = self
                .notes
                .iter()
                .flat_map(|n| wrap(n, width as usize))
                .map(|part| Row::new(RowKind::Warning, "", part));
            self.rows.splice(0..0, notes);
        }
        // The blocks' rows were counted from the body's first row.
        let body = (self.rows.iter().position(|r| r.kind == RowKind::Markdown)).unwrap_or(0);
        for b in &mut self.code {
            b.lines = b.lines.start + body..b.lines.end + body;
        }
        self.built_for = key;
        self.colour_in_view(height);
    }

    /// Colours the code blocks with a row within a screen of what `height` rows from
    /// `scroll` show (a page up or down is coloured before it is seen). Each block is
    /// coloured once; rows are left where they are.
    fn colour_in_view(&mut self, height: usize) {
        let from = self.scroll.saturating_sub(height);
        let to = self.scroll.saturating_add(2 * height.max(1));
        for b in &mut self.code {
            if b.coloured() || b.lines.end <= from || b.lines.start >= to {
                continue;
            }
            let Some(rows) = self.rows.get_mut(b.lines.clone()) else {
                continue;
            };
            let mut lines: Vec<ratatui::text::Line<'static>> = rows
                .iter_mut()
                .map(|r| ratatui::text::Line::from(std::mem::take(&mut r.spans)))
                .collect();
            b.colour(&mut lines);
            for (r, l) in rows.iter_mut().zip(lines) {
                r.spans = l.spans;
            }
        }
    }

    /// Shows the headers when they are folded, folds them when shown.
    pub(crate) fn toggle_headers(&mut self) {
        self.headers = Some(self.folded);
        self.scroll = 0;
    }

    /// Scrolls by `delta` rows, within the content.
    pub(crate) fn scroll_by(&mut self, delta: isize, height: usize) {
        let max = self.rows.len().saturating_sub(height);
        self.scroll = self.scroll.saturating_add_signed(delta).min(max);
        self.colour_in_view(height);
    }
}

/// The envelope's fields, laid out in `w` cells. With `folded` (the key that unfolds them)
/// the headers are one line and the body comes right after it, so a short pane shows what
/// was said first; META blocks, diagnostics and the signature follow the body. Attachments
/// are listed, and checked against the files in `dir` when it is given. The body's code
/// blocks go to `code`, their rows counted from the body's first row.
pub(crate) fn field_rows(
    m: &StoredMessage,
    w: usize,
    folded: Option<&str>,
    dir: Option<&std::path::Path>,
    code: &mut Vec<crate::markdown::CodeBlock>,
) -> Vec<Row> {
    let env = &m.envelope;
    let mut f = Fields {
        rows: Vec::new(),
        w,
        keyw: key_width(env, w),
    };
    let title = format!(
        "{} → {}  {}",
        crate::sanitize::marked_id(&env.banner.from),
        crate::sanitize::marked_id(&env.banner.to),
        safe_line(&env.banner.version)
    );
    f.rows
        .push(Row::new(RowKind::Title, "", truncate(&title, w)));
    let status = status_text(m);
    // Personal data in the body, named by kind (the badge a reply's redaction starts from).
    let pii = env
        .body
        .as_deref()
        .map(|b| crate::protocol::pii::describe_counts(&crate::protocol::pii::redact(b).1))
        .unwrap_or_default();
    let diags = m.diagnostics.as_array().map(Vec::as_slice).unwrap_or(&[]);
    match folded {
        Some(key) => {
            let line = folded_line(env, key, &status, &pii, diags);
            f.rows
                .push(Row::new(RowKind::Folded, "", truncate(&line, w)));
            body_rows(&mut f.rows, m, w, code);
        }
        None => {
            for h in &env.headers {
                f.field(&h.key, &h.value);
            }
            f.field("status", &status);
            if !pii.is_empty() {
                f.field("pii", &pii);
            }
            f.field("stored", &short_time(&m.received_at));
        }
    }
    let audit = crate::protocol::audit::is_audit;
    for block in env.meta.iter().filter(|b| !audit(b)) {
        f.rows.push(Row::new(RowKind::Blank, "", ""));
        f.rows.push(Row::new(
            RowKind::Title,
            "",
            truncate(&format!("meta: {}", safe_line(&block.namespace)), w),
        ));
        if crate::app::panes::attachment_rows::is_attachments(block) {
            f.rows
                .extend(crate::app::panes::attachment_rows::rows(block, w, dir));
            continue;
        }
        // The sender's content warnings stand out, ahead of the body they warn of.
        if crate::protocol::safety::is_safety(&block.namespace) {
            for (k, v) in &block.entries {
                if crate::protocol::safety::is_warning_key(k) && !v.trim().is_empty() {
                    let text = format!("⚠ content warning: {}", safe_line(v.trim()));
                    for part in wrap(&text, w) {
                        f.rows.push(Row::new(RowKind::Warning, "", part));
                    }
                } else {
                    f.field(k, v);
                }
            }
            continue;
        }
        for (k, v) in &block.entries {
            f.field(k, v);
        }
    }
    let mut rows = f.rows;
    audit_rows(&mut rows, env, w);
    if folded.is_none() {
        rows.push(Row::new(RowKind::Blank, "", ""));
        rows.push(Row::new(RowKind::Title, "", "body"));
        body_rows(&mut rows, m, w, code);
    }
    diagnostic_rows(&mut rows, diags, w);
    signature_rows(&mut rows, env, w);
    rows
}

/// Rows of `key: value` fields, their keys padded to one width.
struct Fields {
    rows: Vec<Row>,
    /// The pane's width, in cells.
    w: usize,
    /// The keys' width: the widest key, at most a third of the pane.
    keyw: usize,
}

impl Fields {
    /// The field `key: value`, its value wrapped under itself.
    fn field(&mut self, key: &str, value: &str) {
        let keyw = self.keyw;
        let key = truncate(&safe_line(key), keyw);
        let pad = format!("{key}{} ", " ".repeat(keyw.saturating_sub(width(&key))));
        for (i, part) in wrap(&safe_line(value), self.w.saturating_sub(keyw + 1))
            .into_iter()
            .enumerate()
        {
            let k = if i == 0 {
                pad.clone()
            } else {
                " ".repeat(keyw + 1)
            };
            self.rows.push(Row::new(RowKind::Field, k, part));
        }
    }
}

/// The width of the keys of `env`'s headers and META entries (at least 6, the width of
/// `status`), at most a third of `w`.
fn key_width(env: &crate::protocol::Envelope, w: usize) -> usize {
    env.headers
        .iter()
        .map(|h| width(&safe_line(&h.key)))
        .chain(
            env.meta
                .iter()
                .flat_map(|b| b.entries.iter().map(|(k, _)| width(&safe_line(k)))),
        )
        .chain([6])
        .max()
        .unwrap_or(6)
        .min(w / 3)
}

/// The one line folded headers stand as: how many, the key that unfolds them, the intent,
/// the status, the personal data and how many diagnostics follow.
fn folded_line(
    env: &crate::protocol::Envelope,
    key: &str,
    status: &str,
    pii: &str,
    diags: &[serde_json::Value],
) -> String {
    let intent = env.intent_raw().map(safe_line).unwrap_or_default();
    let mut line = format!("▸ {} headers ({key})", env.headers.len());
    let pii_part = if pii.is_empty() {
        String::new()
    } else {
        format!("PII: {pii}")
    };
    // A content warning is read before the body, folded or not.
    let warned = crate::protocol::safety::reading(env)
        .filter(|s| !s.warnings.is_empty())
        .map(|_| "content warning below")
        .unwrap_or_default();
    for part in [intent.as_ref(), status, pii_part.as_str(), warned] {
        if !part.is_empty() {
            line.push_str(" · ");
            line.push_str(part);
        }
    }
    let problems = diags
        .iter()
        .filter(|d| {
            let code = d.get("code").and_then(|v| v.as_str()).unwrap_or("");
            crate::app::panes::repairs::note(code).is_none()
        })
        .count();
    if problems > 0 {
        line.push_str(&format!(" · {problems} diagnostic(s) below"));
    }
    line
}

/// The stored diagnostics: the problems, then the repairs made when the envelope was read.
fn diagnostic_rows(rows: &mut Vec<Row>, diags: &[serde_json::Value], w: usize) {
    let (repaired, problems): (Vec<&serde_json::Value>, Vec<&serde_json::Value>) = diags
        .iter()
        .partition(|d| crate::app::panes::repairs::note(code(d)).is_some());
    if !problems.is_empty() {
        rows.push(Row::new(RowKind::Blank, "", ""));
        rows.push(Row::new(
            RowKind::Title,
            "",
            format!("diagnostics ({})", problems.len()),
        ));
        for d in problems {
            let get = |k: &str| d.get(k).and_then(|v| v.as_str()).unwrap_or("");
            let num = |k: &str| d.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
            let kind = if get("severity") == "error" {
                RowKind::Error
            } else {
                RowKind::Warning
            };
            let text = format!(
                "{}:{}: {}: {} [{}]",
                num("line"),
                num("column"),
                get("severity"),
                safe_line(get("message")),
                get("code")
            );
            for part in wrap(&text, w) {
                rows.push(Row::new(kind, "", part));
            }
        }
    }
    // Repairs are done: the stored copy is the repaired one, so they are told as such,
    // never as something for the operator to fix.
    if !repaired.is_empty() {
        rows.push(Row::new(RowKind::Blank, "", ""));
        rows.push(Row::new(
            RowKind::Title,
            "",
            format!("repaired when read ({}) — nothing to do", repaired.len()),
        ));
        for d in repaired {
            let text = format!(
                "{} [{}]",
                crate::app::panes::repairs::note(code(d)).unwrap_or(""),
                code(d)
            );
            for part in wrap(&text, w) {
                rows.push(Row::new(RowKind::Field, "", part));
            }
        }
    }
}

/// The signature, as written: it is not verified here.
fn signature_rows(rows: &mut Vec<Row>, env: &crate::protocol::Envelope, w: usize) {
    rows.push(Row::new(RowKind::Blank, "", ""));
    rows.push(Row::new(RowKind::Title, "", "signature"));
    let sig = match env.sig.as_deref() {
        None | Some("") => "none (unsigned)".to_string(),
        Some(s) if s.eq_ignore_ascii_case("none") => "none (unsigned)".to_string(),
        Some(s) => format!(
            "{} — not verified here: `crosstalk verify --key KEY` checks it",
            truncate(&safe_line(s), 48)
        ),
    };
    for part in wrap(&sig, w) {
        rows.push(Row::new(RowKind::Field, "", part));
    }
}

/// The audit hops as a timeline, oldest first: who received the envelope from whom and
/// when, and whether each hop's digest still matches; a hop whose digest does not is flagged,
/// with where the change happened. Hops are unsigned claims, and the title says so.
fn audit_rows(rows: &mut Vec<Row>, env: &crate::protocol::Envelope, w: usize) {
    use crate::protocol::audit::{DigestCheck, timeline, verdict};
    let hops = timeline(env);
    if hops.is_empty() {
        return;
    }
    rows.push(Row::new(RowKind::Blank, "", ""));
    rows.push(Row::new(
        RowKind::Title,
        "",
        truncate(
            &format!("audit trail ({} hops, outside the signature)", hops.len()),
            w,
        ),
    ));
    for (i, h) in hops.iter().enumerate() {
        let by = h.hop.received_by.as_deref().map_or("?".into(), safe_line);
        let from = h.hop.previous_hop.as_deref().map_or("?".into(), safe_line);
        let mut text = format!("{}. {from} → {by}", i + 1);
        if let Some(at) = &h.hop.received_at {
            text.push_str(&format!(" · received {}", short_time(at)));
        }
        if let Some(at) = &h.hop.processed_at {
            text.push_str(&format!(" · sent on {}", short_time(at)));
        }
        let (kind, digest) = match h.digest_check {
            DigestCheck::Matches => (RowKind::Field, "digest ✓"),
            DigestCheck::Differs => (RowKind::Warning, "digest ✗ does not match"),
            DigestCheck::Missing => (RowKind::Field, "no digest"),
            DigestCheck::Unreadable => (RowKind::Warning, "digest unreadable"),
        };
        text.push_str(&format!(" · {digest}"));
        for part in wrap(&text, w) {
            rows.push(Row::new(kind, "", part));
        }
    }
    if let Some(chain) = hops.last().and_then(|h| h.hop.chain.as_deref()) {
        for part in wrap(&format!("chain: {}", safe_line(chain)), w) {
            rows.push(Row::new(RowKind::Field, "", part));
        }
    }
    if let Some(v) = verdict(&hops) {
        for part in wrap(&format!("⚠ the content {v}"), w) {
            rows.push(Row::new(RowKind::Warning, "", part));
        }
    }
}

/// The message's status in the operator's words: where it stands, and for a received
/// message nothing more (its direction says the same thing again).
fn status_text(m: &StoredMessage) -> String {
    // A composed message copied out is "sent"; whether it still awaits a reply is the
    // delivery line's to say (by its intent: a RESPOND awaits none).
    let status = match m.status.as_str() {
        "awaiting_reply" if m.direction == "composed" => "sent".to_string(),
        s => s.replace('_', " "),
    };
    if m.direction == "composed" {
        format!("{status} (written here)")
    } else {
        status
    }
}

/// A stored diagnostic's code.
fn code(d: &serde_json::Value) -> &str {
    d.get("code").and_then(|v| v.as_str()).unwrap_or("")
}

/// The body rendered as markdown for `w` cells: bodies are mostly markdown, and read as
/// their author meant them (a hard-wrapped paragraph reflowed, a table in columns, code set
/// apart) rather than as the markup; `v` shows the text as written. The code is left plain,
/// its blocks in `code`, to be coloured as it comes into view: a long body with much code
/// is shown at once.
fn body_rows(
    rows: &mut Vec<Row>,
    m: &StoredMessage,
    w: usize,
    code: &mut Vec<crate::markdown::CodeBlock>,
) {
    match &m.envelope.body {
        Some(body) => {
            let rendered = crate::markdown::render_uncoloured(body, w);
            *code = rendered.blocks;
            rows.extend(rendered.lines.into_iter().map(|line| {
                let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
                Row {
                    kind: RowKind::Markdown,
                    key: String::new(),
                    text,
                    spans: line.spans,
                }
            }));
        }
        None => rows.push(Row::new(RowKind::Body, "", "(no body)")),
    }
}

/// An envelope text wrapped to `w` cells (the pane's title names the view).
pub(crate) fn text_rows(text: &str, w: usize) -> Vec<Row> {
    let mut rows = Vec::new();
    for line in safe(text).lines() {
        for part in wrap(line, w) {
            rows.push(Row::new(RowKind::Text, "", part));
        }
    }
    rows
}
