//! The example envelopes shipped in `assets/examples/` stay valid: no errors, and the signed
//! one verifies with the published rc1 test key it was signed with.

use crosstalk::protocol::keys::parse_public_key;
use crosstalk::protocol::signature::verify_parsed;
use crosstalk::protocol::{Options, extract};

#[test]
fn examples_parse_without_errors() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/examples");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).expect("assets/examples") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read");
        let ex = extract(&text, &Options::default());
        assert_eq!(ex.envelopes.len(), 1, "{}", path.display());
        assert_eq!(
            ex.error_count(),
            0,
            "{}: {:?}",
            path.display(),
            ex.envelopes[0].diagnostics
        );
        if path.to_string_lossy().contains("signed") {
            let key = parse_public_key(include_str!("../../fixtures/rc1/public.pem")).expect("key");
            assert!(verify_parsed(&ex.envelopes[0], &text, &key).is_ok());
        }
        seen += 1;
    }
    assert!(seen >= 5);
}
