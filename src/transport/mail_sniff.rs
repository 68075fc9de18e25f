//! Telling mail from a paste by its first bytes.
//!
//! Decoding text as mail changes it (an mbox unquotes `>From ` lines and ends a message at
//! every column-1 `From ` line; an `.eml` body may be re-encoded), so an input is read as mail
//! only on evidence a person typing prose above an envelope does not produce by chance: an
//! mbox separator line with a real date, or a block of header fields holding one that only
//! mail software writes. Anything less is text, and every command reads it as `parse` does.

use std::path::Path;

use super::mail::MailKind;

/// How much of an input's head is looked at.
pub(crate) const HEAD: usize = 16 * 1024;

/// Whether an input is mail: by its name's extension first (`.eml`, `.mbox`, `.mbx` are;
/// `.crosstalk`, `.aict` are not), then by its first bytes (see [`mail_kind`]).
pub fn sniff(path: Option<&Path>, head: &[u8]) -> Option<MailKind> {
    let ext = path
        .and_then(|p| p.extension())
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        // Earlier versions of `export --format eml` wrote several messages as an mbox under
        // an `.eml` name: one read as a single message would keep its `>From ` quoting.
        Some("eml") if mail_kind(head) == Some(MailKind::Mbox) => Some(MailKind::Mbox),
        Some("eml") => Some(MailKind::Eml),
        Some("mbox" | "mbx") => Some(MailKind::Mbox),
        Some("crosstalk" | "aict") => None,
        _ => mail_kind(head),
    }
}

/// What an input's first bytes say it is:
/// - an mbox when its first line is a separator, `From <sender> <date>` with the date as
///   mailbox writers put it (`Mon Jan  1 00:00:00 2024`, a zone before or after the year
///   allowed; RFC 4155), followed by header fields, one of them a mail header (`From`, `To`,
///   `Subject`, `Date`, `Message-ID`, `Content-Type`, …);
/// - an `.eml` when it opens with a block of header fields up to a blank line, with no `[[`
///   in it, holding one that mail software writes and people do not: `Message-ID`,
///   `In-Reply-To` or `References` with a `<…@…>` id, `Date` with an RFC 5322 date,
///   `MIME-Version: 1.0`, `Content-Type` with a media type, `Content-Transfer-Encoding` with
///   an encoding, or `Received`, `Return-Path`, `DKIM-Signature`, `Delivered-To`,
///   `Authentication-Results`. `From:` and `Subject:` lines alone are what a note above a
///   paste may hold, so they are no evidence.
pub(crate) fn mail_kind(head: &[u8]) -> Option<MailKind> {
    let cut = head.len() >= HEAD;
    let head = String::from_utf8_lossy(&head[..head.len().min(HEAD)]);
    let head = head.strip_prefix('\u{feff}').unwrap_or(&head);
    let mut lines: Vec<&str> = head.split('\n').collect();
    if cut {
        // The last line may be cut in the middle: it is not judged.
        lines.pop();
    }
    let lines: Vec<&str> = lines
        .iter()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let first = lines.first().copied().unwrap_or_default();
    if first.starts_with("From ") {
        let fields = fields(&lines[1..])?;
        let mail = fields.iter().any(|(name, _)| {
            MAIL_FIELDS.iter().any(|k| name.eq_ignore_ascii_case(k))
                || STRONG_NAMES.iter().any(|k| name.eq_ignore_ascii_case(k))
        });
        return (separator(first) && mail).then_some(MailKind::Mbox);
    }
    let fields = fields(&lines)?;
    let banner = fields
        .iter()
        .any(|(name, value)| name.contains("[[") || value.contains("[["));
    let strong = fields.iter().any(|(name, value)| strong(name, value));
    (!banner && strong).then_some(MailKind::Eml)
}

/// Headers any mail carries: after an mbox separator, one of these says the header block is
/// a mail's.
const MAIL_FIELDS: [&str; 8] = [
    "from",
    "to",
    "cc",
    "subject",
    "date",
    "sender",
    "reply-to",
    "message-id",
];

/// Headers only mail software writes, whatever their value.
const STRONG_NAMES: [&str; 5] = [
    "received",
    "return-path",
    "dkim-signature",
    "delivered-to",
    "authentication-results",
];

/// The header fields of `lines` up to the first blank line (or the end), each name with its
/// value (continuation lines joined); `None` when a line before it is no header field or
/// there is none.
fn fields<'a>(lines: &[&'a str]) -> Option<Vec<(&'a str, String)>> {
    let mut out: Vec<(&str, String)> = Vec::new();
    for line in lines {
        if line.is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            let (_, value) = out.last_mut()?;
            value.push(' ');
            value.push_str(line.trim());
            continue;
        }
        let (name, value) = line.split_once(':')?;
        // RFC 5322: printable US-ASCII but the colon, no space.
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic()) {
            return None;
        }
        out.push((name, value.trim().to_string()));
    }
    (!out.is_empty()).then_some(out)
}

/// Whether `name: value` is a header field only mail software writes.
fn strong(name: &str, value: &str) -> bool {
    let is = |k: &str| name.eq_ignore_ascii_case(k);
    if STRONG_NAMES.iter().any(|k| is(k)) {
        return true;
    }
    if is("message-id") || is("in-reply-to") || is("references") {
        return msg_id(value);
    }
    if is("date") {
        return rfc5322_date(value);
    }
    if is("mime-version") {
        return value.starts_with("1.0");
    }
    if is("content-type") {
        return media_type(value);
    }
    if is("content-transfer-encoding") {
        let v = value.to_ascii_lowercase();
        return ["7bit", "8bit", "binary", "quoted-printable", "base64"].contains(&v.as_str());
    }
    false
}

/// `<left@right>` somewhere in the value, with no space inside.
fn msg_id(value: &str) -> bool {
    value.split('<').skip(1).any(|rest| {
        rest.split_once('>').is_some_and(|(id, _)| {
            id.split_once('@')
                .is_some_and(|(l, r)| !l.is_empty() && !r.is_empty())
                && !id.contains(char::is_whitespace)
        })
    })
}

/// `type/subtype`, optionally followed by `;` and parameters.
fn media_type(value: &str) -> bool {
    let t = value.split(';').next().unwrap_or_default().trim();
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b))
    };
    t.split_once('/').is_some_and(|(a, b)| token(a) && token(b))
}

const DAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

fn day_name(s: &str) -> bool {
    DAYS.iter().any(|d| s.eq_ignore_ascii_case(d))
}

fn month_name(s: &str) -> bool {
    MONTHS.iter().any(|m| s.eq_ignore_ascii_case(m))
}

fn digits(s: &str, min: usize, max: usize) -> bool {
    (min..=max).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
}

/// `hh:mm` or `hh:mm:ss` (the hour may have one digit).
fn time(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    matches!(parts.len(), 2 | 3)
        && digits(parts[0], 1, 2)
        && parts[1..].iter().all(|p| digits(p, 2, 2))
}

/// A zone: `+0000`, `-0130`, or a name such as `UTC`, `GMT`, `CEST`.
fn zone(s: &str) -> bool {
    match s.as_bytes().first() {
        Some(b'+' | b'-') => digits(&s[1..], 4, 4),
        _ => (1..=5).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphabetic()),
    }
}

/// An mbox separator line: `From `, a sender (an address, `MAILER-DAEMON`, `-`), and the date
/// in the form of C's `asctime`: `Www Mmm dd hh:mm:ss yyyy`, a zone allowed before or after
/// the year.
fn separator(line: &str) -> bool {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let [from, sender, dow, month, day, clock, rest @ ..] = tokens.as_slice() else {
        return false;
    };
    let year = |s: &str| digits(s, 4, 4);
    let tail = match rest {
        [y] => year(y),
        [a, b] => (zone(a) && year(b)) || (year(a) && zone(b)),
        _ => false,
    };
    *from == "From"
        && !sender.chars().any(char::is_control)
        && day_name(dow)
        && month_name(month)
        && digits(day, 1, 2)
        && time(clock)
        && tail
}

/// An RFC 5322 date: `[Www,] d Mmm yyyy hh:mm[:ss] zone`, a comment after it allowed.
fn rfc5322_date(value: &str) -> bool {
    let value = value.trim();
    let value = match value.split_once(',') {
        Some((dow, rest)) if day_name(dow.trim()) => rest,
        _ => value,
    };
    let tokens: Vec<&str> = value.split_whitespace().collect();
    let [day, month, year, clock, tz, ..] = tokens.as_slice() else {
        return false;
    };
    digits(day, 1, 2)
        && month_name(month)
        && (digits(year, 4, 4) || digits(year, 2, 2))
        && time(clock)
        && zone(tz)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mbox_needs_a_dated_separator_and_header_fields() {
        let mbox = |s: &str| mail_kind(s.as_bytes());
        for sep in [
            "From bob Mon Jan  1 00:00:00 2024",
            "From MAILER-DAEMON Fri Jul  8 12:08:34 2011",
            "From - Sat Jan 03 10:10:10 2009",
            "From 1234@xxx Mon Jan 01 10:00:00 +0000 2024",
            "From a@b.c Tue Nov 14 22:13:20 2023 +0100",
        ] {
            assert_eq!(
                mbox(&format!("{sep}\nFrom: bob\n\nhi\n")),
                Some(MailKind::Mbox),
                "{sep}"
            );
            assert_eq!(
                mbox(&format!("{sep}\r\nSubject: x\r\n\r\n")),
                Some(MailKind::Mbox)
            );
            // Header fields must follow, one of them a mail's.
            assert_eq!(
                mbox(&format!("{sep}\nRe: the deploy\n\nhi\n")),
                None,
                "{sep}"
            );
            assert_eq!(mbox(&format!("{sep}\nwhat a day\n")), None, "{sep}");
        }
        for prose in [
            "From the desk of Kalle, Monday\nRe: the deploy question\n\n[[A→B v1]]\n",
            "From the desk of Kalle, Monday\nSubject: deploy\nFrom: kalle\n\n",
            "From now on: Mon Jan  1 00:00:00 2024\nSubject: x\n\n",
            "From bob Monday Jan 1 00:00:00 2024\nSubject: x\n\n",
            "From bob Mon Jan 1 00:00 2024 and more\nSubject: x\n\n",
            "From bob Mon Jan 1 25h 2024\nSubject: x\n\n",
        ] {
            assert_eq!(mbox(prose), None, "{prose}");
        }
    }

    #[test]
    fn an_eml_needs_a_field_only_mail_software_writes() {
        let eml = |s: &str| mail_kind(s.as_bytes());
        for strong in [
            "Message-ID: <a1@mail.example>",
            "Date: Mon, 6 Jan 2025 10:00:00 +0000",
            "Date: 6 Jan 25 10:00 GMT (a comment)",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: quoted-printable",
            "Received: from somewhere",
            "Return-Path: <a@b>",
        ] {
            assert_eq!(
                eml(&format!("Subject: x\n{strong}\n\nbody")),
                Some(MailKind::Eml),
                "{strong}"
            );
        }
        for weak in [
            "Subject: x\nFrom: y\n\nbody",
            "Subject: the deploy question\nRe: yesterday\n\n[[A→B v1]]\n",
            "Date: Monday\nFrom: Kalle\n\n",
            "Message-ID: none yet\nSubject: x\n\n",
            "Content-Type: whatever you like\n\n",
            "MIME-Version: 2\n\n",
            "user: x\nsession: y\n",
            // A banner before the blank line: a paste.
            "Subject: x\nMIME-Version: 1.0 [[A→B v1]]\n",
            // A line that is no header field.
            "MIME-Version: 1.0\nthis is prose\n\n",
            "",
        ] {
            assert_eq!(eml(weak), None, "{weak}");
        }
    }

    #[test]
    fn the_extension_decides_first() {
        assert_eq!(sniff(Some(Path::new("x.EML")), b""), Some(MailKind::Eml));
        assert_eq!(sniff(Some(Path::new("x.mbox")), b""), Some(MailKind::Mbox));
        let mbox = b"From bob Mon Jan  1 00:00:00 2024\nFrom: bob\n\n";
        assert_eq!(sniff(Some(Path::new("a.crosstalk")), mbox), None);
        assert_eq!(sniff(Some(Path::new("a.txt")), mbox), Some(MailKind::Mbox));
        assert_eq!(sniff(None, mbox), Some(MailKind::Mbox));
        // Several messages exported by an earlier `--format eml`: an mbox under an `.eml` name.
        assert_eq!(
            sniff(Some(Path::new("all.eml")), mbox),
            Some(MailKind::Mbox)
        );
    }

    #[test]
    fn a_head_cut_mid_line_is_judged_on_its_whole_lines() {
        let mut head = b"MIME-Version: 1.0\nX-Long: ".to_vec();
        head.extend(std::iter::repeat_n(b'a', HEAD));
        assert_eq!(mail_kind(&head), Some(MailKind::Eml));
    }
}
