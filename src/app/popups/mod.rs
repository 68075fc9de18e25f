//! The popups over the browse screen, each with its own keys: the paste preview and paste box,
//! search, drafts, the read-and-scrolled ones (help, `:messages`, `K`), erasing, the poll panel.
//! `popup` holds the `Popup` enum and sends each popup's keys to its room.

pub(in crate::app) mod drafts;
pub mod erase;
pub mod help;
pub mod messages;
pub(in crate::app) mod paste;
pub mod poll_panel;
pub mod popup;
pub(in crate::app) mod refit;
pub(in crate::app) mod scrolled;
pub(in crate::app) mod search;
