//! Mail text that says it is UTF-8 (or names no character set) but holds bytes that are not:
//! mail-parser reads such bytes as U+FFFD without a word, so the envelope read differs from
//! what was sent, unseen. The import, `parse` and `check` say where instead (the mail itself
//! is kept byte for byte with the raw input). So do they for a part whose character set
//! mail-parser cannot convert, which it reads as UTF-8 just as silently.

use std::borrow::Cow;

use mail_parser::decoders::base64::base64_decode;
use mail_parser::decoders::quoted_printable::quoted_printable_decode;
use mail_parser::{Encoding, MessagePart, MimeHeaders};

use crate::protocol::{Code, Diagnostic};

/// Where a text part stops being UTF-8: the line and column of its decoded text, for a part
/// whose declared character set is UTF-8 or ASCII, or which names none. A part in another
/// character set is converted by mail-parser and is not this one's to judge.
pub(crate) fn first_invalid(raw: &[u8], part: &MessagePart<'_>) -> Option<(u32, u32)> {
    let charset = charset(part).map(|c| c.to_ascii_lowercase());
    if charset.is_some_and(|c| !matches!(c.as_str(), "utf-8" | "utf8" | "us-ascii" | "ascii")) {
        return None;
    }
    let body = raw.get(part.raw_body_offset() as usize..part.raw_end_offset() as usize)?;
    let bytes: Cow<'_, [u8]> = match part.encoding {
        Encoding::None => Cow::Borrowed(body),
        Encoding::QuotedPrintable => Cow::Owned(quoted_printable_decode(body)?),
        Encoding::Base64 => Cow::Owned(base64_decode(body)?),
    };
    let d = crate::protocol::decode(&bytes).1?;
    Some((d.line, d.column))
}

/// The `charset=` a part names, trimmed; `None` when it names none (or an empty one).
fn charset<'p>(part: &'p MessagePart<'_>) -> Option<&'p str> {
    (part.content_type())
        .and_then(|ct| ct.attributes())
        .and_then(|attrs| {
            attrs
                .iter()
                .find(|a| a.name.eq_ignore_ascii_case("charset"))
        })
        .map(|a| a.value.trim())
        .filter(|c| !c.is_empty())
}

/// Whether mail-parser converts text in `charset`: one of the UTF-8 names (which it reads as
/// UTF-8, rightly) or one its decoders know.
fn known(charset: &str) -> bool {
    let squeezed: String = (charset.chars())
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let utf8 = matches!(
        squeezed.as_str(),
        "utf8" | "unicode11utf8" | "unicode20utf8" | "xunicode20utf8"
    );
    utf8 || mail_parser::decoders::charsets::map::charset_decoder(charset.as_bytes()).is_some()
}

/// The character set a text part names when mail-parser cannot convert it (so it was read
/// as UTF-8), as it is written but printable and at most 40 characters: it came from the
/// sender and reaches a terminal in the warning.
pub(crate) fn unknown_charset_of(part: &MessagePart<'_>) -> Option<String> {
    let c = charset(part)?;
    if known(c) {
        return None;
    }
    let shown = crate::sanitize::sanitize_line(c);
    Some(match shown.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &shown[..cut]),
        None => shown.into_owned(),
    })
}

/// The warning for the mail named `mail`, whose text part `part` names the character set
/// `charset` that could not be converted.
pub(crate) fn unknown_charset(mail: &str, part: usize, charset: &str) -> Diagnostic {
    Diagnostic::new(
        Code::UnknownCharset,
        1,
        1,
        format!(
            "{mail}, text part {part}: its character set `{charset}` is not one crosstalk can \
             convert, so the part was read as UTF-8 and what is not UTF-8 became U+FFFD; ask \
             the sender to send UTF-8 (the mail is kept as received: `crosstalk pastes`)"
        ),
    )
}

/// The warning for the mail named `mail` (`mail 2`, `mail 1, forwarded message 1`), whose
/// text part `part` (counted from 1, among those searched for envelopes) stops being UTF-8
/// at `at`.
pub fn diagnostic(mail: &str, part: usize, at: (u32, u32)) -> Diagnostic {
    Diagnostic::new(
        Code::InvalidUtf8,
        1,
        1,
        format!(
            "{mail}, text part {part}, line {}, column {} of its text: bytes that are not \
             UTF-8 (as the part says it is, or names no character set) were read as U+FFFD; \
             the mail is kept as received (`crosstalk pastes`)",
            at.0, at.1
        ),
    )
}
