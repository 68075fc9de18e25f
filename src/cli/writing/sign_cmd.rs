//! `sign` and `verify`.

use std::io::Write;
use std::path::Path;

use serde_json::json;

use crate::cli::output::Stdout;
use crate::cli::reading::parse_cmd::report;
use crate::cli::{EXIT_INVALID, Failure, input, output};
use crate::protocol::keys::{default_pkid, parse_private_key};
use crate::protocol::signature::{
    Matched, SigError, SigFormat, key_id, parse_sig, sign_envelope, verify_parsed,
};
use crate::protocol::trust::{SigState, explain_failure, judge};
use crate::protocol::{self, Options};
use crate::sanitize::sanitize_line;

/// `crosstalk sign`: signs the canonical rendering of each envelope and prints it. Envelopes
/// with errors are not signed: a signature would vouch for text that is known to be wrong.
pub(crate) fn sign(
    opts: &Options,
    file: Option<&Path>,
    key: &Path,
    pkid: Option<&str>,
    format: SigFormat,
) -> Result<u8, Failure> {
    let sk = parse_private_key(&input::read_key(key)?)
        .map_err(|e| Failure::usage(format!("{}: {e}", key.display())))?;
    if let Some(id) = pkid.filter(|id| !protocol::trust::is_key_id(id)) {
        return Err(Failure::usage(format!(
            "`{}` is not a key id: give the id the key is known by, without spaces, `;`, \
             control, invisible or bidi characters (e.g. alice@example.com)",
            sanitize_line(id)
        )));
    }
    // A JWS names a key id (`kid`) only when one is given, so that signing the rc1 payloads
    // with the rc1 key still gives the published signatures.
    let pkid = match (pkid, format) {
        (Some(id), _) => id.to_string(),
        (None, SigFormat::Jws) => String::new(),
        (None, SigFormat::Ed25519) => default_pkid(&sk.verifying_key()),
    };
    let inp = input::read(file)?;
    let ex = inp.extract(opts);
    report(&inp.name, ex.all_diagnostics());
    if ex.envelopes.is_empty() {
        return Ok(EXIT_INVALID);
    }
    let mut out = Stdout::new();
    let mut status = 0;
    let mut first = true;
    for p in &ex.envelopes {
        if p.has_errors() {
            eprintln!(
                "{}:{}: envelope not signed: fix its errors first",
                sanitize_line(&inp.name),
                p.span.start_line
            );
            status = EXIT_INVALID;
            continue;
        }
        let mut env = p.envelope.clone();
        // The signed text says `body:`, which without an intent would no longer say "reply":
        // a `response:` reply gets the RESPOND it implied, so signing keeps its meaning.
        if env.intent_raw().is_none() && p.intent() == Some(protocol::Intent::Respond) {
            env.set_header("intent", "RESPOND");
        }
        sign_envelope(&mut env, &sk, format, &pkid);
        if env.hash.is_some() {
            env.hash = Some(protocol::render::crc32_hex(
                &protocol::render::hashed_portion(&env),
            ));
        }
        if !first {
            let _ = writeln!(out);
        }
        first = false;
        let _ = out.write_all(protocol::render(&env).as_bytes());
    }
    out.finish()?;
    Ok(status)
}

/// One envelope's verification, as `verify` reports it.
struct Checked {
    valid: bool,
    /// Its JSON object (`--json`).
    json: serde_json::Value,
    /// Its line after `FILE:LINE: envelope N `.
    line: String,
}

/// Reads the input, checks each envelope with `check`, and reports: a line per envelope or a
/// JSON array. Exit 0 only when every envelope is valid (and there is at least one).
fn verify_each(
    file: Option<&Path>,
    as_json: bool,
    opts: &Options,
    mut check: impl FnMut(usize, &protocol::Parsed, &str) -> Result<Checked, Failure>,
) -> Result<u8, Failure> {
    let inp = input::read(file)?;
    let ex = inp.extract(opts);
    if ex.envelopes.is_empty() {
        report(&inp.name, ex.diagnostics.iter());
        if as_json {
            // Still a document a script can read: no envelope, none valid.
            let mut out = Stdout::new();
            output::print_json(&mut out, &Vec::<serde_json::Value>::new())?;
            out.finish()?;
        }
        return Ok(EXIT_INVALID);
    }
    let mut all_ok = true;
    let mut results = Vec::new();
    for (i, p) in ex.envelopes.iter().enumerate() {
        let mut c = check(i, p, &inp.text)?;
        all_ok &= c.valid;
        // Hops are relays' claims, not the signer's: say that the signature leaves them out.
        let hops = (p.envelope.meta.iter())
            .filter(|m| protocol::audit::is_audit(m))
            .count();
        if hops > 0 {
            c.json["audit_hops"] = serde_json::json!(hops);
            c.line.push_str(&format!(
                " ({hops} audit hop{} outside the signature)",
                if hops == 1 { "" } else { "s" }
            ));
        }
        // A key id whose letters mix scripts reads as another (`аlice` with a Cyrillic `а`):
        // the line says so, whatever the verdict.
        let pkid = (p.envelope.sig.as_deref())
            .and_then(|s| parse_sig(s).ok())
            .and_then(|s| key_id(&s).map(str::to_string));
        let look_alike = pkid
            .as_deref()
            .and_then(crate::sanitize::scripts::look_alike);
        if let Some(why) = &look_alike {
            c.line.push_str(&format!(
                " · key id `{}` ⚠ {why}",
                pkid.as_deref().unwrap_or_default()
            ));
        }
        c.json["look_alike"] = serde_json::json!(look_alike);
        if as_json {
            results.push(c.json);
        } else {
            // The line quotes the envelope (its key id): never its control characters.
            out!(
                "{}:{}: envelope {} {}\n",
                inp.name,
                p.span.start_line,
                i + 1,
                sanitize_line(&c.line)
            );
        }
    }
    if as_json {
        let mut out = Stdout::new();
        output::print_json(&mut out, &results)?;
        out.finish()?;
    }
    Ok(if all_ok { 0 } else { EXIT_INVALID })
}

/// `crosstalk verify`: exit 0 only when every envelope carries a valid signature by `key`.
pub(crate) fn verify(
    file: Option<&Path>,
    key: &Path,
    as_json: bool,
    opts: &Options,
) -> Result<u8, Failure> {
    // The DNS TXT form and a did:key are one line, given as they are; anything else names a
    // file (a PEM, or one of those forms in a file).
    let inline = key.to_str().filter(|k| {
        !key.exists() && {
            let k = k.trim().to_ascii_lowercase();
            k.starts_with("ed25519:") || k.starts_with("did:key:")
        }
    });
    let text = match inline {
        Some(k) => k.to_string(),
        None => input::read_key(key)?,
    };
    let vk = protocol::trust::read_key(&text).map_err(|e| {
        Failure::usage(format!(
            "{}: {e}",
            sanitize_line(&key.display().to_string())
        ))
    })?;
    verify_each(file, as_json, opts, |i, p, text| {
        let r = verify_parsed(p, text, &vk);
        let sig = p.envelope.sig.as_deref().map(parse_sig);
        let pkid = match &sig {
            Some(Ok(s)) => key_id(s).map(str::to_string),
            _ => None,
        };
        let by = match &pkid {
            Some(id) => format!("key id `{id}`"),
            None => "no key id".to_string(),
        };
        let (valid, detail) = match &r {
            Ok(Matched::AsReceived) => (
                true,
                format!("valid, {by} (signature matches the text as received)"),
            ),
            Ok(Matched::AfterNfc) => (
                true,
                format!(
                    "valid, {by} (signature matches the text as received after NFC normalisation)"
                ),
            ),
            Ok(Matched::Canonical) => (
                true,
                format!("valid, {by} (signature matches the canonical form)"),
            ),
            Err(e) => (false, format!("{} ({by})", explain_failure(p, e))),
        };
        // As `verify` without `--key` reports it, so one reader reads both.
        let state = match &r {
            Ok(_) => Some("verified"),
            Err(SigError::Unsigned) => None,
            Err(_) => Some("bad"),
        };
        let matched = match r {
            Ok(Matched::AsReceived) => Some("as_received"),
            Ok(Matched::AfterNfc) => Some("after_nfc"),
            Ok(Matched::Canonical) => Some("canonical"),
            Err(_) => None,
        };
        Ok(Checked {
            valid,
            json: json!({
                "index": i,
                "span": p.span,
                "valid": valid,
                "pkid": pkid,
                "matched": matched,
                "error": if valid { None } else { Some(detail.clone()) },
                "state": state,
                "detail": detail,
            }),
            line: format!("{}: {detail}", if valid { "ok" } else { "FAILED" }),
        })
    })
}

/// `crosstalk verify` without `--key`: each signature is checked against the trust store's
/// key for the key id it names (a `did:key` id carries its own key). Nothing is stored and
/// no key is marked changed: that happens when the envelope is imported.
pub(crate) fn verify_with_store(
    db: Option<&Path>,
    file: Option<&Path>,
    as_json: bool,
    opts: &Options,
) -> Result<u8, Failure> {
    let store = crate::cli::database::store_cmd::open_existing(db)?;
    verify_each(file, as_json, opts, |i, p, text| {
        let pkid = p
            .envelope
            .sig
            .as_deref()
            .and_then(|s| parse_sig(s).ok())
            .and_then(|s| key_id(&s).map(str::to_string));
        let pinned = match &pkid {
            Some(id) => store
                .pinned_key(id)
                .map_err(|e| crate::cli::Failure::usage(e.to_string()))?,
            None => None,
        };
        let check = |k: &ed25519_dalek::VerifyingKey| verify_parsed(p, text, k).map(|_| ());
        let (state, detail) = match judge(p, check, pinned.as_ref(), false) {
            Some(v) => (Some(v.state), v.detail),
            None => (None, SigError::Unsigned.to_string()),
        };
        let valid = state == Some(SigState::Verified);
        let mark = state.map_or("-", SigState::mark);
        let word = if valid { "ok" } else { "FAILED" };
        Ok(Checked {
            valid,
            line: format!("{mark} {word}: {}", sanitize_line(&detail)),
            json: json!({
                "index": i,
                "span": p.span,
                "valid": valid,
                "pkid": pkid,
                "state": state.map(SigState::as_str),
                "detail": detail,
            }),
        })
    })
}
