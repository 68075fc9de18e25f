//! `crosstalk serve` and `crosstalk send`: the HTTP binding from the command line.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use super::output::{Stdout, print_json};
use super::store_cmd::{open, store_failure};
use super::{EXIT_INVALID, Failure, input};
use crate::config::Config;
use crate::protocol::Options;
use crate::sanitize::sanitize_line;
use crate::store::Outcome;
use crate::transport::http::{client, deliver, server};

/// `crosstalk serve`'s flags; each overrides its `[serve]` key.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address and port to listen on; port 0 takes a free one [default: [serve] listen,
    /// 127.0.0.1:8787]. The URL is printed on standard output once listening.
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Option<SocketAddr>,
    /// Bearer token clients must send [default: [serve] token, then $CROSSTALK_TOKEN];
    /// required when listening beyond loopback.
    #[arg(long)]
    token: Option<String>,
    /// Largest request body in bytes [default: [serve] max_body].
    #[arg(long, value_name = "BYTES")]
    max_body: Option<usize>,
    /// Requests a minute per client address, 0 for no limit [default: [serve]
    /// rate_per_minute].
    #[arg(long, value_name = "N")]
    rate_per_minute: Option<u32>,
    /// Requests a client may send at once [default: [serve] burst].
    #[arg(long, value_name = "N")]
    burst: Option<u32>,
    /// Connections served at once [default: [serve] max_connections].
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Seconds a client has for its headers, and again for its body [default: [serve]
    /// request_timeout].
    #[arg(long, value_name = "SECONDS")]
    request_timeout: Option<u64>,
}

/// `crosstalk send`'s arguments.
#[derive(Debug, Args)]
pub struct SendArgs {
    /// Where to post: `http://host:port` (`/crosstalk/receive` is added when there is no
    /// path).
    url: String,
    /// The envelope: a file; `-` or nothing reads standard input. One envelope.
    file: Option<PathBuf>,
    /// Bearer token [default: $CROSSTALK_TOKEN].
    #[arg(long)]
    token: Option<String>,
    /// Seconds to wait for the answer.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    timeout: u64,
    /// Print JSON: what was sent and what came back.
    #[arg(long)]
    json: bool,
}

fn env_token() -> Option<String> {
    std::env::var("CROSSTALK_TOKEN")
        .ok()
        .filter(|t| !t.trim().is_empty())
}

/// `crosstalk serve`: receives envelopes over HTTP until SIGINT or SIGTERM.
pub fn serve(db: Option<&Path>, config: &Config, args: ServeArgs) -> Result<u8, Failure> {
    let c = &config.serve;
    let listen = match args.listen {
        Some(a) => a,
        None => c.listen.parse().map_err(|e| {
            Failure::usage(format!(
                "[serve] listen = \"{}\" is not an address and port ({e}); write it as 127.0.0.1:8787",
                c.listen
            ))
        })?,
    };
    let settings = server::Settings {
        listen,
        token: args
            .token
            .or_else(|| c.token.clone())
            .or_else(env_token)
            .filter(|t| !t.is_empty()),
        max_body: args.max_body.unwrap_or(c.max_body),
        max_header: c.max_header,
        request_timeout: Duration::from_secs(
            args.request_timeout.unwrap_or(c.request_timeout).max(1),
        ),
        max_connections: args.max_connections.unwrap_or(c.max_connections),
        rate_per_minute: args.rate_per_minute.unwrap_or(c.rate_per_minute),
        burst: args.burst.unwrap_or(c.burst),
        desk: config.operator.addresses.first().cloned(),
        size_limit: config.protocol.size_limit,
        book: config.address_book(),
        audit_by: config.audit_name(),
    };
    // Refused before the database is opened or anything is bound.
    server::check(&settings).map_err(|e| Failure::usage(e.to_string()))?;
    let mut store = open(db)?;
    if let Some(why) = store.read_only() {
        return Err(Failure::usage(format!(
            "{}: cannot receive into this database: {why}; name a writable one with --db",
            store.path().display()
        )));
    }
    store
        .set_operator_addresses(&config.operator.addresses)
        .map_err(store_failure)?;
    let summary = server::serve(settings, store, |bound| {
        out!("http://{bound}{}\n", crate::transport::http::RECEIVE_PATH);
    })
    .map_err(|e| Failure::usage(e.to_string()))?;
    eprintln!(
        "crosstalk: stopped; {} envelopes acknowledged, {} requests refused",
        summary.acknowledged, summary.refused
    );
    Ok(0)
}

/// `crosstalk send`: stores the envelope (as `import` does), posts it, records the answer.
///
/// Exit 0 when the peer acknowledged it; 1 when the envelope is invalid (not sent) or the
/// peer refused it; 2 when there was no answer.
pub fn send(
    db: Option<&Path>,
    config: &Config,
    opts: &Options,
    args: SendArgs,
) -> Result<u8, Failure> {
    let url = client::receive_url(&args.url).map_err(|e| Failure::usage(e.to_string()))?;
    let input = input::read(args.file.as_deref())?;
    let found = input.extract(opts);
    if found.envelopes.len() != 1 {
        return Err(Failure {
            code: EXIT_INVALID,
            message: format!(
                "{}: `send` posts one envelope; this input holds {}: split it, or `crosstalk parse` it to see why",
                sanitize_line(&input.name),
                found.envelopes.len()
            ),
        });
    }
    let mut store = open(db)?;
    store
        .set_operator_addresses(&config.operator.addresses)
        .map_err(store_failure)?;
    // Through the import path: the raw input is kept first, and an envelope already stored
    // (a draft the app filed, an earlier send) is recognized as the same message.
    let report = store
        .import_text(&input.name, &input.text, opts)
        .map_err(store_failure)?;
    let item = report.items.first();
    let id = match item {
        Some(i)
            if matches!(
                i.outcome,
                Outcome::Imported | Outcome::Duplicate | Outcome::Signed
            ) =>
        {
            i.message.clone().unwrap_or_default()
        }
        Some(i) if i.outcome == Outcome::Conflict => {
            return Err(Failure {
                code: EXIT_INVALID,
                message: format!(
                    "not sent: message {} is stored with other text; this text is kept beside it as a conflicting version (V in the app shows it). Send the stored message, or give this one its own message id",
                    sanitize_line(i.message.as_deref().unwrap_or("?"))
                ),
            });
        }
        _ => {
            let why: Vec<String> = item
                .map(|i| {
                    i.diagnostics
                        .iter()
                        .filter(|d| d.is_error())
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
                .iter()
                .map(|d| {
                    format!(
                        "\n  {}:{}",
                        sanitize_line(&input.name),
                        sanitize_line(&d.to_string())
                    )
                })
                .collect();
            return Err(Failure {
                code: EXIT_INVALID,
                message: format!("not sent: the envelope is not valid{}", why.concat()),
            });
        }
    };
    let stored = store
        .message(&id)
        .map_err(store_failure)?
        .ok_or_else(|| Failure::usage(format!("message {id} vanished from the database")))?;
    let token = args.token.or_else(env_token);
    let response = client::post(
        &url,
        &stored.carried(),
        token.as_deref(),
        Duration::from_secs(args.timeout.max(1)),
    )
    .map_err(|e| {
        Failure::usage(format!(
            "{e}; the envelope is stored, `send` it again later"
        ))
    })?;
    let delivered =
        deliver::record(&mut store, &id, &url, &response, opts).map_err(store_failure)?;
    let mut out = Stdout::new();
    if args.json {
        print_json(&mut out, &delivered)?;
    } else {
        use std::io::Write;
        let _ = writeln!(
            out,
            "{} {id} to {}: {}",
            if delivered.accepted {
                "delivered"
            } else {
                "refused"
            },
            sanitize_line(&url),
            sanitize_line(&delivered.summary())
        );
        if !delivered.accepted {
            for line in response
                .body
                .lines()
                .map(str::trim_start)
                .filter(|l| l.starts_with("line "))
            {
                let _ = writeln!(out, "  {}", sanitize_line(line));
            }
        }
    }
    out.finish()?;
    Ok(if delivered.accepted { 0 } else { EXIT_INVALID })
}
