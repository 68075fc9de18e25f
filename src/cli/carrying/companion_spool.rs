//! The companion's side of its spool: sending what waits there when the desk answers again,
//! setting aside what the desk refuses, and telling the operator what the spool holds that
//! it will not send (see [`crate::transport::spool`] for what counts as the spool's own).

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::cli::Failure;
use crate::cli::carrying::companion::{Desk, Sent, act, denied};
use crate::cli::carrying::watch_cmd::Watching;
use crate::clipboard::watch::{TextDigest, digest};
use crate::transport::spool::{Spool, Spooled, Stranger, Survey};

/// The first wait before a spooled copy is sent again, and the longest.
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(30);

/// What the spool holds as the companion starts, told: names it will not send, copies the
/// desk refused before; and a crash's leftovers removed.
pub(in crate::cli) fn started(
    spool: &Spool,
    survey: std::io::Result<Survey>,
    w: &Watching,
    strangers: &mut Strangers,
) -> Result<(), Failure> {
    match survey {
        Ok(survey) => {
            strangers.tell(w, &survey.strangers)?;
            if survey.aside > 0 {
                w.say(&format!(
                    "{} copies the desk refused are kept in {}: not sent again; send each in parts, or raise the desk's [serve] max_body, and remove them.",
                    survey.aside,
                    spool.aside().display()
                ))?;
            }
        }
        Err(e) => {
            // Said now; not again each time the spool is tried.
            strangers.first_time(spool.dir().to_path_buf());
            w.say(&unreadable(spool, &e))?;
        }
    }
    swept(spool, w)
}

/// What the spool still holds as the companion stops, for its last line (empty when
/// nothing: each part starts with `; `).
pub(in crate::cli) fn left(spool: &Spool) -> String {
    let _ = spool.sweep();
    let survey = spool.survey().unwrap_or_default();
    let spooled = match survey.waiting {
        0 => String::new(),
        n => format!(
            "; {n} copies still in the spool ({}), sent when you start it again",
            spool.dir().display()
        ),
    };
    let aside = match survey.aside {
        0 => String::new(),
        n => format!(
            "; {n} copies the desk refused kept in {}",
            spool.aside().display()
        ),
    };
    let foreign = match survey.strangers.len() {
        0 => String::new(),
        n => format!("; {n} files in the spool that it did not write, never sent"),
    };
    format!("{spooled}{aside}{foreign}")
}

/// What a pass over the spool reads and changes of the companion's state.
pub(in crate::cli) struct Resend<'a> {
    /// The digest of the latest copy, `None` once something else was copied.
    pub(in crate::cli) latest: &'a mut Option<TextDigest>,
    pub(in crate::cli) retry: &'a mut Retry,
    pub(in crate::cli) hops: &'a mut usize,
    pub(in crate::cli) strangers: &'a mut Strangers,
}

/// Sends the oldest spooled copy, when the desk answers: on the clipboard if it is still
/// the latest copy, else stored on the desk only; one the desk refuses is set aside.
pub(in crate::cli) fn resend(
    desk: &Desk,
    spool: &Spool,
    w: &mut Watching,
    s: &mut Resend,
) -> Result<(), Failure> {
    swept(spool, w)?;
    let oldest = match spool.oldest() {
        Ok(o) => o,
        Err(e) => {
            s.retry.failed();
            let said = unreadable(spool, &e);
            if s.strangers.first_time(spool.dir().to_path_buf()) {
                w.say(&said)?;
                w.ring();
            }
            tracing::warn!("companion: {said}");
            return Ok(());
        }
    };
    s.strangers.tell(w, &oldest.strangers)?;
    let Some(oldest) = oldest.copy else {
        s.retry.clear();
        return Ok(());
    };
    let carry = *s.latest == Some(digest(&oldest.text));
    match desk.send(&oldest.text, carry) {
        Sent::Answered(answer) => {
            drop_spooled(spool, &oldest);
            s.retry.succeeded();
            if carry {
                *s.latest = None;
                *s.hops += usize::from(act(w, &answer)?);
            } else {
                let got = (answer.arrival.as_ref())
                    .map(|a| a.line())
                    .unwrap_or_default();
                w.say(&format!(
                    "Sent a spooled copy to the desk ({got}); not put on the clipboard since you copied something else: copy the envelope again to relay it."
                ))?;
            }
        }
        Sent::Later(_) => s.retry.failed(),
        Sent::Refused(why, limit) => {
            let size = match limit {
                Some(limit) => format!("{} bytes; the desk takes at most {limit}", oldest.size),
                None => format!("{} bytes", oldest.size),
            };
            let name = oldest.path.display();
            match spool.set_aside(&oldest) {
                Ok(to) => {
                    s.retry.succeeded();
                    w.say(&format!(
                        "The desk refused the spooled copy {name} ({size}): {why}. Nothing was stored there; the copy is kept in {} and not sent again: send it in parts, or raise the desk's [serve] max_body and copy it again.",
                        to.display()
                    ))?;
                }
                Err(e) => {
                    // Left where it is, it would be sent (and refused) again at once.
                    s.retry.failed();
                    w.say(&format!(
                        "The desk refused the spooled copy {name} ({size}): {why}; it could not be moved to {}: {e}. Move it away yourself: until then it is tried again now and then.",
                        spool.aside().display()
                    ))?;
                }
            }
            w.ring();
        }
        Sent::Denied(why) => return Err(denied(&why)),
    }
    Ok(())
}

/// The spool's folders cannot be read (or are not the spool's own): what to say.
fn unreadable(spool: &Spool, e: &std::io::Error) -> String {
    format!(
        "The spool {} cannot be read: {e}. Nothing in it is sent until that is fixed.",
        spool.dir().display()
    )
}

/// Removes what a crash left half-written in the spool, and says so.
fn swept(spool: &Spool, w: &Watching) -> Result<(), Failure> {
    for path in spool.sweep() {
        w.say(&format!(
            "Removed {}: half of a copy an earlier run was writing to the spool when it stopped; never sent.",
            path.display()
        ))?;
    }
    Ok(())
}

/// The names in the spool that are not its copies, each told once a run (they stay where
/// they are: the spool never removes what it did not write).
#[derive(Default)]
pub(in crate::cli) struct Strangers {
    told: HashSet<PathBuf>,
}

impl Strangers {
    /// Whether `path` is news.
    fn first_time(&mut self, path: PathBuf) -> bool {
        self.told.insert(path)
    }

    fn tell(&mut self, w: &Watching, found: &[Stranger]) -> Result<(), Failure> {
        for s in found {
            if !self.first_time(s.path.clone()) {
                continue;
            }
            let said = format!(
                "Not sent: {} in the spool is {}; the companion sends only copies it wrote there itself. Remove it if you did not put it there.",
                s.path.display(),
                s.why
            );
            tracing::warn!("companion: {said}");
            w.say(&said)?;
            w.ring();
        }
        Ok(())
    }
}

fn drop_spooled(spool: &Spool, s: &Spooled) {
    if let Err(e) = spool.remove(s) {
        tracing::warn!("companion: {} could not be removed: {e}", s.path.display());
    }
}

/// When the spool is tried next: soon after a failure, backing off to [`RETRY_MAX`]; right
/// away at start (copies left from an earlier run).
pub(in crate::cli) struct Retry {
    at: Option<Instant>,
    wait: Duration,
}

impl Retry {
    pub(in crate::cli) fn new() -> Retry {
        Retry {
            at: Some(Instant::now()),
            wait: RETRY_FIRST,
        }
    }

    pub(in crate::cli) fn due(&self) -> bool {
        self.at.is_some_and(|at| Instant::now() >= at)
    }

    pub(in crate::cli) fn failed(&mut self) {
        self.at = Some(Instant::now() + self.wait);
        self.wait = (self.wait * 2).min(RETRY_MAX);
    }

    pub(in crate::cli) fn succeeded(&mut self) {
        // The next spooled copy right away.
        self.wait = RETRY_FIRST;
        self.at = Some(Instant::now());
    }

    pub(in crate::cli) fn clear(&mut self) {
        self.wait = RETRY_FIRST;
        self.at = None;
    }
}
