//! Mail text that says it is UTF-8 (or names no character set) but holds bytes that are not:
//! mail-parser reads such bytes as U+FFFD without a word, so the envelope read differs from
//! what was sent, unseen. The import, `parse` and `check` say where instead (the mail itself
//! is kept byte for byte with the raw input).

use std::borrow::Cow;

use mail_parser::decoders::base64::base64_decode;
use mail_parser::decoders::quoted_printable::quoted_printable_decode;
use mail_parser::{Encoding, MessagePart, MimeHeaders};

use crate::protocol::{Code, Diagnostic};

/// Where a text part stops being UTF-8: the line and column of its decoded text, for a part
/// whose declared character set is UTF-8 or ASCII, or which names none. A part in another
/// character set is converted by mail-parser and is not this one's to judge.
pub fn first_invalid(raw: &[u8], part: &MessagePart<'_>) -> Option<(u32, u32)> {
    let charset = (part.content_type())
        .and_then(|ct| ct.attributes())
        .and_then(|attrs| {
            attrs
                .iter()
                .find(|a| a.name.eq_ignore_ascii_case("charset"))
        })
        .map(|a| a.value.trim().to_ascii_lowercase());
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
