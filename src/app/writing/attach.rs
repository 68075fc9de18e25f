//! Attaching a file in the composer: its digest is computed and a `meta: attachments` entry
//! added to the draft's META text (or the entry of the same name updated).

use crate::app::App;
use crate::app::popups::popup::{Popup, Prompt};
use crate::app::writing::composer::parse_meta;
use crate::protocol::attachments::{self, entry_value, guess_mime};
use crate::protocol::{Envelope, MetaBlock};

/// The largest file the composer attaches: its digest is computed while the operator
/// waits, and attachments are meant for notes and screenshots, not archives.
pub(crate) const MAX_ATTACH: u64 = 64 << 20;

impl App {
    /// The attach key: the command line, ready for the file's path (Tab completes it).
    pub(in crate::app) fn prompt_attach(&mut self) {
        self.popup = Some(Popup::Command(Prompt {
            text: "attach ".into(),
            ..Prompt::default()
        }));
    }

    /// `:attach PATH`: adds the file to the draft being written.
    pub(in crate::app) fn attach_file(&mut self, arg: &str) -> anyhow::Result<()> {
        if self.composer.is_none() {
            self.error("`:attach FILE` adds a file to the envelope being written: start one with n or r first.");
            return Ok(());
        }
        let path = crate::app::command::command_line::expand_home(arg);
        let shown = crate::app::text::safe_line(&path.display().to_string()).into_owned();
        let size = std::fs::metadata(&path)
            .map_err(|e| anyhow::anyhow!("cannot attach {shown}: {e}"))?
            .len();
        if !path.is_file() {
            self.error(format!(
                "cannot attach {shown}: it is not a file (a directory or a device); name a file"
            ));
            return Ok(());
        }
        if size > MAX_ATTACH {
            self.error(format!(
                "cannot attach {shown}: only files up to {} MiB are attached",
                MAX_ATTACH >> 20
            ));
            return Ok(());
        }
        let bytes =
            std::fs::read(&path).map_err(|e| anyhow::anyhow!("cannot attach {shown}: {e}"))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(c) = self.composer.as_mut() else {
            return Ok(());
        };
        let (blocks, problems) = parse_meta(&c.meta.lines().join("\n"));
        if !problems.is_empty() {
            self.error("fix the META text first (its notes say where): the entry goes into it.");
            return Ok(());
        }
        let mut env = Envelope::new("", "");
        env.meta = blocks;
        attachments::upsert(
            &mut env,
            &name,
            entry_value(guess_mime(&name), &name, size, &bytes),
        );
        c.set_meta("the attachment", &meta_text(&env.meta));
        if self.inspector.attachments_dir.is_none() {
            self.inspector.attachments_dir = path.parent().map(|p| p.to_path_buf());
        }
        self.save_draft(false)?;
        let key = attachments::attachments(&env)
            .into_iter()
            .find(|a| a.name.as_deref() == Some(name.as_str()))
            .map(|a| a.key)
            .unwrap_or_default();
        self.info(format!(
            "Attached {} as {key} ({size} bytes, {}).",
            crate::app::text::safe_line(&name),
            attachments::sha256(&bytes)
                .chars()
                .take(19)
                .collect::<String>()
        ));
        Ok(())
    }
}

/// META blocks written as the composer's META field holds them.
fn meta_text(blocks: &[MetaBlock]) -> String {
    blocks
        .iter()
        .map(|b| {
            let mut s = format!("meta: {}", b.namespace);
            for (k, v) in &b.entries {
                s.push_str(&format!("\n{k}: {v}"));
            }
            s
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}
