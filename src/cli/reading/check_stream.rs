//! Reading an input in blocks on every core and handing what is found to one writer in input
//! order, as it is found: `check` and the first pass of `parse --json` read this way, so
//! their memory stays a few blocks and a few thousand findings whatever the input holds.
//!
//! Reading a whole transcript into one fresh buffer cost more than checking a third of it:
//! the kernel zeroes every new page before the copy lands in it. Here a few buffers of about
//! [`BLOCK`] bytes go round: a reading thread fills one, cuts it where no envelope can span
//! the cut ([`protocol::last_safe_cut_bytes`]), hands the whole part to a worker (one per
//! core) and carries the rest into the next buffer. Each part is extracted exactly as the
//! whole would be.
//!
//! A worker first counts its part's line breaks and says whether it is UTF-8; once the
//! parts before it have said as much (they are taken in order, and this is the first thing
//! their workers do) it knows the number of its first line, and whether it holds the
//! input's first byte that is not UTF-8. Its findings then carry the input's own line
//! numbers from the start. (Numbering every part from 1 and moving the findings down once
//! the parts before were read meant holding them until then; counting on the reading thread
//! meant a pass of its own over every byte before any part was handed on.)
//!
//! Findings go to the writer (the calling thread) in chunks, in input order: the part being
//! written sends its chunks as it makes them; a worker further on holds its findings until
//! it has a chunk's worth, then waits for its turn, and a part further on than [`AHEAD`]
//! parts waits before handing in its last chunk. So what is held at any time is bounded by
//! the number of workers, not by the input: a million diagnostics are written as they come,
//! never gathered to be written at the end.
//!
//! Bytes that are not UTF-8 are read as the text with each invalid sequence replaced by
//! U+FFFD (parts are cut after a line break, so each decodes as it does within the whole);
//! the part holding the first of them reports it.

use std::collections::{BTreeMap, VecDeque};
use std::io::Read;
use std::sync::{Condvar, Mutex, MutexGuard, mpsc};

use crate::protocol::{self, Diagnostic};

/// How many bytes are read at a time: large enough that handing a part to a worker costs
/// nothing next to checking it, small enough that the buffers stay in the processor's cache.
pub(in crate::cli) const BLOCK: usize = 1 << 20;

/// How far back from a block's end a cut is looked for first: a transcript's envelopes are a
/// few kilobytes, so the last `[[END]]` is nearly always within this, and only this much of
/// the block is searched by the reading thread.
const TAIL: usize = 64 << 10;

/// How many parts past the one being written may hand in their last chunk before it is
/// written: enough that workers on parts of unequal cost do not wait for each other, few
/// enough that what waits stays small.
const AHEAD: usize = 4;

/// Where a part stands in the input.
pub(in crate::cli) struct Place {
    /// The number of its first line in the input.
    pub first_line: u32,
    /// Whether it starts the input: a byte-order mark there is the file's encoding
    /// signature, not text.
    pub start: bool,
    /// For the part holding the input's first bytes that are not UTF-8: the diagnostic
    /// saying where they are (the input's line and column).
    pub decoding: Option<Diagnostic>,
}

/// What a worker does with a part: reads it and sends what it found in chunks, in order.
pub(in crate::cli) trait Job: Sync {
    /// What the writer is handed.
    type Chunk: Send;

    /// Reads `text`, the part at `place`, calling `send` with its findings in input order (as
    /// many times as it likes; every chunk but the last waits for the part's turn).
    fn read(&self, text: &str, place: Place, send: &mut dyn FnMut(Self::Chunk));
}

/// Reads what `reader` yields in parts of about `block` bytes, `job` reading each on one of
/// `workers` threads, and calls `write` with every chunk in input order, on this thread.
/// Writing stops at the first error `write` returns, which is returned; so is a read error.
pub(in crate::cli) fn run<J: Job>(
    reader: impl Read + Send,
    block: usize,
    workers: usize,
    job: &J,
    write: impl FnMut(J::Chunk) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let block = block.max(1);
    run_parts(workers, job, write, |work, spare, shared| {
        read_parts(reader, block, work, spare, shared)
    })
}

/// [`run`] for a text already in memory, read as it stands (a file's line ends are made
/// uniform as its blocks are read; a text in memory was made so when it was read, or decoded
/// from mail): its parts are cut where [`run`] cuts and handed to the workers as they stand,
/// not copied into blocks (a copy of the input that cannot be cut, one endless body
/// or line, would be as large as the input again).
pub(in crate::cli) fn run_text<J: Job>(
    text: &str,
    block: usize,
    workers: usize,
    job: &J,
    write: impl FnMut(J::Chunk) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let block = block.max(1);
    run_parts(workers, job, write, |work, _, shared| {
        cut_parts(text.as_bytes(), block, work, shared)
    })
}

/// A part handed to a worker: bytes read into a buffer that goes round, or a piece of a text
/// in memory.
enum Part<'t> {
    Read(Vec<u8>),
    Cut(&'t [u8]),
}

/// The workers, the writer and the thread that makes the parts with `source`.
fn run_parts<'t, J: Job>(
    workers: usize,
    job: &J,
    mut write: impl FnMut(J::Chunk) -> std::io::Result<()>,
    source: impl for<'s> FnOnce(
        mpsc::SyncSender<(usize, Part<'t>)>,
        mpsc::Receiver<Vec<u8>>,
        &'s Shared,
    ) -> std::io::Result<()>
    + Send,
) -> std::io::Result<()> {
    let workers = workers.max(1);
    let shared = Shared {
        state: Mutex::new(State::default()),
        changed: Condvar::new(),
    };
    let (work_tx, work_rx) = mpsc::sync_channel::<(usize, Part<'t>)>(workers);
    let work_rx = Mutex::new(work_rx);
    let (done_tx, done_rx) = mpsc::channel::<Done<J::Chunk>>();
    let (spare_tx, spare_rx) = mpsc::channel::<Vec<u8>>();
    std::thread::scope(|s| {
        let shared = &shared;
        // Workers first: when a thread cannot be had (a process short of memory), those
        // already running end once the reading thread's sender is gone, and nobody waits.
        let mut started = 0;
        for _ in 0..workers {
            let (work_rx, done_tx, spare_tx) = (&work_rx, done_tx.clone(), spare_tx.clone());
            let worker = std::thread::Builder::new().spawn_scoped(s, move || {
                let _stop_on_panic = StopOnPanic(shared);
                loop {
                    let part = match work_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => break,
                    };
                    let Ok((index, part)) = part else {
                        break;
                    };
                    match part {
                        Part::Read(bytes) => {
                            read_part(job, shared, index, &bytes, &done_tx);
                            let _ = spare_tx.send(bytes);
                        }
                        Part::Cut(bytes) => read_part(job, shared, index, bytes, &done_tx),
                    }
                }
            });
            match worker {
                Ok(_) => started += 1,
                Err(e) if started == 0 => return Err(e),
                // Fewer workers read the same parts.
                Err(_) => break,
            }
        }
        let reading = std::thread::Builder::new()
            .spawn_scoped(s, move || source(work_tx, spare_rx, shared))?;
        drop((done_tx, spare_tx));
        let written = write_in_order(done_rx, shared, &mut write);
        if written.is_err() {
            shared.stop();
        }
        let read = reading
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        written.and(read)
    })
}

/// What a worker hands the writer: a chunk of part `index`, and whether it is the last.
struct Done<C> {
    index: usize,
    chunk: Option<C>,
    last: bool,
}

/// What the threads share, behind one lock.
struct Shared {
    state: Mutex<State>,
    /// Notified whenever the state changes.
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// Per part, once its worker has looked: its line breaks and whether it is UTF-8.
    looked: Vec<Option<(u32, bool)>>,
    /// The part being written.
    head: usize,
    /// The writer stopped (a write error) or a worker panicked: nobody waits any more.
    stopped: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits until `ready` holds or everything stopped; whether it holds.
    fn wait_until(&self, mut ready: impl FnMut(&State) -> bool) -> bool {
        let mut state = self.lock();
        while !state.stopped && !ready(&state) {
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        !state.stopped
    }

    fn stop(&self) {
        self.lock().stopped = true;
        self.changed.notify_all();
    }
}

/// Stops everything when the worker holding it panics, so that no other thread waits for a
/// turn that will never come; the scope then re-raises the panic.
struct StopOnPanic<'a>(&'a Shared);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}

/// One part on a worker: its place first, then the job, its chunks handed in at their turn.
fn read_part<J: Job>(
    job: &J,
    shared: &Shared,
    index: usize,
    bytes: &[u8],
    done: &mpsc::Sender<Done<J::Chunk>>,
) {
    let lines = memchr::memchr_iter(b'\n', bytes).count();
    let lines = u32::try_from(lines).unwrap_or(u32::MAX);
    let utf8 = simdutf8::basic::from_utf8(bytes).ok();
    {
        let mut state = shared.lock();
        if state.looked.len() <= index {
            state.looked.resize(index + 1, None);
        }
        state.looked[index] = Some((lines, utf8.is_some()));
    }
    shared.changed.notify_all();
    let mut before = None;
    let placed = shared.wait_until(|state| {
        let earlier = &state.looked[..index];
        if earlier.iter().all(Option::is_some) {
            before = Some(
                earlier
                    .iter()
                    .flatten()
                    .fold((0u32, true), |(n, ok), (l, u)| {
                        (n.saturating_add(*l), ok && *u)
                    }),
            );
        }
        before.is_some()
    });
    let Some((lines_before, utf8_before)) = before.filter(|_| placed) else {
        return;
    };
    let first_line = lines_before.saturating_add(1);
    let (text, decoding) = match utf8 {
        Some(text) => (std::borrow::Cow::Borrowed(text), None),
        None => {
            let (text, mut d) = protocol::decode(bytes);
            if let Some(d) = &mut d {
                d.line = d.line.saturating_add(lines_before);
            }
            (text, d.filter(|_| utf8_before))
        }
    };
    let place = Place {
        first_line,
        start: index == 0,
        decoding,
    };
    // Every chunk but the last goes when the part is being written; the last when the part
    // is at most `AHEAD` parts ahead of it.
    let mut pending: Option<J::Chunk> = None;
    let mut going = true;
    job.read(&text, place, &mut |chunk| {
        if let Some(earlier) = pending.replace(chunk)
            && going
        {
            going = shared.wait_until(|state| state.head == index);
            let _ = done.send(Done {
                index,
                chunk: Some(earlier),
                last: false,
            });
        }
    });
    if going && shared.wait_until(|state| index < state.head + AHEAD) {
        let _ = done.send(Done {
            index,
            chunk: pending,
            last: true,
        });
    }
}

/// The writer's loop: chunks are written in part order, those of parts further on kept
/// until their turn.
fn write_in_order<C>(
    done: mpsc::Receiver<Done<C>>,
    shared: &Shared,
    write: &mut impl FnMut(C) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut waiting: BTreeMap<usize, VecDeque<(Option<C>, bool)>> = BTreeMap::new();
    let mut head = 0;
    for d in done {
        waiting
            .entry(d.index)
            .or_default()
            .push_back((d.chunk, d.last));
        while let Some(queue) = waiting.get_mut(&head) {
            let Some((chunk, last)) = queue.pop_front() else {
                break;
            };
            if let Some(chunk) = chunk {
                write(chunk)?;
            }
            if last {
                waiting.remove(&head);
                head += 1;
                shared.lock().head = head;
                shared.changed.notify_all();
            }
        }
    }
    Ok(())
}

/// The reading thread: fills buffers, cuts them and hands the parts to the workers.
fn read_parts(
    mut reader: impl Read,
    block: usize,
    work: mpsc::SyncSender<(usize, Part<'_>)>,
    spare: mpsc::Receiver<Vec<u8>>,
    shared: &Shared,
) -> std::io::Result<()> {
    let mut carry: Vec<u8> = Vec::new();
    let mut eof = false;
    let mut index = 0;
    // How the input's lines end, read off its first block (see `protocol::line_ends`).
    let mut line_ends: Option<protocol::line_ends::Rewriter> = None;
    while !eof {
        if shared.lock().stopped {
            break;
        }
        // Room for a block after the carried rest from the start: a buffer that grew would
        // be copied to fresh pages the kernel zeroes.
        let mut buf = spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(2 * block));
        buf.clear();
        buf.append(&mut carry);
        // Read on into the same buffer until it holds a cut, or the input ends. Each byte is
        // looked at once for line breaks and each line judged once, so a file of one endless
        // line costs no more than any other.
        let (mut from, mut looked) = (0, 0);
        let cut = loop {
            let before = buf.len();
            eof = fill(&mut reader, &mut buf, block)?;
            let rewriter = line_ends.get_or_insert_with(|| {
                protocol::line_ends::Rewriter::new(protocol::line_ends::detect(&buf[before..]))
            });
            rewriter.bytes(&mut buf[before..]);
            if eof {
                break buf.len();
            }
            let Some(last) = memchr::memrchr(b'\n', &buf[looked..]).map(|i| looked + i) else {
                looked = buf.len();
                continue;
            };
            looked = buf.len();
            match cut_in(&buf[..=last], from) {
                Some(cut) => break cut,
                // Every line before the last break was judged; the one after it is not whole
                // yet.
                None => from = last,
            }
        };
        carry.extend_from_slice(&buf[cut..]);
        buf.truncate(cut);
        if work.send((index, Part::Read(buf))).is_err() {
            break;
        }
        index += 1;
    }
    Ok(())
}

/// The cutting thread for a text in memory: the parts [`read_parts`] makes of the same bytes
/// read in blocks of `block`, as pieces of `text`.
fn cut_parts<'t>(
    text: &'t [u8],
    block: usize,
    work: mpsc::SyncSender<(usize, Part<'t>)>,
    shared: &Shared,
) -> std::io::Result<()> {
    let (mut start, mut index) = (0, 0);
    while start < text.len() {
        if shared.lock().stopped {
            break;
        }
        let rest = &text[start..];
        // As `read_parts` reads on, a block at a time, until the part holds a cut.
        let (mut end, mut from, mut looked) = (0, 0, 0);
        let cut = loop {
            end = (end + block).min(rest.len());
            if end == rest.len() {
                break end;
            }
            let Some(last) = memchr::memrchr(b'\n', &rest[looked..end]).map(|i| looked + i) else {
                looked = end;
                continue;
            };
            looked = end;
            match cut_in(&rest[..=last], from) {
                Some(cut) => break cut,
                None => from = last,
            }
        };
        if work.send((index, Part::Cut(&rest[..cut]))).is_err() {
            break;
        }
        start += cut;
        index += 1;
    }
    Ok(())
}

/// Appends up to `n` bytes of `reader` to `buf`; whether the input ended.
fn fill(reader: &mut impl Read, buf: &mut Vec<u8>, n: usize) -> std::io::Result<bool> {
    buf.reserve(n);
    let got = reader.by_ref().take(n as u64).read_to_end(buf)?;
    Ok(got < n)
}

/// The last place in `buf`, which ends with a line break, where it may be cut, looking at
/// the lines from the line break at `from` (or the start) on: in the last [`TAIL`] bytes
/// first, then in all of them.
fn cut_in(buf: &[u8], from: usize) -> Option<usize> {
    let end = buf.len();
    // Windows start at a line break, so that a marker line at their start is seen whole.
    let tail = end.saturating_sub(TAIL).max(from).min(end - 1);
    let tail = memchr::memrchr(b'\n', &buf[from..=tail]).map_or(from, |i| from + i);
    for start in [tail, from] {
        if let Some(cut) = protocol::last_safe_cut_bytes(&buf[start..end]).filter(|c| *c > 0) {
            return Some(start + cut);
        }
        if start == from {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job that hands in each part's text whole, with its place, for the tests below.
    struct Echo;

    impl Job for Echo {
        type Chunk = (u32, String, Option<u32>);

        fn read(&self, text: &str, place: Place, send: &mut dyn FnMut(Self::Chunk)) {
            // Several chunks per part, to exercise the turns.
            for piece in text.split_inclusive('\n') {
                send((
                    place.first_line,
                    piece.to_string(),
                    place.decoding.as_ref().map(|d| d.line),
                ));
            }
        }
    }

    fn echoed(input: &[u8], block: usize, workers: usize) -> Vec<(u32, String, Option<u32>)> {
        let mut got = Vec::new();
        run(input, block, workers, &Echo, |c| {
            got.push(c);
            Ok(())
        })
        .expect("reading memory");
        got
    }

    /// [`echoed`] for a text in memory, cut in place.
    fn echoed_text(input: &str, block: usize, workers: usize) -> Vec<(u32, String, Option<u32>)> {
        let mut got = Vec::new();
        run_text(input, block, workers, &Echo, |c| {
            got.push(c);
            Ok(())
        })
        .expect("reading memory");
        got
    }

    const ENVELOPE: &str =
        "[[A→B v1]]\nuser: u\nintent: request\nbody: |\n  hi\nsig: none\n[[END]]\n";

    /// The parts, however small the blocks and however many the workers, are the input in
    /// order, cut after whole lines, each knowing its first line.
    #[test]
    fn parts_come_in_order_and_know_their_lines() {
        let long = "x".repeat(300_000);
        let text = format!(
            "{ENVELOPE}{long}\n{ENVELOPE}[[END]]\n{}",
            ENVELOPE.repeat(300)
        );
        for block in [1, 7, 64, 1000, 4096, 1 << 20] {
            for (workers, in_memory) in [(1, false), (2, false), (3, false), (1, true), (3, true)] {
                let got = match in_memory {
                    false => echoed(text.as_bytes(), block, workers),
                    true => echoed_text(&text, block, workers),
                };
                let whole: String = got.iter().map(|c| c.1.as_str()).collect();
                assert_eq!(whole, text, "block {block}, {workers} workers");
                // A part's first line is the line it starts at.
                let (mut line, mut part) = (1, 0);
                for (first, piece, _) in &got {
                    if *first != part {
                        assert_eq!(*first, line, "block {block}, {workers} workers");
                        part = *first;
                    }
                    line += piece.matches('\n').count() as u32;
                }
            }
        }
    }

    /// The first bytes that are not UTF-8 are reported once, by the part holding them, at
    /// their line in the input; later ones only decode as U+FFFD.
    #[test]
    fn the_first_invalid_byte_is_placed_in_the_input() {
        let mut bytes = ENVELOPE.repeat(50).into_bytes();
        bytes.extend_from_slice(b"bad \xff here\n");
        bytes.extend_from_slice(ENVELOPE.repeat(50).as_bytes());
        bytes.extend_from_slice(b"again \xfe\n");
        let line = 50 * 7 + 1;
        for block in [16, 300, 1 << 20] {
            let got = echoed(&bytes, block, 2);
            let reported: Vec<u32> = got.iter().filter_map(|c| c.2).collect();
            assert!(reported.iter().all(|l| *l == line), "{reported:?}");
            assert!(!reported.is_empty());
            let whole: String = got.iter().map(|c| c.1.as_str()).collect();
            assert_eq!(whole, String::from_utf8_lossy(&bytes));
        }
    }

    /// A part is cut after the last envelope's `[[END]]` line, never inside one.
    #[test]
    fn parts_are_cut_after_an_end_line() {
        let text = ENVELOPE.repeat(200);
        let bytes = text.as_bytes();
        assert_eq!(cut_in(bytes, 0), Some(text.len()));
        let half = &bytes[..=memchr::memrchr(b'\n', &bytes[..text.len() / 2]).expect("a break")];
        let cut = cut_in(half, 0).expect("a cut");
        assert!(
            text[..cut].ends_with("[[END]]\n"),
            "{}",
            &text[cut - 20..cut]
        );
        assert_eq!(cut_in(b"\n\xff\n", 0), None);
        assert_eq!(cut_in(b"\xff\n[[END]]\n", 0), Some(10));
    }

    /// A writer that fails stops the reading, and the error comes back.
    #[test]
    fn a_write_error_stops_everything() {
        let text = ENVELOPE.repeat(2000);
        let mut calls = 0;
        let got = run(text.as_bytes(), 64, 2, &Echo, |_| {
            calls += 1;
            Err(std::io::Error::other("full"))
        });
        assert!(got.is_err());
        assert_eq!(calls, 1);
    }
}
