//! The composer: a small header form (from, to, intent picker, context, META blocks) above a
//! body editor, validated live and rendered exactly as it will be copied.
//!
//! The fields are kept as typed in a [`Form`], which is what a draft saves, so a draft comes
//! back exactly as it was left even when it does not parse yet.

use ratatui_textarea::TextArea;

use crate::app::writing::text_box::TextBox;
use serde::{Deserialize, Serialize};

use crate::protocol::{self, Diagnostic, Envelope, Intent, MetaBlock};
use crate::store::StoredMessage;

/// The fields of the form, in Tab order (the body is first: the cursor starts there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The body editor.
    Body,
    /// Sender.
    From,
    /// Recipient.
    To,
    /// The intent picker.
    Intent,
    /// The context header.
    Context,
    /// META blocks, written as in an envelope.
    Meta,
}

impl Field {
    const ORDER: [Field; 6] = [
        Field::Body,
        Field::From,
        Field::To,
        Field::Intent,
        Field::Context,
        Field::Meta,
    ];

    /// The next field (or previous, with `back`).
    pub fn step(self, back: bool) -> Field {
        let i = Self::ORDER.iter().position(|f| *f == self).unwrap_or(0);
        let n = Self::ORDER.len();
        Self::ORDER[if back { (i + n - 1) % n } else { (i + 1) % n }]
    }
}

/// The META templates `meta_template` adds, in turn.
pub(crate) const META_TEMPLATES: [&str; 2] = [
    "meta: routing\nX-Route: \nX-Reply-To: \nX-Priority: normal\nX-Delivery: copy_paste",
    "meta: privacy\nPII: none\nConsent: explicit_yes\nScope: general",
];

/// Everything the operator typed, as a draft keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Form {
    /// Banner version (`v1`, `v1.1`).
    pub version: String,
    /// Sender.
    pub from: String,
    /// Recipient.
    pub to: String,
    /// The `user` header.
    pub user: String,
    /// The `session` header, when the conversation has one.
    pub session: Option<String>,
    /// Thread id.
    pub thread: String,
    /// The message answered.
    pub parent: Option<String>,
    /// This message's id.
    pub message: String,
    /// Intent as picked.
    pub intent: String,
    /// Context.
    pub context: String,
    /// META blocks as typed.
    pub meta: String,
    /// Body as typed.
    pub body: String,
}

impl Form {
    /// The form of the desk's reply to `original` (see `store::reply_envelope` for the
    /// rules).
    pub fn reply(original: &StoredMessage, desk: &str, user: &str, message_id: String) -> Form {
        let env = crate::store::reply_envelope(original, desk, None, "", user, message_id);
        Form::from_envelope(&env)
    }

    /// The form of a new envelope in a new thread: the same form `crosstalk new` writes
    /// (banner `v1`, a fresh `session`).
    pub(crate) fn new_envelope(user: &str, thread: String, message: String) -> Form {
        Form {
            version: "v1".into(),
            from: String::new(),
            to: String::new(),
            user: user.into(),
            session: Some(crate::ids::new_session()),
            thread,
            parent: None,
            message,
            intent: "REQUEST".into(),
            context: String::new(),
            meta: String::new(),
            body: String::new(),
        }
    }

    /// The fields of an envelope (its META blocks are not carried over: the form holds them
    /// as typed text).
    pub(crate) fn from_envelope(env: &Envelope) -> Form {
        Form {
            version: env.banner.version.clone(),
            from: env.banner.from.clone(),
            to: env.banner.to.clone(),
            user: env.user().unwrap_or_default().into(),
            session: env.session().map(str::to_string),
            thread: env.thread().unwrap_or_default().into(),
            parent: env.parent().map(str::to_string),
            message: env.message().unwrap_or_default().into(),
            intent: env.intent_raw().unwrap_or("REQUEST").into(),
            context: env.context().unwrap_or_default().into(),
            meta: String::new(),
            body: env.body.clone().unwrap_or_default(),
        }
    }

    /// The envelope these fields make, and what is wrong with the META text.
    pub fn envelope(&self) -> (Envelope, Vec<String>) {
        let typed = |s: &str| protocol::typed_header_value(s).trim().to_string();
        let mut env = Envelope::new(typed(&self.from), typed(&self.to));
        env.banner.version = self.version.clone();
        env.set_header("user", typed(&self.user));
        if let Some(s) = &self.session {
            env.set_header("session", s.as_str());
        }
        env.set_header("thread", self.thread.as_str());
        if let Some(p) = &self.parent {
            env.set_header("parent", p.as_str());
        }
        env.set_header("message", self.message.as_str());
        let context = typed(&self.context);
        if !context.is_empty() {
            env.set_header("context", &context);
        }
        env.set_header("intent", self.intent.as_str());
        let (meta, problems) = parse_meta(&self.meta);
        env.meta = meta;
        env.body = Some(self.body.clone());
        env.sig = Some("none".into());
        (env, problems)
    }
}

/// Reads META blocks written as in an envelope (`meta: ns` then `Key: value` lines);
/// returns the blocks and a located note for each line that is neither.
pub(crate) fn parse_meta(text: &str) -> (Vec<MetaBlock>, Vec<String>) {
    let mut blocks: Vec<MetaBlock> = Vec::new();
    let mut problems = Vec::new();
    for (n, line) in text.lines().enumerate() {
        // A META line is read like a header (see `Form::envelope`).
        let line = protocol::typed_header_value(line);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        match line.split_once(':') {
            Some((k, v)) if k.trim().eq_ignore_ascii_case("meta") && !v.trim().is_empty() => blocks
                .push(MetaBlock {
                    namespace: v.trim().to_string(),
                    entries: Vec::new(),
                }),
            Some((k, v)) if !k.trim().is_empty() && !k.contains(' ') => match blocks.last_mut() {
                Some(b) => b.entries.push((k.trim().into(), v.trim().into())),
                None => problems.push(format!(
                    "META line {}: start a block with `meta: <namespace>` first",
                    n + 1
                )),
            },
            _ => problems.push(format!(
                "META line {}: write `Key: value` (or `meta: <namespace>`)",
                n + 1
            )),
        }
    }
    (blocks, problems)
}

/// The core intents, for the picker (a static, so their names live as long as the app).
/// The intents the picker offers.
pub fn intents() -> impl Iterator<Item = &'static str> {
    Intent::CORE.iter().map(Intent::as_str)
}

/// The composer's state.
#[derive(Debug)]
pub struct Composer {
    /// Fields not edited in a text box (ids, user, version, intent).
    pub form: Form,
    /// Sender box.
    pub from: TextBox,
    /// Recipient box.
    pub to: TextBox,
    /// Context box.
    pub context: TextBox,
    /// META box.
    pub meta: TextBox,
    /// Body editor.
    pub body: TextBox,
    /// The focused field.
    pub focus: Field,
    /// The envelope as it will be copied (canonical form, before any fence).
    pub preview: String,
    /// Live validation of `preview`, and META notes.
    pub diagnostics: Vec<Diagnostic>,
    /// Notes on the META text.
    pub meta_problems: Vec<String>,
    /// When the draft was last saved.
    pub saved_at: Option<String>,
    /// Why the latest text is not saved yet (the database was busy or full); it is kept
    /// in memory and retried.
    pub unsaved: Option<String>,
    /// The first line of the message answered, for the title.
    pub replying_to: Option<String>,
    /// Which META template comes next.
    pub next_template: usize,
    /// The address book: a contact's name typed in from or to becomes its address.
    pub book: crate::contacts::AddressBook,
    /// For a conversation's first envelope (`N`): the primer copied before it.
    pub primer: Option<String>,
    /// The envelope text a first C-y was warned about (personal data without consent): a
    /// second C-y on the same text copies it.
    pub pii_confirmed: Option<String>,
    /// Whole-box replacements (redaction, `$EDITOR`, attachments) as undo and redo steps.
    pub steps: crate::app::writing::composer_steps::Steps,
    /// The first row the body box shows (see `editor_rows`: the app scrolls it).
    pub body_top: usize,
    /// The first row the META box shows.
    pub meta_top: usize,
    /// The cell a run of vertical moves started from, which each of them aims for.
    pub goal: Option<usize>,
    /// While the copy is shown over the whole screen (`C-o`): the first row shown.
    pub copy_view: Option<usize>,
}

/// A multi-line box (the body, META) holding `text`, its cursor at the end.
pub(crate) fn multi_line_box(text: &str) -> TextBox {
    let mut t = boxed(text, false);
    t.move_cursor(ratatui_textarea::CursorMove::Bottom);
    t.move_cursor(ratatui_textarea::CursorMove::End);
    t
}

fn boxed(text: &str, single_line: bool) -> TextBox {
    let lines: Vec<String> = if single_line {
        vec![text.replace('\n', " ")]
    } else {
        text.split('\n').map(str::to_string).collect()
    };
    let mut t = TextArea::new(lines);
    t.set_cursor_line_style(ratatui::style::Style::default());
    // No wrap mode: the multi-line boxes are laid out and drawn by `editor_rows` and
    // `ui::editor`, which wrap between words.
    TextBox::new(t)
}

impl Composer {
    /// A composer holding `form`, validated.
    pub fn new(form: Form, replying_to: Option<String>) -> Composer {
        let mut c = Composer {
            from: boxed(&form.from, true),
            to: boxed(&form.to, true),
            context: boxed(&form.context, true),
            meta: boxed(&form.meta, false),
            body: boxed(&form.body, false),
            form,
            focus: Field::Body,
            preview: String::new(),
            diagnostics: Vec::new(),
            meta_problems: Vec::new(),
            saved_at: None,
            unsaved: None,
            replying_to,
            next_template: 0,
            book: Default::default(),
            primer: None,
            pii_confirmed: None,
            steps: Default::default(),
            body_top: 0,
            meta_top: 0,
            goal: None,
            copy_view: None,
        };
        c.body.move_cursor(ratatui_textarea::CursorMove::Bottom);
        c.body.move_cursor(ratatui_textarea::CursorMove::End);
        c.set_focus(Field::Body);
        c.validate();
        c
    }

    /// Moves the focus to `field`; only the focused box shows a cursor.
    pub(crate) fn set_focus(&mut self, field: Field) {
        self.focus = field;
        let on = ratatui::style::Style::default().add_modifier(ratatui::style::Modifier::REVERSED);
        let off = ratatui::style::Style::default();
        for (f, b) in [
            (Field::Body, &mut self.body),
            (Field::From, &mut self.from),
            (Field::To, &mut self.to),
            (Field::Context, &mut self.context),
            (Field::Meta, &mut self.meta),
        ] {
            b.set_cursor_style(if f == field { on } else { off });
        }
    }

    /// The text box that has the focus (none for the intent picker).
    pub(crate) fn focused_box(&mut self) -> Option<&mut TextBox> {
        self.text_box(self.focus)
    }

    /// The envelope the fields make, contact names resolved to their addresses, and what is
    /// wrong with the META text.
    pub fn envelope(&self) -> (Envelope, Vec<String>) {
        let (mut env, problems) = self.form.envelope();
        env.banner.from = self.book.resolve(&env.banner.from);
        env.banner.to = self.book.resolve(&env.banner.to);
        (env, problems)
    }

    /// Takes the address book and validates again with it.
    pub(crate) fn with_book(mut self, book: crate::contacts::AddressBook) -> Composer {
        self.book = book;
        self.validate();
        self
    }

    /// Copies the boxes into the form and validates the envelope they make.
    pub fn validate(&mut self) {
        self.form.from = self.from.lines().join(" ");
        self.form.to = self.to.lines().join(" ");
        self.form.context = self.context.lines().join(" ");
        self.form.meta = self.meta.lines().join("\n");
        self.form.body = self.body.lines().join("\n");
        let (env, problems) = self.envelope();
        self.preview = protocol::render(&env);
        self.meta_problems = problems;
        self.diagnostics = protocol::extract(&self.preview, &protocol::Options::default())
            .envelopes
            .into_iter()
            .next()
            .map(|p| p.diagnostics)
            .unwrap_or_default();
        let changed = |v: &str| {
            v.lines()
                .any(|l| protocol::typed_header_value(l).chars().count() != l.chars().count())
        };
        let left_out: Vec<&str> = [
            ("from", &self.form.from),
            ("to", &self.form.to),
            ("context", &self.form.context),
            ("META", &self.form.meta),
        ]
        .into_iter()
        .filter(|(_, v)| changed(v))
        .map(|(name, _)| name)
        .collect();
        if !left_out.is_empty() {
            self.diagnostics.insert(
                0,
                Diagnostic::new(
                    protocol::Code::InvisibleChars,
                    1,
                    1,
                    format!(
                        "control or invisible characters in `{}` are left out of the envelope, as shown below",
                        left_out.join("`, `")
                    ),
                ),
            );
        }
        if self.form.from.trim().is_empty() || self.form.to.trim().is_empty() {
            self.diagnostics.insert(
                0,
                Diagnostic::new(
                    protocol::Code::BadAddress,
                    1,
                    1,
                    "fill in `from` and `to` (Tab moves between fields)",
                ),
            );
        }
    }

    /// Whether the envelope can be sent: no errors and the META text is all understood.
    pub(crate) fn is_valid(&self) -> bool {
        self.meta_problems.is_empty() && !self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// Moves the intent picker by `delta`.
    pub(crate) fn pick_intent(&mut self, delta: isize) {
        let all: Vec<&str> = intents().collect();
        let cur = all
            .iter()
            .position(|i| i.eq_ignore_ascii_case(&self.form.intent))
            .unwrap_or(0);
        let n = all.len() as isize;
        self.form.intent = all[((cur as isize + delta).rem_euclid(n)) as usize].to_string();
        self.validate();
    }

    /// Jumps to the intent starting with `letter` (in any case): the next one after the
    /// current when the current starts with it too (`R` again goes from REQUEST to RESPOND),
    /// else the first in the registry's order. Returns whether an intent starts with it.
    pub(crate) fn pick_intent_by_letter(&mut self, letter: char) -> bool {
        let all: Vec<&str> = intents().collect();
        let starts = |i: &str| {
            i.chars()
                .next()
                .is_some_and(|c| c.eq_ignore_ascii_case(&letter))
        };
        let cur = all
            .iter()
            .position(|i| i.eq_ignore_ascii_case(&self.form.intent));
        let after = match cur {
            Some(c) if starts(all[c]) => c + 1,
            _ => 0,
        };
        let next = (0..all.len())
            .map(|k| (after + k) % all.len())
            .find(|&k| starts(all[k]));
        let Some(k) = next else {
            return false;
        };
        self.form.intent = all[k].to_string();
        self.validate();
        true
    }

    /// Adds the next META template and focuses the META box.
    pub(crate) fn add_meta_template(&mut self) {
        let (from, to) = (self.form.from.trim(), self.form.to.trim());
        let t = META_TEMPLATES[self.next_template % META_TEMPLATES.len()];
        // Routing starts from the banner's own addresses when they are filled in.
        let t = if from.is_empty() || to.is_empty() {
            t.to_string()
        } else {
            t.replace("X-Route: \n", &format!("X-Route: {from} → {to}\n"))
                .replace("X-Reply-To: \n", &format!("X-Reply-To: {from}\n"))
        };
        self.next_template += 1;
        self.meta.move_cursor(ratatui_textarea::CursorMove::Bottom);
        self.meta.move_cursor(ratatui_textarea::CursorMove::End);
        let t = if self.meta.is_empty() {
            t
        } else {
            format!("\n{t}")
        };
        self.meta.insert(&t);
        self.set_focus(Field::Meta);
        self.validate();
    }

    /// Replaces the META text as a step undo takes back (an attachment's entry).
    pub fn set_meta(&mut self, what: &'static str, text: &str) {
        self.replace(what, None, Some(text));
    }

    /// Replaces the body as a step undo takes back (the text back from `$EDITOR`).
    pub(crate) fn set_body(&mut self, what: &'static str, text: &str) {
        let text = text.strip_suffix('\n').unwrap_or(text);
        self.replace(what, Some(text), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_text_is_read_with_located_notes() {
        let (blocks, problems) =
            parse_meta("meta: routing\nX-Route: a → b\n\nmeta: privacy\nPII: none\nnonsense");
        assert_eq!(blocks.len(), 2);
        assert_eq!(
            blocks[0].entries,
            [("X-Route".to_string(), "a → b".to_string())]
        );
        assert_eq!(
            problems,
            ["META line 6: write `Key: value` (or `meta: <namespace>`)"]
        );
        let (_, p) = parse_meta("PII: none");
        assert!(p[0].contains("line 1"));
    }

    #[test]
    fn header_fields_keep_no_control_or_invisible_characters() {
        let mut form = Form::new_envelope(
            "op",
            "01JD0000000000000000000000".into(),
            "01JD0000000000000000000001".into(),
        );
        // As typed, or as a reply or an ERROR takes them from a received envelope.
        form.from = "Claude\u{200B}".into();
        form.to = "Chat\u{1b}[31mGPT".into();
        form.context =
            "東京 e\u{200b}z\u{200d}w \u{1b}]52;c;eHl6\u{7}\u{202e}x\u{a0}y\u{9b}".into();
        form.meta = "meta: error\nCode: E-FORMAT\nReason: bad \u{1b}[2J\u{200b}banner".into();
        let mut c = Composer::new(form, None);
        c.body.insert_str("hello");
        c.validate();
        let (env, _) = c.envelope();
        assert_eq!(env.context(), Some("東京 ezw ]52;c;eHl6x y"));
        assert_eq!(env.meta[0].entries[1].1, "bad [2Jbanner");
        assert_eq!(
            (env.banner.from.as_str(), env.banner.to.as_str()),
            ("Claude", "Chat[31mGPT")
        );
        assert!(
            !c.preview.chars().any(|ch| ch.is_control() && ch != '\n'),
            "{:?}",
            c.preview
        );
        let note = &c.diagnostics[0];
        assert_eq!(note.code, protocol::Code::InvisibleChars);
        assert!(
            note.message.contains("`from`, `to`, `context`, `META`"),
            "{}",
            note.message
        );
        // What the recipient reads is what the sender stores.
        let read = protocol::extract(&c.preview, &protocol::Options::default());
        assert_eq!(read.envelopes[0].envelope.context(), env.context());
        assert!(
            !read.envelopes[0]
                .diagnostics
                .iter()
                .any(|d| d.code == protocol::Code::InvisibleChars),
            "{:?}",
            read.envelopes[0].diagnostics
        );
    }

    #[test]
    fn new_envelope_validates_live() {
        let mut c = Composer::new(
            Form::new_envelope(
                "op",
                "01JD0000000000000000000000".into(),
                "01JD0000000000000000000001".into(),
            ),
            None,
        );
        assert!(!c.is_valid(), "from/to missing");
        c.from.insert_str("Claude");
        c.to.insert_str("ChatGPT");
        c.body.insert_str("hello\nworld");
        c.validate();
        assert!(c.is_valid(), "{:?}", c.diagnostics);
        assert!(
            c.preview.starts_with("[[Claude→ChatGPT v1]]"),
            "{}",
            c.preview
        );
        assert!(c.preview.contains("  hello\n  world"));
        c.pick_intent(1);
        assert_eq!(c.form.intent, "RESPOND");
        c.pick_intent(-2);
        assert_eq!(c.form.intent, "CLOSE");
        // By its first letter, in any case; the same letter again goes to the next one.
        assert!(c.pick_intent_by_letter('P'));
        assert_eq!(c.form.intent, "POLL");
        assert!(c.pick_intent_by_letter('r'));
        assert_eq!(c.form.intent, "REQUEST");
        assert!(c.pick_intent_by_letter('R'));
        assert_eq!(c.form.intent, "RESPOND");
        assert!(c.pick_intent_by_letter('R'));
        assert_eq!(c.form.intent, "REVOKE");
        assert!(c.pick_intent_by_letter('R'));
        assert_eq!(c.form.intent, "REQUEST");
        assert!(!c.pick_intent_by_letter('Z'));
        assert_eq!(c.form.intent, "REQUEST");
        c.add_meta_template();
        assert_eq!(c.focus, Field::Meta);
        assert!(c.preview.contains("meta: routing"));
    }

    #[test]
    fn fields_cycle() {
        let mut f = Field::Body;
        for _ in 0..6 {
            f = f.step(false);
        }
        assert_eq!(f, Field::Body);
        assert_eq!(Field::Body.step(true), Field::Meta);
    }
}
