//! Writing: the composer (its form, layout, boxes and whole-box steps), new envelopes and
//! replies, attaching files, personal data, signing, ERROR replies and new conversations, and
//! copying what was written; the readline keys and the undo by edit group every text box
//! shares.

pub(in crate::app) mod attach;
pub(in crate::app) mod compose;
pub mod composer;
pub mod composer_layout;
pub mod composer_steps;
pub(in crate::app) mod conversation;
pub mod copy_view;
pub mod editor_rows;
pub mod error_reply;
pub mod privacy;
pub(crate) mod readline;
pub mod signing;
pub mod text_box;
