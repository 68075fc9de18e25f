//! Where each part of the composer is, for a terminal size: the view draws into these
//! areas, and the app moves the cursor and scrolls the body and META boxes over the same
//! ones, so a vertical move and what is drawn cannot disagree about a box's width.

use ratatui::layout::{Constraint, Layout, Rect};

use crate::app::writing::composer::{Composer, Field};
use crate::app::writing::editor_rows;

/// The composer's regions (the META and body boxes include their borders).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ComposerAreas {
    /// What is composed, and whether the draft is saved.
    pub title: Rect,
    /// The header form and the two boxes.
    pub form: Rect,
    /// The envelope as it will be copied.
    pub preview: Rect,
    /// Key hints.
    pub hints: Rect,
    /// The status line.
    pub status: Rect,
    /// The sender field.
    pub from: Rect,
    /// The recipient field.
    pub to: Rect,
    /// The intent picker.
    pub intent: Rect,
    /// The context field.
    pub context: Rect,
    /// The ids line.
    pub ids: Rect,
    /// The META box.
    pub meta: Rect,
    /// The body box.
    pub body: Rect,
}

impl ComposerAreas {
    /// The regions of the composer `c` in a `size` terminal.
    pub fn new(size: Rect, c: &Composer) -> ComposerAreas {
        let [title, main, hints, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(8),
            Constraint::Length(1),
            Constraint::Length(1),
        ])
        .areas(size);
        let (form, preview) = if c.copy_view.is_some() {
            // The copy over the whole screen: the form is not drawn.
            (Rect { height: 0, ..main }, main)
        } else if main.width >= 110 {
            let [a, b] =
                Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
                    .areas(main);
            (a, b)
        } else {
            let [a, b] = Layout::vertical([Constraint::Percentage(62), Constraint::Percentage(38)])
                .areas(main);
            (a, b)
        };
        let meta_h = meta_height(c, form);
        // The picker, focused, lists every intent: on as many rows as they need (two at 80
        // columns), taken from the body.
        let intent_h = if c.focus == Field::Intent {
            let w = form.width.saturating_sub(LABEL) as usize;
            intent_rows(&c.form.intent, w).len().clamp(1, 3) as u16
        } else {
            1
        };
        let [row1, intent, context, ids, meta, body] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(intent_h),
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Length(meta_h),
            Constraint::Min(3),
        ])
        .areas(form);
        let [from, to] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(row1);
        ComposerAreas {
            title,
            form,
            preview,
            hints,
            status,
            from,
            to,
            intent,
            context,
            ids,
            meta,
            body,
        }
    }

    /// The inside (columns, rows) of the copy's pane.
    pub(crate) fn copy_size(&self) -> (usize, usize) {
        (
            crate::app::panes::layout::inner_width(self.preview) as usize,
            crate::app::panes::layout::inner_height(self.preview),
        )
    }

    /// The inside (columns, rows) of the box of `field`: the body's or META's.
    pub(crate) fn text_size(&self, field: Field) -> (usize, usize) {
        let r = match field {
            Field::Meta => self.meta,
            _ => self.body,
        };
        (
            crate::app::panes::layout::inner_width(r) as usize,
            crate::app::panes::layout::inner_height(r),
        )
    }
}

/// The width of a field's label, before its box.
pub const LABEL: u16 = 9;

/// The intents the picker lists, laid out on rows of `width` cells: each (name, whether it
/// is `current`), the current one written `[NAME]`.
pub fn intent_rows(current: &str, width: usize) -> Vec<Vec<(&'static str, bool)>> {
    let mut rows: Vec<Vec<(&'static str, bool)>> = vec![Vec::new()];
    let mut used = 0;
    for name in crate::app::writing::composer::intents() {
        let on = name.eq_ignore_ascii_case(current);
        let w = name.len() + if on { 2 } else { 0 };
        let gap = usize::from(used > 0);
        if used > 0 && used + gap + w > width {
            rows.push(Vec::new());
            used = 0;
        }
        let gap = usize::from(used > 0);
        used += gap + w;
        if let Some(row) = rows.last_mut() {
            row.push((name, on));
        }
    }
    rows
}

/// The META box's height in a form of `form`'s size: its rows (up to six) and borders.
/// Below the four rows of fields, a block the operator is not typing in takes at most a
/// third of what is left, so that the body keeps lines to write in at 80×24 (an ERROR
/// reply's `meta: error` block is five lines); focused, it takes what it needs, the body
/// keeping one.
fn meta_height(c: &Composer, form: Rect) -> u16 {
    let width = crate::app::panes::layout::inner_width(form) as usize;
    let rows = editor_rows::layout(c.meta.lines(), width, editor_rows::cursor(&c.meta))
        .rows
        .len();
    let wanted = (rows.min(usize::from(u16::MAX)) as u16 + 2).clamp(3, 8);
    let room = form.height.saturating_sub(4);
    let most = if c.focus == Field::Meta {
        room.saturating_sub(3)
    } else {
        room / 3
    };
    wanted.min(most.max(3))
}
