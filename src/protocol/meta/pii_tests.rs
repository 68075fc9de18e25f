//! The personal-data corpus: realistic text, each case with what must be found in it (or
//! nothing), and the properties redaction keeps on any text.

use proptest::prelude::*;

use super::PiiKind::{self, Card, Email, Iban, Phone};
use super::{find, redact};

/// Text, and the findings it holds (kind and the exact text found), in order.
type Case = (&'static str, &'static [(PiiKind, &'static str)]);

/// Personal data as people write it.
const FOUND: &[Case] = &[
    // E-mail addresses.
    (
        "Reach me at kalle.karlsson@example.se after lunch.",
        &[(Email, "kalle.karlsson@example.se")],
    ),
    (
        "cc: ops-team+alerts@mail.example.co.uk",
        &[(Email, "ops-team+alerts@mail.example.co.uk")],
    ),
    (
        "Her address is MARIA_GARCIA@EXAMPLE.ORG.",
        &[(Email, "MARIA_GARCIA@EXAMPLE.ORG")],
    ),
    (
        "From: Jane Doe <j.doe@sub.example.com>",
        &[(Email, "j.doe@sub.example.com")],
    ),
    // Phone numbers in several national formats.
    (
        "Ring +46 8 123 456 78 on weekdays",
        &[(Phone, "+46 8 123 456 78")],
    ),
    (
        "UK office: +44 20 7946 0958",
        &[(Phone, "+44 20 7946 0958")],
    ),
    ("Büro: 030 12345678", &[(Phone, "030 12345678")]),
    ("call (212) 555-0143 today", &[(Phone, "(212) 555-0143")]),
    ("US desk: 415-555-0199.", &[(Phone, "415-555-0199")]),
    (
        "Mobil +49 (0) 171 2345678",
        &[(Phone, "+49 (0) 171 2345678")],
    ),
    ("Paris: +33 1 23 45 67 89", &[(Phone, "+33 1 23 45 67 89")]),
    ("Tel. 0171/2345678", &[(Phone, "0171/2345678")]),
    ("or +1.415.555.0100", &[(Phone, "+1.415.555.0100")]),
    // IBANs (mod-97 checked).
    (
        "IBAN DE89 3704 0044 0532 0130 00, thanks",
        &[(Iban, "DE89 3704 0044 0532 0130 00")],
    ),
    (
        "pay to GB82WEST12345698765432",
        &[(Iban, "GB82WEST12345698765432")],
    ),
    (
        "FR14 2004 1010 0505 0001 3M02 606 is the account",
        &[(Iban, "FR14 2004 1010 0505 0001 3M02 606")],
    ),
    ("NL91ABNA0417164300", &[(Iban, "NL91ABNA0417164300")]),
    // Card numbers (Luhn checked).
    (
        "card 4111 1111 1111 1111 exp 12/27",
        &[(Card, "4111 1111 1111 1111")],
    ),
    ("5500-0000-0000-0004", &[(Card, "5500-0000-0000-0004")]),
    ("Amex 3782 822463 10005", &[(Card, "3782 822463 10005")]),
    ("visa 4012888888881881.", &[(Card, "4012888888881881")]),
    // Written the ways a plain ASCII pattern misses.
    (
        "iban de89 3704 0044 0532 0130 00 please",
        &[(Iban, "de89 3704 0044 0532 0130 00")],
    ),
    (
        "card 4111\u{a0}1111\u{a0}1111\u{a0}1111 (no-break spaces)",
        &[(Card, "4111\u{a0}1111\u{a0}1111\u{a0}1111")],
    ),
    ("card 4111.1111.1111.1111", &[(Card, "4111.1111.1111.1111")]),
    (
        "Karte 5500\u{202f}0000\u{202f}0000\u{202f}0004",
        &[(Card, "5500\u{202f}0000\u{202f}0000\u{202f}0004")],
    ),
    (
        "電話 ０３０ １２３４５６７８ まで",
        &[(Phone, "０３０ １２３４５６７８")],
    ),
    ("رقم الهاتف ٠١٧١ ٢٣٤٥٦٧٨", &[(Phone, "٠١٧١ ٢٣٤٥٦٧٨")]),
    (
        "write to name(at)example.com",
        &[(Email, "name(at)example.com")],
    ),
    ("kalle＠example.com", &[(Email, "kalle＠example.com")]),
    (
        "Lisa [at] example.org or kalle (AT) mail.example.se",
        &[
            (Email, "Lisa [at] example.org"),
            (Email, "kalle (AT) mail.example.se"),
        ],
    ),
    (
        "카드 ４１１１ １１１１ １１１１ １１１１",
        &[(Card, "４１１１ １１１１ １１１１ １１１１")],
    ),
];

/// Text that looks like numbers or addresses but holds no personal data.
const NOT_FOUND: &[&str] = &[
    "Release 1.2.3.4 is out; see v2.10.0-rc.1 and 10.0.19045.3803",
    "ULID 01KKC11SV2Q506QQNSS2207Q64 and UUID 0190a8e2-7c1d-7b3e-9f00-1234567890ab",
    "UUID 0190a8ee-0123-4567-a900-1234567890ab in the log",
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "md5 ab12e4c9f0d3b7a1c5e8f2d6b9a0c3e7, commit de89a3f0",
    "on 2026-11-23 at 14:00 UTC, or 23.11.2026 at 9:30",
    "between 9:00 and 17:30, a 3-of-4 quorum, 2,000 tenants × 40 req/s",
    "Price: €1,299.00 or $1.049,95; 12 500 kr",
    "ISBN 978-3-16-148410-0 and ISBN 0-306-40615-2",
    "servers 10.0.0.1, 192.168.100.200 and 2001:db8::1",
    "see https://shop.example/orders/20240523134501/items?page=12345678",
    "https://example.com/u/01KKC11SV2Q506QQNSS2207Q64/posts/1234567890123",
    "timestamp 1700000000000 and order 98765432109876",
    "limit 1048576 bytes, 50,541,363 rows",
    "human://kalle@crosstalk.example and https://user@host.example",
    "4111 1111 1111 1112 fails Luhn; 1111111111111111 is one digit",
    "DE89 3704 0044 0532 0130 01 (bad check digits)",
    "meet (at) noon, the [AT] key, {at} least",
    "version ４.２.１ at １２:３０, ２０２６年１１月２３日",
    "build 2024.0101.1234 and 1.2.3.4.5.6.7.8",
    "ab12 3456 7890 1234 5678 is a lower-case run of no country",
];

fn found(text: &str) -> Vec<(PiiKind, &str)> {
    find(text)
        .into_iter()
        .map(|m| (m.kind, &text[m.range]))
        .collect()
}

#[test]
fn the_corpus_finds_what_it_should_and_nothing_else() {
    let mut wrong = Vec::new();
    for (text, want) in FOUND {
        if found(text) != *want {
            wrong.push(format!("{text:?}: found {:?}, want {want:?}", found(text)));
        }
    }
    for text in NOT_FOUND {
        if !found(text).is_empty() {
            wrong.push(format!("{text:?}: found {:?}, want nothing", found(text)));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn redaction_leaves_the_corpus_without_findings() {
    for (text, want) in FOUND {
        let (out, counts) = redact(text);
        assert!(find(&out).is_empty(), "{text:?} → {out:?}");
        assert_eq!(
            counts.iter().map(|(_, n)| n).sum::<usize>(),
            want.len(),
            "{text:?}"
        );
        for (_, piece) in *want {
            assert!(!out.contains(piece), "{text:?} → {out:?}");
        }
    }
}

/// Pieces of text to build inputs from: every finding of the corpus, what surrounds them,
/// and characters that fold.
fn piece() -> impl Strategy<Value = String> {
    let pii: Vec<&'static str> = (FOUND.iter())
        .flat_map(|(_, w)| w.iter().map(|(_, p)| *p))
        .collect();
    prop_oneof![
        proptest::sample::select(pii).prop_map(str::to_string),
        proptest::sample::select(NOT_FOUND.to_vec()).prop_map(str::to_string),
        "[a-zA-Z0-9 .,:;@+()\\[\\]/-]{1,12}",
        "[\u{a0}\u{202f}\u{ff10}-\u{ff19}\u{ff20}\u{660}-\u{669}\u{6f0}-\u{6f9}é→ ]{1,6}",
        Just("(at)".to_string()),
        Just("[EMAIL]".to_string()),
    ]
}

/// Ordinary words and the ids, versions, dates and times that stand among them.
fn ordinary() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        "[a-zA-Zäöüéß]{1,10}",
        "[0-7][0-9A-HJKMNP-TV-Z]{25}",
        "[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
        "[0-9a-f]{40}",
        "[0-9a-f]{64}",
        "v?[0-9]{1,2}\\.[0-9]{1,2}\\.[0-9]{1,3}",
        "20[0-9]{2}-[01][0-9]-[0-3][0-9]",
        "[0-2][0-9]:[0-5][0-9](:[0-5][0-9])?",
        "[0-9]{1,3}(,[0-9]{3}){0,2}",
        "https://example\\.com/[a-z]{1,8}/[0-9A-Z]{26}",
    ];
    proptest::collection::vec(word, 1..30).prop_map(|w| w.join(" "))
}

proptest! {
    /// Redacting leaves nothing that is found, and redacting again changes nothing.
    #[test]
    fn redaction_is_idempotent_and_leaves_no_finding(
        pieces in proptest::collection::vec(piece(), 0..12),
    ) {
        let text = pieces.concat();
        let (once, _) = redact(&text);
        prop_assert!(find(&once).is_empty(), "{:?} → {:?}: {:?}", text, once, find(&once));
        prop_assert_eq!(redact(&once).0, once);
    }

    /// Prose with ids, hashes, versions, dates, times and counts in it holds no finding.
    #[test]
    fn ordinary_prose_and_ids_are_never_flagged(text in ordinary()) {
        prop_assert!(find(&text).is_empty(), "{:?}: {:?}", text, find(&text));
    }

    /// Findings are on whole characters of the text as given, in order, never overlapping.
    #[test]
    fn findings_are_whole_characters_in_order(pieces in proptest::collection::vec(piece(), 0..12)) {
        let text = pieces.concat();
        let mut end = 0;
        for m in find(&text) {
            prop_assert!(m.range.start >= end && m.range.start < m.range.end);
            prop_assert!(text.is_char_boundary(m.range.start) && text.is_char_boundary(m.range.end));
            end = m.range.end;
        }
    }
}
