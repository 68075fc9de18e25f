//! How the writer stores a message it has not seen: its ids named, its row inserted, what
//! its arrival changes in the ledger of its parent and its thread, what it tells of its
//! signature and of the replies stored before it, and what the writer remembers of it for
//! the rest of the import. `store_one` (beside) decides that a message is new.

// The writer's own names (its run, its sets, the statement): this is the writer's second
// half, split off for length, not a room of its own.
use super::*;

impl Run<'_> {
    /// Stores a new message: its ids named ([`Run::name`]), its row inserted
    /// ([`Run::insert_row`]), what this writer keeps of the parent and the thread brought up
    /// to date ([`Run::note_arrival`]), and what its arrival tells of its signature and of the
    /// replies stored before it.
    pub(super) fn store_new(
        &mut self,
        prep: &mut Prepared,
        index: usize,
        place: Option<Place>,
        digest: Option<String>,
        fresh_message: bool,
    ) -> Result<Option<ImportItem>, StoreError> {
        let Prepared {
            parsed: p,
            raw,
            filled,
            guess,
            answered_by,
            marks,
            ..
        } = prep;
        let env = &p.envelope;
        let assigned = env.thread().is_none() || env.message().is_none() || fresh_message;
        let (ids, filled) = self.name(p, raw, filled.as_ref(), guess, place, index)?;
        let ids = NewIds {
            digest,
            assigned,
            ..ids
        };
        let (seq, ledger) = self.insert_row(p, raw, &ids, &filled, answered_by.as_deref())?;
        let env = &filled.env;
        self.note_arrival(&ids, &filled, &ledger, seq)?;
        let mut row = Some(ParentRow {
            seq,
            waits: ledger.awaiting_from.is_some(),
            to_me: ledger.to_me,
            // As the ledger reads it back from the stored intent.
            poll: filled.intent.as_ref().map(|i| Intent::parse(i.as_str())) == Some(Intent::Poll),
            to_relay: ledger.state() == Some("to_relay"),
            sender: crate::store::delivery::party_hash(&env.banner.from),
        });
        // Only an answer (a RESPOND, NACK, ERROR or CLOSE, not an ACK) answers, as the ledger
        // counts it.
        if let Some(parent) = ids.parent.as_ref().filter(|_| ledger.answers) {
            self.mark_answered(parent)?;
        }
        let mut diagnostics = self.trust_notes(seq, p, raw)?;
        let key = id_key(&ids.message);
        if self.named_parents.contains(&key) || self.named_before(&ids.message)? {
            self.arrived_after_replies(p.span.start_line, &ids, seq, &mut diagnostics)?;
            // Its wait was counted again from those replies: read when asked.
            row = None;
        }
        if let Some(row) = row {
            self.parents.insert(ids.message.clone(), row);
        }
        // It marked the message it was to answer as carried ahead of time: not that one after
        // all (placed elsewhere), so the mark goes back.
        if let Some(marked) = marks
            .as_deref()
            .filter(|m| ids.parent.as_deref() != Some(*m))
        {
            self.unmark(marked, &p.envelope.banner.from)?;
        }
        self.remember(&ids, key);
        self.note_session(&p.envelope, &ids.message, &ids.thread);
        Ok(Some(ImportItem {
            span: p.span,
            outcome: Outcome::Imported,
            message: Some(ids.message),
            thread: Some(ids.thread),
            diagnostics,
        }))
    }

    /// The thread, message and parent of a new message, and its stored form: as the worker
    /// filled it in (`filled`, or the `guess` made at this very place), or filled in now.
    pub(super) fn name<'f>(
        &mut self,
        p: &crate::protocol::Parsed,
        raw: &str,
        filled: Option<&'f Filled>,
        guess: &mut Option<Box<Guess>>,
        place: Option<Place>,
        index: usize,
    ) -> Result<(NewIds, Cow<'f, Filled>), StoreError> {
        let env = &p.envelope;
        let named = |thread, message, parent| NewIds {
            thread,
            message,
            parent,
            digest: None,
            assigned: false,
        };
        if let Some(f) = filled {
            // Named thread and message: the worker filled them in already.
            let ids = named(
                f.env.thread_key().unwrap_or_default().into_owned(),
                f.env.message_key().unwrap_or_default().into_owned(),
                env.parent_key().map(|p| p.into_owned()),
            );
            return Ok((ids, Cow::Borrowed(f)));
        }
        let Place { thread, parent } = match place {
            Some(place) => place,
            None => self.place(env)?,
        };
        let message = match env.message_key() {
            Some(m) => m.into_owned(),
            None => {
                // The id made on receipt for its index, as the worker made it.
                let first = (guess.as_deref())
                    .filter(|g| g.index == index)
                    .map(|g| g.message.clone());
                self.receipt_message(index, first, parent.as_deref())?
            }
        };
        let thread = thread.unwrap_or_else(|| message.clone());
        let filled = match guess.take() {
            // The worker filled it in at this very place.
            Some(g) if g.thread == thread && g.message == message && g.parent == parent => {
                debug_assert!(guessed_right(p, raw, &g));
                #[cfg(test)]
                GUESSES_TAKEN.with(|n| n.set(n.get() + 1));
                g.filled
            }
            _ => fill(p, &thread, &message, parent.as_deref()),
        };
        Ok((named(thread, message, parent), Cow::Owned(filled)))
    }

    /// Inserts the new message's row, with its delivery ledger worked out, and says its
    /// `seq` and that ledger. `answered_by` answered it a little later in the input.
    pub(super) fn insert_row(
        &mut self,
        p: &crate::protocol::Parsed,
        raw: &str,
        ids: &NewIds,
        filled: &Filled,
        answered_by: Option<&str>,
    ) -> Result<(i64, crate::store::delivery::LedgerColumns), StoreError> {
        let NewIds {
            thread,
            message,
            parent,
            ..
        } = ids;
        let env = &filled.env;
        self.touch_thread(thread, env.context(), [&env.banner.from, &env.banner.to], 1)?;
        let raw_edit = match &filled.raw_edit {
            Some(edit) => Cow::Borrowed(edit),
            None => Cow::Owned(crate::store::texts::raw_edit(raw, &filled.canonical)),
        };
        let known = parent.as_deref().and_then(|p| self.parents.get(p).copied());
        let mut ledger = crate::store::delivery::prepare_knowing(
            self.conn,
            &crate::store::delivery::NewMessage {
                id: message,
                parent: parent.as_deref(),
                received: true,
                sender: &env.banner.from,
                recipient: &env.banner.to,
                intent: filled.intent.as_ref(),
                meta: &env.meta,
            },
            &self.operator,
            &self.now,
            known,
            Some(&filled.ledger),
        )?;
        // Answered a little later in the input by another party: carried, so stored relayed.
        if let Some(by) = answered_by {
            ledger.relayed_ahead(by, &self.now);
        }
        self.insert.execute(params![
            message,
            thread,
            parent,
            self.paste_id,
            env.banner.from,
            env.banner.to,
            env.banner.version,
            env.user(),
            env.session(),
            env.context(),
            filled.intent.as_ref().map(Intent::as_str),
            p.envelope.intent_raw(),
            env.body,
            env.sig,
            env.hash,
            filled.headers,
            filled.meta,
            filled.diagnostics,
            // The canonical text is what these columns render to (`fill` rendered them),
            // so it is not stored; the received text is stored as its edit (see `texts`).
            raw_edit.text,
            raw_edit.prefix,
            raw_edit.suffix,
            ids.digest,
            ids.assigned,
            self.now,
            ledger.sent_at,
            ledger.recipient_key,
            ledger.to_me,
            ledger.awaiting_from,
            ledger.awaiting_needed,
            ledger.missing_parent,
            ledger.state(),
            // The desk placed it (its session's), the envelope named no parent.
            parent.is_some() && p.envelope.parent().is_none(),
            ledger.relayed.as_ref().map(|r| r.0.as_str()),
            ledger.relayed.as_ref().map(|r| r.1.as_str()),
            "received",
            "received",
            None::<&str>,
        ])?;
        Ok((self.conn.last_insert_rowid(), ledger))
    }

    /// What the new message's arrival (row `seq`) changed in the ledger of its thread and its
    /// parent, and in what this writer keeps of them: the parents' rows and the HANDOFFs that
    /// wait.
    pub(super) fn note_arrival(
        &mut self,
        ids: &NewIds,
        filled: &Filled,
        ledger: &crate::store::delivery::LedgerColumns,
        seq: i64,
    ) -> Result<(), StoreError> {
        let env = &filled.env;
        let thread = &ids.thread;
        // Only where a HANDOFF of the thread waits for this sender to write.
        let handoffs = self.handoffs.get_mut(thread).is_some_and(|to| {
            // Every HANDOFF of the thread to this sender ends now.
            !to.is_empty() && to.remove(&crate::store::delivery::address_key(&env.banner.from))
        });
        let arrival = ledger.after_insert(
            self.conn,
            &self.now,
            thread,
            seq,
            handoffs,
            &env.banner.from,
        )?;
        if arrival.thread_waits_ended {
            // Waits of other messages of the thread ended: their rows are read again.
            self.parents.clear();
        }
        if let Some(parent) = &ids.parent {
            match arrival.wait {
                ParentWait::Unchanged => {}
                ParentWait::Ended => {
                    if let Some(row) = self.parents.get_mut(parent) {
                        row.waits = false;
                    }
                }
                ParentWait::Recounted => {
                    self.parents.remove(parent);
                }
            }
            if arrival.relayed_parent {
                if let Some(row) = self.parents.get_mut(parent) {
                    row.to_relay = false;
                }
            }
        }
        if handoff_waits(filled.intent.as_ref(), ledger.awaiting_from.is_some()) {
            (self.handoffs.entry(thread.clone()).or_default())
                .insert(crate::store::delivery::address_key(&env.banner.to));
        }
        Ok(())
    }

    /// The message `parent`, answered by the new message: answered now, when it awaited
    /// its reply.
    pub(super) fn mark_answered(&mut self, parent: &str) -> Result<(), StoreError> {
        if self.awaiting.remove(parent) {
            self.conn
                .prepare_cached(
                    "UPDATE messages SET status = 'answered', updated_at = ?2
                     WHERE id = ?1 AND status = 'awaiting_reply'",
                )?
                .execute(params![parent, self.now])?;
        }
        Ok(())
    }

    /// The new message's diagnostics (taken from `p`) with what its signature's judgement
    /// adds, which are stored with its row (`seq`) too.
    pub(super) fn trust_notes(
        &mut self,
        seq: i64,
        p: &mut crate::protocol::Parsed,
        raw: &str,
    ) -> Result<Vec<crate::protocol::Diagnostic>, StoreError> {
        let trust_notes = self.trust.record(self.conn, seq, p, raw, &self.now)?;
        let mut diagnostics = std::mem::take(&mut p.diagnostics);
        if !trust_notes.is_empty() {
            diagnostics.extend(trust_notes);
            self.conn
                .prepare_cached("UPDATE messages SET diagnostics = ?2 WHERE seq = ?1")?
                .execute(params![
                    seq,
                    serde_json::to_string(&diagnostics).unwrap_or_default()
                ])?;
        }
        Ok(diagnostics)
    }

    /// The new message (row `seq`, at `line` of the input) arrived after a reply to it: that
    /// reply may lead back to it (a cycle, added to `diagnostics` and stored), and its replies
    /// move to its thread and stop waiting for it.
    pub(super) fn arrived_after_replies(
        &mut self,
        line: u32,
        ids: &NewIds,
        seq: i64,
        diagnostics: &mut Vec<crate::protocol::Diagnostic>,
    ) -> Result<(), StoreError> {
        let message = &ids.message;
        if let Some(parent) = &ids.parent {
            if cycle::closes_cycle(self.conn, message, parent)? {
                diagnostics.push(cycle::diagnostic(line, message, parent));
                self.conn
                    .prepare_cached("UPDATE messages SET diagnostics = ?2 WHERE id = ?1")?
                    .execute(params![
                        message,
                        serde_json::to_string(&diagnostics).unwrap_or_default()
                    ])?;
            }
        }
        self.rehome_replies(message, &ids.thread)?;
        crate::store::delivery::parent_arrived(self.conn, seq, message, &self.now)
    }

    /// Keeps what the sets of this import say of the new message (`key`, its id's): its id
    /// and digest stored, its parent named.
    pub(super) fn remember(&mut self, ids: &NewIds, key: u64) {
        if let Some(parent) = &ids.parent {
            self.named_parents.insert(id_key(parent));
        }
        if let Some(stored) = &mut self.stored_ids {
            stored.insert(key);
        }
        if let (Some(stored), Some(digest)) = (&mut self.stored_digests, &ids.digest) {
            stored.insert(id_key(digest));
        }
    }
}
