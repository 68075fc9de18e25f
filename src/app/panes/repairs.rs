//! Diagnostics that report a repair, said to the operator who received the envelope.
//!
//! The reader's messages address whoever wrote the envelope ("add `[[END]]`", "indent body
//! lines"); the operator did not write it, and the stored copy is already repaired, so the
//! app says what was repaired and that nothing is left to do.

/// What the app says of a repair diagnostic (by its code), or `None` when the code does not
/// report a repair and the reader's message stands.
pub fn note(code: &str) -> Option<&'static str> {
    Some(match code {
        "missing-end" => "had no [[END]]; it was taken to end where the next text began",
        "body-indent-stripped" => {
            "a chat window had stripped the body's indentation; the body was read up to sig: / [[END]]"
        }
        "body-indent-partial" => "some body lines had lost their indentation; they were kept",
        "collapsed-newlines" => {
            "arrived on one line (a chat window collapsed its newlines) and was split at its header keys; worth a look at the values"
        }
        "invisible-chars" => {
            "invisible characters (zero-width, byte-order mark) were removed from its headers"
        }
        "header-on-banner" => {
            "its first headers stood on the banner's line (a line break was lost); they were read as headers"
        }
        "body-on-key-line" => {
            "its body's first line stood on the body: line (a line break was lost); it was read as the first line of the body below it"
        }
        "folded-body" => {
            "its body was marked > (a folded block); its lines were kept as written, as a body's are"
        }
        "invalid-utf8" => "bytes that were not UTF-8 were replaced with U+FFFD",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::note;
    use crate::protocol::{Options, extract};

    /// Every repair the reader reports on a damaged paste has an operator's note, and the
    /// note never asks the operator to fix the envelope.
    #[test]
    fn repairs_are_noted_without_instructions() {
        let damaged = "[[CLAUDE→CHATGPT v1.1]]\nthread: 01KKC11SV2Q506QQNSS2207Q64\nmessage: 01KKC11SV2Q506QQNSS2207Q65\nintent: REQUEST\nbody: |\nno indent here\n";
        let found = extract(damaged, &Options::default());
        let codes: Vec<&str> = found.envelopes[0]
            .diagnostics
            .iter()
            .map(|d| d.code.as_str())
            .collect();
        assert!(codes.contains(&"missing-end"), "{codes:?}");
        for code in [
            "missing-end",
            "body-indent-stripped",
            "collapsed-newlines",
            "body-on-key-line",
            "folded-body",
        ] {
            let n = note(code).unwrap();
            assert!(!n.contains("add ") && !n.contains("Indent"), "{n}");
        }
        assert_eq!(note("legacy-intent"), None);
    }
}
