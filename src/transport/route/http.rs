//! The direct way over HTTP: a contact with `delivery = "http"` and a `url` gets the envelope
//! posted to its `/crosstalk/receive`, and the answer is recorded as `crosstalk send` records
//! it ([`deliver::record_to`]: the message marked as carried by `http`, the ACK or ERROR
//! stored in the thread).
//!
//! The post runs on a thread of its own, so that neither the app's screen nor a watch's loop
//! waits on the network. A peer that asks to be sent again later (429, or 503 with
//! `Retry-After`) is waited out as `send` waits it out ([`retry`], within `[send]
//! retry_for`): the waiting is the post thread's, and each wait is a line for the operator as
//! it begins.

use std::sync::mpsc::{Receiver, TryRecvError, channel};
use std::time::Duration;

use super::{Done, Step, UnderWay};
use crate::contacts::Contact;
use crate::protocol::Options;
use crate::store::{Store, StoreError};
use crate::transport::http::client::{PostError, Response};
use crate::transport::http::{METHOD, deliver, retry};

/// How long a post may take before it counts as unanswered.
const POST_TIMEOUT: Duration = Duration::from_secs(15);

/// What the post thread tells whoever holds the delivery.
enum News {
    /// The peer asked to be sent again later: waiting.
    Waiting(retry::Wait),
    /// The last answer (or none).
    Answered(Result<retry::Retried, PostError>),
}

/// A post under way, or answered and not yet recorded (the database was busy).
pub(super) struct Posting {
    message: String,
    /// The window it was posted for (its recipient, or one of a POLL's targets).
    to: String,
    /// The contact's name, for the operator's lines.
    name: String,
    url: String,
    /// The post thread's news; `Err` when that thread could not start.
    answer: Result<Receiver<News>, String>,
    received: Option<Response>,
    /// Set when the last answer still asked to be sent again.
    gave_up: Option<retry::GaveUp>,
}

impl Posting {
    /// Starts posting `text` (message `message`, for `to`) to `contact` at `url`, waiting out
    /// a busy peer for at most `retry_for`.
    pub(super) fn start(
        message: &str,
        to: &str,
        contact: &Contact,
        url: &str,
        text: String,
        retry_for: Duration,
    ) -> Posting {
        let (tx, answer) = channel();
        let token = contact.token.clone();
        let target = url.to_string();
        let policy = retry::Policy {
            wait_at_most: retry_for,
        };
        let spawned = std::thread::Builder::new()
            .name("crosstalk-http-post".into())
            .spawn(move || {
                let waiting = tx.clone();
                let answered = retry::post(
                    &target,
                    &text,
                    token.as_deref(),
                    POST_TIMEOUT,
                    &policy,
                    |w| {
                        let _ = waiting.send(News::Waiting(*w));
                    },
                );
                let _ = tx.send(News::Answered(answered));
            });
        Posting {
            message: message.to_string(),
            to: to.to_string(),
            name: contact.name.clone(),
            url: url.to_string(),
            answer: spawned.map(|_| answer).map_err(|e| e.to_string()),
            received: None,
            gave_up: None,
        }
    }

    /// Takes one piece of the post thread's news: a line while it waits, the end when it
    /// failed; `None` once an answer is in (to record).
    fn take(&mut self, news: Result<News, String>) -> Option<Step> {
        match news {
            Ok(News::Waiting(w)) => Some(Step::Note(format!(
                "{} answered {} over HTTP: posting again in {} s{}…",
                self.name,
                w.status,
                w.wait.as_secs_f64().ceil(),
                if w.asked.is_some() {
                    ", as it asks"
                } else {
                    ""
                }
            ))),
            Ok(News::Answered(Ok(r))) => {
                self.gave_up = r.gave_up;
                self.received = Some(r.response);
                None
            }
            Ok(News::Answered(Err(e))) => Some(self.failed(&format!(": {e}"))),
            Err(e) => Some(self.failed(&e)),
        }
    }

    /// The end of a post that got no answer: nothing recorded, the message still waits.
    fn failed(&self, why: &str) -> Step {
        Step::Done(Done {
            message: self.message.clone(),
            to: self.to.clone(),
            over: METHOD.into(),
            delivered: false,
            recorded: false,
            line: format!("Not delivered to {} over HTTP{why}", self.name),
        })
    }

    /// Records the answer that came.
    fn record(
        &self,
        store: &mut Store,
        response: &Response,
        opts: &Options,
    ) -> Result<Step, StoreError> {
        let to = Some(self.to.as_str());
        let done = deliver::record_to(store, &self.message, to, &self.url, response, opts)?;
        let verb = if done.accepted {
            "Delivered to"
        } else {
            "Refused by"
        };
        let mut line = format!("{verb} {} over HTTP: {}", self.name, done.summary());
        if let Some(gave_up) = &self.gave_up {
            line.push_str(&send_again(gave_up));
        }
        Ok(Step::Done(Done {
            message: self.message.clone(),
            to: self.to.clone(),
            over: METHOD.into(),
            delivered: done.accepted,
            recorded: true,
            line,
        }))
    }
}

impl UnderWay for Posting {
    fn message(&self) -> &str {
        &self.message
    }

    fn to(&self) -> &str {
        &self.to
    }

    fn started(&self) -> String {
        format!("Delivering to {} over HTTP", self.name)
    }

    fn step(&mut self, store: &mut Store, opts: &Options) -> Result<Step, StoreError> {
        while self.received.is_none() {
            let news = match &self.answer {
                Err(e) => Err(format!(": {e}")),
                Ok(rx) => match rx.try_recv() {
                    Ok(news) => Ok(news),
                    Err(TryRecvError::Empty) => return Ok(Step::UnderWay),
                    Err(TryRecvError::Disconnected) => Err(".".into()),
                },
            };
            if let Some(step) = self.take(news) {
                return Ok(step);
            }
        }
        match self.received.take() {
            Some(response) => {
                let recorded = self.record(store, &response, opts);
                // A busy database: the answer is kept for the next step.
                if recorded.is_err() {
                    self.received = Some(response);
                }
                recorded
            }
            None => Ok(Step::UnderWay),
        }
    }

    fn finish(
        &mut self,
        store: &mut Store,
        opts: &Options,
        note: &mut dyn FnMut(&str),
    ) -> Result<Done, StoreError> {
        while self.received.is_none() {
            let news = match &self.answer {
                Err(e) => Err(format!(": {e}")),
                // The post thread answers within its timeout and its waits, or ends.
                Ok(rx) => rx.recv().map_err(|_| ".".to_string()),
            };
            match self.take(news) {
                Some(Step::Note(line)) => note(&line),
                Some(Step::Done(done)) => return Ok(done),
                Some(Step::UnderWay) | None => {}
            }
        }
        match self.step(store, opts)? {
            Step::Done(done) => Ok(done),
            // `step` records an answer that is in: it does not come back under way.
            Step::Note(_) | Step::UnderWay => Ok(Done {
                message: self.message.clone(),
                to: self.to.clone(),
                over: METHOD.into(),
                delivered: false,
                recorded: false,
                line: format!("Not delivered to {} over HTTP.", self.name),
            }),
        }
    }
}

/// What the line adds when the peer still asked to be sent again: how long it asked to wait,
/// and that `y` posts again.
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
