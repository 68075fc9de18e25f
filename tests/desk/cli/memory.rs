//! `check` and `parse --json` on hostile inputs, their peak resident memory measured: their
//! findings are written as they are found, so what they hold is a few blocks of the input
//! (and, for `parse --json`, the input itself), not a record per finding. Before that, each
//! of these inputs cost about a hundred times its size.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// The input's size: large enough that a hundred times it is far past [`LIMIT`], small
/// enough for a debug build to read in a second or two.
const INPUT: usize = 2 << 20;

/// The most resident memory allowed, in KiB: a debug build peaks at 20 to 30 MiB on these
/// inputs (the binary and its threads, the blocks in flight, and for `parse --json` the input
/// held whole). Holding a record per finding took 100 MiB (`check`) to 250 MiB (`--json`).
const LIMIT_KIB: i64 = 64 << 10;

/// `unit(i)` repeated up to [`INPUT`] bytes.
fn repeated(unit: impl Fn(usize) -> String) -> String {
    let mut text = String::with_capacity(INPUT + 200);
    let mut i = 0;
    while text.len() < INPUT {
        text.push_str(&unit(i));
        i += 1;
    }
    text
}

/// Stray `[[END]]` lines, every other one indented: one finding per line.
fn stray_ends() -> String {
    repeated(|i| {
        if i % 2 == 0 {
            " [[END]]\n"
        } else {
            "[[END]]\n"
        }
        .to_string()
    })
}

/// One-line envelopes, one a line, each with findings.
fn collapsed() -> String {
    repeated(|i| {
        format!(
            "[[A→B v1]] user: x session: 2025-10-09T15Z 04f07f intent: INFORM body: | note {i} sig: none [[END]]\n"
        )
    })
}

/// What a run of `crosstalk ARGS` on `input` (its standard input) came to.
struct Run {
    /// The exit code; `None` when a signal ended it.
    code: Option<i32>,
    /// Lines written to standard output.
    lines: usize,
    /// Peak resident memory, in KiB.
    peak_kib: i64,
    stderr: String,
}

/// Runs `crosstalk ARGS` on `input`, reading its peak resident memory as it is reaped.
// The child is reaped by `wait4`, which `Child::wait` cannot stand in for: it does not give
// the resource usage.
#[allow(clippy::zombie_processes)]
fn measured(args: &[&str], input: &str) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_crosstalk"))
        .args(args)
        .env("XDG_CONFIG_HOME", "/nonexistent/crosstalk-test-config")
        .env("XDG_DATA_HOME", "/nonexistent/crosstalk-test-data")
        .env_remove("CROSSTALK_CONFIG")
        .env_remove("CROSSTALK_DB")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn crosstalk");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_string();
    let writer = std::thread::spawn(move || {
        // A child that died early closes the pipe: its status says why.
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut stdout = child.stdout.take().expect("stdout");
    let counter = std::thread::spawn(move || {
        let (mut lines, mut buf) = (0, vec![0u8; 1 << 16]);
        while let Ok(n @ 1..) = stdout.read(&mut buf) {
            lines += memchr::memchr_iter(b'\n', &buf[..n]).count();
        }
        lines
    });
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: both pointers are to live locals of the types wait4 fills in; the child is
    // ours and not reaped elsewhere (`Child` is not waited on).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
    let _ = writer.join();
    let lines = counter.join().expect("count the output");
    stderr.truncate(2000);
    Run {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        lines,
        peak_kib: usage.ru_maxrss,
        stderr,
    }
}

/// Asserts that `r` ended with one of `codes` within [`LIMIT_KIB`].
fn within_limit(what: &str, r: &Run, codes: &[i32]) {
    assert!(
        r.code.is_some_and(|c| codes.contains(&c)),
        "{what}: exit {:?}: {}",
        r.code,
        r.stderr
    );
    assert!(
        r.peak_kib <= LIMIT_KIB,
        "{what}: {} KiB resident at the peak for {} KiB of input, over {LIMIT_KIB} KiB",
        r.peak_kib,
        INPUT >> 10
    );
}

/// Set in the child process a measuring test runs in (see [`in_a_small_process`]).
const CHILD_ENV: &str = "CROSSTALK_MEMORY_CHILD";

/// Whether this is the small process the test `name` measures in; else runs it there and
/// checks it passed. Linux keeps, as a child's peak resident size, the size of the process
/// it was forked from: forked from this test binary, grown by the tests beside it, every
/// child would seem to hold tens of MiB it never touched.
fn in_a_small_process(name: &str) -> bool {
    if std::env::var_os(CHILD_ENV).is_some() {
        return true;
    }
    let out = crate::helpers::common::this_test(module_path!(), name)
        .args(["--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}{stderr}");
    false
}

#[test]
fn check_stays_small_on_hostile_inputs() {
    if !in_a_small_process("check_stays_small_on_hostile_inputs") {
        return;
    }
    let ends = stray_ends();
    let r = measured(&["check", "--no-db"], &ends);
    within_limit("check of stray [[END]] lines", &r, &[1]);
    // One finding per `[[END]]`, `no-envelope`, and the summary.
    assert_eq!(r.lines, ends.lines().count() + 2, "{}", r.stderr);
    let r = measured(&["check", "--no-db", "--json"], &ends);
    within_limit("check --json of stray [[END]] lines", &r, &[1]);
    let r = measured(&["check", "--no-db", "--json"], &collapsed());
    within_limit("check --json of collapsed envelopes", &r, &[0, 1]);
    assert!(r.lines > 100_000, "{} lines: {}", r.lines, r.stderr);
}

#[test]
fn parse_json_stays_small_on_hostile_inputs() {
    if !in_a_small_process("parse_json_stays_small_on_hostile_inputs") {
        return;
    }
    let ends = stray_ends();
    let r = measured(&["parse", "--json"], &ends);
    within_limit("parse --json of stray [[END]] lines", &r, &[1]);
    // Seven lines per finding in the layout, and a few around them.
    assert!(r.lines > 7 * ends.lines().count(), "{} lines", r.lines);
    let r = measured(&["parse", "--json"], &collapsed());
    within_limit("parse --json of collapsed envelopes", &r, &[0, 1]);
    assert!(r.lines > 100_000, "{} lines: {}", r.lines, r.stderr);
}
