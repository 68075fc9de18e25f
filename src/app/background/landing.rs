//! What an import tells the operator: where the app lands afterwards (the envelope the paste
//! added last in time, so that the message selected, and what `y` copies, is what just
//! arrived, not a duplicate or an older envelope the paste quoted), the status line, and what
//! the preview offers for an envelope rejected only for its ids.

use crate::protocol::timestamp_ms;
use crate::store::{ImportItem, ImportReport, Outcome};

/// The item to open after importing `report`: the newest envelope it added (by the time in
/// its id; ties and ids without a time go by input order, later first); when it added none,
/// the last id conflict (its versions are what is new); else the first envelope already
/// stored, so the operator sees where the paste belongs.
pub(crate) fn landing(report: &ImportReport) -> Option<&ImportItem> {
    let placed = |i: &&ImportItem| i.thread.is_some() && i.message.is_some();
    let added = report
        .items
        .iter()
        .enumerate()
        .filter(|(_, i)| i.outcome == Outcome::Imported)
        .filter(|(_, i)| placed(i))
        .max_by_key(|(n, i)| {
            let time = i.message.as_deref().and_then(timestamp_ms).unwrap_or(0);
            (time, *n)
        })
        .map(|(_, i)| i);
    added
        .or_else(|| {
            report
                .items
                .iter()
                .rev()
                .filter(placed)
                .find(|i| matches!(i.outcome, Outcome::Conflict | Outcome::Signed))
        })
        .or_else(|| {
            report
                .items
                .iter()
                .filter(placed)
                .find(|i| i.outcome == Outcome::Duplicate)
        })
}

/// The status line after an import: counts, and the first reason something was not threaded.
pub fn summary(report: &ImportReport) -> (bool, String) {
    let (imported, dup, rejected, conflicts) = (
        report.count(Outcome::Imported),
        report.count(Outcome::Duplicate),
        report.count(Outcome::Rejected),
        report.count(Outcome::Conflict),
    );
    let mut text = format!("Imported {imported}, {dup} already stored, {rejected} rejected");
    if conflicts > 0 {
        text.push_str(&format!(
            ", {conflicts} id conflict(s) kept as versions (V in the inspector shows them)"
        ));
    }
    let signed = report.count(Outcome::Signed);
    if signed > 0 {
        text.push_str(&format!(", {signed} stored message(s) now signed"));
    }
    text.push('.');
    let first_error = report
        .items
        .iter()
        .filter(|i| matches!(i.outcome, Outcome::Rejected | Outcome::Conflict))
        .find_map(|i| i.diagnostics.iter().find(|d| d.is_error()));
    match first_error {
        Some(d) => (
            false,
            format!("{text} First: line {}: {}", d.line, d.message),
        ),
        None => (true, text),
    }
}

/// What the preview offers for `item` beyond Enter, one line each: for an envelope rejected only
/// because an id is not valid, the keys that import it with fresh ids or edit the paste first.
pub(crate) fn preview_hint(app: &crate::app::App, item: &ImportItem) -> Vec<String> {
    let errors = || item.diagnostics.iter().filter(|d| d.is_error());
    let ids_only = item.outcome == Outcome::Rejected
        && errors().next().is_some()
        && errors().all(|d| d.code == crate::protocol::Code::BadId);
    if !ids_only {
        return Vec::new();
    }
    let key = app
        .keymap
        .key_for(
            crate::app::keymap::Scope::Preview,
            &crate::app::Action::ImportFreshIds,
        )
        .map(|k| k.to_string())
        .unwrap_or_else(|| "import_fresh_ids".into());
    let edit = app
        .keymap
        .key_for(
            crate::app::keymap::Scope::Preview,
            &crate::app::Action::EditPaste,
        )
        .map(|k| k.to_string())
        .unwrap_or_else(|| "edit_paste".into());
    vec![
        format!(
            "{key}: import with fresh ids (the original ids are kept as aliases, so replies naming them thread here)"
        ),
        format!("{edit}: edit the paste before import (the original stays stored)"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Span;

    fn item(outcome: Outcome, id: &str) -> ImportItem {
        ImportItem {
            span: Span {
                start_line: 1,
                end_line: 2,
            },
            outcome,
            message: Some(id.into()),
            thread: Some("t".into()),
            diagnostics: Vec::new(),
        }
    }

    fn report(items: Vec<ImportItem>) -> ImportReport {
        ImportReport {
            source: "<paste>".into(),
            paste_id: 1,
            items,
            diagnostics: Vec::new(),
        }
    }

    #[test]
    fn the_newest_added_wins_over_order_duplicates_and_quotes() {
        let new = "01KAQ0000000000000000000ZZ";
        let old = "01J00000000000000000000000";
        let r = report(vec![
            item(Outcome::Imported, new),
            item(Outcome::Imported, old),
            item(Outcome::Duplicate, "01KZZ000000000000000000000"),
        ]);
        assert_eq!(landing(&r).unwrap().message.as_deref(), Some(new));
        let r = report(vec![
            item(Outcome::Duplicate, old),
            item(Outcome::Conflict, new),
        ]);
        assert_eq!(landing(&r).unwrap().message.as_deref(), Some(new));
        let r = report(vec![
            item(Outcome::Rejected, new),
            item(Outcome::Duplicate, old),
        ]);
        assert_eq!(landing(&r).unwrap().message.as_deref(), Some(old));
    }
}
