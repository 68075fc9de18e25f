//! `crosstalk watch`: imports every envelope copied to the clipboard while it runs, one line
//! (or one JSON object) per import, until Ctrl-C. The decisions live in
//! [`crate::clipboard::watch`]; this file only wires them to the store and the terminal.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::output::Stdout;
use super::store_cmd::open;
use super::{EXIT_USAGE, Failure};
use crate::clipboard::watch::{Arrival, Polled, Poller};
use crate::clipboard::{Clipboard, Env};
use crate::config::Config;
use crate::protocol::Options;
use crate::sanitize::sanitize_line;

/// How often the loop looks at the stop flag while waiting for the clipboard.
const STOP_POLL: Duration = Duration::from_millis(100);

/// Runs the watch until SIGINT or SIGTERM; exit 0 then, 2 when no clipboard is reachable or
/// the database fails.
pub fn watch(
    db: Option<&Path>,
    json: bool,
    config: &Config,
    opts: &Options,
) -> Result<u8, Failure> {
    let mut store = open(db)?;
    store
        .set_operator_addresses(&config.operator.addresses)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let data = directories::ProjectDirs::from("", "", "crosstalk")
        .map(|d| d.data_dir().to_path_buf())
        .unwrap_or_else(|| ".".into());
    let clipboard = Clipboard::new(config.clipboard.clone(), Env::from_process(), data);
    let reader = clipboard.reader();
    reader
        .reachable()
        .map_err(|why| Failure::usage(format!("cannot watch the clipboard: {why}")))?;
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, stop.clone())
            .map_err(|e| Failure::usage(format!("cannot handle Ctrl-C: {e}")))?;
    }
    let every = config.watch.interval();
    // The app's copies (in any terminal) are skipped: they are recorded in the data directory.
    let poller = Poller::start(reader, clipboard.own_copies(), opts.clone(), every);
    let mut total = 0usize;
    while !stop.load(Ordering::Relaxed) {
        let Some(polled) = poller.next(STOP_POLL) else {
            continue;
        };
        let text = match polled {
            Polled::Started => {
                eprintln!(
                    "crosstalk: watching the clipboard every {} ms; envelopes copied from now on are imported into {}. Ctrl-C stops.",
                    every.as_millis(),
                    sanitize_line(&store.path().display().to_string())
                );
                continue;
            }
            Polled::Envelopes(text) => text,
            Polled::NoEnvelope(_) => continue,
            Polled::Unavailable(why) => {
                return Err(Failure {
                    code: EXIT_USAGE,
                    message: format!("stopped watching the clipboard: {why}"),
                });
            }
        };
        let mut opts = opts.clone();
        opts.now = Some(jiff::Timestamp::now());
        let report = store
            .keep_text(crate::clipboard::watch::SOURCE, &text)
            .and_then(|kept| store.import_kept(&kept, &opts, &mut |_| {}, true))
            .map_err(|e| Failure::usage(e.to_string()))?;
        let arrival = Arrival::of(&report);
        total += arrival.imported;
        let mut out = Stdout::new();
        let line = if json {
            compact_safe_json(&arrival).map_err(|e| Failure::usage(e.to_string()))?
        } else {
            sanitize_line(&arrival.line()).into_owned()
        };
        let _ = writeln!(out, "{line}");
        out.finish()?;
        if arrival.is_news() && config.watch.bell {
            let mut err = std::io::stderr();
            let _ = err.write_all(b"\x07").and_then(|()| err.flush());
        }
    }
    eprintln!("crosstalk: stopped watching; {total} message(s) imported.");
    Ok(0)
}

/// One JSON object on one line, with every character the terminal would act on or hide
/// escaped as `\uXXXX`, as the other commands' `--json` output does (only strings can hold
/// such characters: JSON's own syntax is ASCII).
fn compact_safe_json(v: &impl serde::Serialize) -> serde_json::Result<String> {
    let raw = serde_json::to_string(v)?;
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        if crate::sanitize::is_unsafe(c) {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_lines_escape_what_a_terminal_would_obey() {
        let line =
            super::compact_safe_json(&serde_json::json!({"e": "a\u{202e}b\u{9b}c\u{7f}"})).unwrap();
        assert_eq!(line, r#"{"e":"a\u202eb\u009bc\u007f"}"#);
        let back: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back["e"], "a\u{202e}b\u{9b}c\u{7f}");
    }
}
