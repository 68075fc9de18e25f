//! Reading and writing the key formats people actually paste: PEM files from OpenSSL and the
//! DNS TXT value the spec publishes (`ed25519:pk=<base64>`).
//!
//! Pure text in, keys out, so the CLI, the store and tests share one reader and every failure
//! comes back as a message that says what was seen and what was expected.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use ed25519_dalek::pkcs8::{
    ALGORITHM_OID, DecodePrivateKey, DecodePublicKey, ObjectIdentifier, PrivateKeyInfo,
    spki::SubjectPublicKeyInfoRef,
};
use ed25519_dalek::{PUBLIC_KEY_LENGTH, SigningKey, VerifyingKey};

const EXPECTED_PUBLIC: &str =
    "expected a PEM public key (-----BEGIN PUBLIC KEY-----) or a DNS TXT value ed25519:pk=<base64>";
const EXPECTED_PRIVATE: &str =
    "expected a PKCS#8 PEM Ed25519 private key (-----BEGIN PRIVATE KEY-----)";

/// Why a key could not be read, worded for the person who supplied it.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The text is not in any key format we read; the message says what was found.
    #[error("{0}")]
    Unrecognized(String),
    /// A private key was given where only the public half belongs (verifying, trusting).
    #[error(
        "this is a private key, but a public key is expected here; use the public half instead \
         (-----BEGIN PUBLIC KEY----- or ed25519:pk=<base64>) and keep the private key secret"
    )]
    PrivateKeyGiven,
    /// A public key was given where signing needs the private key.
    #[error("this is a public key, but signing needs the private key; {EXPECTED_PRIVATE}")]
    PublicKeyGiven,
    /// The key is well-formed but for another algorithm, named here.
    #[error(
        "this key's algorithm is {0}, not Ed25519; crosstalk signs and verifies with Ed25519 keys only"
    )]
    NotEd25519(String),
    /// The format was recognised but its content is damaged; the message says where.
    #[error("{0}")]
    Malformed(String),
}

/// Reads a public key for verifying, from a PEM SPKI block or a DNS TXT value, so a key can be
/// pasted straight from a file, a DNS lookup or a zone file line.
pub fn parse_public_key(text: &str) -> Result<VerifyingKey, KeyError> {
    let text = text.trim().trim_start_matches('\u{feff}');
    if text.is_empty() {
        return Err(KeyError::Unrecognized(format!(
            "no key given; {EXPECTED_PUBLIC}"
        )));
    }
    if let Some((label, der)) = pem_block(text)? {
        return match label.as_str() {
            "PUBLIC KEY" => {
                let info = SubjectPublicKeyInfoRef::try_from(der.as_slice())
                    .map_err(|e| bad_pem("public key", &e))?;
                check_oid(info.algorithm.oid)?;
                VerifyingKey::from_public_key_der(&der).map_err(|e| bad_pem("public key", &e))
            }
            l if l.contains("PRIVATE KEY") => Err(KeyError::PrivateKeyGiven),
            l => Err(KeyError::Unrecognized(format!(
                "this is a PEM `{l}` block; {EXPECTED_PUBLIC}"
            ))),
        };
    }
    parse_txt(text)
}

/// Reads the private key used for signing from a PKCS#8 PEM block (what
/// `openssl genpkey -algorithm ed25519` writes).
pub fn parse_private_key(text: &str) -> Result<SigningKey, KeyError> {
    let text = text.trim().trim_start_matches('\u{feff}');
    let Some((label, der)) = pem_block(text)? else {
        if text.to_ascii_lowercase().contains(":pk=") {
            return Err(KeyError::PublicKeyGiven);
        }
        let what = if text.is_empty() {
            "no key given"
        } else {
            "this is not a PEM block"
        };
        return Err(KeyError::Unrecognized(format!(
            "{what}; {EXPECTED_PRIVATE}"
        )));
    };
    match label.as_str() {
        "PRIVATE KEY" => {
            let info =
                PrivateKeyInfo::try_from(der.as_slice()).map_err(|e| bad_pem("private key", &e))?;
            check_oid(info.algorithm.oid)?;
            SigningKey::from_pkcs8_der(&der).map_err(|e| bad_pem("private key", &e))
        }
        "PUBLIC KEY" => Err(KeyError::PublicKeyGiven),
        "ENCRYPTED PRIVATE KEY" => Err(KeyError::Unrecognized(format!(
            "this private key is encrypted with a passphrase; decrypt it first; {EXPECTED_PRIVATE}"
        ))),
        l => Err(KeyError::Unrecognized(format!(
            "this is a PEM `{l}` block; {EXPECTED_PRIVATE}"
        ))),
    }
}

/// Writes the value to publish in a DNS TXT record, so others can verify without a file.
pub fn public_key_txt(key: &VerifyingKey) -> String {
    format!("ed25519:pk={}", STANDARD.encode(key.as_bytes()))
}

/// A short, stable key id derived from the key itself, for `pkid=` when the signer has not
/// chosen a name: the same key always gets the same id.
pub(crate) fn default_pkid(key: &VerifyingKey) -> String {
    let encoded = URL_SAFE_NO_PAD.encode(key.as_bytes());
    format!("key-{}", &encoded[..16])
}

/// Decodes base64 however it was written: standard or URL-safe alphabet, padded or not, and
/// wrapped across lines, because keys and signatures pass through chat windows and mail.
pub(crate) fn decode_base64(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let compact = compact.trim_end_matches('=');
    if compact.contains(['-', '_']) {
        URL_SAFE_NO_PAD.decode(compact)
    } else {
        STANDARD_NO_PAD.decode(compact)
    }
}

/// Finds the first PEM block and returns its label and decoded content, tolerating indentation,
/// CRLF and unwrapped base64. `Ok(None)` when there is no `-----BEGIN` at all.
fn pem_block(text: &str) -> Result<Option<(String, Vec<u8>)>, KeyError> {
    let Some(start) = text.find("-----BEGIN ") else {
        return Ok(None);
    };
    let rest = &text[start + "-----BEGIN ".len()..];
    let Some(label_end) = rest.find("-----") else {
        return Err(KeyError::Malformed(
            "the PEM block's -----BEGIN line is cut off".into(),
        ));
    };
    let label = rest[..label_end].trim().to_string();
    let content = &rest[label_end + "-----".len()..];
    let end_marker = format!("-----END {label}-----");
    let Some(content_end) = content.find(&end_marker) else {
        return Err(KeyError::Malformed(format!(
            "the PEM block has no `{end_marker}` line; paste the whole block"
        )));
    };
    let der = decode_base64(&content[..content_end]).map_err(|e| {
        KeyError::Malformed(format!("the PEM `{label}` block is not valid base64 ({e})"))
    })?;
    Ok(Some((label, der)))
}

/// Reads `ed25519:pk=<base64>` with whatever a DNS tool or zone file wrapped around it.
fn parse_txt(text: &str) -> Result<VerifyingKey, KeyError> {
    let value = txt_value(text);
    let Some((alg, params)) = value.split_once(':') else {
        return Err(KeyError::Unrecognized(format!(
            "this is not a key in a known format; {EXPECTED_PUBLIC}"
        )));
    };
    let pk = params
        .split(';')
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("pk"))
        .map(|(_, v)| v);
    let alg = alg.trim();
    match pk {
        None => Err(KeyError::Unrecognized(format!(
            "the `{alg}:` value has no pk=<base64> part; {EXPECTED_PUBLIC}"
        ))),
        Some(_) if !alg.eq_ignore_ascii_case("ed25519") => {
            Err(KeyError::NotEd25519(format!("`{alg}`")))
        }
        Some(pk) => {
            let bytes = decode_base64(pk).map_err(|e| {
                KeyError::Malformed(format!("the pk= value is not valid base64 ({e})"))
            })?;
            let bytes: [u8; PUBLIC_KEY_LENGTH] = bytes.as_slice().try_into().map_err(|_| {
                KeyError::Malformed(format!(
                    "the pk= value holds {} bytes; an Ed25519 public key is {PUBLIC_KEY_LENGTH}",
                    bytes.len()
                ))
            })?;
            VerifyingKey::from_bytes(&bytes).map_err(|_| {
                KeyError::Malformed("the pk= value is not a valid Ed25519 public key".into())
            })
        }
    }
}

/// Strips a record prefix (`_crosstalk-key.example.com TXT`, `… 300 IN TXT`) and the quotes
/// around TXT strings, joining split strings (`"ed25519:pk=AB" "CD"`) as DNS does.
fn txt_value(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut rest = text;
    for (i, _) in lower.match_indices("txt") {
        let before = lower[..i].chars().next_back();
        let after = lower[i + 3..].chars().next();
        if before.is_some_and(char::is_whitespace) && after.is_some_and(char::is_whitespace) {
            rest = &text[i + 3..];
            break;
        }
    }
    if !rest.contains('"') {
        return rest.trim().to_string();
    }
    rest.split('"')
        .skip(1)
        .step_by(2)
        .collect::<String>()
        .trim()
        .to_string()
}

/// Rejects keys for other algorithms by name, before the generic decoder says "unknown OID".
fn check_oid(oid: ObjectIdentifier) -> Result<(), KeyError> {
    if oid == ALGORITHM_OID {
        return Ok(());
    }
    let name = match oid.to_string().as_str() {
        "1.2.840.113549.1.1.1" => "RSA".to_string(),
        "1.2.840.10045.2.1" => "EC (ECDSA)".to_string(),
        "1.3.101.110" => "X25519".to_string(),
        "1.3.101.113" => "Ed448".to_string(),
        other => format!("OID {other}"),
    };
    Err(KeyError::NotEd25519(name))
}

fn bad_pem(what: &str, err: &dyn std::fmt::Display) -> KeyError {
    KeyError::Malformed(format!("the PEM {what} could not be read ({err})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PUBLIC_PEM: &str = "-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEA5NCXBC/h80o6gPLqLUoxutAE4TmAn2e4tVVfp08HeKA=
-----END PUBLIC KEY-----
";
    const PRIVATE_PEM: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIMWc4eo8PvETdRkW0O3xanILEWfnaGZb9NTx0EhQxK3i
-----END PRIVATE KEY-----
";
    const ED448_PUBLIC_PEM: &str = "-----BEGIN PUBLIC KEY-----
MEMwBQYDK2VxAzoADhWDvBBa4vxRRQHg21+fcytPhZaMl+G57AAG+eAEaOsCYc1b
mPwhrNz+cjp4TIc8jXO0wpay1pyA
-----END PUBLIC KEY-----
";
    const TXT: &str = "ed25519:pk=5NCXBC/h80o6gPLqLUoxutAE4TmAn2e4tVVfp08HeKA=";

    #[test]
    fn pem_pair_matches() {
        let public = parse_public_key(PUBLIC_PEM).unwrap();
        let private = parse_private_key(PRIVATE_PEM).unwrap();
        assert_eq!(private.verifying_key(), public);
    }

    #[test]
    fn pem_tolerates_pasting_damage() {
        let indented = PUBLIC_PEM.replace('\n', "\r\n    ");
        assert!(parse_public_key(&format!("key:\n    {indented}")).is_ok());
    }

    #[test]
    fn txt_round_trip_and_forms() {
        let public = parse_public_key(PUBLIC_PEM).unwrap();
        assert_eq!(public_key_txt(&public), TXT);
        let url_safe = "ed25519:pk=5NCXBC_h80o6gPLqLUoxutAE4TmAn2e4tVVfp08HeKA";
        for text in [
            TXT.to_string(),
            format!("  \"{TXT}\"\n"),
            format!("_crosstalk-key.example.com TXT \"{TXT}\""),
            format!(
                "_crosstalk-key.example.com. 300 IN TXT \"{}\" \"{}\"",
                &TXT[..20],
                &TXT[20..]
            ),
            url_safe.to_string(),
            TXT.trim_end_matches('=').to_string(),
        ] {
            assert_eq!(parse_public_key(&text).unwrap(), public, "{text}");
        }
    }

    #[test]
    fn default_pkid_is_short_and_stable() {
        let public = parse_public_key(PUBLIC_PEM).unwrap();
        assert_eq!(default_pkid(&public), "key-5NCXBC_h80o6gPLq");
    }

    #[test]
    fn errors_say_what_was_wrong() {
        let msg = |r: Result<VerifyingKey, KeyError>| r.unwrap_err().to_string();
        assert!(matches!(
            parse_public_key(PRIVATE_PEM),
            Err(KeyError::PrivateKeyGiven)
        ));
        assert!(msg(parse_public_key(PRIVATE_PEM)).contains("private key"));
        assert!(matches!(
            parse_private_key(PUBLIC_PEM),
            Err(KeyError::PublicKeyGiven)
        ));
        assert!(matches!(
            parse_private_key(TXT),
            Err(KeyError::PublicKeyGiven)
        ));
        assert!(msg(parse_public_key("hello")).contains("-----BEGIN PUBLIC KEY-----"));
        assert!(msg(parse_public_key("")).contains("ed25519:pk=<base64>"));
        assert!(msg(parse_public_key(ED448_PUBLIC_PEM)).contains("Ed448"));
        assert!(msg(parse_public_key("secp256r1:pk=AAAA")).contains("secp256r1"));
        assert!(msg(parse_public_key("ed25519:pk=AAAA")).contains("3 bytes"));
        assert!(msg(parse_public_key("ed25519:pk=!!")).contains("base64"));
        let cut = &PUBLIC_PEM[..60];
        assert!(msg(parse_public_key(cut)).contains("-----END PUBLIC KEY-----"));
        let err = parse_private_key("nope").unwrap_err().to_string();
        assert!(err.contains("-----BEGIN PRIVATE KEY-----"), "{err}");
    }
}
