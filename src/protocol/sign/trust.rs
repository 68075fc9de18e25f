//! The trust rules over envelopes: key announcements (`meta: keys`), what a signature's
//! verdict is given what the trust store knows of its key, and when a revocation counts.
//!
//! Pure: the store hands in the pinned key (if any) and keeps the verdicts; this module only
//! decides them, so the CLI, the importer and the tests apply one rule.

use ed25519_dalek::VerifyingKey;
use serde::Serialize;

use crate::protocol::did_key::{is_did_key, parse_did_key};
use crate::protocol::keys::parse_public_key;
use crate::protocol::signature::{SigError, SigValue, key_id, parse_sig, unread};
use crate::protocol::{Code, Envelope, Intent, Parsed, namespaces};

/// A signed message's standing, as the tree and the inspector mark it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SigState {
    /// Signed by the key trusted for its key id (or by the key its `did:key` names).
    Verified,
    /// Signed, but no key is known for its key id.
    Unknown,
    /// The signature does not check out (or cannot be read, or its key is revoked).
    Bad,
    /// Signed by, or failing against, a key id whose key has changed: the operator decides.
    Changed,
}

impl SigState {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            SigState::Verified => "verified",
            SigState::Unknown => "unknown",
            SigState::Bad => "bad",
            SigState::Changed => "changed",
        }
    }

    /// Reads a stored name.
    pub fn parse(s: &str) -> Option<SigState> {
        Some(match s {
            "verified" => SigState::Verified,
            "unknown" => SigState::Unknown,
            "bad" => SigState::Bad,
            "changed" => SigState::Changed,
            _ => return None,
        })
    }

    /// The one-character mark shown beside a message.
    pub fn mark(self) -> &'static str {
        match self {
            SigState::Verified => "✓",
            SigState::Unknown => "?",
            SigState::Bad => "✗",
            SigState::Changed => "⚠",
        }
    }

    /// Whether the operator must be alarmed (shown in red).
    pub(crate) fn is_alarm(self) -> bool {
        matches!(self, SigState::Bad | SigState::Changed)
    }
}

/// Where a key in the trust store stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyState {
    /// The key signatures are checked against.
    Trusted,
    /// Another key was announced for the id, or a signature failed against it: signatures
    /// are alarms until the operator trusts a key again.
    Changed,
    /// No longer valid: its signatures are bad.
    Revoked,
}

impl KeyState {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyState::Trusted => "trusted",
            KeyState::Changed => "changed",
            KeyState::Revoked => "revoked",
        }
    }

    /// Reads a stored name.
    pub fn parse(s: &str) -> Option<KeyState> {
        Some(match s {
            "trusted" => KeyState::Trusted,
            "changed" => KeyState::Changed,
            "revoked" => KeyState::Revoked,
            _ => return None,
        })
    }
}

/// What the trust store holds for a key id, as the verdict needs it.
#[derive(Debug, Clone)]
pub struct PinnedKey {
    /// The pinned key.
    pub key: VerifyingKey,
    /// A different key seen for the same id since, awaiting the operator's decision.
    pub pending: Option<VerifyingKey>,
    /// Where the key stands.
    pub state: KeyState,
}

/// The verdict on one signed envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Its standing.
    pub state: SigState,
    /// The key id the signature names, if any.
    pub pkid: Option<String>,
    /// Why, in words that say what to do.
    pub detail: String,
    /// The signature failed against a trusted pinned key on text that arrived intact: the
    /// key id's key may have changed, and the store marks it so.
    pub flags_key: bool,
}

/// A key announced in a `meta: keys` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    /// The key id (`Key-ID:`).
    pub pkid: String,
    /// The key (`Public-Key:`).
    pub key: VerifyingKey,
}

/// Whether `id` can be a key id: not empty, and no white space, control character or `;` in
/// it (a signature's `pkid=` part could not name it, and a terminal would not show it as it
/// is), nor an invisible character or bidi control (it would read as another id than it is:
/// `alice` with a zero-width space is not `alice`). The trust store holds only such ids,
/// whether added by hand or announced, and `sign` writes only such ids.
pub(crate) fn is_key_id(id: &str) -> bool {
    use crate::protocol::lines::{is_bidi_control, is_invisible};
    !id.is_empty()
        && !id.chars().any(|c| {
            c.is_control() || c.is_whitespace() || c == ';' || is_invisible(c) || is_bidi_control(c)
        })
}

/// The keys an envelope announces: each `Key-ID:` paired with the `Public-Key:` after it, in
/// every `meta: keys` block. Pairs that cannot be read come back as errors worded for the
/// operator, with the id they were for.
pub fn announcements(env: &Envelope) -> Vec<Result<Announcement, String>> {
    let mut out = Vec::new();
    for block in env.meta.iter().filter(|m| m.namespace == namespaces::KEYS) {
        let mut pkid: Option<&str> = None;
        for (k, v) in &block.entries {
            if k.eq_ignore_ascii_case("key-id") {
                pkid = Some(v.trim()).filter(|v| !v.is_empty());
            } else if k.eq_ignore_ascii_case("public-key") {
                let Some(id) = pkid.take() else {
                    out.push(Err(
                        "a `Public-Key:` without a `Key-ID:` before it is ignored".to_string(),
                    ));
                    continue;
                };
                if !is_key_id(id) {
                    out.push(Err(format!(
                        "the key announced for `{id}` is ignored: a key id has no spaces or \
                         control characters"
                    )));
                    continue;
                }
                out.push(
                    read_key(v)
                        .map(|key| Announcement {
                            pkid: id.to_string(),
                            key,
                        })
                        .map_err(|e| format!("the key announced for `{id}` is ignored: {e}")),
                );
            }
        }
    }
    out
}

/// Reads a public key in any form a person pastes: PEM, `ed25519:pk=<base64>`, `did:key`.
pub(crate) fn read_key(text: &str) -> Result<VerifyingKey, crate::protocol::keys::KeyError> {
    if is_did_key(text) {
        parse_did_key(text)
    } else {
        parse_public_key(text)
    }
}

/// Whether the envelope revokes something (intent REVOKE or a `meta: revocation` block),
/// which counts only when a trusted key signed it.
pub(crate) fn is_revocation(env: &Envelope) -> bool {
    env.intent() == Some(Intent::Revoke)
        || env
            .meta
            .iter()
            .any(|m| m.namespace == namespaces::REVOCATION)
}

/// The repairs the parser made to a paste that change its characters: after one of these, a
/// signature cannot match the text as received, and a mismatch says nothing about the sender.
pub(crate) fn transport_repairs(parsed: &Parsed) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    if parsed.collapsed {
        out.push("its line breaks were collapsed");
    }
    for d in &parsed.diagnostics {
        let what = match d.code {
            Code::CollapsedNewlines if !parsed.collapsed => "its line breaks were collapsed",
            Code::HeaderOnBanner => "a line break after the banner was lost",
            Code::BodyIndentStripped | Code::BodyIndentPartial => {
                "the body's indentation was stripped"
            }
            Code::InvisibleChars => "invisible characters were inserted",
            _ => continue,
        };
        if !out.contains(&what) {
            out.push(what);
        }
    }
    out
}

/// Judges a signed envelope: `check` verifies it against a key; `pinned` is what the trust
/// store holds for its key id; `arriving` is true when the envelope is being received (a
/// mismatch against a trusted key then flags the key as changed) and false when stored
/// messages are judged again after the operator decided. `None` when it is not signed.
pub fn judge(
    parsed: &Parsed,
    check: impl Fn(&VerifyingKey) -> Result<(), SigError>,
    pinned: Option<&PinnedKey>,
    arriving: bool,
) -> Option<Verdict> {
    let sig = match parse_sig(parsed.envelope.sig.as_deref().unwrap_or("none")) {
        Ok(SigValue::None) => return None,
        Ok(sig) => sig,
        Err(e) => return Some(verdict(SigState::Bad, None, e.to_string())),
    };
    let pkid = key_id(&sig).map(str::to_string);
    // Text the parser did not read rules verification out whatever the key: saying that a
    // key is unknown would suggest that adding it could make the envelope verified.
    if let Some(e) = unread(parsed) {
        return Some(verdict(SigState::Bad, pkid, e.to_string()));
    }
    let Some(id) = pkid.clone() else {
        let detail = "the signature names no key id, so no key can be chosen to check it; \
                      ask the sender to sign with a key id (pkid= or a JWS kid)";
        return Some(verdict(SigState::Unknown, None, detail.into()));
    };
    if is_did_key(&id) && pinned.is_none() {
        return Some(by_did_key(parsed, &id, pkid, &check));
    }
    let Some(pin) = pinned else {
        return Some(no_key(&id, pkid));
    };
    Some(against_pin(parsed, &check, pin, &id, pkid, arriving))
}

/// A signature whose key id `id` is a did:key, with no key pinned for it: the id is the key
/// itself, so it is checked against that.
fn by_did_key(
    parsed: &Parsed,
    id: &str,
    pkid: Option<String>,
    check: &impl Fn(&VerifyingKey) -> Result<(), SigError>,
) -> Verdict {
    match parse_did_key(id) {
        Err(e) => verdict(SigState::Bad, pkid, format!("its did:key key id: {e}")),
        Ok(key) => match check(&key) {
            Ok(()) => verdict(
                SigState::Verified,
                pkid,
                "signed by the key its did:key names (the id is the key itself)".into(),
            ),
            Err(e) => verdict(SigState::Bad, pkid, explain_failure(parsed, &e)),
        },
    }
}

/// No key is pinned for `id`: unknown, with advice the operator can follow.
fn no_key(id: &str, pkid: Option<String>) -> Verdict {
    // Advice to add a key under an id the trust store refuses could not be followed (and
    // shown with placeholders for what it hides, could not even be typed).
    let advice = if is_key_id(id) {
        format!(
            "no key is known for `{id}`; add it with `crosstalk keys add {id} KEY` once you \
             have it from the sender"
        )
    } else {
        format!(
            "no key can be known for `{id}`: the trust store refuses key ids with spaces, \
             `;`, control, invisible or bidi characters; ask the sender to sign with a plain \
             key id (alice@example.com)"
        )
    };
    verdict(SigState::Unknown, pkid, advice)
}

/// A signature judged against the key pinned for `id` (and the one pending for it);
/// `arriving` as [`judge`] says.
fn against_pin(
    parsed: &Parsed,
    check: &impl Fn(&VerifyingKey) -> Result<(), SigError>,
    pin: &PinnedKey,
    id: &str,
    pkid: Option<String>,
    arriving: bool,
) -> Verdict {
    let mangled = transport_repairs(parsed);
    if pin.state == KeyState::Revoked {
        return verdict(
            SigState::Bad,
            pkid.clone(),
            format!("the key for `{id}` is revoked: its signatures no longer count"),
        );
    }
    let first = check(&pin.key);
    if first.is_ok() {
        return verdict(
            SigState::Verified,
            pkid.clone(),
            format!("signed by the key pinned for `{id}`"),
        );
    }
    if let Some(pending) = &pin.pending {
        if check(pending).is_ok() {
            return verdict(
                SigState::Changed,
                pkid.clone(),
                format!(
                    "signed by a NEW key for `{id}`, not the one pinned: the sender's key changed \
                     or someone else claims the id; confirm with the sender another way, then \
                     `crosstalk keys trust {id}`"
                ),
            );
        }
    }
    let e = first.err().unwrap_or(SigError::Mismatch);
    if !mangled.is_empty() || e != SigError::Mismatch {
        return verdict(SigState::Bad, pkid, explain_failure(parsed, &e));
    }
    match (pin.state, arriving) {
        (KeyState::Changed, _) | (KeyState::Trusted, true) => Verdict {
            flags_key: pin.state == KeyState::Trusted,
            ..verdict(
                SigState::Changed,
                pkid,
                format!(
                    "the signature does not match the key pinned for `{id}`: the text was \
                     changed after signing, or the sender's key changed; check with the sender, \
                     then `crosstalk keys trust {id}` (after `crosstalk keys add {id} KEY` for a \
                     new key)"
                ),
            )
        },
        // Judged again after the operator trusted the key: a mismatch is a bad signature.
        _ => verdict(
            SigState::Bad,
            pkid,
            format!(
                "the signature does not match the key trusted for `{id}`: the text was changed \
                 after signing"
            ),
        ),
    }
}

/// Says why a signature failed; a mismatch on a paste the parser had to repair is blamed on
/// the transport, not on the sender or a forger.
pub(crate) fn explain_failure(parsed: &Parsed, e: &SigError) -> String {
    let mangled = transport_repairs(parsed);
    if mangled.is_empty() || *e != SigError::Mismatch {
        return e.to_string();
    }
    format!(
        "the signature does not match, but the paste was damaged on the way ({}): the \
         transport mangled it, which says nothing about the sender; ask for it again as a \
         file or a code block",
        mangled.join(", ")
    )
}

fn verdict(state: SigState, pkid: Option<String>, detail: String) -> Verdict {
    Verdict {
        state,
        pkid,
        detail,
        flags_key: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::render::signable;
    use crate::protocol::signature::{SigFormat, sign_envelope, verify_parsed};
    use crate::protocol::{Options, extract, render};
    use ed25519_dalek::SigningKey;
    use proptest::prelude::*;

    fn key(seed: u8) -> VerifyingKey {
        SigningKey::from_bytes(&[seed; 32]).verifying_key()
    }

    /// An envelope signed by `seed`'s key as `alice`, in canonical form.
    fn signed(seed: u8, intent: &str) -> String {
        let text = format!(
            "[[ALICE→BOB v1]]\nuser: kalle\nsession: s1\nthread: 01KAQ4W5J8Z0000000000000T1\n\
             message: 01KAQ4W5J8Z0000000000000M1\ncontext: trust\nintent: {intent}\n\
             body: |\n  Hello from alice.\n  Second line.\nsig: none\n[[END]]\n"
        );
        let mut env = extract(&text, &Options::default()).envelopes[0]
            .envelope
            .clone();
        sign_envelope(
            &mut env,
            &SigningKey::from_bytes(&[seed; 32]),
            SigFormat::Ed25519,
            "alice",
        );
        render(&env)
    }

    fn pin(seed: u8, pending: Option<u8>, state: KeyState) -> PinnedKey {
        PinnedKey {
            key: key(seed),
            pending: pending.map(key),
            state,
        }
    }

    /// The verdict on `text`'s first envelope.
    fn verdict_of(text: &str, pinned: Option<&PinnedKey>, arriving: bool) -> Option<Verdict> {
        let ex = extract(text, &Options::default());
        let p = ex.envelopes.first()?;
        judge(
            p,
            |k| verify_parsed(p, text, k).map(|_| ()),
            pinned,
            arriving,
        )
    }

    #[test]
    fn verdicts_follow_the_pinned_key() {
        let text = signed(1, "BROADCAST");
        let state = |pinned: Option<&PinnedKey>, arriving| {
            let v = verdict_of(&text, pinned, arriving).unwrap();
            (v.state, v.flags_key)
        };
        let unknown = verdict_of(&text, None, true).unwrap();
        assert_eq!(unknown.state, SigState::Unknown);
        assert!(unknown.detail.contains("crosstalk keys add alice"));
        assert_eq!(unknown.pkid.as_deref(), Some("alice"));
        let trusted = pin(1, None, KeyState::Trusted);
        assert_eq!(state(Some(&trusted), true), (SigState::Verified, false));
        let other = pin(2, None, KeyState::Trusted);
        assert_eq!(state(Some(&other), true), (SigState::Changed, true));
        assert_eq!(state(Some(&other), false), (SigState::Bad, false));
        let moved = pin(2, Some(1), KeyState::Changed);
        assert_eq!(state(Some(&moved), true), (SigState::Changed, false));
        let revoked = pin(1, None, KeyState::Revoked);
        assert_eq!(state(Some(&revoked), true), (SigState::Bad, false));
        let unsigned = text
            .lines()
            .filter(|l| !l.starts_with("sig:"))
            .collect::<Vec<_>>();
        assert_eq!(verdict_of(&(unsigned.join("\n") + "\n"), None, true), None);
        let garbage = text
            .lines()
            .map(|l| {
                if l.starts_with("sig:") {
                    "sig: ed25519:pkid=a;sig=AAAA"
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let v = verdict_of(&garbage, Some(&trusted), true).unwrap();
        assert_eq!(v.state, SigState::Bad);
    }

    #[test]
    fn a_damaged_paste_is_blamed_on_the_transport() {
        // The indentation stripped by a chat window, and a word lost with it.
        let text = signed(1, "BROADCAST")
            .replace("  Hello from alice.", "Hello from alic.")
            .replace("  Second line.", "Second line.");
        let ex = extract(&text, &Options::default());
        assert!(!transport_repairs(&ex.envelopes[0]).is_empty());
        let trusted = pin(1, None, KeyState::Trusted);
        let v = verdict_of(&text, Some(&trusted), true).unwrap();
        assert_eq!((v.state, v.flags_key), (SigState::Bad, false));
        assert!(v.detail.contains("transport mangled it"), "{}", v.detail);
    }

    #[test]
    fn announcements_and_revocations_are_read() {
        let text = "[[A→B v1]]\nuser: k\nsession: s\nintent: REVOKE\n\nmeta: keys\n\
                    Key-ID: alice\nPublic-Key: ed25519:pk=5NCXBC/h80o6gPLqLUoxutAE4TmAn2e4tVVfp08HeKA=\n\
                    Public-Key: ed25519:pk=AAAA\nKey-ID: bob\nPublic-Key: nonsense\n\n\
                    body: |\n  x\nsig: none\n[[END]]\n";
        let env = &extract(text, &Options::default()).envelopes[0].envelope;
        let found = announcements(env);
        assert_eq!(found.len(), 3);
        assert_eq!(found[0].as_ref().unwrap().pkid, "alice");
        assert!(
            found[1]
                .as_ref()
                .unwrap_err()
                .contains("without a `Key-ID:`")
        );
        assert!(found[2].as_ref().unwrap_err().contains("`bob`"));
        // An id `crosstalk keys add` would refuse is not pinned from an announcement either.
        let spaced = text.replace("Key-ID: alice", "Key-ID: alice smith");
        let env = &extract(&spaced, &Options::default()).envelopes[0].envelope;
        let first = announcements(env).remove(0).unwrap_err();
        assert!(first.contains("no spaces or control characters"), "{first}");
        assert!(is_revocation(env));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Changing any letter or digit of the signed text to another never verifies, unless
        /// the envelope still reads exactly as signed: structural keys are read whatever their
        /// case (`bodY: |` is the body), so that spelling is not part of what is signed.
        #[test]
        fn any_changed_character_never_verifies(pick in any::<prop::sample::Index>(), with in "[a-zA-Z0-9]") {
            let text = signed(1, "BROADCAST");
            let signed_end = text.find("\nsig:").unwrap();
            let spots: Vec<usize> = text[..signed_end]
                .char_indices()
                .filter(|(_, c)| c.is_ascii_alphanumeric())
                .map(|(i, _)| i)
                .collect();
            let at = spots[pick.index(spots.len())];
            prop_assume!(text[at..at + 1] != *with);
            let changed = format!("{}{with}{}", &text[..at], &text[at + 1..]);
            let trusted = pin(1, None, KeyState::Trusted);
            let v = verdict_of(&changed, Some(&trusted), true);
            if v.is_some_and(|v| v.state == SigState::Verified) {
                let read = |t: &str| signable(&extract(t, &Options::default()).envelopes[0].envelope);
                prop_assert_eq!(read(&changed), read(&text), "{}", changed);
                prop_assert!(text[at..at + 1].eq_ignore_ascii_case(&with), "{}", changed);
            }
        }
    }
}
