//! Synthetic relay transcripts: realistic, reproducible input for benchmarks and tests.
//!
//! Benchmarks and tests of the parser and the store need large inputs that look like what
//! operators really paste: chat prose between envelopes, fenced and bare envelopes (some behind a
//! `text` / `Copy code` label), v1.0 and v1.1 forms, META blocks, threads that form trees, and a
//! share of envelopes mangled the way chat windows mangle them (collapsed onto one line, body
//! indentation lost, `[[END]]` missing, `> ` quoted, CRLF line endings).
//!
//! The same [`TranscriptSpec`] always gives the same bytes: a splitmix64 PRNG seeded from the
//! spec drives every choice. Every thread opens with a v1.1 envelope without `parent:`; later
//! v1.1 messages name an earlier `message:` of their thread as parent (usually the latest), and
//! v1.0 envelopes carry only the thread's `session:` value. IDs are real ULIDs whose timestamps
//! increase through the transcript. [`write_transcript`] streams in 64 KiB chunks.

use std::fmt::{self, Write as _};
use std::io;
use ulid::Ulid;

/// Shape of a generated transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptSpec {
    /// Number of envelopes.
    pub envelopes: usize,
    /// Number of conversations (threads), clamped to `1..=envelopes`.
    pub threads: usize,
    /// Seed of the PRNG; equal specs give identical bytes.
    pub seed: u64,
    /// Share of envelopes, in percent (capped at 100), mangled the way chat windows do.
    pub mangled_percent: u32,
}

impl Default for TranscriptSpec {
    /// 100 000 envelopes in 5 000 threads, seed 1, 5 % mangled: about 70 MB.
    fn default() -> Self {
        Self {
            envelopes: 100_000,
            threads: 5_000,
            seed: 1,
            mangled_percent: 5,
        }
    }
}

/// Generates the whole transcript for `spec` in memory.
pub fn transcript(spec: &TranscriptSpec) -> String {
    let mut out = String::with_capacity(spec.envelopes.saturating_mul(720));
    let mut generator = Generator::new(spec);
    while generator.next_chunk(&mut out) {}
    out
}

/// Writes the transcript for `spec` to `out` chunk by chunk; the bytes equal [`transcript`]'s.
pub fn write_transcript(spec: &TranscriptSpec, out: &mut impl io::Write) -> io::Result<()> {
    let mut generator = Generator::new(spec);
    let mut buf = String::with_capacity(80 * 1024);
    loop {
        let more = generator.next_chunk(&mut buf);
        if !more || buf.len() >= 64 * 1024 {
            out.write_all(buf.as_bytes())?;
            buf.clear();
        }
        if !more {
            return Ok(());
        }
    }
}

/// 2025-10-09T06:00Z, where the ULID timestamps start.
const START_MS: u64 = 1_759_989_600_000;
/// How many recent messages of a thread can be a parent; bounds memory on huge transcripts.
const PARENT_WINDOW: usize = 64;

#[rustfmt::skip]
mod tables {
    use super::Mangle;
    /// Banner parties: simple name, address, whether the address ends in a per-thread hex id.
    pub(super) const PARTIES: [(&str, &str, bool); 7] = [
        ("CLAUDE", "claude://session/", true), ("CHATGPT", "chatgpt://thread/", true),
        ("BROTHER", "chatgpt://thread/", true), ("GEMINI", "gemini://chat/", true),
        ("SYSTEM", "mcp://relay@localhost/run-", true), ("KALLE", "human://kalle@example.com", false),
        ("supportbot@acme.com", "human://support.acme.com/queue/billing", false),
    ];
    pub(super) const USERS: &[&str] = &["kalle", "brother", "alice", "bob", "ops", "dr.smith", "mira"];
    pub(super) const CONTEXTS: &[&str] = &[
        "schema migration", "api-design", "pricing page copy", "incident-4412", "release 1.4.2",
        "consent flow review", "ci flakiness", "data export request", "naming", "q3 metrics",
    ];
    pub(super) const OPENERS: &[&str] = &["REQUEST", "REQUEST", "REQUEST", "POLL", "BROADCAST", "ESCALATE", "HANDOFF"];
    pub(super) const REPLIES: &[&str] = &[
        "RESPOND", "RESPOND", "RESPOND", "RESPOND", "RESPOND", "RESPOND", "RESPOND", "RESPOND",
        "REQUEST", "REQUEST", "REQUEST", "ACK", "ACK", "ESCALATE", "HANDOFF", "POLL",
    ];
    /// v1.0 follow-ups; the empty intent is the `response: |` reply with only `session:`.
    pub(super) const V10: &[&str] = &["", "", "ANSWER", "QUESTION"];
    /// Body lines that look like the end of an envelope (only ever indented inside a body).
    pub(super) const TRICKY: &[&str] = &["[[END]]", "sig: none", "sig: ed25519:pkid=alice@example.com;sig=AbC123DeF456=="];
    // Bank lengths must stay prime to the strides 7, 11 and 13 of `Rng::walk`.
    pub(super) const BODY: &[&str] = &[
        "Can you review the migration plan for the orders table?", "Short answer: yes, with two caveats.",
        "The plan adds a nullable column first and backfills it in batches of 10k rows.",
        "Rollout is planned for Thursday after the freeze lifts.", "I would call it `relay`.",
        "Please answer with the risks you see, most severe first.", "Deadline for votes is 18:00 UTC.",
        "Risk 1: the index build blocks writes on the old engine version.",
        "Customer [EMAIL] asked for an export of their data.", "The callback number was [PHONE].",
        "Options: MICROSERVICES | MONOLITH | ABSTAIN. Reply with one word and a reason.",
        "I need a human to approve the refund above the limit.", "Second, the old endpoint stays up.",
        "Handing over to the billing queue; consent transfers with approval.",
        "Acknowledged, will report back after the test run.", "First, invalidate the cache on deploy.",
        "Closing this one, the fix shipped in 1.4.2.", "ULIDs sort by time and copy well by hand.",
        "Diff summary: 3 files changed, 41 insertions(+), 7 deletions(-).",
        "Hypothesis: the CI runner has less memory and the cache spills to disk.",
        "Starter: 9 EUR per month, Team: 29 EUR per seat, Enterprise: talk to us.",
        "Root cause: an expired certificate on the internal relay.", "Is a ULID or a UUIDv7 better?",
        "Zusammenfassung für das Team: der Plan steht, der Termin noch nicht.",
    ];
    pub(super) const OPERATOR: &[&str] = &[
        "Pasting Claude's reply below.", "Relaying this to ChatGPT now, same thread as before.",
        "Okay, here is what came back.", "I trimmed nothing this time, it should be the whole thing.",
        "The chat window ate some newlines again, sorry about that.", "Thanks, that worked. One more.",
        "Can you check whether the parent id matches the last one?", "Brother answered quickly today.",
        "This one is from yesterday's session, I found it in my notes.", "Next round, same topic.",
        "I copied this from the rendered page, so the formatting may be off.",
        "I am not sure the consent line is right, please double-check.", "Here is the escalation.",
        "Keep the reply short, I have to paste it on my phone.", "The timestamps look odd, I left them.",
        "Forwarding the answer, let me know if the body got cut off.",
    ];
    pub(super) const ASSISTANT: &[&str] = &[
        "Here is the envelope for ChatGPT, ready to copy.", "Below is my reply in the Crosstalk format.",
        "I kept the thread id so the reply links to the right conversation.",
        "The privacy block says personal data was redacted before sending.",
        "If the other side answers in the old format, that is fine; the session ties it together.",
        "I could not verify a signature, so sig is none.", "This closes the loop on the pricing question.",
        "Paste this into the other chat and bring back whatever it answers.",
        "Summary so far: the migration plan is agreed, the rollout date is not.",
        "I marked this as high priority because the deadline is tomorrow.",
        "Please paste it inside a code block so the two-space indent survives.",
        "The earlier question asked two things; this answers the second.",
        "Tell me if it arrives mangled and I will resend it.", "Handing this to someone with billing access.",
        "I answered the question and added routing hints for the relay.",
        "I split the answer into a short list so it survives copying.",
    ];
    /// Prose voices: speaker labels (a line of their own or a prefix) and what they say.
    pub(super) const MANGLES: [Mangle; 5] = [Mangle::Collapse, Mangle::Strip, Mangle::NoEnd, Mangle::Quote, Mangle::Crlf];
    pub(super) const VOICES: [(&[&str], &[&str]); 2] = [
        (&["Kalle: ", "You said:\n", "Operator: ", "", ""], OPERATOR),
        (&["ChatGPT said:\n", "Claude: ", "Assistant: ", "", ""], ASSISTANT),
    ];
}
use tables::*;

/// splitmix64: tiny, fast and good enough for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
    fn pct(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
    /// Start and stride for a run of distinct picks from a bank of `len` items.
    fn walk(&mut self, len: usize) -> (usize, usize) {
        (self.below(len), [7, 11, 13][self.below(3)])
    }
    fn random_bits(&mut self) -> u128 {
        (u128::from(self.next()) << 64) | u128::from(self.next())
    }
}

/// How a chat window mangled an envelope.
#[derive(Clone, Copy, PartialEq)]
enum Mangle {
    Collapse,
    Strip,
    NoEnd,
    Quote,
    Crlf,
}

/// One conversation: its fixed traits and where it stands.
struct Thread {
    left: u32,
    sent: u32,
    id: Ulid,
    messages: Vec<Ulid>,
    start_ms: u64,
    hex: u32,
    parties: [usize; 2],
    user: &'static str,
    context: &'static str,
    addresses: bool,
    minutes: bool,
}

/// A banner side or routing hop: a simple name, or an address carrying the thread's id. An
/// index past [`PARTIES`] is the pseudo-recipient `POLL`.
struct Party<'a>(&'a Thread, usize, bool);

impl fmt::Display for Party<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Party(th, p, address) = *self;
        let id = (th.hex ^ (p as u32).wrapping_mul(0x9E_3779)) & 0xFF_FFFF;
        match PARTIES.get(p) {
            None => f.write_str("POLL"),
            Some((name, _, _)) if !address => f.write_str(name),
            Some((_, addr, false)) => f.write_str(addr),
            Some((_, addr, true)) => write!(f, "{addr}{id:06x}"),
        }
    }
}

/// A UTC time: `2025-10-09T16Z`, or `2025-10-09T16:23Z` with minutes.
struct Time(u64, bool);

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (days, secs) = (self.0 / 86_400_000, self.0 / 1000 % 86_400);
        // Howard Hinnant's civil_from_days, for days after the epoch.
        let z = days + 719_468;
        let doe = z % 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let (d, m) = (
            doy - (153 * mp + 2) / 5 + 1,
            if mp < 10 { mp + 3 } else { mp - 9 },
        );
        let y = z / 146_097 * 400 + yoe + u64::from(m <= 2);
        write!(f, "{y:04}-{m:02}-{d:02}T{:02}", secs / 3600)?;
        if self.1 {
            write!(f, ":{:02}", secs % 3600 / 60)?;
        }
        f.write_str("Z")
    }
}

/// The state between chunks: everything a transcript needs except the text already written.
struct Generator {
    rng: Rng,
    /// Envelopes per thread, in the order threads open.
    lengths: Vec<u32>,
    threads: Vec<Thread>,
    /// Open threads with envelopes left.
    active: Vec<usize>,
    left: usize,
    clock: u64,
    mangled: u64,
    v10_permille: u64,
    salt: u32,
    env: String,
}

impl Generator {
    fn new(spec: &TranscriptSpec) -> Self {
        let mut rng = Rng(spec.seed ^ 0x6372_6F73_7374_616C);
        let (e, t) = (spec.envelopes, spec.threads.clamp(1, spec.envelopes.max(1)));
        // Skewed thread lengths: at least two envelopes each (one if there are too few), and
        // weights from 1 to 8·2⁹ share the rest.
        let base = if e >= 2 * t { 2 } else { 1 };
        let weights: Vec<u64> = (0..t)
            .map(|_| (1 + rng.next() % 8) << (rng.next() % 10))
            .collect();
        let (total, extra) = (
            weights.iter().sum::<u64>(),
            e.saturating_sub(base * t) as u64,
        );
        let share = |w: &u64| base as u32 + (extra * w / total) as u32;
        let mut lengths: Vec<u32> = weights.iter().map(share).collect();
        for _ in lengths.iter().map(|&n| n as usize).sum::<usize>()..e {
            let i = rng.below(t);
            lengths[i] += 1;
        }
        lengths.truncate(e);
        // Openers are always v1.1; later envelopes are v1.0 often enough to make ~30 % overall.
        let v10_permille = (300 * e as u64).checked_div((e - lengths.len()) as u64);
        Self {
            salt: rng.next() as u32,
            rng,
            lengths,
            threads: Vec::new(),
            active: Vec::new(),
            left: e,
            clock: START_MS,
            mangled: u64::from(spec.mangled_percent.min(100)),
            v10_permille: v10_permille.unwrap_or(0).min(1000),
            env: String::with_capacity(2048),
        }
    }

    /// Appends prose and one envelope (plus closing prose after the last); false when done.
    fn next_chunk(&mut self, out: &mut String) -> bool {
        if self.left == 0 {
            return false;
        }
        self.prose(out);
        let unopened = self.lengths.len() - self.threads.len();
        let open = unopened > 0 && (self.active.is_empty() || self.rng.below(self.left) < unopened);
        let slot = match self.active.len() {
            _ if open => self.open_thread(),
            0 => return false, // unreachable: the thread lengths sum to the envelope count
            n => self.rng.below(n),
        };
        let ti = self.active[slot];
        self.clock += 1 + self.rng.next() % 90_000;
        let mangled = self.rng.pct(self.mangled);
        let mangle = mangled.then(|| self.rng.pick(&MANGLES));
        self.env.clear();
        let _ = self.envelope(ti, mangle); // writing to a String cannot fail
        frame(out, &self.env, mangle, self.rng.next() % 100);
        self.threads[ti].left -= 1;
        if self.threads[ti].left == 0 {
            self.active.swap_remove(slot);
            self.threads[ti].messages = Vec::new();
        }
        self.left -= 1;
        if self.left == 0 {
            self.prose(out);
        }
        true
    }

    /// Opens the next thread; returns its slot in `active`.
    fn open_thread(&mut self) -> usize {
        let (r, n, start_ms) = (&mut self.rng, self.threads.len(), self.clock + 1);
        let span = if r.pct(60) { 2 } else { PARTIES.len() };
        let a = r.below(span);
        let other = (a + 1 + r.below(PARTIES.len() - 1)) % PARTIES.len();
        let b = if a < 2 && r.pct(70) { 1 - a } else { other };
        self.threads.push(Thread {
            left: self.lengths[n],
            sent: 0,
            id: Ulid::from_parts(start_ms, r.random_bits()),
            messages: Vec::new(),
            start_ms,
            // An odd multiplier is a bijection mod 2²⁴, so no two threads share a session.
            hex: ((n as u32).wrapping_mul(0x5B_D1E9) ^ self.salt) & 0xFF_FFFF,
            parties: [a, b],
            user: r.pick(USERS),
            context: r.pick(CONTEXTS),
            addresses: r.pct(40),
            minutes: r.pct(30),
        });
        self.active.push(n);
        self.active.len() - 1
    }

    /// Writes the next envelope of thread `ti` into `self.env`, with LF line endings.
    fn envelope(&mut self, ti: usize, mangle: Option<Mangle>) -> fmt::Result {
        let (r, env, now) = (&mut self.rng, &mut self.env, self.clock);
        let th = &mut self.threads[ti];
        let v10 = th.sent > 0 && r.next() % 1000 < self.v10_permille;
        let intent = match th.sent {
            0 => r.pick(OPENERS),
            _ if v10 => r.pick(V10),
            _ if th.left == 1 && r.pct(40) => "CLOSE",
            _ => r.pick(REPLIES),
        };
        let turn = th.sent as usize % 2;
        let (from, to) = (th.parties[turn], th.parties[1 - turn]);
        let (address, time) = (th.addresses && !v10, Time(th.start_ms, th.minutes));
        let poll = intent == "POLL" && !address;
        let banner_to = Party(th, if poll { usize::MAX } else { to }, address);
        writeln!(env, "[[{}→{banner_to} v1]]", Party(th, from, address))?;
        if intent.is_empty() {
            write!(env, "session: {time} {:06x}\nresponse: |\n", th.hex)?;
        } else {
            write!(env, "user: {}\nsession: {time} {:06x}\n", th.user, th.hex)?;
            if !v10 {
                let message = Ulid::from_parts(now, r.random_bits());
                writeln!(env, "thread: {}", th.id)?;
                if let Some(&latest) = th.messages.last() {
                    let older = r.pick(&th.messages);
                    writeln!(env, "parent: {}", if r.pct(80) { latest } else { older })?;
                }
                writeln!(env, "message: {message}")?;
                if th.messages.len() == PARENT_WINDOW {
                    th.messages.remove(0);
                }
                th.messages.push(message);
            }
            write!(env, "context: {}\nintent: {intent}\n", th.context)?;
            if !v10 {
                meta(r, env, th, intent, (from, to), now)?;
            }
            env.push_str("body: |\n");
        }
        // Lines that look like an envelope's end only go where the indentation survives.
        let tricky = matches!(mangle, None | Some(Mangle::Quote | Mangle::Crlf)) && r.pct(4);
        let lines = 2 + r.below(4) + if r.pct(25) { r.below(8) } else { 0 };
        let trick_at = tricky.then(|| 1 + r.below(lines - 1));
        let (start, stride) = r.walk(BODY.len());
        for i in 0..lines {
            match i {
                _ if trick_at == Some(i) => writeln!(env, "  {}", r.pick(TRICKY))?,
                _ if i > 0 && i + 1 < lines && r.pct(10) => env.push('\n'),
                _ => writeln!(env, "  {}", BODY[(start + i * stride) % BODY.len()])?,
            }
        }
        if !intent.is_empty() {
            env.push_str("sig: none\n");
        }
        if mangle != Some(Mangle::NoEnd) {
            env.push_str("[[END]]\n");
        }
        th.sent += 1;
        Ok(())
    }

    /// One or two paragraphs of operator remarks or assistant chatter.
    fn prose(&mut self, out: &mut String) {
        let r = &mut self.rng;
        for _ in 0..1 + usize::from(r.pct(30)) {
            let (labels, bank) = r.pick(&VOICES);
            out.push_str(r.pick(labels));
            let (start, stride) = r.walk(bank.len());
            for i in 0..1 + r.below(4) {
                out.push_str(if i > 0 { " " } else { "" });
                out.push_str(bank[(start + i * stride) % bank.len()]);
            }
            out.push_str("\n\n");
        }
    }
}

/// `meta: routing` / `privacy` / `poll` blocks, blank-line separated or back to back.
fn meta(
    r: &mut Rng,
    env: &mut String,
    th: &Thread,
    intent: &str,
    (from, to): (usize, usize),
    now: u64,
) -> fmt::Result {
    let gap = if r.pct(60) { "\n" } else { "" };
    let (from, to) = (Party(th, from, true), Party(th, to, true));
    let (routing, privacy, poll) = (r.pct(50), r.pct(35), intent == "POLL");
    if routing {
        let via = if r.pct(30) { " → human://relay" } else { "" };
        let priority = r.pick(&["high", "normal", "normal", "low"]);
        write!(env, "{gap}meta: routing\nX-Route: {from}{via} → {to}\n")?;
        write!(env, "X-Reply-To: {from}\nX-Priority: {priority}\n")?;
    }
    if privacy {
        let pii = r.pick(&["present", "redacted", "none"]);
        let scope = r.pick(&["general", "general", "pii", "medical", "financial"]);
        let (consent, year, month) = (Time(th.start_ms, true), 30 + r.below(6), 1 + r.below(12));
        write!(env, "{gap}meta: privacy\nPII: {pii}\n")?;
        write!(env, "Consent: explicit_yes_{consent}\nScope: {scope}\n")?;
        writeln!(env, "Expires: 20{year}-{month:02}-01T00:00Z")?;
        if scope == "medical" {
            env.push_str("Jurisdiction: HIPAA\n");
        }
    }
    if poll {
        let deadline = Time(now + 7_200_000, true);
        write!(env, "{gap}meta: poll\nType: consensus\n")?;
        writeln!(env, "Quorum: 2-of-3\nDeadline: {deadline}")?;
    }
    if routing || privacy || poll {
        env.push_str(gap);
    }
    Ok(())
}

/// Writes one envelope as pasted: fenced, bare or behind a `text` / `Copy code` label, or mangled.
fn frame(out: &mut String, env: &str, mangle: Option<Mangle>, fence: u64) {
    match mangle {
        Some(Mangle::Collapse) => {
            // Values never hold runs of spaces, so this equals joining the trimmed lines.
            for word in env.split_whitespace() {
                out.push_str(word);
                out.push(' ');
            }
            out.pop();
            out.push('\n');
        }
        Some(kind @ (Mangle::Strip | Mangle::Quote | Mangle::Crlf)) => {
            let (strip, quote) = (kind == Mangle::Strip, kind == Mangle::Quote);
            let eol = if kind == Mangle::Crlf { "\r\n" } else { "\n" };
            for line in env.lines() {
                out.push_str(if quote { "> " } else { "" });
                out.push_str(if strip { line.trim_start() } else { line });
                out.push_str(eol);
            }
        }
        None | Some(Mangle::NoEnd) => {
            let (open, close) = match fence {
                0..35 => ("```\n", "```\n"),
                35..55 => ("```text\n", "```\n"),
                55..65 => ("text\nCopy code\n", ""),
                _ => ("", ""),
            };
            out.push_str(open);
            out.push_str(env);
            out.push_str(close);
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    fn spec(envelopes: usize, threads: usize, mangled_percent: u32) -> TranscriptSpec {
        TranscriptSpec {
            envelopes,
            threads,
            seed: 3,
            mangled_percent,
        }
    }

    #[test]
    fn same_spec_same_bytes_streamed_or_not() {
        let s = TranscriptSpec {
            envelopes: 3_000,
            threads: 150,
            seed: 7,
            mangled_percent: 20,
        };
        let text = transcript(&s);
        assert_eq!(text, transcript(&s));
        let mut streamed = Vec::new();
        write_transcript(&s, &mut streamed).unwrap();
        assert_eq!(streamed, text.as_bytes());
        assert_ne!(text, transcript(&TranscriptSpec { seed: 8, ..s }));
    }

    #[test]
    fn one_banner_per_envelope() {
        for mangled in [0, 5, 100] {
            let text = transcript(&spec(2_000, 100, mangled));
            // Prose never contains `[[` and bodies only as `[[END]]`, so every other `[[` is a
            // banner, wherever it sits (own line, quoted, CRLF or collapsed into one line).
            let banners = text.matches("[[").count() - text.matches("[[END]]").count();
            assert_eq!(banners, 2_000, "mangled {mangled}");
            assert_eq!(text.matches(" v1]]").count(), 2_000, "mangled {mangled}");
            // Independently: lines that, unquoted and trimmed, start with a banner.
            let lines = text.lines().map(|l| l.trim_start_matches('>').trim());
            let starts = lines.filter(|l| l.starts_with("[[") && !l.starts_with("[[END]]"));
            assert_eq!(starts.count(), 2_000, "mangled {mangled}");
        }
        let clean = transcript(&spec(2_000, 100, 0));
        assert!(!clean.contains('\r') && !clean.contains("> [[") && !clean.contains("1]] user:"));
        let all = transcript(&spec(2_000, 100, 100));
        assert!(all.contains("\r\n") && all.contains("> [[") && all.contains("1]] user:"));
    }

    #[test]
    fn thread_count_and_skew() {
        for (envelopes, threads) in [(2_000, 100), (50, 80), (1, 1)] {
            let text = transcript(&spec(envelopes, threads, 5));
            let tokens: Vec<&str> = text.split_whitespace().collect();
            let (mut ids, mut sessions) = (HashMap::new(), HashSet::new());
            for (i, token) in tokens.iter().enumerate() {
                match *token {
                    "thread:" => *ids.entry(tokens[i + 1]).or_insert(0) += 1,
                    "session:" => _ = sessions.insert((tokens[i + 1], tokens[i + 2])),
                    _ => {}
                }
            }
            let expected = threads.min(envelopes);
            assert_eq!((ids.len(), sessions.len()), (expected, expected));
            let longest = ids.values().max().copied().unwrap_or(0);
            assert!(
                envelopes != 2_000 || longest > 70,
                "longest thread {longest}, mean ~14"
            );
        }
    }

    #[test]
    fn ids_are_ulids_and_parents_point_back() {
        let text = transcript(&spec(2_000, 100, 5));
        let tokens: Vec<&str> = text.split_whitespace().collect();
        let (mut messages, mut threads) = (HashSet::new(), HashSet::new());
        let (mut last_ms, mut parents, mut has_parent) = (0, 0, false);
        for (i, pair) in tokens.windows(2).enumerate() {
            let (key, value) = (pair[0], pair[1]);
            has_parent &= !(key.starts_with("[[") && key != "[[END]]");
            assert!(
                has_parent || key != "intent:" || value != "RESPOND",
                "token {i}"
            );
            if !matches!(key, "thread:" | "parent:" | "message:") {
                continue;
            }
            assert_eq!(value.len(), 26, "{key} {value}");
            let id = Ulid::from_string(value).unwrap_or_else(|e| panic!("{key} {value}: {e}"));
            match key {
                "thread:" if threads.insert(id) => assert_ne!(tokens[i + 2], "parent:"),
                "parent:" => {
                    assert!(
                        messages.contains(&id),
                        "parent {value} is no earlier message"
                    );
                    (parents, has_parent) = (parents + 1, true);
                }
                "message:" => {
                    assert!(id.timestamp_ms() > last_ms && messages.insert(id));
                    last_ms = id.timestamp_ms();
                }
                _ => {}
            }
        }
        assert_eq!(parents + threads.len(), messages.len());
        let v10 =
            ["response: |", "intent: QUESTION", "intent: ANSWER"].map(|p| text.matches(p).count());
        assert!(
            (500..=700).contains(&v10.iter().sum::<usize>()),
            "{v10:?} v1.0 of 2000"
        );
    }

    #[test]
    fn size_per_envelope() {
        let per = transcript(&spec(2_000, 100, 5)).len() / 2_000;
        assert!((600..=800).contains(&per), "{per} bytes per envelope");
        assert!(transcript(&spec(0, 10, 5)).is_empty());
    }

    /// `cargo test --release -- --ignored --nocapture default_spec_size` prints size and time.
    #[test]
    #[ignore]
    fn default_spec_size() {
        let start = std::time::Instant::now();
        write_transcript(&TranscriptSpec::default(), &mut io::sink()).unwrap();
        let took = start.elapsed();
        let len = transcript(&TranscriptSpec::default()).len();
        println!(
            "default spec: {len} bytes, {} per envelope, in {took:?}",
            len / 100_000
        );
    }
}
