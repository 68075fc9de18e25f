//! Smoke test of import + threading (the full store suite lives in `core.rs`).

use crosstalk::protocol::Options;
use crosstalk::store::{Outcome, Store};

#[test]
fn v10_session_threading_and_duplicates() {
    let mut s = Store::open_in_memory().unwrap();
    let text = "[[CLAUDE→BROTHER v1]]\nuser: kalle\nsession: 2025-10-09T16Z a7f3d1\ncontext: naming\nintent: QUESTION\nbody: |\n  Which name?\nsig: none\n[[END]]\n\n[[BROTHER→CLAUDE v1]]\nsession: 2025-10-09T16Z a7f3d1\nresponse: |\n  crosstalk.\n[[END]]\n";
    let r = s.import_text("t", text, &Options::default()).unwrap();
    assert_eq!(r.count(Outcome::Imported), 2, "{r:#?}");
    let threads = s.threads(10).unwrap();
    assert_eq!(threads.len(), 1);
    let t = s.thread(&threads[0].id).unwrap().unwrap();
    assert_eq!(t.messages.len(), 2);
    assert_eq!(
        t.messages[1].parent.as_deref(),
        Some(t.messages[0].id.as_str())
    );
    assert_eq!(t.messages[1].intent.as_deref(), Some("RESPOND"));
    assert_eq!(t.messages[1].depth, 1);
    let again = s.import_text("t", text, &Options::default()).unwrap();
    assert_eq!(again.count(Outcome::Duplicate), 2, "{again:#?}");
    assert_eq!(s.search("crosstalk", 10).unwrap().len(), 1);
    assert!(s.integrity_check().unwrap());
}
