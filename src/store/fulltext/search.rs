//! Full-text search over bodies, contexts and participants.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use crate::store::{Store, StoreError};

/// How many matches are ranked by relevance at most. BM25 costs about a microsecond per match
/// (each needs its document's length), so a word found in nearly every message (`the`: 95 000
/// matches in a history of 100 000) took 80 ms to rank in full, and grows with the history.
/// Such a word says almost nothing about relevance anyway: BM25 gives a term in more than half
/// the documents a near-zero weight, so its ranking is little more than "shortest messages
/// first". Above this many matches the best of the newest this many are returned instead —
/// recent history, still ranked, in a bounded 5 ms or so — and the result says so, so that
/// the operator can add a word to narrow the search. Queries that are specific enough to be
/// useful (a few thousand matches or fewer) are ranked exactly as before.
pub const RANKED_MATCHES: usize = 5_000;

/// How many different words a search looks for at most. Each word adds a pass over its
/// matches (and a term to rank): a query is bounded by this many passes whatever its length.
/// A word given twice is looked for once.
pub const MAX_SEARCH_WORDS: usize = 32;

/// The shortest last word a search as typed looks for as a prefix. Without a prefix index
/// FTS5 merges the lists of every word a prefix begins: one letter begins most words of a
/// history (about 170 ms to count and rank at 100 000 messages, on every key press), two
/// letters about half that, three a few milliseconds. A single letter is looked for as a word.
pub(crate) const MIN_PREFIX_CHARS: usize = 2;

/// A search result.
#[derive(Debug, Clone, Serialize)]
pub struct SearchHit {
    /// The message found.
    pub message: String,
    /// Its thread.
    pub thread: String,
    /// The message's context.
    pub context: Option<String>,
    /// Matching text with the matches in `[` `]`.
    pub snippet: String,
    /// BM25 rank (lower is better), among hits of its kind.
    pub rank: f64,
    /// When the text found is a conflicting version of the message (another text pasted
    /// under its id, kept beside it), which one: 1 for the first. `None`: the stored text.
    pub version: Option<usize>,
}

/// The results of one search, with what was ranked to find them.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResults {
    /// The best matches, best first.
    pub hits: Vec<SearchHit>,
    /// How many messages match.
    pub matches: usize,
    /// `Some(n)` when more messages matched than are ranked ([`RANKED_MATCHES`]): the hits
    /// are the best of the newest `n` matches.
    pub ranked_newest: Option<usize>,
}

impl Store {
    /// The best `limit` matches (see [`Store::search_results`]).
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, StoreError> {
        Ok(self.search_results(query, limit)?.hits)
    }

    /// Full-text search over bodies, contexts and participants, best matches first. Words
    /// are matched as given (all must occur); FTS syntax in the query is not interpreted, so
    /// any text is a valid query. When more than [`RANKED_MATCHES`] messages match, only the
    /// newest that many are ranked, and the results say so. A word given more than once is
    /// looked for once; more than [`MAX_SEARCH_WORDS`] different words are refused.
    pub fn search_results(&self, query: &str, limit: usize) -> Result<SearchResults, StoreError> {
        self.search_fts(terms(query, false)?, limit)
    }

    /// A search while the query is being typed (the app's `/`): as
    /// [`Store::search_results`], but the last word, when nothing follows it and it has at
    /// least [`MIN_PREFIX_CHARS`] characters, also matches the words it begins, so that
    /// `hello wor` finds `hello world` before the word is finished.
    pub fn search_as_typed(&self, query: &str, limit: usize) -> Result<SearchResults, StoreError> {
        self.search_fts(terms(query, true)?, limit)
    }

    /// Counts and ranks the matches of the quoted FTS5 terms `fts`.
    fn search_fts(&self, fts: Vec<String>, limit: usize) -> Result<SearchResults, StoreError> {
        if fts.is_empty() {
            return Ok(SearchResults {
                hits: Vec::new(),
                matches: 0,
                ranked_newest: None,
            });
        }
        let fts = fts.join(" ");
        // Others' writes (another process, a path that does not search) are indexed first.
        self.catch_up_search();
        let (s, conn) = self.searched();

        // Counting walks the word lists only (tens of nanoseconds a match).
        let matches: i64 = conn
            .prepare_cached(&format!(
                "SELECT count(*) FROM {s}.messages_fts WHERE messages_fts MATCH ?1"
            ))?
            .query_row([&fts], |r| r.get(0))?;
        let matches = usize::try_from(matches).unwrap_or(0);
        // The oldest match still ranked: FTS5 reads matches newest first from the index and
        // stops there.
        let (oldest, ranked_newest) = if matches > RANKED_MATCHES {
            let oldest: Option<i64> = conn
                .prepare_cached(&format!(
                    "SELECT rowid FROM {s}.messages_fts WHERE messages_fts MATCH ?1
                     ORDER BY rowid DESC LIMIT 1 OFFSET ?2"
                ))?
                .query_row(params![fts, RANKED_MATCHES as i64 - 1], |r| r.get(0))
                .optional()?;
            (oldest.unwrap_or(0), Some(RANKED_MATCHES))
        } else {
            (0, None)
        };
        // A hit whose message is gone (removed since the index last caught up) is left out
        // by the join.
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT m.seq, m.id, m.thread_id, m.context, bm25(messages_fts)
             FROM {s}.messages_fts JOIN main.messages m ON m.seq = messages_fts.rowid
             WHERE messages_fts MATCH ?1 AND messages_fts.rowid >= ?2
             ORDER BY bm25(messages_fts) LIMIT ?3"
        ))?;
        let rows = stmt.query_map(params![fts, oldest, limit as i64], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                SearchHit {
                    message: r.get(1)?,
                    thread: r.get(2)?,
                    context: r.get(3)?,
                    snippet: String::new(),
                    rank: r.get(4)?,
                    version: None,
                },
            ))
        })?;
        let found: Vec<(i64, SearchHit)> = rows.collect::<Result<_, _>>()?;
        let mut snippets = self.snippets(&fts, found.iter().map(|(seq, _)| *seq))?;
        let mut hits: Vec<SearchHit> = found
            .into_iter()
            .map(|(seq, mut hit)| {
                hit.snippet = snippets.remove(&seq).unwrap_or_default();
                hit
            })
            .collect();
        // The texts of conflicting versions, after the stored texts: they are found too,
        // marked as what they are.
        let (versions, version_matches) =
            self.version_hits(&fts, limit.saturating_sub(hits.len()))?;
        hits.extend(versions);
        Ok(SearchResults {
            hits,
            matches: matches + version_matches,
            ranked_newest,
        })
    }

    /// Drops the conflicting versions' table in memory (see [`Store::version_hits`]), so no
    /// erased text stays in this process's memory; the next search makes it again.
    pub(in crate::store) fn forget_version_search(&self) {
        if let Some(index) = self.index.get() {
            let conn = index.conn.as_ref().unwrap_or(&self.conn);
            let _ = conn.execute_batch("DROP TABLE IF EXISTS temp.version_search");
        }
        self.versions_searched.set((0, 0));
    }

    /// The best `limit` conflicting versions matching the FTS5 query `fts`, and how many
    /// match. Versions are few (a text pasted under an id stored with another), so they are
    /// searched in a table in memory, brought up to the stored versions at each search (made
    /// again when versions went away: an erasure).
    fn version_hits(&self, fts: &str, limit: usize) -> Result<(Vec<SearchHit>, usize), StoreError> {
        let (_, conn) = self.searched();
        let (newest, count): (i64, i64) = conn
            .prepare_cached("SELECT coalesce(max(seq), 0), count(*) FROM main.message_versions")?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        if count == 0 {
            return Ok((Vec::new(), 0));
        }
        let (through, held) = self.versions_searched.get();
        if newest < through || count < held || through == 0 {
            conn.execute_batch(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.version_search USING fts5(
                     body, context, tokenize = 'unicode61'
                 );
                 DELETE FROM temp.version_search;",
            )?;
            self.versions_searched.set((0, 0));
        }
        let (through, _) = self.versions_searched.get();
        if newest > through {
            let texts: Vec<(i64, String)> = conn
                .prepare_cached("SELECT seq, canonical FROM main.message_versions WHERE seq > ?1")?
                .query_map([through], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()?;
            let mut add = conn.prepare_cached(
                "INSERT INTO temp.version_search (rowid, body, context) VALUES (?1, ?2, ?3)",
            )?;
            for (seq, canonical) in &texts {
                let read =
                    crate::protocol::extract(canonical, &crate::protocol::Options::default());
                let env = read.envelopes.first().map(|p| &p.envelope);
                add.execute(params![
                    seq,
                    env.and_then(|e| e.body.as_deref()).unwrap_or(canonical),
                    env.and_then(|e| e.context())
                ])?;
            }
            self.versions_searched.set((newest, count));
        }
        let matches: i64 = conn
            .prepare_cached(
                "SELECT count(*) FROM temp.version_search s
                 JOIN main.message_versions v ON v.seq = s.rowid
                 WHERE version_search MATCH ?1",
            )?
            .query_row([fts], |r| r.get(0))?;
        let hits = conn
            .prepare_cached(
                "SELECT v.message_id, m.thread_id, m.context,
                        snippet(version_search, -1, '[', ']', '…', 12), bm25(version_search),
                        (SELECT count(*) FROM main.message_versions o
                          WHERE o.message_id = v.message_id AND o.seq <= v.seq)
                 FROM temp.version_search s
                 JOIN main.message_versions v ON v.seq = s.rowid
                 JOIN main.messages m ON m.id = v.message_id
                 WHERE version_search MATCH ?1
                 ORDER BY bm25(version_search) LIMIT ?2",
            )?
            .query_map(params![fts, limit as i64], |r| {
                Ok(SearchHit {
                    message: r.get(0)?,
                    thread: r.get(1)?,
                    context: r.get(2)?,
                    snippet: r.get(3)?,
                    rank: r.get(4)?,
                    version: Some(r.get::<_, i64>(5)? as usize),
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok((hits, usize::try_from(matches).unwrap_or(0)))
    }

    /// The snippets of messages `seqs` for the FTS5 query `fts`: the matching text with the
    /// matches in `[` `]`. The index holds no text, so FTS5 makes them from a table in memory
    /// holding only these messages (a page of hits), as it would from a table holding all.
    fn snippets(
        &self,
        fts: &str,
        seqs: impl Iterator<Item = i64>,
    ) -> Result<std::collections::HashMap<i64, String>, StoreError> {
        let (_, conn) = self.searched();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_snippets USING fts5(
                 body, context, participants, tokenize = 'unicode61'
             );
             DELETE FROM temp.search_snippets;",
        )?;
        let mut add = conn.prepare_cached(
            "INSERT INTO temp.search_snippets (rowid, body, context, participants)
             SELECT seq, body, context, participants FROM main.messages WHERE seq = ?1",
        )?;
        for seq in seqs {
            add.execute([seq])?;
        }
        let mut stmt = conn.prepare_cached(
            "SELECT rowid, snippet(search_snippets, -1, '[', ']', '…', 12)
             FROM temp.search_snippets WHERE search_snippets MATCH ?1",
        )?;
        let snippets = stmt
            .query_map([fts], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        conn.execute_batch("DELETE FROM temp.search_snippets")?;
        Ok(snippets)
    }
}

/// The FTS5 query for `query`: each distinct word, quoted (so that no FTS syntax is
/// interpreted). Words are compared as the index compares them, ignoring case, so `Plan plan`
/// is one term: a term repeated N times costs FTS5 N passes over the same matches. With
/// `prefix_last`, the last word (see [`Store::search_as_typed`]) is a prefix: FTS5's `*` after
/// the closing quote, so the word itself stays quoted.
fn terms(query: &str, prefix_last: bool) -> Result<Vec<String>, StoreError> {
    let last = query.split_whitespace().next_back().filter(|w| {
        prefix_last
            && !query.ends_with(char::is_whitespace)
            && w.chars().count() >= MIN_PREFIX_CHARS
    });
    let mut seen = std::collections::HashSet::new();
    let mut words: Vec<String> = query
        .split_whitespace()
        .filter(|w| seen.insert(w.to_lowercase()))
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect();
    if let Some(w) = last {
        // The last word, unless it repeats an earlier one, is the last term.
        let quoted = format!("\"{}\"", w.replace('"', "\"\""));
        if let Some(t) = words
            .last_mut()
            .filter(|t| t.to_lowercase() == quoted.to_lowercase())
        {
            t.push_str(" *");
        }
    }
    if words.len() > MAX_SEARCH_WORDS {
        return Err(StoreError::TooManyWords {
            words: words.len(),
            max: MAX_SEARCH_WORDS,
        });
    }
    Ok(words)
}
