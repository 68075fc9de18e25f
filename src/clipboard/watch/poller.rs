//! The watch's thread: it waits for the clipboard to change and sends what is new. Where the
//! display server tells of each copy (X11's XFixes, Wayland's data-control) it waits for
//! that word and reads each copy at once, so copies made faster than any sensible polling
//! interval are all seen; elsewhere (no display server of either kind, a server without
//! XFixes, a clipboard read by a command, `[watch] events = false`) it polls every
//! `interval_ms`, as it always did. If the events stop (the connection breaks) it falls back
//! to polling and says so.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{Seen, WatchConfig, Watcher};
use crate::clipboard::Reader;

/// How the watch waits for the next copy; shown to the operator as it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waits {
    /// For the X server's word of each change of the CLIPBOARD's owner (XFixes).
    X11Events,
    /// For the Wayland compositor's `selection` event (data-control).
    WaylandEvents,
    /// Looking every interval.
    Polling(Duration),
}

impl std::fmt::Display for Waits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Waits::X11Events => f.write_str("X11 events"),
            Waits::WaylandEvents => f.write_str("Wayland events"),
            Waits::Polling(every) => write!(f, "polling every {} ms", every.as_millis()),
        }
    }
}

/// What the watch's thread sends.
#[derive(Debug)]
pub enum Polled {
    /// The first read is done: what the clipboard held then is the baseline, and anything
    /// copied from now on counts; the watch waits as said. Sent again, with
    /// [`Waits::Polling`], when the display server's events stop and the watch polls.
    Started(Waits),
    /// New text holding envelopes, raw, to be imported.
    Envelopes(String),
    /// New text without an envelope (ignored; told for the curious).
    NoEnvelope(usize),
    /// The clipboard cannot be read (any more): the thread has stopped.
    Unavailable(String),
}

/// What one read by an event source found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Contents {
    /// The text, as UTF-8 bytes (the owner's word for it).
    Text(Vec<u8>),
    /// Nothing, or nothing that is text.
    Empty,
    /// The owner would not hand over UTF-8 text directly: the ordinary reader, which also
    /// asks for the older text types, reads it.
    AskReader,
    /// The program that copied did not answer in time: this copy is not seen.
    NoAnswer,
}

/// Ends a blocking wait of the thread from outside (a Wayland watch's cancel handle).
pub(super) type Wake = Arc<Mutex<Option<Box<dyn Fn() + Send>>>>;

/// A display server's word of each copy, with the copy read at once (`x11.rs`,
/// `wayland.rs`; tests put in their own).
pub(super) trait Events {
    /// How the watch waits with it.
    fn waits(&self) -> Waits;
    /// What the clipboard holds now, for the baseline. An error: the source is broken.
    fn current(&mut self) -> Result<Contents, String>;
    /// Waits, up to `timeout` where the source can stop waiting by itself (else until the
    /// [`Wake`] it set up is called), for the next copy, read at once. `Ok(None)`: none came.
    fn next(&mut self, timeout: Duration) -> Result<Option<Contents>, String>;
}

/// Opens an event source, or says why there is none (no such server, no XFixes, no
/// data-control): the next one is tried, and polling when none opens.
pub(super) type Open = Box<dyn FnOnce(&Wake) -> Result<Box<dyn Events + Send>, String> + Send>;

/// A thread that watches the clipboard and sends what is new.
pub struct Poller {
    rx: Receiver<Polled>,
    /// What [`Poller::has_news`] took off the channel, handed out by the next drain.
    early: std::cell::RefCell<VecDeque<Polled>>,
    stop: Arc<AtomicBool>,
    wake: Wake,
    handle: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Poller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poller")
            .field("stop", &self.stop)
            .field("running", &self.handle.is_some())
            .finish_non_exhaustive()
    }
}

/// Reads in a row that may fail before the watch gives up (a clipboard owner that is
/// briefly away is not a dead display).
const FAILURES_TOLERATED: u32 = 8;

/// How long a wait for the next copy lasts before the stop flag is looked at again.
const STOP_LOOK: Duration = Duration::from_millis(200);

impl Poller {
    /// Starts watching with `reader` as `config` says: what the clipboard holds now is the
    /// baseline.
    pub fn start(
        reader: Reader,
        own: super::OwnCopies,
        options: crate::protocol::Options,
        config: &WatchConfig,
    ) -> Poller {
        let sources = if config.events {
            system_events(&reader)
        } else {
            Vec::new()
        };
        Poller::start_with(reader, own, options, config.interval(), sources)
    }

    /// Starts watching with the first of `sources` that opens, else by polling every
    /// `every`.
    pub(super) fn start_with(
        reader: Reader,
        own: super::OwnCopies,
        options: crate::protocol::Options,
        every: Duration,
        sources: Vec<Open>,
    ) -> Poller {
        let (tx, rx) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let wake: Wake = Arc::default();
        let (flag, woken) = (stop.clone(), wake.clone());
        let handle = std::thread::Builder::new()
            .name("clipboard-watch".into())
            .spawn(move || {
                let mut w = Watch {
                    reader,
                    watcher: Watcher::new(own, options),
                    stop: flag,
                    tx: &tx,
                };
                w.run(every, sources, &woken);
            })
            .ok();
        if handle.is_none() {
            // No thread: say so through the channel like any other failure.
            let (tx, rx2) = channel();
            let _ = tx.send(Polled::Unavailable("cannot start a thread".into()));
            return Poller {
                rx: rx2,
                early: Default::default(),
                stop,
                wake,
                handle: None,
            };
        }
        Poller {
            rx,
            early: Default::default(),
            stop,
            wake,
            handle,
        }
    }

    /// Whether something arrived since the last drain, without waiting: the app's loop asks
    /// between two ticks, so a copy is taken at once rather than at the next tick.
    pub(crate) fn has_news(&self) -> bool {
        let mut early = self.early.borrow_mut();
        if early.is_empty()
            && let Ok(p) = self.rx.try_recv()
        {
            early.push_back(p);
        }
        !early.is_empty()
    }

    /// What arrived since the last call, without waiting.
    pub fn drain(&self) -> Vec<Polled> {
        let mut out: Vec<Polled> = self.early.borrow_mut().drain(..).collect();
        out.extend(self.rx.try_iter());
        out
    }

    /// Waits up to `timeout` for the next arrival.
    pub fn next(&self, timeout: Duration) -> Option<Polled> {
        if let Some(p) = self.early.borrow_mut().pop_front() {
            return Some(p);
        }
        self.rx.recv_timeout(timeout).ok()
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Ok(wake) = self.wake.lock()
            && let Some(wake) = wake.as_ref()
        {
            wake();
        }
        // Not joined: a read stuck on a clipboard owner must not hold up quitting. The
        // thread sees the flag after its read and ends.
        drop(self.handle.take());
    }
}

/// The thread's state: how it reads, what it has seen, where it tells.
struct Watch<'a> {
    reader: Reader,
    watcher: Watcher,
    stop: Arc<AtomicBool>,
    tx: &'a Sender<Polled>,
}

/// Why an event source stopped.
enum Ended {
    /// The watch was stopped, or nobody listens any more.
    Done,
    /// The source broke (why): polling takes over.
    Broke(String),
}

/// The display servers' event sources this reader can wait on, in arboard's order
/// (Wayland's data-control first, then X11, XWayland's too): only where the reader reads the
/// system clipboard of this machine itself, not only through a command.
fn system_events(reader: &Reader) -> Vec<Open> {
    let local =
        reader.env.system_clipboard && super::super::reads_locally(&reader.config, &reader.env);
    if !local {
        return Vec::new();
    }
    #[cfg(all(
        unix,
        not(any(target_os = "macos", target_os = "android", target_os = "emscripten"))
    ))]
    let sources = display_events(&reader.env);
    #[cfg(not(all(
        unix,
        not(any(target_os = "macos", target_os = "android", target_os = "emscripten"))
    )))]
    let sources = Vec::new();
    sources
}

/// Wayland's source where `WAYLAND_DISPLAY` is set, then X11's where `DISPLAY` is.
#[cfg(all(
    unix,
    not(any(target_os = "macos", target_os = "android", target_os = "emscripten"))
))]
fn display_events(env: &crate::clipboard::Env) -> Vec<Open> {
    let mut sources: Vec<Open> = Vec::new();
    if env.wayland_display.is_some() {
        sources.push(Box::new(|wake: &Wake| {
            let (source, cancel) = super::wayland::Wayland::open()?;
            if let Ok(mut slot) = wake.lock() {
                *slot = Some(Box::new(move || cancel.cancel()));
            }
            Ok(Box::new(source) as Box<dyn Events + Send>)
        }));
    }
    if let Some(display) = env.display.as_ref().and_then(|d| d.to_str()) {
        let display = display.to_owned();
        sources.push(Box::new(move |_: &Wake| {
            Ok(Box::new(super::x11::X11::open(&display)?) as Box<dyn Events + Send>)
        }));
    }
    sources
}

impl Watch<'_> {
    fn run(&mut self, every: Duration, sources: Vec<Open>, wake: &Wake) {
        let mut started = false;
        for open in sources {
            let source = match open(wake) {
                Ok(source) => source,
                Err(why) => {
                    tracing::debug!(%why, "no clipboard events here");
                    continue;
                }
            };
            let waits = source.waits();
            match self.events(source, &mut started) {
                Ended::Done => return,
                Ended::Broke(why) => {
                    tracing::warn!(%why, %waits, "clipboard events stopped");
                }
            }
            if started {
                // What it saw stays seen: polling goes on from there.
                break;
            }
        }
        self.poll(every, started);
    }

    /// Judges `text` and sends what is new; false when nobody listens any more.
    fn tell(&mut self, text: Option<String>) -> bool {
        let sent = match self.watcher.observe(text.as_deref()) {
            Seen::Same | Seen::OwnCopy => Ok(()),
            Seen::NoEnvelope { bytes } => self.tx.send(Polled::NoEnvelope(bytes)),
            Seen::Envelopes { .. } => self.tx.send(Polled::Envelopes(text.unwrap_or_default())),
        };
        sent.is_ok()
    }

    /// Takes `text` as the baseline and says how the watch waits; false when nobody
    /// listens.
    fn begin(&mut self, text: Option<&str>, waits: Waits, started: &mut bool) -> bool {
        self.watcher.baseline(text);
        *started = true;
        self.tx.send(Polled::Started(waits)).is_ok()
    }

    /// What an event source read, as text; `None` when it read nothing. `Err(())`: the
    /// owner did not answer, so the copy is not judged at all.
    fn text_of(&mut self, contents: Contents) -> Result<Option<String>, ()> {
        match contents {
            Contents::Text(bytes) if bytes.is_empty() => Ok(None),
            Contents::Text(bytes) => Ok(Some(match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            })),
            Contents::Empty => Ok(None),
            Contents::AskReader => match self.reader.read() {
                Ok(text) => Ok(text),
                Err(why) => {
                    tracing::debug!(%why, "clipboard read after a change failed");
                    Err(())
                }
            },
            Contents::NoAnswer => {
                tracing::debug!("the clipboard's owner did not answer: a copy not seen");
                Err(())
            }
        }
    }

    /// Watches through `source` until it breaks or the watch stops. After the baseline the
    /// source waits and reads on a thread of its own, and this one judges what it read:
    /// judging (a digest, a look at the own copies, a parse) takes time during which the
    /// next copy's event would wait unanswered, and a copy not asked for before the next one
    /// replaces it is lost.
    fn events(&mut self, mut source: Box<dyn Events + Send>, started: &mut bool) -> Ended {
        if self.stop.load(Ordering::Relaxed) {
            return Ended::Done;
        }
        // A source listens before it reads this baseline: nothing copied from now on can
        // slip between the two.
        let first = match source.current() {
            Ok(c) => self.text_of(c).unwrap_or_default(),
            Err(why) => return Ended::Broke(why),
        };
        if !self.begin(first.as_deref(), source.waits(), started) {
            return Ended::Done;
        }
        let (read, copies) = channel::<Result<Contents, String>>();
        let stop = self.stop.clone();
        let spawned = std::thread::Builder::new()
            .name("clipboard-events".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let next = match source.next(STOP_LOOK) {
                        Ok(Some(c)) => Ok(c),
                        Ok(None) => continue,
                        Err(why) => Err(why),
                    };
                    let broke = next.is_err();
                    if read.send(next).is_err() || broke {
                        return;
                    }
                }
            });
        if let Err(e) = spawned {
            return Ended::Broke(format!("cannot start a thread: {e}"));
        }
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ended::Done;
            }
            let contents = match copies.recv_timeout(STOP_LOOK) {
                Ok(Ok(c)) => c,
                Ok(Err(why)) => return Ended::Broke(why),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Ended::Done,
            };
            if let Ok(text) = self.text_of(contents)
                && !self.tell(text)
            {
                return Ended::Done;
            }
        }
    }

    /// Reads every `every`. `started`: an event source read the baseline already (and
    /// broke), so this goes on from what it saw.
    fn poll(&mut self, every: Duration, started: bool) {
        if started {
            if self
                .tx
                .send(Polled::Started(Waits::Polling(every)))
                .is_err()
            {
                return;
            }
        } else {
            match self.reader.read() {
                Ok(text) => {
                    let mut started = false;
                    if !self.begin(text.as_deref(), Waits::Polling(every), &mut started) {
                        return;
                    }
                }
                Err(why) => {
                    let _ = self.tx.send(Polled::Unavailable(why));
                    return;
                }
            }
        }
        let mut failures = 0;
        loop {
            if sleep_unless_stopped(every, &self.stop) {
                return;
            }
            match self.reader.read() {
                Ok(text) => {
                    failures = 0;
                    if !self.tell(text) {
                        return;
                    }
                }
                Err(why) => {
                    failures += 1;
                    tracing::debug!(%why, failures, "clipboard watch read failed");
                    if failures >= FAILURES_TOLERATED {
                        let _ = self.tx.send(Polled::Unavailable(why));
                        return;
                    }
                }
            }
        }
    }
}

/// Sleeps `d` in short steps; whether the watch was stopped meanwhile.
fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) -> bool {
    let step = Duration::from_millis(50);
    let mut left = d;
    while !left.is_zero() {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        let s = left.min(step);
        std::thread::sleep(s);
        left -= s;
    }
    stop.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clipboard::{ClipboardConfig, Env};

    const ENVELOPE: &str = include_str!("../../../assets/examples/v11-request.crosstalk");

    /// A distinct envelope for each `n` (its message id differs).
    fn numbered(n: usize) -> String {
        ENVELOPE.replace(
            "01J9J3DBC4N7P2Q3R5S7T9V1V2",
            &format!("01J9J3DBC4N7P2Q3R5S{n:07}"),
        )
    }

    /// A reader of `file` through a command (no display is touched).
    fn reader_of(file: &std::path::Path) -> Reader {
        Reader {
            config: ClipboardConfig {
                paste_command: Some(format!("cat '{}'", file.display())),
                ..Default::default()
            },
            env: Env::default(),
            system: None,
        }
    }

    /// A display server that tells of the copies in `copies`, one per wait, then breaks.
    struct Scripted {
        now: Contents,
        copies: VecDeque<Contents>,
    }

    impl Events for Scripted {
        fn waits(&self) -> Waits {
            Waits::X11Events
        }
        fn current(&mut self) -> Result<Contents, String> {
            Ok(std::mem::replace(&mut self.now, Contents::Empty))
        }
        fn next(&mut self, _: Duration) -> Result<Option<Contents>, String> {
            self.copies
                .pop_front()
                .map(Some)
                .ok_or_else(|| "the connection broke".to_owned())
        }
    }

    fn text(s: &str) -> Contents {
        Contents::Text(s.as_bytes().to_vec())
    }

    fn next(p: &Poller) -> Polled {
        p.next(Duration::from_secs(10))
            .expect("the watch said nothing")
    }

    #[test]
    fn every_copy_an_event_source_reads_is_judged_and_polling_takes_over_when_it_breaks() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("clipboard.txt");
        // What the reader finds, when asked and when polling: the last copy the events
        // bring, so not new again then.
        std::fs::write(&file, "a chat answer").unwrap();
        let own = super::super::OwnCopies::default();
        own.record(&numbered(0));
        // A chat answer, crosstalk's own copy, the same text twice, an owner that does not
        // answer, one that offers no UTF-8 (the reader reads it): none of them is an
        // envelope to import.
        let mut copies: VecDeque<Contents> = [
            text("a chat answer"),
            text(&numbered(0)),
            text(&numbered(1)),
            text(&numbered(1)),
            Contents::NoAnswer,
            Contents::AskReader,
        ]
        .into();
        copies.extend((2..=100).map(|n| text(&numbered(n))));
        copies.push_back(text("a chat answer"));
        let source = Scripted {
            now: text(ENVELOPE),
            copies,
        };
        let open: Open = Box::new(move |_| Ok(Box::new(source) as Box<dyn Events + Send>));
        let p = Poller::start_with(
            reader_of(&file),
            own,
            crate::protocol::Options::default(),
            Duration::from_millis(50),
            vec![open],
        );
        assert!(matches!(next(&p), Polled::Started(Waits::X11Events)));
        let mut imported = Vec::new();
        let mut others = 0;
        loop {
            match next(&p) {
                Polled::Envelopes(t) => imported.push(t),
                Polled::NoEnvelope(_) => others += 1,
                Polled::Started(waits) => {
                    assert_eq!(waits, Waits::Polling(Duration::from_millis(50)));
                    break;
                }
                Polled::Unavailable(why) => panic!("{why}"),
            }
        }
        assert_eq!(
            others, 3,
            "the chat answer, each time it followed something else"
        );
        let expected: Vec<String> = (1..=100).map(numbered).collect();
        assert_eq!(
            imported, expected,
            "each copy once, in order, the own copy skipped"
        );
        // Polling goes on from what the events saw: the last copy is not new again, and
        // the next one is.
        std::thread::sleep(Duration::from_millis(200));
        assert!(p.drain().is_empty());
        std::fs::write(&file, numbered(101)).unwrap();
        match next(&p) {
            Polled::Envelopes(t) => assert_eq!(t, numbered(101)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn without_an_event_source_the_watch_polls_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("clipboard.txt");
        std::fs::write(&file, ENVELOPE).unwrap();
        let none: Open = Box::new(|_| Err("the X server has no XFixes extension".to_owned()));
        let p = Poller::start_with(
            reader_of(&file),
            super::super::OwnCopies::default(),
            crate::protocol::Options::default(),
            Duration::from_millis(50),
            vec![none],
        );
        match next(&p) {
            Polled::Started(waits) => assert_eq!(waits.to_string(), "polling every 50 ms"),
            other => panic!("{other:?}"),
        }
        std::fs::write(&file, numbered(1)).unwrap();
        assert!(matches!(next(&p), Polled::Envelopes(t) if t == numbered(1)));
    }

    #[test]
    fn a_reader_through_a_command_only_has_no_event_source() {
        let dir = tempfile::tempdir().unwrap();
        // No display, or a remote one: the command is all there is.
        assert!(system_events(&reader_of(&dir.path().join("c"))).is_empty());
        let remote = Reader {
            env: Env {
                display: Some(":0".into()),
                ssh_tty: Some("/dev/pts/1".into()),
                system_clipboard: true,
                ..Env::default()
            },
            ..reader_of(&dir.path().join("c"))
        };
        assert!(system_events(&remote).is_empty());
        assert_eq!(Waits::X11Events.to_string(), "X11 events");
    }
}
