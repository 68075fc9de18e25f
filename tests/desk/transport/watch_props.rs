//! Properties of the clipboard watcher's decisions, over any sequence of clipboard texts:
//! an own copy is never new input, the same text twice in a row is news once, and text is
//! reported as holding envelopes exactly when the parser finds one.

use crosstalk::clipboard::watch::{OwnCopies, Seen, Watcher};
use crosstalk::protocol::{Options, extract};
use proptest::prelude::*;

const POOL: &[&str] = &[
    include_str!("../../../assets/examples/v11-request.crosstalk"),
    include_str!("../../../assets/examples/v10-question.crosstalk"),
    "just chat text",
    "a [[wiki]] link, no envelope",
    "[[A→B v1]]\nthread: nope\nmessage: nope\nintent: REQUEST\n\nbody: |\n  x\nsig: none\n[[END]]\n",
    "",
];

proptest! {
    #[test]
    fn decisions_follow_the_rules(
        steps in proptest::collection::vec((0..POOL.len(), any::<bool>(), any::<bool>()), 1..40)
    ) {
        let own = OwnCopies::default();
        let mut w = Watcher::new(own.clone(), Options::default());
        w.baseline(None);
        let mut last: Option<&str> = None;
        let mut owned: Vec<&str> = Vec::new();
        for (i, copy_it, crlf) in steps {
            let text = POOL[i];
            if copy_it {
                own.record(text);
                owned.push(text);
            }
            let shown = if crlf { text.replace('\n', "\r\n") } else { text.to_string() };
            let seen = w.observe(Some(&shown));
            let blank = text.trim().is_empty();
            if blank || last == Some(text) {
                prop_assert_eq!(seen, Seen::Same);
            } else if owned.contains(&text) {
                prop_assert_eq!(seen, Seen::OwnCopy);
            } else {
                let n = extract(text, &Options::default()).envelopes.len();
                if n == 0 {
                    prop_assert_eq!(seen, Seen::NoEnvelope { bytes: shown.len() });
                } else {
                    prop_assert_eq!(seen, Seen::Envelopes { count: n });
                }
            }
            if !blank {
                last = Some(text);
            }
        }
    }
}
