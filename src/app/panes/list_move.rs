//! How a list moves for a key. Every list of the app — the three panes, the paste preview,
//! help, the keys, drafts, the queue and the pickers — moves through here, with the same
//! keys ([`MOVES`]), so `j`/`k`, `PgUp`/`PgDn`, `g`/`G` and `Home`/`End` mean the same thing
//! wherever the operator is.

use crate::app::Action;

/// The keys that move a list, as the keymap's default table writes them: bound in every
/// scope that shows a list, before the scope's own keys (which win where they differ).
pub(crate) const MOVES: &[(&str, Action)] = &[
    ("j down", Action::Down),
    ("k up", Action::Up),
    ("pagedown ctrl-d", Action::PageDown),
    ("pageup ctrl-u", Action::PageUp),
    ("g home", Action::Top),
    ("G end", Action::Bottom),
];

/// How far a list moves for a key: a row, a page of `page` rows, or to either end (far enough
/// that the caller's bound stops it); `None` for a key that moves nothing.
pub(crate) fn step(action: &Action, page: isize) -> Option<isize> {
    Some(match action {
        Action::Up => -1,
        Action::Down => 1,
        Action::PageUp => -page,
        Action::PageDown => page,
        Action::Top => isize::MIN / 2,
        Action::Bottom => isize::MAX / 2,
        _ => return None,
    })
}

/// Whether `action` moves a list.
pub(crate) fn is_move(action: &Action) -> bool {
    step(action, 0).is_some()
}

/// The row selected after `action` in a list of `len` rows paged by `page`: `None` when the
/// action moves nothing, so the caller goes on to handle it.
pub(crate) fn select(selected: usize, len: usize, action: &Action, page: usize) -> Option<usize> {
    let delta = step(action, page as isize)?;
    Some(
        selected
            .saturating_add_signed(delta)
            .min(len.saturating_sub(1)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_move_stays_in_the_list() {
        let at = |selected, action| select(selected, 10, &action, 4);
        assert_eq!(at(0, Action::Down), Some(1));
        assert_eq!(at(0, Action::Up), Some(0));
        assert_eq!(at(3, Action::PageDown), Some(7));
        assert_eq!(at(8, Action::PageDown), Some(9));
        assert_eq!(at(2, Action::PageUp), Some(0));
        assert_eq!(at(5, Action::Bottom), Some(9));
        assert_eq!(at(5, Action::Top), Some(0));
        assert_eq!(at(5, Action::Open), None);
        assert_eq!(select(0, 0, &Action::Bottom, 4), Some(0));
    }
}
