//! The e-mail binding: envelopes in mail bodies, in and out.
//!
//! In: `.eml` files and mbox mailboxes are decoded (MIME parts, quoted-printable, base64,
//! character sets) by `mail-parser` and read part by part (`mail_parts`): the text/plain
//! parts, the text/html ones as the lines a mail client shows when a message has no text
//! part, text attachments (an envelope mailed as a `.crosstalk` file), and messages forwarded
//! as attachments. What goes on to the normal import is [`gateway_text`]: each envelope
//! found, with a `meta: email` block added when that changes nothing a signature covers (the
//! rule is in docs/PROTOCOL.md, "E-mail").
//!
//! Out: [`build`] writes one RFC 5322 message per envelope (`mail-builder`): the subject the
//! spec names, a Message-ID derived from the envelope's message id (so exporting twice gives
//! the same mail and replies thread in mail clients through In-Reply-To/References), and the
//! whole envelope as a UTF-8 text/plain body in 7bit, quoted-printable or base64, whichever
//! carries it unchanged. Several messages go into one file as an mboxrd mailbox
//! ([`write_mbox`]).

use std::io::{self, Write};

use mail_builder::MessageBuilder;
use mail_builder::headers::address::Address;
use sha2::{Digest, Sha256};

use crate::protocol::{self, MetaBlock, Options};

pub use super::mail_parts::{Note, decode};
pub use super::mail_sniff::sniff;

/// What kind of mail an input holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailKind {
    /// One RFC 5322 message.
    Eml,
    /// An mbox mailbox: messages each after a `From ` line.
    Mbox,
}

/// The namespace of the gateway's block.
pub const NAMESPACE: &str = crate::protocol::EMAIL_NAMESPACE;

/// The domain of the Message-IDs crosstalk derives. `.invalid` is reserved (RFC 2606): it
/// can never collide with a real mail domain.
const ID_DOMAIN: &str = "crosstalk.invalid";

/// The headers of a mail the gateway keeps, each a single line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MailHeaders {
    /// Message-ID, without angle brackets.
    pub message_id: Option<String>,
    /// In-Reply-To, without angle brackets (the last id when there are several).
    pub in_reply_to: Option<String>,
    /// Subject, decoded.
    pub subject: Option<String>,
    /// From, as `Name <address>`.
    pub from: Option<String>,
    /// Date in RFC 3339.
    pub date: Option<String>,
}

/// One mail, decoded.
#[derive(Debug, Clone, Default)]
pub struct Mail {
    /// Its headers.
    pub headers: MailHeaders,
    /// The text searched for envelopes: its text parts, one after another.
    pub text: String,
    /// What was not read as its sender's client showed it (see [`Note`]).
    pub notes: Vec<Note>,
    /// The messages forwarded in it as attachments (`message/rfc822`), each read as a mail
    /// of its own: its envelopes carry its headers, not the forward's.
    pub forwarded: Vec<Mail>,
}

impl Mail {
    /// This mail and every message forwarded in it, depth first, each with its name in a
    /// report: `mail N` for the `n`th mail (counted from 1) of an input, then `mail N,
    /// forwarded message 1`, `mail N, forwarded message 1.2` (the second forwarded in the
    /// first), ….
    pub fn each(&self, n: usize) -> Vec<(String, &Mail)> {
        let mut out = Vec::new();
        let mut stack = vec![(format!("mail {n}"), None::<String>, self)];
        while let Some((name, path, mail)) = stack.pop() {
            for (i, inner) in mail.forwarded.iter().enumerate().rev() {
                let path = match &path {
                    Some(p) => format!("{p}.{}", i + 1),
                    None => (i + 1).to_string(),
                };
                stack.push((
                    format!("mail {n}, forwarded message {path}"),
                    Some(path),
                    inner,
                ));
            }
            out.push((name, mail));
        }
        out
    }
}

/// Every mail of an input.
pub fn read_mails(bytes: &[u8], kind: MailKind) -> Vec<Mail> {
    match kind {
        MailKind::Eml => vec![decode(bytes)],
        MailKind::Mbox => mail_parser::mailbox::mbox::MessageIterator::new(bytes)
            .filter_map(Result::ok)
            .map(|m| decode(m.contents()))
            .collect(),
    }
}

/// `s` with a space between any two `[` (or `]`) in a row. Replacing `[[` once is not
/// enough: in `[[[` it leaves a `[[` behind.
pub(super) fn no_double_brackets(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev = None;
    for c in s.chars() {
        if matches!(c, '[' | ']') && prev == Some(c) {
            out.push(' ');
        }
        out.push(c);
        prev = Some(c);
    }
    out
}

/// The `meta: email` block for `h`: only the headers the mail has.
pub fn meta_block(h: &MailHeaders) -> MetaBlock {
    let mut entries = Vec::new();
    let mut add = |k: &str, v: &Option<String>, bracket: bool| {
        if let Some(v) = v {
            let v = if bracket { format!("<{v}>") } else { v.clone() };
            entries.push((k.to_string(), v));
        }
    };
    add("Message-ID", &h.message_id, true);
    add("In-Reply-To", &h.in_reply_to, true);
    add("Subject", &h.subject, false);
    add("From", &h.from, false);
    add("Date", &h.date, false);
    MetaBlock {
        namespace: NAMESPACE.to_string(),
        entries,
    }
}

/// The text to import for `mails`: every envelope found, one after another. An envelope gets
/// a `meta: email` block with its mail's headers when all of these hold, and is otherwise
/// passed on exactly as received:
/// - it is unsigned (`sig: none` or no `sig:`) and has no `hash:`, since both cover the META
///   blocks and a block added would break them;
/// - it has no `meta: email` block yet (the first gateway's record stays);
/// - its mail's Message-ID is not the one [`message_id_for`] derives from its own message
///   id: such a mail was made from this very envelope by `export --format eml`, and its
///   headers say nothing the envelope does not;
/// - it parses without errors, and its message id is not stored yet, or stored with this
///   very block (the same mail imported again): a copy of a stored message stays a duplicate
///   rather than becoming a conflicting version. `stored` answers, for a message id, `None`
///   when it is not stored, else the stored envelope's `meta: email` block if it has one.
pub fn gateway_text(
    mails: &[Mail],
    opts: &Options,
    stored: &dyn Fn(&str) -> Option<Option<MetaBlock>>,
) -> String {
    let mut out = String::new();
    let all = mails
        .iter()
        .flat_map(|m| m.each(0).into_iter().map(|(_, m)| m));
    for mail in all {
        let ex = protocol::extract(&mail.text, opts);
        for p in &ex.envelopes {
            if !out.is_empty() {
                out.push('\n');
            }
            let env = &p.envelope;
            let unsigned = env
                .sig
                .as_deref()
                .is_none_or(|s| s.trim().is_empty() || s.trim().eq_ignore_ascii_case("none"));
            let own = match (env.message(), &mail.headers.message_id) {
                // Exported under the id as stored, which may differ in case from the text's.
                (Some(id), Some(mid)) => {
                    message_id_for(id) == *mid
                        || message_id_for(&crate::protocol::id::key(id)) == *mid
                }
                _ => false,
            };
            let block = meta_block(&mail.headers);
            let fresh = match env.message().map(stored) {
                None | Some(None) => true,
                Some(Some(Some(b))) => b == block,
                Some(Some(None)) => false,
            };
            let add = unsigned
                && env.hash.is_none()
                && env.meta_block(NAMESPACE).is_none()
                && !own
                && !p.has_errors()
                && mail.headers != MailHeaders::default()
                && fresh;
            let with_block = add.then(|| {
                let mut env = env.clone();
                env.meta.push(block);
                protocol::render(&env)
            });
            match with_block {
                // The block must not push an envelope within the size limit over it: the
                // error would be the gateway's, blamed on the sender.
                Some(text) if text.len() <= opts.size_limit => out.push_str(&text),
                _ => out.push_str(&p.received_text(&mail.text)),
            }
        }
    }
    out
}

/// The Message-ID (without angle brackets) of the mail made from the envelope with message
/// id `id`: `<id>@crosstalk.invalid` when the id is made of characters a Message-ID may hold
/// unquoted, else a digest of it. The same id always gives the same Message-ID.
pub fn message_id_for(id: &str) -> String {
    let plain = !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._+".contains(&b));
    if plain {
        format!("{id}@{ID_DOMAIN}")
    } else {
        let d = Sha256::digest(id.as_bytes());
        let hex: String = d[..16].iter().map(|b| format!("{b:02x}")).collect();
        format!("{hex}@{ID_DOMAIN}")
    }
}

/// What a mail is made from.
#[derive(Debug, Clone)]
pub struct Outgoing<'a> {
    /// The envelope's message id.
    pub message: &'a str,
    /// Its parent's message id.
    pub parent: Option<&'a str>,
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
    /// A stored message's mail.
    pub fn of(m: &'a crate::store::StoredMessage, context: Option<&'a str>) -> Self {
        let date = m
            .received_at
            .parse::<jiff::Timestamp>()
            .map(|t| t.as_second())
            .unwrap_or(0);
        Outgoing {
            message: &m.id,
            parent: m.parent.as_deref(),
            context,
            intent: m.intent.as_deref(),
            from: &m.envelope.banner.from,
            to: &m.envelope.banner.to,
            date,
            envelope: m.carried().into(),
        }
    }
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
        b = b
            .in_reply_to(message_id_for(p))
            .references(message_id_for(p));
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

    const ENV: &str = "[[ALICE→BOB v1.1]]\nthread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K\nmessage: 01J9J3D3M6A4M3WQX8G1ZQ0S7M\ncontext: plans\nintent: REQUEST\nbody: |\n  From here on, caf\u{e9}?\n  = sign =20 and a long line ";

    fn env() -> String {
        format!("{ENV}{}\nsig: none\n[[END]]\n", "x".repeat(200))
    }

    fn outgoing(e: &str) -> Outgoing<'_> {
        Outgoing {
            message: "01J9J3D3M6A4M3WQX8G1ZQ0S7M",
            parent: Some("01J9J3D3M6A4M3WQX8G1ZQ0S7K"),
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
    fn runs_of_brackets_are_broken_up_whatever_their_length() {
        assert_eq!(no_double_brackets("[[[x]]]"), "[ [ [x] ] ]");
        assert_eq!(no_double_brackets("[[A→B v1]]"), "[ [A→B v1] ]");
        assert_eq!(no_double_brackets("[x] [y]"), "[x] [y]");
        assert_eq!(no_double_brackets("][]["), "][][");
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
    fn a_foreign_mail_gets_a_meta_email_block_unless_signed() {
        let mut raw = b"From: Bob <bob@example.com>\r\nSubject: =?utf-8?q?caf=C3=A9?= [[X\xe2\x86\x92Y v1]]\r\nMessage-ID: <abc@mail.example>\r\nIn-Reply-To: <prev@mail.example>\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n".to_vec();
        raw.extend_from_slice(
            b"[[BOB=E2=86=92ALICE v1.1]]\r\nintent: REQUEST\r\nbody: |\r\n  hi=\r\n there\r\nsig: none\r\n[[END]]\r\n",
        );
        let mail = decode(&raw);
        assert_eq!(mail.headers.from.as_deref(), Some("Bob <bob@example.com>"));
        let text = gateway_text(std::slice::from_ref(&mail), &Options::default(), &|_| None);
        let ex = protocol::extract(&text, &Options::default());
        assert_eq!(ex.envelopes.len(), 1, "{text}");
        let e = &ex.envelopes[0].envelope;
        assert_eq!(e.body.as_deref(), Some("hi there"));
        let block = e.meta_block(NAMESPACE).expect("meta: email");
        assert_eq!(block.get("Message-ID"), Some("<abc@mail.example>"));
        assert_eq!(block.get("In-Reply-To"), Some("<prev@mail.example>"));
        assert_eq!(block.get("Subject"), Some("café [ [X→Y v1] ]"));
        // A signed envelope is passed on as received.
        let signed = Mail {
            headers: mail.headers.clone(),
            text: mail
                .text
                .replace("sig: none", "sig: ed25519:pkid=k;sig=AAAA"),
            ..Mail::default()
        };
        let text = gateway_text(&[signed], &Options::default(), &|_| None);
        assert!(!text.contains("meta: email"), "{text}");
        // An envelope the block would push over the size limit is passed on as received,
        // and imports: the limit is the sender's, not the gateway's.
        let near = Mail {
            headers: mail.headers.clone(),
            text: mail.text.clone(),
            ..Mail::default()
        };
        let limit = protocol::extract(&near.text, &Options::default()).envelopes[0]
            .byte_range
            .len()
            + 20;
        let opts = Options {
            size_limit: limit,
            ..Options::default()
        };
        let text = gateway_text(&[near], &opts, &|_| None);
        assert!(!text.contains("meta: email"), "{text}");
        assert!(!protocol::extract(&text, &opts).envelopes[0].has_errors());
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
}
