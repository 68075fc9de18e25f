//! Where a received message belongs and under which id: a v1.0 envelope's place
//! (`v10_place`) and moving a reply the desk placed (`placement`), ids in conflict, ids given
//! in place of invalid ones (`alias`, `fresh`), and parent cycles across imports.

pub(super) mod alias;
pub(super) mod conflict;
pub(super) mod cycle;
pub(super) mod fresh;
mod placement;
pub(super) mod v10_place;

pub use placement::MoveRefused;
