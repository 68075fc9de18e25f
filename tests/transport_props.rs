//! Property tests of the transports: an envelope mailed out and read back is the same
//! envelope; file names made from hostile ids stay plain names inside the directory; an
//! attachment entry of any text is read without a panic.

use crosstalk::protocol::attachments::{self, Check};
use crosstalk::protocol::{self, Options};
use crosstalk::transport::file::{file_stem, write_split};
use crosstalk::transport::mail::{MailKind, Outgoing, build, gateway_text, read_mails, write_mbox};
use proptest::prelude::*;

/// Body text as chats produce it: any printable text, accents, arrows, long lines, trailing
/// spaces, lines starting with `From ` or `=`, blank lines.
fn body() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        "[ -~]{0,120}",
        "From [a-z ]{0,20}",
        ">From [a-z]{0,5}",
        "=[0-9A-F]{2} [a-zé→✓ ]{0,30}",
        "[a-zA-Zéü→✓中文 ]{0,300}",
        "[a-z]{1,10}[ \t]{1,3}",
    ];
    prop::collection::vec(line, 1..8).prop_map(|lines| {
        let b = lines.join("\n");
        // A body's lines are its own: no end marker of a block in the middle.
        b.replace("[[", "[ [").trim_end().to_string()
    })
}

fn envelope(i: usize, context: &str, body: &str) -> String {
    let mut text = format!(
        "[[ALICE→BOB v1.1]]\nthread: 01K0000000000000000000000A\nmessage: 01K00000000000000000000{i:03}\ncontext: {context}\nintent: REQUEST\nbody: |\n"
    );
    for line in body.split('\n') {
        if !line.is_empty() {
            text.push_str("  ");
            text.push_str(line);
        }
        text.push('\n');
    }
    text.push_str("sig: none\n[[END]]\n");
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Export as mail (one .eml, or an mbox of several) then import: the same envelopes.
    #[test]
    fn mail_round_trip(bodies in prop::collection::vec(body(), 1..4), context in "[ -~é]{0,40}") {
        let context = context.trim().replace("[[", "[");
        let opts = Options::default();
        let texts: Vec<String> = bodies.iter().enumerate().map(|(i, b)| envelope(i, &context, b)).collect();
        let want: Vec<_> = texts
            .iter()
            .map(|t| protocol::extract(t, &opts).envelopes.remove(0).envelope)
            .collect();
        let ids: Vec<String> = (0..texts.len()).map(|i| format!("01K00000000000000000000{i:03}")).collect();
        let outgoing: Vec<Outgoing<'_>> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| Outgoing {
                message: &ids[i],
                parent: (i > 0).then(|| ids[i - 1].as_str()),
                context: Some(&context),
                intent: Some("REQUEST"),
                from: "ALICE",
                to: "BOB",
                date: 1_700_000_000 + i as i64,
                envelope: t,
            })
            .collect();
        let mails = if outgoing.len() == 1 {
            read_mails(&build(&outgoing[0]), MailKind::Eml)
        } else {
            let mut mbox = Vec::new();
            write_mbox(outgoing.iter().map(|o| (o, build(o))), &mut mbox).unwrap();
            read_mails(&mbox, MailKind::Mbox)
        };
        prop_assert_eq!(mails.len(), texts.len());
        let text = gateway_text(&mails, &opts, &|_| None);
        let got: Vec<_> = protocol::extract(&text, &opts)
            .envelopes
            .into_iter()
            .map(|p| p.envelope)
            .collect();
        prop_assert_eq!(got, want);
    }

    /// Any id gives a plain file name: no separator, no dot-leading name, no control
    /// character, bounded length; distinct ids written into one directory stay inside it.
    #[test]
    fn hostile_ids_make_safe_file_names(ids in prop::collection::vec(
        prop_oneof!["\\PC{0,40}", "(\\.\\./){1,4}[a-z]{0,8}", "[/\\\\.\u{0}-\u{1f}]{1,10}", "\\PC{150,300}"],
        1..6,
    )) {
        let dir = tempfile::tempdir().unwrap();
        for id in &ids {
            let stem = file_stem(id);
            prop_assert!(!stem.is_empty() && stem.len() <= 160, "{stem}");
            prop_assert!(stem.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_%".contains(&b)), "{stem}");
        }
        let split = write_split(
            dir.path(),
            "crosstalk",
            ids.iter().map(|id| (id.clone(), id.as_bytes().to_vec())),
        )
        .unwrap();
        for p in split.written.iter().chain(&split.unchanged).chain(&split.refused) {
            prop_assert_eq!(p.parent(), Some(dir.path()));
        }
        let files = std::fs::read_dir(dir.path()).unwrap().count();
        prop_assert_eq!(files, split.written.len());
    }

    /// An entry of any text is read without a panic, and a checked name never leaves the
    /// directory.
    #[test]
    fn attachment_entries_never_panic(key in "\\PC{0,6}", value in "\\PC{0,200}", bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let a = attachments::parse_entry(&key, &value);
        let c = attachments::check(&a, Some(&bytes));
        if let Some(n) = &a.name {
            if n.contains('/') || n.contains('\\') || n == ".." {
                prop_assert_eq!(c, Check::UnsafeName);
            }
        }
        let _ = a.digest.map(|d| d.display());
    }

    /// What the composer writes reads back as written.
    #[test]
    fn written_entries_read_back(name in "[^\u{0}-\u{1f}/\\\\]{1,30}", bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let v = attachments::entry_value("text/plain", &name, bytes.len() as u64, &bytes);
        let a = attachments::parse_entry("A1", &v);
        prop_assert_eq!(a.name.as_deref(), Some(name.as_str()));
        prop_assert_eq!(a.size, Some(bytes.len() as u64));
        if attachments::safe_name(&name).is_some() && a.name.as_deref() == Some(name.as_str()) {
            prop_assert_eq!(attachments::check(&a, Some(&bytes)), Check::Ok);
        }
    }
}
