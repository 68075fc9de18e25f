//! Text made safe and fitted for the screen: every string from an envelope passes through
//! [`safe`] before any view sees it, and long lines are wrapped or cut by display width.

use std::borrow::Cow;

use unicode_width::UnicodeWidthChar;

use crate::sanitize::{sanitize, sanitize_line};

/// Envelope text for display: controls, escape sequences, bidi and invisible characters
/// become visible placeholders; tabs become spaces; newlines are kept.
pub fn safe(s: &str) -> Cow<'_, str> {
    sanitize(s)
}

/// Like [`safe`], on one line (newlines shown as `␊`).
pub(crate) fn safe_line(s: &str) -> Cow<'_, str> {
    sanitize_line(s)
}

/// One line that names an envelope: `INTENT from→to: first body line`, safe to print.
/// `intent` is the stored (normalized) intent when there is one.
pub(crate) fn headline(env: &crate::protocol::Envelope, intent: Option<&str>) -> String {
    safe_line(&format!(
        "{} {}→{}: {}",
        intent.or(env.intent_raw()).unwrap_or("?"),
        env.banner.from,
        env.banner.to,
        env.first_line()
    ))
    .into_owned()
}

pub use crate::cells::{tail, truncate, width};

/// A line of parts joined by `sep` (the inspector's delivery line: `received … · claims … ·
/// ⇢ to relay`), wrapped to `max` cells between parts where it can: each part stays whole on
/// one row when it fits one, so a row never ends halfway through `relayed 3m ago by …`. A part
/// wider than a row is wrapped as [`wrap`] does.
pub(crate) fn wrap_parts(line: &str, sep: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    if width(line) <= max {
        return vec![line.to_string()];
    }
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for part in line.split(sep) {
        let joined = if cur.is_empty() {
            part.to_string()
        } else {
            format!("{cur}{sep}{part}")
        };
        if width(&joined) <= max {
            cur = joined;
            continue;
        }
        if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        if width(part) <= max {
            cur = part.to_string();
        } else {
            let mut rows = wrap(part, max);
            cur = rows.pop().unwrap_or_default();
            out.extend(rows);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Wraps one line (no newlines) to `max` cells: at spaces where it can, inside a word when a
/// word alone is too long. Always returns at least one (possibly empty) line.
pub fn wrap(line: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    if width(line) <= max {
        return vec![line.to_string()];
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut cur_w = 0;
    // The byte position in `cur` and its width after the last space: where to break.
    let mut brk: Option<(usize, usize)> = None;
    for c in line.chars() {
        let cw = c.width().unwrap_or(0);
        if cur_w + cw > max && c == ' ' {
            // The line is full exactly at a space: break here and drop the space.
            out.push(std::mem::take(&mut cur).trim_end().to_string());
            cur_w = 0;
            brk = None;
            continue;
        }
        if cur_w + cw > max {
            match brk {
                Some((pos, w)) if pos > 0 => {
                    let rest = cur.split_off(pos);
                    out.push(cur.trim_end().to_string());
                    cur = rest;
                    cur_w -= w;
                }
                _ => {
                    out.push(std::mem::take(&mut cur));
                    cur_w = 0;
                }
            }
            brk = None;
        }
        cur.push(c);
        cur_w += cw;
        if c == ' ' {
            brk = Some((cur.len(), cur_w));
        }
    }
    out.push(cur);
    out
}

/// `s` cut to at most `max` cells around byte `at`: when all of it does not fit, the cut
/// starts a few cells before `at` (with `…` in front), so what is at `at` — a search hit — is
/// always shown.
pub fn window(s: &str, at: usize, max: usize) -> String {
    if width(s) <= max || at == 0 || !s.is_char_boundary(at) {
        return truncate(s, max);
    }
    // Keep a little text before the hit, for context, and start there.
    let lead = (max / 4).min(12);
    let before = &s[..at];
    let mut start = at;
    let mut w = 0;
    for (i, c) in before.char_indices().rev() {
        let cw = c.width().unwrap_or(0);
        if w + cw > lead {
            break;
        }
        w += cw;
        start = i;
    }
    if start == 0 {
        return truncate(s, max);
    }
    format!("…{}", truncate(&s[start..], max.saturating_sub(1)))
}

/// The mark at the start of a row that continues the line above (a soft wrap).
pub(crate) const CONTINUED: &str = "↪";

/// Soft-wraps one line to `max` cells for a view of exact text: every row after the first
/// starts with [`CONTINUED`], so a wrapped line is never mistaken for two lines. Returns
/// (is a continuation, text) rows; the text leaves room for the mark.
pub(crate) fn soft_wrap(line: &str, max: usize) -> Vec<(bool, String)> {
    if width(line) <= max {
        return vec![(false, line.to_string())];
    }
    wrap(line, max.saturating_sub(width(CONTINUED)))
        .into_iter()
        .enumerate()
        .map(|(i, part)| (i > 0, part))
        .collect()
}

/// How long ago `time` (RFC 3339) was, before `now`, in a few characters: `45s`, `12m`,
/// `3h`, `5d`, `2w`; empty when it cannot be read.
pub fn age(time: &str, now: jiff::Timestamp) -> String {
    let Ok(t) = time.parse::<jiff::Timestamp>() else {
        return String::new();
    };
    let secs = now.as_second().saturating_sub(t.as_second()).max(0);
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s if s < 14 * 86_400 => format!("{}d", s / 86_400),
        s => format!("{}w", s / (7 * 86_400)),
    }
}

/// An id as far as the operator needs it to tell it apart and to type it (`:open` takes the
/// first characters of an id): its first 12 characters, then `…` when there are more.
pub(crate) fn short_id(id: &str) -> String {
    match id.char_indices().nth(12) {
        Some((at, _)) => format!("{}…", &id[..at]),
        None => id.to_string(),
    }
}

/// A stored time as the operator reads it: `2026-11-21 14:05` in UTC.
pub(crate) fn short_time(time: &str) -> String {
    match time.parse::<jiff::Timestamp>() {
        Ok(t) => t.strftime("%Y-%m-%d %H:%M").to_string(),
        Err(_) => time.chars().take(16).collect(),
    }
}

/// How a relay is told: `relayed 3m ago by system clipboard`, or for one the ledger inferred
/// from the reply it drew, `relayed 3m ago (inferred from CHATGPT's reply)`. As written in the
/// ledger: callers make it safe for where they show it.
pub(crate) fn relay_words(at: &str, how: &str, now: jiff::Timestamp) -> String {
    if how.starts_with("inferred ") {
        format!("relayed {} ago ({how})", age(at, now))
    } else {
        format!("relayed {} ago by {how}", age(at, now))
    }
}

/// A POLL carried to some of its targets, as a queue row says it: "relayed to 2 of 3
/// targets" (to relay: received for others), "copied for 2 of 3 targets" (awaiting: composed
/// here, the only POLL that awaits before it went to every target).
pub(crate) fn carried_words(section: crate::store::Section, c: crate::store::Carried) -> String {
    let verb = match section {
        crate::store::Section::ToRelay => "relayed to",
        _ => "copied for",
    };
    format!("{verb} {} of {} targets", c.to, c.of)
}

/// A claimed time beside one observed: `21:40` on the same day, else `2025-10-09 21:40`.
pub(crate) fn claim_time(claimed: &jiff::Timestamp, seen: &str) -> String {
    let full = claimed.strftime("%Y-%m-%d %H:%M").to_string();
    match seen.get(..10) {
        Some(day) if full.starts_with(day) => full[11..].to_string(),
        _ => full,
    }
}

/// What the status line adds when a text being relayed hides words in tag characters (see
/// [`crate::protocol::hidden`]): passing on what the operator cannot see is worth a word at
/// the moment it happens, whichever way the relay went.
pub(crate) fn hidden_note(text: &str) -> Option<String> {
    let h = crate::sanitize::hidden::find(text)?;
    let words = h
        .spelled(40)
        .map(|w| format!(": “{w}”"))
        .unwrap_or_default();
    Some(format!(
        "it hides {} {} a model reads{words} (see hidden-text in its fields)",
        h.count,
        h.kind()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_stay_whole_on_a_row_when_they_fit_one() {
        let line = "received 2026-12-01 23:39 (20s ago) · claims 2025-11-23 01:22 · ⇢ to relay (y) · relayed 0s ago by OSC 52";
        let rows = wrap_parts(line, " · ", 40);
        assert_eq!(
            rows,
            [
                "received 2026-12-01 23:39 (20s ago)",
                "claims 2025-11-23 01:22 · ⇢ to relay (y)",
                "relayed 0s ago by OSC 52",
            ]
        );
        assert!(rows.iter().all(|r| width(r) <= 40));
        // A part wider than a row is wrapped inside.
        let long = wrap_parts("a · bbbb bbbb bbbb bbbb · c", " · ", 9);
        assert!(long.iter().all(|r| width(r) <= 9), "{long:?}");
        assert_eq!(wrap_parts("short", " · ", 40), ["short"]);
    }

    #[test]
    fn short_ids_keep_their_first_characters() {
        assert_eq!(short_id("01JD5ZQ2X8K3M4N5P6Q7R8S9T0"), "01JD5ZQ2X8K3…");
        assert_eq!(short_id("abc"), "abc");
        assert_eq!(short_id("ééééééééééééé"), "éééééééééééé…");
    }

    #[test]
    fn a_window_keeps_the_hit_in_view() {
        let s = "webhook relay: rate limiter design review, the part about [shards] and more";
        let at = s.find('[').unwrap();
        let w = window(s, at, 30);
        assert!(w.contains("[shards]") && w.starts_with('…'), "{w}");
        assert!(width(&w) <= 30);
        assert_eq!(window("short [x]", 6, 30), "short [x]");
        assert_eq!(
            window("[x] at the start of a long line", 0, 10),
            "[x] at th…"
        );
    }

    proptest::proptest! {
        /// Every soft-wrapped row fits with its mark, only rows after the first are marked,
        /// and no visible character is lost.
        #[test]
        fn soft_wrap_fits_marks_continuations_and_keeps_the_text(
            line in "[a-z ]{0,120}",
            max in 2usize..40,
        ) {
            let rows = soft_wrap(&line, max);
            for (i, (cont, text)) in rows.iter().enumerate() {
                proptest::prop_assert_eq!(*cont, i > 0);
                let mark = if *cont { width(CONTINUED) } else { 0 };
                proptest::prop_assert!(width(text) + mark <= max, "{:?}", rows);
            }
            let kept: String = rows.iter().flat_map(|(_, t)| t.chars()).filter(|c| *c != ' ').collect();
            let want: String = line.chars().filter(|c| *c != ' ').collect();
            proptest::prop_assert_eq!(kept, want);
        }
    }

    #[test]
    fn wraps_at_spaces_and_inside_long_words() {
        assert_eq!(wrap("hello world foo", 11), ["hello world", "foo"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 4), [""]);
        assert_eq!(wrap("日本語のテキスト", 6), ["日本語", "のテキ", "スト"]);
        for l in wrap("the quick brown fox jumps over the lazy dog again", 7) {
            assert!(width(&l) <= 7, "{l:?}");
        }
    }

    #[test]
    fn ages() {
        let now: jiff::Timestamp = "2026-11-21T12:00:00Z".parse().unwrap();
        assert_eq!(age("2026-11-21T11:59:30Z", now), "30s");
        assert_eq!(age("2026-11-21T09:00:00Z", now), "3h");
        assert_eq!(age("2026-11-01T12:00:00Z", now), "2w");
        assert_eq!(age("garbage", now), "");
    }

    #[test]
    fn a_relayed_text_hiding_tag_characters_gets_a_note() {
        let hidden = crate::sanitize::hidden::tags(&"x".repeat(50));
        let note = hidden_note(&format!("body{hidden}")).unwrap();
        assert!(note.starts_with("it hides 50 tag character(s)"), "{note}");
        assert!(note.contains(&format!("“{}…”", "x".repeat(40))), "{note}");
        let note = hidden_note("\u{E0001}").unwrap();
        assert_eq!(
            note,
            "it hides 1 tag character(s) a model reads (see hidden-text in its fields)"
        );
        assert_eq!(hidden_note("plain text"), None);
    }

    #[test]
    fn hostile_text_is_defused() {
        let s = safe("a\x1b[31mred\x07\u{202e}evil\tx");
        assert!(!s.contains('\x1b') && !s.contains('\u{202e}') && !s.contains('\x07'));
        assert!(!safe_line("a\nb").contains('\n'));
    }
}
