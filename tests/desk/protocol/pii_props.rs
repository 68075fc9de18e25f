//! Personal-data detection on hostile and generated text: never panics, ranges are whole
//! characters, redaction leaves nothing to find and is stable, real card numbers and
//! addresses inside prose are found; and the `pii-undeclared` warning names its line.

use crosstalk::protocol::pii::{self, PiiKind};
use crosstalk::protocol::{Options, extract};
use proptest::prelude::*;

/// A card number with a valid Luhn digit, from an issuer prefix and random digits.
fn card(prefix: u32, body: &[u32]) -> String {
    let mut digits: Vec<u32> = prefix
        .to_string()
        .chars()
        .filter_map(|c| c.to_digit(10))
        .collect();
    digits.extend_from_slice(body);
    for check in 0..10 {
        let mut d = digits.clone();
        d.push(check);
        if pii::luhn(&d) {
            return d
                .iter()
                .map(|d| char::from_digit(*d, 10).unwrap())
                .collect();
        }
    }
    unreachable!("one check digit always fits")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256)
    ))]

    #[test]
    fn any_text_is_searched_safely_and_redaction_is_final(text in any::<String>()) {
        for m in pii::find(&text) {
            prop_assert!(text.is_char_boundary(m.range.start) && text.is_char_boundary(m.range.end));
            prop_assert!(m.range.start < m.range.end);
        }
        let (once, _) = pii::redact(&text);
        prop_assert!(pii::find(&once).is_empty(), "{once:?}");
        prop_assert_eq!(pii::redact(&once).0, once);
    }

    #[test]
    fn cards_and_addresses_in_prose_are_found(
        before in "[a-z ,.]{0,30}",
        after in "[a-z ,.]{0,30}",
        prefix in prop::sample::select(vec![4u32, 51, 55, 37, 6011, 2221]),
        body in prop::collection::vec(0u32..10, 11..14),
        user in "[a-z]{1,10}",
        host in "[a-z]{1,10}",
    ) {
        let number = card(prefix, &body);
        let text = format!("{before} {number} {after}");
        prop_assume!(number.chars().collect::<std::collections::HashSet<_>>().len() > 1);
        let found = pii::find(&text);
        prop_assert!(
            found.iter().any(|m| m.kind == PiiKind::Card && text[m.range.clone()] == *number),
            "{text:?}: {found:?}"
        );
        let mail = format!("{user}@{host}.example");
        let text = format!("{before} {mail} {after}");
        let found = pii::find(&text);
        prop_assert!(found.iter().any(|m| m.kind == PiiKind::Email && text[m.range.clone()] == mail));
    }
}

#[test]
fn a_declaration_that_the_body_contradicts_is_a_located_warning() {
    let text = "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nthread: 01KKC11SV2Q506QQNSS2207Q64\n\
                message: 01KKC11SV2Q506QQNSS2207Q64\ncontext: trip\nintent: REQUEST\n\n\
                meta: privacy\nPII: none\nConsent: explicit_yes\n\nbody: |\n  Book it.\n  \
                Mail kalle@example.org or call +49 171 2345678.\nsig: none\n[[END]]\n";
    let ex = extract(text, &Options::default());
    let d: Vec<_> = ex.envelopes[0]
        .diagnostics
        .iter()
        .filter(|d| d.code.as_str() == "pii-undeclared")
        .collect();
    assert_eq!(d.len(), 1, "{:?}", ex.envelopes[0].diagnostics);
    assert_eq!(d[0].line, 9, "at the `PII:` line");
    assert!(
        d[0].message.contains("an e-mail address, a phone number"),
        "{}",
        d[0].message
    );
    assert!(d[0].message.contains("body line 2"), "{}", d[0].message);
    // Redacted, the same envelope is clean.
    let (body, _) = pii::redact("Mail kalle@example.org or call +49 171 2345678.");
    let clean = text.replace("Mail kalle@example.org or call +49 171 2345678.", &body);
    let ex = extract(&clean, &Options::default());
    assert!(
        !ex.envelopes[0]
            .diagnostics
            .iter()
            .any(|d| d.code.as_str() == "pii-undeclared")
    );
}
