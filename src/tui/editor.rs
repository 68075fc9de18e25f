//! Editing the body in `$VISUAL` / `$EDITOR`: the app leaves the alternate screen, the editor
//! runs on the real terminal, and the app comes back with the edited text.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context as _, anyhow};
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use ratatui::crossterm::execute;

/// Runs the editor on `body`; returns the text it saved. The temporary file is removed
/// afterwards whatever happens; the composer's draft keeps the text before the edit.
pub fn edit(terminal: &mut ratatui::DefaultTerminal, body: &str) -> anyhow::Result<String> {
    let path = temp_path();
    std::fs::write(&path, body).with_context(|| format!("writing {}", path.display()))?;
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
        Ok(s) if s.success() => {
            std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
        }
        Ok(s) => Err(anyhow!("`{editor}` exited with {s}; the body is unchanged")),
        Err(e) => Err(anyhow!("cannot run `{editor}`: {e}; set $EDITOR")),
    };
    let _ = std::fs::remove_file(&path);
    result
}

fn temp_path() -> PathBuf {
    std::env::temp_dir().join(format!("crosstalk-body-{}.txt", ulid::Ulid::new()))
}
