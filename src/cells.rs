//! Text measured in terminal cells, not characters: a CJK character or an emoji takes two
//! cells, a combining mark none. Every place that fits text to a width — the app's panes and
//! the CLI's human output alike — cuts it here, so that a line of wide characters is never
//! printed twice as wide as the columns it was cut for.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Display width of `s` in terminal cells.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// `s` cut to at most `max` cells, with `…` when something was cut.
pub fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw + 1 > max {
            break;
        }
        out.push(c);
        w += cw;
    }
    if max > 0 {
        out.push('…');
    }
    out
}

/// The end of `s` that fits `max` cells, after `…` when the start had to go: what a one-line
/// input shows, so that the end being typed (where the cursor is) stays in sight.
pub fn tail(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut kept: Vec<char> = Vec::new();
    let mut w = 0;
    for c in s.chars().rev() {
        let cw = c.width().unwrap_or(0);
        if w + cw + 1 > max {
            break;
        }
        kept.push(c);
        w += cw;
    }
    std::iter::once('…').chain(kept.into_iter().rev()).collect()
}

/// `s` followed by spaces to `cells` cells (as `{:<n}` does for characters): the columns of
/// a table stay aligned when a cell holds wide characters.
pub fn pad(s: &str, cells: usize) -> String {
    let w = width(s);
    format!("{s}{}", " ".repeat(cells.saturating_sub(w)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_by_cells() {
        assert_eq!(truncate("hello", 10), "hello");
        assert_eq!(truncate("hello world", 6), "hello…");
        assert_eq!(truncate("日本語", 4), "日…");
    }

    #[test]
    fn pads_by_cells() {
        assert_eq!(pad("ab", 4), "ab  ");
        assert_eq!(pad("日本", 5), "日本 ");
        assert_eq!(pad("日本語", 4), "日本語");
    }

    #[test]
    fn the_tail_keeps_the_end_in_cells() {
        assert_eq!(tail("hello", 10), "hello");
        assert_eq!(tail("hello world", 6), "…world");
        assert_eq!(tail("日本語", 4), "…語");
        assert_eq!(tail("日本語", 0), "");
    }

    proptest::proptest! {
        #[test]
        fn a_cut_fits_and_keeps_its_start(s in "\\PC{0,40}", max in 0usize..30) {
            let cut = truncate(&s, max);
            proptest::prop_assert!(width(&cut) <= max);
            let kept = cut.strip_suffix('…').unwrap_or(&cut);
            proptest::prop_assert!(s.starts_with(kept));
            let end = tail(&s, max);
            proptest::prop_assert!(width(&end) <= max);
            proptest::prop_assert!(s.ends_with(end.strip_prefix('…').unwrap_or(&end)));
        }
    }
}
