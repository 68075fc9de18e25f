//! `check` of a large file read in blocks, never whole.
//!
//! Reading a whole transcript into one fresh buffer cost more than checking a third of it:
//! the kernel zeroes every new page before the copy lands in it. Here a few buffers of about
//! [`BLOCK`] bytes go round: the reading thread fills one, cuts it where no envelope can span
//! the cut ([`protocol::last_safe_cut`]), hands the whole part to a worker (one per core) and
//! carries the rest into the next buffer; a worker checks its part
//! ([`parse_cmd::tally`](super::parse_cmd)) and gives the buffer back. Memory stays a few
//! blocks whatever the file's size, and each part is extracted exactly as the whole would be.
//!
//! A part's lines are numbered from 1 while it is checked, and its findings moved down to
//! their place in the file once the parts are in order: the worker counts the part's lines
//! as it reads them, where numbering them from their place would take the reading thread a
//! pass of its own over every byte, to count the line breaks before handing the part on.
//!
//! A file that is not UTF-8 is not checked here ([`tallies`] answers `None`): its report
//! names the first invalid byte of the whole file, which only reading it whole can place.

use std::io::Read;
use std::sync::{Mutex, mpsc};

use super::parse_cmd::{Tally, tally};
use crate::protocol::{self, Options};

/// How many bytes are read at a time: large enough that handing a part to a worker costs
/// nothing next to checking it, small enough that the buffers stay in the processor's cache.
pub(super) const BLOCK: usize = 1 << 20;

/// How far back from a block's end a cut is looked for first: a transcript's envelopes are a
/// few kilobytes, so the last `[[END]]` is nearly always within this, and only this much of
/// the block is decoded by the reading thread.
const TAIL: usize = 64 << 10;

/// One part of the input for a worker: its index and bytes.
type Part = (usize, Vec<u8>);

/// Checks what `reader` yields in parts of about `block` bytes on `workers` threads: one
/// [`Tally`] per part, in input order. `None` when the input is not UTF-8.
pub(super) fn tallies(
    mut reader: impl Read,
    block: usize,
    workers: usize,
    opts: &Options,
    keep: bool,
) -> std::io::Result<Option<Vec<Tally>>> {
    let block = block.max(1);
    let (work_tx, work_rx) = mpsc::sync_channel::<Part>(workers);
    let work_rx = Mutex::new(work_rx);
    let (done_tx, done_rx) = mpsc::channel::<(usize, Option<Tally>, Vec<u8>)>();
    std::thread::scope(|s| {
        for _ in 0..workers.max(1) {
            let (work_rx, done_tx) = (&work_rx, done_tx.clone());
            s.spawn(move || {
                loop {
                    let part = match work_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => break,
                    };
                    let Ok((index, bytes)) = part else {
                        break;
                    };
                    let t = simdutf8::basic::from_utf8(&bytes)
                        .ok()
                        .map(|text| tally(text, 1, index == 0, opts, keep));
                    if done_tx.send((index, t, bytes)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);

        let mut results: Vec<Option<Option<Tally>>> = Vec::new();
        let mut spare: Vec<Vec<u8>> = Vec::new();
        let mut carry: Vec<u8> = Vec::new();
        let mut utf8 = true;
        let mut eof = false;
        // How the input's lines end, read off its first block (see `protocol::line_ends`).
        let mut line_ends: Option<protocol::line_ends::Rewriter> = None;
        while !eof && utf8 {
            for (index, t, bytes) in done_rx.try_iter() {
                results[index] = Some(t);
                spare.push(bytes);
            }
            // Room for a block after the carried rest from the start: a buffer that grew
            // would be copied to fresh pages the kernel zeroes.
            let mut buf = spare.pop().unwrap_or_else(|| Vec::with_capacity(2 * block));
            buf.clear();
            buf.append(&mut carry);
            // Read on into the same buffer until it holds a cut, or the input ends. Each byte
            // is looked at once for line breaks and each line judged once, so a file of one
            // endless line costs no more than any other.
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
                    Ok(Some(cut)) => break cut,
                    // Every line before the last break was judged; the one after it is not
                    // whole yet.
                    Ok(None) => from = last,
                    Err(()) => {
                        utf8 = false;
                        break buf.len();
                    }
                }
            };
            if !utf8 {
                break;
            }
            carry.extend_from_slice(&buf[cut..]);
            buf.truncate(cut);
            results.push(None);
            if work_tx.send((results.len() - 1, buf)).is_err() {
                break;
            }
        }
        drop(work_tx);
        for (index, t, _) in done_rx {
            results[index] = Some(t);
        }
        if !utf8 {
            return Ok(None);
        }
        // A part missing means a worker stopped early, which only a panic does; the scope
        // re-raises it when it ends.
        let tallies: Option<Vec<Tally>> = results.into_iter().map(Option::flatten).collect();
        Ok(tallies.map(in_place))
    })
}

/// The tallies of consecutive parts, each checked with its lines numbered from 1, moved down
/// to where their lines stand in the input. Every part but the last ends with a line break
/// (it is cut after one), so the lines before a part are the line breaks before it.
fn in_place(mut tallies: Vec<Tally>) -> Vec<Tally> {
    let mut before = 0u32;
    for t in &mut tallies {
        t.move_down(before);
        before = before.saturating_add(t.lines());
    }
    tallies
}

/// Appends up to `n` bytes of `reader` to `buf`; whether the input ended.
fn fill(reader: &mut impl Read, buf: &mut Vec<u8>, n: usize) -> std::io::Result<bool> {
    buf.reserve(n);
    let got = reader.by_ref().take(n as u64).read_to_end(buf)?;
    Ok(got < n)
}

/// The last place in `buf`, which ends with a line break, where it may be cut, looking at
/// the lines from the line break at `from` (or the start) on: in the last [`TAIL`] bytes
/// first, then in all of them. `Err` when those lines are not UTF-8.
fn cut_in(buf: &[u8], from: usize) -> Result<Option<usize>, ()> {
    let end = buf.len();
    // Windows start at a line break, so that a marker line at their start is seen whole.
    let tail = end.saturating_sub(TAIL).max(from).min(end - 1);
    let tail = memchr::memrchr(b'\n', &buf[from..=tail]).map_or(from, |i| from + i);
    for start in [tail, from] {
        let text = simdutf8::basic::from_utf8(&buf[start..end]).map_err(|_| ())?;
        if let Some(cut) = protocol::last_safe_cut(text).filter(|c| *c > 0) {
            return Ok(Some(start + cut));
        }
        if start == from {
            break;
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Diagnostic;

    /// What `check` reports for `text` read in blocks of `block` bytes on two workers; with a
    /// block larger than the text, what it reports for the whole text at once.
    fn in_blocks(text: &str, block: usize) -> (usize, Vec<Diagnostic>) {
        super::super::parse_cmd::check_reader(text.as_bytes(), block, 2, &Options::default(), None)
            .expect("reading memory")
            .expect("UTF-8")
    }

    const ENVELOPE: &str =
        "[[A→B v1]]\nuser: u\nintent: request\nbody: |\n  hi\nsig: none\n[[END]]\n";

    /// Long lines, with and without line breaks between them, and markers straddling every
    /// block boundary.
    #[test]
    fn long_lines_and_markers_across_blocks() {
        let long = "x".repeat(300_000);
        let inputs = [
            format!("{long}{ENVELOPE}"),
            format!("{long}\n{ENVELOPE}{long}\n{ENVELOPE}"),
            format!("{ENVELOPE}{long}"),
            format!("{ENVELOPE}{ENVELOPE}{long}\n[[END]]\n{ENVELOPE}"),
            ENVELOPE.repeat(500),
            format!("é{}", ENVELOPE.repeat(50)),
            // A byte-order mark starts the file only: one before a banner further on is
            // reported wherever a block starts.
            format!("\u{feff}{ENVELOPE}").repeat(200),
        ];
        for text in &inputs {
            let whole = in_blocks(text, text.len() + 1);
            assert!(whole.0 > 0, "{:?}", whole.1);
            for block in [1, 7, 64, 1000, 4096, 1 << 20] {
                assert_eq!(in_blocks(text, block), whole, "block {block}");
            }
        }
    }

    /// A part is cut after the last envelope's `[[END]]` line, never inside one.
    #[test]
    fn parts_are_cut_after_an_end_line() {
        let text = ENVELOPE.repeat(200);
        let bytes = text.as_bytes();
        assert_eq!(cut_in(bytes, 0), Ok(Some(text.len())));
        let half = &bytes[..=memchr::memrchr(b'\n', &bytes[..text.len() / 2]).expect("a break")];
        let cut = cut_in(half, 0).expect("UTF-8").expect("a cut");
        assert!(
            text[..cut].ends_with("[[END]]\n"),
            "{}",
            &text[cut - 20..cut]
        );
        assert_eq!(cut_in(&[b'\n', 0xff, b'\n'], 0), Err(()));
    }
}
