//! Personal data in the composer, driven by actions: a reply whose body holds an e-mail
//! address in a thread without explicit consent is copied only after a second C-y; M-r
//! redacts it and declares `PII: redacted`; a thread whose consent is granted explicitly
//! copies at once, and neither an `implicit` grant nor a `Consent` value that is not
//! understood counts as one.

use crate::helpers::support;

use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use support::{harness, store_in};

const NONE: KeyModifiers = KeyModifiers::NONE;

fn ids(n: usize) -> Vec<String> {
    let g = crosstalk::ids::IdGenerator::new();
    (0..n).map(|_| g.next_id()).collect()
}

fn request(thread: &str, id: &str, privacy: &str) -> String {
    format!(
        "[[CLAUDE→op v1]]\nuser: kalle\nthread: {thread}\nmessage: {id}\ncontext: privacy flow\n\
         intent: REQUEST\n\n{privacy}\nbody: |\n  Who should we write to?\nsig: none\n[[END]]\n"
    )
}

fn reply_with_email(t: &mut support::Harness) {
    t.keys("r");
    assert!(t.composing());
    t.keys("Write to ada@example.org today.");
}

#[test]
fn personal_data_without_consent_needs_a_second_copy_and_redaction_clears_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 120, 40);
    let v = ids(2);
    t.act(crosstalk::app::Action::Paste(request(&v[0], &v[1], "")));
    t.key(KeyCode::Enter, NONE);

    reply_with_email(&mut t);
    let copies = t.copies().len();
    t.ctrl('y');
    assert!(t.composing(), "not copied yet");
    assert_eq!(t.copies().len(), copies);
    let status = t.status_line();
    assert!(
        status.contains("1 e-mail address") && status.contains("states no consent"),
        "{status}"
    );
    // A second C-y on the same text copies it.
    t.ctrl('y');
    assert!(!t.composing(), "{:?}", t.status_line());
    assert!(t.copies().pop().unwrap().contains("ada@example.org"));

    // Redacted: placeholders, PII: redacted, and copied at the first C-y.
    t.keys("k");
    reply_with_email(&mut t);
    t.key(KeyCode::Char('r'), KeyModifiers::ALT);
    assert!(
        t.status_line().contains("Redacted 1 e-mail address"),
        "{:?}",
        t.status_line()
    );
    let c = t.app.composer.as_ref().unwrap();
    assert!(c.form.body.contains("[EMAIL]"), "{}", c.form.body);
    assert!(c.form.meta.contains("PII: redacted"), "{}", c.form.meta);
    t.ctrl('y');
    assert!(!t.composing(), "{:?}", t.status_line());
    let copy = t.copies().pop().unwrap();
    assert!(copy.contains("Write to [EMAIL] today."), "{copy}");
    assert!(copy.contains("meta: privacy\nPII: redacted"), "{copy}");
    assert!(!copy.contains("ada@example.org"));
}

#[test]
fn a_thread_with_consent_in_force_copies_personal_data_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 120, 40);
    let v = ids(2);
    t.act(crosstalk::app::Action::Paste(request(
        &v[0],
        &v[1],
        "meta: privacy\nPII: none\nConsent: explicit_yes\nScope: pii\nExpires: 2999-01-01T00:00Z\n",
    )));
    t.key(KeyCode::Enter, NONE);
    reply_with_email(&mut t);
    t.ctrl('y');
    assert!(!t.composing(), "{:?}", t.status_line());
    assert!(t.copies().pop().unwrap().contains("ada@example.org"));
}

/// The warning a first C-y of a reply with an e-mail address gives in a thread stating
/// `privacy`, or `None` when it copied at once. `own` replaces the reply's META first.
fn first_copy_warning(privacy: &str, own: Option<&str>) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 120, 40);
    // The wall clock, as outside tests: the reply's own statement is then the thread's
    // latest, and the grants dated 2025 are in the past.
    t.app.fixed_now = None;
    let v = ids(2);
    t.act(crosstalk::app::Action::Paste(request(
        &v[0], &v[1], privacy,
    )));
    t.key(KeyCode::Enter, NONE);
    reply_with_email(&mut t);
    if let Some(meta) = own {
        t.app.composer.as_mut().unwrap().set_meta("the META", meta);
    }
    let copies = t.copies().len();
    t.ctrl('y');
    if t.app.composer.is_none() {
        assert_eq!(t.copies().len(), copies + 1);
        return None;
    }
    assert_eq!(t.copies().len(), copies, "not copied at the first C-y");
    Some(t.status_line())
}

#[test]
fn implicit_or_unreadable_consent_does_not_cover_personal_data() {
    let privacy = |consent: &str| format!("meta: privacy\nPII: none\nConsent: {consent}\n");
    let warning = first_copy_warning(&privacy("implicit"), None).expect("a warning");
    assert!(
        warning.contains(
            "the thread's consent is implicit only (personal data needs explicit consent)"
        ),
        "{warning}"
    );
    for value in ["no", "denied", "explicit_yes (verbal)"] {
        let warning = first_copy_warning(&privacy(value), None).expect("a warning");
        assert!(
            warning.contains(&format!(
                "the thread's consent is not understood (`Consent: {value}`)"
            )),
            "{warning}"
        );
    }
    let warning = first_copy_warning(&privacy("explicit_no (patient refused)"), None);
    assert!(warning.unwrap().contains("the thread's consent is denied"));
    // Explicit consent in any spelling copies at once.
    for value in [
        "explicit_yes",
        "Explicit-Yes 2025-10-09t16:00z",
        "opt-in_2025-10-09",
    ] {
        assert_eq!(first_copy_warning(&privacy(value), None), None, "{value}");
    }
    // The reply's own statement is the thread's latest once stored: it decides.
    let warning = first_copy_warning(
        &privacy("explicit_yes"),
        Some("meta: privacy\nPII: present\nConsent: none"),
    );
    assert!(
        warning
            .unwrap()
            .contains("this envelope's own consent is not understood (`Consent: none`)")
    );
    let own_grant = Some("meta: privacy\nPII: present\nConsent: explicit_yes");
    assert_eq!(first_copy_warning(&privacy("implicit"), own_grant), None);
}

/// A received envelope for someone else whose body holds an e-mail address, in a thread
/// stating `privacy`.
fn relayed_with_email(thread: &str, id: &str, privacy: &str) -> String {
    format!(
        "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nthread: {thread}\nmessage: {id}\n\
         context: privacy relay\nintent: REQUEST\n\n{privacy}\nbody: |\n  \
         Please write to ada@example.org.\nsig: none\n[[END]]\n"
    )
}

#[test]
fn relaying_personal_data_without_consent_needs_a_second_copy() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 120, 40);
    // The wall clock: the consent below expired in 2025.
    t.app.fixed_now = None;
    let v = ids(4);
    // Consent that has expired covers nothing: the first y only says so.
    t.act(crosstalk::app::Action::Paste(relayed_with_email(
        &v[0],
        &v[1],
        "meta: privacy\nPII: present\nConsent: explicit_yes_2025-10-09T16:00Z\n\
         Expires: 2025-10-10T16:00Z\n",
    )));
    t.key(KeyCode::Enter, NONE);
    let copies = t.copies().len();
    t.keys("y");
    assert_eq!(t.copies().len(), copies, "not copied at the first y");
    let status = t.status_line();
    assert!(
        status.contains(
            "Not copied: its body holds 1 e-mail address and the thread's consent is expired"
        ) && status.contains("y again copies it anyway"),
        "{status}"
    );
    assert_eq!(
        t.app
            .store
            .delivery(&v[1])
            .unwrap()
            .unwrap()
            .state
            .as_deref(),
        Some("to_relay")
    );
    // Any other key forgets the warning, and the line no longer says the next press copies.
    t.keys("H");
    assert_eq!(t.status_line(), "Copy not confirmed: y asks again.");
    t.keys("H");
    // Moving away and back: y asks again.
    t.keys("jky");
    assert_eq!(t.copies().len(), copies, "{:?}", t.status_line());
    assert!(
        t.status_line().contains("Not copied"),
        "{:?}",
        t.status_line()
    );
    // The second y in a row on the same message copies it and records the relay.
    t.keys("y");
    assert_eq!(t.copies().len(), copies + 1, "{:?}", t.status_line());
    assert!(t.copies().pop().unwrap().contains("ada@example.org"));
    let d = t.app.store.delivery(&v[1]).unwrap().unwrap();
    assert!(d.relayed.is_some(), "{d:?}");
    assert_eq!(
        d.state.as_deref(),
        Some("awaiting"),
        "a REQUEST awaits its answer"
    );

    // Explicit consent in force: copied at the first y.
    t.act(crosstalk::app::Action::Paste(relayed_with_email(
        &v[2],
        &v[3],
        "meta: privacy\nPII: present\nConsent: explicit_yes\nExpires: 2999-01-01T00:00Z\n",
    )));
    t.key(KeyCode::Enter, NONE);
    let copies = t.copies().len();
    t.keys("y");
    assert_eq!(t.copies().len(), copies + 1, "{:?}", t.status_line());
}

#[test]
fn the_store_holds_back_personal_data_its_thread_does_not_consent_to() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    let v = ids(6);
    let cases = [
        ("", Some("the thread states no consent")),
        (
            "meta: privacy\nPII: present\nConsent: implicit\n",
            Some("the thread's consent is implicit only"),
        ),
        ("meta: privacy\nPII: present\nConsent: explicit_yes\n", None),
    ];
    for (i, (privacy, held)) in cases.iter().enumerate() {
        let (thread, id) = (&v[2 * i], &v[2 * i + 1]);
        store
            .import_text(
                "t",
                &relayed_with_email(thread, id, privacy),
                &Default::default(),
            )
            .unwrap();
        let m = store.message(id).unwrap().unwrap();
        let why = store.pii_held(&m, jiff::Timestamp::now()).unwrap();
        match held {
            Some(words) => {
                let why = why.expect("held back");
                assert!(
                    why.starts_with("its body holds 1 e-mail address and "),
                    "{why}"
                );
                assert!(why.contains(words), "{why}");
            }
            None => assert_eq!(why, None),
        }
        // The hop (`crosstalk watch`, a companion) leaves it for the operator too.
        let book = crosstalk::contacts::AddressBook::default();
        let carrier = crosstalk::transport::route::Carrier::now(&book, None);
        let hop = crosstalk::transport::route::put_up(&store, id, None, &carrier).unwrap();
        match (held, hop) {
            (Some(_), Some(crosstalk::transport::route::HopPlan::Refuse { reason })) => {
                assert!(
                    reason.starts_with("its body holds 1 e-mail address"),
                    "{reason}"
                );
            }
            (None, Some(crosstalk::transport::route::HopPlan::Relay { .. })) => {}
            (_, other) => panic!("unexpected hop for case {i}: {other:?}"),
        }
    }
}

#[test]
fn copying_a_thread_with_personal_data_without_consent_needs_a_second_copy() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 120, 40);
    let v = ids(2);
    t.act(crosstalk::app::Action::Paste(relayed_with_email(
        &v[0], &v[1], "",
    )));
    t.key(KeyCode::Enter, NONE);
    let copies = t.copies().len();
    t.keys("Y");
    assert_eq!(t.copies().len(), copies, "not copied at the first Y");
    let status = t.status_line();
    assert!(
        status.contains("Not copied: 1 of its envelopes hold personal data without consent")
            && status.contains("the thread states no consent")
            && status.contains("Y again copies the thread anyway"),
        "{status}"
    );
    t.keys("Y");
    assert_eq!(t.copies().len(), copies + 1, "{:?}", t.status_line());
    assert!(t.copies().pop().unwrap().contains("ada@example.org"));
}

/// Whether a consent has expired is decided on the app's clock (the one every view and the
/// queue read), not on the wall clock read again in the middle of an action: at a time before
/// `Expires`, the same envelope copies at once, by `y` on it and by `Y` on its thread.
#[test]
fn consent_expiry_is_judged_on_the_apps_clock() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 120, 40);
    let v = ids(2);
    let at = |s: &str| s.parse::<jiff::Timestamp>().unwrap();
    t.act(crosstalk::app::Action::Paste(relayed_with_email(
        &v[0],
        &v[1],
        "meta: privacy\nPII: present\nConsent: explicit_yes_2025-10-09T16:00Z\n\
         Expires: 2025-10-10T16:00Z\n",
    )));
    t.key(KeyCode::Enter, NONE);
    // A day after the grant, before it expires: in force.
    t.app.fixed_now = Some(at("2025-10-10T12:00:00Z"));
    let copies = t.copies().len();
    t.keys("y");
    assert_eq!(t.copies().len(), copies + 1, "{:?}", t.status_line());
    t.keys("Y");
    assert_eq!(t.copies().len(), copies + 2, "{:?}", t.status_line());
    // After it expired: held back at the first press.
    t.app.fixed_now = Some(at("2025-10-11T12:00:00Z"));
    t.keys("y");
    assert_eq!(t.copies().len(), copies + 2, "{:?}", t.status_line());
    assert!(
        t.status_line().contains("the thread's consent is expired"),
        "{:?}",
        t.status_line()
    );
}

/// `M-r` is one step of undo: `C-z` brings back the body and the META it had (no
/// `PII: redacted`), `C-r` redacts again; what was typed after it is undone first, from
/// either box; a box changed since holds the redaction until that change is undone; the
/// draft saved is what the screen shows.
#[test]
fn a_redaction_is_undone_and_redone_as_one_step() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 120, 40);
    let v = ids(2);
    t.act(crosstalk::app::Action::Paste(request(&v[0], &v[1], "")));
    t.key(KeyCode::Enter, NONE);
    reply_with_email(&mut t);
    let form = |t: &support::Harness| {
        let c = t.app.composer.as_ref().unwrap();
        (c.form.body.clone(), c.form.meta.clone())
    };
    let typed = form(&t);
    assert_eq!(typed.0, "Write to ada@example.org today.");
    let alt = |t: &mut support::Harness, c| t.key(KeyCode::Char(c), KeyModifiers::ALT);

    alt(&mut t, 'r');
    let redacted = form(&t);
    assert_eq!(redacted.0, "Write to [EMAIL] today.");
    assert!(redacted.1.contains("PII: redacted"), "{}", redacted.1);
    t.ctrl('z');
    assert_eq!(form(&t), typed, "body and META back as typed");
    assert!(
        t.status_line().starts_with("Undid the redaction"),
        "{:?}",
        t.status_line()
    );
    // Undo goes on into what was typed before it.
    t.ctrl('z');
    assert_eq!(form(&t).0, "Write to ada@example.org today");
    t.ctrl('r');
    t.ctrl('r');
    assert_eq!(form(&t), redacted, "redone: body and header");
    let draft = t.app.store.drafts().unwrap();
    assert!(draft[0].form.contains("[EMAIL]"), "{draft:?}");
    t.ctrl('z');
    let draft = t.app.store.drafts().unwrap();
    assert!(draft[0].form.contains("ada@example.org"), "{draft:?}");
    assert!(!draft[0].form.contains("PII: redacted"), "{draft:?}");

    // Typed after the redaction: undone first, then the redaction, from the META box too.
    t.ctrl('r');
    t.keys(" Thanks");
    t.key(KeyCode::Tab, NONE);
    for _ in 0..4 {
        t.key(KeyCode::Tab, NONE);
    }
    assert_eq!(
        t.app.composer.as_ref().unwrap().focus,
        crosstalk::app::writing::composer::Field::Meta
    );
    t.ctrl('z');
    assert_eq!(
        form(&t).0,
        "Write to [EMAIL] today. Thanks",
        "the body was typed in after it: the redaction waits"
    );
    assert!(
        t.status_line().contains("the body was changed after it"),
        "{:?}",
        t.status_line()
    );
    t.key(KeyCode::Tab, NONE);
    // " Thanks", a word typed, is one step.
    t.ctrl('z');
    assert_eq!(
        form(&t),
        redacted,
        "what was typed after the redaction is undone"
    );
    t.ctrl('z');
    assert_eq!(form(&t), typed, "then the redaction");
    assert!(t.screen().contains("ada@example.org"), "{}", t.screen());
}
