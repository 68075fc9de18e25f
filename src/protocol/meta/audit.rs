//! Audit hops: the `meta: audit` block each relay appends, like an e-mail `Received:` line.
//!
//! A hop says who carried the envelope, when, from whom, and what it looked like when it
//! arrived (`Hop-Digest`). Relays add hops to envelopes someone else signed, so hops stand
//! outside what a signature covers: the signable portion and the `hash:` leave every audit
//! block out (`docs/PROTOCOL.md` §7.1, §12). That makes hops unsigned claims, shown as such;
//! their digests are what ties them to the content: each is SHA-256 of the envelope's
//! canonical text with the hops before it, so re-computing them tells where a change happened.

use sha2::{Digest, Sha256};

use crate::protocol::render::render;
use crate::protocol::{Envelope, MetaBlock, Parsed, namespaces};

/// Whether a META block is an audit hop (the namespace in any case).
pub(crate) fn is_audit(block: &MetaBlock) -> bool {
    block
        .namespace
        .trim()
        .eq_ignore_ascii_case(namespaces::AUDIT)
}

/// The envelope without its audit hops: what a signature and `hash:` cover.
pub fn without_hops(env: &Envelope) -> std::borrow::Cow<'_, Envelope> {
    if !env.meta.iter().any(is_audit) {
        return std::borrow::Cow::Borrowed(env);
    }
    let mut out = env.clone();
    out.meta.retain(|m| !is_audit(m));
    std::borrow::Cow::Owned(out)
}

/// Whether two envelope texts read the same once audit hops are left out (and at least one
/// of them has hops): the same envelope, carried by more or other relays.
#[cfg(test)]
pub(crate) fn same_but_hops(a: &str, b: &str) -> bool {
    let read = |t: &str| {
        let ex = crate::protocol::extract(t, &crate::protocol::Options::default());
        let [p] = &ex.envelopes[..] else {
            return None;
        };
        let hops = p.envelope.meta.iter().any(is_audit);
        Some((render(&without_hops(&p.envelope)), hops))
    };
    match (read(a), read(b)) {
        (Some((a, ha)), Some((b, hb))) => (ha || hb) && a == b,
        _ => false,
    }
}

/// One hop as written. Fields are `None` when the hop does not carry them (hops written by
/// other tools may name fewer).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Hop {
    /// When the relay received the envelope.
    pub received_at: Option<String>,
    /// Who received it (the relay's name or address).
    pub received_by: Option<String>,
    /// When the relay passed it on.
    pub processed_at: Option<String>,
    /// Where it came from: the previous hop's relay, or the sender for the first hop.
    pub previous_hop: Option<String>,
    /// `sha256:<hex>` of the envelope as this hop received it.
    pub digest: Option<String>,
    /// The path so far, `a → b → c`.
    pub chain: Option<String>,
}

impl Hop {
    fn of(block: &MetaBlock) -> Hop {
        let get = |k: &str| {
            (block.entries.iter())
                .find(|(key, _)| key.eq_ignore_ascii_case(k))
                .map(|(_, v)| v.trim().to_string())
        };
        Hop {
            received_at: get("Received-At"),
            received_by: get("Received-By"),
            processed_at: get("Processed-At"),
            previous_hop: get("Previous-Hop"),
            digest: get("Hop-Digest"),
            chain: get("Chain"),
        }
    }
}

/// What re-computing a hop's digest says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DigestCheck {
    /// The envelope is what this hop received.
    Matches,
    /// It is not: the content changed after this hop received it (or the hop computed its
    /// digest another way).
    Differs,
    /// The hop names no digest.
    Missing,
    /// The value is not `sha256:<64 hex digits>`.
    Unreadable,
}

/// A hop with its digest checked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CheckedHop {
    /// The hop as written.
    #[serde(flatten)]
    pub hop: Hop,
    /// Whether its digest matches the envelope.
    pub digest_check: DigestCheck,
}

/// The hops of an envelope in order, each with its digest re-computed.
pub fn timeline(env: &Envelope) -> Vec<CheckedHop> {
    let mut out = Vec::new();
    for (n, block) in env.meta.iter().filter(|m| is_audit(m)).enumerate() {
        let hop = Hop::of(block);
        let digest_check = match hop.digest.as_deref() {
            None | Some("") => DigestCheck::Missing,
            Some(d) => match parse_digest(d) {
                None => DigestCheck::Unreadable,
                Some(want) if want == digest_hex(env, n) => DigestCheck::Matches,
                Some(_) => DigestCheck::Differs,
            },
        };
        out.push(CheckedHop { hop, digest_check });
    }
    out
}

/// The hop after which the content changed, in words, when the digests say so: hops whose
/// digest differs are followed by one that matches, or none does.
pub fn verdict(hops: &[CheckedHop]) -> Option<String> {
    let last_bad = hops
        .iter()
        .rposition(|h| h.digest_check == DigestCheck::Differs)?;
    let n = last_bad + 1;
    Some(if n == hops.len() {
        format!("changed after hop {n} received it (its digest does not match)")
    } else {
        format!(
            "changed between hop {n} and hop {} (hop {n}'s digest does not match, hop {}'s does)",
            n + 1,
            n + 1
        )
    })
}

/// `sha256:<hex>` → the hex in lower case, when it is that.
fn parse_digest(value: &str) -> Option<String> {
    let (alg, hex) = value.trim().split_once(':')?;
    let hex = hex.trim();
    (alg.trim().eq_ignore_ascii_case("sha256")
        && hex.len() == 64
        && hex.bytes().all(|b| b.is_ascii_hexdigit()))
    .then(|| hex.to_ascii_lowercase())
}

/// SHA-256 in hex of the canonical text of `env` with only its first `hops` audit hops: the
/// envelope as the next hop received it.
fn digest_hex(env: &Envelope, hops: usize) -> String {
    let mut seen = 0;
    let mut at = env.clone();
    at.meta.retain(|m| {
        if !is_audit(m) {
            return true;
        }
        seen += 1;
        seen <= hops
    });
    let text = render(&at);
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Who relays and when: what a new hop records.
#[derive(Debug, Clone)]
pub struct Relay<'a> {
    /// The relay's name or address (`Received-By`).
    pub by: &'a str,
    /// When it received the envelope, RFC 3339 (`Received-At`).
    pub received_at: &'a str,
    /// When it passes it on (`Processed-At`).
    pub now: jiff::Timestamp,
}

/// Appends this relay's hop to `env`: after every other block, so earlier hops and digests
/// stay as they were. The digest is of the envelope as received, earlier hops included.
pub fn append_hop(env: &mut Envelope, relay: &Relay<'_>) {
    let hops = env.meta.iter().filter(|m| is_audit(m)).count();
    let digest = digest_hex(env, hops);
    let last = env.meta.iter().rev().find(|m| is_audit(m)).map(Hop::of);
    let sender = env.banner.from.trim().to_string();
    let previous = last
        .as_ref()
        .and_then(|h| h.received_by.clone())
        .unwrap_or_else(|| sender.clone());
    let chain = match last.as_ref().and_then(|h| h.chain.clone()) {
        Some(c) if !c.is_empty() => format!("{c} → {}", relay.by),
        _ => format!("{previous} → {}", relay.by),
    };
    // Earlier hops are anyone's text, and a value over several lines would be read as more
    // than this hop's entries where the hop is written into a text as received.
    let flat = |s: String| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let (previous, chain) = (flat(previous), flat(chain));
    let now = relay.now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    env.meta.push(MetaBlock {
        namespace: namespaces::AUDIT.into(),
        entries: vec![
            ("Received-At".into(), relay.received_at.into()),
            ("Received-By".into(), relay.by.into()),
            ("Processed-At".into(), now),
            ("Previous-Hop".into(), previous),
            ("Hop-Digest".into(), format!("sha256:{digest}")),
            ("Chain".into(), chain),
        ],
    });
}

/// Which blank lines around a hop go with it when it is left out of the signed text.
/// Blank lines outside the body mean nothing, but a hop inserted into a signed text brings
/// its own, before it, after it or both; each way is tried (none changes what is read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Blanks {
    /// The blank lines before the block.
    Before,
    /// The blank lines after it.
    After,
    /// Both.
    Both,
}

/// The input lines (1-based) a signature does not cover because they hold audit hops: each
/// block from its `meta:` line up to the last non-blank line before the next thing the
/// envelope says, and the blank lines around it as `blanks` says. Every other line of the
/// envelope is covered, so whatever an inserted `meta: audit` line captures is left out of
/// the signed text and the signature fails.
pub(crate) fn unsigned_lines(p: &Parsed, input_lines: &[&str], blanks: Blanks) -> Vec<u32> {
    let env = &p.envelope;
    if !env.meta.iter().any(is_audit) {
        return Vec::new();
    }
    let pos = &p.positions;
    let mut anchors: Vec<u32> = std::iter::once(pos.banner.line)
        .chain(pos.headers.iter().map(|h| h.line))
        .chain(pos.meta.iter().map(|(m, _)| m.line))
        .chain(pos.body.iter().map(|b| b.line))
        .chain(pos.sig.iter().map(|b| b.line))
        .chain(pos.hash.iter().map(|b| b.line))
        .collect();
    anchors.sort_unstable();
    let start = p.span.start_line;
    let line_text = |n: u32| {
        (n.checked_sub(start))
            .and_then(|i| input_lines.get(i as usize))
            .copied()
            .unwrap_or("")
    };
    let blank = |n: u32| line_text(n).trim().is_empty();
    let mut out = Vec::new();
    for (block, (mpos, _)) in env.meta.iter().zip(&pos.meta) {
        if !is_audit(block) {
            continue;
        }
        let from = mpos.line;
        let next = anchors
            .iter()
            .copied()
            .find(|&a| a > from)
            .unwrap_or(p.span.end_line + 1);
        let mut last = next - 1;
        if blanks == Blanks::Before {
            while last > from && blank(last) {
                last -= 1;
            }
        }
        let mut first = from;
        if blanks != Blanks::After {
            while first > start + 1 && blank(first - 1) {
                first -= 1;
            }
        }
        out.extend(first..=last);
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Header, Options, extract};

    fn env() -> Envelope {
        let mut e = Envelope::new("CLAUDE", "CHATGPT");
        e.headers.push(Header {
            key: "intent".into(),
            value: "REQUEST".into(),
        });
        e.body = Some("Review this.".into());
        e.sig = Some("none".into());
        e
    }

    fn relay(by: &str) -> Relay<'_> {
        Relay {
            by,
            received_at: "2026-11-23T10:00:00Z",
            now: "2026-11-23T10:05:00Z".parse().unwrap(),
        }
    }

    #[test]
    fn hops_chain_and_their_digests_match() {
        let mut e = env();
        append_hop(&mut e, &relay("kalle"));
        append_hop(&mut e, &relay("desk-2"));
        let t = timeline(&e);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].hop.previous_hop.as_deref(), Some("CLAUDE"));
        assert_eq!(t[1].hop.previous_hop.as_deref(), Some("kalle"));
        assert_eq!(t[1].hop.chain.as_deref(), Some("CLAUDE → kalle → desk-2"));
        assert!(t.iter().all(|h| h.digest_check == DigestCheck::Matches));
        assert_eq!(verdict(&t), None);
        // Read back from text, the same.
        let p = &extract(&render(&e), &Options::default()).envelopes[0];
        assert_eq!(timeline(&p.envelope), t);
    }

    #[test]
    fn a_change_is_placed_between_hops() {
        let mut e = env();
        append_hop(&mut e, &relay("kalle"));
        e.body = Some("Review this, and pay me.".into());
        append_hop(&mut e, &relay("desk-2"));
        let t = timeline(&e);
        assert_eq!(t[0].digest_check, DigestCheck::Differs);
        assert_eq!(t[1].digest_check, DigestCheck::Matches);
        assert!(verdict(&t).unwrap().contains("between hop 1 and hop 2"));
        e.body = Some("again".into());
        assert!(verdict(&timeline(&e)).unwrap().contains("after hop 2"));
    }

    #[test]
    fn copies_differing_only_in_hops_are_the_same() {
        let plain = render(&env());
        let mut e = env();
        append_hop(&mut e, &relay("kalle"));
        let hopped = render(&e);
        assert!(same_but_hops(&plain, &hopped));
        assert!(!same_but_hops(&plain, &plain.replace("Review", "Delete")));
        e.body = Some("other".into());
        assert!(!same_but_hops(&plain, &render(&e)));
    }

    #[test]
    fn foreign_hops_are_read_and_judged_plainly() {
        let mut e = env();
        e.meta.push(MetaBlock {
            namespace: "Audit".into(),
            entries: vec![
                ("received-by".into(), "gw".into()),
                ("Hop-Digest".into(), "md5:abc".into()),
            ],
        });
        e.meta.push(MetaBlock {
            namespace: "audit".into(),
            entries: vec![],
        });
        let t = timeline(&e);
        assert_eq!(t[0].hop.received_by.as_deref(), Some("gw"));
        assert_eq!(t[0].digest_check, DigestCheck::Unreadable);
        assert_eq!(t[1].digest_check, DigestCheck::Missing);
        assert_eq!(verdict(&t), None);
    }
}
