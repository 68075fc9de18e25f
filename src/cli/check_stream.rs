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

/// One part of the input for a worker: its index, bytes, and the number of its first line.
type Part = (usize, Vec<u8>, u32);

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
                    let Ok((index, bytes, first_line)) = part else {
                        break;
                    };
                    let t = std::str::from_utf8(&bytes)
                        .ok()
                        .map(|text| tally(text, first_line, opts, keep));
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
        let mut line = 1u32;
        let mut utf8 = true;
        let mut eof = false;
        while !eof && utf8 {
            for (index, t, bytes) in done_rx.try_iter() {
                results[index] = Some(t);
                spare.push(bytes);
            }
            let mut buf = spare.pop().unwrap_or_default();
            buf.clear();
            buf.append(&mut carry);
            // Read on into the same buffer until it holds a cut, or the input ends.
            let mut searched_from = 0;
            let cut = loop {
                let before = buf.len();
                eof = fill(&mut reader, &mut buf, block)?;
                if eof {
                    break buf.len();
                }
                match cut_in(&buf, searched_from) {
                    Ok(Some(cut)) => break cut,
                    Ok(None) => {
                        // A cut can only be new from the last line that was incomplete on.
                        searched_from = memchr::memrchr(b'\n', &buf[..before]).unwrap_or(0);
                    }
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
            let lines = memchr::memchr_iter(b'\n', &buf).count();
            results.push(None);
            if work_tx.send((results.len() - 1, buf, line)).is_err() {
                break;
            }
            line = line.saturating_add(u32::try_from(lines).unwrap_or(u32::MAX));
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
        Ok(results.into_iter().map(Option::flatten).collect())
    })
}

/// Appends up to `n` bytes of `reader` to `buf`; whether the input ended.
fn fill(reader: &mut impl Read, buf: &mut Vec<u8>, n: usize) -> std::io::Result<bool> {
    buf.reserve(n);
    let got = reader.by_ref().take(n as u64).read_to_end(buf)?;
    Ok(got < n)
}

/// The last place in `buf` where it may be cut, looking at the whole lines from the line
/// break at `from` on: in the last [`TAIL`] bytes first, then in all of them. `Err` when those
/// lines are not UTF-8.
fn cut_in(buf: &[u8], from: usize) -> Result<Option<usize>, ()> {
    let Some(end) = memchr::memrchr(b'\n', &buf[from..]).map(|i| from + i + 1) else {
        return Ok(None);
    };
    // Windows start at a line break, so that a marker line at their start is seen whole.
    let tail = end.saturating_sub(TAIL).max(from);
    let tail = memchr::memrchr(b'\n', &buf[from..=tail]).map_or(from, |i| from + i);
    for start in [tail, from] {
        let text = std::str::from_utf8(&buf[start..end]).map_err(|_| ())?;
        if let Some(cut) = protocol::last_safe_cut(text).filter(|c| *c > 0) {
            return Ok(Some(start + cut));
        }
        if start == from {
            break;
        }
    }
    Ok(None)
}
