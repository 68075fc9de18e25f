//! Look-alike identifiers: a key id, a banner name or an address whose letters come from
//! more than one script (`аlice@example.com` with a Cyrillic `а`) reads as another one on
//! screen. The comparison rules stay as they are (a key id is its exact text, so the
//! look-alike is a different id); this is what makes it visible.
//!
//! The rule is UTS #39's (the `unicode-security` crate, from the unicode-rs project): a text
//! is single-script when one script, or one writing system that mixes scripts by nature
//! (Japanese: Han, Hiragana and Katakana; Korean: Han and Hangul; Chinese with Bopomofo),
//! covers all its letters; digits, punctuation and symbols belong to every script. Of mixed
//! texts, those UTS #39 calls *highly restrictive* are not marked: Latin beside Japanese,
//! Korean or Chinese (`東京@example.jp`) is how such addresses are written, and neither
//! writing system has letters that pass for Latin ones. Every other mix is (Cyrillic or
//! Greek with Latin above all). The scripts are named from the Unicode Script property
//! (`unicode-script`).

use unicode_script::{Script, UnicodeScript};
use unicode_security::MixedScript;
use unicode_security::restriction_level::{RestrictionLevel, RestrictionLevelDetection};

/// The scripts `s` mixes, by name in alphabetical order (`["Cyrillic", "Latin"]`), or
/// `None` when it is single-script or highly restrictive (see above). ASCII text is
/// single-script at the cost of one check.
pub(crate) fn mixed_scripts(s: &str) -> Option<Vec<&'static str>> {
    if s.is_ascii() || s.is_single_script() {
        return None;
    }
    let of_a_script =
        |sc: &Script| !matches!(sc, Script::Common | Script::Inherited | Script::Unknown);
    // The restriction level of the letters alone: UTS #39 judges `@`, `.` and `/` not
    // allowed in an identifier, which would make every address "unrestricted".
    let letters: String = (s.chars()).filter(|c| of_a_script(&c.script())).collect();
    if letters.as_str().detect_restriction_level() <= RestrictionLevel::HighlyRestrictive {
        return None;
    }
    let mut names: Vec<&'static str> = (s.chars())
        .map(|c| c.script())
        .filter(of_a_script)
        .map(Script::full_name)
        .collect();
    names.sort_unstable();
    names.dedup();
    Some(names)
}

/// Why `s` can pass for another identifier, in words (`mixes Cyrillic and Latin letters`),
/// or `None` when it is single-script.
pub fn look_alike(s: &str) -> Option<String> {
    // A property value with `_` (`Old_Italic`) reads as words.
    let names: Vec<String> = mixed_scripts(s)?
        .into_iter()
        .map(|n| n.replace('_', " "))
        .collect();
    let list = match names.as_slice() {
        [] => "scripts".to_string(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    Some(format!("mixes {list} letters"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_look_alike_letter_from_another_script_is_named() {
        assert_eq!(
            look_alike("\u{430}lice@example.com").as_deref(),
            Some("mixes Cyrillic and Latin letters")
        );
        assert_eq!(
            mixed_scripts("p\u{430}yp\u{3b1}l"),
            Some(vec!["Cyrillic", "Greek", "Latin"])
        );
        assert_eq!(
            look_alike("p\u{430}yp\u{3b1}l").as_deref(),
            Some("mixes Cyrillic, Greek and Latin letters")
        );
        // A banner name with a Cyrillic `С`; Arabic beside Latin is a mix too.
        assert!(look_alike("\u{421}LAUDE").is_some());
        assert_eq!(
            look_alike("علي@example.com").as_deref(),
            Some("mixes Arabic and Latin letters")
        );
    }

    #[test]
    fn one_script_or_one_writing_system_is_not_marked() {
        for id in [
            "alice@example.com",
            "claude://session/1",
            "алиса@пример.рф",
            "κλειδί-1",
            "東京タワー@例え.jp",
            "서울@example.kr",
            "한국어2024",
            "café-ü",
            "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK",
        ] {
            assert_eq!(look_alike(id), None, "{id}");
        }
    }

    proptest! {
        /// Letters of one script, with digits and punctuation, are never marked; one letter
        /// of another script among Latin ones always is.
        #[test]
        fn one_script_is_never_marked_and_a_foreign_letter_always_is(
            latin in "[a-z0-9@._-]{0,12}",
            cyrillic in "[а-я0-9@._-]{1,12}",
            at in any::<prop::sample::Index>(),
        ) {
            prop_assert_eq!(look_alike(&latin), None);
            prop_assert_eq!(look_alike(&cyrillic), None);
            let mut chars: Vec<char> = format!("{latin}x").chars().collect();
            chars.insert(at.index(chars.len() + 1), 'о'); // Cyrillic о
            let mixed: String = chars.into_iter().collect();
            let why = look_alike(&mixed);
            prop_assert_eq!(why.as_deref(), Some("mixes Cyrillic and Latin letters"));
        }
    }
}
