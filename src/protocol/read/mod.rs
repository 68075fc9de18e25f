//! Reading pasted text: finding envelopes in it (`scan`), reading each one (`parse`, and the
//! one-pass `quick` reader for the plainest shape), the lines and line ends they are read
//! from, and the repairs of what chat windows do to them (`collapsed`).

pub(super) mod borrowed;
pub(super) mod collapsed;
#[cfg(test)]
mod fast_props;
pub mod line_ends;
pub(super) mod lines;
pub(super) mod parse;
pub(super) mod quick;
pub(super) mod scan;
mod spare;
