//! `crosstalk serve` and `crosstalk send`: the HTTP binding from the command line.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use clap::Args;

use crate::cli::database::store_cmd::{open, store_failure};
use crate::cli::output::{Stdout, print_json};
use crate::cli::{EXIT_INVALID, Failure, input};
use crate::config::Config;
use crate::protocol::Options;
use crate::sanitize::sanitize_line;
use crate::store::Outcome;
use crate::transport::http::{client, deliver, open_files, retry, server};

/// `crosstalk serve`'s flags; each overrides its `[serve]` key.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
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
    /// Connections held open at once, sending a request or not [default: [serve]
    /// max_connections].
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Connections one client address holds open at once [default: [serve]
    /// max_connections_per_client].
    #[arg(long, value_name = "N")]
    max_connections_per_client: Option<usize>,
    /// Requests read and served at once; one more is answered 503 [default: [serve]
    /// max_requests].
    #[arg(long, value_name = "N")]
    max_requests: Option<usize>,
    /// Seconds a client has for its whole request head (request line and headers)
    /// [default: [serve] head_timeout].
    #[arg(long, value_name = "SECONDS")]
    head_timeout: Option<u64>,
    /// Seconds a client has for its body, once its head is in [default: [serve]
    /// request_timeout].
    #[arg(long, value_name = "SECONDS")]
    request_timeout: Option<u64>,
}

/// `crosstalk send`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct SendArgs {
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
    /// Seconds to wait in all for a peer that answers 429 (or 503) and asks to be sent again
    /// later (`Retry-After`), posting again after each wait; 0: its first answer stands
    /// [default: [send] retry_for, 30].
    #[arg(long, value_name = "SECONDS")]
    retry_for: Option<u64>,
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
pub(crate) fn serve(db: Option<&Path>, config: &Config, args: ServeArgs) -> Result<u8, Failure> {
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
        head_timeout: Duration::from_secs(args.head_timeout.unwrap_or(c.head_timeout).max(1)),
        request_timeout: Duration::from_secs(
            args.request_timeout.unwrap_or(c.request_timeout).max(1),
        ),
        max_connections: args.max_connections.unwrap_or(c.max_connections),
        max_connections_per_client: args
            .max_connections_per_client
            .unwrap_or(c.max_connections_per_client),
        max_requests: args.max_requests.unwrap_or(c.max_requests),
        rate_per_minute: args.rate_per_minute.unwrap_or(c.rate_per_minute),
        burst: args.burst.unwrap_or(c.burst),
        desk: config.operator.addresses.first().cloned(),
        size_limit: config.protocol.size_limit,
        book: config.address_book(),
        audit_by: config.audit_name(),
        retry_for: Duration::from_secs(config.send.retry_for),
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
    let files = open_files::raise_to(open_files::needed(settings.max_connections));
    if let Some(warning) = files.warning(settings.max_connections) {
        eprintln!("crosstalk: serve: {warning}");
    }
    let summary = server::serve(settings, store, |bound| {
        out!("http://{bound}{}\n", crate::transport::http::RECEIVE_PATH);
    })
    .map_err(|e| Failure::usage(e.to_string()))?;
    let turned_away = match summary.turned_away {
        0 => String::new(),
        n => format!(", {n} connections turned away while busy (503)"),
    };
    eprintln!(
        "crosstalk: stopped; {} envelopes acknowledged, {} requests refused{turned_away}",
        summary.acknowledged, summary.refused
    );
    Ok(0)
}

/// `crosstalk send`: stores the envelope (as `import` does), posts it, records the answer.
///
/// A peer that answers 429 (or 503 with `Retry-After`) is posted to again after the wait it
/// asks for, within `--retry-for` in all, each wait said on standard error; only the last
/// answer is recorded.
///
/// Exit 0 when the peer acknowledged it; 1 when the envelope is invalid (not sent) or the
/// peer refused it (a peer still asking to wait included); 2 when there was no answer.
pub(crate) fn send(
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
    let id = sendable(report.items.first(), &input.name)?;
    let stored = store
        .message(&id)
        .map_err(store_failure)?
        .ok_or_else(|| Failure::usage(format!("message {id} vanished from the database")))?;
    let token = args.token.or_else(env_token);
    let policy = retry::Policy {
        wait_at_most: Duration::from_secs(args.retry_for.unwrap_or(config.send.retry_for)),
    };
    let retried = retry::post(
        &url,
        &stored.carried(),
        token.as_deref(),
        Duration::from_secs(args.timeout.max(1)),
        &policy,
        |wait| eprintln!("crosstalk: {}", waiting_line(&url, wait)),
    )
    .map_err(|e| {
        Failure::usage(format!(
            "{e}; the envelope is stored, `send` it again later"
        ))
    })?;
    let response = &retried.response;
    let delivered =
        deliver::record(&mut store, &id, &url, response, opts).map_err(store_failure)?;
    let mut out = Stdout::new();
    if args.json {
        print_json(
            &mut out,
            &Sent {
                delivered: &delivered,
                tries: retried.tries,
                waited_seconds: retried.waited.as_secs_f64(),
                retry_at: match retried.gave_up {
                    Some(
                        retry::GaveUp::TooLong { until, .. } | retry::GaveUp::Spent { until, .. },
                    ) => until.and_then(rfc3339),
                    None => None,
                },
            },
        )?;
    } else {
        print_answer(&mut out, &id, &url, &delivered, response);
    }
    out.finish()?;
    if let Some(gave_up) = &retried.gave_up {
        eprintln!(
            "crosstalk: {}",
            gave_up_line(&url, response.status, &retried, gave_up, &policy)
        );
    }
    Ok(if delivered.accepted { 0 } else { EXIT_INVALID })
}

/// The id of the stored message `send` posts, from the import's `item` of input `name`:
/// imported now, stored already, or signed now. An envelope kept as a conflicting version,
/// or rejected, is not sent: the failure says why.
fn sendable(item: Option<&crate::store::ImportItem>, name: &str) -> Result<String, Failure> {
    match item {
        Some(i)
            if matches!(
                i.outcome,
                Outcome::Imported | Outcome::Duplicate | Outcome::Signed
            ) =>
        {
            Ok(i.message.clone().unwrap_or_default())
        }
        Some(i) if i.outcome == Outcome::Conflict => Err(Failure {
            code: EXIT_INVALID,
            message: format!(
                "not sent: message {} is stored with other text; this text is kept beside it as a conflicting version (V in the app shows it). Send the stored message, or give this one its own message id",
                sanitize_line(i.message.as_deref().unwrap_or("?"))
            ),
        }),
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
                        sanitize_line(name),
                        sanitize_line(&d.to_string())
                    )
                })
                .collect();
            Err(Failure {
                code: EXIT_INVALID,
                message: format!("not sent: the envelope is not valid{}", why.concat()),
            })
        }
    }
}

/// What `send` prints of the peer's answer to message `id` posted to `url`: delivered or
/// refused, and the lines of a refusal that name a line of the envelope.
fn print_answer(
    out: &mut Stdout,
    id: &str,
    url: &str,
    delivered: &deliver::Delivered,
    response: &client::Response,
) {
    use std::io::Write;
    let _ = writeln!(
        out,
        "{} {id} to {}: {}",
        if delivered.accepted {
            "delivered"
        } else {
            "refused"
        },
        sanitize_line(url),
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

/// What `send --json` prints: the delivery, and what it took to get its answer.
#[derive(serde::Serialize)]
struct Sent<'a> {
    #[serde(flatten)]
    delivered: &'a deliver::Delivered,
    /// How many times it was posted.
    tries: u32,
    /// How long was waited between the tries.
    waited_seconds: f64,
    /// When the peer asked to be sent again, when that was past what `--retry-for` allowed
    /// (RFC 3339, UTC).
    retry_at: Option<String>,
}

/// A time as RFC 3339 in UTC, to the second.
fn rfc3339(t: SystemTime) -> Option<String> {
    let t = jiff::Timestamp::try_from(t).ok()?;
    Some(t.round(jiff::Unit::Second).ok()?.to_string())
}

/// A time to send again, for people: the local time, with its date when not today.
fn local_time(t: SystemTime) -> Option<String> {
    let at = jiff::Timestamp::try_from(t)
        .ok()?
        .to_zoned(jiff::tz::TimeZone::system());
    let today = jiff::Zoned::now()
        .with_time_zone(at.time_zone().clone())
        .date();
    Some(if at.date() == today {
        at.strftime("%H:%M:%S").to_string()
    } else {
        at.strftime("%Y-%m-%d %H:%M:%S").to_string()
    })
}

/// A duration for people, in whole seconds (the unit `Retry-After` counts in).
fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64().ceil() as u64;
    format!("{s} s")
}

fn what(status: u16) -> &'static str {
    match status {
        429 => "429 (too many requests)",
        503 => "503 (unavailable)",
        _ => "an answer to send again later",
    }
}

/// The line said before each wait.
fn waiting_line(url: &str, w: &retry::Wait) -> String {
    let asked = match w.asked {
        Some(asked) => format!("and asks to wait {}", seconds(asked)),
        None => "without saying how long to wait".into(),
    };
    format!(
        "{} answered {} {asked}; posting again in {} (try {}, {} of --retry-for left)",
        sanitize_line(url),
        what(w.status),
        seconds(w.wait),
        w.next_try,
        seconds(w.left),
    )
}

/// What happened when the last answer still asked to be sent again, and what to do.
fn gave_up_line(
    url: &str,
    status: u16,
    retried: &retry::Retried,
    gave_up: &retry::GaveUp,
    policy: &retry::Policy,
) -> String {
    let url = sanitize_line(url);
    let allowed = policy.wait_at_most.as_secs();
    let until = |until: Option<SystemTime>| {
        until
            .and_then(local_time)
            .map(|t| format!(" (until {t})"))
            .unwrap_or_default()
    };
    match *gave_up {
        retry::GaveUp::TooLong { asked, until: at } => format!(
            "not delivered: {url} answered {} and asks to wait {}{}, longer than --retry-for {allowed} allows; the envelope is stored: `crosstalk send` it again then, or with --retry-for {}",
            what(status),
            seconds(asked),
            until(at),
            asked.as_secs_f64().ceil() as u64,
        ),
        retry::GaveUp::Spent {
            waited,
            asked,
            until: at,
        } => {
            let answered = match retried.tries {
                1 => format!("answered {}", what(status)),
                n => format!(
                    "still answered {} after {n} tries and {} of waiting",
                    what(status),
                    seconds(waited)
                ),
            };
            let asks = match asked {
                Some(asked) => format!(" and asks to wait {}{}", seconds(asked), until(at)),
                None => String::new(),
            };
            format!(
                "not delivered: {url} {answered}{asks}, more than --retry-for {allowed} allows; the envelope is stored: `crosstalk send` it again later, or with a longer --retry-for"
            )
        }
    }
}
