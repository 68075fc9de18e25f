//! `did:key` identifiers for Ed25519 keys: `did:key:z6Mk…`, the key itself written as an id
//! (multibase base58btc of the multicodec prefix 0xed 0x01 and the 32 key bytes).
//!
//! A signature whose key id is a `did:key` carries its own public key, so it can be checked
//! without any key having been exchanged before. The base58 alphabet is small enough to
//! decode here: a dependency for forty lines would be one more thing to audit.

use ed25519_dalek::{PUBLIC_KEY_LENGTH, VerifyingKey};

use crate::protocol::keys::KeyError;

/// The Bitcoin base58 alphabet that multibase's `z` prefix names.
const ALPHABET: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
/// The multicodec varint for an Ed25519 public key (0xed, as an unsigned varint).
const ED25519_CODEC: [u8; 2] = [0xed, 0x01];
/// The scheme and method every `did:key` starts with.
pub const PREFIX: &str = "did:key:";
/// The longest identifier read: a did:key for Ed25519 is 56 characters after the prefix;
/// anything much longer is not one, and decoding it would only cost time.
const MAX_ID: usize = 128;

/// Whether a key id is a `did:key` (and so names its own key).
pub(crate) fn is_did_key(id: &str) -> bool {
    id.trim()
        .get(..PREFIX.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(PREFIX))
}

/// Reads the Ed25519 key a `did:key` names. A fragment (`#z6Mk…`, the verification method
/// DID documents append) is ignored.
pub(crate) fn parse_did_key(id: &str) -> Result<VerifyingKey, KeyError> {
    let id = id.trim();
    if !is_did_key(id) {
        return Err(KeyError::Unrecognized(format!(
            "this is not a did:key; expected `{PREFIX}z6Mk…`"
        )));
    }
    let rest = &id[PREFIX.len()..];
    let rest = rest.split('#').next().unwrap_or(rest);
    let Some(encoded) = rest.strip_prefix('z') else {
        return Err(KeyError::Malformed(
            "the did:key is not base58btc (it must start with `z` after `did:key:`)".into(),
        ));
    };
    if encoded.len() > MAX_ID {
        return Err(KeyError::Malformed(format!(
            "the did:key is {} characters long; an Ed25519 did:key has 48",
            encoded.len()
        )));
    }
    let bytes = base58_decode(encoded).map_err(KeyError::Malformed)?;
    let Some(key) = bytes.strip_prefix(&ED25519_CODEC) else {
        return Err(KeyError::NotEd25519(
            "another multicodec (an Ed25519 did:key starts with z6Mk)".into(),
        ));
    };
    let key: [u8; PUBLIC_KEY_LENGTH] = key.try_into().map_err(|_| {
        KeyError::Malformed(format!(
            "the did:key holds {} key bytes; an Ed25519 public key is {PUBLIC_KEY_LENGTH}",
            key.len()
        ))
    })?;
    VerifyingKey::from_bytes(&key)
        .map_err(|_| KeyError::Malformed("the did:key is not a valid Ed25519 public key".into()))
}

/// Writes a key as its `did:key`.
pub fn did_key(key: &VerifyingKey) -> String {
    let mut bytes = ED25519_CODEC.to_vec();
    bytes.extend_from_slice(key.as_bytes());
    format!("{PREFIX}z{}", base58_encode(&bytes))
}

/// Decodes base58 (Bitcoin alphabet); the error names the first character that is not in it.
pub(crate) fn base58_decode(text: &str) -> Result<Vec<u8>, String> {
    // Big-endian base-256 digits, built up one base58 digit at a time.
    let mut out: Vec<u8> = Vec::with_capacity(text.len());
    for (i, c) in text.chars().enumerate() {
        let digit = u8::try_from(c)
            .ok()
            .and_then(|b| ALPHABET.iter().position(|&a| a == b))
            .ok_or_else(|| {
                format!(
                    "`{}` at position {} is not a base58 character",
                    c.escape_default(),
                    i + 1
                )
            })?;
        let mut carry = digit as u32;
        for byte in out.iter_mut().rev() {
            carry += (*byte as u32) * 58;
            *byte = (carry & 0xff) as u8;
            carry >>= 8;
        }
        while carry > 0 {
            out.insert(0, (carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    // Each leading '1' stands for a leading zero byte.
    let zeros = text.bytes().take_while(|&b| b == b'1').count();
    let mut result = vec![0u8; zeros];
    result.extend(out);
    Ok(result)
}

/// Encodes bytes as base58 (Bitcoin alphabet).
pub(crate) fn base58_encode(bytes: &[u8]) -> String {
    let zeros = bytes.iter().take_while(|&&b| b == 0).count();
    // Little-endian base-58 digits.
    let mut digits: Vec<u8> = Vec::with_capacity(bytes.len() * 138 / 100 + 1);
    for &byte in &bytes[zeros..] {
        let mut carry = byte as u32;
        for d in digits.iter_mut() {
            carry += (*d as u32) << 8;
            *d = (carry % 58) as u8;
            carry /= 58;
        }
        while carry > 0 {
            digits.push((carry % 58) as u8);
            carry /= 58;
        }
    }
    let mut out = "1".repeat(zeros);
    out.extend(digits.iter().rev().map(|&d| ALPHABET[d as usize] as char));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::SigningKey;
    use proptest::prelude::*;

    /// The W3C did:key test vector for an Ed25519 key.
    const VECTOR: &str = "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp";

    #[test]
    fn reads_the_published_vector() {
        let key = parse_did_key(VECTOR).unwrap();
        assert_eq!(did_key(&key), VECTOR);
        let with_fragment = format!("{VECTOR}#{}", &VECTOR[PREFIX.len()..]);
        assert_eq!(parse_did_key(&with_fragment).unwrap(), key);
    }

    #[test]
    fn base58_known_values() {
        assert_eq!(base58_encode(b"hello world"), "StV1DL6CwTryKyV");
        assert_eq!(base58_decode("StV1DL6CwTryKyV").unwrap(), b"hello world");
        assert_eq!(base58_encode(&[0, 0, 1]), "112");
        assert_eq!(base58_decode("112").unwrap(), vec![0, 0, 1]);
        assert_eq!(base58_decode("").unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let msg = |s: &str| parse_did_key(s).unwrap_err().to_string();
        assert!(msg("did:key:z6Mk0OIl").contains("`0` at position 4"));
        assert!(msg("did:key:f00").contains("base58btc"));
        assert!(msg("ed25519:pk=AAAA").contains("did:key"));
        assert!(msg("did:key:z2222").contains("Ed25519"));
        let short = format!("did:key:z{}", base58_encode(&[0xed, 0x01, 1, 2, 3]));
        assert!(msg(&short).contains("key bytes"), "{}", msg(&short));
        assert!(msg(&format!("did:key:z{}", "1".repeat(200))).contains("characters long"));
        assert!(msg("did:key:z6Mk\u{1b}[31m").contains("\\u{1b}"));
    }

    proptest! {
        #[test]
        fn did_key_round_trips(seed in any::<[u8; 32]>()) {
            let key = SigningKey::from_bytes(&seed).verifying_key();
            let id = did_key(&key);
            prop_assert!(id.starts_with("did:key:z6Mk"));
            prop_assert_eq!(parse_did_key(&id).unwrap(), key);
        }

        #[test]
        fn base58_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(base58_decode(&base58_encode(&bytes)).unwrap(), bytes);
        }

        #[test]
        fn any_text_is_read_without_panic(text in "\\PC{0,80}") {
            let _ = parse_did_key(&format!("did:key:z{text}"));
        }
    }
}
