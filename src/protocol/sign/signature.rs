//! Signing and verifying envelopes in both `sig:` forms that occur: the spec's own
//! `ed25519:pkid=<key-id>;sig=<base64>` and the detached JWS (EdDSA) of the rc1
//! canonicalization appendix.
//!
//! Verification is forgiving about how a value was written (alphabet, padding, spacing) but
//! strict about what it means: only Ed25519 is accepted, and `verify_strict` rejects the
//! malleable signatures plain verification would let through.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ed25519_dalek::{SIGNATURE_LENGTH, Signature, Signer, SigningKey, VerifyingKey};
use serde_json::Value;

use crate::protocol::keys::decode_base64;
use crate::protocol::render::{nfc, signable, signable_parsed};
use crate::protocol::{Code, Envelope, Parsed};

/// The JWS protected header crosstalk writes, byte for byte as in the rc1 vectors, so a
/// signature made here matches theirs exactly.
pub(crate) const JWS_PROTECTED: &str = r#"{"alg":"EdDSA","b64":true,"crit":["b64","cty","ver"],"cty":"crosstalk/v1.1","typ":"JOSE","ver":"1.1-rc1"}"#;

/// What a valid `sig:` value of the spec's form looks like, for error messages.
const ED25519_FORM: &str = "a valid value looks like `ed25519:pkid=<key-id>;sig=<the 64-byte signature in base64, 88 characters>`";

const EXPECTED: &str = "expected `none`, `ed25519:pkid=<key-id>;sig=<base64>`, \
                        or a detached JWS `<header>..<signature>`";
const UNDERSTOOD_CRIT: [&str; 3] = ["b64", "cty", "ver"];

/// Which `sig:` form to write, since peers may understand only one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SigFormat {
    /// The spec's `ed25519:pkid=<key-id>;sig=<base64>`.
    Ed25519,
    /// A detached JWS as in the rc1 vectors.
    Jws,
}

/// A `sig:` value understood, so verification need not re-parse text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SigValue {
    /// `none` or empty: the sender chose not to sign.
    None,
    /// The spec's form: Ed25519 directly over the payload bytes.
    Ed25519 {
        /// The signer's key id, for choosing which key to verify with.
        pkid: String,
        /// The raw signature.
        signature: [u8; 64],
    },
    /// A detached JWS; the header is kept as received because the signature covers it.
    Jws {
        /// The protected header exactly as it appeared in the value.
        protected_b64: String,
        /// The protected header decoded, for its `b64` and other parameters.
        protected: Value,
        /// The raw signature.
        signature: [u8; 64],
    },
}

/// Why a signature could not be checked or did not check out, worded as what to do next.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SigError {
    /// There is no signature to check.
    #[error(
        "the envelope is not signed (`sig: none` or no `sig:` line); ask the sender to sign it"
    )]
    Unsigned,
    /// The value is not a signature in any form we read; the message says what is wrong.
    #[error("the sig: value is malformed: {0}")]
    Malformed(String),
    /// A well-formed signature in an algorithm or JWS feature we do not verify.
    #[error("{0}")]
    Unsupported(String),
    /// Lines stand between `sig:` and `[[END]]`: the envelope says more than its signature
    /// covers, so it is not verified at all (see `content-after-sig`).
    #[error(
        "line {0} comes after `sig:`, outside the signed text: the envelope cannot be verified; only `hash:` may stand between `sig:` and `[[END]]`"
    )]
    OutsideSigned(u32),
    /// Text inside the envelope that the parser did not read (`unexpected-line`,
    /// `bad-meta-entry`): the envelope says more than its signature covers, so it is not
    /// verified at all, as with lines after `sig:`.
    #[error(
        "line {line}, column {column} holds text the envelope does not read (it is not a header, a META entry or the body), so the signature cannot vouch for it and the envelope cannot be verified; ask the sender to write it as `Key: value` or move it into the body, and to sign again"
    )]
    Unread {
        /// Where the unread text starts.
        line: u32,
        /// Its column.
        column: u32,
    },
    /// The signature is valid in form but not for this content and key.
    #[error(
        "the signature does not match: the envelope was changed after signing, or it was signed by another key"
    )]
    Mismatch,
}

/// Which text a signature matched, so callers can tell a pristine envelope from one that only
/// verifies after re-rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matched {
    /// The signable portion exactly as received (after undoing quoting and CRLF).
    AsReceived,
    /// The signable portion as received once put in Unicode NFC (the signer's text was
    /// normalized, or the transport decomposed accents).
    AfterNfc,
    /// The canonical rendering of the envelope.
    Canonical,
}

/// Reads a `sig:` value in either form, so verification works whichever one a peer wrote.
pub(crate) fn parse_sig(value: &str) -> Result<SigValue, SigError> {
    let value = crate::protocol::lines::trim(value);
    if value.is_empty() || value.eq_ignore_ascii_case("none") {
        return Ok(SigValue::None);
    }
    let is_name = |a: &str| !a.is_empty() && a.chars().all(|c| c.is_alphanumeric() || c == '-');
    match value.split_once(':') {
        Some((alg, rest)) if is_name(alg.trim()) => parse_prefixed(alg.trim(), rest),
        _ if value.contains('.') => parse_jws(value),
        _ => Err(malformed(EXPECTED)),
    }
}

/// The parts of an `ed25519:` value besides `pkid=` and `sig=`: the signature covers the
/// text above `sig:`, never the `sig:` line, so whatever else that line says is unsigned.
pub(crate) fn extra_parts(value: &str) -> Vec<&str> {
    let Some((alg, rest)) = value.trim().split_once(':') else {
        return Vec::new();
    };
    if !alg.trim().eq_ignore_ascii_case("ed25519") {
        return Vec::new();
    }
    // The last `pkid=` and `sig=` are the ones read: an earlier one is shown to a reader
    // and used by nothing.
    let parts: Vec<&str> = rest
        .split(';')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let key = |p: &str| {
        p.split_once('=')
            .map_or(p, |(k, _)| k)
            .trim()
            .to_ascii_lowercase()
    };
    let last = |name: &str| parts.iter().rposition(|p| key(p) == name);
    let (pkid, sig) = (last("pkid"), last("sig"));
    (parts.iter().enumerate())
        .filter(|(i, _)| Some(*i) != pkid && Some(*i) != sig)
        .map(|(_, p)| *p)
        .collect()
}

fn malformed(message: impl Into<String>) -> SigError {
    SigError::Malformed(message.into())
}

fn parse_prefixed(alg: &str, rest: &str) -> Result<SigValue, SigError> {
    if !alg.eq_ignore_ascii_case("ed25519") {
        return Err(SigError::Unsupported(format!(
            "algorithm `{alg}` is not supported; crosstalk verifies Ed25519 \
             (ed25519:pkid=<key-id>;sig=<base64>) and EdDSA detached JWS"
        )));
    }
    let (mut pkid, mut sig) = (None, None);
    for part in rest.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, val) = (part.split_once('='))
            .ok_or_else(|| malformed(format!("`{part}` is not a key=value pair")))?;
        match key.trim().to_ascii_lowercase().as_str() {
            "pkid" => pkid = Some(val.trim().to_string()),
            "sig" => sig = Some(val),
            _ => {}
        }
    }
    let pkid = pkid.ok_or_else(|| malformed("no `pkid=<key-id>` part"))?;
    let sig = sig.ok_or_else(|| malformed("no `sig=<base64>` part"))?;
    let signature = decode_signature(sig, "the signature after `sig=`").map_err(|e| match e {
        SigError::Malformed(m) => malformed(format!("{m}; {ED25519_FORM}")),
        other => other,
    })?;
    Ok(SigValue::Ed25519 { pkid, signature })
}

fn parse_jws(value: &str) -> Result<SigValue, SigError> {
    let parts: Vec<&str> = value.split('.').map(str::trim).collect();
    let [header, payload, sig] = parts.as_slice() else {
        return Err(malformed(format!("a JWS has three parts; {EXPECTED}")));
    };
    if !payload.is_empty() {
        return Err(malformed(
            "this JWS carries its payload; a crosstalk sig is detached (`<header>..<signature>`)",
        ));
    }
    let bytes = decode_base64(header)
        .map_err(|e| malformed(format!("the JWS header is not base64url ({e})")))?;
    let protected: Value = serde_json::from_slice(&bytes)
        .map_err(|e| malformed(format!("the JWS header is not JSON ({e})")))?;
    let alg = protected.get("alg").and_then(Value::as_str);
    let alg = alg.ok_or_else(|| malformed("the JWS header is not an object with an \"alg\""))?;
    if alg != "EdDSA" {
        return Err(SigError::Unsupported(format!(
            "algorithm `{alg}` is not supported; crosstalk verifies EdDSA (Ed25519)"
        )));
    }
    let crit = protected.get("crit").and_then(Value::as_array).into_iter();
    for name in crit.flatten().map(|n| n.as_str().unwrap_or_default()) {
        if !UNDERSTOOD_CRIT.contains(&name) {
            return Err(SigError::Unsupported(format!(
                "the JWS header marks `{name}` critical, which crosstalk does not understand"
            )));
        }
    }
    let signature = decode_signature(sig, "the JWS signature")?;
    let protected_b64 = (*header).to_string();
    Ok(SigValue::Jws {
        protected_b64,
        protected,
        signature,
    })
}

fn decode_signature(text: &str, what: &str) -> Result<[u8; 64], SigError> {
    let bytes = decode_base64(text.trim()).map_err(|e| {
        malformed(format!(
            "{what} is not base64: {}",
            base64_problem(text, &e)
        ))
    })?;
    bytes.as_slice().try_into().map_err(|_| {
        malformed(format!(
            "{what} holds {} bytes; an Ed25519 signature is {SIGNATURE_LENGTH}",
            bytes.len()
        ))
    })
}

/// Says what is wrong with base64 text in the reader's terms: which character, where.
fn base64_problem(text: &str, e: &base64::DecodeError) -> String {
    // Offsets count the text as decoded: without whitespace, which decoding skips.
    let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    match e {
        base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _) => {
            let ch = text.get(*at..).and_then(|t| t.chars().next());
            match ch {
                Some(c) if c.is_control() => format!("a control character at position {}", at + 1),
                Some(c) => format!("`{c}` at position {} is not a base64 character", at + 1),
                None => format!("an invalid character at position {}", at + 1),
            }
        }
        base64::DecodeError::InvalidLength(n) => format!("{n} characters is not a base64 length"),
        base64::DecodeError::InvalidPadding => "its `=` padding is wrong".to_string(),
    }
}

/// The key id a signature names: `pkid=` of the spec's form, or `kid` of a JWS header.
pub(crate) fn key_id(sig: &SigValue) -> Option<&str> {
    match sig {
        SigValue::None => None,
        SigValue::Ed25519 { pkid, .. } => Some(pkid),
        SigValue::Jws { protected, .. } => protected.get("kid").and_then(Value::as_str),
    }
}

/// Signs a payload and returns the complete `sig:` value in the chosen form; Ed25519 is
/// deterministic, so the same payload and key always give the same value.
pub fn sign_bytes(payload: &[u8], key: &SigningKey, format: SigFormat, pkid: &str) -> String {
    match format {
        SigFormat::Ed25519 => {
            let sig = STANDARD.encode(key.sign(payload).to_bytes());
            format!("ed25519:pkid={pkid};sig={sig}")
        }
        SigFormat::Jws => {
            // The rc1 header, with the key id (`kid`) a verifier finds the key by when there
            // is one (without, it is the rc1 vectors' header byte for byte).
            let protected = if pkid.is_empty() {
                JWS_PROTECTED.to_string()
            } else {
                serde_json::json!({
                    "alg": "EdDSA",
                    "b64": true,
                    "crit": ["b64", "cty", "ver"],
                    "cty": "crosstalk/v1.1",
                    "kid": pkid,
                    "typ": "JOSE",
                    "ver": "1.1-rc1",
                })
                .to_string()
            };
            let header = URL_SAFE_NO_PAD.encode(protected);
            let input = format!("{header}.{}", URL_SAFE_NO_PAD.encode(payload));
            let sig = key.sign(input.as_bytes());
            format!("{header}..{}", URL_SAFE_NO_PAD.encode(sig.to_bytes()))
        }
    }
}

/// Checks a parsed signature against exact payload bytes; choosing which text to try is left
/// to [`verify_parsed`].
pub(crate) fn verify_bytes(
    payload: &[u8],
    sig: &SigValue,
    key: &VerifyingKey,
) -> Result<(), SigError> {
    let (input, signature) = match sig {
        SigValue::None => return Err(SigError::Unsigned),
        SigValue::Ed25519 { signature, .. } => (payload.to_vec(), signature),
        SigValue::Jws {
            protected_b64,
            protected,
            signature,
        } => {
            let mut input = format!("{protected_b64}.").into_bytes();
            if protected.get("b64").and_then(Value::as_bool) == Some(false) {
                input.extend_from_slice(payload);
            } else {
                input.extend_from_slice(URL_SAFE_NO_PAD.encode(payload).as_bytes());
            }
            (input, signature)
        }
    };
    key.verify_strict(&input, &Signature::from_bytes(signature))
        .map_err(|_| SigError::Mismatch)
}

/// Signs an envelope over its canonical signable portion and stores the value in `sig`, so any
/// verifier that re-renders the envelope gets the same bytes.
pub fn sign_envelope(env: &mut Envelope, key: &SigningKey, format: SigFormat, pkid: &str) {
    let payload = signable(env);
    env.sig = Some(sign_bytes(payload.as_bytes(), key, format, pkid));
}

/// Verifies a received envelope, trying the text as received before the canonical rendering,
/// because signers do not all render alike (tabs, trailing blank lines) and their bytes are
/// what was signed.
pub fn verify_parsed(
    parsed: &Parsed,
    input: &str,
    key: &VerifyingKey,
) -> Result<Matched, SigError> {
    verify_signable(
        parsed,
        parsed.signable_received_all(input).unwrap_or_default(),
        key,
    )
}

/// [`verify_parsed`] for a caller that kept the envelope's received text (transport wrapping
/// undone, one LF per line, as the store keeps it) rather than the whole input.
pub(crate) fn verify_received(
    parsed: &Parsed,
    received: &str,
    key: &VerifyingKey,
) -> Result<Matched, SigError> {
    let signable = parsed
        .positions
        .sig
        .filter(|_| !parsed.collapsed)
        .and_then(|sig| {
            let count = sig.line.checked_sub(parsed.span.start_line)? as usize;
            let lines: Vec<&str> = received.split_inclusive('\n').take(count).collect();
            Some(parsed.signed_lines(&lines))
        })
        .unwrap_or_default();
    verify_signable(parsed, signable, key)
}

fn verify_signable(
    parsed: &Parsed,
    received: Vec<String>,
    key: &VerifyingKey,
) -> Result<Matched, SigError> {
    let sig = parse_sig(parsed.envelope.sig.as_deref().unwrap_or("none"))?;
    if sig == SigValue::None {
        return Err(SigError::Unsigned);
    }
    if let Some(e) = unread(parsed) {
        return Err(e);
    }
    for received in received {
        for text in [received.as_str(), without_trailing_blank_lines(&received)] {
            if verify_bytes(text.as_bytes(), &sig, key).is_ok() {
                return Ok(Matched::AsReceived);
            }
        }
        let normalized = nfc(&received);
        if normalized != received {
            for text in [
                normalized.as_str(),
                without_trailing_blank_lines(&normalized),
            ] {
                if verify_bytes(text.as_bytes(), &sig, key).is_ok() {
                    return Ok(Matched::AfterNfc);
                }
            }
        }
    }
    verify_bytes(signable_parsed(parsed).as_bytes(), &sig, key).map(|()| Matched::Canonical)
}

/// Why the envelope cannot be verified whatever its signature, if it cannot: what a valid
/// signature vouches for and what the envelope says must be the same thing. Text the parser
/// did not read (lines after `sig:`, a line among the headers or in a META block that is not
/// `Key: value`, text a one-line envelope's META block dropped) is not in the canonical text
/// a signature may match, yet it stands inside the envelope, where a reader takes it for
/// part of the signed message. Its presence alone rules verification out.
pub(crate) fn unread(parsed: &Parsed) -> Option<SigError> {
    parsed.diagnostics.iter().find_map(|d| match d.code {
        Code::ContentAfterSig | Code::IgnoredAfterSig => Some(SigError::OutsideSigned(d.line)),
        Code::UnexpectedLine | Code::BadMetaEntry => Some(SigError::Unread {
            line: d.line,
            column: d.column,
        }),
        _ => None,
    })
}

/// The text without whitespace-only lines at its end, keeping the last line's newline.
fn without_trailing_blank_lines(text: &str) -> &str {
    let mut end = text.len();
    loop {
        let head = &text[..end];
        let head = head.strip_suffix('\n').unwrap_or(head);
        match head.rfind('\n') {
            Some(i) if head[i + 1..].trim().is_empty() => end = i + 1,
            _ => return &text[..end],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::keys::{parse_private_key, parse_public_key};

    const VECTORS: [&str; 3] = [
        include_str!("../../../tests/fixtures/rc1/vector1.txt"),
        include_str!("../../../tests/fixtures/rc1/vector2.txt"),
        include_str!("../../../tests/fixtures/rc1/vector3.txt"),
    ];
    const PUBLIC_PEM: &str = include_str!("../../../tests/fixtures/rc1/public.pem");
    const PRIVATE_PEM: &str = include_str!("../../../tests/fixtures/rc1/private.pem");

    /// The lines after `Payload:` up to the blank line before `SHA-256:`, each LF-terminated,
    /// and the detached JWS.
    fn vector(text: &str) -> (String, &str) {
        let mut lines = text.lines().skip_while(|l| *l != "Payload:").skip(1);
        let payload: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("SHA-256:"))
            .collect();
        let (blank, payload) = payload.split_last().unwrap();
        assert_eq!(*blank, "");
        let jws = lines.skip_while(|l| *l != "Detached JWS:").nth(1).unwrap();
        (
            payload.iter().map(|l| format!("{l}\n")).collect(),
            jws.trim(),
        )
    }

    fn keys() -> (SigningKey, VerifyingKey) {
        let private = parse_private_key(PRIVATE_PEM).unwrap();
        (private, parse_public_key(PUBLIC_PEM).unwrap())
    }

    #[test]
    fn published_vectors_verify_and_reproduce() {
        let (private, public) = keys();
        for text in VECTORS {
            let (payload, published) = vector(text);
            assert!(payload.starts_with("[[BROTHER→CLAUDE v1]]\n"));
            let sig = parse_sig(published).unwrap();
            assert_eq!(verify_bytes(payload.as_bytes(), &sig, &public), Ok(()));
            // Without a key id: the rc1 header byte for byte.
            let signed = sign_bytes(payload.as_bytes(), &private, SigFormat::Jws, "");
            assert_eq!(signed, published);
            // With one, the header names it and the signature still verifies.
            let named = sign_bytes(payload.as_bytes(), &private, SigFormat::Jws, "k1");
            let parsed = parse_sig(&named).unwrap();
            assert_eq!(key_id(&parsed), Some("k1"));
            assert_eq!(verify_bytes(payload.as_bytes(), &parsed, &public), Ok(()));
        }
    }

    /// A hop another relay wrote into the text as received (not re-rendered) leaves a
    /// tab-indented signature, which only the as-received text matches, verifiable; a hop
    /// block that swallows a signed line does not.
    #[test]
    fn audit_hops_inserted_as_received_stay_outside_the_signature() {
        let (payload, published) = vector(VECTORS[2]);
        let public = keys().1;
        let hop = "meta: audit\nReceived-By: gw\nHop-Digest: sha256:00\n\n";
        for text in [
            payload.replace("body: |", &format!("{hop}body: |")),
            payload.replace("body: |", &format!("\n{hop}body: |")),
            payload.replace("intent: REQUEST\n", &format!("intent: REQUEST\n\n{hop}")),
        ] {
            let text = format!("{text}sig: {published}\n[[END]]\n");
            let p =
                &crate::protocol::extract(&text, &crate::protocol::Options::default()).envelopes[0];
            assert_eq!(p.envelope.meta.len(), 1, "{text}");
            assert_eq!(
                verify_parsed(p, &text, &public),
                Ok(Matched::AsReceived),
                "{text}"
            );
        }
        // `meta: audit` put above a signed header makes that header part of the hop, so it
        // is no longer covered and the signature fails.
        let text = payload.replace("context:", "meta: audit\nContext:");
        let text = format!("{text}sig: {published}\n[[END]]\n");
        let p = &crate::protocol::extract(&text, &crate::protocol::Options::default()).envelopes[0];
        assert!(verify_parsed(p, &text, &public).is_err(), "{text}");
    }

    #[test]
    fn any_changed_character_or_key_fails() {
        let (payload, published) = vector(VECTORS[0]);
        let (sig, public) = (parse_sig(published).unwrap(), keys().1);
        let chars: Vec<char> = payload.chars().collect();
        for i in 0..chars.len() {
            let mut changed = chars.clone();
            changed[i] = if changed[i] == 'X' { '0' } else { 'X' };
            let changed: String = changed.into_iter().collect();
            let result = verify_bytes(changed.as_bytes(), &sig, &public);
            assert_eq!(result, Err(SigError::Mismatch), "position {i}");
        }
        let other = SigningKey::from_bytes(&[7; 32]).verifying_key();
        let result = verify_bytes(payload.as_bytes(), &sig, &other);
        assert_eq!(result, Err(SigError::Mismatch));
    }

    #[test]
    fn ed25519_form_round_trips_in_any_spelling() {
        let (private, public) = keys();
        let payload = vector(VECTORS[1]).0.into_bytes();
        let value = sign_bytes(&payload, &private, SigFormat::Ed25519, "k@example");
        let (_, b64) = value.split_once(";sig=").unwrap();
        assert!(b64.len() == 88 && b64.ends_with("=="), "{b64}");
        let url_safe = URL_SAFE_NO_PAD.encode(STANDARD.decode(b64).unwrap());
        for spelling in [
            value.clone(),
            format!("  ED25519: sig = {b64} ; pkid = k@example ;"),
            format!("ed25519:pkid=k@example;sig={url_safe}"),
        ] {
            let sig = parse_sig(&spelling).unwrap();
            assert!(matches!(&sig, SigValue::Ed25519 { pkid, .. } if pkid == "k@example"));
            assert_eq!(verify_bytes(&payload, &sig, &public), Ok(()));
        }
    }

    #[test]
    fn unencoded_payload_jws_verifies() {
        let (private, public) = keys();
        let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"EdDSA","b64":false,"crit":["b64"]}"#);
        let payload = vector(VECTORS[2]).0;
        let sig = private.sign(format!("{header}.{payload}").as_bytes());
        let value = format!("{header}..{}", URL_SAFE_NO_PAD.encode(sig.to_bytes()));
        let result = verify_bytes(payload.as_bytes(), &parse_sig(&value).unwrap(), &public);
        assert_eq!(result, Ok(()));
    }

    #[test]
    fn none_and_bad_values() {
        for value in ["none", "NONE", "  ", ""] {
            assert_eq!(parse_sig(value), Ok(SigValue::None));
        }
        let result = verify_bytes(b"x", &SigValue::None, &keys().1);
        assert_eq!(result, Err(SigError::Unsigned));
        let s = URL_SAFE_NO_PAD.encode([1u8; 64]);
        let ours = URL_SAFE_NO_PAD.encode(JWS_PROTECTED);
        let jws = |json: &str| format!("{}..{s}", URL_SAFE_NO_PAD.encode(json));
        for v in [
            "garbage".to_string(),
            "ed25519:pkid=a".into(),
            "ed25519:sig=AAAA".into(),
            "ed25519:pkid=a;oops".into(),
            "ed25519:pkid=a;sig=AAAA".into(),
            "ed25519:pkid=a;sig=!!!!".into(),
            format!("abc..{s}"),
            format!("{ours}.e30.{s}"),
            format!("{ours}.."),
            format!("{s}..{s}.x"),
            jws("[1]"),
            jws(r#"{"typ":"JOSE"}"#),
        ] {
            assert!(matches!(parse_sig(&v), Err(SigError::Malformed(_))), "{v}");
        }
        for (v, name) in [
            (
                "secp256r1:pkid=bob@keys/2025;sig=XyZ789".to_string(),
                "secp256r1",
            ),
            ("rsa2048:pkid=a;sig=AAAA".into(), "rsa2048"),
            (jws(r#"{"alg":"ES256"}"#), "ES256"),
            (jws(r#"{"crit":["zip"],"alg":"EdDSA"}"#), "zip"),
        ] {
            let err = parse_sig(&v).unwrap_err();
            assert!(
                matches!(&err, SigError::Unsupported(m) if m.contains(name)),
                "{err}"
            );
        }
    }

    #[test]
    fn only_trailing_blank_lines_are_trimmed() {
        assert_eq!(without_trailing_blank_lines("a\n\nb\n \n\n"), "a\n\nb\n");
        assert_eq!(without_trailing_blank_lines("a  \n"), "a  \n");
    }
}
