//! The inspector's `meta: attachments` section: one row per entry (key, name, type, size,
//! digest) and, when a directory of attached files is known, whether the file there
//! matches. Files larger than [`CHECK_LIMIT`] are not hashed while the operator browses.

use crate::protocol::namespaces;
use std::path::Path;

use crate::app::panes::inspector::{Row, RowKind};
use crate::app::text::{safe_line, truncate, wrap};
use crate::protocol::MetaBlock;
use crate::protocol::attachments::{self, Attachment, Check};

/// Files up to this size are checked when their message is shown.
pub(crate) const CHECK_LIMIT: u64 = 16 << 20;

/// Whether a block is the attachments block.
pub(crate) fn is_attachments(block: &MetaBlock) -> bool {
    block
        .namespace
        .eq_ignore_ascii_case(namespaces::ATTACHMENTS)
}

/// The rows for `block` in `w` cells; entries that are not `A{N}` are shown as fields.
pub fn rows(block: &MetaBlock, w: usize, dir: Option<&Path>) -> Vec<Row> {
    let mut rows = Vec::new();
    for (k, v) in &block.entries {
        if !attachments::is_entry_key(k) {
            let text = format!("{}: {}", safe_line(k), safe_line(v));
            rows.extend(wrap(&text, w).into_iter().map(|t| row(RowKind::Field, t)));
            continue;
        }
        let a = attachments::parse_entry(k, v);
        let check = dir.map(|d| check_file(&a, d));
        let kind = match check {
            Some(Some(Check::Ok)) | None | Some(None) => RowKind::Field,
            Some(Some(_)) => RowKind::Error,
        };
        let text = describe(&a, check);
        for (i, part) in wrap(&text, w.saturating_sub(2)).into_iter().enumerate() {
            let lead = if i == 0 { "• " } else { "  " };
            rows.push(row(kind, format!("{lead}{part}")));
        }
    }
    rows
}

fn row(kind: RowKind, text: String) -> Row {
    Row {
        kind,
        key: String::new(),
        text,
        spans: Vec::new(),
    }
}

/// `A1 notes.txt · text/plain · 3 bytes · sha256:ba78…15ad · ok`, made safe to print.
pub(crate) fn describe(a: &Attachment, check: Option<Option<Check>>) -> String {
    let mut parts = vec![format!(
        "{} {}",
        safe_line(&a.key),
        safe_line(a.name.as_deref().unwrap_or("(no name)"))
    )];
    parts.push(safe_line(a.mime.as_deref().unwrap_or("(no type)")).into_owned());
    if let Some(n) = a.size {
        parts.push(format!("{n} bytes"));
    }
    parts.push(match &a.digest {
        Some(d) => {
            let s = safe_line(&d.display()).into_owned();
            if s.chars().count() > 28 {
                let head: String = s.chars().take(18).collect();
                let tail: String = s
                    .chars()
                    .rev()
                    .take(6)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                format!("{head}…{tail}")
            } else {
                s
            }
        }
        None => "(no digest)".into(),
    });
    match check {
        Some(Some(c)) => parts.push(c.label().to_string()),
        Some(None) => parts.push(format!("not checked (over {} MiB)", CHECK_LIMIT >> 20)),
        None => {}
    }
    if !a.unread.is_empty() {
        parts.push(format!(
            "unread: {}",
            truncate(&safe_line(&a.unread.join("; ")), 40)
        ));
    }
    parts.join(" · ")
}

/// The check of one entry against `dir`; `None` when the file is too large to hash here.
fn check_file(a: &Attachment, dir: &Path) -> Option<Check> {
    if let Some(name) = a.name.as_deref().and_then(attachments::safe_name) {
        // Not through a link: that is reported as one, never hashed.
        let size = std::fs::symlink_metadata(dir.join(name))
            .map(|m| m.len())
            .unwrap_or(0);
        if size > CHECK_LIMIT {
            return None;
        }
    }
    crate::transport::file::check_dir(std::slice::from_ref(a), dir)
        .into_iter()
        .next()
}
