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
//! Out (`mail_out`): [`build`] writes one RFC 5322 message per envelope: the subject the
//! spec names, a Message-ID derived from the envelope's message id (so exporting twice gives
//! the same mail, and importing it adds nothing), In-Reply-To and References naming its
//! ancestors so that mail clients thread the conversation, and the whole envelope as a UTF-8
//! text/plain body in 7bit, quoted-printable or base64, whichever carries it unchanged.
//! Several messages go into one file as an mboxrd mailbox ([`write_mbox`]).

use crate::protocol::namespaces;
use sha2::{Digest, Sha256};

use crate::protocol::{self, MetaBlock, Options};

pub use super::mail_out::{Outgoing, REFERENCES_KEPT, build, write_mbox};
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

/// The domain of the Message-IDs crosstalk derives. `.invalid` is reserved (RFC 2606): it
/// can never collide with a real mail domain.
pub(super) const ID_DOMAIN: &str = "crosstalk.invalid";

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
        namespace: namespaces::EMAIL.to_string(),
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
                && env.meta_block(namespaces::EMAIL).is_none()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_brackets_are_broken_up_whatever_their_length() {
        assert_eq!(no_double_brackets("[[[x]]]"), "[ [ [x] ] ]");
        assert_eq!(no_double_brackets("[[A→B v1]]"), "[ [A→B v1] ]");
        assert_eq!(no_double_brackets("[x] [y]"), "[x] [y]");
        assert_eq!(no_double_brackets("][]["), "][][");
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
        let block = e
            .meta_block(crate::protocol::namespaces::EMAIL)
            .expect("meta: email");
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
}
