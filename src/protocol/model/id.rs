//! Message, thread and parent identifiers: ULID or UUIDv7, and monotonic ULID generation.

/// Why a value is not an identifier, phrased so the message can tell the user what to fix.
pub(crate) fn check_id(value: &str) -> Result<(), String> {
    let v = crate::protocol::lines::trim(value);
    if v.len() == 36 && v.as_bytes().get(8) == Some(&b'-') {
        return check_uuid_v7(v);
    }
    check_ulid(v)
}

/// Crockford base32 as ULIDs use it, either case (a table: this runs on every id of every
/// envelope).
const ULID_CHAR: [bool; 256] = {
    let alphabet = b"0123456789ABCDEFGHJKMNPQRSTVWXYZabcdefghjkmnpqrstvwxyz";
    let mut t = [false; 256];
    let mut i = 0;
    while i < alphabet.len() {
        t[alphabet[i] as usize] = true;
        i += 1;
    }
    t
};

fn check_ulid(v: &str) -> Result<(), String> {
    if v.len() == 26 && v.as_bytes()[0] <= b'7' && v.bytes().all(|b| ULID_CHAR[b as usize]) {
        return Ok(());
    }
    if let Some(bad) = v.chars().find(|c| !c.is_ascii() || !ULID_CHAR[*c as usize]) {
        let why = match bad.to_ascii_uppercase() {
            'I' | 'L' | 'O' | 'U' => " (Crockford base32 leaves out I, L, O and U)",
            '.' => " (it looks truncated)",
            _ => "",
        };
        return Err(format!(
            "`{v}` is not a ULID: `{bad}` is not a ULID character{why}; use a 26-character ULID or a UUIDv7"
        ));
    }
    if v.chars().count() != 26 {
        return Err(format!(
            "`{v}` is not a ULID: it has {} characters, a ULID has 26; use a 26-character ULID or a UUIDv7",
            v.chars().count()
        ));
    }
    if v.as_bytes()[0] > b'7' {
        return Err(format!(
            "`{v}` is not a ULID: the first character must be 0–7 (the timestamp overflows otherwise)"
        ));
    }
    Ok(())
}

fn check_uuid_v7(v: &str) -> Result<(), String> {
    match uuid::Uuid::try_parse(v) {
        Ok(u) if u.get_version_num() == 7 && u.get_variant() == uuid::Variant::RFC4122 => Ok(()),
        Ok(u) => Err(format!(
            "`{v}` is a UUID of version {}, not 7; use a ULID or a UUIDv7 (time-ordered)",
            u.get_version_num()
        )),
        Err(e) => Err(format!("`{v}` is not a UUID: {e}; use a ULID or a UUIDv7")),
    }
}

/// Whether `value` is a ULID or a UUIDv7.
pub fn is_id(value: &str) -> bool {
    check_id(value).is_ok()
}

/// The form an id is stored and compared in. Ids are read in either case (a ULID is
/// Crockford base32, a UUID hex), so the same id written in two cases must be one message,
/// one thread and one parent: a ULID is kept in upper case, as ULIDs are written, a UUIDv7 in
/// lower case, as UUIDs are. Anything that is not an id (an alias's original, say) is only
/// trimmed. The envelope's own text keeps its spelling; a signature covers that.
pub fn key(value: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let v = crate::protocol::lines::trim(value);
    let b = v.as_bytes();
    if b.len() == 26 && b.iter().any(u8::is_ascii_lowercase) && check_ulid(v).is_ok() {
        return Cow::Owned(v.to_ascii_uppercase());
    }
    if b.len() == 36
        && b[8] == b'-'
        && b.iter().any(u8::is_ascii_uppercase)
        && check_uuid_v7(v).is_ok()
    {
        return Cow::Owned(v.to_ascii_lowercase());
    }
    Cow::Borrowed(v)
}

/// Whether two values name the same id (see [`key`]).
pub fn same(a: &str, b: &str) -> bool {
    key(a) == key(b)
}

/// The time an id was made, in milliseconds since the epoch: a ULID's first 48 bits, a
/// UUIDv7's first 48 bits. `None` for anything else. Lets a paste's newest envelope be found
/// whatever order it was pasted in.
pub fn timestamp_ms(id: &str) -> Option<u64> {
    let v = id.trim();
    if !is_id(v) {
        return None;
    }
    if v.len() == 36 {
        let hex: String = v.chars().filter(|c| *c != '-').take(12).collect();
        return u64::from_str_radix(&hex, 16).ok();
    }
    ulid::Ulid::from_string(&v.to_ascii_uppercase())
        .ok()
        .map(|u| u.timestamp_ms())
}

/// A source of new message ids. The protocol writes envelopes that need fresh ids (an ACK, an
/// ERROR, a poll's close, the ids a v1.0 envelope gets on receipt) but reads no clock itself:
/// the caller brings the source — [`crate::ids::IdGenerator`], or a fixed list in a test.
pub trait NewIds {
    /// An id no earlier call gave.
    fn next_id(&self) -> String;
}

/// Fills `thread` and `message` of an envelope that has none (v1.0 envelopes get their ids on
/// receipt). Returns which keys were added.
pub(crate) fn fill_ids(env: &mut crate::protocol::Envelope, ids: &dyn NewIds) -> Vec<&'static str> {
    let mut added = Vec::new();
    if env.message().is_none() {
        env.set_header("message", ids.next_id());
        added.push("message");
    }
    if env.thread().is_none() {
        let thread = env.message().unwrap_or_default().to_string();
        env.set_header("thread", thread);
        added.push("thread");
    }
    added
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ulid_and_uuid_v7() {
        assert!(is_id("01J9J3D3M6A4M3WQX8G1ZQ0S7K"));
        assert!(is_id("01j9j3d3m6a4m3wqx8g1zq0s7k"));
        assert!(is_id("018c8e5a-3b2f-7890-abcd-ef1234567890"));
    }

    #[test]
    fn rejects_with_reason() {
        // The spec's own example parent contains U.
        let e = check_id("01J9J3D9C2V8M4P1R6S8T9U0V1").unwrap_err();
        assert!(e.contains("leaves out I, L, O and U"), "{e}");
        assert!(
            check_id("01J9J3D9C2V8M4...")
                .unwrap_err()
                .contains("truncated")
        );
        assert!(
            check_id("01J9J3D3M6A4M3WQX8G1ZQ0S7")
                .unwrap_err()
                .contains("25 characters")
        );
        assert!(check_id("8ZZZZZZZZZZZZZZZZZZZZZZZZZ").is_err());
        let v4 = check_id("550e8400-e29b-41d4-a716-446655440000").unwrap_err();
        assert!(v4.contains("version 4"), "{v4}");
    }

    #[test]
    fn an_id_has_one_key_whatever_its_case() {
        let upper = "01J9J3D3M6A4M3WQX8G1ZQ0S7K";
        assert_eq!(key("01j9j3d3m6a4m3wqx8g1zq0s7k"), upper);
        assert_eq!(key(" 01J9j3d3M6A4M3WQX8G1ZQ0S7K "), upper);
        assert!(matches!(key(upper), std::borrow::Cow::Borrowed(_)));
        let uuid = "018c8e5a-3b2f-7890-abcd-ef1234567890";
        assert_eq!(key("018C8E5A-3B2F-7890-ABCD-EF1234567890"), uuid);
        assert!(matches!(key(uuid), std::borrow::Cow::Borrowed(_)));
        // Not ids: left as written (trimmed), so an alias's original stays itself.
        assert_eq!(key("msg-1"), "msg-1");
        assert_eq!(key("Msg-1"), "Msg-1");
        assert_eq!(
            key("8zzzzzzzzzzzzzzzzzzzzzzzzz"),
            "8zzzzzzzzzzzzzzzzzzzzzzzzz"
        );
        assert!(same("01j9j3d3m6a4m3wqx8g1zq0s7k", upper));
        assert!(!same("msg-1", "MSG-1"));
    }
}

/// A `session` value as crosstalk writes them: the UTC hour of `now` and six hex digits of
/// `random` (`2026-03-10T14Z 7c2e91`). `crosstalk new`, `n` in the app and the primer's
/// first envelope all write this one form; the caller brings the clock and the randomness,
/// so this stays pure.
pub fn session_value(now: jiff::Timestamp, random: u32) -> String {
    let hour = now.strftime("%Y-%m-%dT%H");
    format!("{hour}Z {:06x}", random & 0xff_ffff)
}

#[cfg(test)]
mod session_tests {
    #[test]
    fn session_values_have_the_hour_and_six_hex_digits() {
        let now: jiff::Timestamp = "2026-03-10T14:35:00Z".parse().unwrap();
        assert_eq!(super::session_value(now, 0x7c2e91), "2026-03-10T14Z 7c2e91");
        assert_eq!(
            super::session_value(now, 0xff_000001),
            "2026-03-10T14Z 000001"
        );
    }
}
