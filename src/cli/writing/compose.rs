//! `new` and `error`: writing envelopes.

use std::io::Write;
use std::path::Path;

use crate::cli::output::Stdout;
use crate::cli::reading::parse_cmd::report;
use crate::cli::{EXIT_INVALID, Failure, input};
use crate::ids::IdGenerator;
use crate::protocol::error_envelope::{ERROR_CODES, error_envelope, is_error_code};
use crate::protocol::{self, Envelope, Options};

/// Arguments of `crosstalk new`.
#[derive(Debug, clap::Args)]
pub(crate) struct NewArgs {
    /// Sender: a name (CLAUDE) or an address (claude://session/abc).
    #[arg(long)]
    pub from: String,
    /// Recipient: a name or an address.
    #[arg(long)]
    pub to: String,
    /// Intent: REQUEST, RESPOND, POLL, … (legacy names are accepted with a warning).
    #[arg(long)]
    pub intent: String,
    /// What the conversation is about.
    #[arg(long)]
    pub context: String,
    /// Thread to join; a new thread is started when absent.
    #[arg(long)]
    pub thread: Option<String>,
    /// Message this one replies to.
    #[arg(long)]
    pub parent: Option<String>,
    /// The body text, or `-` to read it from standard input.
    #[arg(long)]
    pub body: Option<String>,
    /// The `user` header [default: `[compose] user` of the config, then $USER].
    #[arg(long)]
    pub user: Option<String>,
    /// The `session` header [default: the current UTC hour and a random id].
    #[arg(long)]
    pub session: Option<String>,
}

/// Accepts only codes from the taxonomy, listing them when another is given.
pub(crate) fn parse_error_code(s: &str) -> Result<String, String> {
    let up = s.to_ascii_uppercase();
    if is_error_code(&up) {
        Ok(up)
    } else {
        let codes: Vec<&str> = ERROR_CODES.iter().map(|(c, _)| *c).collect();
        Err(format!(
            "`{s}` is not an error code; use one of {}",
            codes.join(", ")
        ))
    }
}

/// `crosstalk new`: a fresh envelope in canonical form, checked before it is printed.
pub(crate) fn new(
    opts: &Options,
    a: NewArgs,
    configured_user: Option<&str>,
) -> Result<u8, Failure> {
    for (option, value) in [
        ("--from", Some(&a.from)),
        ("--to", Some(&a.to)),
        ("--intent", Some(&a.intent)),
        ("--context", Some(&a.context)),
        ("--thread", a.thread.as_ref()),
        ("--parent", a.parent.as_ref()),
        ("--user", a.user.as_ref()),
        ("--session", a.session.as_ref()),
    ] {
        if let Some(v) = value {
            input::header_arg(option, v)?;
        }
    }
    let body = input::body(a.body.as_deref())?;
    let ids = IdGenerator::new();
    let mut env = Envelope::new(a.from, a.to);
    env.set_header(
        "user",
        crate::config::user(a.user.as_deref(), configured_user),
    );
    env.set_header("session", a.session.unwrap_or_else(crate::ids::new_session));
    let message = ids.next_id();
    env.set_header("thread", a.thread.unwrap_or_else(|| message.clone()));
    if let Some(p) = a.parent {
        env.set_header("parent", p);
    }
    env.set_header("message", message);
    env.set_header("context", a.context);
    env.set_header("intent", a.intent);
    env.body = Some(body);
    env.sig = Some("none".into());
    emit(&[env], "<new>", opts)
}

/// Prints envelopes in canonical form after checking each by parsing it back; diagnostics go
/// to standard error and any error makes the exit status 1.
fn emit(envs: &[Envelope], name: &str, opts: &Options) -> Result<u8, Failure> {
    let mut text = String::new();
    for (i, e) in envs.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(&protocol::render(e));
    }
    let ex = protocol::extract(&text, opts);
    report(name, ex.all_diagnostics());
    let mut out = Stdout::new();
    let _ = out.write_all(text.as_bytes());
    out.finish()?;
    Ok(if ex.error_count() == 0 {
        0
    } else {
        EXIT_INVALID
    })
}

/// `crosstalk error`: the ERROR reply to each envelope found, or one reply to the whole
/// input when nothing in it parsed.
pub(crate) fn error(
    code: &str,
    reason: Option<&str>,
    file: Option<&Path>,
    opts: &Options,
) -> Result<u8, Failure> {
    let inp = input::read(file)?;
    let ex = inp.extract(opts);
    let ids = IdGenerator::new();
    let replies: Vec<Envelope> = if ex.envelopes.is_empty() {
        vec![error_envelope(None, code, reason, &ex.diagnostics, &ids)]
    } else {
        ex.envelopes
            .iter()
            .map(|p| error_envelope(Some(&p.envelope), code, reason, &p.diagnostics, &ids))
            .collect()
    };
    emit(&replies, "<error>", opts)
}
