//! Reading a POLL's options and a reply's vote where models write them, and saying why.
//!
//! Models rarely fill in `meta: poll`: they write the options into the body (`Options: DEC15 |
//! DEC22 | ABSTAIN.`, a list under "Options:", a line `A | B | C`) and vote in prose ("I'd go
//! with dec22, since …"). The rule reads all of these, and every reading says where it came
//! from, so the operator can see why a vote counted or did not.

use crate::protocol::MetaBlock;
use crate::protocol::namespaces;

/// The options a POLL offers, with where they were read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PollOptions {
    /// The options, in order, each once (compared in any case).
    pub options: Vec<String>,
    /// Where they were read: `meta: poll Options`, `the body's Options: line (line 3)`, …;
    /// `None` when the POLL lists none.
    pub source: Option<String>,
}

/// A reply's vote, with why it is (or is not) one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoteReading {
    /// The option voted for, as the POLL spells it (the value as written when the POLL
    /// lists no options and the reply says `Vote:`).
    pub vote: Option<String>,
    /// Why: `Vote: in its meta: poll`, `the first option named in its first sentence`, `its
    /// first sentence names none of the options`, …
    pub why: String,
}

/// Whether `s` can be an option name: short, one word of letters, digits and `-_.+/`.
fn is_option_word(s: &str) -> bool {
    !s.is_empty()
        && s.chars().count() <= 40
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '/'))
}

/// An option as written in a list: its first word, the markup and punctuation around it left
/// out (`**DEC15**`, `` `A` ``, `ABSTAIN.`, `B?` an optional choice, `DEC15 (Tuesday)`).
fn option_word(part: &str) -> Option<String> {
    let part = part.trim();
    let part = part
        .strip_prefix(|c: char| matches!(c, '-' | '*' | '•' | '+'))
        .map_or(part, str::trim_start);
    let first = part.split_whitespace().next()?;
    let word = first
        .trim_matches(|c| matches!(c, '*' | '`' | '"' | '\'' | '_' | '(' | ')' | '[' | ']'))
        .trim_end_matches(['?', '.', ',', ';', ':', '!'])
        .trim_matches(|c| matches!(c, '*' | '`' | '"' | '\''));
    is_option_word(word).then(|| word.to_string())
}

/// Splits an options list on `sep` into option words, or `None` when fewer than two parts
/// read as options (a sentence with a `|` or a comma in it is no list).
fn split_options(line: &str, sep: &str) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for part in line.split(sep) {
        if part.trim().is_empty() {
            continue;
        }
        let word = option_word(part)?;
        // A part of several words is an option only when it reads as one followed by a
        // note (`DEC15 (Tuesday)`, `DEC15 — the Tuesday`, `DEC15: Tuesday`): else it is prose.
        let rest = part
            .trim()
            .split_once(char::is_whitespace)
            .map_or("", |(_, rest)| rest.trim());
        let first = part.split_whitespace().next().unwrap_or("");
        let noted = rest.is_empty()
            || first.ends_with(':')
            || rest.starts_with(['(', '—', '–', '-', ':'])
            || rest.starts_with("or ");
        if !noted || part.split_whitespace().count() > 8 {
            return None;
        }
        push_once(&mut out, word);
    }
    (out.len() >= 2).then_some(out)
}

fn push_once(out: &mut Vec<String>, word: String) {
    if !out.iter().any(|o| o.eq_ignore_ascii_case(&word)) {
        out.push(word);
    }
}

/// A META entry of namespace `ns`, both matched in any case.
pub(super) fn meta_value<'m>(meta: &'m [MetaBlock], ns: &str, key: &str) -> Option<&'m str> {
    meta.iter()
        .filter(|m| m.namespace.trim().eq_ignore_ascii_case(ns))
        .flat_map(|m| m.entries.iter())
        .find(|(k, _)| k.trim().eq_ignore_ascii_case(key))
        .map(|(_, v)| v.trim())
}

/// An inline list of options: split on `|`, else `,` (an `or` before the last one read as a
/// comma too: `A, B or C`), else `/`, else ` or `.
fn inline_options(value: &str) -> Option<Vec<String>> {
    if value.contains('|') {
        return split_options(value, "|");
    }
    if value.contains(',') {
        return split_options(&value.replace(" or ", ", "), ",");
    }
    for sep in ["/", " or "] {
        if value.contains(sep) {
            return split_options(value, sep);
        }
    }
    None
}

/// The text after a label such as `Options:` on `line` (the label anywhere on the line, in
/// any case, markdown emphasis around it allowed), if the line has one.
fn after_label<'l>(line: &'l str, labels: &[&str]) -> Option<&'l str> {
    let lower = line.to_lowercase();
    for label in labels {
        let mut from = 0;
        while let Some(i) = lower[from..].find(label).map(|i| i + from) {
            // A whole word: not the end of a longer one (`Voptions:`).
            let before = lower[..i].chars().next_back();
            if before.is_none_or(|c| !c.is_alphanumeric()) {
                let rest = &line[i + label.len()..];
                let rest = rest.trim_start_matches(['*', '_']);
                if let Some(rest) = rest.strip_prefix(':') {
                    return Some(rest.trim_start_matches(['*', '_']).trim());
                }
            }
            from = i + label.len();
        }
    }
    None
}

/// Whether `line` is an item of a markdown list (`- A`, `* A`, `• A`, `1. A`, `1) A`), and
/// its text.
fn list_item(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if let Some(rest) = t.strip_prefix(['-', '*', '•', '+']) {
        return rest.starts_with(' ').then(|| rest.trim());
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    let rest = &t[digits..];
    (digits > 0 && digits < 4)
        .then(|| rest.strip_prefix(['.', ')']))
        .flatten()
        .filter(|r| r.starts_with(' '))
        .map(str::trim)
}

/// The options of the list items that follow line `at` of `lines` (blank lines between them
/// allowed), if at least two read as options.
fn list_after(lines: &[&str], at: usize) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for line in lines.iter().skip(at + 1) {
        if line.trim().is_empty() && out.is_empty() {
            continue;
        }
        let Some(item) = list_item(line) else {
            break;
        };
        push_once(&mut out, option_word(item)?);
    }
    (out.len() >= 2).then_some(out)
}

/// Words that introduce a list of options (`Vote for one of:`, `Choices:`).
const LIST_LEADS: [&str; 5] = ["option", "choice", "vote", "choose", "pick"];

/// The options a POLL offers, read in this order (the first that gives two or more wins):
/// - `Options:` of its `meta: poll` (split on `|`, else `,`);
/// - an `Options:` (or `Choices:`) label anywhere in the body, with the options after it on
///   its line, or as the list items below it;
/// - the first body line holding a `|` between at least two one-word options
///   (`SQLITE | FILES | ABSTAIN?`; a label before a `:` left out);
/// - a list below a line ending in `:` that speaks of options, choices or a vote
///   (`Vote for one of these:` then `- DEC15` …).
pub fn read_options(meta: &[MetaBlock], body: &str) -> PollOptions {
    let found = |options: Vec<String>, source: String| PollOptions {
        options,
        source: Some(source),
    };
    if let Some(v) = meta_value(meta, namespaces::POLL, "Options") {
        if let Some(o) = inline_options(v) {
            return found(o, "meta: poll Options".into());
        }
    }
    let lines: Vec<&str> = body.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if let Some(rest) = after_label(line, &["options", "choices"]) {
            let o = if rest.is_empty() {
                list_after(&lines, i)
            } else {
                inline_options(rest)
            };
            if let Some(o) = o {
                return found(o, format!("the body's Options: line (line {})", i + 1));
            }
        }
    }
    for (i, line) in lines.iter().enumerate().filter(|(_, l)| l.contains('|')) {
        let first_bar = line.find('|').unwrap_or(0);
        let start = line[..first_bar].rfind(':').map_or(0, |i| i + 1);
        if let Some(o) = split_options(&line[start..], "|") {
            return found(o, format!("the body's line {} (`A | B`)", i + 1));
        }
    }
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim().trim_end_matches(['*', '_']);
        let lower = t.to_lowercase();
        if t.ends_with(':') && LIST_LEADS.iter().any(|w| lower.contains(w)) {
            if let Some(o) = list_after(&lines, i) {
                return found(o, format!("the list below the body's line {}", i + 1));
            }
        }
    }
    PollOptions::default()
}

/// The words of `text` in order, as option words are compared: split on what cannot be in
/// one, the dots that end a sentence left out, lower-cased.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '/')))
        .map(|w| w.trim_end_matches('.').to_lowercase())
        .filter(|w| !w.is_empty())
}

/// The option `text` names first (by position, whole words in any case).
fn first_named(text: &str, options: &[String]) -> Option<String> {
    let lower: Vec<String> = options.iter().map(|o| o.to_lowercase()).collect();
    words(text).find_map(|w| {
        lower
            .iter()
            .position(|o| *o == w)
            .map(|i| options[i].clone())
    })
}

/// The first sentence of a body: its first line with text, up to the first `.`, `!` or `?`
/// that is followed by a space or ends the line (so `v1.2` and `ABSTAIN.` stay whole).
pub(crate) fn first_sentence(body: &str) -> &str {
    let line = crate::protocol::model::first_line(body);
    let bytes = line.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_none_or(|n| *n == b' ') {
            return &line[..=i];
        }
    }
    line
}

/// The value of a `Vote:` line of the body (`Vote: DEC15`, `**Vote:** B`, `My vote: A`).
fn vote_line(body: &str) -> Option<(usize, &str)> {
    body.lines()
        .enumerate()
        .find_map(|(i, l)| {
            let t = l.trim_start().trim_start_matches(['-', '*', '>', ' ', '#']);
            let lower = t.to_lowercase();
            let starts = lower.starts_with("vote") || lower.starts_with("my vote");
            starts
                .then(|| after_label(t, &["vote"]))
                .flatten()
                .map(|v| (i + 1, v))
        })
        .filter(|(_, v)| !v.is_empty())
}

/// A reply's vote: the option it names first, in this order —
/// - `Vote:` of its `meta: poll` (an option, in any case; the value as written when the POLL
///   lists none);
/// - a `Vote:` line of its body (the option it names first; its first word when the POLL lists
///   none);
/// - else the option its first sentence names first.
pub fn read_vote(reply_meta: &[MetaBlock], body: &str, options: &[String]) -> VoteReading {
    let listed = || options.join(", ");
    if let Some(v) = meta_value(reply_meta, namespaces::POLL, "Vote").filter(|v| !v.is_empty()) {
        if options.is_empty() {
            return VoteReading {
                vote: Some(v.chars().take(80).collect()),
                why: "Vote: in its meta: poll".into(),
            };
        }
        return match options.iter().find(|o| o.eq_ignore_ascii_case(v)) {
            Some(o) => VoteReading {
                vote: Some(o.clone()),
                why: "Vote: in its meta: poll".into(),
            },
            None => VoteReading {
                vote: None,
                why: format!("its meta: poll Vote names none of {}", listed()),
            },
        };
    }
    if let Some((line, v)) = vote_line(body) {
        let vote = if options.is_empty() {
            option_word(v)
        } else {
            first_named(v, options)
        };
        return match vote {
            Some(vote) => VoteReading {
                vote: Some(vote),
                why: format!("its Vote: line (line {line})"),
            },
            None if options.is_empty() => VoteReading {
                vote: None,
                why: format!("its Vote: line (line {line}) names no option"),
            },
            None => VoteReading {
                vote: None,
                why: format!("its Vote: line (line {line}) names none of {}", listed()),
            },
        };
    }
    if options.is_empty() {
        return VoteReading {
            vote: None,
            why: "the POLL lists no options and the reply has no Vote: line".into(),
        };
    }
    match first_named(first_sentence(body), options) {
        Some(vote) => VoteReading {
            vote: Some(vote),
            why: "the first option named in its first sentence".into(),
        },
        None => VoteReading {
            vote: None,
            why: format!("its first sentence names none of {}", listed()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(body: &str) -> Vec<String> {
        read_options(&[], body).options
    }

    #[test]
    fn options_are_read_where_models_write_them() {
        assert_eq!(
            opts("Which date?\nOptions: DEC15 | DEC22 | ABSTAIN."),
            ["DEC15", "DEC22", "ABSTAIN"]
        );
        assert_eq!(
            opts("Please vote. **Options:** DEC15, DEC22 or ABSTAIN"),
            ["DEC15", "DEC22", "ABSTAIN"]
        );
        assert_eq!(
            opts("Options:\n\n- DEC15 (the Tuesday)\n- **DEC22**\n- ABSTAIN\n\nThanks"),
            ["DEC15", "DEC22", "ABSTAIN"]
        );
        assert_eq!(
            opts("Vote for one of these:\n1. MONOLITH\n2. MICROSERVICES"),
            ["MONOLITH", "MICROSERVICES"]
        );
        assert_eq!(
            opts("Which store?\nSQLITE | FILES | ABSTAIN?"),
            ["SQLITE", "FILES", "ABSTAIN"]
        );
        // Prose with bars or commas is no list.
        assert!(opts("no options | here, really, I mean it ok").is_empty());
        assert!(opts("Some thoughts:\n- first we talk about it at length\n- then").is_empty());
        let src = read_options(&[], "x\nOptions: A | B").source.unwrap();
        assert!(src.contains("line 2"), "{src}");
    }

    #[test]
    fn a_vote_is_the_option_named_first() {
        let o: Vec<String> = ["DEC15", "DEC22", "ABSTAIN"].map(String::from).into();
        let v = |body: &str| read_vote(&[], body, &o).vote;
        assert_eq!(v("I'd go with dec22, not DEC15."), Some("DEC22".into()));
        assert_eq!(v("DEC15. DEC22 would clash."), Some("DEC15".into()));
        assert_eq!(v("Thanks!\nVote: **DEC22**"), Some("DEC22".into()));
        assert_eq!(v("Thanks for asking! I pick DEC22."), None);
        assert_eq!(v("ABSTAIN."), Some("ABSTAIN".into()));
        // A word holding an option is not the option.
        assert_eq!(v("DEC15ish, DEC22-ish"), None);
        let why = read_vote(&[], "Thanks for asking! I pick DEC22.", &o).why;
        assert!(why.contains("first sentence"), "{why}");
    }

    #[test]
    fn the_first_sentence_ends_at_a_stop_before_a_space() {
        assert_eq!(first_sentence("Use v1.2 now. Later more."), "Use v1.2 now.");
        assert_eq!(first_sentence("\n  DEC15!\nmore"), "DEC15!");
        assert_eq!(first_sentence("no stop"), "no stop");
    }
}
