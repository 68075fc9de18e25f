//! Writes a synthetic relay transcript (see `crosstalk::synth`) to stdout or a file.
//!
//! ```text
//! cargo run --release --example gen_transcript -- [--envelopes N] [--threads N] [--seed N]
//!     [--mangled P] [--out FILE]
//! ```
//!
//! Defaults are `TranscriptSpec::default()`: 100 000 envelopes, 5 000 threads, seed 1, 5 %
//! mangled (about 70 MB). A summary (envelopes, bytes, time) goes to stderr.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::Instant;

use crosstalk::synth::{TranscriptSpec, write_transcript};

const USAGE: &str = "usage: gen_transcript [--envelopes N] [--threads N] [--seed N] \
                     [--mangled P] [--out FILE]\n\
                     \x20 --envelopes N  number of envelopes (default 100000)\n\
                     \x20 --threads N    number of conversations (default 5000)\n\
                     \x20 --seed N       PRNG seed; equal arguments give equal bytes (default 1)\n\
                     \x20 --mangled P    percent of envelopes mangled like chat windows do, 0-100 (default 5)\n\
                     \x20 --out FILE     write to FILE instead of stdout";

fn main() -> ExitCode {
    let (spec, out) = match parse(std::env::args().skip(1)) {
        Ok(Some(parsed)) => parsed,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("gen_transcript: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let start = Instant::now();
    let written = match &out {
        Some(path) => File::create(path).and_then(|file| generate(&spec, file)),
        None => generate(&spec, io::stdout().lock()),
    };
    let target = out.as_deref().unwrap_or("stdout");
    match written {
        Ok(bytes) => {
            let secs = start.elapsed().as_secs_f64();
            let (envelopes, threads) =
                (spec.envelopes, spec.threads.clamp(1, spec.envelopes.max(1)));
            let per = bytes / envelopes.max(1) as u64;
            eprintln!("gen_transcript: {envelopes} envelopes, {threads} threads, {bytes} bytes");
            eprintln!("gen_transcript: {per} bytes per envelope, to {target} in {secs:.2} s");
            ExitCode::SUCCESS
        }
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen_transcript: cannot write {target}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Streams the transcript through a `BufWriter`; returns the number of bytes written.
fn generate(spec: &TranscriptSpec, out: impl Write) -> io::Result<u64> {
    let mut out = Counting {
        inner: BufWriter::with_capacity(1 << 20, out),
        bytes: 0,
    };
    write_transcript(spec, &mut out)?;
    out.flush()?;
    Ok(out.bytes)
}

/// Counts what passes through, so the summary needs no second pass.
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The spec and output file from the arguments (`--flag value` or `--flag=value`); `None` for
/// `--help`.
fn parse(
    mut args: impl Iterator<Item = String>,
) -> Result<Option<(TranscriptSpec, Option<String>)>, String> {
    let (mut spec, mut out) = (TranscriptSpec::default(), None);
    while let Some(arg) = args.next() {
        if arg == "-h" || arg == "--help" {
            return Ok(None);
        }
        let name = arg.split_once('=').map_or(arg.as_str(), |(flag, _)| flag);
        if !["--envelopes", "--threads", "--seed", "--mangled", "--out"].contains(&name) {
            return Err(format!("unknown argument `{arg}`"));
        }
        let (flag, value) = match arg.split_once('=') {
            Some((flag, value)) => (flag.to_string(), value.to_string()),
            None => {
                let value = args.next().ok_or_else(|| format!("{arg} needs a value"))?;
                (arg, value)
            }
        };
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag} wants a non-negative integer, not `{value}`"))
        };
        match flag.as_str() {
            "--envelopes" => spec.envelopes = to_usize(&flag, number()?)?,
            "--threads" => spec.threads = to_usize(&flag, number()?)?,
            "--seed" => spec.seed = number()?,
            "--mangled" => match number()? {
                p @ 0..=100 => spec.mangled_percent = p as u32,
                p => return Err(format!("--mangled is a percentage (0-100), not {p}")),
            },
            "--out" if !value.is_empty() => out = Some(value),
            _ => return Err("--out needs a file name".into()),
        }
    }
    Ok(Some((spec, out)))
}

fn to_usize(flag: &str, n: u64) -> Result<usize, String> {
    usize::try_from(n).map_err(|_| format!("{flag}: {n} is too large"))
}
