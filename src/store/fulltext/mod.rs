//! Full-text search: the queries (`search`) and the index they read, in a file of its own beside
//! the database (`search_index`).

mod index_of;
mod search;
pub(super) mod search_index;

pub(in crate::store) use index_of::SearchIndex;
pub(crate) use search::SearchHit;
pub use search::{MAX_SEARCH_WORDS, RANKED_MATCHES, SearchResults};
