//! The command line: parsing the arguments (clap), and for each subcommand the reading of
//! its inputs and the writing of its output — human lines through the sanitizer, or JSON —
//! around calls into the rooms below: the protocol for `parse`, `fmt`, `check`, `sign`,
//! `verify`; the store for the database commands; the transports for `serve`, `send`,
//! `watch` and mail; the app (through `tui`) when no subcommand is given.
//!
//! The commands are grouped by what they serve: `reading` (pastes and files), `writing`
//! (envelopes), `database` (the history), `ledgers` (what the desk keeps track of) and
//! `carrying` (serve, send, watch, the companion); `output` and `input` are every command's.
//!
//! Exit status, the same for every command: 0 ok; 1 invalid input, no envelope found or a
//! failed verification; 2 usage or I/O error.

/// `print!` through [`output::Stdout`]: sanitized on a terminal, and ending the process
/// quietly when standard output was closed (`| head`) instead of panicking as `print!` does.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::output::write_stdout(&format!($($arg)*))
    };
}

mod carrying;
mod database;
mod help;
mod input;
mod ledgers;
mod manual;
mod output;
mod reading;
mod writing;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::export;
use crate::protocol::Options;
use crate::sanitize::sanitize;

/// Exit status for invalid input (also: no envelope, failed verification).
pub(crate) const EXIT_INVALID: u8 = 1;
/// Exit status for usage and I/O errors.
pub(crate) const EXIT_USAGE: u8 = 2;

/// The operator's desk for AI Crosstalk envelopes.
#[derive(Debug, Parser)]
#[command(name = "crosstalk", version, about, long_about = None)]
pub(crate) struct Cli {
    /// Config file [default: $CROSSTALK_CONFIG, then the platform config directory].
    #[arg(long, global = true, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Database [default: $CROSSTALK_DB, then crosstalk.db in the platform data directory].
    #[arg(long, global = true, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Open the app on a throwaway database seeded with demo threads.
    #[arg(long)]
    demo: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Keeps copied text on the X11/Wayland clipboard after the app exits (started by the
    /// app itself).
    #[command(name = "__hold-clipboard", hide = true)]
    HoldClipboard,
    /// Find every envelope in a paste and show what it says (and what is wrong with it).
    Parse {
        /// Input file; `-` or nothing reads standard input.
        file: Option<PathBuf>,
        /// Print one JSON object instead of the human view.
        #[arg(long)]
        json: bool,
    },
    /// Rewrite every envelope found in canonical form, one blank line between them.
    Fmt {
        /// Input file; `-` or nothing reads standard input.
        file: Option<PathBuf>,
        /// Give envelopes without `thread`/`message` new ids (v1.0 envelopes on receipt).
        #[arg(long)]
        fill_ids: bool,
    },
    /// Check files and report diagnostics as `file:line:col: severity: message`.
    Check {
        /// Input files; none reads standard input.
        files: Vec<PathBuf>,
        /// Print JSON: one object per file with its counts and diagnostics.
        #[arg(long)]
        json: bool,
        /// Check the text alone, not against the database (by default message ids are
        /// checked against `--db`, `$CROSSTALK_DB` or the default database when it exists,
        /// read-only).
        #[arg(long)]
        no_db: bool,
    },
    /// Write a new envelope with fresh ids.
    New(writing::compose::NewArgs),
    /// Write the ERROR reply to each envelope of the input (or to input that did not parse).
    Error {
        /// Error code from the taxonomy.
        #[arg(long, value_parser = writing::compose::parse_error_code)]
        code: String,
        /// Reason; the code's standard reason when absent.
        #[arg(long)]
        reason: Option<String>,
        /// Input file; `-` or nothing reads standard input.
        file: Option<PathBuf>,
    },
    /// Sign every envelope of the input and print them in canonical form.
    Sign {
        /// Input file; `-` or nothing reads standard input.
        file: Option<PathBuf>,
        /// Private key: PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
        #[arg(long)]
        key: PathBuf,
        /// Key id the signature names (`pkid=`, or the JWS header's `kid`) [default: derived
        /// from the public key].
        #[arg(long)]
        pkid: Option<String>,
        /// Signature form: detached JWS (rc1) or the spec's `ed25519:pkid=…;sig=…`.
        #[arg(long, value_enum, default_value_t = SigFormatArg::Jws)]
        format: SigFormatArg,
    },
    /// Store every envelope of the inputs in the database, threaded; report each.
    Import {
        /// Input files; `-` or none reads standard input.
        files: Vec<PathBuf>,
        /// Print JSON: one report per input.
        #[arg(long)]
        json: bool,
        /// Give envelopes rejected only for invalid ids (`bad-id`) fresh ids; the originals
        /// are kept as aliases, so a reply naming one is threaded under the fresh id.
        #[arg(long)]
        fresh_ids: bool,
    },
    /// List threads, newest activity first (standard error says when there are more than
    /// `--limit`, and how many archived threads are left out).
    Threads {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// How many threads.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// List the archived threads instead (`crosstalk archive`), newest activity first.
        #[arg(long)]
        archived: bool,
    },
    /// Archive a thread: it leaves the thread list (the app's and `threads`) until something
    /// new arrives in it; its queue items stay. `--undo` brings it back.
    Archive {
        /// Thread id (or the first characters of one).
        thread: String,
        /// Bring the archived thread back instead.
        #[arg(long)]
        undo: bool,
        /// Print JSON: the thread, whether it is archived now, and whether that changed.
        #[arg(long)]
        json: bool,
    },
    /// Every consent the stored envelopes state (`meta: privacy`) and where it stands:
    /// granted, denied, expired, revoked (by a verified REVOKE) or not understood. Exit 1 when a
    /// REVOKE withdraws nothing now: its signature is not verified, a later statement stands,
    /// it takes effect later, or no stored envelope grants what it names.
    Consent {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// What is left to do: envelopes to relay, addressed to you, awaiting a reply, missing
    /// their parent, and drafts; oldest first in each section. `queue done|dismiss ID`
    /// settles one by hand, `queue undo ID` brings it back.
    Queue {
        #[command(subcommand)]
        what: Option<ledgers::queue_cmd::QueueCmd>,
        /// Print JSON (after `done`, `dismiss`, `undo`: the message, whether it changed, how
        /// it is settled and the sections it is in now).
        #[arg(long, global = true)]
        json: bool,
        /// How many rows per section [default: 50].
        #[arg(long)]
        limit: Option<usize>,
    },
    /// Show one thread as a tree.
    Show {
        /// Thread id.
        thread: String,
        /// Print JSON: the thread and its messages in tree order.
        #[arg(long)]
        json: bool,
    },
    /// Write a thread out, or every thread (`--all`, a backup that `import` restores).
    Export {
        /// Thread id (or the first characters of one).
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        thread: Option<String>,
        /// Every thread, oldest first.
        #[arg(long)]
        all: bool,
        /// Output format [default: from the --output file's extension (.json, .md/.markdown,
        /// .eml, .mbox), else crosstalk].
        #[arg(long, value_enum)]
        format: Option<export::Format>,
        /// Write to FILE (made with 0600 permissions) instead of standard output. An existing
        /// FILE is replaced only with --force, and never when it is the database.
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// Replace the --output FILE if it exists.
        #[arg(long, requires = "output")]
        force: bool,
        /// Write one file per message into DIR instead, `<message-id>.crosstalk` (or `.eml`
        /// with `--format eml`); existing files are never replaced.
        #[arg(long, value_name = "DIR", conflicts_with = "output")]
        split: Option<PathBuf>,
    },
    /// Full-text search over bodies, contexts and participants, best matches first. When
    /// more than 5 000 messages match, the best of the newest 5 000 are shown (and standard
    /// error says so). Exit 1 when nothing matches (with `--json` too, which prints `[]`).
    Search {
        /// Words to find (all must occur, whole words: the app's `/` also finds the words its
        /// last word begins): several words, quoted or not, are one query.
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// How many results.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Save a draft reply to a message (headers filled in) and print it; the app lists it
    /// under `D` and files it as a message when it is copied. It is written by the desk
    /// (the first `[operator] addresses`, else `[compose] from`, else `human://` and the
    /// user) to the message's sender.
    Reply {
        /// Id of the message to answer.
        message: String,
        /// Intent [default: RESPOND to REQUEST/POLL/ESCALATE/HANDOFF or no intent, else ACK;
        /// REQUEST following up one's own message].
        #[arg(long)]
        intent: Option<String>,
        /// The body text, or `-` to read it from standard input.
        #[arg(long)]
        body: Option<String>,
        /// The `user` header [default: `[compose] user` of the config, then $USER].
        #[arg(long)]
        user: Option<String>,
    },
    /// Erase a thread, a message or unused raw pastes for good (asks first; `--yes` in
    /// scripts). Erased text is overwritten in the database file, its log and its index.
    Delete {
        #[command(subcommand)]
        what: database::erase_cmd::DeleteWhat,
        /// Erase without asking.
        #[arg(long, global = true)]
        yes: bool,
        /// Print JSON: what was erased.
        #[arg(long, global = true)]
        json: bool,
    },
    /// Print (or copy) the primer that teaches a chat model the envelope format, followed
    /// by the first envelope of a new conversation with a contact.
    Primer(writing::primer_cmd::PrimerArgs),
    /// Watch the clipboard: import every envelope copied while it runs (Ctrl-C stops).
    /// Text without an envelope is ignored and not stored.
    ///
    /// With `[relay] copy_on_import`, a copy of one new envelope for someone else is put
    /// back on the clipboard ready for its recipient (the contact's fence, its preamble the
    /// first time), so a relay is copy, then paste. With `--to`, runs as the companion of a
    /// desk on another machine: copies go to its `crosstalk serve`, and what it returns for
    /// the recipient lands on this clipboard.
    Watch {
        /// Print one JSON object per import instead of a line.
        #[arg(long)]
        json: bool,
        /// The desk's `crosstalk serve` (`http://127.0.0.1:8787`, through an SSH tunnel:
        /// `ssh -L 8787:127.0.0.1:8787 desk`): run as its companion, storing nothing here
        /// but a spool of copies the desk did not answer.
        #[arg(long, value_name = "URL")]
        to: Option<String>,
        /// The desk's token, as `crosstalk serve --token` was given [default:
        /// $CROSSTALK_TOKEN].
        #[arg(long, requires = "to")]
        token: Option<String>,
    },
    /// Tally a stored POLL: each target's answer and vote, the quorum, the time left (exit 1
    /// when the id names no POLL).
    Poll {
        /// Id of the POLL (or the first characters of one).
        message: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// After the deadline: write an E-TIMEOUT ERROR for each silent target and a CLOSE
        /// with the tally, store them in the thread as drafts, and print them.
        #[arg(long)]
        close: bool,
    },
    /// Verify every envelope's signature with a public key, or with the trust store's key
    /// for each signature's key id (exit 0 only if all are valid).
    Verify {
        /// Input file; `-` or nothing reads standard input.
        file: Option<PathBuf>,
        /// Public key: a file holding an SPKI PEM, the DNS TXT form `ed25519:pk=<base64>` or a
        /// `did:key`, or either of the last two given as they are [default: the trust store's
        /// key for each signature's key id, see `crosstalk keys`].
        #[arg(long)]
        key: Option<PathBuf>,
        /// Print JSON: one object per envelope.
        #[arg(long)]
        json: bool,
    },
    /// Copy the whole database to FILE (0600): everything `export` leaves out too (raw
    /// pastes, conflicting versions, aliases, the trust store, the queue, drafts). Safe while
    /// the app or an import runs; to restore, open the copy with --db.
    Backup {
        /// Where the copy goes.
        file: PathBuf,
        /// Replace FILE if it exists.
        #[arg(long)]
        force: bool,
        /// Print JSON: the copy's path, size and counts.
        #[arg(long)]
        json: bool,
    },
    /// The raw pastes kept (every paste is stored before it is parsed): list them, or print
    /// one as it was received, to get back an envelope import rejected.
    Pastes {
        #[command(subcommand)]
        what: Option<database::pastes_cmd::PastesCmd>,
        /// Print JSON: one object per paste.
        #[arg(long)]
        json: bool,
    },
    /// The trust store: keys by key id, pinned on first sight or added by you.
    Keys {
        #[command(subcommand)]
        what: ledgers::keys_cmd::KeysCmd,
    },
    /// Files named by `meta: attachments`: check them against a directory.
    Attachments {
        #[command(subcommand)]
        what: reading::attachments_cmd::AttachmentsCmd,
    },
    /// Receive envelopes over HTTP (`POST /crosstalk/receive`): each is stored as `import`
    /// stores it and answered with an ACK, or with an ERROR saying why not. Runs until
    /// SIGINT or SIGTERM, finishing the requests in flight.
    Serve(carrying::http_cmd::ServeArgs),
    /// Post one envelope to a peer's `serve` (or any HTTP binding): the envelope is stored,
    /// marked as delivered over http when the peer takes it, and the peer's ACK or ERROR is
    /// stored in its thread. Exit 1 when the peer refused it.
    Send(carrying::http_cmd::SendArgs),
    /// Print the completion script for a shell (see the README for where each shell reads it).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page of crosstalk or of one command (`crosstalk man queue done | man
    /// -l -`), or write every page into a folder.
    Man {
        /// The command whose page to print, as its words [default: the program's page].
        command: Vec<String>,
        /// Write every page into DIR instead (`crosstalk.1`, `crosstalk-parse.1`, …).
        #[arg(long, value_name = "DIR", conflicts_with = "command")]
        dir: Option<PathBuf>,
    },
}

/// The two `sig:` forms on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum SigFormatArg {
    /// Detached JWS with EdDSA (the rc1 canonicalization appendix).
    Jws,
    /// `ed25519:pkid=<id>;sig=<base64>` (the spec's syntax).
    Ed25519,
}

/// A failure that ends a command: its exit status and what to tell the user.
#[derive(Debug)]
pub(crate) struct Failure {
    /// Exit status.
    pub code: u8,
    /// The message, already saying what to do.
    pub message: String,
}

impl Failure {
    /// A usage or I/O failure (exit 2).
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: EXIT_USAGE,
            message: message.into(),
        }
    }
}

/// Parses the command line and runs it.
///
/// Everything this prints on standard error passes through the sanitizer: messages quote
/// file names, arguments and ids as given, and those can hold escape sequences too.
pub fn run() -> ExitCode {
    use clap::FromArgMatches;
    let cli = match manual::program()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let code = match dispatch(cli) {
        Ok(code) => code,
        Err(f) => {
            eprintln!("crosstalk: {}", sanitize(&f.message));
            f.code
        }
    };
    output::note();
    ExitCode::from(code)
}

/// clap's error messages quote the argument they reject: printed plain and sanitized (help
/// and version are clap's own text and print as clap prints them).
///
/// The plain text is not the error's `Display`: that strips every escape sequence, the
/// argument's own too, so `pars\e[31me` would read as `parse` and the message would name a
/// command that exists. The arguments are read again by a command without styles, whose
/// error holds the argument as given, for the sanitizer to show.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let code = u8::try_from(e.exit_code()).unwrap_or(EXIT_USAGE);
    let plain = <Cli as clap::CommandFactory>::command()
        .styles(clap::builder::Styles::plain())
        .try_get_matches_from(std::env::args_os())
        .err()
        .unwrap_or(e);
    eprint!("{}", sanitize(&plain.render().ansi().to_string()));
    ExitCode::from(code)
}

fn dispatch(cli: Cli) -> Result<u8, Failure> {
    // Before the config is read: the clipboard keeper must not fail on a config being edited.
    if let Some(Command::HoldClipboard) = cli.command {
        return crate::clipboard::hold_from_stdin()
            .map(|()| 0)
            .map_err(|e| Failure::usage(e.to_string()));
    }
    // Nor do the generated scripts and pages depend on the config.
    match &cli.command {
        Some(Command::Completions { shell }) => return manual::completions(*shell),
        Some(Command::Man { command, dir }) => return manual::man(command, dir.as_deref()),
        _ => {}
    }
    let config =
        crate::config::load(cli.config.as_deref()).map_err(|e| Failure::usage(e.to_string()))?;
    let Some(command) = cli.command else {
        let launch = crate::tui::Launch {
            db: cli.db,
            demo: cli.demo,
            config,
        };
        return crate::tui::run(launch).map_err(|e| Failure::usage(format!("{e:#}")));
    };
    // One "now" for the whole command, so every envelope is judged against the same time.
    let opts = &Options {
        size_limit: config.protocol.size_limit,
        now: Some(jiff::Timestamp::now()),
    };
    command_with(command, cli.db.as_deref(), &config, opts)
}

/// Runs `command` on database `db` (where it uses one) with `config` and `opts`: the config
/// is read and the time taken by then.
fn command_with(
    command: Command,
    db: Option<&std::path::Path>,
    config: &crate::config::Config,
    opts: &Options,
) -> Result<u8, Failure> {
    match command {
        Command::HoldClipboard => Ok(0),
        Command::Completions { shell } => manual::completions(shell),
        Command::Man { command, dir } => manual::man(&command, dir.as_deref()),
        Command::Parse { file, json } => reading::parse_cmd::parse(file.as_deref(), json, opts),
        Command::Fmt { file, fill_ids } => reading::parse_cmd::fmt(file.as_deref(), fill_ids, opts),
        Command::Check { files, json, no_db } => {
            let store = reading::check_db::open(db, no_db);
            reading::check_cmd::check(&files, json, opts, store.as_ref())
        }
        Command::New(args) => writing::compose::new(opts, args, config.compose.user.as_deref()),
        Command::Error { code, reason, file } => {
            writing::compose::error(&code, reason.as_deref(), file.as_deref(), opts)
        }
        Command::Sign {
            file,
            key,
            pkid,
            format,
        } => writing::sign_cmd::sign(
            opts,
            file.as_deref(),
            &key,
            pkid.as_deref(),
            sig_format(format),
        ),
        Command::Verify { file, key, json } => match key {
            Some(key) => writing::sign_cmd::verify(file.as_deref(), &key, json, opts),
            None => writing::sign_cmd::verify_with_store(db, file.as_deref(), json, opts),
        },
        Command::Keys { what } => ledgers::keys_cmd::keys(db, what),
        Command::Pastes { what, json } => database::pastes_cmd::pastes(db, what.as_ref(), json),
        Command::Backup { file, force, json } => {
            database::backup_cmd::backup(db, &file, force, json)
        }
        Command::Serve(args) => carrying::http_cmd::serve(db, config, args),
        Command::Send(args) => carrying::http_cmd::send(db, config, opts, args),
        Command::Import {
            files,
            json,
            fresh_ids,
        } => database::store_cmd::import(
            db,
            &files,
            json,
            opts,
            fresh_ids,
            &config.operator.addresses,
        ),
        Command::Primer(args) => writing::primer_cmd::primer(config, opts, args),
        Command::Watch {
            json,
            to: Some(url),
            token,
        } => carrying::companion::companion(&url, token, json, config, opts),
        Command::Watch { json, .. } => carrying::watch_cmd::watch(db, json, config, opts),
        Command::Threads {
            json,
            limit,
            archived,
        } => database::store_cmd::threads(db, limit, archived, json),
        Command::Archive { thread, undo, json } => {
            database::archive_cmd::archive(db, &thread, undo, json)
        }
        Command::Consent { json } => ledgers::consent_cmd::consent(db, json),
        Command::Queue { what, json, limit } => queue(db, config, what, limit, json),
        Command::Show { thread, json } => database::store_cmd::show(db, &thread, json),
        Command::Poll {
            message,
            json,
            close,
        } => ledgers::poll_cmd::poll(db, config, &message, json, close),
        Command::Export {
            thread,
            all,
            format,
            output,
            force,
            split,
        } => {
            let output = output.as_deref().map(|o| (o, force));
            export_to(db, thread.as_deref(), all, format, output, split.as_deref())
        }
        Command::Attachments { what } => reading::attachments_cmd::attachments(db, what, opts),
        Command::Delete { what, yes, json } => database::erase_cmd::delete(db, &what, yes, json),
        Command::Search { query, json, limit } => {
            database::store_cmd::search(db, &query.join(" "), limit, json)
        }
        Command::Reply {
            message,
            intent,
            body,
            user,
        } => database::store_cmd::reply(
            db,
            &message,
            &config.desk_address_as(user.as_deref()),
            intent.as_deref(),
            body.as_deref(),
            (user.as_deref(), config.compose.user.as_deref()),
            opts,
        ),
    }
}

/// The `sig:` form asked for on the command line, as the protocol names it.
fn sig_format(format: SigFormatArg) -> crate::protocol::signature::SigFormat {
    match format {
        SigFormatArg::Jws => crate::protocol::signature::SigFormat::Jws,
        SigFormatArg::Ed25519 => crate::protocol::signature::SigFormat::Ed25519,
    }
}

/// `export`: to one file (`output`, with whether it may be overwritten) or standard
/// output, or with `--split` to a file per thread in folder `split`.
fn export_to(
    db: Option<&std::path::Path>,
    thread: Option<&str>,
    all: bool,
    format: Option<export::Format>,
    output: Option<(&std::path::Path, bool)>,
    split: Option<&std::path::Path>,
) -> Result<u8, Failure> {
    match split {
        Some(dir) => database::split_cmd::split(db, thread, all, format, dir),
        None => database::store_cmd::export(db, thread, all, format, output),
    }
}

/// `queue`: the queue listed (`limit` rows, 50 unless given), or one of its entries settled
/// (`what`, which takes an id only).
fn queue(
    db: Option<&std::path::Path>,
    config: &crate::config::Config,
    what: Option<ledgers::queue_cmd::QueueCmd>,
    limit: Option<usize>,
    json: bool,
) -> Result<u8, Failure> {
    match (what, limit) {
        (Some(_), Some(_)) => Err(Failure::usage(
            "--limit is for listing the queue; `queue done`, `dismiss` and `undo` take an id only",
        )),
        (Some(what), None) => {
            ledgers::queue_cmd::settle(db, &config.operator.addresses, &what, json)
        }
        (None, limit) => {
            ledgers::queue_cmd::queue(db, &config.operator.addresses, limit.unwrap_or(50), json)
        }
    }
}
