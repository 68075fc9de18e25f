//! Xvfb on a free display with an X clipboard set and read by `xclip`, as a chat window's
//! Copy button sets it and a paste reads it. Without Xvfb or xclip, `start` says so and the
//! test passes (CI installs both: `.ci/run`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

fn found(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// Xvfb on a display it picks itself (`-displayfd`), killed on drop.
pub struct Xvfb {
    child: Child,
    /// The display, `:N`.
    pub display: String,
}

impl Xvfb {
    pub fn start() -> Option<Xvfb> {
        if !found("Xvfb") || !found("xclip") {
            eprintln!("skipping the clipboard watch test: Xvfb or xclip is not installed");
            return None;
        }
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-nolisten",
                "tcp",
                "-screen",
                "0",
                "640x480x24",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting Xvfb");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).expect("Xvfb's display number");
        let display = format!(":{}", line.trim());
        assert!(display.len() > 1, "Xvfb printed no display number");
        Some(Xvfb { child, display })
    }

    /// Sets the clipboard as a Copy button would; xclip stays to serve it.
    pub fn copy(&self, text: &str) {
        let mut c = Command::new("xclip")
            .args(["-selection", "clipboard", "-i"])
            .env("DISPLAY", &self.display)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("xclip");
        std::io::Write::write_all(&mut c.stdin.take().unwrap(), text.as_bytes()).unwrap();
        // xclip forks a server and its first process exits.
        c.wait().unwrap();
    }

    /// The clipboard's text now.
    pub fn clipboard(&self) -> String {
        let out = Command::new("xclip")
            .args(["-selection", "clipboard", "-o"])
            .env("DISPLAY", &self.display)
            .output()
            .expect("xclip -o");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
