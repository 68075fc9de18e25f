//! The byte-level fast paths of the reader, held to the plain readings they replace: each
//! property below states the slower, obviously right answer and asks the fast one to agree
//! on text made of the characters that matter to it (ASCII white space and punctuation,
//! odd spaces, invisible characters, line-break look-alikes, letters outside ASCII).

use proptest::prelude::*;

use super::lines::{self, is_indent};
use crate::protocol::address::{check_fully, plainly_valid, route_hops};
use std::borrow::Cow;

use super::borrowed::part_of;
use crate::protocol::model::{KNOWN_HEADERS, STRUCTURAL_KEYS, known_header_index, structural_key};

/// Text mixing the characters that the fast paths answer byte by byte with those that send
/// them to the slow path.
fn mixed(max: usize) -> impl Strategy<Value = String> {
    let pick = prop::sample::select(vec![
        'a', 'Z', 'k', '0', '9', '-', '_', ':', '/', '[', ']', '>', '`', '~', ' ', ' ', '\t', '\r',
        '\u{0}', '\u{b}', '\u{c}', '\u{a0}', '\u{2007}', '\u{202f}', '\u{200b}', '\u{feff}',
        '\u{ad}', '\u{3000}', '\u{85}', '\u{2028}', 'é', '→', 'ü',
    ]);
    prop::collection::vec(pick, 0..max).prop_map(|v| v.into_iter().collect())
}

/// `key: value` lines with keys of every case and length near the structural ones.
fn keyish() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        prop::sample::select(STRUCTURAL_KEYS.to_vec()).prop_map(str::to_string),
        prop::sample::select(STRUCTURAL_KEYS.to_vec())
            .prop_map(|k| k.to_ascii_uppercase().to_string()),
        "[a-zA-Z][a-zA-Z0-9_-]{0,9}",
        mixed(10),
    ];
    (mixed(3), key, mixed(3), mixed(20)).prop_map(|(lead, k, sep, v)| format!("{lead}{k}:{sep}{v}"))
}

/// What `lines::split_key` answered before its byte tables.
fn split_key_plain(s: &str) -> Option<(&str, &str, usize)> {
    let (_, lead) = lines::indent_of(s);
    let rest = &s[lead..];
    let b = rest.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let colon = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'-' || **c == b'_')
        .count();
    if b.get(colon) != Some(&b':') {
        return None;
    }
    let after = &rest[colon + 1..];
    if after.starts_with("//") {
        return None;
    }
    let value = after.trim_start_matches(is_indent);
    let value_off = lead + colon + 1 + (after.len() - value.len());
    Some((&rest[..colon], value.trim_end(), value_off))
}

/// What `structural_key` answered before it matched the lower-cased key once.
fn structural_key_plain(key: &str, exact: bool) -> &str {
    STRUCTURAL_KEYS
        .iter()
        .find(|k| {
            if exact {
                **k == key
            } else {
                k.eq_ignore_ascii_case(key)
            }
        })
        .copied()
        .unwrap_or(key)
}

/// What `lines::column` answered before it counted character starts: a walk over the
/// characters.
fn column_walk(original: &str, off: usize) -> u32 {
    let mut cleaned = 0usize;
    let mut col = 1u32;
    for c in original.chars() {
        if lines::is_invisible(c) {
            col += 1;
            continue;
        }
        if cleaned >= off {
            return col;
        }
        cleaned += if lines::is_odd_space(c) {
            1
        } else {
            c.len_utf8()
        };
        col += 1;
    }
    col
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Columns and offsets of a line, from its map and from the walks, at every offset.
    #[test]
    fn columns_agree_with_the_walk(s in mixed(40)) {
        let map = lines::LineMap::new(&s);
        prop_assert_eq!(map.had_invisible(), lines::had_invisible(&s));
        for off in 0..=map.cleaned.len() + 2 {
            prop_assert_eq!(lines::column(&s, off), column_walk(&s, off), "{}", off);
            prop_assert_eq!(map.column(off), column_walk(&s, off), "{}", off);
            prop_assert_eq!(map.original_offset(off), lines::original_offset(&s, off), "{}", off);
        }
        // Long lines answer from a table when cleaning changed them (asked, as the reader
        // asks, at the cleaned line's character boundaries).
        let long = s.repeat(30);
        let map = lines::LineMap::new(&long);
        for off in (0..=map.cleaned.len()).filter(|o| map.cleaned.is_char_boundary(*o)) {
            prop_assert_eq!(map.column(off), column_walk(&long, off), "{}", off);
            prop_assert_eq!(map.original_offset(off), lines::original_offset(&long, off));
        }
    }

    /// A line past the size where positions come from checkpoints answers as the walk does
    /// at every cleaned offset (inside a character, and past the end, too), and holds one
    /// checkpoint per [`lines::STEP`] cleaned bytes, not a row per byte.
    #[test]
    fn long_lines_answer_from_checkpoints_as_the_walk(
        head in mixed(40),
        s in prop::collection::vec(mixed(8), 150..400),
    ) {
        let long = format!("{head}{}", s.concat());
        prop_assume!(long.len() >= lines::TABLE_FROM);
        let map = lines::LineMap::new(&long);
        for off in 0..=map.cleaned.len() + 2 {
            prop_assert_eq!(map.column(off), column_walk(&long, off), "{}", off);
            prop_assert_eq!(map.original_offset(off), lines::original_offset(&long, off), "{}", off);
        }
        if !map.unchanged() && !long.is_ascii() {
            prop_assert!(map.checkpoints() <= map.cleaned.len() / lines::STEP + 1);
        }
    }

    #[test]
    fn plain_ascii_is_ascii_without_a_carriage_return(s in mixed(40)) {
        for end in (0..=s.len()).filter(|e| s.is_char_boundary(*e)) {
            let t = &s[..end];
            prop_assert_eq!(lines::is_plain_ascii(t), t.is_ascii() && !t.contains('\r'), "{:?}", t);
        }
    }

    #[test]
    fn arrows_and_pairs_are_found_where_the_str_search_finds_them(s in mixed(30)) {
        prop_assert_eq!(lines::find_arrow(s.as_bytes()), s.find('→'));
        prop_assert_eq!(lines::find_pair(s.as_bytes(), *b"[["), s.find("[["));
    }

    /// A banner's version read in one pass agrees with reading it split at its dots.
    #[test]
    fn versions_agree_with_the_split_reading(
        s in prop_oneof![
            "[vV]?[0-9.]{0,6}",
            "[vV][0-9]{1,3}(\\.[0-9]{1,3}){0,3}",
            mixed(8),
        ],
    ) {
        let plain = s.strip_prefix(['v', 'V']).is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .split('.')
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        });
        prop_assert_eq!(super::scan::is_version(&s), plain, "{:?}", s);
    }

    #[test]
    fn indentation_read_once_agrees_with_each_question(s in mixed(16), n in 0usize..6) {
        let ind = lines::Indent::of(&s);
        prop_assert_eq!(ind.blank, lines::is_blank(&s));
        prop_assert_eq!(ind.depth, lines::indent_of(&s).0);
        let rest = lines::strip_indent(&s, n);
        prop_assert_eq!(ind.strip(&s, n), (rest, lines::is_space_only(rest)));
    }

    #[test]
    fn trimming_agrees_with_the_standard_library(s in mixed(24)) {
        prop_assert_eq!(lines::trim_end(&s), s.trim_end());
        prop_assert_eq!(lines::trim(&s), s.trim());
        prop_assert_eq!(lines::trim_indent_start(&s), s.trim_start_matches(is_indent));
    }

    #[test]
    fn split_key_agrees_with_the_plain_reading(s in keyish()) {
        prop_assert_eq!(lines::split_key(&s), split_key_plain(&s));
    }

    #[test]
    fn structural_keys_agree_with_the_list(s in keyish(), exact: bool) {
        let key = s.split(':').next().unwrap_or_default().trim();
        prop_assert_eq!(structural_key(key, exact), structural_key_plain(key, exact));
        for k in STRUCTURAL_KEYS {
            prop_assert_eq!(structural_key(k, exact), k);
            let upper = k.to_ascii_uppercase();
            prop_assert_eq!(structural_key(&upper, exact), structural_key_plain(&upper, exact));
        }
    }
}

/// Text with the bidirectional controls and their neighbours: other characters whose UTF-8
/// starts with the same byte (D8, E2), and what [`mixed`] holds.
fn bidiish(max: usize) -> impl Strategy<Value = String> {
    let pick = prop::sample::select(vec![
        '\u{61c}',
        '\u{618}',
        '\u{600}',
        '\u{63f}',
        '\u{200e}',
        '\u{200f}',
        '\u{202a}',
        '\u{202e}',
        '\u{202f}',
        '\u{2066}',
        '\u{2069}',
        '\u{206a}',
        '\u{2065}',
        '\u{2029}',
        '→',
        'a',
        ' ',
        '\u{0}',
        'é',
        '\u{10ffff}',
    ]);
    let one = prop_oneof![pick.prop_map(String::from), mixed(3)];
    prop::collection::vec(one, 0..max).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn bidi_controls_found_by_their_bytes_as_by_their_characters(s in bidiish(24)) {
        prop_assert_eq!(lines::has_bidi_control(&s), s.chars().any(lines::is_bidi_control));
    }

    #[test]
    fn known_headers_found_as_words_as_in_the_list(s in keyish()) {
        let key = s.split(':').next().unwrap_or_default().trim();
        let plain = |k: &str| KNOWN_HEADERS.iter().position(|h| h.eq_ignore_ascii_case(k));
        prop_assert_eq!(known_header_index(key), plain(key));
        for k in STRUCTURAL_KEYS {
            prop_assert_eq!(known_header_index(k), plain(k));
            let upper = k.to_ascii_uppercase();
            prop_assert_eq!(known_header_index(&upper), plain(&upper));
        }
    }

    /// A part of a line reads the same borrowed as copied, and is borrowed from the input
    /// exactly when the line was read as it is.
    #[test]
    fn parts_borrowed_from_the_input_read_as_copies(s in mixed(30), a in 0usize..40, b in 0usize..40) {
        let cleaned = lines::clean(&s);
        let (a, b) = (a.min(cleaned.len()), b.min(cleaned.len()));
        let (a, b) = (a.min(b), a.max(b));
        prop_assume!(cleaned.is_char_boundary(a) && cleaned.is_char_boundary(b));
        let part = &cleaned[a..b];
        let got = part_of(&s, &cleaned, part);
        prop_assert_eq!(got.as_ref(), part);
        prop_assert_eq!(
            matches!(got, Cow::Borrowed(_)),
            matches!(cleaned, Cow::Borrowed(_))
        );
        // Text from elsewhere is copied.
        prop_assert!(matches!(part_of(&s, &s, "v1"), Cow::Owned(_)));
    }
}

/// Names and addresses near the valid ones: schemes, `//`, `email:` and `tel:`, white space.
fn addressish() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        Just("claude".to_string()),
        Just("://".to_string()),
        Just(":".to_string()),
        Just("/".to_string()),
        Just("email:".to_string()),
        Just("tel:".to_string()),
        Just("@".to_string()),
        "[a-zA-Z0-9_.+?#@-]{1,6}",
        mixed(3),
    ];
    prop::collection::vec(part, 0..6).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5000))]

    /// What the one look accepts, the full reading accepts too.
    #[test]
    fn plainly_valid_addresses_are_valid(v in addressish()) {
        if plainly_valid(v.as_bytes()) {
            prop_assert_eq!(check_fully(&v), Ok(()));
        }
    }
}

/// The one look answers the usual names and addresses, and leaves the rest to the rules.
#[test]
fn plain_names_and_addresses_are_seen_at_once() {
    for ok in [
        "CLAUDE",
        "supportbot@acme.com",
        "claude://session/abc",
        "human://kalle@example.com",
    ] {
        assert!(plainly_valid(ok.as_bytes()), "{ok}");
    }
    for other in [
        "",
        " CLAUDE",
        "a b",
        "x://",
        "x:///a",
        "email:a@b.co",
        "tel:+1-555",
        "é",
        "-x",
    ] {
        assert!(!plainly_valid(other.as_bytes()), "{other}");
    }
}

proptest! {
    /// `route_hops` splits as splitting on `→` and then on the string `->` does.
    #[test]
    fn route_hops_split_as_the_string_pattern_does(v in mixed(24).prop_map(|s| s.replace('k', "->").replace('Z', "-").replace('9', ">"))) {
        let plain: Vec<&str> = v.split('→').flat_map(|s| s.split("->")).map(str::trim).collect();
        prop_assert_eq!(route_hops(&v).collect::<Vec<_>>(), plain);
    }

    /// `find_newline` finds the first line break wherever it stands and whatever surrounds it.
    #[test]
    fn find_newline_finds_the_first_break(
        v in prop::collection::vec(any::<u8>(), 0..300),
    ) {
        prop_assert_eq!(lines::find_newline(&v), v.iter().position(|&c| c == b'\n'));
    }

    /// `find_newline_ascii` finds the first line break and says whether what stands before
    /// it is ASCII.
    #[test]
    fn find_newline_ascii_reads_the_line_before_the_break(
        v in prop::collection::vec(prop_oneof![8 => 0x20u8..0x7f, 1 => Just(b'\n'), 1 => 0x80u8..=0xff], 0..300),
    ) {
        let at = v.iter().position(|&c| c == b'\n');
        let ascii = v[..at.unwrap_or(v.len())].is_ascii();
        prop_assert_eq!(lines::find_newline_ascii(&v), (at, ascii));
    }

    /// A line of ASCII and arrows is one every check of a structural line passes: cleaning
    /// leaves it, no bidirectional control, no hidden text, already NFC.
    #[test]
    fn ascii_and_arrows_need_no_other_look(v in mixed(40)) {
        if super::quick::ascii_and_arrows(&v) {
            prop_assert!(matches!(lines::clean(&v), Cow::Borrowed(_)));
            prop_assert!(!lines::has_bidi_control(&v));
            prop_assert!(crate::sanitize::hidden::find(&v).is_none());
            prop_assert!(!crate::protocol::render::needs_nfc(&v));
        }
    }
}
