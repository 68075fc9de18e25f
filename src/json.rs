//! The JSON shapes of the command line and of exports, kept in one place because scripts
//! depend on them.

use std::io::Write;

use serde::Serialize;
use serde_json::ser::Formatter;
use serde_json::{Value, json};

use crate::sanitize::is_unsafe;

use crate::protocol::{Diagnostic, Envelope, Parsed};
use crate::store::StoredMessage;

/// One envelope as `parse --json` prints it: the spec's fields flat (absent ones `null`),
/// every header and META block in order, the span and the diagnostics. `intent` is its
/// intent as read in its input ([`crate::protocol::Sessions`]).
pub fn envelope(p: &Parsed, intent: Option<&crate::protocol::Intent>) -> Value {
    let mut v = fields(&p.envelope, intent.map(|i| i.to_string()));
    v["span"] = json!(p.span);
    v["collapsed"] = json!(p.collapsed);
    v["reply_form"] = json!(p.reply_form);
    v["diagnostics"] = json!(p.diagnostics);
    v
}

/// [`envelope`] as `parse --json` writes it, the same bytes, without a `serde_json::Value`
/// of each diagnostic: an envelope at the size limit can hold half a million findings, and
/// their values took a kilobyte each and most of the time.
pub(crate) fn envelope_json<'a>(
    p: &'a Parsed,
    intent: Option<&crate::protocol::Intent>,
) -> EnvelopeJson<'a> {
    let mut fields = fields(&p.envelope, intent.map(|i| i.to_string()));
    fields["span"] = json!(p.span);
    fields["collapsed"] = json!(p.collapsed);
    fields["reply_form"] = json!(p.reply_form);
    // A stand-in that keeps the key's place among the sorted keys.
    fields["diagnostics"] = Value::Null;
    EnvelopeJson {
        fields,
        diagnostics: &p.diagnostics,
    }
}

/// See [`envelope_json`]: the envelope's fields as a value, its diagnostics written where
/// the value holds a stand-in.
pub(crate) struct EnvelopeJson<'a> {
    fields: Value,
    diagnostics: &'a [Diagnostic],
}

impl Serialize for EnvelopeJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Value::Object(fields) = &self.fields else {
            return self.fields.serialize(s);
        };
        let mut map = s.serialize_map(Some(fields.len()))?;
        for (k, v) in fields {
            if k == "diagnostics" {
                map.serialize_entry(k, &Diagnostics(self.diagnostics))?;
            } else {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

/// Diagnostics written as a list of [`DiagnosticJson`], one at a time.
struct Diagnostics<'a>(&'a [Diagnostic]);

impl Serialize for Diagnostics<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(diagnostic))
    }
}

/// A stored message: the envelope fields of `parse --json` plus where it stands.
pub fn stored(m: &StoredMessage) -> Value {
    let mut v = fields(&m.envelope, m.intent.clone());
    v["status"] = json!(m.status);
    v["direction"] = json!(m.direction);
    v["received_at"] = json!(m.received_at);
    v["depth"] = json!(m.depth);
    v["diagnostics"] = m.diagnostics.clone();
    v
}

/// The envelope's own fields, shared by parsed and stored envelopes.
fn fields(e: &Envelope, intent: Option<String>) -> Value {
    let mut v = json!({
        "from": e.banner.from,
        "to": e.banner.to,
        "version": e.banner.version,
        "user": e.user(),
        "session": e.session(),
        "thread": e.thread(),
        "parent": e.parent(),
        "message": e.message(),
        "context": e.context(),
        "intent": intent,
        "intent_raw": e.intent_raw(),
        "body": e.body,
        "sig": e.sig,
        "hash": e.hash,
        "headers": e.headers.iter().map(|h| [&h.key, &h.value]).collect::<Vec<_>>(),
        "meta": e.meta.iter().map(|m| json!({
            "namespace": m.namespace,
            "entries": m.entries.iter().map(|(k, v)| [k, v]).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    // Audit hops read and checked (only when there are any), for scripts that follow a
    // relay chain.
    let hops = crate::protocol::audit::timeline(e);
    if !hops.is_empty() {
        v["audit"] = json!(hops);
    }
    // `meta: safety` read (only when it says something): content warnings, allowed uses.
    if let Some(safety) = crate::protocol::safety::reading(e) {
        v["safety"] = json!(safety);
    }
    v
}

/// The whole `parse --json` object, as `parse --json` writes it piece by piece.
#[cfg(test)]
pub fn extraction(ex: &crate::protocol::Extraction) -> Value {
    let mut sessions = crate::protocol::Sessions::default();
    let envelopes: Vec<Value> = (ex.envelopes.iter())
        .map(|p| envelope(p, sessions.intent(p).as_ref()))
        .collect();
    json!({
        "envelopes": envelopes,
        "diagnostics": ex.diagnostics,
    })
}

/// A diagnostic as `--json` writes it, without building a `serde_json::Value` of it: the
/// fields in the order of a JSON object's sorted keys, so the bytes are those of the value.
/// Written a million times for a hostile input, the value's map cost more than the rest.
#[derive(Serialize)]
pub struct DiagnosticJson<'a> {
    code: crate::protocol::Code,
    column: u32,
    line: u32,
    message: &'a str,
    severity: crate::protocol::Severity,
}

/// [`DiagnosticJson`] of `d`.
pub fn diagnostic(d: &Diagnostic) -> DiagnosticJson<'_> {
    DiagnosticJson {
        code: d.code,
        column: d.column,
        line: d.line,
        message: &d.message,
        severity: d.severity,
    }
}

/// One file of `check --json`, as the whole parse would write it: `check` streams its
/// object, and a test holds the two to the same shape.
#[cfg(test)]
#[derive(Serialize)]
pub(crate) struct CheckFile<'a> {
    /// File name as given.
    pub file: &'a str,
    /// Envelopes found.
    pub envelopes: usize,
    /// Error count.
    pub errors: usize,
    /// Warning count.
    pub warnings: usize,
    /// All diagnostics, outside and inside envelopes, in line order.
    pub diagnostics: Vec<&'a Diagnostic>,
}

/// Writes `v` as pretty JSON (two-space indent, as `serde_json::to_string_pretty`) with
/// every character the terminal would act on or hide escaped (see [`SafeFormatter`]).
pub fn write(out: &mut impl Write, v: &impl Serialize) -> serde_json::Result<()> {
    write_at(out, v, 0)
}

/// [`write`] for a value that sits `level` levels deep in a larger document being written
/// piece by piece: its inner lines are indented as they would be in the whole.
pub(crate) fn write_at(
    out: &mut impl Write,
    v: &impl Serialize,
    level: usize,
) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, SafeFormatter::at(level));
    v.serialize(&mut ser)
}

/// serde_json's pretty layout, escaping more than JSON requires: besides C0 controls, also
/// DEL, C1 controls, bidi controls and invisible characters (everything
/// [`crate::sanitize::is_unsafe`] names) are written as `\uXXXX`. The document means the
/// same once decoded, but no envelope's text can act on a terminal that shows it raw, or
/// hide or reorder what a person reading it sees.
pub(crate) struct SafeFormatter {
    level: usize,
    has_value: bool,
}

impl SafeFormatter {
    /// A formatter whose output starts `level` indentation steps in.
    pub(crate) fn at(level: usize) -> Self {
        SafeFormatter {
            level,
            has_value: false,
        }
    }

    fn indent(&self, w: &mut (impl Write + ?Sized)) -> std::io::Result<()> {
        for _ in 0..self.level {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    fn open(&mut self, w: &mut (impl Write + ?Sized), bracket: &[u8]) -> std::io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close(&mut self, w: &mut (impl Write + ?Sized), bracket: &[u8]) -> std::io::Result<()> {
        self.level = self.level.saturating_sub(1);
        if self.has_value {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        w.write_all(bracket)
    }

    fn item(&mut self, w: &mut (impl Write + ?Sized), first: bool) -> std::io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(w)
    }
}

impl Formatter for SafeFormatter {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if !is_unsafe(c) {
                continue;
            }
            w.write_all(&fragment.as_bytes()[start..i])?;
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                write!(w, "\\u{u:04x}")?;
            }
            start = i + c.len_utf8();
        }
        w.write_all(&fragment.as_bytes()[start..])
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn encode(v: &impl Serialize) -> String {
        let mut buf = Vec::new();
        write(&mut buf, v).expect("encode");
        String::from_utf8(buf).expect("utf-8")
    }

    /// Strings rich in what must be escaped: controls, DEL, C1, bidi and zero-width
    /// characters, mixed with ordinary and non-BMP text.
    fn hostile() -> impl Strategy<Value = String> {
        let pick = prop_oneof![
            any::<char>(),
            (0u32..0x20).prop_map(|u| char::from_u32(u).unwrap_or('?')),
            (0x7fu32..0xa0).prop_map(|u| char::from_u32(u).unwrap_or('?')),
            prop::sample::select(vec![
                '\u{200b}', '\u{200e}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}', '\u{061c}',
                '\u{feff}', '\u{00ad}', '\u{fff9}', '\u{1b}', '"', '\\', 'é', '😀',
            ]),
        ];
        prop::collection::vec(pick, 0..64).prop_map(|cs| cs.into_iter().collect())
    }

    proptest! {
        #[test]
        fn any_string_round_trips_with_nothing_unsafe_raw(s in hostile()) {
            let v = serde_json::json!({"body": s, "list": [s.clone(), "x"]});
            let text = encode(&v);
            prop_assert!(!text.chars().any(is_unsafe), "{text:?}");
            let back: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
            prop_assert_eq!(&back["body"], &serde_json::Value::String(s.clone()));
            prop_assert_eq!(back, v);
        }

        #[test]
        fn layout_is_serde_json_pretty(s in "[a-z \n\"]{0,20}", n in 0usize..4) {
            let v = serde_json::json!({"a": [s.clone(), s], "b": {"c": n, "d": []}, "e": {}});
            prop_assert_eq!(encode(&v), serde_json::to_string_pretty(&v).expect("pretty"));
        }
    }

    /// A diagnostic written field by field is its JSON value written.
    #[test]
    fn diagnostics_write_as_their_values() {
        for d in [
            Diagnostic::new(crate::protocol::Code::StrayEnd, 7, 3, "a \u{202e} \"b\""),
            Diagnostic::new(crate::protocol::Code::BadId, 1, 1, ""),
        ] {
            let mut fields = Vec::new();
            write_at(&mut fields, &diagnostic(&d), 3).expect("encode");
            let mut value = Vec::new();
            let v = serde_json::to_value(&d).expect("a value");
            write_at(&mut value, &v, 3).expect("encode");
            assert_eq!(
                String::from_utf8_lossy(&fields),
                String::from_utf8_lossy(&value)
            );
        }
    }

    /// An envelope written with its diagnostics on the side is its JSON value written.
    /// `meta: safety` is read for scripts (`safety`: warnings, allowed uses) beside the block
    /// as written, and only where it says something.
    #[test]
    fn a_safety_block_is_read_into_its_own_field() {
        let text = "[[A\u{2192}B v1.1]]\nintent: REQUEST\nmeta: safety\n  Content-Warning: gore\n  Allowed-Use: general\nbody: |\n  hi\nsig: none\n[[END]]\n\
                    [[A\u{2192}B v1.1]]\nintent: REQUEST\nmeta: safety\n  X-Note: nothing\nbody: |\n  hi\nsig: none\n[[END]]\n";
        let ex = crate::protocol::extract(text, &crate::protocol::Options::default());
        let v = envelope(&ex.envelopes[0], None);
        assert_eq!(
            v["safety"],
            serde_json::json!({"warnings": ["gore"], "allowed_use": ["general"]})
        );
        assert_eq!(v["meta"][0]["namespace"], "safety");
        assert!(envelope(&ex.envelopes[1], None).get("safety").is_none());
    }

    #[test]
    fn envelopes_write_as_their_values() {
        let text = "[[A\u{2192}B v1]]\nuser: u\nnot a header\nintent: INFORM\nbody: |\n  hi\n[[END]]\n\
                    [[A\u{2192}B v1]] user: u intent: REQUEST body: | x sig: none [[END]]\n";
        let ex = crate::protocol::extract(text, &crate::protocol::Options::default());
        assert_eq!(ex.envelopes.len(), 2);
        assert!(ex.envelopes.iter().all(|p| !p.diagnostics.is_empty()));
        for p in &ex.envelopes {
            for level in [0, 2] {
                let mut side = Vec::new();
                write_at(&mut side, &envelope_json(p, None), level).expect("encode");
                let mut value = Vec::new();
                write_at(&mut value, &envelope(p, None), level).expect("encode");
                assert_eq!(
                    String::from_utf8_lossy(&side),
                    String::from_utf8_lossy(&value)
                );
            }
        }
    }

    #[test]
    fn nested_pieces_indent_as_the_whole() {
        let inner = serde_json::json!({"k": [1, 2]});
        let mut buf = Vec::new();
        write_at(&mut buf, &inner, 2).expect("encode");
        let whole =
            serde_json::to_string_pretty(&serde_json::json!({"a": [inner]})).expect("pretty");
        let piece = String::from_utf8(buf).expect("utf-8");
        assert!(whole.contains(&piece), "{whole}\n---\n{piece}");
    }
}
