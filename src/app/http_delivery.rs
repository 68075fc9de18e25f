//! Delivery over HTTP: `y` and C-y for a contact with `delivery = "http"` post the envelope
//! to its `url` instead of copying it.
//!
//! The post runs on a thread of its own (the UI never waits on the network); its answer comes
//! back on the tick, which records it as `crosstalk send` does ([`deliver::record`]: the
//! message marked as carried by `http`, the ACK or ERROR stored in the thread) and says on the
//! status line what came of it.

use std::sync::mpsc::{Receiver, TryRecvError, channel};
use std::time::Duration;

use super::{App, Level};
use crate::app::text::safe_line;
use crate::transport::http::client::{self, PostError, Response};
use crate::transport::http::deliver;

/// How long a post may take before it counts as unanswered.
const POST_TIMEOUT: Duration = Duration::from_secs(15);

/// A post under way, or answered and not yet recorded (the database was busy).
pub struct InFlight {
    message: String,
    thread: String,
    /// The contact's name, for the status line.
    name: String,
    url: String,
    answer: Receiver<Result<Response, PostError>>,
    received: Option<Response>,
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
        let spawned = std::thread::Builder::new()
            .name("crosstalk-http-post".into())
            .spawn(move || {
                let _ = tx.send(client::post(&target, &body, token.as_deref(), POST_TIMEOUT));
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
            thread: thread.to_string(),
            name,
            url,
            answer,
            received: None,
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
            if d.received.is_none() {
                match d.answer.try_recv() {
                    Ok(Ok(response)) => d.received = Some(response),
                    Ok(Err(e)) => {
                        self.error(format!(
                            "Not delivered to {} over HTTP: {}",
                            safe_line(&d.name),
                            safe_line(&e.to_string())
                        ));
                        continue;
                    }
                    Err(TryRecvError::Empty) => {
                        still.push(d);
                        continue;
                    }
                    Err(TryRecvError::Disconnected) => {
                        self.error(format!(
                            "Not delivered to {} over HTTP.",
                            safe_line(&d.name)
                        ));
                        continue;
                    }
                }
            }
            let Some(response) = d.received.as_ref() else {
                continue;
            };
            let opts = self.settings.options.clone();
            match deliver::record(&mut self.store, &d.message, &d.url, response, &opts) {
                Ok(done) => {
                    let line = format!(
                        "{} {} over HTTP: {}",
                        if done.accepted {
                            "Delivered to"
                        } else {
                            "Refused by"
                        },
                        safe_line(&d.name),
                        safe_line(&done.summary())
                    );
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
