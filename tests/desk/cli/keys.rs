//! `crosstalk keys` and store-backed `crosstalk verify` as scripts use them: generate a key
//! (0600 file, TXT record, announcement), add keys in every form, trust after a change,
//! remove, list as JSON, and the exit codes and messages of bad input.

use crate::helpers::common;

use std::path::Path;

use common::run;
use crosstalk::protocol::did_key::did_key;
use crosstalk::protocol::keys::public_key_txt;
use ed25519_dalek::SigningKey;
use ed25519_dalek::pkcs8::EncodePrivateKey;
use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use serde_json::Value;

const UNSIGNED: &str = "[[ALICE→BOB v1]]\nuser: kalle\nsession: s1\n\
    thread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K\nmessage: 01J9J3DBC4N7P2Q3R5S7T9V1V2\ncontext: keys\n\
    intent: BROADCAST\nbody: |\n  Hello.\nsig: none\n[[END]]\n";

fn db(dir: &Path) -> String {
    dir.join("k.db").display().to_string()
}

fn list(db: &str) -> Vec<Value> {
    let r = run(&["--db", db, "keys", "list", "--json"], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str::<Value>(&r.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn generate_writes_a_private_file_and_prints_what_to_publish() {
    let dir = tempfile::tempdir().unwrap();
    let db = db(dir.path());
    let pem = dir.path().join("alice.pem");
    let pem_s = pem.display().to_string();
    let r = run(
        &[
            "--db",
            &db,
            "keys",
            "generate",
            "alice@example.com",
            "-o",
            &pem_s,
        ],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("_crosstalk-key.<your-domain> TXT \"ed25519:pk="),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("meta: keys\nKey-ID: alice@example.com\nPublic-Key: ed25519:pk=")
    );
    assert!(r.stdout.contains("did:key:z6Mk"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&pem).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // PKCS#8 version 1 (the private key alone), which OpenSSL and Python read.
    let written = std::fs::read_to_string(&pem).unwrap();
    let pair = <ed25519_dalek::pkcs8::KeypairBytes as ed25519_dalek::pkcs8::DecodePrivateKey>::from_pkcs8_pem(&written)
        .unwrap();
    assert!(
        pair.public_key.is_none(),
        "version 1, without the public key"
    );
    let keys = list(&db);
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0]["pkid"], "alice@example.com");
    assert_eq!(keys[0]["state"], "trusted");
    // Never overwritten, and the id is taken now.
    let again = run(&["--db", &db, "keys", "generate", "bob", "-o", &pem_s], "");
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(
        again.stderr.contains("never overwritten"),
        "{}",
        again.stderr
    );
    let taken = run(
        &[
            "--db",
            &db,
            "keys",
            "generate",
            "alice@example.com",
            "-o",
            "x.pem",
        ],
        "",
    );
    assert_eq!(taken.code, 1);
    assert!(
        taken.stderr.contains("already has a key"),
        "{}",
        taken.stderr
    );

    // Sign with it; verify from the store without --key.
    let file = dir.path().join("m.txt");
    std::fs::write(&file, UNSIGNED).unwrap();
    let f = file.display().to_string();
    let signed = run(
        &[
            "sign",
            "--key",
            &pem_s,
            "--pkid",
            "alice@example.com",
            "--format",
            "ed25519",
            &f,
        ],
        "",
    );
    assert_eq!(signed.code, 0, "{}", signed.stderr);
    let sfile = dir.path().join("s.txt");
    std::fs::write(&sfile, &signed.stdout).unwrap();
    let s = sfile.display().to_string();
    let ok = run(&["--db", &db, "verify", &s], "");
    assert_eq!(ok.code, 0, "{}{}", ok.stdout, ok.stderr);
    assert!(ok.stdout.contains("✓ ok"), "{}", ok.stdout);
    let tampered = dir.path().join("t.txt");
    std::fs::write(&tampered, signed.stdout.replace("Hello.", "Hullo.")).unwrap();
    let bad = run(
        &["--db", &db, "verify", &tampered.display().to_string()],
        "",
    );
    assert_eq!(bad.code, 1);
    assert!(bad.stdout.contains("FAILED"), "{}", bad.stdout);
    // Removing the key makes it unknown.
    let rm = run(&["--db", &db, "keys", "remove", "alice@example.com"], "");
    assert_eq!(rm.code, 0, "{}", rm.stderr);
    let unknown = run(&["--db", &db, "verify", "--json", &s], "");
    assert_eq!(unknown.code, 1);
    let v: Value = serde_json::from_str(&unknown.stdout).unwrap();
    assert_eq!(v[0]["state"], "unknown");
}

#[test]
fn add_reads_every_key_form_and_says_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let db = db(dir.path());
    let sk = SigningKey::from_bytes(&[5; 32]);
    let vk = sk.verifying_key();
    let txt = public_key_txt(&vk);
    let r = run(&["--db", &db, "keys", "add", "bob", &txt], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(list(&db)[0]["source"], "dns");
    let did = did_key(&vk);
    let r = run(&["--db", &db, "keys", "add", &did], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run(&["--db", &db, "keys", "add", "carol", &did], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sources: Vec<Value> = list(&db).iter().map(|k| k["source"].clone()).collect();
    assert_eq!(sources, ["dns", "did_key", "did_key"]);

    // A private key is refused, and so is garbage.
    let private = dir.path().join("p.pem");
    std::fs::write(
        &private,
        sk.to_pkcs8_pem(LineEnding::LF).unwrap().as_bytes(),
    )
    .unwrap();
    let r = run(
        &[
            "--db",
            &db,
            "keys",
            "add",
            "dave",
            &private.display().to_string(),
        ],
        "",
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("private key"), "{}", r.stderr);
    let r = run(
        &["--db", &db, "keys", "add", "dave", "no-such-key\u{1b}[31m"],
        "",
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("neither a key nor a file"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains('\u{1b}'),
        "escape printed: {:?}",
        r.stderr
    );
    let r = run(&["--db", &db, "keys", "add", "dave"], "");
    assert_eq!(r.code, 2);
    let r = run(&["--db", &db, "keys", "add", "bad id", &txt], "");
    assert_eq!(r.code, 1);
    let other = did_key(&SigningKey::from_bytes(&[6; 32]).verifying_key());
    let r = run(&["--db", &db, "keys", "add", &other, &txt], "");
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("different key"), "{}", r.stderr);
    let r = run(&["--db", &db, "keys", "trust", "nobody"], "");
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("keys list"), "{}", r.stderr);
    let r = run(&["--db", &db, "keys", "list"], "");
    assert!(
        r.stdout.contains("bob  trusted  dns  ed25519:pk="),
        "{}",
        r.stdout
    );
}

/// An envelope announcing `seed`'s key for `alice`, signed with it.
fn announced(seed: u8, message: &str) -> String {
    use crosstalk::protocol::signature::{SigFormat, sign_envelope};
    use crosstalk::protocol::{Options, extract, render};
    let sk = SigningKey::from_bytes(&[seed; 32]);
    let text = format!(
        "[[ALICE→BOB v1]]\nuser: kalle\nsession: s1\nthread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K\n\
         message: {message}\ncontext: keys\nintent: BROADCAST\n\nmeta: keys\nKey-ID: alice\n\
         Public-Key: {}\n\nbody: |\n  Hello.\nsig: none\n[[END]]\n",
        public_key_txt(&sk.verifying_key())
    );
    let mut env = extract(&text, &Options::default()).envelopes[0]
        .envelope
        .clone();
    sign_envelope(&mut env, &sk, SigFormat::Ed25519, "alice");
    render(&env)
}

#[test]
fn import_pins_then_a_different_key_waits_for_trust() {
    let dir = tempfile::tempdir().unwrap();
    let db = db(dir.path());
    let first = dir.path().join("1.txt");
    std::fs::write(&first, announced(1, "01J9J3DBC4N7P2Q3R5S7T9V1V2")).unwrap();
    let r = run(&["--db", &db, "import", &first.display().to_string()], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(list(&db)[0]["source"], "announcement");
    let second = dir.path().join("2.txt");
    std::fs::write(&second, announced(2, "01J9J3DBC4N7P2Q3R5S7T9V1V3")).unwrap();
    let r = run(&["--db", &db, "import", &second.display().to_string()], "");
    assert!(
        r.stdout.contains("key-changed") || r.stderr.contains("key-changed"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    let k = &list(&db)[0];
    assert_eq!(k["state"], "changed");
    assert!(
        k["pending_key"]
            .as_str()
            .unwrap()
            .starts_with("ed25519:pk=")
    );
    let r = run(&["--db", &db, "keys", "list"], "");
    assert!(
        r.stdout.contains("a DIFFERENT key was seen"),
        "{}",
        r.stdout
    );
    // The file signed by the new key does not verify against the store until trusted.
    let s = second.display().to_string();
    let r = run(&["--db", &db, "verify", &s], "");
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("⚠ FAILED"), "{}", r.stdout);
    let r = run(&["--db", &db, "keys", "trust", "alice"], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("the new key replaces the pinned one"),
        "{}",
        r.stdout
    );
    let r = run(&["--db", &db, "verify", &s], "");
    assert_eq!(r.code, 0, "{}", r.stdout);
}

#[test]
fn verify_with_a_key_blames_the_transport_for_a_damaged_paste() {
    let dir = tempfile::tempdir().unwrap();
    let sk = SigningKey::from_bytes(&[1; 32]);
    let text = announced(1, "01J9J3DBC4N7P2Q3R5S7T9V1V2").replace("  Hello.", "Hullo.");
    let file = dir.path().join("m.txt");
    std::fs::write(&file, text).unwrap();
    let key = dir.path().join("k.txt");
    std::fs::write(&key, public_key_txt(&sk.verifying_key())).unwrap();
    let r = run(
        &[
            "verify",
            "--key",
            &key.display().to_string(),
            &file.display().to_string(),
        ],
        "",
    );
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("transport mangled it"), "{}", r.stdout);
}

/// A signed v1.0 envelope gets ids on receipt, which its signature does not cover: the
/// export carries it as signed, so it verifies, and restoring the export into a fresh
/// database that trusts the key raises no alarm. `fmt` keeps it as written too, and says so.
#[test]
fn a_signed_envelope_given_ids_on_receipt_goes_out_as_signed() {
    use crosstalk::protocol::signature::{SigFormat, sign_envelope};
    use crosstalk::protocol::{Options, extract, render};
    let dir = tempfile::tempdir().unwrap();
    let sk = SigningKey::from_bytes(&[3; 32]);
    let plain = "[[ALICE→DESK v1]]\nuser: alice\nsession: 2025-10-09T17Z b447a4\n\
        context: signed-v10\nintent: REQUEST\nbody: |\n  Please keep this signed.\nsig: none\n[[END]]\n";
    let mut env = extract(plain, &Options::default()).envelopes[0]
        .envelope
        .clone();
    sign_envelope(&mut env, &sk, SigFormat::Ed25519, "alice@example.com");
    let signed = dir.path().join("signed.txt");
    std::fs::write(&signed, render(&env)).unwrap();
    let txt = public_key_txt(&sk.verifying_key());
    let (a, b) = (
        dir.path().join("a.db").display().to_string(),
        dir.path().join("b.db").display().to_string(),
    );
    for db in [&a, &b] {
        let r = run(&["--db", db, "keys", "add", "alice@example.com", &txt], "");
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let r = run(&["--db", &a, "import", &signed.display().to_string()], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run(&["--db", &a, "export", "--all"], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("message:"), "{}", r.stdout);
    let backup = dir.path().join("backup.crosstalk");
    std::fs::write(&backup, &r.stdout).unwrap();
    let backup = backup.display().to_string();
    let r = run(&["--db", &a, "verify", &backup], "");
    assert_eq!(r.code, 0, "{}", r.stdout);
    let r = run(&["--db", &b, "import", &backup], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("key-changed"), "{}", r.stderr);
    assert_eq!(list(&b)[0]["state"], "trusted");
    // `fmt --fill-ids` would break the signature: the text stays as signed, with a note.
    let r = run(&["fmt", "--fill-ids", &signed.display().to_string()], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("message:"), "{}", r.stdout);
    assert!(
        r.stderr.contains("note: written as received"),
        "{}",
        r.stderr
    );
    let key = dir.path().join("k.txt");
    std::fs::write(&key, &txt).unwrap();
    let r = run(
        &["verify", "--key", &key.display().to_string(), "-"],
        &r.stdout,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// A REVOKE that announces a new key for its key id and is signed by it: the new key was
/// not trusted before the REVOKE arrived, so accepting the key afterwards (`keys trust`)
/// does not make the REVOKE count.
#[test]
fn a_revoke_signed_by_the_key_it_announces_never_counts() {
    use crosstalk::protocol::signature::{SigFormat, sign_envelope};
    use crosstalk::protocol::{Options, extract, render};
    let dir = tempfile::tempdir().unwrap();
    let db = db(dir.path());
    let old = SigningKey::from_bytes(&[4; 32]);
    let new = SigningKey::from_bytes(&[5; 32]);
    let r = run(
        &[
            "--db",
            &db,
            "keys",
            "add",
            "alice",
            &public_key_txt(&old.verifying_key()),
        ],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let grant = "[[ALICE→BOB v1]]\nuser: alice\nsession: s1\nthread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K\n\
        message: 01J9J3DBC4N7P2Q3R5S7T9V1V2\ncontext: c\nintent: REQUEST\n\nmeta: privacy\n\
        Consent: explicit_yes\nConsent-ID: c-1\n\nbody: |\n  data\nsig: none\n[[END]]\n";
    assert_eq!(run(&["--db", &db, "import", "-"], grant).code, 0);
    let revoke = format!(
        "[[ALICE→BOB v1]]\nuser: alice\nsession: s1\nthread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K\n\
         parent: 01J9J3DBC4N7P2Q3R5S7T9V1V2\nmessage: 01J9J3DBC4N7P2Q3R5S7T9V1V3\ncontext: c\n\
         intent: REVOKE\n\nmeta: keys\nKey-ID: alice\nPublic-Key: {}\n\nmeta: revocation\n\
         Type: consent\nConsent-ID: c-1\nEffective: immediate\n\nbody: |\n  withdrawn\n\
         sig: none\n[[END]]\n",
        public_key_txt(&new.verifying_key())
    );
    let mut env = extract(&revoke, &Options::default()).envelopes[0]
        .envelope
        .clone();
    sign_envelope(&mut env, &new, SigFormat::Ed25519, "alice");
    let r = run(&["--db", &db, "import", "-"], &render(&env));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = run(&["--db", &db, "keys", "trust", "alice"], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run(&["--db", &db, "consent", "--json"], "");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["consents"][0]["state"], "granted", "{v}");
}

/// A key named by a file that is no key file (a device that never ends, a large file) is
/// refused after a few kilobytes instead of read until memory runs out.
#[test]
fn a_key_file_larger_than_any_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = db(dir.path());
    let r = run(&["--db", &db, "keys", "add", "someone", "/dev/zero"], "");
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("larger than any key file"),
        "{}",
        r.stderr
    );
}

/// `sign --pkid` writes only ids a key can be trusted under, a JWS names its key id so the
/// trust store finds the key, and `verify --key` takes the TXT form as it is and never prints
/// a key id's escape sequences.
#[test]
fn sign_names_its_key_and_verify_shows_a_hostile_key_id_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let db = db(dir.path());
    let sk = SigningKey::from_bytes(&[9; 32]);
    let pem = dir.path().join("alice.pem");
    std::fs::write(&pem, sk.to_pkcs8_pem(LineEnding::LF).unwrap().as_bytes()).unwrap();
    let pem_s = pem.display().to_string();
    for bad in ["", "two words", "a;sig=x", "al\u{1b}[2Jice"] {
        let r = run(&["sign", "--key", &pem_s, "--pkid", bad, "-"], UNSIGNED);
        assert_eq!(r.code, 2, "{bad:?}: {}", r.stderr);
        assert!(
            r.stdout.is_empty() && !r.stderr.contains('\u{1b}'),
            "{}",
            r.stderr
        );
    }

    let txt = public_key_txt(&sk.verifying_key());
    let r = run(&["--db", &db, "keys", "add", "alice", &txt], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let signed = run(&["sign", "--key", &pem_s, "--pkid", "alice", "-"], UNSIGNED);
    assert_eq!(signed.code, 0, "{}", signed.stderr);
    let r = run(&["--db", &db, "verify", "-"], &signed.stdout);
    assert_eq!(r.code, 0, "a JWS found its key by its kid: {}", r.stdout);

    // The TXT form given as it is; a key id carrying escape sequences shown as placeholders.
    let hostile = run(
        &["sign", "--key", &pem_s, "--format", "ed25519", "-"],
        UNSIGNED,
    )
    .stdout
    .replace("pkid=key-", "pkid=\u{1b}[2J\u{1b}[31m\u{7}key-");
    let r = run(&["verify", "--key", &txt, "-"], &hostile);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert!(r.stdout.contains("valid, key id"), "{}", r.stdout);
    assert!(
        !r.stdout.contains('\u{1b}') && !r.stdout.contains('\u{7}'),
        "{:?}",
        r.stdout
    );
    // Against the trust store: no advice to add a key under an id `keys add` refuses (it
    // could not work); the verdict says why no key can be known for it. A key id hiding a
    // bidi control or an invisible character is refused as well.
    for bad in [
        "\u{1b}[2J\u{1b}[31m\u{7}key-",
        "al\u{202e}ecila-",
        "bob\u{200b}-",
    ] {
        let r = run(&["sign", "--key", &pem_s, "--pkid", bad, "-"], UNSIGNED);
        assert_eq!(r.code, 2, "{bad:?}: {}", r.stderr);
        let r = run(&["--db", &db, "keys", "add", bad, &txt], "");
        assert_ne!(r.code, 0, "{bad:?}: {}", r.stderr);
        if bad.contains('\u{200b}') {
            // A reader drops invisible characters from the `sig:` line: the id read is plain.
            continue;
        }
        let text = hostile.replace("\u{1b}[2J\u{1b}[31m\u{7}key-", bad);
        let r = run(&["--db", &db, "verify", "-"], &text);
        assert_eq!(r.code, 1, "{} {}", r.stdout, r.stderr);
        assert!(!r.stdout.contains("keys add"), "{bad:?}: {}", r.stdout);
        assert!(
            r.stdout.contains("trust store refuses"),
            "{bad:?}: {}",
            r.stdout
        );
    }
}

/// A key id in Cyrillic look-alikes is another id than the Latin one (its exact text), and
/// every place that shows it marks it: `verify` (against the store and with `--key`), `keys
/// list` and its JSON, `check` and `show`.
#[test]
fn a_key_id_in_look_alike_letters_is_marked_wherever_it_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let db = db(dir.path());
    let sk = SigningKey::from_bytes(&[7; 32]);
    let pem = dir.path().join("mallory.pem");
    std::fs::write(&pem, sk.to_pkcs8_pem(LineEnding::LF).unwrap().as_bytes()).unwrap();
    let pem_s = pem.display().to_string();
    let txt = public_key_txt(&sk.verifying_key());
    let look_alike = "\u{430}lice@example.com";
    let mark = "⚠ mixes Cyrillic and Latin letters";
    let signed = run(
        &[
            "sign", "--key", &pem_s, "--pkid", look_alike, "--format", "ed25519", "-",
        ],
        UNSIGNED,
    );
    assert_eq!(signed.code, 0, "{}", signed.stderr);

    // Checked with the key given: the line names the id and marks it.
    let r = run(&["verify", "--key", &txt, "-"], &signed.stdout);
    assert!(
        r.stdout.contains(&format!("key id `{look_alike}` {mark}")),
        "{}",
        r.stdout
    );
    let r = run(&["--db", &db, "keys", "add", look_alike, &txt], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(mark), "{}", r.stdout);
    // The Latin id is another one: nothing is known for it.
    let r = run(&["--db", &db, "keys", "trust", "alice@example.com"], "");
    assert_ne!(r.code, 0, "{}", r.stdout);

    let r = run(&["--db", &db, "verify", "-"], &signed.stdout);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.contains(mark),
        "verified, and still marked: {}",
        r.stdout
    );
    let r = run(&["--db", &db, "verify", "--json", "-"], &signed.stdout);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v[0]["look_alike"], "mixes Cyrillic and Latin letters");

    let r = run(&["--db", &db, "keys", "list"], "");
    assert!(
        r.stdout.contains(&format!("{look_alike} {mark}")),
        "{}",
        r.stdout
    );
    assert_eq!(
        list(&db)[0]["look_alike"],
        "mixes Cyrillic and Latin letters"
    );

    // `check` reports it as a finding of the envelope; a plain id is not marked.
    let r = run(&["check", "-"], &signed.stdout);
    assert!(
        r.stdout.contains("[mixed-script]") || r.stderr.contains("[mixed-script]"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    let plain = run(
        &[
            "sign",
            "--key",
            &pem_s,
            "--pkid",
            "alice@example.com",
            "--format",
            "ed25519",
            "-",
        ],
        UNSIGNED,
    );
    let r = run(&["verify", "--key", &txt, "-"], &plain.stdout);
    assert!(!r.stdout.contains('⚠'), "{}", r.stdout);
    let r = run(&["check", "-"], &plain.stdout);
    assert!(!format!("{}{}", r.stdout, r.stderr).contains("mixed-script"));

    // A banner name in look-alike letters is marked where `show` names it.
    let spoofed = UNSIGNED.replace("[[ALICE→BOB", "[[\u{410}LICE→BOB");
    let r = run(&["--db", &db, "import", "-"], &spoofed);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = run(&["--db", &db, "show", "01J9J3D3M6A4M3WQX8G1ZQ0S7K"], "");
    assert!(
        r.stdout.contains(&format!("\u{410}LICE {mark}")),
        "{}",
        r.stdout
    );
}
