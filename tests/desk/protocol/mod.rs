//! The protocol's rules, pure: extraction from realistic and pathological pastes, the
//! canonical form, signatures against the rc1 vectors, and properties of reading, meaning,
//! carrying, awaiting, consent, personal data and polls.

mod awaiting_props;
mod carry_props;
mod consent_props;
mod consent_scope_props;
mod extract_edge_cases;
mod extract_fixtures;
mod meaning_props;
mod pii_props;
mod poll_props;
mod props;
mod reading_props;
mod robustness;
mod signatures;
