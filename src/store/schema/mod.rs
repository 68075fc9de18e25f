//! The database schema and its migrations.
//!
//! `PRAGMA user_version` holds the schema version. Each migration runs in one transaction, so a
//! database is always at a whole version; a database newer than this binary is refused rather
//! than read or changed.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior};

mod m10_ids_in_one_case;
pub(in crate::store) mod m11_checks_as_comparisons;
mod m13_digest_where_present;

use super::StoreError;
use crate::protocol::Intent;

/// Migrations in order; index + 1 is the version each produces.
const MIGRATIONS: &[&str] = &[
    r#"
-- Everything a user pasted or imported, as received, before any parsing. Large inputs are
-- kept in pieces so that storing them never needs the whole text in memory.
CREATE TABLE pastes (
    id          INTEGER PRIMARY KEY,
    source      TEXT NOT NULL,
    received_at TEXT NOT NULL,
    bytes       INTEGER NOT NULL,
    digest      TEXT NOT NULL
);
CREATE INDEX pastes_digest ON pastes(digest);
CREATE TABLE paste_chunks (
    paste_id INTEGER NOT NULL REFERENCES pastes(id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    text     TEXT NOT NULL,
    PRIMARY KEY (paste_id, seq)
) WITHOUT ROWID;

CREATE TABLE threads (
    id            TEXT PRIMARY KEY,
    context       TEXT,
    participants  TEXT NOT NULL DEFAULT '[]',  -- JSON array, in order of appearance
    message_count INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL,
    last_activity TEXT NOT NULL
);
CREATE INDEX threads_activity ON threads(last_activity DESC, id DESC);

-- One row per envelope kept. `parent_id` has no foreign key on purpose: a reply may arrive
-- before the message it answers, and is linked when that message arrives.
CREATE TABLE messages (
    seq          INTEGER PRIMARY KEY,          -- arrival order
    id           TEXT NOT NULL UNIQUE,
    thread_id    TEXT NOT NULL REFERENCES threads(id),
    parent_id    TEXT,
    paste_id     INTEGER REFERENCES pastes(id),
    direction    TEXT NOT NULL CHECK (direction IN ('received', 'composed')),
    status       TEXT NOT NULL CHECK (status IN ('draft', 'awaiting_reply', 'answered', 'received')),
    sender       TEXT NOT NULL,
    recipient    TEXT NOT NULL,
    participants TEXT NOT NULL,                -- "sender recipient", for search
    version      TEXT NOT NULL,
    user         TEXT,
    session      TEXT,
    context      TEXT,
    intent       TEXT,                         -- normalized
    intent_raw   TEXT,                         -- as written
    body         TEXT,
    sig          TEXT,
    hash         TEXT,
    headers      TEXT NOT NULL,                -- JSON [[key, value], ...], as received
    meta         TEXT NOT NULL,                -- JSON [{"namespace", "entries"}], in order
    diagnostics  TEXT NOT NULL,                -- JSON, as `parse --json` reports them
    raw          TEXT,                         -- as received (transport undone); NULL when
                                               -- it equals `canonical`, to store it once
    canonical    TEXT NOT NULL,                -- the canonical form, ids filled in
    digest       TEXT UNIQUE,                  -- for envelopes that came without a message id:
                                               -- SHA-256 of their canonical text as received
    ids_assigned INTEGER NOT NULL DEFAULT 0,   -- 1 when thread/message were made on receipt
    received_at  TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
CREATE INDEX messages_thread ON messages(thread_id, seq);
CREATE INDEX messages_parent ON messages(parent_id);
CREATE INDEX messages_session ON messages(session, seq);
CREATE INDEX messages_status ON messages(status) WHERE status IN ('draft', 'awaiting_reply');

CREATE VIRTUAL TABLE messages_fts USING fts5(
    body, context, participants,
    content = 'messages', content_rowid = 'seq', tokenize = 'unicode61'
);
-- New rows are indexed by whoever inserts them, in bulk at the end of an import (FTS5 flushes
-- its pending index at every statement savepoint, so a per-row trigger costs a flush per row).
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, body, context, participants)
    VALUES ('delete', old.seq, old.body, old.context, old.participants);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF body, context, participants ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, body, context, participants)
    VALUES ('delete', old.seq, old.body, old.context, old.participants);
    INSERT INTO messages_fts(rowid, body, context, participants)
    VALUES (new.seq, new.body, new.context, new.participants);
END;
"#,
    r#"
-- When the operator last looked at each thread: newer activity marks it unread.
ALTER TABLE threads ADD COLUMN seen_at TEXT;

-- Envelopes being composed, saved as they are typed so that neither a quit nor a crash loses
-- them. `form` is the composer's fields exactly as typed (JSON, owned by the app); `envelope`
-- is what they render to, readable without the app. A draft becomes a message when copied.
CREATE TABLE drafts (
    id         TEXT PRIMARY KEY,   -- the message id it will be sent with
    thread_id  TEXT NOT NULL,
    parent_id  TEXT,
    envelope   TEXT NOT NULL,
    form       TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX drafts_parent ON drafts(parent_id);
CREATE INDEX drafts_thread ON drafts(thread_id);
"#,
    r#"
-- The input as received, byte for byte: pieces were text, where bytes that are not UTF-8 had
-- become U+FFFD and could not be recovered. Pieces stored before are kept as their UTF-8.
CREATE TABLE paste_pieces (
    paste_id INTEGER NOT NULL REFERENCES pastes(id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    bytes    BLOB NOT NULL,
    PRIMARY KEY (paste_id, seq)
) WITHOUT ROWID;
INSERT INTO paste_pieces (paste_id, seq, bytes)
    SELECT paste_id, seq, CAST(text AS BLOB) FROM paste_chunks;
DROP TABLE paste_chunks;
"#,
    r#"
-- Texts pasted under a message id already stored with other content: kept beside the stored
-- message (never in its place, never dropped), one row per distinct canonical text. (IF NOT
-- EXISTS: a database whose version was set back by hand may hold these tables already.)
CREATE TABLE IF NOT EXISTS message_versions (
    seq         INTEGER PRIMARY KEY,
    message_id  TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    paste_id    INTEGER REFERENCES pastes(id) ON DELETE SET NULL,
    raw         TEXT,                 -- as received; NULL when it equals `canonical`
    canonical   TEXT NOT NULL,
    digest      TEXT NOT NULL,        -- SHA-256 of `canonical`
    diagnostics TEXT NOT NULL,
    received_at TEXT NOT NULL,
    UNIQUE (message_id, digest)
);

-- Ids that were not valid ULIDs/UUIDv7s, replaced by fresh ones on import: a later envelope
-- naming the original id (as `parent` or `thread`) is threaded under the fresh one.
CREATE TABLE IF NOT EXISTS id_aliases (
    alias      TEXT PRIMARY KEY,      -- the id as written
    kind       TEXT NOT NULL CHECK (kind IN ('message', 'thread')),
    id         TEXT NOT NULL,         -- the id it was given
    paste_id   INTEGER REFERENCES pastes(id) ON DELETE SET NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS id_aliases_id ON id_aliases(id);
-- The delivery ledger: what the operator must still relay, answer or chase, per message.
-- `state` says which of the queue's sections a message is in (NULL: none of them):
-- received for someone else and not copied for them yet (`to_relay`), addressed to the
-- operator and not answered by them (`to_me`), or waiting for replies (`awaiting`).
CREATE TABLE delivery (
    seq             INTEGER PRIMARY KEY REFERENCES messages(seq) ON DELETE CASCADE,
    thread_id       TEXT NOT NULL,             -- follows messages.thread_id
    sent_at         TEXT NOT NULL,             -- the message's time: its ULID's, else when stored
    recipient_key   TEXT NOT NULL,             -- the recipient lower-cased
    received        INTEGER NOT NULL,          -- 1 received, 0 composed by the operator
    to_me           INTEGER NOT NULL DEFAULT 0,-- addressed to one of the operator's addresses
    relayed_at      TEXT,                      -- when it was copied for its recipient
    relay_method    TEXT,                      -- how (system clipboard, OSC 52, command, file)
    answered_at     TEXT,                      -- when the operator composed a reply to it
    awaiting_from   TEXT,                      -- JSON array of who must still answer; NULL: no one
    awaiting_needed INTEGER,                   -- answers still needed
    missing_parent  INTEGER NOT NULL DEFAULT 0,-- names a parent that was never received
    state TEXT GENERATED ALWAYS AS (CASE
        WHEN received = 1 AND to_me = 0 AND relayed_at IS NULL THEN 'to_relay'
        WHEN to_me = 1 AND answered_at IS NULL THEN 'to_me'
        WHEN awaiting_from IS NOT NULL THEN 'awaiting' END) VIRTUAL
);
CREATE INDEX delivery_state ON delivery(state, sent_at) WHERE state IS NOT NULL;
CREATE INDEX delivery_missing ON delivery(sent_at) WHERE missing_parent = 1;
CREATE INDEX delivery_thread ON delivery(thread_id, sent_at);
CREATE INDEX delivery_thread_state ON delivery(thread_id, state) WHERE state IS NOT NULL;
CREATE INDEX delivery_thread_missing ON delivery(thread_id) WHERE missing_parent = 1;

-- The operator's addresses as the config last named them (lower-cased): the ledger's `to_me`
-- is computed against these, and again when they change.
CREATE TABLE operator_addresses (address TEXT PRIMARY KEY) WITHOUT ROWID;

-- Messages stored before the ledger was kept: received ones count as relayed already (they
-- were carried, or not, before anything recorded it), and only what the old status said
-- still awaits its reply.
INSERT INTO delivery (seq, thread_id, sent_at, recipient_key, received, relayed_at,
                      relay_method, awaiting_from, awaiting_needed, missing_parent)
SELECT m.seq, m.thread_id, m.received_at, lower(m.recipient), m.direction = 'received',
       CASE WHEN m.direction = 'received' THEN m.received_at END,
       CASE WHEN m.direction = 'received' THEN 'an unrecorded way (before the ledger)' END,
       CASE WHEN m.status = 'awaiting_reply' THEN json_array(m.recipient) END,
       CASE WHEN m.status = 'awaiting_reply' THEN 1 END,
       m.parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM messages p WHERE p.id = m.parent_id)
FROM messages m;
"#,
    r#"
-- The trust store: one key per key id (`pkid`), pinned on first sight (trust on first use)
-- or added by the operator. A different key later seen for the id is kept beside it
-- (`pending_key`) and the id is `changed` until the operator trusts one.
CREATE TABLE IF NOT EXISTS keys (
    pkid           TEXT PRIMARY KEY,
    algorithm      TEXT NOT NULL DEFAULT 'ed25519',
    public_key     TEXT NOT NULL,              -- base64 of the raw key
    source         TEXT NOT NULL CHECK (source IN ('manual', 'announcement', 'dns', 'did_key')),
    state          TEXT NOT NULL CHECK (state IN ('trusted', 'changed', 'revoked')),
    pending_key    TEXT,                       -- the different key seen since, base64
    pending_source TEXT,
    first_seen     TEXT NOT NULL,
    last_seen      TEXT NOT NULL
);

-- Each signed message's verdict, judged on receipt and again for a key id's messages when
-- its key is trusted, added or removed.
CREATE TABLE IF NOT EXISTS signatures (
    seq    INTEGER PRIMARY KEY REFERENCES messages(seq) ON DELETE CASCADE,
    pkid   TEXT,
    state  TEXT NOT NULL CHECK (state IN ('verified', 'unknown', 'bad', 'changed')),
    detail TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS signatures_pkid ON signatures(pkid);
"#,
    r#"
-- Each text once (see store/texts.rs): `canonical` is rendered from the columns when read and
-- kept only when they would not render to it; `raw` holds what the received text has of its
-- own between the `raw_prefix` and `raw_suffix` bytes it shares with the canonical text;
-- `headers` leaves out values that columns hold. The input as received is kept compressed
-- (see store/pieces.rs). Done by `texts_once` below: a database whose version was set back
-- by hand may have the new columns already.
"#,
    r#"
-- Leaner rows (see `lean_rows` below for the columns). The ledger's per-thread look-ups (the
-- thread list's counts, its "awaiting since" and its latest time) share one index keyed by
-- thread and state, instead of one by thread and time beside one by thread and state (also
-- in `lean_rows`: a database whose version was set back by hand may hold the ledger as a
-- view already, see version 8).
"#,
    r#"
-- The delivery ledger kept in each message's own row, as columns, instead of a table beside
-- `messages` (a second row, its key and the foreign key checked, and a join per reply on every
-- import). `delivery` stays as a view with the table's columns, so what reads the ledger reads
-- it as before; what changes it updates `messages`. Done by `ledger_in_rows` below.
"#,
    r#"
-- The messages whose META names a consent id (`Consent-ID`, `Original-Consent-ID`): what
-- following a consent id from one thread reads (see store/consent.rs), instead of every
-- message. SQLite keeps it from the `meta` column itself, so it never disagrees with the
-- messages; a message naming no consent id costs one look at its META as it is stored.
CREATE INDEX IF NOT EXISTS messages_consent_ids ON messages(seq)
    WHERE instr(meta, 'Consent-ID') > 0;
"#,
    r#"
-- Ids kept in one case: ULIDs upper case, UUIDs lower case, whatever case the envelope wrote
-- them in (its text keeps its spelling). Done by store/schema/m10_ids_in_one_case.rs. And a message addressed to
-- the operator is theirs to answer only when it asks for one (`ledger_state` below).
--
-- When a stored message's signature arrived, if after the message (a signed copy of an
-- unsigned one, see store/conflict.rs): a REVOKE counts when its key was trusted before its
-- signature arrived (store/consent.rs). NULL: it came signed. (Added by `ids_in_one_case`
-- below: a database whose version was set back by hand may have the column already.)
"#,
    r#"
-- CHECK constraints as comparisons instead of IN lists, which SQLite checks by building a
-- temporary B-tree for every row written. Done by store/schema/m11_checks_as_comparisons.rs.
"#,
    r#"
-- The full-text index in a file of its own beside the database, written by another connection
-- (store/search_index.rs): made again there from the messages when first opened.
DROP TRIGGER IF EXISTS messages_fts_delete;
DROP TRIGGER IF EXISTS messages_fts_update;
DROP TABLE IF EXISTS messages_fts;
-- Which database the index is of: an index made for another (a file copied over this one) is
-- made again.
CREATE TABLE IF NOT EXISTS search_source (id TEXT NOT NULL);
INSERT INTO search_source (id)
    SELECT lower(hex(randomblob(16))) WHERE NOT EXISTS (SELECT 1 FROM search_source);
-- Messages removed, or whose indexed text changed, since the index last caught up: noted in
-- the transaction that changes them, applied to the index by the next catching up.
CREATE TABLE IF NOT EXISTS search_changes (
    n   INTEGER PRIMARY KEY AUTOINCREMENT,
    seq INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS search_change_delete AFTER DELETE ON messages BEGIN
    INSERT INTO search_changes (seq) VALUES (old.seq);
END;
CREATE TRIGGER IF NOT EXISTS search_change_update AFTER UPDATE OF body, context, sender, recipient ON messages
WHEN old.body IS NOT new.body OR old.context IS NOT new.context
    OR old.sender IS NOT new.sender OR old.recipient IS NOT new.recipient
BEGIN
    INSERT INTO search_changes (seq) VALUES (old.seq);
END;
"#,
    r#"
-- The v1.0 digest unique only where there is one: an index of the messages that have one,
-- instead of one with an entry for every message. Done by store/schema/m13_digest_where_present.rs.
"#,
    r#"
-- What the desk observed, not what a model wrote: a message's ledger time (`sent_at`) is when
-- it arrived here (received) or left here (composed: copied or delivered), no longer the time
-- inside its id. Queue items the operator settled by hand (`settled_at`, `settled_how`: done
-- or dismissed), threads they archived (`archived_at`), and whether the message a received
-- envelope answers was inferred by the desk (`parent_inferred`: a v1.0 reply placed by its
-- session) rather than named by it. Done by `observed` below.
"#,
    r#"
-- A POLL goes to each of its targets' windows, one copy each: one row per target it was
-- carried to (relayed, or composed here and copied), when and how (see store/fanout.rs). A
-- received POLL counts as relayed (`relayed_at`) once every target has one. The target as the
-- POLL writes it, and as addresses are compared (`target_key`): whether a window had an
-- envelope before (its preamble) reads these rows too. (IF NOT EXISTS: a database whose
-- version was set back by hand may hold them already.)
CREATE TABLE IF NOT EXISTS message_relays (
    seq          INTEGER NOT NULL REFERENCES messages(seq) ON DELETE CASCADE,
    target_key   TEXT NOT NULL,
    target       TEXT NOT NULL,
    relayed_at   TEXT NOT NULL,
    relay_method TEXT NOT NULL,
    PRIMARY KEY (seq, target_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS message_relays_target ON message_relays(target_key);
"#,
];

/// Work a migration needs beyond its SQL, by the version it produces.
fn after(version: i64, tx: &Transaction) -> Result<(), StoreError> {
    match version {
        6 => texts_once(tx),
        7 => lean_rows(tx),
        8 => ledger_in_rows(tx),
        10 => ids_in_one_case(tx),
        11 => m11_checks_as_comparisons::rewrite(tx),
        DIGEST_WHERE_PRESENT => m13_digest_where_present::where_present(tx),
        OBSERVED => observed(tx),
        _ => Ok(()),
    }
}

/// Whether `table` has a column `column`.
fn has_column(tx: &Transaction, table: &str, column: &str) -> Result<bool, StoreError> {
    let n: i64 = tx.query_row(
        "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2",
        [table, column],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

/// Whether `name` is a table (not a view, nor absent).
fn is_table(tx: &Transaction, name: &str) -> Result<bool, StoreError> {
    let n: i64 = tx.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
        [name],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

/// Version 10: when a later signature arrived, ids in one case (see `m10_ids_in_one_case`), and "addressed
/// to me" only for what asks for an answer (see [`ledger_state`]).
fn ids_in_one_case(tx: &Transaction) -> Result<(), StoreError> {
    if !has_column(tx, "messages", "signed_at")? {
        tx.execute_batch("ALTER TABLE messages ADD COLUMN signed_at TEXT;")?;
    }
    set_ledger_rule(tx, &ledger_trigger_10(), LEDGER_STATE_10)?;
    m10_ids_in_one_case::normalize(tx)
}

/// Version 6: each text once, and the input compressed.
fn texts_once(tx: &Transaction) -> Result<(), StoreError> {
    if !has_column(tx, "messages", "raw_prefix")? {
        tx.execute_batch(
            "ALTER TABLE messages RENAME COLUMN canonical TO canonical_full;
             ALTER TABLE messages ADD COLUMN canonical TEXT;
             ALTER TABLE messages ADD COLUMN raw_prefix INTEGER;
             ALTER TABLE messages ADD COLUMN raw_suffix INTEGER;",
        )?;
        super::texts::rewrite_texts(tx)?;
    }
    if !has_column(tx, "paste_pieces", "zstd")? {
        // 0: the bytes as they are; 1: compressed with zstd.
        tx.execute_batch("ALTER TABLE paste_pieces ADD COLUMN zstd INTEGER NOT NULL DEFAULT 0")?;
    }
    super::pieces::compress_stored(tx)
}

/// The full-text index's triggers, as version 7 writes them: `participants` is generated from
/// `sender` and `recipient`, so an update of those re-indexes it.
const FTS_TRIGGERS: &str = "
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, body, context, participants)
    VALUES ('delete', old.seq, old.body, old.context, old.participants);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF body, context, sender, recipient ON messages
BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, body, context, participants)
    VALUES ('delete', old.seq, old.body, old.context, old.participants);
    INSERT INTO messages_fts(rowid, body, context, participants)
    VALUES (new.seq, new.body, new.context, new.participants);
END;";

/// Version 7: leaner message rows. `headers` in the tight form of `texts::encode_headers`,
/// the thread's id left to its column, and `meta` in that of `meta_column`; `participants` (\"sender recipient\", for search) a
/// generated column instead of a stored copy; `updated_at` NULL until a row changes after it
/// was stored, instead of a copy of `received_at`. Each step checks whether it is done, as a
/// database whose version was set back by hand may have had it.
fn lean_rows(tx: &Transaction) -> Result<(), StoreError> {
    if is_table(tx, "delivery")? {
        tx.execute_batch(
            "DROP INDEX IF EXISTS delivery_thread;
             DROP INDEX IF EXISTS delivery_thread_state;
             CREATE INDEX delivery_thread ON delivery(thread_id, state, sent_at);",
        )?;
    }
    super::texts::encode_all_headers(tx)?;
    super::meta_column::encode_stored(tx)?;
    let generated: i64 = tx.query_row(
        "SELECT count(*) FROM pragma_table_xinfo('messages')
         WHERE name = 'participants' AND hidden IN (2, 3)",
        [],
        |r| r.get(0),
    )?;
    if generated == 0 {
        // A row whose stored copy differs (edited by hand) was indexed under that copy: the
        // index is then built again from the generated column.
        let differing: i64 = tx.query_row(
            "SELECT count(*) FROM messages WHERE participants IS NOT sender || ' ' || recipient",
            [],
            |r| r.get(0),
        )?;
        tx.execute_batch(&format!(
            "DROP TRIGGER IF EXISTS messages_fts_delete;
             DROP TRIGGER IF EXISTS messages_fts_update;
             ALTER TABLE messages DROP COLUMN participants;
             ALTER TABLE messages ADD COLUMN participants TEXT
                 GENERATED ALWAYS AS (sender || ' ' || recipient) VIRTUAL;
             {FTS_TRIGGERS}"
        ))?;
        if differing > 0 {
            tx.execute_batch("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")?;
        }
    }
    let required: i64 = tx.query_row(
        "SELECT count(*) FROM pragma_table_info('messages')
         WHERE name = 'updated_at' AND \"notnull\" = 1",
        [],
        |r| r.get(0),
    )?;
    if required > 0 {
        tx.execute_batch(
            "ALTER TABLE messages RENAME COLUMN updated_at TO updated_before;
             ALTER TABLE messages ADD COLUMN updated_at TEXT;
             UPDATE messages SET updated_at = updated_before
                 WHERE updated_before IS NOT received_at;
             ALTER TABLE messages DROP COLUMN updated_before;",
        )?;
    }
    Ok(())
}

/// Which of the queue's sections a message is in, from its ledger columns (NULL: none): the
/// rule `ledger_state` is kept by. Received for someone else and not copied for them yet,
/// addressed to the operator and not answered by them, or waiting for replies.
/// `delivery::LedgerColumns::state` is the same rule for a message being stored.
/// A message addressed to the operator is theirs to answer only when it asks for an answer
/// (`Intent::expects_response`, as the `intent` column holds it; one without an intent may
/// ask): a RESPOND, ACK or CLOSE for them is read, not answered. An item the operator
/// settled by hand (done, or dismissed) is in no section.
pub(crate) fn ledger_state() -> String {
    format!(
        "CASE
    WHEN settled_at IS NOT NULL THEN NULL
    WHEN direction = 'received' AND to_me = 0 AND relayed_at IS NULL THEN 'to_relay'
    WHEN to_me = 1 AND answered_at IS NULL
        AND (intent IS NULL OR intent IN ({asking}))
        THEN 'to_me'
    WHEN awaiting_from IS NOT NULL THEN 'awaiting' END",
        asking = asking_intents()
    )
}

/// The intents that ask for an answer, as SQL strings: written from
/// [`Intent::expects_response`], so that an intent that comes to ask for one is counted by
/// the queue without a migration (see [`keep_ledger_rule`]).
fn asking_intents() -> String {
    let asking: Vec<String> = (Intent::CORE.iter())
        .filter(|i| i.expects_response())
        .map(|i| format!("'{}'", i.as_str()))
        .collect();
    asking.join(", ")
}

/// [`ledger_state`] before items could be settled by hand: what the migrations to versions 8
/// and 10 keep the state by (the columns that settle an item came with version 14).
const LEDGER_STATE_10: &str = "CASE
    WHEN direction = 'received' AND to_me = 0 AND relayed_at IS NULL THEN 'to_relay'
    WHEN to_me = 1 AND answered_at IS NULL
        AND (intent IS NULL OR intent IN ('REQUEST', 'POLL', 'ESCALATE', 'HANDOFF'))
        THEN 'to_me'
    WHEN awaiting_from IS NOT NULL THEN 'awaiting' END";

/// The trigger that keeps `ledger_state` by [`LEDGER_STATE_10`] (versions 8 to 13).
fn ledger_trigger_10() -> String {
    format!(
        "CREATE TRIGGER IF NOT EXISTS messages_ledger_state
         AFTER UPDATE OF direction, to_me, relayed_at, answered_at, awaiting_from ON messages
         BEGIN
             UPDATE messages SET ledger_state = {LEDGER_STATE_10}
             WHERE seq = new.seq AND ledger_state IS NOT {LEDGER_STATE_10};
         END;"
    )
}

/// The trigger that keeps `ledger_state` when the columns it follows change.
fn ledger_trigger() -> String {
    format!(
        "CREATE TRIGGER IF NOT EXISTS messages_ledger_state
         AFTER UPDATE OF direction, to_me, relayed_at, answered_at, awaiting_from, settled_at
         ON messages
         BEGIN
             UPDATE messages SET ledger_state = {rule}
             WHERE seq = new.seq AND ledger_state IS NOT {rule};
         END;",
        rule = ledger_state()
    )
}

/// Makes the trigger and the stored `ledger_state` follow [`ledger_state`] as this build
/// writes it, when the database's were written by a build whose intents asked differently:
/// the one place where which intents ask for an answer reaches the schema, so that changing
/// [`Intent::expects_response`] needs no migration written by hand.
fn keep_ledger_rule(conn: &Connection, timeout: Duration, path: &Path) -> Result<(), StoreError> {
    let rule = ledger_state();
    let stored = || -> Result<Option<String>, StoreError> {
        Ok(conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'messages_ledger_state'",
                [],
                |r| r.get(0),
            )
            .optional()?)
    };
    if stored()?.is_some_and(|sql: String| sql.contains(&rule)) {
        return Ok(());
    }
    let tx = super::retry_busy(conn, timeout, path, || {
        Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
    })?;
    set_ledger_rule(&tx, &ledger_trigger(), &rule)?;
    tx.commit()?;
    Ok(())
}

/// Replaces the trigger that keeps `ledger_state` with `trigger`, and brings every row's
/// state to `rule`, the trigger's own.
fn set_ledger_rule(tx: &Transaction, trigger: &str, rule: &str) -> Result<(), StoreError> {
    tx.execute_batch(&format!(
        "DROP TRIGGER IF EXISTS messages_ledger_state;
         {trigger}
         UPDATE messages SET ledger_state = {rule}
         WHERE ledger_state IS NOT {rule};"
    ))?;
    Ok(())
}

/// Version 14: the ledger's time is the time observed here, items can be settled by hand and
/// threads archived. Each step checks whether it is done, as a database whose version was set
/// back by hand may have had it.
fn observed(tx: &Transaction) -> Result<(), StoreError> {
    // A composed message's row is filed as it is copied; one filed and copied later (a poll's
    // close) takes its time again when copied (`Store::mark_copied`).
    tx.execute_batch(
        "UPDATE messages SET sent_at = received_at WHERE sent_at IS NOT received_at;",
    )?;
    if !has_column(tx, "messages", "settled_at")? {
        tx.execute_batch(
            "ALTER TABLE messages ADD COLUMN settled_at TEXT;
             ALTER TABLE messages ADD COLUMN settled_how TEXT;",
        )?;
    }
    if !has_column(tx, "threads", "archived_at")? {
        tx.execute_batch("ALTER TABLE threads ADD COLUMN archived_at TEXT;")?;
    }
    if !has_column(tx, "messages", "parent_inferred")? {
        // Stored before it was kept: a v1.0 envelope (stored with a digest) answering a
        // message had its place inferred from its session, unless it named its parent, which
        // only its text as received would tell; that rare case reads as inferred too.
        tx.execute_batch(
            "ALTER TABLE messages ADD COLUMN parent_inferred INTEGER NOT NULL DEFAULT 0;
             UPDATE messages SET parent_inferred = 1
             WHERE digest IS NOT NULL AND parent_id IS NOT NULL AND direction = 'received';",
        )?;
    }
    set_ledger_rule(tx, &ledger_trigger(), &ledger_state())
}

/// The ledger's columns of a message row. `ledger_state` is stored, not generated, so that an
/// index holding it answers the thread list's counts without reading the rows (SQLite reads the
/// row for a generated column); the `INSERT` that stores a message writes it and a trigger
/// keeps it when the columns it follows change.
const LEDGER_COLUMNS: &str = "
ALTER TABLE messages ADD COLUMN sent_at TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN recipient_key TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN to_me INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN relayed_at TEXT;
ALTER TABLE messages ADD COLUMN relay_method TEXT;
ALTER TABLE messages ADD COLUMN answered_at TEXT;
ALTER TABLE messages ADD COLUMN awaiting_from TEXT;
ALTER TABLE messages ADD COLUMN awaiting_needed INTEGER;
ALTER TABLE messages ADD COLUMN missing_parent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN ledger_state TEXT;";

/// The ledger as it reads once in the message rows: the view with the old table's columns,
/// and the indexes the queue and the thread list read.
const LEDGER_VIEW: &str = "
CREATE VIEW IF NOT EXISTS delivery AS
    SELECT seq, thread_id, sent_at, recipient_key, direction = 'received' AS received, to_me,
           relayed_at, relay_method, answered_at, awaiting_from, awaiting_needed,
           missing_parent, ledger_state AS state
    FROM messages;
-- The queue's sections, oldest first; replies whose parent never arrived.
CREATE INDEX IF NOT EXISTS messages_ledger ON messages(ledger_state, sent_at)
    WHERE ledger_state IS NOT NULL;
CREATE INDEX IF NOT EXISTS messages_missing ON messages(sent_at) WHERE missing_parent = 1;
CREATE INDEX IF NOT EXISTS messages_thread_missing ON messages(thread_id)
    WHERE missing_parent = 1;
-- What was carried to a recipient (relayed, or composed for it): whether a window had any
-- envelope before decides its preamble. Imported messages are not in it until relayed.
CREATE INDEX IF NOT EXISTS messages_carried ON messages(recipient_key)
    WHERE relayed_at IS NOT NULL OR direction = 'composed';
-- A thread's messages by ledger state and time: what the thread list counts and dates (one
-- seek per state), and what a thread's view reads (its rows, then sorted by arrival).
DROP INDEX IF EXISTS messages_thread;
CREATE INDEX messages_thread ON messages(thread_id, ledger_state, sent_at);";

/// Version 8: the delivery ledger in the message rows. Each step checks whether it is done, as
/// a database whose version was set back by hand may have had it.
fn ledger_in_rows(tx: &Transaction) -> Result<(), StoreError> {
    if !has_column(tx, "messages", "missing_parent")? {
        tx.execute_batch(LEDGER_COLUMNS)?;
    }
    if is_table(tx, "delivery")? {
        tx.execute_batch(
            "UPDATE messages SET (sent_at, recipient_key, to_me, relayed_at, relay_method,
                                  answered_at, awaiting_from, awaiting_needed, missing_parent) =
                (SELECT d.sent_at, d.recipient_key, d.to_me, d.relayed_at, d.relay_method,
                        d.answered_at, d.awaiting_from, d.awaiting_needed, d.missing_parent
                 FROM delivery d WHERE d.seq = messages.seq)
             WHERE seq IN (SELECT seq FROM delivery);
             DROP TABLE delivery;",
        )?;
    }
    // A message without a ledger row (none is written so, but a database edited by hand may
    // hold one) gets what the ledger said of messages stored before it was kept.
    tx.execute_batch(&format!(
        "UPDATE messages SET sent_at = received_at, recipient_key = lower(trim(recipient)),
             relayed_at = CASE WHEN direction = 'received' THEN received_at END,
             relay_method = CASE WHEN direction = 'received'
                 THEN 'an unrecorded way (before the ledger)' END
         WHERE sent_at = '';
         UPDATE messages SET ledger_state = {LEDGER_STATE_10}
         WHERE ledger_state IS NOT {LEDGER_STATE_10};
         {trigger}
         {LEDGER_VIEW}",
        trigger = ledger_trigger_10()
    ))?;
    // A `response:` reply's signable portion says `response:` since this version: a verdict
    // judged on `body:` before may not hold.
    super::keys::rejudge_all(tx)
}

/// The version after which the stored texts became edits (see `texts`); the tests write
/// databases as the versions before and at it did.
#[cfg(test)]
const TEXTS_VERSION: i64 = 6;

/// The last version whose migration frees much of the file: version 6 stored each text once,
/// 7 made rows leaner, 8 moved the ledger into the message rows, 12 moved the full-text index
/// to a file of its own. Migrating from before it, the freed pages are given back to the file
/// system afterwards.
const COMPACTING_VERSION: i64 = 12;

/// The version whose migration makes the digest unique where present (see `m13_digest_where_present`).
pub(super) const DIGEST_WHERE_PRESENT: i64 = 13;

/// The version from which the ledger's time is the time observed here, queue items can be
/// settled by hand and threads archived (see `observed`); a database before it, read without
/// migrating, has neither of the last two.
pub(super) const OBSERVED: i64 = 14;

/// The version from which a POLL is relayed per target (`message_relays`, see `fanout`); a
/// database before it, read without migrating, has no such records.
pub(super) const PER_TARGET: i64 = 15;

/// The version from which the full-text index is in a file of its own (see `search_index`);
/// a database before it, read without migrating, has it inside.
pub(super) const SEARCH_APART: i64 = 12;

/// The schema version this binary writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The oldest version this binary reads as it is, when it cannot migrate the database (the
/// file is read-only): version 11 only rewrote CHECK constraints and 13 made an index partial,
/// which reading never meets; before 12 the full-text index is read inside the database.
pub(super) const READABLE_FROM: i64 = 10;

/// Refuses a database written by a newer crosstalk.
pub(super) fn refuse_newer(conn: &Connection) -> Result<(), StoreError> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            found: current,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// Brings the database to [`SCHEMA_VERSION`], or refuses one that is newer; waits up to
/// `timeout` for another writer.
pub(super) fn migrate(conn: &Connection, timeout: Duration, path: &Path) -> Result<(), StoreError> {
    refuse_newer(conn)?;
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let tx = super::retry_busy(conn, timeout, path, || {
            Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
        })?;
        // Another process may have migrated while this one waited for the lock.
        let now: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if now > i as i64 {
            continue;
        }
        tx.execute_batch(sql)?;
        after(i as i64 + 1, &tx)?;
        tx.pragma_update(None, "user_version", i as i64 + 1)?;
        tx.commit()?;
    }
    keep_ledger_rule(conn, timeout, path)?;
    if current > 0 && current < COMPACTING_VERSION {
        // The freed pages are given back; only tidying up (another process may hold the
        // database, then the file keeps its size until a later VACUUM).
        let _ = conn.execute_batch("VACUUM");
    }
    Ok(())
}

/// Brings a fresh database to `version` exactly, as the binaries of that version made it.
#[cfg(test)]
pub(super) fn migrate_to(conn: &Connection, version: i64) {
    for (i, sql) in MIGRATIONS.iter().enumerate().take(version as usize) {
        let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate).unwrap();
        tx.execute_batch(sql).unwrap();
        after(i as i64 + 1, &tx).unwrap();
        tx.pragma_update(None, "user_version", i as i64 + 1)
            .unwrap();
        tx.commit().unwrap();
    }
}

#[cfg(test)]
mod tests;
