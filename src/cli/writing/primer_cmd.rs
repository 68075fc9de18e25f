//! `crosstalk primer --to NAME`: the primer and the first envelope of a conversation with a
//! contact, printed or (`--copy`) copied, ready to paste into a chat window.

use std::io::Write as _;

use crate::cli::output::Stdout;
use crate::cli::{EXIT_INVALID, Failure};
use crate::clipboard::{Clipboard, Env};
use crate::config::Config;
use crate::ids::IdGenerator;
use crate::primer::{Opening, first_envelope, primer_text};
use crate::protocol::Options;

/// Arguments of `crosstalk primer`.
#[derive(Debug, clap::Args)]
pub(crate) struct PrimerArgs {
    /// The contact (a `[[contacts]]` name) or any address.
    #[arg(long)]
    pub to: String,
    /// What the conversation is about.
    #[arg(long, default_value = "")]
    pub context: String,
    /// Copy the text to the clipboard instead of printing it.
    #[arg(long)]
    pub copy: bool,
}

/// Prints or copies the primer and the first envelope; exit 1 when the envelope has errors
/// (no `[compose] from`, say), after saying which.
pub(crate) fn primer(config: &Config, opts: &Options, a: PrimerArgs) -> Result<u8, Failure> {
    let book = config.address_book();
    let from = config.compose.from.clone().unwrap_or_default();
    if from.trim().is_empty() {
        return Err(Failure::usage(
            "no sender: set `from` under [compose] in config.toml (e.g. from = \"human://kalle\")",
        ));
    }
    let user = crate::config::user(None, config.compose.user.as_deref());
    let env = first_envelope(
        &book,
        &a.to,
        &Opening {
            from: &from,
            user: &user,
            context: &a.context,
        },
        &IdGenerator::new(),
    );
    let text = primer_text(book.find(&a.to), &env);
    let ex = crate::protocol::extract(&text, opts);
    if let Some(d) = ex
        .envelopes
        .last()
        .into_iter()
        .flat_map(|p| p.diagnostics.iter())
        .find(|d| d.is_error())
    {
        eprintln!(
            "crosstalk: the first envelope has an error: {}",
            crate::sanitize::sanitize_line(&d.to_string())
        );
        return Ok(EXIT_INVALID);
    }
    if a.copy {
        let data = crate::config::data_dir();
        let mut clipboard = Clipboard::new(config.clipboard.clone(), Env::from_process(), data)
            .own_copies_in(crate::config::own_copies_file());
        let report = clipboard
            .copy(&text, &mut std::io::stdout())
            .map_err(|e| Failure::usage(e.to_string()))?;
        eprintln!(
            "crosstalk: primer for {}: {}",
            crate::sanitize::sanitize_line(&env.banner.to),
            report.status_line()
        );
        return Ok(0);
    }
    let mut out = Stdout::new();
    let _ = out.write_all(text.as_bytes());
    out.finish()?;
    Ok(0)
}
