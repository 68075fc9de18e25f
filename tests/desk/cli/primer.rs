//! `crosstalk primer`: the primer, the contact's preamble, then a valid first envelope to
//! the contact's address from `[compose] from`; a clear error without a sender.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_crosstalk");

fn run(config: &str, args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.toml");
    std::fs::write(&cfg, config).unwrap();
    Command::new(BIN)
        .arg("--config")
        .arg(&cfg)
        .args(args)
        .env("HOME", dir.path())
        .output()
        .unwrap()
}

#[test]
fn primer_prints_preamble_primer_and_a_first_envelope() {
    let out = run(
        "[compose]\nfrom = \"human://kalle\"\nuser = \"kalle\"\n\n[[contacts]]\nname = \"Claude\"\naddress = \"claude://session/1\"\npreamble = \"Hello Claude, this is Kalle's relay.\"\n",
        &["primer", "--to", "claude", "--context", "trip planning"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("Hello Claude, this is Kalle's relay.\n\n# How to answer"),
        "{text}"
    );
    let ex = crosstalk::protocol::extract(&text, &Default::default());
    assert_eq!(ex.envelopes.len(), 2, "the example and the first envelope");
    let first = &ex.envelopes[1];
    assert!(
        first.diagnostics.iter().all(|d| !d.is_error()),
        "{:?}",
        first.diagnostics
    );
    assert_eq!(first.envelope.banner.from, "human://kalle");
    assert_eq!(first.envelope.banner.to, "claude://session/1");
    assert_eq!(first.envelope.banner.version, "v1");
    assert_eq!(first.envelope.intent_raw(), Some("REQUEST"));
    assert_eq!(first.envelope.context(), Some("trip planning"));
    assert_eq!(first.envelope.user(), Some("kalle"));
}

#[test]
fn primer_without_a_sender_says_what_to_set() {
    let out = run("", &["primer", "--to", "claude"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[compose]"), "{err}");
}
