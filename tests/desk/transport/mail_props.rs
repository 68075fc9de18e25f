//! Property tests of the transports: an envelope mailed out and read back is the same
//! envelope, and forwarded as an attachment or sent as HTML it is too; exported mail names
//! each message's ancestors up to its thread's root; a mail's hostile headers (encoded words
//! hiding line breaks, markers, controls) reach the envelope only as one plain line each; any
//! bytes read as mail never panic; file names made from hostile ids stay plain names inside
//! the directory; an attachment entry of any text is read without a panic; text that only
//! looks like mail at a glance (prose opening with `From `, `Re:`, `Subject:`) is imported
//! exactly as `parse` reads it.

use crosstalk::protocol::attachments::{self, Check};
use crosstalk::protocol::namespaces::EMAIL as NAMESPACE;
use crosstalk::protocol::render::nfc;
use crosstalk::protocol::{self, Options};
use crosstalk::store::{Outcome, Store};
use crosstalk::transport::file::{file_stem, write_split};
use crosstalk::transport::mail::{
    MailKind, Outgoing, REFERENCES_KEPT, build, gateway_text, meta_block, read_mails, sniff,
    write_mbox,
};
use crosstalk::transport::mail_import::import_input;
use proptest::prelude::*;

/// Text a hostile envelope can carry in a banner name, context or intent.
fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,30}",
        "[a-z]{0,6}(\r\n|\n|\r)(Bcc|To|Subject|Content-Type): [a-z@.]{1,12}",
        "[\u{0}-\u{1f}\u{7f}\u{85}\u{2028}\u{202e}a-z:<>\",;=?]{0,20}",
    ]
}

/// A header value as a hostile sender writes it: plain text, or an RFC 2047 encoded word
/// whose decoded text holds anything (line breaks, `[[END]]`, a banner, controls, bidi
/// overrides).
fn hostile_value() -> impl Strategy<Value = String> {
    let decoded = prop_oneof![
        "\\PC{0,40}",
        "[a-z ]{0,8}(\r\n|\n|\r)(\\[\\[END\\]\\]|body: \\||sig: none|\\[\\[A→B v1\\]\\])[a-z ]{0,8}",
        "[\u{0}-\u{1f}\u{7f}\u{202a}-\u{202e}\u{2066}-\u{2069}a-z]{0,20}",
    ];
    prop_oneof![
        "[ -~]{0,40}".prop_map(|s| s.replace("=?", "= ?")),
        decoded.prop_map(|d| {
            use base64::Engine;
            format!(
                "=?utf-8?B?{}?=",
                base64::engine::general_purpose::STANDARD.encode(d)
            )
        }),
    ]
}

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

/// `s` with `&`, `<` and `>` written as HTML writes them.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `bytes` in quoted-printable: line breaks kept, every byte but letters and digits as `=XX`,
/// lines cut with soft breaks.
fn quoted_printable(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut column = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            continue;
        }
        if b == b'\n' {
            out.extend_from_slice(b"\r\n");
            column = 0;
            continue;
        }
        if column >= 70 {
            out.extend_from_slice(b"=\r\n");
            column = 0;
        }
        if b.is_ascii_alphanumeric() {
            out.push(b);
            column += 1;
        } else {
            out.extend(format!("={b:02X}").bytes());
            column += 3;
        }
    }
    out
}

/// Lines a person writes above a paste that look like mail at a glance: a `From ` line, a
/// `Re:` or `Subject:` line, `From:`, `To:` and `Date:` lines without what mail software
/// writes, prose, blank lines.
fn note_line() -> impl Strategy<Value = String> {
    prop_oneof![
        "From [A-Za-z ,.]{0,30}",
        "Re: [A-Za-z ]{0,20}",
        "Subject: [A-Za-z ]{0,20}",
        "From: [A-Za-z]{1,8}( <[a-z]{1,5}@[a-z]{1,5}\\.[a-z]{2}>)?",
        "To: [a-z]{1,8}",
        "Date: (Monday|today|[a-z ]{0,10})",
        "[A-Za-z ,.:]{0,40}",
        Just(String::new()),
    ]
}

/// `text` with the indentation of its body lines gone, as a chat window strips it.
fn stripped(text: &str) -> String {
    text.lines()
        .map(|l| l.strip_prefix("  ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Text with no mail evidence is imported as the envelopes `parse` reads in it, byte for
    /// byte, whatever its first lines look like: nothing is unquoted, cut or re-encoded.
    #[test]
    fn text_without_mail_evidence_imports_as_parse_reads_it(
        note in prop::collection::vec(note_line(), 0..5),
        bodies in prop::collection::vec(body(), 1..3),
        strip in any::<bool>(),
        named in any::<bool>(),
    ) {
        let opts = Options::default();
        let mut text = note.join("\n");
        text.push('\n');
        for (i, b) in bodies.iter().enumerate() {
            let e = envelope(i, "looks like mail", b);
            text.push_str(&if strip { stripped(&e) } else { e });
        }
        let parsed = protocol::extract(&text, &opts).envelopes;
        prop_assert!(!parsed.is_empty());
        let path = std::path::Path::new("note.txt");
        let path = named.then_some(path);
        prop_assert_eq!(sniff(path, text.as_bytes()), None, "{}", text);
        let mut store = Store::open_in_memory().unwrap();
        let (report, mail) = import_input(
            &mut store, "note.txt", path, &mut text.as_bytes(), &opts, &mut |_| {}, false,
        )
        .unwrap();
        prop_assert!(mail.is_none());
        prop_assert_eq!(report.items.len(), parsed.len());
        for (item, p) in report.items.iter().zip(&parsed) {
            prop_assert_eq!(item.span, p.span);
            if p.has_errors() {
                prop_assert_eq!(item.outcome, Outcome::Rejected);
                continue;
            }
            prop_assert_eq!(item.outcome, Outcome::Imported);
            let m = store.message(item.message.as_deref().unwrap()).unwrap().unwrap();
            prop_assert_eq!(&m.raw, &p.received_text(&text));
            prop_assert_eq!(&m.envelope.body, &p.envelope.body);
            prop_assert_eq!(&m.envelope.sig, &p.envelope.sig);
        }
    }

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
                references: ids[..i].iter().map(String::as_str).collect(),
                context: Some(&context),
                intent: Some("REQUEST"),
                from: "ALICE",
                to: "BOB",
                date: 1_700_000_000 + i as i64,
                envelope: t.as_str().into(),
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

    /// An envelope forwarded as an attachment (`message/rfc822`), a forward of a forward up
    /// to four deep, each in 7bit, base64 or quoted-printable, the original as plain text or
    /// as HTML the way clients write it (one `<div>` per line, spaces as `&nbsp;`, tabs in
    /// Apple Mail's tab spans; or `<pre>`): the envelope read is the one sent, with the
    /// original mail's headers in its `meta: email` block.
    #[test]
    fn forwarded_and_html_mail_reads_back_the_envelope(
        body in body(),
        layers in prop::collection::vec(0..3usize, 0..5),
        html in 0..3u8,
    ) {
        let opts = Options::default();
        let text = envelope(1, "forwarded", &body);
        let want = protocol::extract(&text, &opts).envelopes.remove(0).envelope;
        let (kind, part) = match html {
            0 => ("text/plain", text.clone()),
            1 => ("text/html", text.lines().map(|l| match l {
                "" => "<div><br></div>".to_string(),
                l => format!("<div>{}</div>", escape(l)
                    .replace(' ', "&nbsp;")
                    .replace('\t', "<span class=\"Apple-tab-span\" style=\"white-space:pre\">\t</span>")),
            }).collect::<String>()),
            _ => ("text/html", format!("<html><body><pre>\n{}</pre></body></html>", escape(&text))),
        };
        let mut mail = format!(
            "From: Kalle <kalle@example.com>\r\nSubject: relay\r\nMessage-ID: <orig@mail.example>\r\n\
             MIME-Version: 1.0\r\nContent-Type: {kind}; charset=utf-8\r\n\
             Content-Transfer-Encoding: 8bit\r\n\r\n{}",
            part.replace('\n', "\r\n")
        )
        .into_bytes();
        for (n, encoding) in layers.iter().enumerate() {
            let (name, inner) = match encoding {
                0 => ("8bit", mail.clone()),
                1 => {
                    use base64::Engine;
                    let b = base64::engine::general_purpose::STANDARD.encode(&mail);
                    ("base64", b.as_bytes().chunks(76).collect::<Vec<_>>().join(&b"\r\n"[..]))
                }
                _ => ("quoted-printable", quoted_printable(&mail)),
            };
            let mut outer = format!(
                "From: Ops <ops@example.com>\r\nSubject: Fwd: relay\r\nMessage-ID: <fwd{n}@mail.example>\r\n\
                 MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b{n}\"\r\n\r\n\
                 --b{n}\r\nContent-Type: text/plain\r\n\r\nForwarded.\r\n--b{n}\r\n\
                 Content-Type: message/rfc822\r\nContent-Transfer-Encoding: {name}\r\n\
                 Content-Disposition: attachment; filename=\"relay.eml\"\r\n\r\n"
            )
            .into_bytes();
            outer.extend(inner);
            outer.extend(format!("\r\n--b{n}--\r\n").bytes());
            mail = outer;
        }
        let mails = read_mails(&mail, MailKind::Eml);
        let out = gateway_text(&mails, &opts, &|_| None);
        let got = protocol::extract(&out, &opts);
        prop_assert_eq!(got.envelopes.len(), 1, "{}", out);
        let env = &got.envelopes[0].envelope;
        prop_assert_eq!(&env.banner, &want.banner);
        prop_assert_eq!(&env.headers, &want.headers);
        prop_assert_eq!(&env.body, &want.body);
        let block = env.meta_block(NAMESPACE);
        prop_assert_eq!(block.and_then(|b| b.get("Message-ID")), Some("<orig@mail.example>"));
    }

    /// A thread of any shape exported as a mailbox: read back by mail-parser, each mail's
    /// In-Reply-To is its parent's Message-ID and its References its ancestors' up to the
    /// root, oldest first: all of them, or the root and the nearest ones past
    /// `REFERENCES_KEPT`.
    #[test]
    fn exported_mail_names_its_ancestors_up_to_the_root(
        picks in prop::collection::vec((any::<bool>(), any::<prop::sample::Index>()), 0..45),
    ) {
        // Each message answers the one before it (a chain, for depth) or any earlier one.
        let parents: Vec<Option<usize>> = std::iter::once(None)
            .chain(picks.iter().enumerate().map(|(i, (chain, pick))| {
                Some(if *chain { i } else { pick.index(i + 1) })
            }))
            .collect();
        let id = |i: usize| format!("01K00000000000000000000{i:03}");
        let text: String = parents
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let parent = p.map_or(String::new(), |p| format!("parent: {}\n", id(p)));
                format!(
                    "[[A→B v1.1]]\nthread: {}\n{parent}message: {}\nintent: REQUEST\n\
                     body: |\n  {i}\nsig: none\n[[END]]\n\n",
                    id(0),
                    id(i)
                )
            })
            .collect();
        let mut store = Store::open_in_memory().unwrap();
        store.import_text("<test>", &text, &Options::default()).unwrap();
        let t = store.thread(&id(0)).unwrap().unwrap();
        let mut mbox = Vec::new();
        crosstalk::export::write_thread(&t, crosstalk::export::Format::Mbox, &mut mbox).unwrap();
        let read: Vec<_> = mail_parser::mailbox::mbox::MessageIterator::new(&mbox[..])
            .filter_map(Result::ok)
            .collect();
        prop_assert_eq!(read.len(), parents.len());
        let mid = |i: usize| crosstalk::transport::mail::message_id_for(&id(i));
        for m in &read {
            let msg = mail_parser::MessageParser::default().parse(m.contents()).unwrap();
            let me = msg.message_id().unwrap().to_string();
            let i = (0..parents.len()).find(|&i| mid(i) == me).unwrap();
            let mut ancestors = Vec::new();
            let mut at = parents[i];
            while let Some(p) = at {
                ancestors.insert(0, mid(p));
                at = parents[p];
            }
            if ancestors.len() > REFERENCES_KEPT {
                ancestors.drain(1..ancestors.len() + 1 - REFERENCES_KEPT);
            }
            let refs: Vec<String> = msg
                .references()
                .as_text_list()
                .map(|l| l.iter().map(|s| s.to_string()).collect())
                .unwrap_or_default();
            prop_assert_eq!(&refs, &ancestors, "message {}", i);
            let reply_to = msg.in_reply_to().as_text().map(str::to_string);
            prop_assert_eq!(reply_to, parents[i].map(mid), "message {}", i);
        }
    }

    /// Whatever a mail's headers hold once decoded, the envelope in its body reads back
    /// unchanged but for one `meta: email` block, whose every value is one line with no
    /// control character and no `[[`: a header cannot end the envelope, open another one,
    /// or add a field.
    #[test]
    fn hostile_mail_headers_stay_one_plain_line_each(
        subject in hostile_value(),
        from in hostile_value(),
        message_id in hostile_value(),
        in_reply_to in hostile_value(),
        body in body(),
    ) {
        let opts = Options::default();
        let text = envelope(1, "hostile headers", &body);
        let want = protocol::extract(&text, &opts).envelopes.remove(0).envelope;
        let mail = format!(
            "From: {from}\r\nSubject: {subject}\r\nMessage-ID: <{message_id}>\r\n\
             In-Reply-To: <{in_reply_to}>\r\nDate: Tue, 14 Nov 2023 22:13:20 +0000\r\n\
             MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\
             Content-Transfer-Encoding: 8bit\r\n\r\n{}",
            text.replace('\n', "\r\n")
        );
        let mails = read_mails(mail.as_bytes(), MailKind::Eml);
        prop_assert_eq!(mails.len(), 1);
        let out = gateway_text(&mails, &opts, &|_| None);
        let got = protocol::extract(&out, &opts);
        prop_assert_eq!(got.envelopes.len(), 1, "{}", out);
        let env = &got.envelopes[0].envelope;
        prop_assert!(!got.envelopes[0].has_errors(), "{:?}", got.envelopes[0].diagnostics);
        prop_assert_eq!(&env.banner, &want.banner);
        prop_assert_eq!(&env.headers, &want.headers);
        prop_assert_eq!(&env.body, &want.body);
        prop_assert_eq!(&env.sig, &want.sig);
        let others: Vec<_> = env.meta.iter().filter(|m| m.namespace != NAMESPACE).collect();
        prop_assert_eq!(others, want.meta.iter().collect::<Vec<_>>());
        // The block read back is the block made from the mail's headers, value for value
        // (in NFC, as every canonical text is).
        let mut block = meta_block(&mails[0].headers);
        for (_, value) in &mut block.entries {
            *value = nfc(value);
        }
        prop_assert_eq!(env.meta_block(NAMESPACE), Some(&block));
        for (key, value) in &block.entries {
            prop_assert!(!value.contains("[["), "{key}: {value:?}");
            prop_assert!(!value.chars().any(char::is_control), "{key}: {value:?}");
        }
    }

    /// Whatever a stored envelope's banner names, context and intent hold (line breaks,
    /// controls, a forged `Bcc:`), its mail has only the headers crosstalk writes, each
    /// readable, and the subject reads back as the context and intent on one line.
    #[test]
    fn hostile_names_and_context_cannot_forge_mail_headers(
        context in hostile_text(),
        intent in hostile_text(),
        from in hostile_text(),
        to in hostile_text(),
        body in body(),
    ) {
        let text = envelope(1, "c", &body);
        let o = Outgoing {
            message: "01K00000000000000000000001",
            parent: Some("01K00000000000000000000000"),
            references: vec!["01K00000000000000000000000"],
            context: Some(&context),
            intent: Some(&intent),
            from: &from,
            to: &to,
            date: 1_700_000_000,
            envelope: text.as_str().into(),
        };
        let mail = build(&o);
        let raw = String::from_utf8_lossy(&mail);
        let head = raw.split("\r\n\r\n").next().unwrap_or_default();
        for line in head.split("\r\n") {
            prop_assert!(!line.contains('\r') && !line.contains('\n'), "{line:?}");
            if line.starts_with([' ', '\t']) {
                continue;
            }
            let name = line.split(':').next().unwrap_or_default().to_ascii_lowercase();
            prop_assert!(
                [
                    "from", "to", "subject", "message-id", "date", "in-reply-to", "references",
                    "mime-version", "content-type", "content-transfer-encoding",
                ]
                .contains(&name.as_str()),
                "unexpected header {line:?} in\n{head}"
            );
        }
        let mails = read_mails(&mail, MailKind::Eml);
        prop_assert_eq!(mails.len(), 1);
        // The subject as the builder writes it: controls as spaces, bidi controls and
        // invisible characters left out.
        let one_line = |s: &str| {
            s.chars()
                .filter(|c| c.is_control() || !crosstalk::sanitize::is_unsafe(*c))
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect::<String>()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        let subject = one_line(mails[0].headers.subject.as_deref().unwrap_or_default());
        let (c, i) = (one_line(&context), one_line(&intent));
        let c = if c.is_empty() { "(no context)".to_string() } else { c };
        let i = if i.is_empty() { "(no intent)".to_string() } else { i };
        let want = one_line(&format!("[AI Crosstalk] {c} - {i}"));
        prop_assert_eq!(subject.replace("[ [", "[[").replace("] ]", "]]"), want.replace("[ [", "[[").replace("] ]", "]]"));
        // Mail has CRLF line endings; the envelope's text is otherwise the same.
        let read = mails[0].text.replace("\r\n", "\n");
        prop_assert_eq!(read.trim_end(), text.trim_end());
    }

    /// Any bytes, read as an `.eml` or as a mailbox, decode without a panic, and the
    /// envelopes found in them are imported text like any other: a multipart mail, and a
    /// forwarded HTML mail, with bytes overwritten anywhere.
    #[test]
    fn any_bytes_read_as_mail_never_panic(
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..600),
            (body(), prop::collection::vec((0usize..400, any::<u8>()), 0..12)).prop_map(|(b, cuts)| {
                let mut m = format!(
                    "From a@b Tue Nov 14 22:13:20 2023\nFrom: a@b\nSubject: =?utf-8?q?x=0Ay?=\n\
                     Content-Type: multipart/mixed; boundary=\"zz\"\n\n--zz\n\
                     Content-Type: text/plain\nContent-Transfer-Encoding: quoted-printable\n\n{}\n--zz--\n",
                    envelope(1, "c", &b)
                )
                .into_bytes();
                for (at, byte) in cuts {
                    if !m.is_empty() {
                        let at = at % m.len();
                        m[at] = byte;
                    }
                }
                m
            }),
            // A forward holding an HTML-only mail, then bytes overwritten.
            (body(), prop::collection::vec((0usize..700, any::<u8>()), 0..12)).prop_map(|(b, cuts)| {
                let html: String = envelope(1, "c", &b)
                    .lines()
                    .map(|l| format!("<div>{}</div>", l.replace(' ', "&nbsp;")))
                    .collect();
                let mut m = format!(
                    "From: a@b\nSubject: f\nContent-Type: multipart/mixed; boundary=\"zz\"\n\n\
                     --zz\nContent-Type: message/rfc822\n\nFrom: c@d\nMessage-ID: <i@d>\n\
                     Content-Type: text/html; charset=utf-8\n\n<html><head><style>p{{}}</style></head>\
                     <body><pre>{html}</pre><p style=\"white-space:pre\">{html}</body></html>\n--zz--\n"
                )
                .into_bytes();
                for (at, byte) in cuts {
                    if !m.is_empty() {
                        let at = at % m.len();
                        m[at] = byte;
                    }
                }
                m
            }),
        ],
    ) {
        let opts = Options::default();
        for kind in [MailKind::Eml, MailKind::Mbox] {
            let mails = read_mails(&bytes, kind);
            let out = gateway_text(&mails, &opts, &|_| None);
            let _ = protocol::extract(&out, &opts);
        }
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
