//! Names and addresses in banners and routing headers.
//!
//! A banner side is either a simple name (`CLAUDE`, `supportbot@acme.com`) or an address
//! `<scheme>://<authority>[/path][?query][#fragment]`, `email:<addr>` or `tel:<number>`.

/// Checks one banner side or routing hop; `Err` says what is wrong and how to write it.
pub(crate) fn check_address(value: &str) -> Result<(), String> {
    if plainly_valid(value.as_bytes()) {
        return Ok(());
    }
    check_fully(value)
}

/// [`check_address`] without the one look: every rule, in turn.
pub(crate) fn check_fully(value: &str) -> Result<(), String> {
    let v = value.trim();
    if v.is_empty() {
        return Err(
            "the name is empty; write a name like CLAUDE or an address like claude://session/abc"
                .into(),
        );
    }
    if has_whitespace(v) {
        return Err(format!(
            "`{v}` contains spaces; names and addresses are one word (use - or _ instead)"
        ));
    }
    // `://` found from each `:` (a general substring search costs more to set up than this
    // takes on a name; every banner side is checked).
    let scheme_end =
        memchr::memchr_iter(b':', v.as_bytes()).find(|&i| v[i + 1..].starts_with("//"));
    if let Some(idx) = scheme_end {
        let scheme = &v[..idx];
        check_scheme(v, scheme)?;
        let rest = &v[idx + 3..];
        // The authority runs to the first `/`, `?` or `#`: it is empty when one comes first.
        if rest
            .bytes()
            .next()
            .is_none_or(|b| matches!(b, b'/' | b'?' | b'#'))
        {
            return Err(format!(
                "`{v}` has no authority after `{scheme}://`; write it like {scheme}://session/abc"
            ));
        }
        return Ok(());
    }
    if let Some(rest) = v.strip_prefix("email:") {
        let addr = rest.split('?').next().unwrap_or("");
        return match addr.split_once('@') {
            Some((l, d)) if !l.is_empty() && d.contains('.') && !d.starts_with('.') => Ok(()),
            _ => Err(format!(
                "`{v}` is not an e-mail address; write it like email:support@example.com"
            )),
        };
    }
    if let Some(rest) = v.strip_prefix("tel:") {
        let digits = rest.chars().filter(char::is_ascii_digit).count();
        let ok = rest
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | '(' | ')'));
        return if ok && digits >= 3 {
            Ok(())
        } else {
            Err(format!(
                "`{v}` is not a phone number; write it like tel:+1-555-0100"
            ))
        };
    }
    if let Some((scheme, _)) = v.split_once(':') {
        if scheme.contains('/') || scheme.contains('@') {
            return check_simple(v);
        }
        return Err(format!(
            "`{v}` looks like an address but lacks `//` after `{scheme}:`; write it like {scheme}://host/path"
        ));
    }
    check_simple(v)
}

/// Whether `v` is, in one look at its bytes, a name or address [`check_address`] accepts:
/// an ASCII simple name (`CLAUDE`, `bot@acme.com`) or `scheme://authority…` without white
/// space. Every banner side and routing hop is checked, and nearly all are one of these;
/// anything else (and every value with something to report) takes the full reading.
pub(crate) fn plainly_valid(v: &[u8]) -> bool {
    let Some(&first) = v.first() else {
        return false;
    };
    // The bytes of a simple name up to the first that is not one: a colon, or anything else.
    let name = v
        .iter()
        .take_while(|&&b| CLASS[b as usize] & NAME != 0)
        .count();
    if name == v.len() {
        // A simple name: what `check_simple` accepts, in ASCII.
        return first.is_ascii_alphanumeric();
    }
    if v[name] != b':' {
        return false;
    }
    // `scheme://` at the first colon, a scheme `check_scheme` accepts, an authority that
    // does not start with `/`, `?` or `#`, and no white space or control anywhere.
    let (scheme, rest) = v.split_at(name);
    first.is_ascii_alphabetic()
        && scheme.iter().all(|&b| CLASS[b as usize] & SCHEME != 0)
        && rest.starts_with(b"://")
        && rest
            .get(3)
            .is_some_and(|b| !matches!(b, b'/' | b'?' | b'#'))
        && rest.iter().all(|&b| b.is_ascii_graphic())
}

/// [`CLASS`] bit: a byte of an ASCII simple name.
const NAME: u8 = 1;
/// [`CLASS`] bit: a byte of a scheme.
const SCHEME: u8 = 2;

/// What each byte may be in [`plainly_valid`]'s names and schemes (a table: the two loops
/// over every banner side are the look's whole cost).
const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'@' | b'+' | b'/') {
            t[i] |= NAME;
        }
        if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-') {
            t[i] |= SCHEME;
        }
        i += 1;
    }
    t
};

/// Whether `v` holds white space: byte by byte for the usual ASCII name (every banner side
/// is checked), by character otherwise.
fn has_whitespace(v: &str) -> bool {
    if v.is_ascii() {
        // The ASCII characters `char::is_whitespace` accepts: tab to carriage return, space.
        v.bytes().any(crate::protocol::lines::is_trim_space)
    } else {
        v.chars().any(char::is_whitespace)
    }
}

fn check_scheme(v: &str, scheme: &str) -> Result<(), String> {
    let mut chars = scheme.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if first_ok && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-')) {
        Ok(())
    } else {
        Err(format!(
            "`{v}` has an invalid scheme `{scheme}`; a scheme is letters, digits, + . - and starts with a letter"
        ))
    }
}

/// The hint's examples are no e-mail addresses: diagnostics become the body of an E-FORMAT
/// ERROR reply, and an example address there would be held as personal data.
fn check_simple(v: &str) -> Result<(), String> {
    let first_ok = v.chars().next().is_some_and(|c| c.is_alphanumeric());
    // Characters matched directly: `"_.-@+/".contains(c)` searched that string for every
    // character of every banner side.
    let rest_ok = v
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '@' | '+' | '/'));
    if first_ok && rest_ok {
        Ok(())
    } else {
        Err(format!(
            "`{v}` is not a valid name; use letters, digits and _ . - @ + (like CLAUDE or support-bot), or an address like claude://session/1"
        ))
    }
}

/// Splits an `X-Route` value into hops (`a → b → c`, `->` accepted).
pub(crate) fn route_hops(value: &str) -> impl Iterator<Item = &str> {
    value.split('→').flat_map(ascii_arrows).map(str::trim)
}

/// `s.split("->")`, found with a two-byte search: a string pattern sets up a substring
/// searcher on every call, which cost more than checking the hops (every `X-Route` is split).
fn ascii_arrows(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let r = rest?;
        match crate::protocol::lines::find_pair(r.as_bytes(), *b"->") {
            Some(i) => {
                rest = Some(&r[i + 2..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_field_note_forms() {
        for ok in [
            "CLAUDE",
            "BROTHER",
            "claude://session/abc",
            "chatgpt://thread/xyz?model=gpt-4",
            "human://alice@example.com",
            "human://+1-555-0100",
            "supportbot@acme.com",
            "human://support.acme.com/queue/billing",
            "email:support@example.com?subject=AI+Crosstalk",
            "tel:+44-20-7123-4567",
            "mcp://tool@host",
            "POLL",
        ] {
            assert!(check_address(ok).is_ok(), "{ok}: {:?}", check_address(ok));
        }
    }

    #[test]
    fn ascii_white_space_is_what_char_says() {
        for b in 0..0x80u8 {
            let v = format!("a{}b", b as char);
            assert_eq!(has_whitespace(&v), (b as char).is_whitespace(), "{b:#x}");
        }
        assert!(has_whitespace("a\u{3000}b"));
        assert!(!has_whitespace("a→b"));
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "",
            "claude://",
            "claude:///path",
            "claude://?q=1",
            "claude://#top",
            "claude:/session",
            "://abc",
            "1x://a",
            "email:nobody",
            "tel:abc",
            "two words",
            "*bad*",
        ] {
            assert!(check_address(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn diagnostics_name_no_personal_data_of_their_own() {
        for example in ["CLAUDE", "support-bot", "claude://session/1"] {
            assert!(check_address(example).is_ok(), "{example}");
        }
        for bad in [
            "",
            "*bad*",
            "two words",
            "claude://",
            "claude:/session",
            "1x://a",
            "bot!",
        ] {
            let e = check_address(bad).unwrap_err();
            let found = crate::protocol::pii::find(&e);
            assert!(
                found
                    .iter()
                    .all(|m| m.kind != crate::protocol::pii::PiiKind::Email),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn hops() {
        assert_eq!(
            route_hops("claude://a → human://relay -> chatgpt://x").collect::<Vec<_>>(),
            vec!["claude://a", "human://relay", "chatgpt://x"]
        );
    }
}
