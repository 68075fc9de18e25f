//! `crosstalk watch`: imports every envelope copied to the clipboard while it runs, one line
//! (or one JSON object) per import, until Ctrl-C; with `[relay] copy_on_import`, puts each
//! one for someone else back on the clipboard ready for its recipient (the hop). The
//! decisions live in [`crate::clipboard::watch`] and [`crate::transport::route`] (the hop's
//! plan, and the delivery straight to a contact that takes envelopes so); this file only
//! wires them to the store and the terminal. `--to URL` runs the same loop as a desk's
//! companion (see `companion.rs`).

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use std::sync::mpsc::Receiver;

use crate::cli::database::store_cmd::open;
use crate::cli::output::Stdout;
use crate::cli::{EXIT_USAGE, Failure};
use crate::clipboard::watch::{Polled, Poller, Waits};
use crate::clipboard::{Clipboard, Env};
use crate::config::Config;
use crate::protocol::Options;
use crate::sanitize::sanitize_line;
use crate::store::ImportSummary;
use crate::store::{Store, Waiting};
use crate::transport::route::{self, Carrier, Done, HopPlan};

/// How often the loop looks at the stop flag while waiting for the clipboard.
const STOP_POLL: Duration = Duration::from_millis(100);

/// Runs the watch until SIGINT or SIGTERM; exit 0 then, 2 when no clipboard is reachable or
/// the database fails. With `[relay] copy_on_import`, each copy of one new envelope for
/// someone else is put back on the clipboard as its recipient should get it (the hop).
pub(crate) fn watch(
    db: Option<&Path>,
    json: bool,
    config: &Config,
    opts: &Options,
) -> Result<u8, Failure> {
    let mut store = open(db)?;
    crate::config::move_state_files();
    store
        .set_operator_addresses(&config.operator.addresses)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let mut w = Watching::start(config, opts, crate::config::data_dir(), json)?;
    let carrying = Carrying {
        book: config.address_book(),
        audit_by: config.audit_name(),
        retry_for: Duration::from_secs(config.send.retry_for),
    };
    let hop_on = config.relay.copy_on_import;
    let mut total = 0usize;
    loop {
        match w.next()? {
            Event::Stop => break,
            Event::Started(waits) => {
                let hop = if hop_on {
                    " and put back ready for their recipients (Enter puts up the next of several)"
                } else {
                    ""
                };
                eprintln!(
                    "crosstalk: watching the clipboard ({waits}); envelopes copied from now on are imported into {}{hop}. Ctrl-C stops.",
                    sanitize_line(&store.path().display().to_string())
                );
            }
            Event::Enter => put_up_next(&mut w, &mut store, &carrying, opts)?,
            Event::Copied(text) => {
                let hop = hop_on.then_some(&carrying);
                total += take_copy(&mut w, &mut store, hop, &text, opts)?;
            }
            Event::Idle | Event::OtherText => {}
        }
    }
    eprintln!("crosstalk: stopped watching; {total} message(s) imported.");
    Ok(0)
}

/// How the watch's hop carries an envelope: the address book, the audit name, `[send]
/// retry_for`.
struct Carrying {
    book: crate::contacts::AddressBook,
    audit_by: Option<String>,
    retry_for: Duration,
}

impl Carrying {
    /// A carrier whose hops say they passed the envelope on now.
    fn carrier(&self) -> Carrier<'_> {
        Carrier::now(&self.book, self.audit_by.as_deref()).waiting_out(self.retry_for)
    }
}

/// Enter: puts up what waits next (the next envelope of a several-envelope copy, or a POLL
/// for its next target), for the window it waited for.
fn put_up_next(
    w: &mut Watching,
    store: &mut Store,
    carrying: &Carrying,
    opts: &Options,
) -> Result<(), Failure> {
    let Some(next) = w.take_waiting() else {
        return w
            .say("Nothing waits to be put up: Enter follows a copy that held several envelopes.");
    };
    let carrier = carrying.carrier();
    let hop = route::put_up(store, &next.message, Some(&next.to), &carrier)
        .map_err(|e| Failure::usage(e.to_string()))?
        .unwrap_or(HopPlan::Nothing);
    let hop = w.carry_direct(store, hop, &carrier, opts)?;
    if let HopPlan::Delivered { done, .. } = &hop {
        return w.tell_posted(None, done);
    }
    let copied = w.carry(&hop, |id, to, method| {
        store.mark_relayed_to(id, to, method).map(drop)
    })?;
    w.tell(None, Some(&hop), copied.as_deref())
}

/// A copy holding envelopes: kept raw and imported; with `hop` (`[relay] copy_on_import`),
/// one for someone else is put back on the clipboard for its recipient, or delivered
/// straight to it. Says what came of it; returns how many messages were imported.
fn take_copy(
    w: &mut Watching,
    store: &mut Store,
    hop: Option<&Carrying>,
    text: &str,
    opts: &Options,
) -> Result<usize, Failure> {
    let mut opts = opts.clone();
    opts.now = Some(jiff::Timestamp::now());
    let report = store
        .keep_text(crate::clipboard::watch::SOURCE, text)
        .and_then(|kept| store.import_kept(&kept, &opts, &mut |_| {}, true))
        .map_err(|e| Failure::usage(e.to_string()))?;
    let arrival = ImportSummary::of(&report);
    let hop = match hop {
        Some(carrying) => {
            let carrier = carrying.carrier();
            let plan =
                route::plan(store, &report, &carrier).map_err(|e| Failure::usage(e.to_string()))?;
            Some(w.carry_direct(store, plan, &carrier, &opts)?)
        }
        None => None,
    };
    if let Some(hop @ HopPlan::Delivered { done, .. }) = &hop {
        // Delivered, not copied: the clipboard is left as it is; a POLL's other targets
        // still wait for Enter.
        w.wait_for_next(hop);
        w.tell_posted(Some(&arrival), done)?;
        return Ok(arrival.imported);
    }
    let copied = match &hop {
        Some(hop) => w.carry(hop, |id, to, method| {
            store.mark_relayed_to(id, to, method).map(drop)
        })?,
        None => None,
    };
    w.tell(Some(&arrival), hop.as_ref(), copied.as_deref())?;
    if hop.is_none() && arrival.is_news() {
        w.ring();
    }
    Ok(arrival.imported)
}

/// What the watch loop is told next.
pub(in crate::cli) enum Event {
    /// Ctrl-C or SIGTERM.
    Stop,
    /// The clipboard was read once; copies from now on count, and the watch waits so.
    Started(Waits),
    /// New text holding envelopes.
    Copied(String),
    /// New text without an envelope: the clipboard moved on.
    OtherText,
    /// The operator pressed Enter (puts up the next of several).
    Enter,
    /// Nothing happened for a while.
    Idle,
}

/// What both watches share — this desk's (`crosstalk watch`) and a companion's (`crosstalk
/// watch --to`): the clipboard watched and written, the stop flag, the keyboard, and how the
/// operator is told.
pub(in crate::cli) struct Watching {
    clipboard: Clipboard,
    poller: Poller,
    stop: Arc<AtomicBool>,
    keys: Option<Receiver<()>>,
    json: bool,
    bell: bool,
    /// Envelopes of a several-envelope copy not yet put up.
    waiting: Vec<Waiting>,
}

impl Watching {
    /// Opens the clipboard (its own copies remembered in `data`, so the app's copies in
    /// another terminal are skipped too) and starts reading it.
    pub(in crate::cli) fn start(
        config: &Config,
        opts: &Options,
        data: std::path::PathBuf,
        json: bool,
    ) -> Result<Watching, Failure> {
        Self::start_with(
            config,
            opts,
            Clipboard::new(config.clipboard.clone(), Env::from_process(), data)
                .own_copies_in(crate::config::own_copies_file()),
            json,
        )
    }

    /// [`Watching::start`] with a clipboard handle made by the caller.
    pub(in crate::cli) fn start_with(
        config: &Config,
        opts: &Options,
        clipboard: Clipboard,
        json: bool,
    ) -> Result<Watching, Failure> {
        let reader = clipboard.reader();
        reader
            .reachable()
            .map_err(|why| Failure::usage(format!("cannot watch the clipboard: {why}")))?;
        let stop = Arc::new(AtomicBool::new(false));
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            signal_hook::flag::register(signal, stop.clone())
                .map_err(|e| Failure::usage(format!("cannot handle Ctrl-C: {e}")))?;
        }
        // The app's copies (in any terminal) are skipped: they are recorded in the data
        // directory.
        let poller = Poller::start(reader, clipboard.own_copies(), opts.clone(), &config.watch);
        Ok(Watching {
            clipboard,
            poller,
            stop,
            keys: enter_presses(),
            json,
            bell: config.watch.bell,
            waiting: Vec::new(),
        })
    }

    /// Waits for what comes next (at most [`STOP_POLL`]).
    pub(in crate::cli) fn next(&mut self) -> Result<Event, Failure> {
        if self.stop.load(Ordering::Relaxed) {
            return Ok(Event::Stop);
        }
        if self.keys.as_ref().is_some_and(|k| k.try_recv().is_ok()) {
            return Ok(Event::Enter);
        }
        Ok(match self.poller.next(STOP_POLL) {
            None => Event::Idle,
            Some(Polled::Started(waits)) => Event::Started(waits),
            Some(Polled::Envelopes(text)) => Event::Copied(text),
            Some(Polled::NoEnvelope(_)) => Event::OtherText,
            Some(Polled::Unavailable(why)) => {
                return Err(Failure {
                    code: EXIT_USAGE,
                    message: format!("stopped watching the clipboard: {why}"),
                });
            }
        })
    }

    /// The next envelope of a several-envelope copy, when one waits.
    pub(in crate::cli) fn take_waiting(&mut self) -> Option<Waiting> {
        if self.waiting.is_empty() {
            None
        } else {
            Some(self.waiting.remove(0))
        }
    }

    /// Puts `first` back at the head of what waits (it could not be put up).
    pub(in crate::cli) fn wait_again(&mut self, first: Waiting) {
        self.waiting.insert(0, first);
    }

    /// Puts the other windows a relayed message goes to (a POLL's other targets) first in
    /// what waits for Enter.
    pub(in crate::cli) fn wait_for_next(&mut self, hop: &HopPlan) {
        self.waiting
            .splice(0..0, route::next_of(hop).iter().cloned());
    }

    /// Delivers `plan`'s relay straight to a recipient that takes envelopes so (see
    /// [`route::carry_direct`]), saying each line on the way (a busy peer waited out).
    pub(in crate::cli) fn carry_direct(
        &self,
        store: &mut Store,
        plan: HopPlan,
        carrier: &Carrier<'_>,
        opts: &Options,
    ) -> Result<HopPlan, Failure> {
        let opts = Options {
            now: Some(jiff::Timestamp::now()),
            ..opts.clone()
        };
        route::carry_direct(store, plan, carrier, &opts, &mut |line| {
            let _ = self.say(line);
        })
        .map_err(|e| Failure::usage(e.to_string()))
    }

    /// Acts on `hop`: a relay's text goes on the clipboard and `relayed(id, to, method)`
    /// records it (the other windows it goes to wait for Enter); several wait for Enter; a
    /// refusal rings. Returns how the text was copied.
    pub(in crate::cli) fn carry(
        &mut self,
        hop: &HopPlan,
        relayed: impl FnOnce(&str, &str, &str) -> Result<(), crate::store::StoreError>,
    ) -> Result<Option<String>, Failure> {
        match hop {
            HopPlan::Relay { ready, .. } => {
                let report = self
                    .clipboard
                    .copy(&ready.text, &mut std::io::stdout())
                    .map_err(|e| {
                        Failure::usage(format!("not copied for {}: {e}", sanitize_line(&ready.to)))
                    })?;
                let method = report.method.to_string();
                relayed(&ready.message, &ready.to, &method)
                    .map_err(|e| Failure::usage(e.to_string()))?;
                self.wait_for_next(hop);
                self.ring();
                Ok(Some(method))
            }
            HopPlan::Several { waiting } => {
                self.waiting = waiting.clone();
                self.ring();
                Ok(None)
            }
            // Delivered by the desk (a companion's): its next windows wait for Enter.
            HopPlan::Delivered { .. } => {
                self.wait_for_next(hop);
                self.ring();
                Ok(None)
            }
            HopPlan::Refuse { .. } => {
                self.ring();
                Ok(None)
            }
            HopPlan::Nothing => Ok(None),
        }
    }

    /// One line (or one JSON object) for what an import and its hop did.
    pub(in crate::cli) fn tell(
        &self,
        arrival: Option<&ImportSummary>,
        hop: Option<&HopPlan>,
        copied: Option<&str>,
    ) -> Result<(), Failure> {
        self.told(Told {
            arrival,
            hop,
            copied,
            posted: None,
            waiting: self.waiting.len(),
        })
    }

    /// Writes `told`: one JSON object with `--json`, else its lines for people.
    fn told(&self, told: Told<'_>) -> Result<(), Failure> {
        let mut out = Stdout::new();
        if self.json {
            let line = compact_safe_json(&told).map_err(|e| Failure::usage(e.to_string()))?;
            let _ = writeln!(out, "{line}");
        } else {
            let lines = [
                told.arrival.map(ImportSummary::line),
                told.hop.and_then(|h| hop_line(h, &self.waiting)),
                told.posted.map(|p| p.line.clone()),
            ];
            for line in lines.into_iter().flatten() {
                let _ = writeln!(out, "{}", sanitize_line(&line));
            }
        }
        out.finish()
    }

    /// What an import and a hop delivered straight to its recipient did: the arrival's line
    /// and the delivery's; with `--json`, one object with the arrival's fields and `posted`
    /// (`over`, `accepted`, `line`). Rings, as a hop does.
    pub(in crate::cli) fn tell_posted(
        &self,
        arrival: Option<&ImportSummary>,
        done: &Done,
    ) -> Result<(), Failure> {
        let posted = Posted {
            over: done.over.clone(),
            accepted: done.delivered,
            line: posted_line(done),
        };
        self.told(Told {
            arrival,
            hop: None,
            copied: None,
            posted: Some(&posted),
            waiting: self.waiting.len(),
        })?;
        self.ring();
        Ok(())
    }

    /// One line for the operator; with `--json`, an object `{"note": line}`.
    pub(in crate::cli) fn say(&self, line: &str) -> Result<(), Failure> {
        let mut out = Stdout::new();
        if self.json {
            let note = compact_safe_json(&serde_json::json!({ "note": line }))
                .map_err(|e| Failure::usage(e.to_string()))?;
            let _ = writeln!(out, "{note}");
        } else {
            let _ = writeln!(out, "{}", sanitize_line(line));
        }
        out.finish()
    }

    /// The bell, when `[watch] bell` asks for it.
    pub(in crate::cli) fn ring(&self) {
        if self.bell {
            let mut err = std::io::stderr();
            let _ = err.write_all(b"\x07").and_then(|()| err.flush());
        }
    }
}

/// One `--json` line of a watch: the import's fields at the top (as before there was a hop),
/// then the hop's.
#[derive(serde::Serialize)]
struct Told<'a> {
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    arrival: Option<&'a ImportSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hop: Option<&'a HopPlan>,
    /// How the recipient's text was copied.
    #[serde(skip_serializing_if = "Option::is_none")]
    copied: Option<&'a str>,
    /// What came of posting it, when its recipient takes envelopes over HTTP.
    #[serde(skip_serializing_if = "Option::is_none")]
    posted: Option<&'a Posted>,
    /// Envelopes of a several-envelope copy still waiting for Enter.
    waiting: usize,
}

/// What came of delivering a hop's envelope straight to its recipient.
#[derive(serde::Serialize)]
struct Posted {
    /// The way it went (`http`).
    over: String,
    /// Whether the recipient took it.
    accepted: bool,
    /// One line for the operator (before sanitizing: it quotes the recipient's answer).
    line: String,
}

/// The line for a delivery straight to a recipient; one that got no answer says that the
/// message still waits (before sanitizing).
fn posted_line(done: &Done) -> String {
    if done.recorded {
        done.line.clone()
    } else {
        format!(
            "{}; it stays in the queue to relay (y in the app delivers it again)",
            done.line
        )
    }
}

/// What the operator is told of a hop (before sanitizing: a reason may quote the envelope),
/// with what still `waiting` for Enter.
pub(in crate::cli) fn hop_line(hop: &HopPlan, waiting: &[Waiting]) -> Option<String> {
    Some(match hop {
        HopPlan::Relay { ready, .. } => {
            let first = match (ready.preamble, ready.primer) {
                (true, true) => ", the primer first",
                (true, false) => ", its preamble first",
                _ => "",
            };
            let more = match waiting.first() {
                Some(w) if w.message == ready.message => {
                    format!("; Enter puts it up for {} next", w.to)
                }
                Some(_) => format!("; Enter puts up the next ({} left)", waiting.len()),
                None if ready.turn.is_some() => "; that was its last target".to_string(),
                None => String::new(),
            };
            match ready.turn {
                Some(t) => format!(
                    "POLL for {} ({} of {}): paste it there{first}{more}",
                    ready.to, t.n, t.of
                ),
                None => format!("Ready for {}: paste it there{first}{more}", ready.to),
            }
        }
        HopPlan::Several { waiting } => {
            // A POLL waits once per target: the envelopes are counted once each.
            let mut envelopes: Vec<&str> = waiting.iter().map(|w| w.message.as_str()).collect();
            envelopes.dedup();
            format!(
                "Clipboard left unchanged: {} envelopes for others in one copy. Enter puts up the first (for {}), then the next.",
                envelopes.len(),
                waiting.first().map(|w| w.to.as_str()).unwrap_or("")
            )
        }
        HopPlan::Refuse { reason } => format!(
            "Clipboard left unchanged: {reason}. Check what you copied before pasting it anywhere."
        ),
        HopPlan::Delivered { done, .. } => posted_line(done),
        HopPlan::Nothing => return None,
    })
}

/// Enter presses on a terminal's standard input, read by a thread of its own; none when
/// standard input is not a terminal (a script's watch reads no keys).
fn enter_presses() -> Option<Receiver<()>> {
    use std::io::{BufRead as _, IsTerminal as _};
    if !std::io::stdin().is_terminal() {
        return None;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("watch-keys".into())
        .spawn(move || {
            let stdin = std::io::stdin();
            for line in stdin.lock().lines() {
                if line.is_err() || tx.send(()).is_err() {
                    return;
                }
            }
        })
        .ok()?;
    Some(rx)
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
