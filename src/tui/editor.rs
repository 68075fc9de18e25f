//! Editing the body in `$VISUAL` / `$EDITOR`: the app leaves the alternate screen, the editor
//! runs on the real terminal, and the app comes back with the edited text.

use std::io::Write as _;
use std::process::Command;

use anyhow::{Context as _, anyhow};
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use ratatui::crossterm::execute;

/// Runs the editor on `body`; returns the text it saved. The temporary file is removed
/// afterwards whatever happens; the composer's draft keeps the text before the edit.
pub(super) fn edit(terminal: &mut ratatui::DefaultTerminal, body: &str) -> anyhow::Result<String> {
    let file = body_file(body)?;
    let path = file.path().to_path_buf();
    let editor = std::env::var("VISUAL")
        .ok()
        .filter(|e| !e.trim().is_empty())
        .or_else(|| {
            std::env::var("EDITOR")
                .ok()
                .filter(|e| !e.trim().is_empty())
        })
        .unwrap_or_else(|| "vi".into());
    let _ = execute!(
        std::io::stdout(),
        DisableMouseCapture,
        DisableBracketedPaste
    );
    ratatui::restore();
    // Through the shell, so that an EDITOR with arguments ("code --wait") works.
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("crosstalk-editor")
        .arg(&path)
        .status();
    *terminal = ratatui::init();
    let _ = execute!(std::io::stdout(), EnableBracketedPaste, EnableMouseCapture);
    let result = match status {
        // Bytes that are not UTF-8 read as U+FFFD (and say so, see `Action::EditedBody`):
        // refusing the file would throw the whole edit away with it.
        Ok(s) if s.success() => std::fs::read(&path)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .with_context(|| format!("reading {}", path.display())),
        Ok(s) => Err(anyhow!("`{editor}` exited with {s}; the body is unchanged")),
        Err(e) => Err(anyhow!("cannot run `{editor}`: {e}; set $EDITOR")),
    };
    // Removed by name: an editor that saves by renaming put a new file there.
    drop(file);
    let _ = std::fs::remove_file(&path);
    result
}

/// A new temporary file holding `body`, readable and writable by the operator only (a draft
/// is private; the temporary folder is shared), created under a fresh name so that nothing
/// prepared in advance at that path is followed.
fn body_file(body: &str) -> anyhow::Result<tempfile::NamedTempFile> {
    let mut file = tempfile::Builder::new()
        .prefix("crosstalk-body-")
        .suffix(".txt")
        .tempfile()
        .context("creating the temporary file for $EDITOR")?;
    file.write_all(body.as_bytes())
        .and_then(|()| file.flush())
        .with_context(|| format!("writing {}", file.path().display()))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_file_is_private() {
        let f = body_file("secret draft").unwrap();
        assert_eq!(std::fs::read_to_string(f.path()).unwrap(), "secret draft");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = f.as_file().metadata().unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        }
    }
}
