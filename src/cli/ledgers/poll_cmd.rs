//! `crosstalk poll ID`: the tally of a stored POLL (targets × answered × vote, quorum,
//! deadline), and with `--close` the envelopes that end it once its deadline has passed.

use std::io::Write;
use std::path::Path;

use crate::cli::output::Stdout;
use crate::cli::{EXIT_INVALID, Failure, database::store_cmd};
use crate::protocol::poll::{self, Tally};
use crate::sanitize::sanitize_line;
use crate::store::PollView;

/// Prints the tally of the POLL `id` (or the one message whose id starts with it). Exit 1
/// when it names no POLL (or `--close` is refused), 2 on usage and I/O errors.
pub(crate) fn poll(
    db: Option<&Path>,
    config: &crate::config::Config,
    id: &str,
    as_json: bool,
    close: bool,
) -> Result<u8, Failure> {
    let mut store = store_cmd::open_existing(db)?;
    let err = |e: crate::store::StoreError| Failure::usage(e.to_string());
    let message = store_cmd::one_message(&store, id)?;
    let mid = message.id.clone();
    let intent = message.intent.clone().unwrap_or_else(|| "none".into());
    let Some(view) = store
        .poll_view(message, jiff::Timestamp::now())
        .map_err(err)?
    else {
        return Err(Failure {
            code: EXIT_INVALID,
            message: format!("message {mid} is not a POLL (its intent: {intent})"),
        });
    };
    let mut out = Stdout::new();
    if close {
        if let Err(why) = poll::can_close(&view.tally) {
            return Err(Failure {
                code: EXIT_INVALID,
                message: format!("cannot close poll {mid}: {why}"),
            });
        }
        // Written in the desk's name, and signed when [signing] says so, as the app does.
        let mut closed = store.poll_closing(&view, &config.desk_address());
        for env in closed.errors.iter_mut().chain([&mut closed.result]) {
            crate::app::writing::signing::sign_composed(&config.signing, env).map_err(|why| {
                Failure {
                    code: EXIT_INVALID,
                    message: format!("cannot close poll {mid}: {why}"),
                }
            })?;
        }
        store.file_closing(&closed).map_err(err)?;
        if as_json {
            let written: Vec<serde_json::Value> = closed
                .errors
                .iter()
                .chain([&closed.result])
                .map(|e| {
                    serde_json::json!({
                        "message": e.message(),
                        "intent": e.intent().map(|i| i.to_string()),
                        "to": e.banner.to,
                        "from": e.banner.from,
                        "text": crate::protocol::render(e),
                    })
                })
                .collect();
            crate::cli::output::print_json(&mut out, &serde_json::json!({ "written": written }))?;
        } else {
            for e in closed.errors.iter().chain([&closed.result]) {
                let _ = writeln!(out, "{}", crate::protocol::render(e).trim_end());
                let _ = writeln!(out);
            }
            eprintln!(
                "crosstalk: wrote {} E-TIMEOUT error(s) (records, kept in the thread) and a CLOSE with the tally to thread {} (a draft: copy it from the app, or from here)",
                closed.errors.len(),
                view.poll.thread
            );
        }
        out.finish()?;
        return Ok(0);
    }
    if as_json {
        crate::cli::output::print_json(
            &mut out,
            &serde_json::json!({
                "poll": view.poll.id,
                "thread": view.poll.thread,
                "tally": view.tally,
            }),
        )?;
    } else {
        for line in table(&view) {
            let _ = writeln!(out, "{line}");
        }
    }
    out.finish()?;
    Ok(0)
}

/// The human view: a header, one row per target, the counts, the quorum and the time left.
fn table(view: &PollView) -> Vec<String> {
    let t: &Tally = &view.tally;
    let mut lines = vec![format!(
        "POLL {}  {}  {}",
        view.poll.id,
        sanitize_line(&view.poll.envelope.banner.from),
        sanitize_line(view.poll.envelope.first_line()),
    )];
    let width = t
        .targets
        .iter()
        .map(|l| crate::cells::width(&sanitize_line(&l.target)))
        .max()
        .unwrap_or(6)
        .max(6);
    lines.push(match (&t.options_from, t.options.is_empty()) {
        (Some(from), false) => format!(
            "Options: {} (from {})",
            sanitize_line(&t.options.join(" | ")),
            sanitize_line(from)
        ),
        _ => "Options: none found (a Vote: counts as written)".to_string(),
    });
    lines.push(format!("  {:<width$}  {:<10}  VOTE", "TARGET", "ANSWERED"));
    for l in &t.targets {
        let answered = l.standing.answered();
        let vote = sanitize_line(&l.vote_cell()).into_owned();
        lines.push(format!(
            "  {}  {:<10}  {}  ({})",
            crate::cells::pad(&sanitize_line(&l.target), width),
            answered,
            vote,
            sanitize_line(&l.why)
        ));
    }
    let counts: Vec<String> = t
        .counts
        .iter()
        .map(|(o, n)| format!("{}: {n}", sanitize_line(o)))
        .collect();
    if !counts.is_empty() {
        lines.push(format!("Votes: {}", counts.join(", ")));
    }
    let (counts, word) = poll::quorum_label(t);
    lines.push(format!(
        "Quorum: {counts} ({word}){}",
        t.leader
            .as_deref()
            .map(|l| format!("; leading: {}", sanitize_line(l)))
            .unwrap_or_default()
    ));
    lines.push(format!(
        "Deadline: {} ({})",
        sanitize_line(t.deadline_raw.as_deref().unwrap_or("none")),
        poll::time_left_label(t)
    ));
    if let Some(c) = &t.closed_by {
        lines.push(format!("Closed by {c}"));
    }
    lines
}
