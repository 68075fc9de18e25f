//! What a `meta: privacy` `Consent` value says. The spec lists `explicit_yes | explicit_no |
//! implicit` and writes the time a grant was given after its kind
//! (`explicit_yes_2025-10-09T16:00Z`); the companion documents add `opt-in_<time>` and a
//! HANDOFF's `transferred_with_approval`.
//!
//! Read tolerantly where a misreading withholds consent, strictly where it could grant consent
//! no one gave:
//! - the kind in any case, its words joined by `_`, `-` or a space (`Explicit-No`, `opt in`),
//!   and ending at a word boundary (`implicitly` is not `implicit`);
//! - a time after the kind joined by `_` or spaces, in any case
//!   (`explicit_no 2025-10-09t16:00z`);
//! - a refusal followed by anything else (`explicit_no (patient refused)`) is still a refusal;
//! - a grant followed by anything but a time (`explicit_yes (verbal)`, `explicit_yes_soon`) is
//!   not understood: the words after it could narrow or take back the grant;
//! - any other value (`no`, `denied`, `pending`, an empty one) is not understood. It is neither
//!   a grant nor a refusal, and the envelope carries no consent.

use jiff::Timestamp;

use crate::protocol::validate::parse_time;

/// A kind of `Consent` value the protocol knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `explicit_yes`: given explicitly.
    ExplicitYes,
    /// `opt-in`: given explicitly, by opting in.
    OptIn,
    /// `implicit`: inferred, never stated. Not the explicit consent personal data needs.
    Implicit,
    /// `transferred_with_approval`: carried over from another consent (`Original-Consent-ID`)
    /// on a HANDOFF.
    Transferred,
    /// `explicit_no`: refused.
    ExplicitNo,
}

/// Each kind and the words it is written with.
const KINDS: [(Kind, &[&str]); 5] = [
    (Kind::ExplicitYes, &["explicit", "yes"]),
    (Kind::ExplicitNo, &["explicit", "no"]),
    (Kind::OptIn, &["opt", "in"]),
    (Kind::Implicit, &["implicit"]),
    (Kind::Transferred, &["transferred", "with", "approval"]),
];

impl Kind {
    /// The kind as the protocol spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::ExplicitYes => "explicit_yes",
            Kind::OptIn => "opt-in",
            Kind::Implicit => "implicit",
            Kind::Transferred => "transferred_with_approval",
            Kind::ExplicitNo => "explicit_no",
        }
    }

    /// Whether it grants consent (every kind but `explicit_no`).
    pub fn grants(self) -> bool {
        self != Kind::ExplicitNo
    }

    /// Whether it grants the explicit consent the spec requires for personal data by its own
    /// word. A transfer is as explicit as the consent it came from, which only the ledger knows.
    pub(crate) fn is_explicit(self) -> bool {
        matches!(self, Kind::ExplicitYes | Kind::OptIn)
    }
}

/// A `Consent` value that was understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// What it says.
    pub kind: Kind,
    /// When it was given (or refused), when the value says.
    pub at: Option<Timestamp>,
}

/// Why a `Consent` value was not understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotUnderstood {
    /// It starts with no kind the protocol knows (`no`, `denied`, `pending`, …).
    UnknownKind,
    /// It names a grant, then something other than a time.
    TextAfterGrant(Kind),
}

impl NotUnderstood {
    /// What to tell the author of `value`, and what to write instead.
    pub fn message(self, value: &str) -> String {
        let why = match self {
            NotUnderstood::UnknownKind => "it is neither a grant (explicit_yes, opt-in, implicit, \
                 transferred_with_approval) nor a refusal (explicit_no)"
                .to_string(),
            NotUnderstood::TextAfterGrant(kind) => format!(
                "after `{}` only a time may follow, since other words could narrow or take back \
                 the grant",
                kind.as_str()
            ),
        };
        format!(
            "Consent `{value}` is not understood, so the envelope carries no consent: {why}; \
             write it like explicit_yes_2025-10-09T16:00Z or explicit_no"
        )
    }
}

/// Reads a `Consent` value (see the module's rules).
pub fn read(value: &str) -> Result<Reading, NotUnderstood> {
    let v = value.trim();
    let (kind, rest) = KINDS
        .iter()
        .find_map(|(kind, words)| Some((*kind, strip_words(v, words)?)))
        .ok_or(NotUnderstood::UnknownKind)?;
    let after = after_separator(rest);
    if kind == Kind::ExplicitNo {
        // The time may be followed by a remark: try the whole rest, then its first word.
        let at = after.and_then(|t| time(t).or_else(|| time(t.split_whitespace().next()?)));
        return Ok(Reading { kind, at });
    }
    if rest.is_empty() {
        return Ok(Reading { kind, at: None });
    }
    match after.and_then(time) {
        Some(at) => Ok(Reading { kind, at: Some(at) }),
        None => Err(NotUnderstood::TextAfterGrant(kind)),
    }
}

/// `v` after the kind written with `words`, or `None` when `v` does not start with it.
fn strip_words<'a>(v: &'a str, words: &[&str]) -> Option<&'a str> {
    let mut rest = v;
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            rest = rest.strip_prefix(['_', '-', ' '])?;
        }
        if !rest.get(..word.len())?.eq_ignore_ascii_case(word) {
            return None;
        }
        rest = &rest[word.len()..];
    }
    (!rest.starts_with(char::is_alphanumeric)).then_some(rest)
}

/// What follows the kind's separator (`_`, or spaces), trimmed.
fn after_separator(rest: &str) -> Option<&str> {
    match rest.strip_prefix('_') {
        Some(t) => Some(t.trim()),
        None => rest.starts_with(char::is_whitespace).then(|| rest.trim()),
    }
}

/// A time in any case (`2025-10-09t16:00z`).
fn time(text: &str) -> Option<Timestamp> {
    parse_time(&text.to_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        parse_time(s).unwrap()
    }

    fn grant(kind: Kind, at: Option<&str>) -> Result<Reading, NotUnderstood> {
        Ok(Reading {
            kind,
            at: at.map(t),
        })
    }

    #[test]
    fn grants_in_every_spelling() {
        let at = Some("2025-10-09T16:00Z");
        for (value, want) in [
            ("explicit_yes", grant(Kind::ExplicitYes, None)),
            (
                "explicit_yes_2025-10-09T16:00Z",
                grant(Kind::ExplicitYes, at),
            ),
            (
                "EXPLICIT_YES_2025-10-09T16:00Z",
                grant(Kind::ExplicitYes, at),
            ),
            (
                "Explicit-Yes 2025-10-09t16:00z",
                grant(Kind::ExplicitYes, at),
            ),
            ("explicit yes  2025-10-09T16Z", grant(Kind::ExplicitYes, at)),
            (
                "  explicit_yes_2025-10-09 16:00Z ",
                grant(Kind::ExplicitYes, at),
            ),
            ("opt-in_2025-10-09", grant(Kind::OptIn, Some("2025-10-09"))),
            ("Opt_In", grant(Kind::OptIn, None)),
            ("implicit", grant(Kind::Implicit, None)),
            ("Implicit_2025-10-09T16:00Z", grant(Kind::Implicit, at)),
            ("transferred_with_approval", grant(Kind::Transferred, None)),
            (
                "Transferred-With-Approval 2025-10-09T16:00Z",
                grant(Kind::Transferred, at),
            ),
        ] {
            assert_eq!(read(value), want, "{value}");
            assert!(want.unwrap().kind.grants(), "{value}");
        }
        assert!(Kind::ExplicitYes.is_explicit() && Kind::OptIn.is_explicit());
        assert!(!Kind::Implicit.is_explicit() && !Kind::Transferred.is_explicit());
    }

    #[test]
    fn refusals_in_every_spelling_with_or_without_a_remark() {
        let at = Some(t("2025-10-09T16:00Z"));
        for (value, want) in [
            ("explicit_no", None),
            ("explicit-no", None),
            ("EXPLICIT NO", None),
            ("explicit_no (patient refused)", None),
            ("explicit_no_2025-10-09T16:00Z", at),
            ("explicit_no 2025-10-09t16:00z", at),
            ("explicit_no_2025-10-09T16:00Z (by phone)", at),
            ("explicit_no_soon", None),
            ("explicit_no, withdrawn", None),
        ] {
            let r = read(value).unwrap_or_else(|e| panic!("{value}: {e:?}"));
            assert_eq!(r.kind, Kind::ExplicitNo, "{value}");
            assert_eq!(r.at, want, "{value}");
            assert!(!r.kind.grants());
        }
    }

    #[test]
    fn anything_else_is_not_understood() {
        for value in [
            "",
            "no",
            "none",
            "denied",
            "withdrawn",
            "pending",
            "yes",
            "true",
            "explicit",
            "explicit_",
            "explicit_maybe",
            "explicitly_yes",
            "implicitly",
            "opt-out",
            "opt-inward",
            "noexplicit_no",
            "transferred",
            "ja",
        ] {
            assert_eq!(read(value), Err(NotUnderstood::UnknownKind), "{value}");
        }
        for (value, kind) in [
            ("explicit_yes (verbal)", Kind::ExplicitYes),
            ("explicit_yes_soon", Kind::ExplicitYes),
            ("explicit_yes_2025-13-45", Kind::ExplicitYes),
            ("explicit_yes_", Kind::ExplicitYes),
            ("explicit_yes_no", Kind::ExplicitYes),
            ("explicit_yes-2025-10-09", Kind::ExplicitYes),
            (
                "explicit_yes_2025-10-09T16:00Z, withdrawn",
                Kind::ExplicitYes,
            ),
            ("implicit?", Kind::Implicit),
            ("opt-in: revoked", Kind::OptIn),
        ] {
            assert_eq!(
                read(value),
                Err(NotUnderstood::TextAfterGrant(kind)),
                "{value}"
            );
        }
        // Multi-byte text never splits inside a character.
        assert!(read("éxplicit_yes").is_err());
        assert!(read("explicit_yés").is_err());
    }

    #[test]
    fn the_message_says_what_to_write() {
        let m = NotUnderstood::UnknownKind.message("no");
        assert!(m.contains("Consent `no` is not understood"), "{m}");
        assert!(m.contains("explicit_no"), "{m}");
        let m = NotUnderstood::TextAfterGrant(Kind::ExplicitYes).message("explicit_yes (verbal)");
        assert!(
            m.contains("after `explicit_yes` only a time may follow"),
            "{m}"
        );
    }
}
