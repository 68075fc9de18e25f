//! Transports: bytes from outside in, envelopes out. Each ends in the same store import path
//! as a paste or `crosstalk import` (the raw input kept first), so an envelope that arrives
//! over a wire or in a mail is stored exactly as one pasted by hand would be.
//!
//! How an envelope goes out to its recipient — a chat window through a clipboard, or a peer
//! straight — is one seam, `route`, chosen by the recipient's contact.
//!
//! The async server lives in `http` alone: the app and the other commands stay synchronous
//! and reach the network only through the blocking client.

pub mod file;
pub mod flowed;
pub mod http;
pub mod mail;
pub mod mail_html;
pub mod mail_import;
pub mod mail_out;
pub mod mail_parts;
pub mod mail_sniff;
pub mod mail_utf8;
pub mod regular_file;
pub mod route;
pub mod spool;
