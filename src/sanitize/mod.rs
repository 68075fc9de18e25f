//! Making untrusted text safe to print on a terminal.
//!
//! Envelope text comes from chat windows and other people: it may hold escape sequences that
//! recolour, move the cursor, set the window title or the clipboard, and bidirectional
//! overrides that make text read differently from what it is. Human-readable output passes
//! every such string through [`sanitize`]; JSON output does not need to (it escapes them).
//!
//! Beside it, what text can hide from a reader: [`hidden`] finds the tag characters a model
//! reads and a screen does not show, [`scripts`] identifiers that mix scripts (a Cyrillic `а`
//! in `alice`). This room is below the protocol: the protocol's checks use it, never the
//! other way round.

pub mod hidden;
pub mod scripts;

use std::borrow::Cow;

/// Replaces control characters (C0 except newline, DEL, C1), bidi controls and invisible
/// characters with visible placeholders, and expands tabs to spaces (tab stops of 8), so the
/// text prints as what it is and nothing in it reaches the terminal as a command.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if plain(s) || !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    Sanitizer::default().push(s, &mut out);
    Cow::Owned(out)
}

/// Whether `s` is printable ASCII and line breaks only, which nothing escapes: nearly all of
/// what is printed (every diagnostic `check` writes), answered a block of bytes at a time
/// without an early exit the compiler cannot vectorize, before the walk by character.
fn plain(s: &str) -> bool {
    s.as_bytes().chunks(32).all(|block| {
        block.iter().fold(true, |ok, &b| {
            ok & ((0x20..0x7f).contains(&b) | (b == b'\n'))
        })
    })
}

/// [`sanitize`] for text that arrives in pieces (a stream written to a terminal): the tab
/// column carries over from one piece to the next, so the pieces print as the whole would.
#[derive(Debug, Default, Clone)]
pub(crate) struct Sanitizer {
    col: usize,
}

impl Sanitizer {
    /// Appends `s` to `out` made safe, and returns how many characters were shown as
    /// placeholders (tabs, expanded to spaces, are not counted: nothing of them is hidden).
    pub(crate) fn push(&mut self, s: &str, out: &mut String) -> usize {
        let mut replaced = 0;
        // Within a run of tag characters that mirror ASCII: `⟨tags: ` is open.
        let mut in_tags = false;
        for c in s.chars() {
            let mirrored = crate::sanitize::hidden::tag_ascii(c);
            if in_tags && mirrored.is_none() {
                out.push('⟩');
                in_tags = false;
                self.col += 1;
            }
            if let Some(a) = mirrored {
                // Tag characters are invisible text (see `protocol::hidden`): a run of them is
                // shown as what it spells, in one mark.
                if !in_tags {
                    out.push_str("⟨tags: ");
                    in_tags = true;
                    self.col += 7;
                }
                out.push(a);
                replaced += 1;
                self.col += 1;
                continue;
            }
            match c {
                '\n' => {
                    out.push('\n');
                    self.col = 0;
                    continue;
                }
                '\t' => {
                    let n = 8 - self.col % 8;
                    out.extend(std::iter::repeat_n(' ', n));
                    self.col += n;
                    continue;
                }
                c if (c as u32) < 0x20 => {
                    out.push(char::from_u32(0x2400 + c as u32).unwrap_or('?'));
                    replaced += 1;
                }
                '\u{7f}' => {
                    out.push('\u{2421}');
                    replaced += 1;
                }
                c if needs_escape(c) => {
                    out.push_str(&format!("⟨U+{:04X}⟩", c as u32));
                    replaced += 1;
                }
                c => out.push(c),
            }
            self.col += 1;
        }
        if in_tags {
            out.push('⟩');
            self.col += 1;
        }
        replaced
    }
}

/// Like [`sanitize`] for text that must stay on one line: newlines are shown as `␊`.
pub(crate) fn sanitize_line(s: &str) -> Cow<'_, str> {
    if s.contains('\n') {
        Cow::Owned(sanitize(&s.replace('\n', "\u{240A}")).into_owned())
    } else {
        sanitize(s)
    }
}

/// An identifier (a key id, a banner name or address) on one line made safe, followed by
/// the mark of a look-alike when its letters mix scripts: `аlice@example.com ⚠ mixes
/// Cyrillic and Latin letters` (see [`crate::protocol::scripts`]). Every place that shows
/// such an identifier to the operator shows it so.
pub(crate) fn marked_id(id: &str) -> Cow<'_, str> {
    match look_alike_mark(id) {
        Some(mark) => Cow::Owned(format!("{} {mark}", sanitize_line(id))),
        None => sanitize_line(id),
    }
}

/// The mark [`marked_id`] adds, alone (`⚠ mixes Cyrillic and Latin letters`): for a place
/// that quotes the identifier in its own way.
pub(crate) fn look_alike_mark(id: &str) -> Option<String> {
    crate::sanitize::scripts::look_alike(id).map(|why| format!("⚠ {why}"))
}

/// Whether `c` must never be written raw to a terminal: C0 controls other than newline, DEL,
/// C1 controls, bidi controls, invisible format characters, tag characters and variation
/// selectors (invisible text a model reads), and characters that draw as nothing. [`sanitize`] shows them as placeholders; the app's editors remove
/// them from what is typed or pasted.
pub fn is_unsafe(c: char) -> bool {
    needs_escape(c)
}

fn needs_escape(c: char) -> bool {
    is_removed_when_typed(c) || is_look_alike(c)
}

/// What an editor removes from text typed or pasted into it: controls, bidi and invisible
/// format characters, tag characters. (Variation selectors and blank look-alikes are shown
/// as placeholders on a terminal but kept in what the operator writes: one selector picks
/// an emoji's or an ideograph's look, and `hidden-text` reports them when they spell.)
pub(crate) fn is_removed_when_typed(c: char) -> bool {
    let u = c as u32;
    // Printable ASCII, nearly all of any text, is answered first.
    if (0x20..0x7f).contains(&u) {
        return false;
    }
    (u < 0x20 && c != '\n')
        || (0x7f..=0x9f).contains(&u)
        || matches!(c,
            '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}'
            | '\u{061C}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}' | '\u{00AD}'
            | '\u{E0000}'..='\u{E007F}')
}

/// Characters a terminal draws as nothing, or that carry bytes unseen: variation selectors
/// (but U+FE0F, the emoji look, which can spell nothing), Hangul fillers, the Mongolian vowel
/// separator, the blank braille pattern, the combining grapheme joiner, and the line and
/// paragraph separators, which some terminals break lines at.
fn is_look_alike(c: char) -> bool {
    matches!(c,
        '\u{FE00}'..='\u{FE0E}' | '\u{E0100}'..='\u{E01EF}'
        | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{180E}' | '\u{2800}'
        | '\u{034F}' | '\u{2028}' | '\u{2029}')
}

/// Removes characters that must never reach the terminal from text typed or pasted into an
/// editor box: C0/C1 controls other than newline and tab, DEL, bidi and invisible format
/// characters, and tag characters (text a model reads that the screen does not show).
/// Returns the text and how many were removed, so the operator is told.
pub(crate) fn strip_controls(s: &str) -> (String, usize) {
    // Tabs are the one thing `sanitize` expands rather than hides: an editor keeps them.
    let bad = |c: char| c != '\t' && is_removed_when_typed(c);
    let s = s.replace("\r\n", "\n");
    let removed = s.chars().filter(|c| bad(*c)).count();
    if removed == 0 {
        return (s, 0);
    }
    (s.chars().filter(|c| !bad(*c)).collect(), removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A terminal shows a variation selector or a blank look-alike as a placeholder, but an
    /// editor keeps it in what the operator writes: `↩︎` keeps its text look, `葛󠄀` its form.
    #[test]
    fn look_alikes_are_shown_but_not_removed_when_typed() {
        let text = "\u{21A9}\u{FE0E} \u{845B}\u{E0100} \u{2800}";
        assert!(sanitize(text).contains("⟨U+FE0E⟩"), "{}", sanitize(text));
        assert!(sanitize(text).contains("⟨U+E0100⟩"));
        assert!(!text.chars().any(is_removed_when_typed));
        assert_eq!(strip_controls(text), (text.to_string(), 0));
        assert_eq!(strip_controls("a\u{202E}b\u{E0041}").1, 2);
    }

    #[test]
    fn escapes_cannot_pass() {
        let evil = "a\u{1b}]52;c;aGk=\u{7}b\u{1b}[2Jc\u{9b}31m\u{202e}d\u{200b}e\u{7f}";
        let s = sanitize(evil);
        assert!(!s.chars().any(needs_escape), "{s}");
        assert!(s.contains('␛'));
        assert!(s.contains("⟨U+202E⟩"));
        assert!(s.contains("⟨U+009B⟩"));
    }

    proptest::proptest! {
        /// Whatever the text, nothing a terminal acts on or hides comes out, and the safe
        /// characters come out in order; in pieces it prints as the whole does.
        #[test]
        fn nothing_unsafe_passes_and_the_rest_is_kept(
            text in "[\\x00-\\x{ff}\\u{200b}-\\u{206f}\\u{e0000}-\\u{e0080}a-z中😀]{0,60}",
            cut in 0usize..60,
        ) {
            let out = sanitize(&text);
            proptest::prop_assert!(!out.chars().any(needs_escape), "{:?}", out);
            let safe: String = text.chars().filter(|&c| !needs_escape(c)).collect();
            let mut rest = out.chars();
            for c in safe.chars() {
                proptest::prop_assert!(rest.any(|o| o == c), "{:?} lost {:?}", out, c);
            }
            let cut = text.char_indices().nth(cut).map_or(text.len(), |(i, _)| i);
            let mut pieces = Sanitizer::default();
            let mut joined = String::new();
            pieces.push(&text[..cut], &mut joined);
            pieces.push(&text[cut..], &mut joined);
            if !text.chars().any(crate::sanitize::hidden::is_tag) {
                // (A run of tags cut in two is shown as two marks; all else is the same.)
                proptest::prop_assert_eq!(joined, out.into_owned());
            }
        }

        /// The byte test in front of the walk by character answers as the walk does.
        #[test]
        fn plain_text_is_what_needs_no_escape(
            text in "[\\x00-\\x{ff}\\u{200b}\\u{202e}a-z ]{0,80}",
        ) {
            if plain(&text) {
                proptest::prop_assert!(!text.chars().any(needs_escape));
            } else {
                proptest::prop_assert!(!text.is_ascii() || text.chars().any(needs_escape));
            }
        }
    }

    #[test]
    fn tag_characters_show_what_they_spell() {
        let hidden = crate::sanitize::hidden::tags("Hi!");
        let text = format!("ok{hidden}\u{E0001}.{hidden}");
        let s = sanitize(&text);
        assert_eq!(s, "ok⟨tags: Hi!⟩⟨U+E0001⟩.⟨tags: Hi!⟩");
        assert!(!s.chars().any(needs_escape));
        let mut out = String::new();
        assert_eq!(Sanitizer::default().push(&hidden, &mut out), 3);
        assert_eq!(out, "⟨tags: Hi!⟩");
    }

    #[test]
    fn plain_text_untouched_tabs_expanded() {
        assert!(matches!(sanitize("héllo\nwörld"), Cow::Borrowed(_)));
        assert_eq!(sanitize("a\tb"), "a       b");
        assert_eq!(sanitize_line("a\nb"), "a␊b");
    }

    #[test]
    fn a_mixed_script_identifier_is_marked_and_a_plain_one_is_not() {
        assert_eq!(
            marked_id("\u{430}lice@example.com"),
            "\u{430}lice@example.com ⚠ mixes Cyrillic and Latin letters"
        );
        assert_eq!(marked_id("alice@example.com"), "alice@example.com");
        // Still made safe first.
        assert_eq!(
            marked_id("\u{430}lice\u{1b}"),
            "\u{430}lice␛ ⚠ mixes Cyrillic and Latin letters"
        );
    }
}
