//! Personal data in message text: e-mail addresses, phone numbers, IBANs and payment card
//! numbers — what is cheap to find and reliable enough to act on — and redaction to the
//! placeholders the spec's examples use (`[EMAIL]`, `[PHONE]`, …).
//!
//! Each kind is found by a pattern (the `regex` crate: linear time on any input) and then
//! checked where a check exists, so that ordinary numbers are not taken for personal data:
//! an IBAN must pass its ISO 13616 mod-97 check, a card number the Luhn check and a known
//! issuer prefix; a phone number must be written as one (international `+`, a trunk `0`, or
//! the North American `(555) 123-4567` shape) with 8 to 15 digits, so dates, times, sizes and
//! ids are not phones.
//!
//! The patterns read the text folded (`pii_fold`): full-width characters, the decimal digits
//! of every script and the Unicode spaces read as the ASCII a reader takes them for, so
//! `４１１１`, `٤١١١` and a card grouped with no-break spaces are found; findings are
//! reported in the text as given. An address written with `(at)` or `[at]` for its `@`
//! (`name(at)example.com`) is an address. An IBAN in lower case (`de89 3704 …`) must also
//! have its country's registered length and layout, since lower-case letters and digits are
//! what hashes and ids are made of.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

/// A kind of personal data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PiiKind {
    /// An e-mail address.
    Email,
    /// A phone number.
    Phone,
    /// An international bank account number.
    Iban,
    /// A payment card number.
    Card,
}

impl PiiKind {
    /// The placeholder redaction writes.
    pub(crate) fn placeholder(self) -> &'static str {
        match self {
            PiiKind::Email => "[EMAIL]",
            PiiKind::Phone => "[PHONE]",
            PiiKind::Iban => "[IBAN]",
            PiiKind::Card => "[CARD]",
        }
    }

    /// In words, for diagnostics and badges.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            PiiKind::Email => "an e-mail address",
            PiiKind::Phone => "a phone number",
            PiiKind::Iban => "an IBAN",
            PiiKind::Card => "a payment card number",
        }
    }
}

/// One finding: its kind and its byte range in the text searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiiMatch {
    /// What it is.
    pub kind: PiiKind,
    /// Where it is (byte offsets, on character boundaries).
    pub range: Range<usize>,
}

fn re(pattern: &str) -> Regex {
    // The patterns are constants, checked by the tests.
    Regex::new(pattern).unwrap_or_else(|e| panic!("PII pattern {pattern}: {e}"))
}

static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i-u)[a-z0-9](?:[a-z0-9._%+-]{0,62}[a-z0-9_%+-])?(?:@| ?[(\[{] ?at ?[)\]}] ?)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.[a-z]{2,24}(?-u:\b)",
    )
});
static PHONE: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"\+[0-9]{1,3}(?:[ .-]?\([0-9]{1,4}\))?(?:[ .-]?[0-9]{1,6}){2,6}",
        r"|\([0-9]{3}\) ?[0-9]{3}[-. ][0-9]{4}",
        r"|(?-u:\b)[0-9]{3}[-.][0-9]{3}[-.][0-9]{4}(?-u:\b)",
        r"|(?-u:\b)0[0-9]{2,4}[ /-][0-9]{3,8}(?:[ -][0-9]{2,5})?(?-u:\b)",
    ))
});
static IBAN: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?-u:\b)[A-Za-z]{2}[0-9]{2}(?: ?[A-Za-z0-9]{4}){2,7}(?: ?[A-Za-z0-9]{1,4})?(?-u:\b)")
});
static CARD: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"(?-u:\b)(?:[0-9]{13,19}",
        r"|[0-9]{4}(?:[ -][0-9]{4}){2}[ -][0-9]{1,7}",
        r"|[0-9]{4}(?:\.[0-9]{4}){3}",
        r"|[0-9]{4}[ -][0-9]{6}[ -][0-9]{4,5})(?-u:\b)",
    ))
});

/// Every finding in `text`, in order, none overlapping (where two kinds claim the same
/// characters, the one that starts first — then the longer — wins).
pub fn find(text: &str) -> Vec<PiiMatch> {
    match super::pii_fold::fold(text) {
        None => find_kinds(text, &Candidates::of(text)),
        Some(folded) => {
            let mut found = find_kinds(&folded.text, &Candidates::of(&folded.text));
            for m in &mut found {
                m.range = folded.original(m.range.clone());
            }
            found
        }
    }
}

/// [`find`] running only the patterns of the kinds `may` leaves possible.
fn find_kinds(text: &str, may: &Candidates) -> Vec<PiiMatch> {
    let mut all = Vec::new();
    for m in may.iban.then(|| IBAN.find_iter(text)).into_iter().flatten() {
        if let Some(end) = iban_end(m.as_str()) {
            all.push(PiiMatch {
                kind: PiiKind::Iban,
                range: m.start()..m.start() + end,
            });
        }
    }
    for m in may.card.then(|| CARD.find_iter(text)).into_iter().flatten() {
        if card_valid(m.as_str()) && !part_of_longer_number(text, m.range()) {
            all.push(PiiMatch {
                kind: PiiKind::Card,
                range: m.range(),
            });
        }
    }
    for m in may
        .email
        .then(|| EMAIL.find_iter(text))
        .into_iter()
        .flatten()
    {
        // `scheme://user@host` is an address or URL, not someone's mailbox.
        if !text[..m.start()].ends_with("//") {
            all.push(PiiMatch {
                kind: PiiKind::Email,
                range: m.range(),
            });
        }
    }
    for m in may
        .phone
        .then(|| PHONE.find_iter(text))
        .into_iter()
        .flatten()
    {
        let digits = m.as_str().chars().filter(char::is_ascii_digit).count();
        if (8..=15).contains(&digits)
            && !glued(text, m.range())
            && !part_of_longer_number(text, m.range())
        {
            all.push(PiiMatch {
                kind: PiiKind::Phone,
                range: m.range(),
            });
        }
    }
    all.sort_by_key(|m| (m.range.start, std::cmp::Reverse(m.range.end)));
    let mut kept: Vec<PiiMatch> = Vec::with_capacity(all.len());
    for m in all {
        if kept.last().is_none_or(|k| m.range.start >= k.range.end) {
            kept.push(m);
        }
    }
    kept
}

/// Which kinds `text` can hold at all, from what every finding of a kind needs: an e-mail
/// address an `@`, a phone number 8 digits, a card number 13, an IBAN two capital letters
/// followed by two digits. Most message text fails all four, and one pass over its bytes
/// costs less than running a single pattern (`check` judges the body of every envelope that
/// declares `PII: none`). Each test only rules a kind out, so the findings are the same.
struct Candidates {
    email: bool,
    phone: bool,
    card: bool,
    iban: bool,
}

impl Candidates {
    /// Every kind possible: every pattern runs.
    #[cfg(test)]
    const ALL: Candidates = Candidates {
        email: true,
        phone: true,
        card: true,
        iban: true,
    };

    fn of(text: &str) -> Self {
        let b = text.as_bytes();
        let digits = count_digits(b);
        let iban = digits >= 2 && has_iban_start(b);
        Candidates {
            email: memchr::memchr(b'@', b).is_some() || has_bracketed_at(b),
            phone: digits >= 8,
            card: digits >= 13,
            iban,
        }
    }
}

/// The number of ASCII digits in `b`, counted in byte-wide sums of at most 255 bytes: the
/// compiler adds sixteen bytes at a time that way, where a count in a `usize` goes byte by
/// byte.
fn count_digits(b: &[u8]) -> usize {
    b.chunks(255)
        .map(|chunk| {
            let n: u8 = chunk.iter().map(|&c| u8::from(c.is_ascii_digit())).sum();
            usize::from(n)
        })
        .sum()
}

/// Whether `(at)`, `[at]` or `{at}` (any case, a space allowed inside the brackets) stands
/// in `b`: an address written so has no `@`.
fn has_bracketed_at(b: &[u8]) -> bool {
    memchr::memchr3_iter(b')', b']', b'}', b).any(|close| {
        let before = b[..close].strip_suffix(b" ").unwrap_or(&b[..close]);
        let Some(rest) = (before.len() >= 2)
            .then(|| &before[..before.len() - 2])
            .filter(|_| before[before.len() - 2..].eq_ignore_ascii_case(b"at"))
        else {
            return false;
        };
        let rest = rest.strip_suffix(b" ").unwrap_or(rest);
        rest.last().is_some_and(|o| matches!(o, b'(' | b'[' | b'{'))
    })
}

/// Whether two letters followed by two digits stand anywhere in `b` (how an IBAN begins). Every position is judged and the answers gathered without stopping at the first,
/// so that the compiler judges sixteen positions at a time: a search that stops goes byte by
/// byte, and most bodies hold no such place.
fn has_iban_start(b: &[u8]) -> bool {
    let Some(n) = b.len().checked_sub(3) else {
        return false;
    };
    let (w, x, y, z) = (&b[..n], &b[1..n + 1], &b[2..n + 2], &b[3..n + 3]);
    let found = (w.iter().zip(x).zip(y).zip(z)).fold(0u8, |acc, (((w, x), y), z)| {
        acc | u8::from(
            w.is_ascii_alphabetic()
                & x.is_ascii_alphabetic()
                & y.is_ascii_digit()
                & z.is_ascii_digit(),
        )
    });
    found != 0
}

/// A phone-shaped run that is part of a longer token (`v1.2.3.4`, `id+4915…x`, the
/// `-0123-4567-` of a UUID): not a phone.
fn glued(text: &str, r: Range<usize>) -> bool {
    let mut before = text[..r.start].chars().rev();
    let mut after = text[r.end..].chars();
    let hyphen_between = |next: Option<char>| next.is_some_and(char::is_alphanumeric);
    let digit_next = |next: Option<char>| next.is_some_and(|c| c.is_ascii_digit());
    match before.next() {
        Some(c) if c.is_alphanumeric() || c == '.' || c == '+' => return true,
        Some('-') if hyphen_between(before.next()) => return true,
        // `1,000 000 00`: the end of a grouped number, not the start of a phone number.
        Some(',' | ':') if digit_next(before.next()) => return true,
        _ => {}
    }
    match after.next() {
        Some(c) if c.is_alphanumeric() => true,
        Some('.') => text[r.end + 1..].starts_with(|d: char| d.is_ascii_digit()),
        Some('-') => hyphen_between(after.next()),
        // `… 00:00`, `… 000,5`: a time or a number goes on.
        Some(':' | ',') => digit_next(after.next()),
        _ => false,
    }
}

/// Whether a digit group before or after the range continues it (`DE89 3704 …`, an account
/// or reference number written in groups): then the range is a piece of that, not a card.
fn part_of_longer_number(text: &str, r: Range<usize>) -> bool {
    let before = &text.as_bytes()[..r.start];
    let after = &text.as_bytes()[r.end..];
    let sep = |b: u8| b == b' ' || b == b'-' || b == b'.';
    let continued_before = before.len() >= 2
        && sep(before[before.len() - 1])
        && before[before.len() - 2].is_ascii_digit();
    let continued_after = after.len() >= 2 && sep(after[0]) && after[1].is_ascii_digit();
    continued_before || continued_after
}

/// How much of an IBAN-shaped run `s` is an IBAN: all of it, or its first groups when the
/// pattern took a short word after it as a last group (`DE89 … 00 OK`, `de89 … 00 is`).
fn iban_end(s: &str) -> Option<usize> {
    let mut end = s.len();
    loop {
        if iban_of(&s[..end]) {
            return Some(end);
        }
        end = s[..end].rfind(' ')?;
    }
}

/// Whether `s` is an IBAN, in either case: its check digits, and its country's registered
/// length and layout.
fn iban_of(s: &str) -> bool {
    // The checksum alone passes one random run in 97 (a ULID in a URL's path): the country's
    // own format, which the `iban` crate knows, is checked too, in either case.
    if !iban_valid(&s.to_ascii_uppercase()) {
        return false;
    }
    let compact: String = (s.chars())
        .filter(|c| *c != ' ')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    compact.parse::<iban::Iban>().is_ok()
}

/// ISO 13616: move the first four characters to the end, letters to 10..35, mod 97 == 1.
pub(crate) fn iban_valid(s: &str) -> bool {
    let compact: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
    if !(15..=34).contains(&compact.len()) {
        return false;
    }
    let mut rem: u32 = 0;
    for c in compact[4..].iter().chain(&compact[..4]) {
        let v = match c.to_digit(36) {
            Some(v) => v,
            None => return false,
        };
        rem = if v >= 10 {
            (rem * 100 + v) % 97
        } else {
            (rem * 10 + v) % 97
        };
    }
    rem == 1
}

/// A card number: 13 to 19 digits, a known issuer's first digit (2–6), not one digit
/// repeated, and the Luhn check.
pub(crate) fn card_valid(s: &str) -> bool {
    let digits: Vec<u32> = s.chars().filter_map(|c| c.to_digit(10)).collect();
    if !(13..=19).contains(&digits.len()) || !(2..=6).contains(&digits[0]) {
        return false;
    }
    if digits.iter().all(|d| *d == digits[0]) {
        return false;
    }
    luhn(&digits)
}

/// The Luhn checksum over `digits` (check digit last).
pub fn luhn(digits: &[u32]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| {
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 { x - 9 } else { x }
            } else {
                *d
            }
        })
        .sum();
    sum % 10 == 0
}

/// The kinds of personal data in `text`, each once, in order of kind: what a badge shows.
/// ASCII text with no digit, no `@` and no closing bracket holds none, which much prose is
/// told at the cost of a scan.
pub fn kinds(text: &str) -> Vec<PiiKind> {
    // What every finding needs: a digit, an `@`, an `(at)`'s closing bracket, or characters
    // beyond ASCII that may fold to those.
    if !(text.bytes())
        .any(|b| b.is_ascii_digit() || matches!(b, b'@' | b')' | b']' | b'}') || b >= 0x80)
    {
        return Vec::new();
    }
    let mut out: Vec<PiiKind> = find(text).into_iter().map(|m| m.kind).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// How many times [`redact`] looks again for what its replacements uncovered.
pub(crate) const REDACT_PASSES: usize = 16;

/// `text` with every finding replaced by its placeholder, and what was replaced (kind and
/// count, in order of kind).
///
/// A finding can come to light only once its neighbour is replaced (`a@b.se+46 8 123 456 78`:
/// the phone number is glued to the address until the address is `[EMAIL]`), so the text
/// is redacted again until nothing is found. Each pass uncovers at most what stood glued to
/// the last one's findings; a chain deeper than [`REDACT_PASSES`] is built, not written, and
/// is not followed further (a hostile body would otherwise cost a pass per link).
pub fn redact(text: &str) -> (String, Vec<(PiiKind, usize)>) {
    let mut counts: std::collections::BTreeMap<PiiKind, usize> = Default::default();
    let mut out = text.to_string();
    for _ in 0..REDACT_PASSES {
        let found = find(&out);
        if found.is_empty() {
            break;
        }
        let mut next = String::with_capacity(out.len());
        let mut at = 0;
        for m in &found {
            next.push_str(&out[at..m.range.start]);
            next.push_str(m.kind.placeholder());
            at = m.range.end;
            *counts.entry(m.kind).or_default() += 1;
        }
        next.push_str(&out[at..]);
        out = next;
    }
    (out, counts.into_iter().collect())
}

/// `counts` in words: "2 e-mail addresses, 1 phone number".
pub(crate) fn describe_counts(counts: &[(PiiKind, usize)]) -> String {
    counts
        .iter()
        .map(|(kind, n)| {
            let (one, many) = match kind {
                PiiKind::Email => ("e-mail address", "e-mail addresses"),
                PiiKind::Phone => ("phone number", "phone numbers"),
                PiiKind::Iban => ("IBAN", "IBANs"),
                PiiKind::Card => ("payment card number", "payment card numbers"),
            };
            format!("{n} {}", if *n == 1 { one } else { many })
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[path = "pii_tests.rs"]
mod corpus_tests;

#[cfg(test)]
mod kinds_tests {
    use super::*;

    #[test]
    fn kinds_once_each_and_none_in_plain_prose() {
        assert_eq!(kinds("no digits here, none at all"), vec![]);
        assert_eq!(
            kinds("mail a@example.com, b@example.org or call +49 30 1234567"),
            vec![PiiKind::Email, PiiKind::Phone]
        );
        assert_eq!(kinds("version 2 of 3"), vec![]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(PiiKind, &str)> {
        find(text)
            .into_iter()
            .map(|m| (m.kind, &text[m.range]))
            .collect()
    }

    #[test]
    fn finds_what_it_should() {
        use PiiKind::*;
        assert_eq!(
            kinds("mail kalle.k+test@example.co.uk now"),
            [(Email, "kalle.k+test@example.co.uk")]
        );
        assert_eq!(kinds("call +49 171 2345678."), [(Phone, "+49 171 2345678")]);
        assert_eq!(kinds("or (555) 123-4567"), [(Phone, "(555) 123-4567")]);
        assert_eq!(kinds("or 555-123-4567"), [(Phone, "555-123-4567")]);
        assert_eq!(kinds("Büro 030 12345678"), [(Phone, "030 12345678")]);
        // Counts and times around digit groups are not phone numbers.
        assert_eq!(kinds("0,000 000 00:00"), []);
        // A checksum that holds by chance, in a code no country has.
        assert_eq!(
            kinds("https://example.com/a/QP966VGKDD2CLBD0RWQRLATC1P"),
            []
        );
        assert_eq!(kinds("at 030 1234567:30"), []);
        assert_eq!(
            kinds("IBAN DE89 3704 0044 0532 0130 00, thanks"),
            [(Iban, "DE89 3704 0044 0532 0130 00")]
        );
        assert_eq!(
            kinds("GB82WEST12345698765432"),
            [(Iban, "GB82WEST12345698765432")]
        );
        assert_eq!(
            kinds("card 4111 1111 1111 1111 exp"),
            [(Card, "4111 1111 1111 1111")]
        );
        assert_eq!(
            kinds("5500-0000-0000-0004"),
            [(Card, "5500-0000-0000-0004")]
        );
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        for text in [
            "on 2026-11-23 at 14:00, 50,541,363 bytes, limit 1048576",
            "version 1.2.3.4 and 10.0.0.1",
            "ids 01KKC11SV2Q506QQNSS2207Q64 and 0190a8e2-7c1d-7b3e-9f00-1234567890ab",
            "human://kalle@crosstalk.example and https://user@host.example",
            "DE89 3704 0044 0532 0130 01 (bad check digits)",
            "4111 1111 1111 1112 fails Luhn; 1111111111111111 is one digit",
            "timestamp 1700000000000 and order 98765432109876",
            "between 9:00 and 17:30, 3-of-4 quorum, 2,000 tenants × 40 req/s",
        ] {
            assert_eq!(kinds(text), [], "{text}");
        }
    }

    proptest::proptest! {
        /// The byte tests read many bytes at a time answer as the byte-by-byte readings do.
        #[test]
        fn digits_and_iban_starts_found_as_byte_by_byte(
            text in "([a-zA-Z0-9 .@+()/-]|DE89|GB82WEST|4111|\\+49 |é|\n){0,300}",
        ) {
            // Every prefix, so that a place at the very end is judged too.
            for end in 0..=text.len() {
                let b = &text.as_bytes()[..end];
                proptest::prop_assert_eq!(
                    count_digits(b),
                    b.iter().filter(|c| c.is_ascii_digit()).count()
                );
                let iban = b.windows(4).any(|w| {
                    w[0].is_ascii_alphabetic()
                        && w[1].is_ascii_alphabetic()
                        && w[2].is_ascii_digit()
                        && w[3].is_ascii_digit()
                });
                proptest::prop_assert_eq!(has_iban_start(b), iban, "{:?}", b);
            }
        }

        /// Ruling kinds out by their bytes first finds what running every pattern finds.
        #[test]
        fn the_byte_tests_change_no_finding(
            text in "([a-zA-Z0-9 .@+()/\\[\\]{}-]|DE89|de89|GB82WEST|4111|\\+49 |@example\\.com|\\(at\\)|\\[AT\\]|\n){0,40}",
        ) {
            proptest::prop_assert_eq!(find(&text), find_kinds(&text, &Candidates::ALL));
        }
    }

    #[test]
    fn redacts_to_placeholders_and_counts() {
        let (out, counts) =
            redact("mail a@b.example or +1 415 555 0100, card 4111111111111111, a@b.example");
        assert_eq!(out, "mail [EMAIL] or [PHONE], card [CARD], [EMAIL]");
        assert_eq!(
            counts,
            [(PiiKind::Email, 2), (PiiKind::Phone, 1), (PiiKind::Card, 1)]
        );
        assert_eq!(redact(&out).0, out, "redacting twice changes nothing");
    }
}
