//! Text as the personal-data patterns read it: the characters a reader takes for ASCII ones
//! made ASCII, so that `４１１１ １１１１ …` (full-width), `٤١١١ ١١١١ …` (Arabic-Indic digits),
//! `4111 1111 …` grouped with no-break spaces and `kalle＠example.com` are found as what they
//! are. Each folded character is one byte of ASCII, and every other character is kept as it
//! is, so a finding in the folded text maps back to whole characters of the original.
//!
//! What is folded, from the Unicode character database (the `unicode-properties` crate):
//! - the full-width forms of ASCII (U+FF01–U+FF5E, by their definition `c - 0xFEE0`);
//! - every space separator (general category Zs: no-break, narrow no-break, thin, figure,
//!   ideographic spaces…) to a space;
//! - every decimal digit (general category Nd) to its ASCII digit: Unicode encodes each
//!   script's digits as runs of ten, 0 to 9, so a digit's value is its distance from the
//!   start of its run of digits, modulo ten;
//! - the hyphens written inside numbers (U+2010 hyphen, U+2011 non-breaking hyphen, U+2012
//!   figure dash, U+2212 minus) to `-`.
//!
//! Most text holds none of these, and is read as it is (ASCII text at the cost of one check).

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Text with foldable characters made ASCII, and where each of its bytes came from.
#[derive(Debug)]
pub(super) struct Folded {
    /// The folded text.
    pub text: String,
    /// For each byte of `text`, and once more for its end, the byte offset in the original
    /// of the same place: a finding's range `a..b` in `text` is `origin[a]..origin[b]` there.
    origin: Vec<usize>,
}

impl Folded {
    /// The range in the original text of the range `r` of the folded text (both on
    /// character boundaries).
    pub(super) fn original(&self, r: std::ops::Range<usize>) -> std::ops::Range<usize> {
        self.origin[r.start]..self.origin[r.end]
    }
}

/// `text` folded, or `None` when it holds nothing to fold (then it is read as it is).
pub(super) fn fold(text: &str) -> Option<Folded> {
    if text.is_ascii() {
        return None;
    }
    let first = text.char_indices().find(|(_, c)| ascii_of(*c).is_some())?.0;
    let mut out = String::with_capacity(text.len());
    let mut origin = Vec::with_capacity(text.len() + 1);
    out.push_str(&text[..first]);
    origin.extend(0..first);
    for (at, c) in text[first..].char_indices() {
        let at = first + at;
        match ascii_of(c) {
            Some(b) => {
                out.push(char::from(b));
                origin.push(at);
            }
            None => {
                out.push(c);
                origin.extend(at..at + c.len_utf8());
            }
        }
    }
    origin.push(text.len());
    Some(Folded { text: out, origin })
}

/// The ASCII character `c` is read as, for the non-ASCII characters that are folded.
fn ascii_of(c: char) -> Option<u8> {
    if c.is_ascii() {
        return None;
    }
    match c {
        '\u{FF01}'..='\u{FF5E}' => u8::try_from(u32::from(c) - 0xFEE0).ok(),
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2212}' => Some(b'-'),
        _ => match c.general_category() {
            GeneralCategory::SpaceSeparator => Some(b' '),
            GeneralCategory::DecimalNumber => Some(b'0' + digit_value(c)),
            _ => None,
        },
    }
}

/// The value of the decimal digit `c`: its distance from the first digit of the run of
/// decimal digits it stands in, modulo ten (runs of several scripts' digits stand one after
/// another, ten each: the mathematical digits are five).
fn digit_value(c: char) -> u8 {
    let mut start = u32::from(c);
    while let Some(before) = start.checked_sub(1).and_then(char::from_u32) {
        if before.general_category() != GeneralCategory::DecimalNumber {
            break;
        }
        start -= 1;
    }
    // A remainder of ten is below 10: the conversion cannot fail.
    u8::try_from((u32::from(c) - start) % 10).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use unicode_normalization::UnicodeNormalization;

    #[test]
    fn folds_what_reads_as_ascii_and_maps_back_to_whole_characters() {
        let text = "kalle＠ｅｘａｍｐｌｅ.com, ٤١١١\u{a0}۱۱۱۱ 1111 1111 ok é";
        let f = fold(text).expect("something to fold");
        assert_eq!(f.text, "kalle@example.com, 4111 1111 1111 1111 ok é");
        let at = f.text.find("4111").unwrap_or_default();
        let back = f.original(at..at + 4);
        assert_eq!(&text[back], "٤١١١");
        let e = f.text.find('é').unwrap_or_default();
        assert_eq!(&text[f.original(e..e + 2)], "é");
        assert_eq!(f.original(0..f.text.len()), 0..text.len());
        assert!(fold("plain ASCII 0301 2345678").is_none());
        assert!(fold("Grüße, nothing to fold").is_none());
    }

    #[test]
    fn every_decimal_digit_folds_to_its_value() {
        assert_eq!(digit_value('٤'), 4);
        assert_eq!(digit_value('७'), 7); // Devanagari
        assert_eq!(digit_value('𝟗'), 9); // mathematical bold
        assert_eq!(digit_value('𝟘'), 0); // mathematical double-struck, right after bold
        // Where compatibility decomposition knows a digit's value (full-width, mathematical,
        // …) it agrees; every other digit is checked to be in a run of ten.
        let mut digits = 0;
        for c in (0x80..=0x10FFFF).filter_map(char::from_u32) {
            if c.general_category() != GeneralCategory::DecimalNumber {
                continue;
            }
            digits += 1;
            let nfkc: String = c.nfkc().collect();
            if nfkc.len() == 1 && nfkc.as_bytes()[0].is_ascii_digit() {
                assert_eq!(
                    nfkc.as_bytes()[0] - b'0',
                    digit_value(c),
                    "U+{:04X}",
                    u32::from(c)
                );
            }
            let zero = u32::from(c) - u32::from(digit_value(c));
            let run: Vec<char> = (zero..zero + 10).filter_map(char::from_u32).collect();
            assert!(
                run.iter()
                    .all(|d| d.general_category() == GeneralCategory::DecimalNumber),
                "U+{:04X}",
                u32::from(c)
            );
        }
        assert!(digits > 500, "{digits}");
    }
}
