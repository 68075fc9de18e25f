//! How an envelope reaches its recipient: the one seam every copy site goes through — the
//! app's `y` and C-y, its hop and POLL rounds, `crosstalk watch`, and `serve` answering a
//! companion.
//!
//! The recipient's contact chooses the [`Route`] ([`Carrier::route`]):
//! - [`Route::Window`]: a chat window. The text made for that window ([`for_target`]: fence,
//!   preamble or primer, audit hop) goes on a clipboard — the app's, `crosstalk watch`'s or a
//!   companion's, whoever holds one — and the operator pastes it there.
//! - [`Route::Direct`]: the contact takes envelopes by a way of its own ([`Direct`]: over
//!   HTTP), and the desk delivers it. The delivery is [`UnderWay`] on a thread of its own: the
//!   app steps it on its tick, the CLI waits for it ([`carry_direct`]); either way its answer
//!   is recorded in the store as the way's module says.
//!
//! Adding a way of delivery adds its module here, a variant of [`Direct`] and the contact's
//! keys for it; the copy sites only start what [`Direct::start`] gives and step it.

mod http;
mod window;

pub(crate) use window::for_target;
pub use window::{Carrier, ForRecipient, HopPlan, Turn, for_recipient, plan, put_up};

use crate::contacts::Contact;
use crate::protocol::Options;
use crate::store::{Store, StoreError, StoredMessage, Waiting};

/// How an envelope goes to its recipient, as the recipient's contact says.
#[derive(Debug, Clone, Copy)]
pub enum Route<'a> {
    /// Through the recipient's chat window: the operator pastes it there from a clipboard.
    Window,
    /// Straight to the recipient, delivered by the desk.
    Direct(Direct<'a>),
}

/// A way of delivering straight to a contact, without a chat window.
#[derive(Debug, Clone, Copy)]
pub enum Direct<'a> {
    /// `delivery = "http"`: posted to the contact's `url` (see [`crate::transport::http`]).
    Http {
        /// The contact, for its name and token.
        contact: &'a Contact,
        /// Where it takes envelopes.
        url: &'a str,
    },
}

impl<'a> Direct<'a> {
    /// The way `contact` takes envelopes, when it is not a chat window.
    pub fn of(contact: &'a Contact) -> Option<Direct<'a>> {
        let url = contact.http_url()?;
        Some(Direct::Http { contact, url })
    }

    /// Starts delivering stored message `m` to `to` (its recipient, or one of a POLL's
    /// targets): the envelope as a relay carries it ([`Store::relay_text_and_hop`]: with this
    /// desk's audit hop when configured), on a thread of its own. Nothing is recorded until
    /// the answer is.
    pub fn start(
        self,
        store: &Store,
        m: &StoredMessage,
        to: &str,
        carrier: &Carrier<'_>,
    ) -> Result<Box<dyn UnderWay>, StoreError> {
        let (text, _) = store.relay_text_and_hop(m, carrier.audit_by, carrier.now)?;
        Ok(match self {
            Direct::Http { contact, url } => Box::new(http::Posting::start(
                &m.id,
                to,
                contact,
                url,
                text,
                carrier.retry_for,
            )),
        })
    }
}

/// A direct delivery under way. Whoever holds the store records its answer: the app on its
/// tick ([`UnderWay::step`]), the CLI by waiting ([`UnderWay::finish`]). Its lines quote the
/// recipient's answer: sanitize them where they are shown.
pub trait UnderWay: Send {
    /// The message it carries.
    fn message(&self) -> &str;
    /// The window it goes to: the recipient, or one of a POLL's targets.
    fn to(&self) -> &str;
    /// What the operator is told as it starts ("Delivering to CHATGPT over HTTP").
    fn started(&self) -> String;
    /// What happened since the last step, without waiting. A busy database is an error to
    /// step again on: the answer is kept until it is recorded.
    fn step(&mut self, store: &mut Store, opts: &Options) -> Result<Step, StoreError>;
    /// Waits for the delivery to end and records it; `note` hears each line on the way.
    fn finish(
        &mut self,
        store: &mut Store,
        opts: &Options,
        note: &mut dyn FnMut(&str),
    ) -> Result<Done, StoreError>;
}

/// What a step of a delivery under way found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Nothing new yet.
    UnderWay,
    /// Still under way; a line for the operator (the recipient asked to be sent again later).
    Note(String),
    /// Over, and recorded as far as it got.
    Done(Done),
}

/// How a direct delivery ended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Done {
    /// The message delivered.
    pub message: String,
    /// The window it went to.
    pub to: String,
    /// The way it went, as the ledger records it (`http`).
    pub over: String,
    /// Whether the recipient took it.
    pub delivered: bool,
    /// Whether anything was recorded: an answer came (taken or refused). Without one, the
    /// message still waits to be relayed.
    pub recorded: bool,
    /// One line for the operator (before sanitizing: it quotes the recipient's answer).
    pub line: String,
}

/// For `crosstalk watch` and `serve`, which hold the store while they wait: delivers `plan`'s
/// relay straight to its recipient when the recipient's route is direct, waiting for the
/// answer (each line on the way told to `note`). The plan then says so
/// ([`HopPlan::Delivered`]); any other plan is returned as it was, for a window.
pub(crate) fn carry_direct(
    store: &mut Store,
    plan: HopPlan,
    carrier: &Carrier<'_>,
    opts: &Options,
    note: &mut dyn FnMut(&str),
) -> Result<HopPlan, StoreError> {
    let HopPlan::Relay { ready, next } = &plan else {
        return Ok(plan);
    };
    let Route::Direct(direct) = carrier.route(&ready.to) else {
        return Ok(plan);
    };
    let Some(m) = store.message(&ready.message)? else {
        return Ok(plan);
    };
    let done = direct
        .start(store, &m, &ready.to, carrier)?
        .finish(store, opts, note)?;
    Ok(HopPlan::Delivered {
        done,
        next: next.clone(),
    })
}

/// The next windows of a plan: the other targets a relayed or delivered POLL still goes to.
pub(crate) fn next_of(plan: &HopPlan) -> &[Waiting] {
    match plan {
        HopPlan::Relay { next, .. } | HopPlan::Delivered { next, .. } => next,
        _ => &[],
    }
}
