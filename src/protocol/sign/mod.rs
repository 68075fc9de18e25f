//! Signatures and keys: signing and verifying both `sig:` forms (`signature`), the key
//! formats people paste (`keys`, `did_key`), and the trust rules over announced keys
//! (`trust`).

pub mod did_key;
pub mod keys;
pub mod signature;
pub mod trust;
