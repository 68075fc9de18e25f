//! `crosstalk watch --to URL`: the companion on the operator's own machine when the desk runs
//! elsewhere (over SSH, where no clipboard of the operator's is reachable). It watches this
//! machine's clipboard, sends each copy holding envelopes to the desk's `crosstalk serve`
//! (`POST /crosstalk/hop`, with the desk's token), and puts what the desk answers for the
//! recipient on this clipboard: the same hop as `crosstalk watch` on the desk itself.
//!
//! It stores nothing but a raw spool of copies the desk did not answer (down, busy, or the
//! network gone), in `$XDG_DATA_HOME/crosstalk/spool`; they are sent again, oldest first, as
//! soon as the desk answers. A spooled copy is put on the clipboard when it comes back only
//! if nothing else was copied since; otherwise it is stored on the desk and waits in its
//! queue (copying it again relays it).

use std::time::{Duration, Instant};

use super::watch_cmd::{Event, Watching};
use super::{EXIT_USAGE, Failure};
use crate::clipboard::watch::{TextDigest, digest};
use crate::clipboard::{Clipboard, Env};
use crate::config::Config;
use crate::protocol::Options;
use crate::transport::http::client::{self, PostError};
use crate::transport::http::hop::{HOP_PATH, HopAnswer, NEXT_PATH, hop_url, parse_refusal};
use crate::transport::spool::{Spool, Spooled};

/// How long one exchange with the desk may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The first wait before a spooled copy is sent again, and the longest.
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(30);

/// What came of sending one copy.
enum Sent {
    /// The desk answered the hop (boxed: an answer holds the recipient's whole text and the
    /// other windows it goes to, the other variants a line).
    Answered(Box<HopAnswer>),
    /// No answer, or one that says to send again later (busy, rate, shutting down): spool.
    Later(String),
    /// The desk will not take it as it is (too large, not text); not sent again.
    Refused(String),
    /// The token is wrong or missing: nothing will get through.
    Denied(String),
}

/// Runs the companion until SIGINT or SIGTERM (exit 0); exit 2 when the clipboard cannot be
/// read or the desk refuses the token.
pub fn companion(
    url: &str,
    token: Option<String>,
    json: bool,
    config: &Config,
    opts: &Options,
) -> Result<u8, Failure> {
    let token = token
        .or_else(|| std::env::var("CROSSTALK_TOKEN").ok())
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| {
            Failure::usage(
                "a companion needs the desk's token: pass --token TOKEN or set $CROSSTALK_TOKEN to the one `crosstalk serve --token` was started with",
            )
        })?;
    let hop = hop_url(url).map_err(|e| Failure::usage(e.to_string()))?;
    let desk = Desk {
        next: format!("{}{NEXT_PATH}", hop.strip_suffix(HOP_PATH).unwrap_or(&hop)),
        hop,
        token,
    };
    let data = crate::config::data_dir();
    let spool = Spool::new(data.join("spool"));
    let clipboard =
        Clipboard::new(config.clipboard.clone(), Env::from_process(), data).own_copies_in_memory();
    let mut w = Watching::start_with(config, opts, clipboard, json)?;
    // The digest of the last text copied that holds envelopes; `None` once something else
    // was copied. A spooled copy goes on the clipboard only while it is still the latest.
    let mut latest: Option<TextDigest> = None;
    let mut retry = Retry::new();
    let mut hops = 0usize;
    loop {
        match w.next()? {
            Event::Stop => break,
            Event::Started(waits) => {
                let waiting = match spool.len() {
                    0 => String::new(),
                    n => format!(" {n} spooled copies wait and are sent first."),
                };
                eprintln!(
                    "crosstalk: companion of {}, watching the clipboard ({waits}): copies holding envelopes go to the desk, and what it returns for the recipient lands on this clipboard.{waiting} Ctrl-C stops.",
                    crate::sanitize::sanitize_line(&desk.hop)
                );
            }
            Event::OtherText => latest = None,
            Event::Copied(text) => {
                latest = Some(digest(&text));
                match desk.send(&text, true) {
                    Sent::Answered(answer) => {
                        hops += usize::from(act(&mut w, &answer)?);
                        // The desk answers again: what the spool holds goes now, not after
                        // the back-off the last failure set.
                        retry.succeeded();
                    }
                    Sent::Later(why) => {
                        keep(&spool, &text, &why, &w)?;
                        retry.failed();
                    }
                    Sent::Refused(why) => {
                        w.say(&format!(
                            "The desk refused the copy: {why}. It is still on your clipboard."
                        ))?;
                        w.ring();
                    }
                    Sent::Denied(why) => {
                        keep(&spool, &text, &why, &w)?;
                        return Err(denied(&why));
                    }
                }
            }
            Event::Enter => {
                let Some(next) = w.take_waiting() else {
                    w.say("Nothing waits to be put up: Enter follows a copy that held several envelopes.")?;
                    continue;
                };
                match desk.post(&desk.next, &next.message) {
                    Sent::Answered(answer) => {
                        hops += usize::from(act(&mut w, &answer)?);
                    }
                    Sent::Later(why) | Sent::Refused(why) => {
                        w.say(&format!(
                            "Not put up (the desk did not answer: {why}); press Enter to try again."
                        ))?;
                        w.ring();
                        w.wait_again(next);
                    }
                    Sent::Denied(why) => return Err(denied(&why)),
                }
            }
            Event::Idle => {}
        }
        if retry.due() {
            resend(&desk, &spool, &mut w, &mut latest, &mut retry, &mut hops)?;
        }
    }
    let left = spool.len();
    let spooled = match left {
        0 => String::new(),
        n => format!(
            "; {n} copies still in the spool ({}), sent when you start it again",
            spool.dir().display()
        ),
    };
    eprintln!("crosstalk: stopped; {hops} hop(s) through the desk{spooled}.");
    Ok(0)
}

/// The desk's hop endpoints and token.
struct Desk {
    hop: String,
    next: String,
    token: String,
}

impl Desk {
    /// Sends a copied text; `carry`: the desk records the relay (the answer goes on the
    /// clipboard).
    fn send(&self, text: &str, carry: bool) -> Sent {
        let url = if carry {
            self.hop.clone()
        } else {
            format!("{}?carry=0", self.hop)
        };
        self.post(&url, text)
    }

    fn post(&self, url: &str, body: &str) -> Sent {
        let response = match client::post_to(url, body, Some(&self.token), TIMEOUT) {
            Ok(r) => r,
            Err(e @ PostError::Failed { .. }) => return Sent::Later(e.to_string()),
            Err(e) => return Sent::Refused(e.to_string()),
        };
        let why = || {
            parse_refusal(&response.body)
                .map(|e| format!("{} ({}, HTTP {})", e.reason, e.code, response.status))
                .unwrap_or_else(|| format!("HTTP {}", response.status))
        };
        match response.status {
            200 => match serde_json::from_str::<HopAnswer>(&response.body) {
                Ok(a) => Sent::Answered(Box::new(a)),
                Err(e) => Sent::Refused(format!(
                    "the answer is not a desk's hop answer ({e}); is {} a crosstalk serve?",
                    self.hop
                )),
            },
            401 | 403 => Sent::Denied(why()),
            408 | 429 | 500..=599 => Sent::Later(why()),
            _ => Sent::Refused(why()),
        }
    }
}

/// Puts a relayed text on the clipboard (the desk has recorded it), or says why not.
/// Returns whether a hop was made.
fn act(w: &mut Watching, answer: &HopAnswer) -> Result<bool, Failure> {
    let copied = w.carry(&answer.hop, |_, _, _| Ok(()))?;
    w.tell(
        answer.arrival.as_ref(),
        Some(&answer.hop),
        copied.as_deref(),
    )?;
    Ok(copied.is_some())
}

/// Keeps `text` in the spool and says so.
fn keep(spool: &Spool, text: &str, why: &str, w: &Watching) -> Result<(), Failure> {
    spool.push(text).map_err(|e| {
        Failure::usage(format!(
            "the desk did not answer ({why}) and the copy could not be spooled in {}: {e}; it is still on your clipboard",
            spool.dir().display()
        ))
    })?;
    w.say(&format!(
        "Desk unreachable ({why}): the copy is kept in the spool ({} waiting) and sent when the desk answers. The clipboard is left as you copied it.",
        spool.len()
    ))?;
    w.ring();
    Ok(())
}

fn denied(why: &str) -> Failure {
    Failure {
        code: EXIT_USAGE,
        message: format!(
            "the desk refused the token: {why}; start the companion with the token `crosstalk serve --token` uses (copies so far are kept in the spool)"
        ),
    }
}

/// Sends the oldest spooled copy, when the desk answers: on the clipboard if it is still
/// the latest copy, else stored on the desk only.
fn resend(
    desk: &Desk,
    spool: &Spool,
    w: &mut Watching,
    latest: &mut Option<TextDigest>,
    retry: &mut Retry,
    hops: &mut usize,
) -> Result<(), Failure> {
    let oldest = match spool.oldest() {
        Ok(Some(s)) => s,
        Ok(None) => {
            retry.clear();
            return Ok(());
        }
        Err(e) => {
            retry.failed();
            tracing::warn!("companion: the spool cannot be read: {e}");
            return Ok(());
        }
    };
    let carry = *latest == Some(digest(&oldest.text));
    match desk.send(&oldest.text, carry) {
        Sent::Answered(answer) => {
            drop_spooled(spool, &oldest);
            retry.succeeded();
            if carry {
                *latest = None;
                *hops += usize::from(act(w, &answer)?);
            } else {
                let got = (answer.arrival.as_ref())
                    .map(|a| a.line())
                    .unwrap_or_default();
                w.say(&format!(
                    "Sent a spooled copy to the desk ({got}); not put on the clipboard since you copied something else: copy the envelope again to relay it."
                ))?;
            }
        }
        Sent::Later(_) => retry.failed(),
        Sent::Refused(why) => {
            drop_spooled(spool, &oldest);
            w.say(&format!(
                "The desk refused a spooled copy: {why}. It was not stored there."
            ))?;
            w.ring();
        }
        Sent::Denied(why) => return Err(denied(&why)),
    }
    Ok(())
}

fn drop_spooled(spool: &Spool, s: &Spooled) {
    if let Err(e) = spool.remove(s) {
        tracing::warn!("companion: {} could not be removed: {e}", s.path.display());
    }
}

/// When the spool is tried next: soon after a failure, backing off to [`RETRY_MAX`]; right
/// away at start (copies left from an earlier run).
struct Retry {
    at: Option<Instant>,
    wait: Duration,
}

impl Retry {
    fn new() -> Retry {
        Retry {
            at: Some(Instant::now()),
            wait: RETRY_FIRST,
        }
    }

    fn due(&self) -> bool {
        self.at.is_some_and(|at| Instant::now() >= at)
    }

    fn failed(&mut self) {
        self.at = Some(Instant::now() + self.wait);
        self.wait = (self.wait * 2).min(RETRY_MAX);
    }

    fn succeeded(&mut self) {
        // The next spooled copy right away.
        self.wait = RETRY_FIRST;
        self.at = Some(Instant::now());
    }

    fn clear(&mut self) {
        self.wait = RETRY_FIRST;
        self.at = None;
    }
}
