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

pub use browse::{Draft, DraftSave, DraftTaken, ThreadRow};
pub use lookup::{IdMatches, MessageLabel};
pub use paste_text::PasteSummary;
pub use query::{StoredMessage, ThreadSummary, ThreadView};
pub(crate) use texts::envelope_columns;
pub use thread_page::{ThreadKey, ThreadPage};
pub use tree::{ThreadOutline, TreeRow};
