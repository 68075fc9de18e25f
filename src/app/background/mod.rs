//! What happens while the operator is elsewhere: the clipboard watch and what it brought, where
//! an import lands, other processes' writes, and writes the database could not take yet.

pub mod arrival;
pub mod landing;
pub mod pending;
pub(in crate::app) mod refresh;
pub mod watch;
