//! What a chat window gets of a message: the envelope as this desk carries it (its audit
//! hop added when configured), in the contact's fence, after the contact's preamble the
//! first time — and the primer after it, the first time, for a contact with `primer = true`,
//! or always for the first envelope of a conversation (`N`); and the hop's plan
//! for a copied text — the same text whether this machine's clipboard takes it (the app,
//! `crosstalk watch`) or a companion's on another one (`serve` answers it).

use std::time::Duration;

use crate::contacts::{AddressBook, fence};
use crate::primer::primer_prefix;
use crate::store::{HopDecision, ImportReport, Store, StoreError, StoredMessage, Waiting};

/// How this desk carries an envelope: the address book (the route per contact, and a
/// window's fence and preamble), the audit hop it adds when configured, and how long a direct
/// delivery waits out a busy peer. The app, `crosstalk watch` and `crosstalk serve` (for a
/// companion on another machine) all choose the route and build the same text from it.
#[derive(Debug, Clone, Copy)]
pub struct Carrier<'a> {
    /// Contacts: who wants a fence, who gets a preamble first, and who the primer with it.
    pub book: &'a AddressBook,
    /// With `[relay] audit`: the name this desk signs its hops with.
    pub audit_by: Option<&'a str>,
    /// The time a hop says the envelope was passed on.
    pub now: jiff::Timestamp,
    /// The primer goes before the envelope (after the contact's preamble), whether or not the
    /// window had one before: the first envelope of a new conversation (`N`), which teaches
    /// every window it goes to.
    pub primer: bool,
    /// How long a direct delivery waits out a peer that asks to be sent again later
    /// (`[send] retry_for`).
    pub retry_for: Duration,
}

impl<'a> Carrier<'a> {
    /// A carrier whose hops say they passed the envelope on now, waiting out a busy peer
    /// for `[send] retry_for`'s default.
    pub fn now(book: &'a AddressBook, audit_by: Option<&'a str>) -> Self {
        Carrier {
            book,
            audit_by,
            now: jiff::Timestamp::now(),
            primer: false,
            retry_for: crate::transport::http::retry::DEFAULT_RETRY_FOR,
        }
    }

    /// This carrier, waiting out a busy peer for `retry_for` instead.
    pub(crate) fn waiting_out(self, retry_for: Duration) -> Self {
        Carrier { retry_for, ..self }
    }

    /// How an envelope for `to` goes: straight to its contact when the contact takes
    /// envelopes by a way of its own (see [`super::Direct`]), else through its chat window.
    /// An envelope with the primer is for a chat window, whatever the contact: the primer
    /// teaches a model reading it there.
    pub fn route(&self, to: &str) -> super::Route<'a> {
        if self.primer {
            return super::Route::Window;
        }
        match self.book.find(to).and_then(super::Direct::of) {
            Some(direct) => super::Route::Direct(direct),
            None => super::Route::Window,
        }
    }
}

/// Which of a POLL's targets a copy is for, when it has several.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Turn {
    /// The target's place among them, from 1, in the order the POLL lists them.
    pub n: usize,
    /// How many targets the POLL goes to.
    pub of: usize,
}

/// The text a recipient's window gets, and how it was made.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ForRecipient {
    /// The stored message.
    pub message: String,
    /// The banner's recipient.
    pub to: String,
    /// What goes on the clipboard, ready to paste.
    pub text: String,
    /// Whether the envelope is in a markdown fence.
    pub fenced: bool,
    /// Whether the contact's preamble comes first (nothing was carried to it before), or the
    /// primer (which starts with the preamble when there is one).
    pub preamble: bool,
    /// Whether the primer comes first: the first envelope of a conversation, or the first
    /// carried to a contact with `primer = true`.
    #[serde(default)]
    pub primer: bool,
    /// Whether this desk's `meta: audit` hop was added.
    pub audit: bool,
    /// For a POLL to several targets: which one this copy is for (`to` names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<Turn>,
}

/// What `m`'s recipient's window gets: the envelope as [`Store::relay_text`] writes it, in
/// the contact's fence, preceded by the contact's preamble when nothing was carried to that
/// recipient before.
pub fn for_recipient(
    store: &Store,
    m: &StoredMessage,
    carrier: &Carrier<'_>,
) -> Result<ForRecipient, StoreError> {
    for_target(store, m, &m.envelope.banner.to, carrier)
}

/// What the window of `to` gets of `m` (its recipient, or one of a POLL's targets): as
/// [`for_recipient`], by `to`'s contact (matched by name or address) and what was carried to
/// `to` before.
pub(crate) fn for_target(
    store: &Store,
    m: &StoredMessage,
    to: &str,
    carrier: &Carrier<'_>,
) -> Result<ForRecipient, StoreError> {
    let (envelope, audit) = store.relay_text_and_hop(m, carrier.audit_by, carrier.now)?;
    let contact = carrier.book.find(to);
    let fenced = carrier.book.fenced(to);
    // A contact that asks for the primer gets it once, where its preamble would go: the
    // first copy to a window opened without `N` teaches the format too.
    let wants_primer = carrier.primer || contact.is_some_and(|c| c.primer);
    let first = if carrier.primer {
        Some(primer_prefix(contact))
    } else {
        let preamble =
            (contact.and_then(|c| c.preamble.as_deref())).filter(|p| !p.trim().is_empty());
        let new = (preamble.is_some() || wants_primer) && !store.addressed_before(to, &m.id)?;
        match preamble {
            _ if new && wants_primer => Some(primer_prefix(contact)),
            Some(p) if new => Some(p.to_string()),
            _ => None,
        }
    };
    let primer = wants_primer && first.is_some();
    let body = if fenced { fence(&envelope) } else { envelope };
    let text = match &first {
        Some(p) => format!("{}\n\n{body}", p.trim_end()),
        None => body,
    };
    let turn = match store.fanout(&m.id)? {
        Some(targets) if targets.len() > 1 => (targets.iter())
            .position(|t| crate::protocol::awaiting::same_party(&t.target, to))
            .map(|i| Turn {
                n: i + 1,
                of: targets.len(),
            }),
        _ => None,
    };
    Ok(ForRecipient {
        message: m.id.clone(),
        to: to.to_string(),
        text,
        fenced,
        // The primer starts with the preamble, when the contact has one.
        preamble: first.is_some(),
        primer,
        audit,
        turn,
    })
}

/// What a hop does, with what it needs to do it: the same whether the clipboard is this
/// machine's (`crosstalk watch`) or a companion's on another one (the desk answers it this).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "decision", rename_all = "lowercase")]
pub enum HopPlan {
    /// Put this text on the clipboard.
    Relay {
        /// The envelope as its recipient's window gets it.
        ready: ForRecipient,
        /// The same message for the other windows it goes to (a POLL's other targets), each
        /// put up on request after this one.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        next: Vec<Waiting>,
    },
    /// Several envelopes for others: leave the clipboard alone; each is put up on request.
    Several {
        /// In the copy's order.
        waiting: Vec<Waiting>,
    },
    /// Leave the clipboard alone, for this reason (a sentence; it may quote the envelope, so
    /// it is sanitized where it is shown).
    Refuse {
        /// Why.
        reason: String,
    },
    /// Nothing new to carry (a copy of something stored and relayed).
    Nothing,
    /// Delivered straight to its recipient by the desk, whose contact takes envelopes by a
    /// way of its own (see [`super::carry_direct`]): leave the clipboard alone.
    Delivered {
        /// How it went.
        done: super::Done,
        /// As a relay's `next`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        next: Vec<Waiting>,
    },
}

/// The hop for `report`, the import of one clipboard text, with the recipient's text ready
/// when it relays. Records nothing: the caller marks the message relayed once the text is on
/// its way ([`Store::mark_relayed`]).
pub fn plan(
    store: &Store,
    report: &ImportReport,
    carrier: &Carrier<'_>,
) -> Result<HopPlan, StoreError> {
    Ok(match store.hop_decision(report)? {
        HopDecision::Relay(id) => match put_up(store, &id, None, carrier)? {
            Some(hop) => hop,
            None => HopPlan::Nothing,
        },
        HopDecision::Several(ids) => {
            let mut waiting = Vec::with_capacity(ids.len());
            for id in ids {
                waiting.extend(store.waiting_for(&id)?);
            }
            HopPlan::Several { waiting }
        }
        HopDecision::Refuse(reason) => HopPlan::Refuse { reason },
        HopDecision::Nothing => HopPlan::Nothing,
    })
}

/// Message `id` ready for the window of `to` (one of a POLL's targets) or, without `to`, for
/// its recipient, when it is stored and for someone else; a refusal saying why not
/// otherwise, `None` when no such message is stored. Without `to`, a POLL is ready for the
/// first of its targets it did not go to yet, the others in `next`.
pub fn put_up(
    store: &Store,
    id: &str,
    to: Option<&str>,
    carrier: &Carrier<'_>,
) -> Result<Option<HopPlan>, StoreError> {
    let Some(m) = store.message(id)? else {
        return Ok(None);
    };
    if store.delivery(id)?.is_some_and(|d| d.to_me) {
        return Ok(Some(HopPlan::Refuse {
            reason: "the envelope is addressed to you (r answers it)".into(),
        }));
    }
    if let Some(why) = store.pii_held(&m, carrier.now)? {
        return Ok(Some(HopPlan::Refuse {
            reason: format!("{why}; copy it by hand if it may go"),
        }));
    }
    let (to, next) = match to {
        Some(to) => (to.to_string(), Vec::new()),
        None => {
            let mut waiting = store.waiting_for(id)?.into_iter();
            let first = waiting.next().map(|w| w.to);
            (
                first.unwrap_or_else(|| m.envelope.banner.to.clone()),
                waiting.collect(),
            )
        }
    };
    Ok(Some(HopPlan::Relay {
        ready: for_target(store, &m, &to, carrier)?,
        next,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contacts::Contact;

    fn book(primer: bool) -> AddressBook {
        AddressBook {
            contacts: vec![Contact {
                name: "GEMINI".into(),
                address: Some("gemini://chat/42".into()),
                primer,
                ..Default::default()
            }],
            fenced_recipients: Vec::new(),
        }
    }

    fn stored(store: &mut Store, n: u32) -> StoredMessage {
        let g = crate::ids::IdGenerator::new();
        let (thread, id) = (g.next_id(), g.next_id());
        let text = format!(
            "[[claude://s/1→gemini://chat/42 v1]]\nthread: {thread}\nmessage: {id}\n\
             context: c{n}\nintent: REQUEST\nbody: hi\nsig: none\n[[END]]\n"
        );
        store.import_text("t", &text, &Default::default()).unwrap();
        store.message(&id).unwrap().unwrap()
    }

    /// With `primer = true`, a window's first hop carries the primer, even with no preamble;
    /// once something was carried there, only the envelope. Without it, nothing comes first.
    #[test]
    fn a_contact_with_primer_gets_it_on_its_first_hop() {
        let mut store = Store::open_in_memory().unwrap();
        let first = stored(&mut store, 1);
        let primed = book(true);
        let carrier = Carrier::now(&primed, None);
        let ready = for_recipient(&store, &first, &carrier).unwrap();
        assert!(ready.primer && ready.preamble, "{ready:?}");
        assert!(
            ready.text.starts_with(crate::primer::PRIMER.trim_end()),
            "{}",
            ready.text
        );
        assert!(
            ready
                .text
                .ends_with(&store.relay_text(&first, None, carrier.now).unwrap())
        );
        // Without the primer setting the same window gets the envelope alone.
        let plain = book(false);
        let ready = for_recipient(&store, &first, &Carrier::now(&plain, None)).unwrap();
        assert!(!ready.primer && !ready.preamble, "{ready:?}");
        // Carried once, the window knows the format.
        store.mark_relayed(&first.id, "test").unwrap();
        let second = stored(&mut store, 2);
        let ready = for_recipient(&store, &second, &carrier).unwrap();
        assert!(!ready.primer && !ready.preamble, "{}", ready.text);
        assert!(ready.text.starts_with("[[claude://s/1"), "{}", ready.text);
    }
}
