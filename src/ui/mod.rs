//! Drawing: `fn render(&App, &mut Frame)` per region. Views read the app and change nothing;
//! every string that came from an envelope has already passed through `app::text::safe*`
//! before it is put in a span.

mod bars;
mod columns;
mod composer;
mod conversation;
mod editor;
mod inspector;
mod keys;
mod poll;
mod popups;
mod queue;
mod reader;
pub mod theme;
mod thread_list;
mod thread_tree;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use crate::app::panes::layout::{Areas, MIN_SIZE, too_small};
use crate::app::{App, Pane};

/// Draws the whole screen.
pub fn render(app: &App, frame: &mut Frame) {
    let size = frame.area();
    if too_small(size) {
        let msg = format!(
            "Terminal too small: {}×{}. crosstalk needs at least {}×{}.",
            size.width, size.height, MIN_SIZE.0, MIN_SIZE.1
        );
        frame.render_widget(Paragraph::new(msg).wrap(Wrap { trim: true }), size);
        return;
    }
    let areas = Areas::new(size);
    if let Some(c) = &app.composer {
        composer::render(app, c, frame, size);
    } else {
        bars::title(app, frame, areas.title);
        thread_list::render(app, frame, areas.list);
        thread_tree::render(app, frame, areas.tree);
        inspector::render(app, frame, areas.inspector);
        bars::hints_and_status(app, frame, areas.hints, areas.status);
    }
    if let Some(p) = &app.popup {
        popups::render(app, p, frame, size);
    }
    scrub(frame.buffer_mut());
}

/// The last guard before the terminal: no cell goes out holding a character a terminal must
/// never get raw ([`crate::sanitize::is_unsafe`]). Text from envelopes is drawn with
/// placeholders already (`app::text::safe*`); this catches what an editor keeps as typed: a
/// variation selector, which the editor keeps because it picks an emoji's or an ideograph's
/// look, is drawn without it (the preview below the editor spells it out).
fn scrub(buf: &mut ratatui::buffer::Buffer) {
    for cell in buf.content.iter_mut() {
        let symbol = cell.symbol();
        if symbol.is_ascii() && !symbol.bytes().any(|b| b < 0x20 || b == 0x7f) {
            continue;
        }
        if symbol.chars().any(crate::sanitize::is_unsafe) {
            let kept: String = symbol
                .chars()
                .filter(|&c| !crate::sanitize::is_unsafe(c))
                .collect();
            cell.set_symbol(if kept.is_empty() { " " } else { &kept });
        }
    }
}

/// A pane's bordered block. The focused one shows it three ways, so that it reads on a
/// monochrome terminal or to a colour-blind operator too: a `▶` before the title, the title
/// reversed, and the border colour.
fn pane_block(title: Line<'_>, focused: bool) -> Block<'_> {
    Block::default()
        .borders(Borders::ALL)
        .border_style(if focused {
            theme::FOCUS_BORDER
        } else {
            theme::BORDER
        })
        .title(focus_title(title, focused))
}

/// A title marked as focused (`▶`, reversed) when `focused`.
fn focus_title(mut title: Line<'_>, focused: bool) -> Line<'_> {
    if focused {
        for span in title.spans.iter_mut() {
            span.style = span.style.patch(theme::FOCUS_TITLE);
        }
        title
            .spans
            .insert(0, ratatui::text::Span::styled("▶", theme::FOCUS_TITLE));
    }
    title
}

/// Whether `pane` is focused (and no popup or composer is over it).
fn focused(app: &App, pane: Pane) -> bool {
    app.focus == pane && app.popup.is_none()
}

/// The rows a bordered pane shows.
fn inner(area: Rect) -> Rect {
    area.inner(ratatui::layout::Margin::new(1, 1))
}

#[cfg(test)]
mod scrub_tests {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    #[test]
    fn no_cell_keeps_a_character_a_terminal_must_not_get() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 4, 1));
        buf[(0, 0)].set_symbol("\u{AE}\u{FE00}");
        buf[(1, 0)].set_symbol("\u{FE0E}");
        buf[(2, 0)].set_symbol("\u{2764}\u{FE0F}");
        buf[(3, 0)].set_symbol("\u{1b}");
        super::scrub(&mut buf);
        assert_eq!(buf[(0, 0)].symbol(), "\u{AE}");
        assert_eq!(buf[(1, 0)].symbol(), " ");
        assert_eq!(
            buf[(2, 0)].symbol(),
            "\u{2764}\u{FE0F}",
            "the emoji look is safe"
        );
        assert_eq!(buf[(3, 0)].symbol(), " ");
    }
}
