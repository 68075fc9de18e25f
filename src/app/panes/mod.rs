//! The browse screen's three panes and what they show: the thread list, the thread tree, the
//! inspector (with its attachments, conflicting versions and repairs), how they move and scroll,
//! where each region is, and where the app reopens.

pub mod attachment_rows;
pub(in crate::app) mod browse;
pub(in crate::app) mod in_view;
pub mod inspector;
pub mod layout;
pub(in crate::app) mod list_move;
pub(in crate::app) mod placement;
pub mod repairs;
pub mod resume;
pub mod thread_list;
pub mod thread_tree;
pub(in crate::app) mod versions;
