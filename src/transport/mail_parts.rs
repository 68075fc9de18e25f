//! Reading one mail for the text its sender's client showed, part by part: its text/plain
//! parts (unflowed, RFC 3676), its text/html parts when it has no plain text (as the lines a
//! mail client displays, see [`super::mail_html`]), text attachments (an envelope mailed as a
//! `.crosstalk` file), and the messages forwarded in it as attachments (`message/rfc822`,
//! Thunderbird's and Gmail's "forward as attachment"), each read the same way with its own
//! headers, to [`MAX_DEPTH`] levels.

use mail_parser::{Message, MessageParser, MessagePart, MimeHeaders, PartType};

use super::mail::{Mail, MailHeaders, no_double_brackets};
use crate::protocol::{Code, Diagnostic, Options};

/// How many messages deep, one forwarded inside another, are read. Forwarding a forward as
/// an attachment nests one level each time; eight is more than people do, and a bound keeps
/// a hostile mail of a hundred thousand nested messages from costing more than its size.
pub(crate) const MAX_DEPTH: usize = 8;

/// What in a mail was not read as its sender's client showed it, said on the import's
/// report (and by `parse`, `fmt` and `check`) rather than passed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// Text part `part` (counted from 1 among the parts searched) holds bytes that are not
    /// UTF-8 where it says it is, from `at` (line and column of its text): mail-parser read
    /// them as U+FFFD. Only a mail's first such part is noted.
    NotUtf8 { part: usize, at: (u32, u32) },
    /// HTML part `part` holds an envelope with no line structure: it was read as a one-line
    /// envelope.
    HtmlWithoutLines { part: usize },
    /// A message forwarded in this one is nested deeper than [`MAX_DEPTH`]: not read.
    TooDeep,
    /// Text part `part` names a character set (`charset`, as written, made printable and
    /// cut short) that mail-parser cannot convert: it read the bytes as UTF-8, anything that
    /// is not UTF-8 as U+FFFD. Only a mail's first such part is noted.
    UnknownCharset { part: usize, charset: String },
}

impl Note {
    /// The warning for this note on the mail named `mail` (`mail 2`, `mail 1, forwarded
    /// message 1`).
    pub fn diagnostic(&self, mail: &str) -> Diagnostic {
        match *self {
            Note::NotUtf8 { part, at } => super::mail_utf8::diagnostic(mail, part, at),
            Note::HtmlWithoutLines { part } => Diagnostic::new(
                Code::HtmlLinesLost,
                1,
                1,
                format!(
                    "{mail}, text part {part} (HTML): an envelope stands on one line, with no \
                     <br>, <p>, <div> or <pre> between its lines, so its lines cannot be told \
                     apart; it was read as a one-line envelope and its body's line breaks are \
                     lost. Ask the sender to send plain text, or the envelope as a .crosstalk \
                     attachment"
                ),
            ),
            Note::UnknownCharset { part, ref charset } => {
                super::mail_utf8::unknown_charset(mail, part, charset)
            }
            Note::TooDeep => Diagnostic::new(
                Code::MailTooDeep,
                1,
                1,
                format!(
                    "{mail}: a message forwarded inside it is nested more than {MAX_DEPTH} \
                     messages deep and was not searched for envelopes; save the innermost \
                     message (.eml) from a mail client and import that"
                ),
            ),
        }
    }
}

/// Decodes one mail. Something mail-parser cannot read at all is taken as plain text, so an
/// envelope in it is still found.
pub fn decode(raw: &[u8]) -> Mail {
    match MessageParser::default().parse(raw) {
        Some(msg) => {
            let mail = read(&msg, raw, 0);
            drop_flat(msg);
            mail
        }
        None => as_text(raw),
    }
}

/// Bytes that hold no mail read as text.
fn as_text(raw: &[u8]) -> Mail {
    let (text, not_utf8) = crate::protocol::decode(raw);
    Mail {
        text: text.into_owned(),
        notes: (not_utf8.into_iter())
            .map(|d| Note::NotUtf8 {
                part: 1,
                at: (d.line, d.column),
            })
            .collect(),
        ..Mail::default()
    }
}

/// Drops a parsed message one level at a time: dropping it whole recurses once per nested
/// message, and a hostile mail nests a hundred thousand in a few megabytes (mail-parser
/// reads messages that are not encoded nested without a bound).
fn drop_flat(msg: Message<'_>) {
    let mut stack = vec![msg];
    while let Some(mut m) = stack.pop() {
        for part in &mut m.parts {
            if let PartType::Message(inner) = std::mem::take(&mut part.body) {
                stack.push(inner);
            }
        }
    }
}

/// The headers the gateway keeps, each one line with no control characters and no `[[`
/// (which would read as a banner once the value is written into an envelope).
fn headers(msg: &Message<'_>) -> MailHeaders {
    let one_line = |s: &str| -> Option<String> {
        let s: String = s
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
        (!s.is_empty()).then(|| no_double_brackets(&s))
    };
    let ids = |v: &mail_parser::HeaderValue<'_>| {
        v.as_text_list()
            .and_then(|l| l.last())
            .and_then(|s| one_line(s))
    };
    let from = msg.from().and_then(|a| a.first()).and_then(|a| {
        let addr = a.address().unwrap_or_default();
        match a.name() {
            Some(n) if !addr.is_empty() => one_line(&format!("{n} <{addr}>")),
            Some(n) => one_line(n),
            None => one_line(addr),
        }
    });
    MailHeaders {
        message_id: msg.message_id().and_then(one_line),
        in_reply_to: ids(msg.in_reply_to()),
        subject: msg.subject().and_then(one_line),
        from,
        date: msg.date().map(|d| d.to_rfc3339()),
    }
}

/// Reads `msg`, itself forwarded `depth` levels deep (0 for the mail itself). `stream` is
/// the bytes mail-parser read it from, where its parts' offsets point: the input for the
/// mail and for a message forwarded in it unencoded (read in the same pass), the decoded
/// bytes of one forwarded in base64 or quoted-printable.
fn read(msg: &Message<'_>, stream: &[u8], depth: usize) -> Mail {
    let mut parts = Parts {
        stream,
        texts: Vec::new(),
        notes: Vec::new(),
    };
    for i in 0..msg.text_body_count() {
        if let Some(part) = u32::try_from(i).ok().and_then(|i| msg.text_part(i)) {
            parts.body(part);
        }
    }
    let mut forwarded = Vec::new();
    for part in msg.attachments() {
        if let Some(inner) = part.message() {
            if depth < MAX_DEPTH {
                let within = match part.encoding {
                    mail_parser::Encoding::None => stream,
                    _ => inner.raw_message(),
                };
                forwarded.push(read(inner, within, depth + 1));
            } else {
                parts.too_deep();
            }
        } else if is_message(part) {
            // mail-parser reads messages encoded inside encoded messages three deep, and
            // leaves a deeper one as its decoded bytes: read here, under this module's bound.
            if depth >= MAX_DEPTH {
                parts.too_deep();
            } else if let Some(inner) = MessageParser::default().parse(part.contents()) {
                forwarded.push(read(&inner, part.contents(), depth + 1));
                drop_flat(inner);
            } else {
                forwarded.push(as_text(part.contents()));
            }
        } else {
            parts.attachment(part);
        }
    }
    Mail {
        headers: headers(msg),
        text: parts.texts.join("\n"),
        notes: parts.notes,
        forwarded,
    }
}

/// A `message/rfc822` (or `message/global`) part.
fn is_message(part: &MessagePart<'_>) -> bool {
    part.content_type().is_some_and(|ct| {
        ct.ctype().eq_ignore_ascii_case("message")
            && ct.subtype().is_some_and(|s| {
                s.eq_ignore_ascii_case("rfc822") || s.eq_ignore_ascii_case("global")
            })
    })
}

/// The texts of one message's parts, as they are read.
struct Parts<'m> {
    /// What the parts' offsets point into (see [`read`]).
    stream: &'m [u8],
    texts: Vec<String>,
    notes: Vec<Note>,
}

impl Parts<'_> {
    /// A part of the message's body: plain text (unflowed), or HTML as its lines.
    fn body(&mut self, part: &MessagePart<'_>) {
        match &part.body {
            PartType::Text(text) => {
                self.charset(part);
                self.utf8(part, text);
                self.texts.push(unflowed(part, text));
            }
            PartType::Html(html) => {
                self.charset(part);
                self.utf8(part, html);
                let text = super::mail_html::to_text(html);
                if one_line_envelope(&text) {
                    self.notes.push(Note::HtmlWithoutLines {
                        part: self.texts.len() + 1,
                    });
                }
                self.texts.push(text);
            }
            _ => {}
        }
    }

    /// An attachment: read when it is text (an envelope sent as a `.crosstalk`, `.aict`,
    /// `.txt` or `text/plain` file); an HTML attachment is a document, not the mail's text.
    fn attachment(&mut self, part: &MessagePart<'_>) {
        let text_file = part.attachment_name().is_some_and(|n| {
            let n = n.to_ascii_lowercase();
            n.ends_with(".crosstalk") || n.ends_with(".aict") || n.ends_with(".txt")
        });
        if (part.is_text() && !part.is_text_html()) || text_file {
            if let Some(t) = part.text_contents() {
                self.charset(part);
                self.utf8(part, t);
                self.texts.push(unflowed(part, t));
            }
        }
    }

    fn too_deep(&mut self) {
        if !self.notes.contains(&Note::TooDeep) {
            self.notes.push(Note::TooDeep);
        }
    }

    /// Notes the first text part whose character set mail-parser does not know (it read
    /// that part as UTF-8).
    fn charset(&mut self, part: &MessagePart<'_>) {
        let noted = (self.notes.iter()).any(|n| matches!(n, Note::UnknownCharset { .. }));
        if noted {
            return;
        }
        if let Some(charset) = super::mail_utf8::unknown_charset_of(part) {
            self.notes.push(Note::UnknownCharset {
                part: self.texts.len() + 1,
                charset,
            });
        }
    }

    /// Notes the first text part read with U+FFFD that held bytes that are not UTF-8: only
    /// such a text can have, and the others are not decoded a second time.
    fn utf8(&mut self, part: &MessagePart<'_>, text: &str) {
        let noted = (self.notes.iter()).any(|n| matches!(n, Note::NotUtf8 { .. }));
        if noted || !text.contains('\u{FFFD}') {
            return;
        }
        if let Some(at) = super::mail_utf8::first_invalid(self.stream, part) {
            self.notes.push(Note::NotUtf8 {
                part: self.texts.len() + 1,
                at,
            });
        }
    }
}

/// Text the sender's client flowed (RFC 3676) as the lines it was given.
fn unflowed(part: &MessagePart<'_>, text: &str) -> String {
    let params = part
        .content_type()
        .and_then(|ct| ct.attributes())
        .unwrap_or_default()
        .iter()
        .map(|a| (a.name.as_ref(), a.value.as_ref()));
    match super::flowed::Flowed::from_params(params) {
        Some(how) => super::flowed::unflow(text, how),
        None => text.to_string(),
    }
}

/// Whether an envelope in `text` could only be read as one collapsed line: its lines were
/// lost before it was read (the parser's own judgement, `collapsed-newlines`).
fn one_line_envelope(text: &str) -> bool {
    if !text.contains("[[") {
        return false;
    }
    crate::protocol::extract(text, &Options::default())
        .envelopes
        .iter()
        .any(|p| (p.diagnostics.iter()).any(|d| d.code == Code::CollapsedNewlines))
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;

    use super::*;
    use crate::protocol::namespaces::EMAIL as NAMESPACE;
    use crate::transport::mail::gateway_text;

    const ENV: &str = "[[KALLE→CLAUDE v1.1]]\nthread: 01K0000000000000000000000A\nmessage: 01K0000000000000000000000B\ncontext: forwarded\nintent: REQUEST\nbody: |\n  first line\n\n  after a blank, caf\u{e9}\nsig: none\n[[END]]\n";

    fn crlf(s: &str) -> String {
        s.replace("\r\n", "\n").replace('\n', "\r\n")
    }

    /// The original mail, as a client sends it: plain text and HTML alternatives.
    fn original() -> String {
        let qp: String = ENV
            .replace('\n', "\r\n")
            .chars()
            .map(|c| match c {
                '→' => "=E2=86=92".to_string(),
                'é' => "=C3=A9".to_string(),
                c => c.to_string(),
            })
            .collect();
        crlf(&format!(
            "From: Kalle <kalle@example.com>\nTo: claude@example.com\nSubject: relay\n\
             Message-ID: <orig1@mail.example>\nDate: Mon, 6 Jan 2025 10:00:00 +0000\n\
             MIME-Version: 1.0\nContent-Type: multipart/alternative; boundary=\"alt\"\n\n\
             --alt\nContent-Type: text/plain; charset=utf-8\n\
             Content-Transfer-Encoding: quoted-printable\n\n{qp}\n\
             --alt\nContent-Type: text/html; charset=utf-8\n\n<div>not this one</div>\n--alt--\n"
        ))
    }

    /// `inner` forwarded as an attachment in `encoding`, as Thunderbird and Gmail write it.
    fn forward(inner: &[u8], encoding: &str, n: usize) -> Vec<u8> {
        let body = match encoding {
            "base64" => base64::engine::general_purpose::STANDARD
                .encode(inner)
                .as_bytes()
                .chunks(76)
                .collect::<Vec<_>>()
                .join(&b"\r\n"[..]),
            "quoted-printable" => String::from_utf8_lossy(inner)
                .replace('=', "=3D")
                .into_bytes(),
            _ => inner.to_vec(),
        };
        let mut mail = crlf(&format!(
            "From: Ops <ops@example.com>\nTo: desk@example.com\nSubject: Fwd: relay\n\
             Message-ID: <fwd{n}@mail.example>\nMIME-Version: 1.0\n\
             Content-Type: multipart/mixed; boundary=\"mix{n}\"\n\n\
             This is a multi-part message in MIME format.\n--mix{n}\n\
             Content-Type: text/plain; charset=UTF-8; format=flowed\n\n\
             See the attached message.\n\n--mix{n}\n\
             Content-Type: message/rfc822; name=\"relay.eml\"\n\
             Content-Transfer-Encoding: {encoding}\n\
             Content-Disposition: attachment; filename=\"relay.eml\"\n\n"
        ))
        .into_bytes();
        mail.extend(body);
        mail.extend(format!("\r\n--mix{n}--\r\n").bytes());
        mail
    }

    fn envelopes(mail: &Mail) -> Vec<crate::protocol::Envelope> {
        let text = gateway_text(std::slice::from_ref(mail), &Options::default(), &|_| None);
        crate::protocol::extract(&text, &Options::default())
            .envelopes
            .into_iter()
            .map(|p| p.envelope)
            .collect()
    }

    #[test]
    fn a_message_forwarded_as_an_attachment_is_read_with_its_own_headers() {
        let want = crate::protocol::extract(ENV, &Options::default()).envelopes[0]
            .envelope
            .clone();
        for encoding in ["7bit", "base64", "quoted-printable"] {
            let mail = decode(&forward(original().as_bytes(), encoding, 1));
            assert_eq!(mail.forwarded.len(), 1, "{encoding}");
            assert!(mail.notes.is_empty(), "{encoding}: {:?}", mail.notes);
            let got = envelopes(&mail);
            assert_eq!(got.len(), 1, "{encoding}");
            assert_eq!(got[0].body, want.body, "{encoding}");
            // The block records the mail that carried the envelope, not the forward.
            let block = got[0].meta_block(NAMESPACE).expect("meta: email");
            assert_eq!(block.get("Message-ID"), Some("<orig1@mail.example>"));
            assert_eq!(block.get("Subject"), Some("relay"));
        }
    }

    #[test]
    fn forwards_of_forwards_are_read_to_the_bound_and_no_deeper() {
        let encodings = ["base64", "7bit", "quoted-printable", "base64", "base64"];
        let mut mail = original().into_bytes();
        for (n, e) in encodings.iter().enumerate() {
            mail = forward(&mail, e, n);
        }
        // Five levels, more than mail-parser reads of encoded messages by itself.
        let read = decode(&mail);
        assert_eq!(envelopes(&read).len(), 1);
        let names: Vec<String> = read.each(1).into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names.last().map(String::as_str),
            Some("mail 1, forwarded message 1.1.1.1.1")
        );
        // One level deeper than the bound: not read, and said.
        let mut mail = original().into_bytes();
        for n in 0..=MAX_DEPTH {
            mail = forward(&mail, "base64", n);
        }
        let read = decode(&mail);
        assert!(envelopes(&read).is_empty());
        let deepest = read
            .each(1)
            .into_iter()
            .last()
            .map(|(_, m)| m.notes.clone());
        assert_eq!(deepest, Some(vec![Note::TooDeep]));
    }

    #[test]
    fn a_hostile_nest_of_messages_is_read_without_a_crash() {
        let mut mail = String::new();
        for _ in 0..100_000 {
            mail.push_str("Subject: x\r\nContent-Type: message/rfc822\r\n\r\n");
        }
        mail.push_str(&crlf(ENV));
        let read = decode(mail.as_bytes());
        assert!(envelopes(&read).is_empty());
        assert_eq!(read.each(1).len(), MAX_DEPTH + 1);
    }

    #[test]
    fn an_html_only_mail_gives_the_envelope_of_its_plain_text_twin() {
        let want = crate::protocol::extract(ENV, &Options::default()).envelopes[0]
            .envelope
            .clone();
        let lines: Vec<String> = ENV
            .lines()
            .map(|l| match l.strip_prefix("  ") {
                Some(rest) => format!("<div>&nbsp; {rest}</div>"),
                None if l.is_empty() => "<div><br></div>".into(),
                None => format!("<div>{}</div>", l.replace('→', "&#8594;")),
            })
            .collect();
        let mail = crlf(&format!(
            "From: k@example.com\nSubject: s\nMIME-Version: 1.0\n\
             Content-Type: text/html; charset=UTF-8\n\n\
             <html><head><style>div {{ margin: 0 }}</style></head><body><div dir=\"ltr\">{}</div></body></html>\n",
            lines.join("")
        ));
        let read = decode(mail.as_bytes());
        assert!(read.notes.is_empty(), "{:?}", read.notes);
        let got = envelopes(&read);
        assert_eq!(got.len(), 1, "{}", read.text);
        assert_eq!(got[0].body, want.body);
        assert_eq!(got[0].headers, want.headers);
    }

    #[test]
    fn an_html_envelope_without_line_structure_is_said_to_have_lost_its_lines() {
        let one_line = ENV.replace('\n', " ");
        let mail = crlf(&format!(
            "From: k@example.com\nSubject: s\nMIME-Version: 1.0\n\
             Content-Type: text/html; charset=UTF-8\n\n<p>{one_line}</p>\n"
        ));
        let read = decode(mail.as_bytes());
        assert_eq!(read.notes, [Note::HtmlWithoutLines { part: 1 }]);
        let d = read.notes[0].diagnostic("mail 1");
        assert_eq!(d.code, Code::HtmlLinesLost);
        assert!(
            d.message.starts_with("mail 1, text part 1 (HTML): "),
            "{}",
            d.message
        );
        // The same text as plain text is a paste's business: no note.
        let plain = mail.replace("text/html", "text/plain");
        assert!(decode(plain.as_bytes()).notes.is_empty());
    }

    #[test]
    fn text_that_is_not_utf8_is_placed_in_the_forwarded_message_that_holds_it() {
        let mut inner = crlf(
            "From: k@example.com\nSubject: s\nMIME-Version: 1.0\n\
             Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n",
        )
        .into_bytes();
        let text = crlf(ENV).into_bytes();
        let at = text
            .windows(4)
            .position(|w| w == b"line")
            .unwrap_or_default();
        inner.extend_from_slice(&text[..at]);
        inner.push(0xFF);
        inner.extend_from_slice(&text[at..]);
        // Read in mail-parser's pass over the whole mail, and from decoded bytes of its own.
        for encoding in ["8bit", "base64"] {
            let read = decode(&forward(&inner, encoding, 1));
            let named: Vec<(String, Vec<Note>)> = (read.each(1).into_iter())
                .map(|(n, m)| (n, m.notes.clone()))
                .collect();
            let place = Note::NotUtf8 {
                part: 1,
                at: (7, 9),
            };
            assert_eq!(
                named,
                [
                    ("mail 1".to_string(), vec![]),
                    ("mail 1, forwarded message 1".to_string(), vec![place]),
                ],
                "{encoding}"
            );
        }
    }

    #[test]
    fn a_part_in_a_character_set_that_cannot_be_converted_is_named_with_it() {
        let mail = |charset: &str, body: &[u8]| {
            let mut m = crlf(&format!(
                "From: k@example.com\nSubject: s\nMIME-Version: 1.0\n\
                 Content-Type: multipart/mixed; boundary=\"b\"\n\n--b\n\
                 Content-Type: text/plain; charset=utf-8\n\nsee below\n--b\n\
                 Content-Type: text/plain; charset={charset}\n\
                 Content-Transfer-Encoding: 8bit\n\n"
            ))
            .into_bytes();
            m.extend_from_slice(body);
            m.extend_from_slice(b"\r\n--b--\r\n");
            decode(&m)
        };
        let read = mail("x-klingon", b"caf\xe9 [[END]]");
        assert_eq!(
            read.notes,
            [Note::UnknownCharset {
                part: 2,
                charset: "x-klingon".into()
            }]
        );
        let d = read.notes[0].diagnostic("mail 1");
        assert_eq!(d.code, Code::UnknownCharset);
        assert!(
            d.message
                .starts_with("mail 1, text part 2: its character set `x-klingon`"),
            "{}",
            d.message
        );
        // What the sender wrote reaches the terminal made printable, and cut short.
        let read = mail(&format!("\"x\u{1b}[31m{}\"", "y".repeat(60)), b"text");
        let Some(Note::UnknownCharset { charset, .. }) = read.notes.first() else {
            panic!("{:?}", read.notes)
        };
        assert!(
            !charset.contains('\u{1b}') && charset.ends_with('…'),
            "{charset}"
        );
        assert!(charset.chars().count() <= 41, "{charset}");
        // Character sets mail-parser converts, and the UTF-8 names, are not noted.
        for known in [
            "iso-8859-1",
            "windows-1252",
            "UTF-8",
            "utf8",
            "Shift_JIS",
            "us-ascii",
        ] {
            assert!(mail(known, b"plain").notes.is_empty(), "{known}");
        }
    }
}
