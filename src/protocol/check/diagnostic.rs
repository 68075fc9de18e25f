//! Diagnostics: what is wrong with an input, where (1-based line and column), and what to do.
//!
//! Codes are stable kebab-case names: scripts match on them, so a code is never renamed; a new
//! problem gets a new code.

use serde::Serialize;
use std::borrow::Cow;
use std::fmt;

/// How bad a diagnostic is. An envelope with an `Error` is not relayed or threaded as is;
/// a `Warning` reports a repair or a doubtful value and keeps the envelope usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Usable, but look at it.
    Warning,
    /// Not usable as is.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

macro_rules! codes {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $sev:ident; )*) => {
        /// A stable diagnostic code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $( $(#[$doc])* $variant, )*
        }

        impl Code {
            /// Every code, for documentation and tests.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The stable name, e.g. `bad-id`.
            pub fn as_str(self) -> &'static str {
                match self { $( Code::$variant => $name, )* }
            }

            /// The severity this code always has.
            pub fn severity(self) -> Severity {
                match self { $( Code::$variant => Severity::$sev, )* }
            }
        }
    };
}

codes! {
    /// No envelope was found in the input.
    NoEnvelope = "no-envelope", Error;
    /// A `thread`, `parent` or `message` value that is neither a ULID nor a UUIDv7.
    BadId = "bad-id", Error;
    /// Intent ERROR without a `meta: error` block carrying `Code`.
    ErrorCodeMissing = "error-code-missing", Error;
    /// A `meta: error` `Code` outside the error taxonomy.
    ErrorCodeUnknown = "error-code-unknown", Error;
    /// A banner name or address that does not parse.
    BadAddress = "bad-address", Error;
    /// An `X-Route` that is not a `→` chain of addresses.
    BadRoute = "bad-route", Error;
    /// An `X-Reply-To` that is not an address.
    BadReplyTo = "bad-reply-to", Error;
    /// The envelope is larger than the size limit (E-TOO-LARGE).
    TooLarge = "too-large", Error;
    /// A banner version other than v1 / v1.x.
    UnsupportedVersion = "unsupported-version", Error;
    /// A known header (user, session, thread, parent, message, context, intent) given twice
    /// with different values.
    ConflictingHeader = "conflicting-header", Error;
    /// A line inside a META block that is not `Key: value`.
    BadMetaEntry = "bad-meta-entry", Error;
    /// A line among the headers that is neither a header, a META block nor the body.
    UnexpectedLine = "unexpected-line", Error;
    /// `parent` equal to `message`: the message would answer itself.
    SelfParent = "self-parent", Error;
    /// A banner followed directly by `[[END]]`.
    EmptyEnvelope = "empty-envelope", Error;
    /// An intent outside the registry (kept as written).
    UnknownIntent = "unknown-intent", Warning;
    /// A v1.0 intent (QUESTION, ANSWER, STATUS, PATCH, NOTE), mapped to its v1.1 name.
    LegacyIntent = "legacy-intent", Warning;
    /// A v1.1 RESPOND without `parent`, so it cannot be placed in a thread tree.
    RespondWithoutParent = "respond-without-parent", Warning;
    /// Repair: the envelope had no `[[END]]`.
    MissingEnd = "missing-end", Warning;
    /// Repair: the body's indentation was stripped by a chat window.
    BodyIndentStripped = "body-indent-stripped", Warning;
    /// Repair: some body lines lost their indentation.
    BodyIndentPartial = "body-indent-partial", Warning;
    /// Repair: the envelope's newlines were collapsed onto one line.
    CollapsedNewlines = "collapsed-newlines", Warning;
    /// Repair: the banner line also carried the first header (a line break lost after it).
    HeaderOnBanner = "header-on-banner", Warning;
    /// Repair: the body's first line stood on the `body:` (or `response:`) line and more
    /// body lines followed below it; they were read as one body.
    BodyOnKeyLine = "body-on-key-line", Warning;
    /// `body: >` (a YAML folded block): the body is literal text, so its lines were kept as
    /// written, as after `body: |`.
    FoldedBody = "folded-body", Warning;
    /// An `X-Priority` other than high, normal or low.
    UnknownPriority = "unknown-priority", Warning;
    /// A `PII` value other than present, redacted or none.
    UnknownPii = "unknown-pii", Warning;
    /// A `Consent` value that is neither a grant nor a refusal (`no`, `denied`, a grant with
    /// words after it): the envelope carries no consent, and personal data is not covered.
    UnknownConsent = "unknown-consent", Warning;
    /// An `Expires` that is not an ISO 8601 time.
    BadExpires = "bad-expires", Warning;
    /// An `Expires` already in the past.
    Expired = "expired", Warning;
    /// A banner without a version; v1 is assumed.
    MissingVersion = "missing-version", Warning;
    /// The `hash:` does not match the text: the paste may be truncated or edited.
    HashMismatch = "hash-mismatch", Warning;
    /// No `body:` line at all.
    MissingBody = "missing-body", Warning;
    /// Zero-width or byte-order-mark characters were removed from a structural line.
    InvisibleChars = "invisible-chars", Warning;
    /// Bidirectional control characters in a header or META value.
    BidiControl = "bidi-control", Warning;
    /// The same header given twice with the same value.
    DuplicateHeader = "duplicate-header", Warning;
    /// A header written after the body.
    HeaderAfterBody = "header-after-body", Warning;
    /// The older `meta: |` layout, read as `meta: legacy`.
    LegacyMeta = "legacy-meta", Warning;
    /// An `[[END]]` with no envelope open.
    StrayEnd = "stray-end", Warning;
    /// A banner with nothing of an envelope after it.
    LoneBanner = "lone-banner", Warning;
    /// A banner name or address, an announced `Key-ID` or a signature's key id whose
    /// letters mix scripts (`аlice` with a Cyrillic `а`): it reads as another one.
    MixedScript = "mixed-script", Warning;
    /// Bytes that are not UTF-8 were replaced with U+FFFD.
    InvalidUtf8 = "invalid-utf8", Warning;
    /// A mail's HTML part held an envelope without line structure (no `<br>`, `<p>`, `<div>`
    /// or `<pre>` between its lines): it was read as a one-line envelope, its body's line
    /// breaks lost.
    HtmlLinesLost = "html-lines-lost", Warning;
    /// A mail's text part names a character set that cannot be converted: it was read as
    /// UTF-8, what is not UTF-8 as U+FFFD.
    UnknownCharset = "unknown-charset", Warning;
    /// A message forwarded inside forwarded messages deeper than the gateway reads: what it
    /// holds was not searched for envelopes.
    MailTooDeep = "mail-too-deep", Warning;
    /// A `sig:` value in neither the `ed25519:` nor the detached JWS form.
    UnknownSigFormat = "unknown-sig-format", Warning;
    /// A line between a signature's `sig:` and `[[END]]` other than `hash:`: it is outside
    /// the signed text, so it is never read, and the envelope cannot be verified.
    ContentAfterSig = "content-after-sig", Error;
    /// A line between `sig: none` (or a malformed `sig:`) and `[[END]]` other than `hash:`:
    /// not read, because nothing after `sig:` is content.
    IgnoredAfterSig = "ignored-after-sig", Warning;
    /// `body:` without `intent:`: read as RESPOND when it answers something, else no intent.
    MissingIntent = "missing-intent", Warning;
    /// A v1.0 envelope (no `thread:`) without `session:`, which v1.0 requires.
    MissingSession = "missing-session", Warning;
    /// No `sig:` line at all (`sig: none` says "unsigned" explicitly).
    MissingSig = "missing-sig", Warning;
    /// Text before a banner on its line (a shell `echo '`, a list bullet, a prompt marker)
    /// was removed to read the envelope.
    TextBeforeBanner = "text-before-banner", Warning;
    /// A banner inside a line of prose, not read as an envelope.
    BannerInText = "banner-in-text", Warning;
    /// A META value written over several lines (continuation lines, or an open YAML flow
    /// list) whose bracket never closed before the block ended.
    UnclosedMetaValue = "unclosed-meta-value", Warning;
    /// `meta: privacy` says `PII: none` or `redacted`, yet the body holds personal data
    /// (an e-mail address, phone number, IBAN or card number).
    PiiUndeclared = "pii-undeclared", Warning;
    /// The body, a header or a META value holds Unicode tag characters: invisible text a
    /// model reads (see `protocol::hidden`).
    HiddenText = "hidden-text", Warning;
    /// The `sig:` value carries parts besides `pkid=` and `sig=` (or hidden text): no
    /// signature covers them, and crosstalk does not read them.
    SigExtra = "sig-extra", Warning;
    /// A META block names the same key twice: with different values the entry says nothing
    /// for sure (the consent ledger reads neither), with the same value one is redundant.
    MetaRepeated = "meta-repeated", Warning;
    /// The message id is already stored with different content (found on import, or by
    /// `check` against a database): the new text is kept as a conflicting version, never in
    /// the stored message's place.
    IdConflict = "id-conflict", Error;
    /// The message's `parent` chain leads back to itself through stored messages (A answers
    /// B, B answers A): the tree shows the loop's first message as a root.
    ParentCycle = "parent-cycle", Warning;
    /// An id that was not a ULID/UUIDv7 was replaced with a fresh one on import; the original
    /// is kept as an alias that later envelopes may name.
    FreshId = "fresh-id", Warning;
    /// A `meta: keys` announcement that cannot be read (no `Key-ID:`, a key in no known
    /// form); the key is not pinned.
    KeyAnnouncement = "key-announcement", Warning;
    /// A key id's key changed: a different key was announced for it, or a signature failed
    /// against its trusted key. Its messages are alarms until `crosstalk keys trust`.
    KeyChanged = "key-changed", Warning;
    /// A revocation (intent REVOKE or `meta: revocation`) not signed by a trusted key: it
    /// has no effect.
    UnverifiedRevocation = "unverified-revocation", Warning;
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One finding about the input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Error or warning; always the code's own severity.
    pub severity: Severity,
    /// 1-based line in the input.
    pub line: u32,
    /// 1-based column (in characters) in that line.
    pub column: u32,
    /// Stable code.
    pub code: Code,
    /// What is wrong and what to do about it. Most messages are fixed text, borrowed rather
    /// than copied for each finding: an input of a million findings holds them while they
    /// wait to be written in order, and a copy of each message was most of what they took.
    pub message: Cow<'static, str>,
}

impl Diagnostic {
    /// A diagnostic with the code's severity.
    pub fn new(code: Code, line: u32, column: u32, message: impl Into<Cow<'static, str>>) -> Self {
        Diagnostic {
            severity: code.severity(),
            line,
            column,
            code,
            message: message.into(),
        }
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    /// `line:col: severity: message [code]`; callers prefix the file name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (mut line, mut column) = ([0; 10], [0; 10]);
        for part in self.parts(&mut line, &mut column) {
            f.write_str(part)?;
        }
        Ok(())
    }
}

impl Diagnostic {
    /// The pieces of the displayed form, in order, the numbers written into `line` and
    /// `column`: `check` writes one line per finding (tens of thousands for a large
    /// transcript), and appending the pieces costs a fraction of formatting them.
    pub fn parts<'s>(&'s self, line: &'s mut [u8; 10], column: &'s mut [u8; 10]) -> [&'s str; 10] {
        let severity = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        [
            decimal(self.line, line),
            ":",
            decimal(self.column, column),
            ": ",
            severity,
            ": ",
            &self.message,
            " [",
            self.code.as_str(),
            "]",
        ]
    }
}

/// `n` in decimal digits, written into the end of `buf`.
fn decimal(mut n: u32, buf: &mut [u8; 10]) -> &str {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[at..]).unwrap_or("0")
}
