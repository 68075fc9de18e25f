//! Changes that replace a composer box's whole text at once — `M-r`'s redaction (the body
//! and its `PII:` header), the body back from `$EDITOR`, an attachment written into META —
//! as steps that undo and redo like typing.
//!
//! Each text box keeps its own undo history, and a box whose text is replaced starts a new
//! one; the box as it was, history and cursor included, is kept in the step. Undo in a box
//! first takes back what was typed in it since the replacement; when there is nothing more,
//! the next undo takes back the replacement itself: every box it replaced at once (the body
//! and META of a redaction) is put back, so it is one step. The boxes must still hold what
//! the step left in them, or the text typed in one since would be lost: then the step says
//! which box to undo first. Redo is the same walk forward; a new replacement ends it.

use crate::app::writing::composer::{Composer, Field};
use crate::app::writing::text_box::TextBox;

/// Replacements remembered for undo (each holds the boxes it replaced, so they are bounded).
const KEPT: usize = 20;

/// One change that replaced whole boxes.
#[derive(Debug, Clone)]
pub(crate) struct Replacement {
    /// What it is called in the status line: "the redaction".
    pub what: &'static str,
    /// Each box it replaced: the box to put back (text, cursor, its own history), and the
    /// lines the box in the composer must still hold for that to lose nothing.
    boxes: Vec<(Field, TextBox, Vec<String>)>,
}

impl Replacement {
    /// The boxes it replaced.
    pub(crate) fn fields(&self) -> impl Iterator<Item = Field> + '_ {
        self.boxes.iter().map(|(f, ..)| *f)
    }
}

/// The replacements to undo, newest last, and those undone that redo brings back.
#[derive(Debug, Clone, Default)]
pub struct Steps {
    undo: Vec<Replacement>,
    redo: Vec<Replacement>,
}

/// What an undo or redo did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stepped {
    /// A change typed in the focused box.
    Typing,
    /// A whole replacement (its name, and the boxes it put back).
    Replacement(&'static str, Vec<Field>),
    /// The replacement is next, but `Field` was changed since and must be undone first.
    Blocked(&'static str, Field),
    /// Nothing to undo (redo) in the focused box.
    Nothing,
}

impl Composer {
    /// The box of `field` (none for the intent picker).
    pub(crate) fn text_box(&mut self, field: Field) -> Option<&mut TextBox> {
        match field {
            Field::Body => Some(&mut self.body),
            Field::From => Some(&mut self.from),
            Field::To => Some(&mut self.to),
            Field::Context => Some(&mut self.context),
            Field::Meta => Some(&mut self.meta),
            Field::Intent => None,
        }
    }

    /// The lines of the box of `field`.
    fn lines_of(&self, field: Field) -> Option<&[String]> {
        match field {
            Field::Body => Some(self.body.lines()),
            Field::Meta => Some(self.meta.lines()),
            Field::From => Some(self.from.lines()),
            Field::To => Some(self.to.lines()),
            Field::Context => Some(self.context.lines()),
            Field::Intent => None,
        }
    }

    /// Replaces the body and/or META text as one step `what` that undo takes back (see the
    /// module's doc); the cursor goes to the end of each, and a new body takes the focus.
    pub fn replace(&mut self, what: &'static str, body: Option<&str>, meta: Option<&str>) {
        let mut step = Replacement {
            what,
            boxes: Vec::new(),
        };
        for (field, text) in [(Field::Body, body), (Field::Meta, meta)] {
            let Some(text) = text else { continue };
            let fresh = crate::app::writing::composer::multi_line_box(text);
            let lines = fresh.lines().to_vec();
            if let Some(b) = self.text_box(field) {
                let old = std::mem::replace(b, fresh);
                step.boxes.push((field, old, lines));
            }
        }
        if step.boxes.is_empty() {
            return;
        }
        self.steps.redo.clear();
        if self.steps.undo.len() == KEPT {
            self.steps.undo.remove(0);
        }
        self.steps.undo.push(step);
        let focus = if body.is_some() {
            Field::Body
        } else {
            self.focus
        };
        self.set_focus(focus);
        self.validate();
    }

    /// Undo (or, with `redo`, redo) in the focused box: its own last change, else the last
    /// replacement that touched it.
    pub fn step(&mut self, redo: bool) -> Stepped {
        let field = self.focus;
        let Some(b) = self.text_box(field) else {
            return Stepped::Nothing;
        };
        if if redo { b.redo() } else { b.undo() } {
            self.validate();
            return Stepped::Typing;
        }
        let stack = if redo {
            &self.steps.redo
        } else {
            &self.steps.undo
        };
        let Some(at) = stack.iter().rposition(|r| r.fields().any(|f| f == field)) else {
            return Stepped::Nothing;
        };
        let what = stack[at].what;
        let changed = stack[at]
            .boxes
            .iter()
            .find(|(f, _, lines)| self.lines_of(*f) != Some(lines.as_slice()))
            .map(|(f, ..)| *f);
        if let Some(f) = changed {
            // The focused box itself differs when more was typed than its history keeps.
            return if f == field {
                Stepped::Nothing
            } else {
                Stepped::Blocked(what, f)
            };
        }
        let step = if redo {
            self.steps.redo.remove(at)
        } else {
            self.steps.undo.remove(at)
        };
        let mut back = Replacement {
            what,
            boxes: Vec::new(),
        };
        let mut fields = Vec::new();
        for (f, saved, _) in step.boxes {
            let lines = saved.lines().to_vec();
            if let Some(b) = self.text_box(f) {
                let now = std::mem::replace(b, saved);
                back.boxes.push((f, now, lines));
                fields.push(f);
            }
        }
        if redo {
            self.steps.undo.push(back);
        } else {
            self.steps.redo.push(back);
        }
        // The boxes put back keep the cursor look they had; the focus decides it.
        self.set_focus(field);
        self.validate();
        Stepped::Replacement(what, fields)
    }
}
