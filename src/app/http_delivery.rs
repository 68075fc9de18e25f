//! Delivery over HTTP: `y` and C-y for a contact with `delivery = "http"` post the envelope
//! to its `url` instead of copying it.
//!
//! The post runs on a thread of its own (the UI never waits on the network); its answer comes
//! back on the tick, which records it as `crosstalk send` does ([`deliver::record`]: the
//! message marked as carried by `http`, the ACK or ERROR stored in the thread) and says on the
//! status line what came of it.
//!
//! A peer that asks to be sent again later (429, or 503 with `Retry-After`) is waited out as
//! `send` waits it out ([`retry`], within `[send] retry_for`): the waiting is the post
//! thread's, and each wait is said on the status line as it begins.

use std::sync::mpsc::{Receiver, TryRecvError, channel};
use std::time::Duration;

use super::{App, Level};
use crate::app::text::safe_line;
use crate::transport::http::client::{PostError, Response};
use crate::transport::http::{deliver, retry};

/// How long a post may take before it counts as unanswered.
const POST_TIMEOUT: Duration = Duration::from_secs(15);

/// What the post thread tells the tick.
enum Posting {
    /// The peer asked to be sent again later: waiting.
    Waiting(retry::Wait),
    /// The last answer (or none).
    Answered(Result<retry::Retried, PostError>),
}

/// A post under way, or answered and not yet recorded (the database was busy).
pub struct InFlight {
    message: String,
    /// The window it was posted for (its recipient, or one of a POLL's targets).
    to: String,
    thread: String,
    /// The contact's name, for the status line.
    name: String,
    url: String,
    answer: Receiver<Posting>,
    received: Option<Response>,
    /// Set when the last answer still asked to be sent again.
    gave_up: Option<retry::GaveUp>,
}

impl App {
    /// When `to` is a contact that takes envelopes over HTTP, starts posting message `id`
    /// (`text`, of `thread`) to it and returns true; else false (the caller copies).
    pub(super) fn deliver_over_http(
        &mut self,
        id: &str,
        thread: &str,
        text: &str,
        to: &str,
    ) -> bool {
        let Some(contact) = self.contacts.find(to) else {
            return false;
        };
        let Some(url) = contact.http_url().map(str::to_string) else {
            return false;
        };
        let name = contact.name.clone();
        let token = contact.token.clone();
        let (tx, answer) = channel();
        let (body, target) = (text.to_string(), url.clone());
        let policy = retry::Policy {
            wait_at_most: Duration::from_secs(self.settings.send.retry_for),
        };
        let spawned = std::thread::Builder::new()
            .name("crosstalk-http-post".into())
            .spawn(move || {
                let waiting = tx.clone();
                let answered = retry::post(
                    &target,
                    &body,
                    token.as_deref(),
                    POST_TIMEOUT,
                    &policy,
                    |w| {
                        let _ = waiting.send(Posting::Waiting(*w));
                    },
                );
                let _ = tx.send(Posting::Answered(answered));
            });
        if let Err(e) = spawned {
            self.error(format!(
                "Not delivered to {} over HTTP: {e}",
                safe_line(&name)
            ));
            return true;
        }
        self.info(format!("Delivering to {} over HTTP…", safe_line(&name)));
        self.http_sends.push(InFlight {
            message: id.to_string(),
            to: to.to_string(),
            thread: thread.to_string(),
            name,
            url,
            answer,
            received: None,
            gave_up: None,
        });
        true
    }

    /// Whether a post is under way (the runtime then ticks more often).
    pub fn delivering(&self) -> bool {
        !self.http_sends.is_empty()
    }

    /// On the tick: records the answers that came back.
    pub(super) fn take_http_answers(&mut self) {
        let mut still = Vec::new();
        for mut d in std::mem::take(&mut self.http_sends) {
            let mut under_way = false;
            while d.received.is_none() {
                match d.answer.try_recv() {
                    Ok(Posting::Waiting(w)) => {
                        self.info(format!(
                            "{} answered {} over HTTP: posting again in {} s{}…",
                            safe_line(&d.name),
                            w.status,
                            w.wait.as_secs_f64().ceil(),
                            if w.asked.is_some() {
                                ", as it asks"
                            } else {
                                ""
                            }
                        ));
                    }
                    Ok(Posting::Answered(Ok(r))) => {
                        d.gave_up = r.gave_up;
                        d.received = Some(r.response);
                    }
                    Ok(Posting::Answered(Err(e))) => {
                        self.error(format!(
                            "Not delivered to {} over HTTP: {}",
                            safe_line(&d.name),
                            safe_line(&e.to_string())
                        ));
                        break;
                    }
                    Err(TryRecvError::Empty) => {
                        under_way = true;
                        break;
                    }
                    Err(TryRecvError::Disconnected) => {
                        self.error(format!(
                            "Not delivered to {} over HTTP.",
                            safe_line(&d.name)
                        ));
                        break;
                    }
                }
            }
            if under_way {
                still.push(d);
                continue;
            }
            let Some(response) = d.received.as_ref() else {
                continue;
            };
            let opts = self.settings.options.clone();
            let to = Some(d.to.as_str());
            match deliver::record_to(&mut self.store, &d.message, to, &d.url, response, &opts) {
                Ok(done) => {
                    let mut line = format!(
                        "{} {} over HTTP: {}",
                        if done.accepted {
                            "Delivered to"
                        } else {
                            "Refused by"
                        },
                        safe_line(&d.name),
                        safe_line(&done.summary())
                    );
                    if let Some(gave_up) = &d.gave_up {
                        line.push_str(&send_again(gave_up));
                    }
                    let _ = self.reveal(&d.thread, Some(&d.message));
                    self.set_status((
                        if done.accepted {
                            Level::Info
                        } else {
                            Level::Error
                        },
                        line,
                    ));
                }
                // The database is busy: recorded on a later tick.
                Err(e) if e.is_busy() => still.push(d),
                Err(e) => self.error(format!(
                    "Delivered to {} over HTTP, but not recorded: {e}",
                    safe_line(&d.name)
                )),
            }
        }
        self.http_sends = still;
    }
}

/// What the status line adds when the peer still asked to be sent again: how long it asked
/// to wait, and that `y` posts again.
fn send_again(gave_up: &retry::GaveUp) -> String {
    let asked = match *gave_up {
        retry::GaveUp::TooLong { asked, .. } => Some(asked),
        retry::GaveUp::Spent { asked, .. } => asked,
    };
    match asked {
        Some(asked) => format!(
            " (it asks to wait {} s; y posts it again)",
            asked.as_secs_f64().ceil()
        ),
        None => " (y posts it again later)".into(),
    }
}
