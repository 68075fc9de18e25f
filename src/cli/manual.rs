//! `completions` and `man`: the shell completion scripts and the manual pages, generated from
//! the same clap definition as `--help` (with the exit statuses and examples of [`help`]), so
//! none of them can name a flag that is gone.
//!
//! [`help`]: super::help

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, roman};

use super::{Cli, Failure, help, output::Stdout};

/// The program's command with every command's exit statuses and examples.
pub(super) fn program() -> clap::Command {
    help::annotate(Cli::command())
}

/// `completions SHELL`: the completion script on standard output.
pub(super) fn completions(shell: clap_complete::Shell) -> Result<u8, Failure> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut program(), "crosstalk", &mut script);
    let mut out = Stdout::new();
    let _ = out.write_all(&script);
    out.finish()?;
    Ok(0)
}

/// `man [COMMAND…]`: the page of the program or of one command (`queue done`) on standard
/// output, or with `dir` every page written there (`crosstalk.1`, `crosstalk-queue-done.1`).
pub(super) fn man(words: &[String], dir: Option<&Path>) -> Result<u8, Failure> {
    let mut root = program().disable_help_subcommand(true);
    root.build();
    if let Some(dir) = dir {
        let written = write_all(&root, "", dir).map_err(|e| {
            Failure::usage(format!(
                "cannot write the manual pages to {}: {e}; give a folder you can write to",
                dir.display()
            ))
        })?;
        eprintln!(
            "crosstalk: {written} pages written to {}; `man -l {}/crosstalk.1` reads one",
            dir.display(),
            dir.display()
        );
        return Ok(0);
    }
    let mut command = &root;
    for word in words {
        command = command
            .get_subcommands()
            .find(|s| s.get_name() == word && !s.is_hide_set())
            .ok_or_else(|| {
                Failure::usage(format!(
                    "`crosstalk {}` is no command; `crosstalk --help` lists them",
                    words.join(" ")
                ))
            })?;
    }
    let mut page = Vec::new();
    let man = Man::new(command.clone()).manual(MANUAL);
    render(&man, command, &words.join(" "), &mut page)
        .map_err(|e| Failure::usage(format!("cannot write the page: {e}")))?;
    let mut out = Stdout::new();
    let _ = out.write_all(&page);
    out.finish()?;
    Ok(0)
}

/// Writes the page of `command` (at `path`) and of every command below it into `dir`;
/// how many.
fn write_all(command: &clap::Command, path: &str, dir: &Path) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    let man = Man::new(command.clone()).manual(MANUAL);
    let mut page = Vec::new();
    render(&man, command, path, &mut page)?;
    std::fs::write(dir.join(man.get_filename()), page)?;
    let mut written = 1;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let child = if path.is_empty() {
            sub.get_name().to_string()
        } else {
            format!("{path} {}", sub.get_name())
        };
        written += write_all(sub, &child, dir)?;
    }
    Ok(written)
}

/// The name of the manual the pages belong to, in each page's footer.
const MANUAL: &str = "crosstalk manual";

/// One page: clap_mangen's sections, then EXIT STATUS and EXAMPLES from the table in place
/// of the help's text after the options (which clap_mangen would show as "EXTRA").
fn render(
    man: &Man,
    command: &clap::Command,
    path: &str,
    w: &mut dyn Write,
) -> std::io::Result<()> {
    man.render_title(w)?;
    man.render_name_section(w)?;
    man.render_synopsis_section(w)?;
    man.render_description_section(w)?;
    if command.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(w)?;
    }
    if command.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(w)?;
    }
    if let Some(entry) = help::entry(path) {
        let mut roff = Roff::default();
        roff.control("SH", ["EXIT STATUS"]);
        for (code, meaning) in entry.exit.iter().enumerate() {
            roff.control("TP", []);
            roff.text([bold(code.to_string())]);
            roff.text([roman(*meaning)]);
        }
        roff.control("SH", ["EXAMPLES"]);
        for example in entry.examples {
            roff.control("PP", []);
            roff.text([bold(*example)]);
        }
        roff.to_writer(w)?;
    }
    if command.get_version().is_some() {
        man.render_version_section(w)?;
    }
    Ok(())
}
