//! TEMPORARY
use crate::protocol::{Envelope, Parsed};
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SigError {
    Unsigned,
    Malformed(String),
    Unsupported(String),
    Mismatch,
}
impl std::fmt::Display for SigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}
pub fn parse_sig(_v: &str) -> Result<(), SigError> {
    Ok(())
}
#[derive(Debug, Clone, Copy)]
pub enum SigFormat {
    Ed25519,
    Jws,
}
#[derive(Debug, Clone, Copy)]
pub enum Matched {
    AsReceived,
    Canonical,
}
pub fn sign_envelope(_e: &mut Envelope, _k: &ed25519_dalek::SigningKey, _f: SigFormat, _p: &str) {}
pub fn verify_parsed(
    _p: &Parsed,
    _i: &str,
    _k: &ed25519_dalek::VerifyingKey,
) -> Result<Matched, SigError> {
    Err(SigError::Mismatch)
}
