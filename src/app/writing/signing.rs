//! Signing what the composer copies, with the operator's key from `[signing]` in the config.
//!
//! The key file is read at each copy rather than held by the app: a key replaced on disk is
//! used at once, and the private key is in memory only while an envelope is being signed.

use crate::config::{SigningConfig, SigningFormat};
use crate::protocol::keys::{default_pkid, parse_private_key};
use crate::protocol::signature::{SigFormat, sign_envelope};
use crate::protocol::{self, Envelope};

/// Signs `env` when a key is configured: `Ok(Some(pkid))` when signed, `Ok(None)` when no key
/// is configured, `Err` saying what to fix when the key cannot be used (nothing is copied
/// then: an envelope the operator meant to sign must not leave unsigned).
pub(crate) fn sign_composed(
    cfg: &SigningConfig,
    env: &mut Envelope,
) -> Result<Option<String>, String> {
    let Some(path) = &cfg.key else {
        return Ok(None);
    };
    let path = crate::app::command::command_line::expand_home(&path.to_string_lossy());
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "cannot read the signing key `{}` ({e}); fix [signing] key in the config",
            path.display()
        )
    })?;
    let key = parse_private_key(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let pkid = cfg
        .pkid
        .clone()
        .unwrap_or_else(|| default_pkid(&key.verifying_key()));
    let format = match cfg.format {
        SigningFormat::Ed25519 => SigFormat::Ed25519,
        SigningFormat::Jws => SigFormat::Jws,
    };
    sign_envelope(env, &key, format, &pkid);
    if env.hash.is_some() {
        env.hash = Some(protocol::render::crc32_hex(
            &protocol::render::hashed_portion(env),
        ));
    }
    Ok(Some(pkid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::signature::verify_parsed;
    use ed25519_dalek::SigningKey;
    use ed25519_dalek::pkcs8::EncodePrivateKey;
    use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;

    #[test]
    fn signs_with_the_configured_key_or_says_why_not() {
        let dir = tempfile::tempdir().unwrap();
        let sk = SigningKey::from_bytes(&[3; 32]);
        let pem = dir.path().join("me.pem");
        std::fs::write(&pem, sk.to_pkcs8_pem(LineEnding::LF).unwrap().as_bytes()).unwrap();
        let mut env = Envelope::new("op", "claude");
        env.set_header("intent", "BROADCAST");
        env.body = Some("hello".into());
        assert_eq!(sign_composed(&SigningConfig::default(), &mut env), Ok(None));
        let cfg = SigningConfig {
            key: Some(pem),
            pkid: Some("me".into()),
            format: SigningFormat::Ed25519,
        };
        assert_eq!(sign_composed(&cfg, &mut env), Ok(Some("me".into())));
        let text = protocol::render(&env);
        let p = &protocol::extract(&text, &Default::default()).envelopes[0];
        assert!(verify_parsed(p, &text, &sk.verifying_key()).is_ok());
        let missing = SigningConfig {
            key: Some(dir.path().join("nope.pem")),
            ..cfg
        };
        let err = sign_composed(&missing, &mut env).unwrap_err();
        assert!(err.contains("[signing] key"), "{err}");
    }
}
