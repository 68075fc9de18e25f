//! Mail text sent as `format=flowed` (RFC 3676), read back as the lines that were written.
//!
//! Mail clients such as Thunderbird send plain text flowed by default: a line longer than
//! the client's width is cut into several, each but the last ending in a space (a soft
//! break), and a line that begins with a space, `>` or `From ` gets one more space in front
//! (space-stuffing). Read as it arrives, an envelope in such a mail has its long body lines
//! cut (the continuation is no longer indented, so the body seems to end there) and every
//! indented line one space deeper; a signed one no longer verifies. Undoing both gives back
//! the text the sender's client was given.

/// How a text part declared itself: `format=flowed`, and with `delsp=yes` the space before
/// each soft break is the client's own, not the text's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Flowed {
    /// `delsp=yes`: the space that marks a soft break was added by the client.
    pub delsp: bool,
}

impl Flowed {
    /// What a part's `Content-Type` parameters say (names and values in any case), `None`
    /// when the text is not flowed.
    pub(crate) fn from_params<'a>(
        params: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Option<Self> {
        let (mut flowed, mut delsp) = (false, false);
        for (name, value) in params {
            let value = value.trim();
            if name.eq_ignore_ascii_case("format") {
                flowed = value.eq_ignore_ascii_case("flowed");
            } else if name.eq_ignore_ascii_case("delsp") {
                delsp = value.eq_ignore_ascii_case("yes");
            }
        }
        flowed.then_some(Flowed { delsp })
    }
}

/// The text `flowed` was made from: soft breaks joined, space-stuffing removed, quoted lines
/// joined only with lines quoted as deeply. Lines end in LF (a CR before it is dropped).
pub(crate) fn unflow(text: &str, how: Flowed) -> String {
    let mut out = String::with_capacity(text.len());
    // The logical line being put together, and its quote depth.
    let mut open: Option<(usize, String)> = None;
    let body = text.strip_suffix('\n').unwrap_or(text);
    for line in body.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let depth = line.bytes().take_while(|&b| b == b'>').count();
        let rest = &line[depth..];
        let rest = rest.strip_prefix(' ').unwrap_or(rest);
        // The signature separator is never flowed, whatever its trailing space says.
        let soft = rest.ends_with(' ') && rest != "-- ";
        let content = match soft && how.delsp {
            true => &rest[..rest.len() - 1],
            false => rest,
        };
        let (open_depth, mut logical) = match open.take() {
            // A soft break followed by a line quoted otherwise is a break after all.
            Some((d, logical)) if d == depth => (d, logical),
            Some((d, logical)) => {
                finish(&mut out, d, &logical);
                (depth, String::new())
            }
            None => (depth, String::new()),
        };
        logical.push_str(content);
        if soft {
            open = Some((open_depth, logical));
        } else {
            finish(&mut out, open_depth, &logical);
        }
    }
    if let Some((d, logical)) = open {
        finish(&mut out, d, &logical);
    }
    if !text.ends_with('\n') {
        out.pop();
    }
    out
}

/// Writes one logical line: its quote marks (with the space readers expect after them) and
/// its text.
fn finish(out: &mut String, depth: usize, text: &str) {
    if depth > 0 {
        out.extend(std::iter::repeat_n('>', depth));
        if !text.is_empty() {
            out.push(' ');
        }
    }
    out.push_str(text);
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DELSP: Flowed = Flowed { delsp: true };
    const PLAIN: Flowed = Flowed { delsp: false };

    /// What a conforming client sends for `text` (lines without trailing spaces): each line
    /// space-stuffed when it must be, then cut after a space before `width` (with `delsp`,
    /// the client adds a space of its own at each cut).
    fn flow(text: &str, width: usize, delsp: bool) -> String {
        let mut out = String::new();
        for line in text.split('\n') {
            let stuffed =
                match line.starts_with(' ') || line.starts_with('>') || line.starts_with("From ") {
                    true => format!(" {line}"),
                    false => line.to_string(),
                };
            let mut rest = stuffed.as_str();
            loop {
                let mut w = width.min(rest.len());
                while !rest.is_char_boundary(w) {
                    w -= 1;
                }
                // Cut after a space, never so that the continuation starts with a space (it
                // would be taken for stuffing).
                let cut = (rest.len() > width)
                    .then(|| rest[..w].rfind(' ').filter(|&i| i > 0))
                    .flatten()
                    .filter(|&i| !rest[i + 1..].starts_with(' '));
                let Some(i) = cut else {
                    out.push_str(rest);
                    out.push_str("\r\n");
                    break;
                };
                out.push_str(&rest[..=i]);
                // With `delsp`, the client marks the break with a space of its own.
                out.push_str(if delsp { " \r\n" } else { "\r\n" });
                rest = &rest[i + 1..];
            }
        }
        out
    }

    #[test]
    fn a_wrapped_envelope_line_is_whole_again() {
        let sent = "[[CLAUDE\u{2192}CHATGPT v1]]\r\nbody: |\r\n   A first line that a mail client cut  \r\nat its width.\r\n   A second.\r\n >not a quote\r\nsig: none\r\n[[END]]\r\n";
        assert_eq!(
            unflow(sent, DELSP),
            "[[CLAUDE\u{2192}CHATGPT v1]]\nbody: |\n  A first line that a mail client cut at its width.\n  A second.\n>not a quote\nsig: none\n[[END]]\n"
        );
        assert_eq!(
            unflow(sent, PLAIN),
            "[[CLAUDE\u{2192}CHATGPT v1]]\nbody: |\n  A first line that a mail client cut  at its width.\n  A second.\n>not a quote\nsig: none\n[[END]]\n"
        );
    }

    #[test]
    fn quoted_lines_join_only_at_the_same_depth_and_keep_their_marks() {
        let sent = "> quoted and \r\n> cut\r\n>> deeper \r\n> back\r\n-- \r\nsignature\r\n";
        assert_eq!(
            unflow(sent, PLAIN),
            "> quoted and cut\n>> deeper \n> back\n-- \nsignature\n"
        );
    }

    #[test]
    fn parameters_are_read_in_any_case() {
        assert_eq!(
            Flowed::from_params([("Format", "Flowed"), ("DelSp", "Yes")]),
            Some(DELSP)
        );
        assert_eq!(Flowed::from_params([("format", "flowed")]), Some(PLAIN));
        assert_eq!(Flowed::from_params([("format", "fixed")]), None);
        assert_eq!(Flowed::from_params([("charset", "utf-8")]), None);
    }

    #[test]
    fn text_without_a_final_line_break_keeps_none() {
        assert_eq!(unflow("one \r\ntwo", PLAIN), "one two");
        assert_eq!(unflow("", PLAIN), "");
        assert_eq!(unflow("\r\n", PLAIN), "\n");
    }

    proptest! {
        /// Whatever a conforming client sends for lines without trailing spaces and quote
        /// marks reads back as those lines, at any width, with and without `delsp`.
        #[test]
        fn what_a_client_flows_reads_back(
            lines in proptest::collection::vec("( {0,3}|From |>)?[a-z\u{e9}\u{2192}]{0,12}( [a-z\u{e9}]{1,12}){0,12}", 0..8),
            width in 8usize..80,
            delsp in any::<bool>(),
        ) {
            // A line of quote marks would read back as a quote (as it must).
            let lines: Vec<String> = lines
                .into_iter()
                .map(|l| l.trim_end().to_string())
                .filter(|l| !l.starts_with('>'))
                .collect();
            let text = lines.join("\n");
            let sent = flow(&text, width, delsp);
            let back = unflow(&sent, Flowed { delsp });
            prop_assert_eq!(back.strip_suffix('\n').unwrap_or(&back), text);
        }

        /// Hostile input never panics, and text without soft breaks, stuffing or quote marks
        /// is left as it is.
        #[test]
        fn any_text_is_read_without_panic(text in "[a-z >\u{e9}\r\n-]{0,200}", delsp in any::<bool>()) {
            let _ = unflow(&text, Flowed { delsp });
            let fixed: String = text
                .split('\n')
                .map(|l| l.trim_end_matches([' ', '\r']).trim_start_matches([' ', '>']))
                .collect::<Vec<_>>()
                .join("\n");
            prop_assert_eq!(unflow(&fixed, Flowed { delsp }), fixed);
        }
    }
}
