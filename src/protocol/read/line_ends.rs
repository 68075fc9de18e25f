//! Line ends as transports leave them, read back as the lines the sender wrote.
//!
//! Lines end at LF, and a CR before the LF is dropped (docs/PROTOCOL.md §1). Two transports
//! leave no LF at all:
//! - a terminal's paste: xterm, VTE and tmux send each line break as CR, so an envelope pasted
//!   into the app arrives as lines ending in CR; a text that ended its lines in CR LF arrives
//!   with CR CR;
//! - a file or clipboard of classic Mac line ends, CR alone.
//!
//! A text holding no LF at all is therefore read with CR as its line break: its shortest run of
//! CRs is one break when every run is a multiple of it (CR LF became CR CR, a text converted to
//! CR LF twice CR CR CR; blank lines are the longer runs), else each CR is one. An envelope has
//! lines with no blank line between them (its banner and headers), so a text whose breaks were
//! single LFs always holds a single CR and is never read by pairs. The rewrite keeps every
//! byte where it was (the last CR of a break becomes LF: CR CR reads as CR LF), so lines,
//! columns and spans stay those of the text received. A text holding an LF is read as it is:
//! there a lone CR is content.

use std::borrow::Cow;

/// How a text's lines end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineEnds {
    /// At LF (CR LF too): read as it is.
    Lf,
    /// At runs of this many CRs (1: CR alone; 2: CR LF through a terminal's paste; 3: a text
    /// converted to CR LF twice, then pasted): each run becomes one break.
    Cr(usize),
}

/// The longest run of CRs read as one line break: longer runs are blank lines.
const MOST_CRS: usize = 4;

/// How the lines of a text beginning with `start` end. For a text read in pieces, `start` is
/// its first piece: a run of CRs at its very end may go on in the next, and is not counted.
pub(crate) fn detect(start: &[u8]) -> LineEnds {
    if memchr::memchr(b'\n', start).is_some() || memchr::memchr(b'\r', start).is_none() {
        return LineEnds::Lf;
    }
    let mut runs: Vec<usize> = start
        .split(|b| *b != b'\r')
        .filter(|r| !r.is_empty())
        .map(<[u8]>::len)
        .collect();
    // A run at the very end may go on in the next piece.
    if start.last() == Some(&b'\r') && runs.len() > 1 {
        runs.pop();
    }
    // A break is the shortest run; a blank line is two breaks, and so on.
    let k = runs.iter().copied().min().unwrap_or(1);
    match k {
        2..=MOST_CRS if runs.iter().all(|r| r % k == 0) => LineEnds::Cr(k),
        _ => LineEnds::Cr(1),
    }
}

/// Rewrites the line ends of a text read in pieces, as [`LineEnds`] says, piece by piece (a
/// run of CRs may be split between two pieces).
#[derive(Debug, Clone)]
pub(crate) struct Rewriter {
    ends: LineEnds,
    /// How many CRs of the run the last piece ended in were counted towards the next break.
    run: usize,
}

impl Rewriter {
    /// A rewriter for a text whose lines end as `ends` says.
    pub(crate) fn new(ends: LineEnds) -> Rewriter {
        Rewriter { ends, run: 0 }
    }

    /// Whether it changes anything.
    pub(crate) fn rewrites(&self) -> bool {
        self.ends != LineEnds::Lf
    }

    /// The next piece, its line ends rewritten.
    pub(crate) fn piece(&mut self, text: String) -> String {
        if !self.rewrites() || memchr::memchr(b'\r', text.as_bytes()).is_none() {
            if !text.is_empty() {
                self.run = 0;
            }
            return text;
        }
        let mut bytes = text.into_bytes();
        self.bytes(&mut bytes);
        // CR and LF are ASCII: replacing one with the other keeps the text UTF-8.
        String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// The next piece as bytes, its line ends rewritten in place: the last CR of each run
    /// that makes a break becomes LF (so CR CR reads as CR LF, as the lines of §1 read it).
    pub(crate) fn bytes(&mut self, bytes: &mut [u8]) {
        let LineEnds::Cr(k) = self.ends else {
            return;
        };
        for b in bytes {
            if *b != b'\r' {
                self.run = 0;
                continue;
            }
            self.run += 1;
            if self.run == k {
                *b = b'\n';
                self.run = 0;
            }
        }
    }
}

/// `text` with its line ends rewritten as [`detect`] reads them.
pub(crate) fn normalize(text: &str) -> Cow<'_, str> {
    match detect(text.as_bytes()) {
        LineEnds::Lf => Cow::Borrowed(text),
        ends => Cow::Owned(Rewriter::new(ends).piece(text.to_string())),
    }
}

/// [`normalize`] of a text owned: rewritten in place.
pub(crate) fn normalize_owned(text: String) -> String {
    match detect(text.as_bytes()) {
        LineEnds::Lf => text,
        ends => Rewriter::new(ends).piece(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_paste_reads_as_the_lines_sent() {
        assert_eq!(normalize("a\rb\r\rc\r"), "a\nb\n\nc\n");
        // CR LF through a terminal: CR CR, blank lines as runs of four.
        assert_eq!(normalize("a\r\rb\r\r\r\rc\r\r"), "a\r\nb\r\n\r\nc\r\n");
        assert_eq!(
            normalize("a\nb\rc"),
            "a\nb\rc",
            "with an LF, a lone CR is content"
        );
        // Converted to CR LF twice, then pasted: CR CR CR.
        assert_eq!(normalize("a\r\r\rb\r\r\r"), "a\r\r\nb\r\r\n");
        assert_eq!(normalize("plain"), "plain");
    }

    #[test]
    fn pieces_give_what_the_whole_gives() {
        let text = "x\r\ry\r\r\r\rz\r\r";
        let whole = normalize(text).into_owned();
        for cut in 0..=text.len() {
            let mut r = Rewriter::new(detect(&text.as_bytes()[..cut.max(1)]));
            if r.ends != detect(text.as_bytes()) {
                continue;
            }
            let joined = r.piece(text[..cut].to_string()) + &r.piece(text[cut..].to_string());
            assert_eq!(joined, whole, "cut at {cut}");
        }
    }

    proptest::proptest! {
        /// Byte for byte in place: a text's length and every byte but its CRs are kept.
        #[test]
        fn the_rewrite_keeps_every_byte_where_it_was(text in "[a-z\r\n é]{0,64}") {
            let out = normalize(&text);
            proptest::prop_assert_eq!(out.len(), text.len());
            for (a, b) in text.bytes().zip(out.bytes()) {
                proptest::prop_assert!(a == b || (a == b'\r' && b == b'\n'));
            }
        }
    }
}
