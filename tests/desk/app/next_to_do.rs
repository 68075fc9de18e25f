//! `t`, the next thing to do: across threads, the next message to relay, then those addressed
//! to the operator, then (with `[ui] awaiting_after`) replies awaited too long — what the
//! queue lists, in its order — said on the status line; "nothing needs you" when none.

use crate::helpers::support;

use crosstalk::store::Store;
use support::{demo_store, harness};

#[test]
fn t_goes_from_what_is_to_relay_to_what_is_for_me_and_round_again() {
    let mut t = harness(demo_store(), 120, 40);
    let queue = t.app.store.queue(200).unwrap();
    let relay: Vec<String> = (queue.rows())
        .filter(|(s, _)| *s == crosstalk::store::Section::ToRelay)
        .map(|(_, r)| r.message.clone())
        .collect();
    let to_me: Vec<String> = (queue.rows())
        .filter(|(s, _)| *s == crosstalk::store::Section::ToMe)
        .map(|(_, r)| r.message.clone())
        .collect();
    assert!(!relay.is_empty() && !to_me.is_empty());
    let all = relay.len() + to_me.len();
    let mut seen = Vec::new();
    for i in 0..all {
        t.keys("t");
        let status = t.status_line();
        let shown = t
            .shown_message_id()
            .unwrap_or_else(|| panic!("{}", t.screen()));
        let want = if i < relay.len() {
            "to relay: "
        } else {
            "addressed to me: "
        };
        assert!(status.starts_with(want), "{status:?}\n{}", t.screen());
        assert!(
            status.ends_with(&format!("({} of {all})", i + 1)),
            "{status:?}"
        );
        assert_eq!(t.focused_pane(), crosstalk::app::Pane::Tree);
        seen.push(shown);
    }
    assert_eq!(seen, [relay, to_me].concat());
    // Round again from the first.
    t.keys("t");
    assert!(t.status_line().ends_with(&format!("(1 of {all})")));
    assert_eq!(t.shown_message_id().as_ref(), seen.first());
}

#[test]
fn t_with_nothing_to_do_says_so() {
    let mut t = harness(Store::open_in_memory().unwrap(), 80, 24);
    t.keys("t");
    assert_eq!(
        t.status_line(),
        "Nothing needs you: nothing to relay or to answer."
    );
    t.app.settings.ui.awaiting_after = Some(jiff::SignedDuration::from_mins(30));
    t.keys("t");
    assert_eq!(
        t.status_line(),
        "Nothing needs you: nothing to relay or to answer, and no reply awaited past 30m."
    );
}

/// A reply awaited past `[ui] awaiting_after` is for `t` too, after what is to relay or to
/// answer; a wait not yet that long is not.
#[test]
fn t_stops_at_a_reply_awaited_past_the_configured_age() {
    let mut t = harness(demo_store(), 120, 40);
    let queue = t.app.store.queue(200).unwrap();
    let (before, awaiting): (usize, Vec<(String, String)>) = (
        (queue.rows())
            .filter(|(s, _)| {
                matches!(
                    s,
                    crosstalk::store::Section::ToRelay | crosstalk::store::Section::ToMe
                )
            })
            .count(),
        (queue.rows())
            .filter(|(s, _)| *s == crosstalk::store::Section::Awaiting)
            .map(|(_, r)| (r.message.clone(), r.since.clone()))
            .collect(),
    );
    assert!(!awaiting.is_empty());
    // An hour after the newest wait began: every wait is past 30 minutes, none past a week.
    let newest: jiff::Timestamp = (awaiting.iter())
        .map(|(_, s)| s.parse::<jiff::Timestamp>().unwrap())
        .max()
        .unwrap();
    t.app.fixed_now = Some(newest + jiff::SignedDuration::from_hours(1));
    t.app.settings.ui.awaiting_after = Some(jiff::SignedDuration::from_hours(24 * 7));
    for _ in 0..before + 1 {
        t.keys("t");
    }
    assert!(
        t.status_line().ends_with(&format!("(1 of {before})")),
        "a wait under a week is not late: {:?}",
        t.status_line()
    );
    t.app.settings.ui.awaiting_after = Some(jiff::SignedDuration::from_mins(30));
    let all = before + awaiting.len();
    for _ in 0..before {
        t.keys("t");
    }
    let status = t.status_line();
    // The oldest wait first, as the queue lists them.
    let oldest = crosstalk::app::text::age(&awaiting[0].1, t.app.now);
    assert!(
        status.starts_with(&format!("awaiting a reply {oldest} ago: ")),
        "{status:?}"
    );
    assert!(
        status.ends_with(&format!("({} of {all})", before + 1)),
        "{status:?}"
    );
    assert_eq!(t.shown_message_id(), Some(awaiting[0].0.clone()));
}
