//! The CPU half of an import, run on a second thread while the importing thread writes.
//!
//! Parsing, repairing and validating an envelope, rendering its canonical form and encoding its
//! columns take about as long as SQLite takes to store it. None of that needs the database
//! except for the ids a v1.0 envelope gets from its session, so a worker thread does it for
//! each envelope ahead of the writer: the stored pieces of the input go in (the writer reads
//! them, as only it holds the transaction), envelopes ready to insert come out, in input
//! order. Memory stays bounded: at most [`IN_FLIGHT`] pieces and [`QUEUE`] batches are held.
//!
//! A v1.0 envelope's ids depend on what its session holds, which only the writer knows for
//! sure. The worker guesses them as the writer will find them when every envelope before it
//! in the input is stored as a new message (see [`Guesser`]), and fills the envelope in for
//! that place; the writer takes the guess only when it places the envelope exactly there.

use std::collections::{HashMap, VecDeque};
use std::sync::mpsc::{Receiver, SyncSender};

use super::import::CHUNK;
use crate::protocol::{self, Diagnostic, Envelope, Extractor, Intent, Options, Parsed};
use crate::store::v10_place;

/// Stored pieces handed to the worker and not yet extracted.
pub(super) const IN_FLIGHT: usize = 2;
/// Batches of prepared envelopes waiting for the writer.
const QUEUE: usize = 8;
/// Envelopes per batch: enough to make the hand-over cheap, few enough to start writing early.
const BATCH: usize = 64;

/// What the worker tells the writer, in input order.
pub(super) enum Event {
    /// Envelopes ready to thread and store.
    Envelopes(Vec<Prepared>),
    /// A piece of the input was taken: `done` bytes of the input are extracted so far, and
    /// these are the findings outside envelopes in what was extracted since the last one.
    Piece {
        done: u64,
        diagnostics: Vec<Diagnostic>,
    },
    /// A stored piece could not be read back (it is damaged): the import stops.
    Failed(crate::store::StoreError),
}

/// A piece of the input as the writer read it from the database.
pub(super) struct Piece {
    /// Its bytes as stored.
    pub stored: Vec<u8>,
    /// Whether they are compressed (see `pieces`).
    pub zstd: bool,
    /// The paste it belongs to, named if it turns out damaged.
    pub paste_id: i64,
    /// Whether it is the input's last piece.
    pub last: bool,
}

impl Piece {
    /// Its text: invalid UTF-8 was reported when the input was stored, and the text is parsed
    /// with U+FFFD in place of the bytes that are not.
    fn text(self) -> Result<String, crate::store::StoreError> {
        let bytes = super::pieces::unpack(self.stored, self.zstd, self.paste_id)?;
        Ok(match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }
}

/// One envelope, parsed and encoded as far as possible without the database.
#[derive(Clone)]
pub(in crate::store) struct Prepared {
    pub parsed: Parsed,
    /// The envelope as received, transport wrapping undone.
    pub raw: String,
    /// For an envelope without a message id: the hex SHA-256 of its canonical form as
    /// received, which with its place recognizes it when imported again (see `v10_place`).
    pub digest: Option<String>,
    /// The stored form, when the envelope names its thread and message (its ids need no
    /// look-up); `None` when rejected or when the writer must assign ids.
    pub filled: Option<Filled>,
    /// For a v1.0 envelope, the stored form at the place the worker guessed for it.
    pub guess: Option<Box<Guess>>,
    /// Who answered it a little later in the input (a reply naming it as its parent, from
    /// another party than its sender; see [`Answers`]): evidently carried, so stored as
    /// relayed rather than relayed by an update once the reply arrives.
    pub answered_by: Option<String>,
    /// The message this reply marked answered (see `answered_by`), by its id as stored: the
    /// writer takes the mark back should the reply not be stored under it after all.
    pub marks: Option<String>,
}

/// A v1.0 envelope filled in at a guessed place (see [`Guesser`]). The writer compares the
/// place with the one it finds: the same thread, message and parent make the same stored
/// form, and the same text digest and parent the same stored digest.
#[derive(Clone)]
pub(in crate::store) struct Guess {
    /// The envelope's index in the input, which its message id was made for.
    pub index: usize,
    pub thread: String,
    pub message: String,
    pub parent: Option<String>,
    /// `fill` of the envelope at that place, with its received text's edit.
    pub filled: Filled,
    /// `v10_place::placed` of its text digest answering `parent`.
    pub placed: String,
}

/// An envelope with its ids filled in, and its columns encoded.
#[derive(Clone, Debug, PartialEq)]
pub(in crate::store) struct Filled {
    pub env: Envelope,
    pub intent: Option<Intent>,
    pub canonical: String,
    pub headers: String,
    pub meta: String,
    pub diagnostics: String,
    /// How the text as received differs from `canonical`, as stored (see `texts`), when the
    /// worker filled the envelope: worked out off the writing thread. `None` when the writer
    /// filled it and works it out itself.
    pub raw_edit: Option<crate::store::texts::RawEdit>,
    /// What the delivery ledger works out of the received message alone.
    pub ledger: crate::store::delivery::Ahead,
}

/// Fills in the envelope's thread, message and parent (the ids as stored, see
/// `protocol::id::key`), and encodes what is stored of it. A header naming the same id in
/// another case keeps its spelling: the text as written is what a signature covers, and the
/// `headers` column keeps a value that differs from its column's.
pub(in crate::store) fn fill(
    p: &Parsed,
    thread: &str,
    message: &str,
    parent: Option<&str>,
) -> Filled {
    let mut env = p.envelope.clone();
    let mut set = |key: &str, id: &str| {
        if env.header(key).map(protocol::id::key).as_deref() != Some(id) {
            env.set_header(key, id);
        }
    };
    set("thread", thread);
    set("message", message);
    if let Some(parent) = parent {
        set("parent", parent);
    }
    // A body without `intent:` answers the message it is placed under (named, or the one
    // before it in its session), like a v1.0 `response:` reply: `protocol::answers`' rule,
    // with the store's messages counted too.
    let intent = p.intent_answering(parent.is_some());
    if env.intent_raw().is_none() && intent == Some(Intent::Respond) {
        // A reply without an intent: say so in the envelope, as ids are filled on receipt.
        env.set_header("intent", "RESPOND");
    }
    let canonical = protocol::render(&env);
    // The columns the writer stores beside `headers` (see `texts`).
    let cols = crate::store::texts::HeaderColumns {
        message: Some(message),
        thread: Some(thread),
        parent,
        user: env.user(),
        session: env.session(),
        context: env.context(),
        intent: p.envelope.intent_raw(),
    };
    let (headers, meta) = crate::store::envelope_columns(&env, &cols);
    let ledger = crate::store::delivery::ahead(&crate::store::delivery::NewMessage {
        id: message,
        parent,
        received: true,
        sender: &env.banner.from,
        recipient: &env.banner.to,
        intent: intent.as_ref(),
        meta: &env.meta,
    });
    Filled {
        raw_edit: None,
        ledger,
        intent,
        canonical,
        headers,
        meta,
        diagnostics: serde_json::to_string(&p.diagnostics).unwrap_or_default(),
        env,
    }
}

pub(super) fn prepare(parsed: Parsed, piece: &str) -> Prepared {
    if parsed.has_errors() {
        // The text is kept: an envelope rejected only for its ids may still be imported with
        // fresh ones.
        return Prepared {
            raw: parsed.received_text(piece),
            parsed,
            digest: None,
            filled: None,
            guess: None,
            answered_by: None,
            marks: None,
        };
    }
    let env = &parsed.envelope;
    let raw = parsed.received_text(piece);
    let digest = env
        .message()
        .is_none()
        .then(|| crate::store::v10_place::text_digest(env));
    // A v1.1 envelope names its thread and message; those are its ids, whatever is stored.
    let filled = match (env.thread_key(), env.message_key()) {
        (Some(thread), Some(message)) => {
            let mut f = fill(&parsed, &thread, &message, env.parent_key().as_deref());
            f.raw_edit = Some(crate::store::texts::raw_edit(&raw, &f.canonical));
            Some(f)
        }
        _ => None,
    };
    Prepared {
        raw,
        parsed,
        digest,
        filled,
        guess: None,
        answered_by: None,
        marks: None,
    }
}

/// How many envelopes the worker holds back before handing them on, so that a reply close
/// behind the message it answers marks that one answered before it is stored. A transcript
/// interleaves its conversations, but a reply nearly always comes within a few dozen
/// envelopes of what it answers.
const ANSWER_WINDOW: usize = 256;

/// The envelopes held back ([`ANSWER_WINDOW`]), and where each message id among them is.
#[derive(Default)]
struct Answers {
    held: VecDeque<Prepared>,
    /// The number of envelopes taken before `held[0]`.
    first: usize,
    /// Message id (as stored) → its envelope's number, for those a reply can mark: named
    /// ids, no errors, no POLL (a POLL is carried to each target on its own, see `fanout`).
    by_id: HashMap<String, usize>,
}

/// What [`Answers`] reads of an envelope: its message id, sender, parent and intent.
type Placed<'p> = (
    std::borrow::Cow<'p, str>,
    &'p str,
    Option<std::borrow::Cow<'p, str>>,
    Option<&'p Intent>,
);

/// What [`Answers`] reads of an envelope as it will be stored (its own ids, or those the
/// worker guessed for a v1.0 envelope).
fn placed(prep: &Prepared) -> Option<Placed<'_>> {
    if prep.parsed.has_errors() {
        return None;
    }
    match (&prep.filled, &prep.guess) {
        (Some(f), _) => Some((
            f.env.message_key()?,
            f.env.banner.from.as_str(),
            f.env.parent_key(),
            f.intent.as_ref(),
        )),
        (None, Some(g)) => Some((
            std::borrow::Cow::Borrowed(g.message.as_str()),
            g.filled.env.banner.from.as_str(),
            g.parent.as_deref().map(std::borrow::Cow::Borrowed),
            g.filled.intent.as_ref(),
        )),
        _ => None,
    }
}

impl Answers {
    /// Takes `prep`: marks the message it answers, held back, as answered by it when it is
    /// from another party; returns what leaves the window.
    fn take(&mut self, mut prep: Prepared) -> Option<Prepared> {
        let mut marked = None;
        let mut own = None;
        if let Some((id, from, parent, intent)) = placed(&prep) {
            if let Some(parent) = parent {
                let sender = crate::store::delivery::address_key(from);
                if let Some(p) = self
                    .by_id
                    .get(&*parent)
                    .and_then(|&n| self.held.get_mut(n - self.first))
                {
                    let other = placed(p).is_some_and(|(_, pf, _, _)| {
                        crate::store::delivery::address_key(pf) != sender
                    });
                    if other && p.answered_by.is_none() {
                        p.answered_by = Some(from.to_string());
                        marked = Some(parent.into_owned());
                    }
                }
            }
            if intent != Some(&Intent::Poll) {
                own = Some(id.into_owned());
            }
        }
        prep.marks = marked;
        if let Some(id) = own {
            self.by_id.insert(id, self.first + self.held.len());
        }
        self.held.push_back(prep);
        (self.held.len() > ANSWER_WINDOW)
            .then(|| self.pop())
            .flatten()
    }

    /// The oldest envelope held, leaving.
    fn pop(&mut self) -> Option<Prepared> {
        let prep = self.held.pop_front()?;
        if let Some((id, ..)) = placed(&prep) {
            if self.by_id.get(&*id) == Some(&self.first) {
                self.by_id.remove(&*id);
            }
        }
        self.first += 1;
        Some(prep)
    }
}

/// A message the guesser noted: its id, its thread and its parties.
type Noted = (String, String, v10_place::Parties);

/// Where the writer will place each v1.0 envelope, guessed from the input alone. The writer
/// places an envelope naming no thread, message or parent under the last envelope of its
/// session in the input (the session's latest stored message for the first), in that one's
/// thread, and gives it the message id made on receipt for its index in the input (see
/// `writer::v10`). Guessed here as if every envelope were a new message and every session
/// new to the database: the guess is wrong when a session is stored already, when an
/// envelope is found stored, is held as a session's end pasted again, or gets other ids on
/// the way; the writer then sees a different place and fills the envelope in itself. A wrong
/// guess costs the worker, which has time to spare, and the writer a comparison.
pub(in crate::store) struct Guesser {
    receipt: super::receipt_id::ReceiptIds,
    /// Per session, the messages (id, thread, parties) its envelopes so far were stored as,
    /// the last [`v10_place::LOOK_BACK`] of them, newest last: a v1.0 envelope answers the
    /// newest, or one further back addressed to its sender (see `v10_place`). `None` when that
    /// is the writer's to find (its thread is a stored message's). At most
    /// [`GUESSED_SESSIONS`] of them; the older ones are in `older` (see [`Guesser::recall`]).
    sessions: HashMap<String, Option<VecDeque<Noted>>>,
    /// The sessions noted before `sessions` filled up.
    older: HashMap<String, Option<VecDeque<Noted>>>,
    /// The index in the input of the next envelope.
    index: usize,
}

/// How many sessions the guesser remembers before it forgets the older half of those it
/// met. A guess is only a guess: the writer checks each against its own place and fills in
/// itself where it differs, so forgetting costs only the guesses of a session that comes back
/// after this many others, and keeps an input of many short sessions from holding each one's
/// recent messages to its end.
const GUESSED_SESSIONS: usize = 4096;

impl Guesser {
    /// What is noted of `session`, brought back from `older` if it is there.
    fn recall(&mut self, session: &str) -> Option<&mut Option<VecDeque<Noted>>> {
        if !self.sessions.contains_key(session) {
            let (key, noted) = self.older.remove_entry(session)?;
            self.remember(key, noted);
        }
        self.sessions.get_mut(session)
    }

    /// Notes `session`, first handing the sessions noted so far to `older` (and forgetting
    /// those there) when there are [`GUESSED_SESSIONS`] of them.
    fn remember(&mut self, session: String, noted: Option<VecDeque<Noted>>) {
        if self.sessions.len() >= GUESSED_SESSIONS && !self.sessions.contains_key(&session) {
            self.older = std::mem::take(&mut self.sessions);
        }
        self.sessions.insert(session, noted);
    }

    /// The envelope stored as `last` is its session's newest.
    fn note(&mut self, session: &str, last: Noted) {
        if self.recall(session).is_none() {
            self.remember(session.to_string(), Some(VecDeque::new()));
        }
        let Some(noted) = self.sessions.get_mut(session) else {
            return;
        };
        let recent = noted.get_or_insert_with(VecDeque::new);
        if recent.len() == v10_place::LOOK_BACK {
            recent.pop_front();
        }
        recent.push_back(last);
    }

    pub(crate) fn new(receipt: super::receipt_id::ReceiptIds) -> Guesser {
        Guesser {
            receipt,
            sessions: HashMap::new(),
            older: HashMap::new(),
            index: 0,
        }
    }

    /// Notes the next envelope of the input, and guesses its place when it is a v1.0
    /// envelope placed by its session.
    fn next(&mut self, prep: &mut Prepared) {
        let index = self.index;
        self.index += 1;
        let env = &prep.parsed.envelope;
        let Some(session) = env.session() else {
            return;
        };
        if let Some(f) = &prep.filled {
            // Its own ids, whether new or stored already.
            let ids = (
                f.env.message_key().unwrap_or_default().into_owned(),
                f.env.thread_key().unwrap_or_default().into_owned(),
                v10_place::Parties::of(&f.env),
            );
            self.note(session, ids);
            return;
        }
        if prep.parsed.has_errors() {
            // Rejected: not stored, so the next envelope answers the one before it.
            return;
        }
        let free = env.thread().is_none() && env.message().is_none() && env.parent().is_none();
        let base = match (&prep.digest, free) {
            (Some(base), true) => base,
            // Placed by an id it names: where it goes is the writer's to find.
            _ => {
                if let Some(noted) = self.recall(session) {
                    *noted = None;
                } else {
                    self.remember(session.to_string(), None);
                }
                return;
            }
        };
        let message = self.receipt.id(index, "message");
        let sender = v10_place::names(&env.banner.from);
        let (thread, parent) = match self.recall(session).map(|n| &*n) {
            Some(Some(recent)) => {
                let Some(latest) = recent.back() else {
                    return;
                };
                // As the writer places it: the latest, unless that is a third party's.
                let answered = match latest.2.answered_by(&sender) {
                    true => latest,
                    false => (recent.iter().rev())
                        .find(|(_, _, parties)| parties.addressed_to(&sender))
                        .unwrap_or(latest),
                };
                (answered.1.clone(), Some(answered.0.clone()))
            }
            Some(None) => return,
            // The first of its session in the input starts a thread, unless the database
            // holds the session already (then the writer finds it answers the latest stored).
            None => (message.clone(), None),
        };
        let mut filled = fill(&prep.parsed, &thread, &message, parent.as_deref());
        filled.raw_edit = Some(crate::store::texts::raw_edit(&prep.raw, &filled.canonical));
        let placed = crate::store::v10_place::placed(base, parent.as_deref());
        let parties = v10_place::Parties::of(&filled.env);
        self.note(session, (message.clone(), thread.clone(), parties));
        prep.guess = Some(Box::new(Guess {
            index,
            thread,
            message,
            parent,
            filled,
            placed,
        }));
    }
}

/// The worker: extracts and prepares the envelopes of the pieces it receives until the sender
/// is dropped, or stops when the writer is gone. Pieces are cut where no envelope can span
/// the cut (after an `[[END]]` line or before a banner line); text after the last such place
/// waits for the next piece.
///
/// Envelopes come back on `spent` once stored, to be freed here: memory is best returned by
/// the thread that allocated it (the allocator's per-thread pools otherwise contend, which
/// cost more than the second thread saved).
pub(super) fn run(
    pieces: Receiver<Piece>,
    events: SyncSender<Event>,
    spent: Receiver<Vec<Prepared>>,
    opts: Options,
    mut guesser: Guesser,
) {
    let mut carry = String::new();
    let mut first_line = 1u32;
    let mut done = 0u64;
    // How the input's lines end, read off its first piece (see `protocol::line_ends`).
    let mut line_ends: Option<protocol::line_ends::Rewriter> = None;
    while let Ok(piece) = pieces.recv() {
        let last = piece.last;
        let chunk = match piece.text() {
            Ok(text) => text,
            Err(e) => {
                let _ = events.send(Event::Failed(e));
                return;
            }
        };
        let rewriter = line_ends.get_or_insert_with(|| {
            protocol::line_ends::Rewriter::new(protocol::line_ends::detect(chunk.as_bytes()))
        });
        let chunk = rewriter.piece(chunk);
        if carry.is_empty() {
            carry = chunk;
        } else {
            carry.push_str(&chunk);
        }
        let cut = if last {
            Some(carry.len())
        } else {
            match protocol::last_safe_cut(&carry) {
                Some(c) => Some(c),
                // No safe place yet: wait for more, unless the text has grown past any
                // envelope's size (then a line break will do).
                None if carry.len() < 4 * CHUNK => None,
                None => Some(carry.rfind('\n').map_or(carry.len(), |i| i + 1)),
            }
        };
        let mut diagnostics = Vec::new();
        if let Some(cut) = cut {
            let piece = &carry[..cut];
            let mut ex = Extractor::with_first_line(piece, first_line, opts.clone());
            if done == 0 {
                ex = ex.at_input_start();
            }
            let mut batch = Vec::with_capacity(BATCH);
            let mut answers = Answers::default();
            let mut extracted = ex.by_ref().map(|p| {
                let mut prep = prepare(p, piece);
                guesser.next(&mut prep);
                prep
            });
            // Held back a little (see `Answers`), and all handed on at the piece's end.
            loop {
                let next = match extracted.next() {
                    Some(prep) => answers.take(prep),
                    None => match answers.pop() {
                        Some(prep) => Some(prep),
                        None => break,
                    },
                };
                let Some(prep) = next else { continue };
                batch.push(prep);
                if batch.len() == BATCH {
                    free(&spent);
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    if events.send(Event::Envelopes(full)).is_err() {
                        return;
                    }
                }
            }
            drop(extracted);
            diagnostics = ex.into_diagnostics();
            free(&spent);
            if !batch.is_empty() && events.send(Event::Envelopes(batch)).is_err() {
                return;
            }
            first_line += memchr::memchr_iter(b'\n', piece.as_bytes()).count() as u32;
            done += cut as u64;
            carry.drain(..cut);
        }
        // Sent for every piece received, extracted or not: the writer counts them to bound
        // how many it hands over ahead.
        if events.send(Event::Piece { done, diagnostics }).is_err() {
            return;
        }
    }
}

/// Frees the envelopes the writer is done with.
fn free(spent: &Receiver<Vec<Prepared>>) {
    while let Ok(batch) = spent.try_recv() {
        drop(batch);
    }
}

/// The channel the worker reports on.
pub(super) fn events() -> (SyncSender<Event>, Receiver<Event>) {
    std::sync::mpsc::sync_channel(QUEUE)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The envelopes of `text`, prepared and guessed in order.
    fn guessed(text: &str) -> Vec<Prepared> {
        let receipt = super::super::receipt_id::ReceiptIds::fixed(1_700_000_000_000, "seed");
        let mut guesser = Guesser::new(receipt);
        Extractor::with_first_line(text, 1, Options::default())
            .map(|p| {
                let mut prep = prepare(p, text);
                guesser.next(&mut prep);
                prep
            })
            .collect()
    }

    fn v10(session: &str, body: &str) -> String {
        format!("[[A→B v1]]\nsession: {session}\nresponse: |\n  {body}\n[[END]]\n")
    }

    fn v11(session: &str, thread: &str, message: &str) -> String {
        format!(
            "[[A→B v1]]\nsession: {session}\nthread: {thread}\nmessage: {message}\nintent: REQUEST\nbody: |\n  hi\n[[END]]\n"
        )
    }

    const T: &str = "01J9J3D3M6A4M3WQX8G1ZQ0S7K";
    const M: &str = "01J9J3D3M6A4M3WQX8G1ZQ0S7M";

    /// The guesser remembers at most twice [`GUESSED_SESSIONS`] sessions, however many the
    /// input has; a session it still remembers is guessed as before.
    #[test]
    fn the_guesser_s_sessions_are_bounded() {
        let n = 3 * GUESSED_SESSIONS;
        let text: String = (0..n).map(|i| v10(&format!("s{i}"), "a")).collect();
        let receipt = super::super::receipt_id::ReceiptIds::fixed(1_700_000_000_000, "seed");
        let mut guesser = Guesser::new(receipt);
        for p in Extractor::with_first_line(&text, 1, Options::default()) {
            let mut prep = prepare(p, &text);
            guesser.next(&mut prep);
            assert!(guesser.sessions.len() + guesser.older.len() <= 2 * GUESSED_SESSIONS);
        }
        let last = format!("s{}", n - 1);
        let mut prep = prepare(
            Extractor::with_first_line(&v10(&last, "b"), 1, Options::default())
                .next()
                .unwrap(),
            &v10(&last, "b"),
        );
        guesser.next(&mut prep);
        let g = prep.guess.unwrap();
        assert!(g.parent.is_some(), "answers the session's last envelope");
    }

    #[test]
    fn each_envelope_of_a_session_answers_the_one_before_it() {
        let text = [v10("s", "a"), v10("s", "b"), v10("t", "c"), v10("s", "d")].concat();
        let preps = guessed(&text);
        let g: Vec<&Guess> = preps.iter().map(|p| p.guess.as_deref().unwrap()).collect();
        // The first of a session starts its thread.
        assert_eq!(
            (g[0].parent.as_deref(), &g[0].thread),
            (None, &g[0].message)
        );
        assert_eq!(g[1].parent.as_deref(), Some(g[0].message.as_str()));
        assert_eq!(g[1].thread, g[0].thread);
        assert_eq!(g[2].parent, None);
        assert_eq!(g[3].parent.as_deref(), Some(g[1].message.as_str()));
        for (i, (p, g)) in preps.iter().zip(&g).enumerate() {
            assert_eq!(g.index, i);
            let mut own = fill(&p.parsed, &g.thread, &g.message, g.parent.as_deref());
            own.raw_edit = Some(crate::store::texts::raw_edit(&p.raw, &own.canonical));
            assert_eq!(own, g.filled);
            let base = p.digest.as_deref().unwrap();
            assert_eq!(
                g.placed,
                crate::store::v10_place::placed(base, g.parent.as_deref())
            );
        }
    }

    #[test]
    fn an_envelope_naming_its_ids_places_the_next_of_its_session() {
        let text = [v10("s", "a"), v11("s", T, M), v10("s", "b")].concat();
        let preps = guessed(&text);
        assert!(preps[1].guess.is_none() && preps[1].filled.is_some());
        let g = preps[2].guess.as_deref().unwrap();
        assert_eq!((g.thread.as_str(), g.parent.as_deref()), (T, Some(M)));
    }

    #[test]
    fn a_rejected_envelope_is_passed_over() {
        let rejected = "[[A→ v1]]\nsession: s\nresponse: |\n  x\n[[END]]\n";
        let text = [v10("s", "a"), rejected.to_string(), v10("s", "b")].concat();
        let preps = guessed(&text);
        assert!(preps[1].parsed.has_errors() && preps[1].guess.is_none());
        let (a, b) = (preps[0].guess.as_deref(), preps[2].guess.as_deref());
        assert_eq!(b.unwrap().parent, Some(a.unwrap().message.clone()));
    }

    #[test]
    fn an_envelope_naming_only_its_parent_stops_the_guessing_of_its_session() {
        let parent = format!("[[A→B v1]]\nsession: s\nparent: {M}\nresponse: |\n  y\n[[END]]\n");
        let text = [
            v10("s", "a"),
            parent,
            v10("s", "b"),
            v10("s", "c"),
            v10("t", "d"),
        ]
        .concat();
        let preps = guessed(&text);
        assert!(preps[0].guess.is_some());
        // It joins its parent's thread, which the writer finds; the envelopes after it go
        // there too.
        assert!(preps[1..4].iter().all(|p| p.guess.is_none()));
        assert!(preps[4].guess.is_some());
    }
}
