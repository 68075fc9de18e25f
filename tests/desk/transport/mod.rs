//! The transports' properties: mail out and back (attachments, HTML, threading headers) and
//! the clipboard watch's decisions over any sequence of copies.

mod mail_props;
mod watch_props;
