//! Mail out: one RFC 5322 message per envelope (`mail-builder`), threaded the way mail
//! clients thread: `Message-ID:` derived from the envelope's message id, `In-Reply-To:` its
//! parent's, `References:` the chain of its ancestors up to the thread's root, `Date:` the
//! message's own time. Several go into one file as an mboxrd mailbox ([`write_mbox`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Write};

use mail_builder::MessageBuilder;
use mail_builder::headers::address::Address;

use super::mail::{ID_DOMAIN, message_id_for};
use crate::store::{StoredMessage, ThreadView};

/// How many Message-IDs a `References:` field names at most: the thread's root and the
/// nearest ancestors. A chain thousands of messages deep would otherwise write a header of
/// tens of kilobytes into every reply; mail clients trim the same way (RFC 5537 §3.4.4 keeps
/// the first and the last three), and threading needs only the root and the parent.
pub const REFERENCES_KEPT: usize = 20;

/// What a mail is made from.
#[derive(Debug, Clone)]
pub struct Outgoing<'a> {
    /// The envelope's message id.
    pub message: &'a str,
    /// Its parent's message id: `In-Reply-To:`.
    pub parent: Option<&'a str>,
    /// Its ancestors' message ids, the thread's root first and the parent last, at most
    /// [`REFERENCES_KEPT`] (the root and the nearest ones): `References:`. Empty for a root.
    pub references: Vec<&'a str>,
    /// The thread's context.
    pub context: Option<&'a str>,
    /// The intent.
    pub intent: Option<&'a str>,
    /// The banner's sender and recipient.
    pub from: &'a str,
    /// The banner's recipient.
    pub to: &'a str,
    /// Seconds since the epoch for the Date header.
    pub date: i64,
    /// The complete envelope.
    pub envelope: std::borrow::Cow<'a, str>,
}

impl<'a> Outgoing<'a> {
    /// The mails of a thread's messages, in its tree order, each naming its ancestors as far
    /// as the thread holds them: a parent that has not arrived is named (a mail client
    /// threads the reply under it once it comes) but what lies above it is not known.
    pub fn thread(t: &'a ThreadView) -> Vec<Outgoing<'a>> {
        // Tree order puts a parent before its replies, so each chain is its parent's and one
        // more: the whole is linear in the thread, however deep.
        let mut at: HashMap<Cow<'a, str>, usize> = HashMap::with_capacity(t.messages.len());
        let mut out: Vec<Outgoing<'a>> = Vec::with_capacity(t.messages.len());
        for (i, m) in t.messages.iter().enumerate() {
            let mut o = Outgoing::of(m, t.context.as_deref());
            if let Some(parent) = m.parent.as_deref() {
                let stored = at.get(&crate::protocol::id::key(parent)).copied();
                o.references = match stored {
                    Some(p) => {
                        // The parent's own mail is named by its id as stored.
                        o.parent = Some(out[p].message);
                        let mut chain = out[p].references.clone();
                        chain.push(out[p].message);
                        trimmed(chain)
                    }
                    None => vec![parent],
                };
            }
            at.entry(crate::protocol::id::key(&m.id)).or_insert(i);
            out.push(o);
        }
        out
    }

    /// A stored message's mail, as a thread of its own: `References:` names only its parent
    /// ([`Outgoing::thread`] names the whole chain).
    ///
    /// `Date:` is the message's own time: for a message received, when this desk stored it
    /// (its arrival); for one composed here, the time in the ULID the desk gave it, else when
    /// it was stored. A received message's id was written by whoever sent it (a model
    /// invents one as readily as a body), so the time inside it says nothing.
    pub fn of(m: &'a StoredMessage, context: Option<&'a str>) -> Self {
        let stored = m.received_at.parse::<jiff::Timestamp>().ok();
        let own = (m.direction == "composed")
            .then(|| crate::store::ulid_time(&m.id))
            .flatten();
        let date = own.or(stored).map_or(0, |t| t.as_second());
        Outgoing {
            message: &m.id,
            parent: m.parent.as_deref(),
            references: m.parent.as_deref().into_iter().collect(),
            context,
            intent: m.intent.as_deref(),
            from: &m.envelope.banner.from,
            to: &m.envelope.banner.to,
            date,
            envelope: m.carried().into(),
        }
    }
}

/// `chain` (root first) cut to the root and the nearest [`REFERENCES_KEPT`]` - 1` ancestors.
fn trimmed(mut chain: Vec<&str>) -> Vec<&str> {
    if chain.len() > REFERENCES_KEPT {
        chain.drain(1..chain.len() + 1 - REFERENCES_KEPT);
    }
    chain
}

/// Header text made safe: one line, no control characters.
fn header_text(s: &str) -> String {
    // A control character becomes a space; bidi controls and invisible characters (which a
    // mail client would show reordered, or not at all) are left out.
    s.chars()
        .filter_map(|c| match c {
            c if c.is_control() => Some(' '),
            c if crate::sanitize::is_unsafe(c) => None,
            c => Some(c),
        })
        .collect::<String>()
        .trim()
        .to_string()
}

/// A banner name as a mail address: an `email:` address or a plain `user@host` is used as
/// it is; anything else becomes the display name of a reserved, undeliverable address.
fn address(name: &str) -> Address<'static> {
    let name = header_text(name);
    let bare = name.strip_prefix("email:").unwrap_or(&name);
    let bare = bare.split('?').next().unwrap_or(bare);
    let looks = bare.split_once('@').is_some_and(|(u, h)| {
        !u.is_empty()
            && h.contains('.')
            && bare
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"@.-_+".contains(&b))
    });
    if looks {
        Address::new_address(None::<String>, bare.to_string())
    } else {
        Address::new_address(Some(name), format!("crosstalk@{ID_DOMAIN}"))
    }
}

/// One mail for one envelope, CRLF line endings.
pub fn build(o: &Outgoing<'_>) -> Vec<u8> {
    // A context or intent with nothing printable is as good as none.
    let part = |v: Option<&str>, none: &str| {
        Some(header_text(v.unwrap_or_default()))
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| none.to_string())
    };
    let subject = format!(
        "[AI Crosstalk] {} - {}",
        part(o.context, "(no context)"),
        part(o.intent, "(no intent)")
    );
    let mut b = MessageBuilder::new()
        .from(address(o.from))
        .to(address(o.to))
        .subject(subject)
        .message_id(message_id_for(o.message))
        .date(o.date);
    if let Some(p) = o.parent {
        b = b.in_reply_to(message_id_for(p));
    }
    if !o.references.is_empty() {
        let ids: Vec<String> = o.references.iter().map(|r| message_id_for(r)).collect();
        b = b.references(ids);
    }
    let mut body = o.envelope.to_string();
    if !body.ends_with('\n') {
        body.push('\n');
    }
    b.text_body(body).write_to_vec().unwrap_or_default()
}

/// Writes `mails` as an mboxrd mailbox: each after a `From ` line, lines of its own that
/// start with `>*From ` quoted with one more `>`, LF line endings, a blank line after each.
pub fn write_mbox<'a>(
    mails: impl IntoIterator<Item = (&'a Outgoing<'a>, Vec<u8>)>,
    out: &mut dyn Write,
) -> io::Result<()> {
    for (o, mail) in mails {
        let when = jiff::Timestamp::from_second(o.date)
            .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
            .strftime("%a %b %e %H:%M:%S %Y");
        writeln!(out, "From crosstalk@{ID_DOMAIN} {when}")?;
        let text = String::from_utf8_lossy(&mail);
        for line in text.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.trim_start_matches('>').starts_with("From ") {
                out.write_all(b">")?;
            }
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Options;
    use crate::transport::mail::{MailKind, decode, gateway_text, read_mails, sniff};

    const ENV: &str = "[[ALICE→BOB v1.1]]\nthread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K\nmessage: 01J9J3D3M6A4M3WQX8G1ZQ0S7M\ncontext: plans\nintent: REQUEST\nbody: |\n  From here on, caf\u{e9}?\n  = sign =20 and a long line ";

    fn env() -> String {
        format!("{ENV}{}\nsig: none\n[[END]]\n", "x".repeat(200))
    }

    fn outgoing(e: &str) -> Outgoing<'_> {
        Outgoing {
            message: "01J9J3D3M6A4M3WQX8G1ZQ0S7M",
            parent: Some("01J9J3D3M6A4M3WQX8G1ZQ0S7K"),
            references: vec!["01J9J3D3M6A4M3WQX8G1ZQ0S7K"],
            context: Some("plans"),
            intent: Some("REQUEST"),
            from: "ALICE",
            to: "email:bob@example.com",
            date: 1_700_000_000,
            envelope: e.into(),
        }
    }

    #[test]
    fn a_context_or_intent_with_nothing_printable_is_named_as_missing() {
        let e = env();
        let mut o = outgoing(&e);
        o.context = Some(" \u{7}\r\n ");
        o.intent = Some("");
        let text = String::from_utf8(build(&o)).unwrap();
        assert!(
            text.contains("Subject: [AI Crosstalk] (no context) - (no intent)\r\n"),
            "{text}"
        );
        // Bidi controls and invisible characters are left out of the subject.
        o.context = Some("pl\u{202e}an\u{200b}s");
        let text = String::from_utf8(build(&o)).unwrap();
        assert!(
            text.contains("Subject: [AI Crosstalk] plans - (no intent)\r\n"),
            "{text}"
        );
    }

    #[test]
    fn a_built_mail_threads_and_decodes_to_the_envelope() {
        let e = env();
        let raw = build(&outgoing(&e));
        let text = String::from_utf8(raw.clone()).unwrap();
        assert!(
            text.contains("Subject: [AI Crosstalk] plans - REQUEST\r\n"),
            "{text}"
        );
        assert!(text.contains("Message-ID: <01J9J3D3M6A4M3WQX8G1ZQ0S7M@crosstalk.invalid>"));
        assert!(text.contains("In-Reply-To: <01J9J3D3M6A4M3WQX8G1ZQ0S7K@crosstalk.invalid>"));
        assert!(text.contains("To: <bob@example.com>"), "{text}");
        assert_eq!(
            build(&outgoing(&e)),
            raw,
            "the same envelope gives the same mail"
        );
        assert_eq!(sniff(None, &raw), Some(MailKind::Eml));
        let mail = decode(&raw);
        assert_eq!(mail.text.replace("\r\n", "\n"), e);
        assert_eq!(
            mail.headers.message_id.as_deref(),
            Some("01J9J3D3M6A4M3WQX8G1ZQ0S7M@crosstalk.invalid")
        );
        // Made from this envelope: nothing to add.
        let text = gateway_text(&[mail], &Options::default(), &|_| None);
        assert!(!text.contains("meta: email"), "{text}");
    }

    #[test]
    fn mbox_quotes_from_lines_and_reads_back() {
        let e = env();
        let o = outgoing(&e);
        let mut out = Vec::new();
        write_mbox([(&o, build(&o)), (&o, build(&o))], &mut out).unwrap();
        assert_eq!(sniff(None, &out), Some(MailKind::Mbox));
        let mails = read_mails(&out, MailKind::Mbox);
        assert_eq!(mails.len(), 2);
        for m in mails {
            // The blank line before the next `From ` line is the mailbox's, not the body's.
            assert_eq!(m.text.replace("\r\n", "\n").trim_end(), e.trim_end());
        }
    }

    /// A chain of `n` envelopes, each answering the one before, in one thread.
    fn chain(n: usize) -> String {
        (0..n)
            .map(|i| {
                let parent = match i {
                    0 => String::new(),
                    i => format!("parent: 01K00000000000000000000{:03}\n", i - 1),
                };
                format!(
                    "[[A→B v1.1]]\nthread: 01K00000000000000000000000\n{parent}\
                     message: 01K00000000000000000000{i:03}\nintent: REQUEST\nbody: |\n  {i}\n\
                     sig: none\n[[END]]\n"
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn references_name_the_root_and_the_nearest_ancestors() {
        let mut store = crate::store::Store::open_in_memory().unwrap();
        let n = REFERENCES_KEPT + 10;
        store
            .import_text("<test>", &chain(n), &Options::default())
            .unwrap();
        let t = store.thread("01K00000000000000000000000").unwrap().unwrap();
        let mails = Outgoing::thread(&t);
        let id = |i: usize| format!("01K00000000000000000000{i:03}");
        for (i, o) in mails.iter().enumerate() {
            assert_eq!(o.message, id(i));
            assert_eq!(o.parent.map(str::to_string), i.checked_sub(1).map(id));
            let want: Vec<String> = match i {
                0 => vec![],
                i if i <= REFERENCES_KEPT => (0..i).map(id).collect(),
                i => std::iter::once(id(0))
                    .chain((i + 1 - REFERENCES_KEPT..i).map(id))
                    .collect(),
            };
            assert_eq!(o.references, want, "message {i}");
        }
        // As written in the mail: oldest first, each in angle brackets, the parent last.
        let last = String::from_utf8(build(&mails[n - 1])).unwrap();
        let refs = header(&last, "References").unwrap_or_default();
        let ids: Vec<&str> = refs.split_whitespace().collect();
        assert_eq!(ids.len(), REFERENCES_KEPT);
        assert_eq!(ids[0], format!("<{}>", message_id_for(&id(0))));
        let parent = format!("<{}>", message_id_for(&id(n - 2)));
        assert_eq!(ids[REFERENCES_KEPT - 1], parent);
        assert_eq!(header(&last, "In-Reply-To"), Some(parent));
    }

    /// The value of header field `name` in `mail`, continuation lines unfolded.
    fn header(mail: &str, name: &str) -> Option<String> {
        let head = mail.split("\r\n\r\n").next()?;
        let unfolded = head.replace("\r\n ", " ").replace("\r\n\t", " ");
        unfolded.split("\r\n").find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }

    #[test]
    fn a_reply_to_a_message_not_stored_names_its_parent_alone() {
        let mut store = crate::store::Store::open_in_memory().unwrap();
        let text = chain(3).replace(
            "parent: 01K00000000000000000000001",
            "parent: 01K000000000000000000000ZZ",
        );
        store
            .import_text("<test>", &text, &Options::default())
            .unwrap();
        let t = store.thread("01K00000000000000000000000").unwrap().unwrap();
        let mails = Outgoing::thread(&t);
        let last = mails.iter().find(|o| o.message.ends_with("002")).unwrap();
        assert_eq!(last.parent, Some("01K000000000000000000000ZZ"));
        assert_eq!(last.references, ["01K000000000000000000000ZZ"]);
    }

    #[test]
    fn the_date_is_the_arrival_of_a_received_message_and_the_id_of_a_composed_one() {
        let mut store = crate::store::Store::open_in_memory().unwrap();
        let jan_2024 = jiff::Timestamp::from_second(1_704_067_200).unwrap();
        let ms = u64::try_from(jan_2024.as_millisecond()).unwrap();
        let old = ulid::Ulid::from_parts(ms, 7).to_string();
        let mine = ulid::Ulid::from_parts(ms, 8).to_string();
        // A model's envelope whose id claims January 2024.
        let received = format!(
            "[[A→B v1.1]]\nthread: {old}\nmessage: {old}\nintent: REQUEST\nbody: |\n  hi\nsig: none\n[[END]]\n"
        );
        store
            .import_text("<test>", &received, &Options::default())
            .unwrap();
        let composed = format!(
            "[[B→A v1.1]]\nthread: {old}\nparent: {old}\nmessage: {mine}\nintent: RESPOND\nbody: |\n  yo\nsig: none\n[[END]]\n"
        );
        let env = crate::protocol::extract(&composed, &Options::default()).envelopes[0]
            .envelope
            .clone();
        store.store_composed(&env, "draft").unwrap();
        let t = store.thread(&old).unwrap().unwrap();
        let mails = Outgoing::thread(&t);
        let now = jiff::Timestamp::now().as_second();
        assert_eq!(t.messages[0].direction, "received");
        assert!(
            (now - mails[0].date).abs() < 600,
            "received: {}",
            mails[0].date
        );
        assert_eq!(t.messages[1].direction, "composed");
        assert_eq!(mails[1].date, jan_2024.as_second(), "composed");
        let text = String::from_utf8(build(&mails[1])).unwrap();
        assert_eq!(
            header(&text, "Date").as_deref(),
            Some("Mon, 1 Jan 2024 00:00:00 +0000")
        );
    }
}
