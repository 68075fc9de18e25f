//! `crosstalk keys`: the trust store from the command line — list, add, trust, remove, and
//! generate a key pair with what to publish for it.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use ed25519_dalek::pkcs8::EncodePrivateKey;
use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use ed25519_dalek::{SigningKey, VerifyingKey};

use crate::cli::output::Stdout;
use crate::cli::{EXIT_INVALID, Failure, database::store_cmd, output};
use crate::protocol::did_key::{did_key, is_did_key, parse_did_key};
use crate::protocol::keys::{parse_public_key, public_key_txt};
use crate::sanitize::sanitize_line;
use crate::store::{Added, KeySource};

/// What to do with the trust store.
#[derive(Debug, Subcommand)]
pub(crate) enum KeysCmd {
    /// List the keys: id, state, source, key, when first and last seen.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Trust KEY for key id ID (replacing any key it had); its messages are checked again.
    Add {
        /// The key id signatures name (`pkid=`, or a JWS `kid`).
        id: String,
        /// A PEM file or its text, `ed25519:pk=<base64>`, or `did:key:z6Mk…` [default: the
        /// key ID names, when ID is a did:key].
        key: Option<String>,
    },
    /// Accept the key id's key after a change (the new key replaces the pinned one).
    Trust {
        /// The key id.
        id: String,
    },
    /// Forget the key id's key: its messages read "unknown key" again.
    Remove {
        /// The key id.
        id: String,
    },
    /// Make a new Ed25519 key pair for ID: the private key goes to a PEM file (0600), the
    /// public key into the trust store, and the DNS TXT record and announcement are printed.
    Generate {
        /// The key id to sign with.
        id: String,
        /// Where to write the private key [default: ID.pem in the current folder]; an
        /// existing file is never overwritten.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure {
        code: EXIT_INVALID,
        message: message.into(),
    }
}

/// Runs a `keys` subcommand.
pub(crate) fn keys(db: Option<&Path>, cmd: KeysCmd) -> Result<u8, Failure> {
    match cmd {
        KeysCmd::List { json } => list(db, json),
        KeysCmd::Add { id, key } => add(db, &id, key.as_deref()),
        KeysCmd::Trust { id } => trust(db, &id),
        KeysCmd::Remove { id } => remove(db, &id),
        KeysCmd::Generate { id, output } => generate(db, &id, output.as_deref()),
    }
}

fn check_id(id: &str) -> Result<(), Failure> {
    if !crate::protocol::trust::is_key_id(id) {
        return Err(invalid(format!(
            "`{}` is not a key id: give the id signatures name, without spaces, `;`, control, \
             invisible or bidi characters (e.g. alice@example.com)",
            sanitize_line(id)
        )));
    }
    Ok(())
}

fn list(db: Option<&Path>, json: bool) -> Result<u8, Failure> {
    let store = store_cmd::open_existing(db)?;
    let keys = store.keys().map_err(|e| Failure::usage(e.to_string()))?;
    let mut out = Stdout::new();
    if json {
        // Each key as the store gives it, with what makes its id a look-alike (or null).
        let mut rows = serde_json::to_value(&keys).map_err(|e| Failure::usage(e.to_string()))?;
        if let Some(rows) = rows.as_array_mut() {
            for (row, k) in rows.iter_mut().zip(&keys) {
                row["look_alike"] = crate::sanitize::scripts::look_alike(&k.pkid).into();
            }
        }
        output::print_json(&mut out, &rows)?;
        out.finish()?;
        return Ok(0);
    }
    if keys.is_empty() {
        let _ = writeln!(
            out,
            "no keys yet; add one with `crosstalk keys add ID KEY` or `crosstalk keys generate ID`"
        );
    }
    for k in &keys {
        let _ = writeln!(
            out,
            "{}  {}  {}  {}  first seen {}  {} signed message(s)",
            crate::sanitize::marked_id(&k.pkid),
            k.state.as_str(),
            k.source.as_str(),
            k.public_key,
            k.first_seen,
            k.messages
        );
        if let Some(p) = &k.pending_key {
            let _ = writeln!(
                out,
                "    a DIFFERENT key was seen for it: {p}; confirm with the sender, then \
                 `crosstalk keys trust {}`",
                sanitize_line(&k.pkid)
            );
        }
    }
    out.finish()?;
    Ok(0)
}

/// Reads the KEY argument: key text, or a file holding it.
fn read_key_arg(arg: &str) -> Result<(VerifyingKey, KeySource), Failure> {
    let from_text = |text: &str| -> Result<(VerifyingKey, KeySource), Failure> {
        let t = text.trim();
        if is_did_key(t) {
            return parse_did_key(t)
                .map(|k| (k, KeySource::DidKey))
                .map_err(|e| invalid(e.to_string()));
        }
        let source = if t.contains("-----BEGIN") {
            KeySource::Manual
        } else {
            KeySource::Dns
        };
        parse_public_key(t)
            .map(|k| (k, source))
            .map_err(|e| invalid(e.to_string()))
    };
    let t = arg.trim();
    if is_did_key(t) || t.contains("-----BEGIN") || t.to_ascii_lowercase().contains(":pk=") {
        return from_text(t);
    }
    let path = Path::new(arg);
    if !path.exists() {
        return Err(invalid(format!(
            "`{}` is neither a key nor a file; give a PEM file (or its text), \
             ed25519:pk=<base64> or did:key:z6Mk…",
            sanitize_line(arg)
        )));
    }
    // A key file is a few hundred bytes: reading at most this much, a device or a huge file
    // named by mistake is refused instead of read until memory runs out.
    const MOST: u64 = 64 << 10;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| std::io::Read::read_to_end(&mut std::io::Read::take(f, MOST + 1), &mut bytes))
        .map_err(|e| {
            Failure::usage(format!(
                "cannot read key `{}`: {e}",
                sanitize_line(&path.display().to_string())
            ))
        })?;
    if bytes.len() as u64 > MOST {
        return Err(invalid(format!(
            "`{}` is larger than any key file ({MOST} bytes at most); give a PEM file, ed25519:pk=<base64> or did:key:z6Mk…",
            sanitize_line(&path.display().to_string())
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        invalid(format!(
            "`{}` is not text; give a PEM file, ed25519:pk=<base64> or did:key:z6Mk…",
            sanitize_line(&path.display().to_string())
        ))
    })?;
    let (key, source) = from_text(&text).map_err(|f| Failure {
        message: format!("{}: {}", path.display(), f.message),
        ..f
    })?;
    Ok((
        key,
        if source == KeySource::Dns {
            KeySource::Manual
        } else {
            source
        },
    ))
}

fn add(db: Option<&Path>, id: &str, key: Option<&str>) -> Result<u8, Failure> {
    check_id(id)?;
    let own = is_did_key(id)
        .then(|| parse_did_key(id))
        .transpose()
        .map_err(|e| invalid(format!("the key id: {e}")))?;
    let (key, source) = match (key, own) {
        (Some(arg), own) => {
            let (key, source) = read_key_arg(arg)?;
            if own.is_some_and(|o| o != key) {
                return Err(invalid(
                    "this did:key names a different key than the one given; a did:key id is \
                     its own key: leave KEY out",
                ));
            }
            (key, source)
        }
        (None, Some(own)) => (own, KeySource::DidKey),
        (None, None) => {
            return Err(Failure::usage(
                "no KEY given: `crosstalk keys add ID KEY`, where KEY is a PEM file, \
                 ed25519:pk=<base64> or did:key:z6Mk…",
            ));
        }
    };
    let mut store = store_cmd::open(db)?;
    let added = store
        .add_key(id, &key, source)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let id = crate::sanitize::marked_id(id);
    let what = match added {
        Added::New => "added",
        Added::Replaced => "replaced (the old key is forgotten)",
        Added::Same => "already held this key; trusted",
    };
    out!("{id}: {what}: {}\n", public_key_txt(&key));
    Ok(0)
}

fn trust(db: Option<&Path>, id: &str) -> Result<u8, Failure> {
    let mut store = store_cmd::open_existing(db)?;
    let before = store.key(id).map_err(|e| Failure::usage(e.to_string()))?;
    let Some(before) = before else {
        return Err(no_key(id));
    };
    store
        .trust_key(id)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let key = before.pending_key.as_ref().unwrap_or(&before.public_key);
    let note = if before.pending_key.is_some() {
        "the new key replaces the pinned one"
    } else {
        "the pinned key stays"
    };
    out!(
        "{}: trusted ({note}): {key}\n",
        crate::sanitize::marked_id(id)
    );
    Ok(0)
}

fn remove(db: Option<&Path>, id: &str) -> Result<u8, Failure> {
    let mut store = store_cmd::open_existing(db)?;
    if !store
        .remove_key(id)
        .map_err(|e| Failure::usage(e.to_string()))?
    {
        return Err(no_key(id));
    }
    out!(
        "{}: removed; its messages read \"unknown key\" now\n",
        sanitize_line(id)
    );
    Ok(0)
}

fn no_key(id: &str) -> Failure {
    invalid(format!(
        "no key `{}` in the trust store; `crosstalk keys list` shows the key ids",
        sanitize_line(id)
    ))
}

fn generate(db: Option<&Path>, id: &str, output: Option<&Path>) -> Result<u8, Failure> {
    check_id(id)?;
    let mut store = store_cmd::open(db)?;
    if store
        .key(id)
        .map_err(|e| Failure::usage(e.to_string()))?
        .is_some()
    {
        return Err(invalid(format!(
            "key id `{}` already has a key in the trust store; choose another id, or \
             `crosstalk keys remove {0}` first",
            sanitize_line(id)
        )));
    }
    let mut seed = [0u8; 32];
    getrandom::getrandom(&mut seed)
        .map_err(|e| Failure::usage(format!("the system gave no random bytes for a key: {e}")))?;
    let sk = SigningKey::from_bytes(&seed);
    // PKCS#8 version 1 (RFC 8410: the private key alone): what OpenSSL and Python's
    // `cryptography` read. `SigningKey`'s own encoding appends the public key (version 2),
    // which they refuse; `sign` reads either.
    let pem = ed25519_dalek::pkcs8::KeypairBytes {
        secret_key: sk.to_bytes(),
        public_key: None,
    }
    .to_pkcs8_pem(LineEnding::LF)
    .map_err(|e| Failure::usage(format!("cannot encode the private key: {e}")))?;
    let path = output.map(Path::to_path_buf).unwrap_or_else(|| {
        let safe: String = id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.@".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        PathBuf::from(format!("{}.pem", safe.trim_start_matches('.')))
    });
    write_private(&path, pem.as_bytes())?;
    let vk = sk.verifying_key();
    store
        .add_key(id, &vk, KeySource::Manual)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let txt = public_key_txt(&vk);
    let id = sanitize_line(id);
    out!(
        "wrote the private key to {} (readable by you only); keep it secret\n\
         key id:     {id}\n\
         public key: {txt}\n\
         did:key:    {}\n\n\
         DNS TXT record to publish:\n  _crosstalk-key.<your-domain> TXT \"{txt}\"\n\n\
         announcement block, for an envelope's headers (receivers pin it on first sight):\n\
         meta: keys\nKey-ID: {id}\nPublic-Key: {txt}\n\n\
         sign with: crosstalk sign --key {} --pkid {id} --format ed25519 FILE\n",
        path.display(),
        did_key(&vk),
        path.display()
    );
    Ok(0)
}

/// Creates `path` readable and writable by its owner only, never replacing a file.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts.open(path).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::AlreadyExists {
            "it exists already and is never overwritten; name another file with -o FILE"
        } else {
            "name another file with -o FILE"
        };
        Failure::usage(format!("cannot create `{}`: {e}; {hint}", path.display()))
    })?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| Failure::usage(format!("cannot write `{}`: {e}", path.display())))
}
