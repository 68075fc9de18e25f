//! Reading the history back: messages and threads (`query`), the thread list a page at a time,
//! a thread's tree, the screens' own reads (`browse`, `lookup`), a paste as text, the columns
//! texts and META blocks are kept in (`texts`, `meta_column`), the personal-data badge's SQL
//! function (`pii`) and noticing other writers (`changes`).

mod browse;
mod changes;
mod lookup;
pub(super) mod meta_column;
pub(super) mod paste_text;
pub(super) mod pii;
pub(super) mod query;
pub(super) mod texts;
mod thread_page;
mod tree;

pub use browse::Draft;
pub(crate) use browse::{DraftSave, DraftTaken, ThreadRow};
pub(crate) use lookup::MessageLabel;
pub(crate) use query::ThreadSummary;
pub use query::{StoredMessage, ThreadView};
pub(crate) use texts::envelope_columns;
pub(crate) use thread_page::{ThreadKey, ThreadPage};
pub(crate) use tree::ThreadOutline;
#[cfg(test)]
pub(crate) use tree::TreeRow;
