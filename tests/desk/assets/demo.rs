//! The demo threads in `assets/demo/` (what `crosstalk --demo` opens) stay what they claim to
//! be: every file imports into a fresh database, in name order, with nothing rejected, and the
//! threads show what the README says they show: a branching v1.1 tree, a v1.0 session, a POLL
//! with its answers, an ERROR reply, signed envelopes that verify with the committed public
//! key, and a thread whose last message is a REQUEST still waiting for its answer.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use crosstalk::protocol::keys::parse_public_key;
use crosstalk::protocol::signature::verify_parsed;
use crosstalk::protocol::{Code, Options, extract};
use crosstalk::store::{Outcome, Store, StoredMessage, ThreadView};

const ERROR_CODES: [&str; 8] = [
    "E-ROUTE",
    "E-CONSENT",
    "E-FORMAT",
    "E-TOO-LARGE",
    "E-PERM",
    "E-UNSUPPORTED",
    "E-TIMEOUT",
    "E-RATE",
];

fn demo_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/demo")
}

/// Every `*.crosstalk` file of the demo folder, in name order (the order `--demo` imports
/// them), with its contents.
fn demo_files() -> Vec<(String, String)> {
    let mut names: Vec<String> = std::fs::read_dir(demo_dir())
        .expect("assets/demo")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".crosstalk"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(demo_dir().join(&n)).expect("read demo file");
            (n, text)
        })
        .collect()
}

/// A fresh database with every demo file imported; fails on any rejected envelope.
fn demo_store() -> Store {
    let mut store = Store::open_in_memory().expect("store");
    for (name, text) in demo_files() {
        let report = store
            .import_text(&name, &text, &Options::default())
            .expect("import");
        assert!(!report.items.is_empty(), "{name}: no envelope found");
        for item in &report.items {
            assert_eq!(
                item.outcome,
                Outcome::Imported,
                "{name}, lines {}-{}: {:?}",
                item.span.start_line,
                item.span.end_line,
                item.diagnostics
            );
        }
        assert!(
            report.diagnostics.iter().all(|d| !d.is_error()),
            "{name}: {:?}",
            report.diagnostics
        );
    }
    store
}

fn all_threads(store: &Store) -> Vec<ThreadView> {
    store
        .threads(100)
        .expect("threads")
        .iter()
        .map(|t| store.thread(&t.id).expect("thread").expect("thread exists"))
        .collect()
}

/// The replies to each message of a thread, by parent id.
fn children(view: &ThreadView) -> HashMap<&str, Vec<&StoredMessage>> {
    let mut map: HashMap<&str, Vec<&StoredMessage>> = HashMap::new();
    for m in &view.messages {
        if let Some(p) = &m.parent {
            map.entry(p.as_str()).or_default().push(m);
        }
    }
    map
}

fn intent(m: &StoredMessage) -> &str {
    m.intent.as_deref().unwrap_or("")
}

#[test]
fn demo_files_exist_and_have_no_errors() {
    let files = demo_files();
    assert!(files.len() >= 6, "expected at least 6 demo files");
    for (name, text) in &files {
        let ex = extract(text, &Options::default());
        assert!(!ex.envelopes.is_empty(), "{name}");
        assert_eq!(ex.error_count(), 0, "{name}");
        // The only warnings are the deliberate legacy intents of the v1.0 conversation
        // (README.md explains them).
        for d in ex.all_diagnostics() {
            assert_eq!(d.code, Code::LegacyIntent, "{name}: unexpected {d:?}");
        }
    }
}

#[test]
fn readme_lists_every_demo_file_and_no_private_key_is_shipped() {
    let readme = std::fs::read_to_string(demo_dir().join("README.md")).expect("README.md");
    for (name, _) in demo_files() {
        assert!(readme.contains(&name), "README.md does not mention {name}");
    }
    for entry in std::fs::read_dir(demo_dir()).expect("assets/demo") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            !text.contains("PRIVATE KEY"),
            "{} holds a private key",
            path.display()
        );
    }
}

#[test]
fn demo_imports_into_the_intended_threads() {
    let store = demo_store();
    let threads = all_threads(&store);
    assert!(threads.len() >= 5, "only {} threads", threads.len());
    let total: usize = threads.iter().map(|t| t.messages.len()).sum();
    let envelopes: usize = demo_files()
        .iter()
        .map(|(_, t)| extract(t, &Options::default()).envelopes.len())
        .sum();
    assert_eq!(total, envelopes, "every envelope is in some thread");

    // A real tree: a v1.1 thread of 5-8 messages in which some message has two replies.
    assert!(
        threads.iter().any(|t| {
            let kids = children(t);
            (5..=8).contains(&t.messages.len())
                && t.messages.iter().any(|m| !m.envelope.meta.is_empty())
                && kids.values().any(|c| c.len() >= 2)
                && t.messages.iter().any(|m| m.depth >= 3)
        }),
        "no branching v1.1 thread"
    );

    // A POLL with at least three RESPOND answers hanging under it.
    let poll_answers = threads
        .iter()
        .flat_map(|t| {
            let kids = children(t);
            t.messages
                .iter()
                .filter(|m| intent(m) == "POLL")
                .map(|m| {
                    kids.get(m.id.as_str())
                        .map_or(0, |c| c.iter().filter(|r| intent(r) == "RESPOND").count())
                })
                .collect::<Vec<_>>()
        })
        .max()
        .unwrap_or(0);
    assert!(
        poll_answers >= 3,
        "the POLL has {poll_answers} RESPOND answers"
    );

    // An ERROR reply with a taxonomy code in its `meta: error` block, answering a message
    // that is in the same thread.
    let errors: Vec<(&ThreadView, &StoredMessage)> = threads
        .iter()
        .flat_map(|t| t.messages.iter().map(move |m| (t, m)))
        .filter(|(_, m)| intent(m) == "ERROR")
        .collect();
    assert!(!errors.is_empty(), "no ERROR message");
    for (t, m) in &errors {
        let block = m.envelope.meta_block("error").expect("meta: error");
        let code = block.get("Code").expect("Code");
        assert!(ERROR_CODES.contains(&code), "unknown code {code}");
        assert!(block.get("Reason").is_some(), "no Reason");
        let parent = m.parent.as_deref().expect("ERROR names its parent");
        assert!(
            t.messages.iter().any(|p| p.id == parent),
            "the ERROR's parent is not in its thread"
        );
    }
    assert!(
        errors.iter().any(
            |(_, m)| m.envelope.meta_block("error").and_then(|b| b.get("Code"))
                == Some("E-TOO-LARGE")
        ),
        "no E-TOO-LARGE reply"
    );

    // A v1.0 conversation threaded by its session: ids assigned on receipt, replies chained
    // to the latest message, the `response:` reply read as RESPOND.
    let v10 = threads
        .iter()
        .find(|t| {
            t.messages
                .iter()
                .any(|m| m.envelope.banner.from == "BROTHER")
        })
        .expect("the v1.0 conversation");
    assert!(v10.messages.len() >= 3);
    let sessions: BTreeSet<_> = v10
        .messages
        .iter()
        .map(|m| m.envelope.session().unwrap_or(""))
        .collect();
    assert_eq!(sessions.len(), 1, "one session");
    for pair in v10.messages.windows(2) {
        assert_eq!(pair[1].parent.as_deref(), Some(pair[0].id.as_str()));
    }
    assert!(v10.messages.iter().any(|m| intent(m) == "RESPOND"));

    // A thread whose newest message is a REQUEST nobody has answered yet.
    assert!(
        threads.iter().any(|t| {
            let newest = t.messages.iter().max_by(|a, b| a.id.cmp(&b.id)).unwrap();
            intent(newest) == "REQUEST" && !children(t).contains_key(newest.id.as_str())
        }),
        "no thread waits for a reply"
    );
}

#[test]
fn demo_has_both_versions_and_rich_bodies() {
    let parsed: Vec<_> = demo_files()
        .into_iter()
        .flat_map(|(name, text)| {
            extract(&text, &Options::default())
                .envelopes
                .into_iter()
                .map(move |p| (name.clone(), p))
        })
        .collect();
    // v1.0: no ids, no META; among them a `response:` reply.
    assert!(parsed.iter().any(|(_, p)| !p.envelope.is_v11()));
    assert!(
        parsed
            .iter()
            .any(|(_, p)| p.reply_form && !p.envelope.is_v11())
    );
    // v1.1: ids and META blocks, routing and privacy among them.
    assert!(parsed.iter().any(|(_, p)| p.envelope.thread().is_some()
        && p.envelope.parent().is_some()
        && p.envelope.message().is_some()));
    for ns in [
        "routing",
        "privacy",
        "attachments",
        "poll",
        "audit",
        "revocation",
    ] {
        assert!(
            parsed
                .iter()
                .any(|(_, p)| p.envelope.meta_block(ns).is_some()),
            "no `meta: {ns}` block"
        );
    }
    let intents: BTreeSet<String> = parsed
        .iter()
        .filter_map(|(_, p)| p.intent().map(|i| i.as_str().to_string()))
        .collect();
    for i in [
        "REQUEST",
        "RESPOND",
        "POLL",
        "ERROR",
        "ACK",
        "CLOSE",
        "ESCALATE",
        "BROADCAST",
        "REVOKE",
    ] {
        assert!(intents.contains(i), "no {i} envelope");
    }
    // A body long enough to wrap, and one in non-Latin script with emoji.
    assert!(
        parsed.iter().any(|(_, p)| p
            .envelope
            .body
            .as_deref()
            .unwrap_or("")
            .lines()
            .any(|l| l.chars().count() > 120)),
        "no long body line"
    );
    assert!(
        parsed.iter().any(|(_, p)| {
            let body = p.envelope.body.as_deref().unwrap_or("");
            body.chars().any(|c| ('\u{3040}'..='\u{9fff}').contains(&c))
                && body.chars().any(|c| c >= '\u{1F300}')
        }),
        "no body with CJK text and emoji"
    );
}

#[test]
fn signed_demo_envelopes_verify_with_the_committed_public_key() {
    let pem = std::fs::read_to_string(demo_dir().join("demo-key.pub.pem")).expect("public key");
    let key = parse_public_key(&pem).expect("an Ed25519 public key");
    let mut forms = BTreeSet::new();
    for (name, text) in demo_files() {
        for p in extract(&text, &Options::default()).envelopes {
            let sig = p.envelope.sig.clone().unwrap_or_default();
            if sig.is_empty() || sig.eq_ignore_ascii_case("none") {
                continue;
            }
            forms.insert(if sig.starts_with("ed25519:") {
                "ed25519"
            } else {
                "jws"
            });
            assert!(
                verify_parsed(&p, &text, &key).is_ok(),
                "{name}, line {}: signature does not verify",
                p.span.start_line
            );
            // And the check has teeth: one changed body character breaks it.
            let start = p.byte_range.start;
            let env_text = &text[p.byte_range.clone()];
            let at = start + env_text.find("body: |\n  ").expect("body") + "body: |\n  ".len();
            let mut tampered = text.clone();
            let ch = tampered[at..].chars().next().unwrap();
            tampered.replace_range(at..at + ch.len_utf8(), if ch == 'X' { "Y" } else { "X" });
            let ex = extract(&tampered, &Options::default());
            let q = ex
                .envelopes
                .iter()
                .find(|q| q.span.start_line == p.span.start_line)
                .expect("tampered envelope");
            assert!(
                verify_parsed(q, &tampered, &key).is_err(),
                "{name}: tampering not detected"
            );
        }
    }
    assert_eq!(
        forms.into_iter().collect::<Vec<_>>(),
        ["ed25519", "jws"],
        "both sig forms are shown"
    );
}
