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
//! queue (copying it again relays it). One the desk refuses (too large for its `max_body`,
//! say) is moved to `spool-refused` beside the spool and named, with why, once: sending it
//! again would be refused again, and deleting it would lose the only copy.
//!
//! The spool sends only files it wrote (see [`crate::transport::spool`]): anything else found
//! there — a link to a file elsewhere, say — is named once, with what it is, and never sent.

use std::time::Duration;

use crate::cli::carrying::companion_spool::{self as spooling, Resend, Retry, Strangers, resend};
use crate::cli::carrying::watch_cmd::{Event, Watching};
use crate::cli::{EXIT_USAGE, Failure};
use crate::clipboard::watch::{TextDigest, digest};
use crate::clipboard::{Clipboard, Env};
use crate::config::Config;
use crate::protocol::Options;
use crate::transport::http::client::{self, PostError};
use crate::transport::http::hop::{HOP_PATH, HopAnswer, NEXT_PATH, hop_url, parse_refusal};
use crate::transport::route::HopPlan;
use crate::transport::spool::Spool;

/// How long one exchange with the desk may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// What came of sending one copy.
pub(in crate::cli) enum Sent {
    /// The desk answered the hop (boxed: an answer holds the recipient's whole text and the
    /// other windows it goes to, the other variants a line).
    Answered(Box<HopAnswer>),
    /// No answer, or one that says to send again later (busy, rate, shutting down): spool.
    Later(String),
    /// The desk will not take it as it is (too large, not text); not sent again. With the
    /// desk's `max_body` when it says it (a 413).
    Refused(String, Option<u64>),
    /// The token is wrong or missing: nothing will get through.
    Denied(String),
}

/// Runs the companion until SIGINT or SIGTERM (exit 0); exit 2 when the clipboard cannot be
/// read or the desk refuses the token.
pub(crate) fn companion(
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
    let mut strangers = Strangers::default();
    // The digest of the last text copied that holds envelopes; `None` once something else
    // was copied. A spooled copy goes on the clipboard only while it is still the latest.
    let mut latest: Option<TextDigest> = None;
    let mut retry = Retry::new();
    let mut hops = 0usize;
    loop {
        match w.next()? {
            Event::Stop => break,
            Event::Started(waits) => {
                let survey = spool.survey();
                let waiting = match survey.as_ref().map_or(0, |s| s.waiting) {
                    0 => String::new(),
                    n => format!(" {n} spooled copies wait and are sent first."),
                };
                eprintln!(
                    "crosstalk: companion of {}, watching the clipboard ({waits}): copies holding envelopes go to the desk, and what it returns for the recipient lands on this clipboard.{waiting} Ctrl-C stops.",
                    crate::sanitize::sanitize_line(&desk.hop)
                );
                spooling::started(&spool, survey, &w, &mut strangers)?;
            }
            Event::OtherText => latest = None,
            Event::Copied(text) => {
                latest = Some(digest(&text));
                hops += send_copied(&desk, &spool, &mut w, &mut retry, &text)?;
            }
            Event::Enter => hops += put_up_next(&desk, &mut w)?,
            Event::Idle => {}
        }
        if retry.due() {
            let mut state = Resend {
                latest: &mut latest,
                retry: &mut retry,
                hops: &mut hops,
                strangers: &mut strangers,
            };
            resend(&desk, &spool, &mut w, &mut state)?;
        }
    }
    eprintln!(
        "crosstalk: stopped; {hops} hop(s) through the desk{}.",
        spooling::left(&spool)
    );
    Ok(0)
}

/// Sends copy `text` to the desk, and says how many hops it made: an answer is acted on
/// (and the spool's back-off ends), a copy the desk cannot take now is spooled, one it will
/// never take stays on the clipboard, and a refused token ends the companion.
fn send_copied(
    desk: &Desk,
    spool: &Spool,
    w: &mut Watching,
    retry: &mut Retry,
    text: &str,
) -> Result<usize, Failure> {
    match desk.send(text, true) {
        Sent::Answered(answer) => {
            let hops = usize::from(act(w, &answer)?);
            // The desk answers again: what the spool holds goes now, not after the back-off
            // the last failure set.
            retry.succeeded();
            return Ok(hops);
        }
        Sent::Later(why) => {
            keep(spool, text, &why, w)?;
            retry.failed();
        }
        Sent::Refused(why, limit) => {
            let size = limit
                .map(|l| format!(" ({} bytes; the desk takes at most {l})", text.len()))
                .unwrap_or_default();
            w.say(&format!(
                "The desk refused the copy{size}: {why}. It is still on your clipboard."
            ))?;
            w.ring();
        }
        Sent::Denied(why) => {
            keep(spool, text, &why, w)?;
            return Err(denied(&why));
        }
    }
    Ok(0)
}

/// Enter: the next envelope of a copy that held several is put up on the clipboard,
/// through the desk; says how many hops that made. Not answered, it waits for Enter again.
fn put_up_next(desk: &Desk, w: &mut Watching) -> Result<usize, Failure> {
    let Some(next) = w.take_waiting() else {
        w.say("Nothing waits to be put up: Enter follows a copy that held several envelopes.")?;
        return Ok(0);
    };
    match desk.post(&desk.next, &next.message) {
        Sent::Answered(answer) => return Ok(usize::from(act(w, &answer)?)),
        Sent::Later(why) | Sent::Refused(why, _) => {
            w.say(&format!(
                "Not put up (the desk did not answer: {why}); press Enter to try again."
            ))?;
            w.ring();
            w.wait_again(next);
        }
        Sent::Denied(why) => return Err(denied(&why)),
    }
    Ok(0)
}

/// The desk's hop endpoints and token.
pub(in crate::cli) struct Desk {
    hop: String,
    next: String,
    token: String,
}

impl Desk {
    /// Sends a copied text; `carry`: the desk records the relay (the answer goes on the
    /// clipboard).
    pub(in crate::cli) fn send(&self, text: &str, carry: bool) -> Sent {
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
            Err(e) => return Sent::Refused(e.to_string(), None),
        };
        let refusal = parse_refusal(&response.body);
        let why = || {
            (refusal.as_ref())
                .map(|e| format!("{} ({}, HTTP {})", e.reason, e.code, response.status))
                .unwrap_or_else(|| format!("HTTP {}", response.status))
        };
        match response.status {
            200 => match serde_json::from_str::<HopAnswer>(&response.body) {
                Ok(a) => Sent::Answered(Box::new(a)),
                Err(e) => Sent::Refused(
                    format!(
                        "the answer is not a desk's hop answer ({e}); is {} a crosstalk serve?",
                        self.hop
                    ),
                    None,
                ),
            },
            401 | 403 => Sent::Denied(why()),
            408 | 429 | 500..=599 => Sent::Later(why()),
            _ => Sent::Refused(why(), refusal.as_ref().and_then(|e| e.limit)),
        }
    }
}

/// Puts a relayed text on the clipboard (the desk has recorded it), says that the desk
/// delivered it straight to its recipient, or says why not. Returns whether a hop was made.
pub(in crate::cli) fn act(w: &mut Watching, answer: &HopAnswer) -> Result<bool, Failure> {
    let copied = w.carry(&answer.hop, |_, _, _| Ok(()))?;
    w.tell(
        answer.arrival.as_ref(),
        Some(&answer.hop),
        copied.as_deref(),
    )?;
    let delivered = matches!(&answer.hop, HopPlan::Delivered { done, .. } if done.delivered);
    Ok(copied.is_some() || delivered)
}

/// Keeps `text` in the spool and says so. When it cannot be kept (a full disk), says that
/// instead and goes on watching: the copy is still on the clipboard, and nothing half-written
/// is left in the spool.
fn keep(spool: &Spool, text: &str, why: &str, w: &Watching) -> Result<(), Failure> {
    let said = match spool.push(text) {
        Ok(_) => format!(
            "Desk unreachable ({why}): the copy is kept in the spool ({} waiting) and sent when the desk answers. The clipboard is left as you copied it.",
            spool.len()
        ),
        Err(e) => {
            tracing::warn!("companion: spooling in {}: {e}", spool.dir().display());
            format!(
                "Desk unreachable ({why}), and the copy could not be spooled in {}: {e}. It is still on your clipboard: copy it again once the desk answers.",
                spool.dir().display()
            )
        }
    };
    w.say(&said)?;
    w.ring();
    Ok(())
}

pub(in crate::cli) fn denied(why: &str) -> Failure {
    Failure {
        code: EXIT_USAGE,
        message: format!(
            "the desk refused the token: {why}; start the companion with the token `crosstalk serve --token` uses (copies so far are kept in the spool)"
        ),
    }
}
