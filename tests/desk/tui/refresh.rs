//! The real app notices an import made by another process: `crosstalk import` from a shell
//! while the app is open on the same database. The new thread shows up within about a
//! second, and the thread and message the operator had selected stay selected.

use crate::helpers::tmux;

use std::time::{Duration, Instant};

use tmux::{Term, manifest};

/// The inspector's `message` row: which message is selected.
fn inspected(screen: &str) -> String {
    screen
        .lines()
        .find_map(|l| {
            let at = l.find("│message ")?;
            let id = l[at + "│message ".len()..].split('│').next()?.trim();
            Some(id.to_string())
        })
        .unwrap_or_default()
}

#[test]
fn an_import_from_another_process_appears_and_the_selection_stays() {
    let Some(t) = Term::new() else { return };
    t.import(&[
        &manifest("assets/demo/01-rate-limiter-review.crosstalk"),
        &manifest("assets/demo/06-kyoto-trip-awaiting-reply.crosstalk"),
    ]);
    t.start(120, 36, &[]);
    t.wait_for("rate limiter");
    // The second thread (the rate limiter), focused, its third message selected.
    t.keys(&["j", "Enter", "g", "j", "j"]);
    let before = t.wait_for("On (1): agreed");
    let selected = inspected(&before);
    assert!(selected == "01KKC1YTWYZ12C40TNZCGG4435", "{before}");
    assert!(before.contains("2 threads"), "{before}");

    t.import(&[&manifest("assets/demo/03-sync-strategy-poll.crosstalk")]);
    let start = Instant::now();
    let after = t.wait_for("3 threads");
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "the import took {:?} to show",
        start.elapsed()
    );
    assert!(after.contains("notes app: sync strategy"), "{after}");
    // The same thread open and the same message in the inspector.
    assert!(
        after.contains("▶ webhook relay: rate limiter design review — 8 messages"),
        "{after}"
    );
    assert_eq!(inspected(&after), selected, "{before}\n---\n{after}");

    // Keys keep working on the same selection: one down shows the fourth message.
    t.keys(&["j"]);
    let next = t.wait_until("the selection to move", |s| inspected(s) != selected);
    assert!(next.contains("▶ webhook relay"), "{next}");
}
