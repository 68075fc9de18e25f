//! Running the real `crosstalk` binary from tests, and this test binary itself for a test
//! that needs a process of its own.

use std::io::Write;
use std::process::{Command, Stdio};

/// What a run of the binary produced.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(args: &[&str], stdin: &str) -> Run {
    run_env(args, stdin, &[])
}

/// Where a run looks for its default database unless the test names one: a folder that does
/// not exist, so that no test reads, nor writes to, the database of whoever runs the tests.
pub const NO_DATA: &str = "/nonexistent/crosstalk-test-data";

/// Runs with a config directory of its own and no default database, so the user's own
/// config and data never leak in (`env` may name others).
pub fn run_env(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crosstalk"));
    cmd.env("XDG_CONFIG_HOME", "/nonexistent/crosstalk-test-config")
        .env("XDG_DATA_HOME", NO_DATA)
        .env_remove("CROSSTALK_CONFIG")
        .env_remove("CROSSTALK_DB");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn crosstalk");
    // Written from a thread so a large output cannot deadlock against a full pipe; a
    // command that exits without reading its input (a usage error) closes the pipe early.
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_string();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("wait");
    let _ = writer.join();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// This test binary, set to run only the test `name` of the module `module` (its
/// `module_path!()`): for a test that needs what a process has only once (its environment,
/// a crash), so that the tests running beside it in this process are left alone.
pub fn this_test(module: &str, name: &str) -> Command {
    // Test names leave out the crate: `desk::store::crash` holds `store::crash::NAME`.
    let module = module.split_once("::").map_or("", |(_, m)| m);
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary's path"));
    cmd.args(["--exact", &format!("{module}::{name}")]);
    cmd
}
