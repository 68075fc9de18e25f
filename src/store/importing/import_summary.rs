//! An import summed up for one line: what the watch, the app's status line and the
//! companion's hop say of a text they brought in.

use crate::store::{ImportReport, Outcome};

/// What an import did, summed up as the status line, `crosstalk watch` and the companion's
/// hop tell it (the hop's JSON answer carries it as `arrival`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImportSummary {
    /// Envelopes stored now.
    pub imported: usize,
    /// Envelopes already stored (harmless: the same text copied twice).
    pub duplicates: usize,
    /// Envelopes not stored because they have errors.
    pub rejected: usize,
    /// The first error of the first rejected envelope (`line:col: error: … [code]`).
    pub first_error: Option<String>,
    /// The message ids stored or found.
    pub messages: Vec<String>,
    /// The threads they joined.
    pub threads: Vec<String>,
    /// The paste row that keeps the raw text.
    pub paste_id: i64,
}

impl ImportSummary {
    /// Sums up an import report.
    pub fn of(report: &ImportReport) -> ImportSummary {
        let first_error = report
            .items
            .iter()
            .filter(|i| i.outcome == Outcome::Rejected)
            .flat_map(|i| i.diagnostics.iter())
            .find(|d| d.is_error())
            .map(|d| d.to_string());
        let mut threads: Vec<String> = Vec::new();
        for t in report.items.iter().filter_map(|i| i.thread.clone()) {
            if !threads.contains(&t) {
                threads.push(t);
            }
        }
        ImportSummary {
            imported: report.count(Outcome::Imported),
            duplicates: report.count(Outcome::Duplicate),
            rejected: report.count(Outcome::Rejected),
            first_error,
            messages: report
                .items
                .iter()
                .filter_map(|i| i.message.clone())
                .collect(),
            threads,
            paste_id: report.paste_id,
        }
    }

    /// Whether the operator should hear of it (the bell): something new, or something wrong.
    pub(crate) fn is_news(&self) -> bool {
        self.imported > 0 || self.rejected > 0
    }

    /// One line: counts, and the first error, whose message may quote the envelope — the
    /// caller shows it through the sanitizer (the status line and the CLI both do).
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        if self.imported > 0 {
            parts.push(format!("{} new message(s) imported", self.imported));
        }
        if self.duplicates > 0 {
            parts.push(format!("{} already stored", self.duplicates));
        }
        if self.rejected > 0 {
            parts.push(format!("{} invalid, not imported", self.rejected));
        }
        let mut line = format!("clipboard: {}", parts.join(", "));
        if let Some(e) = &self.first_error {
            line.push_str(&format!(" ({e})"));
        }
        line
    }
}
