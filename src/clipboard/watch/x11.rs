//! X11: the XFixes extension sends an event each time the CLIPBOARD selection changes owner
//! (`XFixesSelectSelectionInput`), so the watch waits for that instead of polling, and asks
//! for the new contents at once, on the connection the event came on.
//!
//! At once matters: an X clipboard is not a store but a promise by its owner, the program
//! that copied, to hand the text over when asked. When the next copy takes the selection the
//! previous owner lets go (`xclip` exits), and its text can no longer be had from anyone. So
//! each owner change is asked about (`ConvertSelection`) as soon as its event is read, even
//! while earlier answers are still on their way: the X server hands a request to whoever owns
//! the selection when the request arrives, and an owner answers what it was asked before it
//! hears it lost the selection. Each request names a property of its own (a small ring of
//! them), so answers that cross cannot overwrite each other; the texts are handed on in the
//! order of the copies. Waiting for one answer before asking the next would lose every copy
//! replaced while an answer was on its way, which on a busy machine is most of a burst.

use std::collections::VecDeque;
use std::os::fd::AsFd as _;
use std::time::{Duration, Instant};

use x11rb::connection::{Connection as _, RequestConnection as _};
use x11rb::protocol::Event;
use x11rb::protocol::xfixes::{self, ConnectionExt as _, SelectionEventMask};
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConnectionExt as _, CreateWindowAux, EventMask, Property, Time, Window,
    WindowClass,
};
use x11rb::rust_connection::RustConnection;

use super::poller::{Contents, Events, Waits};

x11rb::atom_manager! {
    /// The atoms the watch asks for.
    Atoms: AtomsCookie {
        CLIPBOARD,
        UTF8_STRING,
        INCR,
    }
}

/// How long an owner gets to answer a request, and then each part of an incremental one: an
/// owner that hangs must not stop the watch for good (the copies after it are asked about
/// meanwhile, and handed on once it is given up).
const ANSWER_WAIT: Duration = Duration::from_secs(2);

/// Requests that may be on their way at once (`CROSSTALK_WATCH_0` … on the watch's window).
/// More owner changes than this before the first is answered are copies replaced faster than
/// any reader could get them: they are asked about once, when a property is free.
const IN_FLIGHT: usize = 16;

/// Where one request stands.
enum Answer {
    /// Asked; no answer yet.
    Asked,
    /// The owner sends the text in parts (INCR): what came so far.
    Parts(Vec<u8>),
    /// Done.
    Done(Contents),
}

/// One request for the CLIPBOARD's text, made for one owner change.
struct Request {
    property: Atom,
    answer: Answer,
    /// When it is given up (moved on with each part of an incremental answer).
    deadline: Instant,
}

/// A connection to the X server that hears of every change of the CLIPBOARD's owner.
pub(super) struct X11 {
    conn: RustConnection,
    window: Window,
    atoms: Atoms,
    /// The properties no request uses now; the one freed last is used last, so a late
    /// answer to a request given up rarely lands where a newer request waits.
    free: VecDeque<Atom>,
    /// The requests in the order of the owner changes they were made for.
    asked: VecDeque<Request>,
    /// Owner changes not asked about yet, all properties being in use: one request, once a
    /// property is free, stands for them all (only the latest text can be had by then).
    owed: u32,
}

impl X11 {
    /// Connects to `display` and asks for the CLIPBOARD's owner changes. An error (no
    /// server, no XFixes) says why, for the log: the watch polls then.
    pub(super) fn open(display: &str) -> Result<X11, String> {
        let (conn, screen) = x11rb::connect(Some(display)).map_err(|e| e.to_string())?;
        let e = |e: &dyn std::fmt::Display| e.to_string();
        if conn
            .extension_information(xfixes::X11_EXTENSION_NAME)
            .map_err(|x| e(&x))?
            .is_none()
        {
            return Err("the X server has no XFixes extension".into());
        }
        // XFixes answers nothing else before its version is asked.
        conn.xfixes_query_version(5, 0)
            .map_err(|x| e(&x))?
            .reply()
            .map_err(|x| e(&x))?;
        let atoms = Atoms::new(&conn)
            .map_err(|x| e(&x))?
            .reply()
            .map_err(|x| e(&x))?;
        let cookies = (0..IN_FLIGHT)
            .map(|i| conn.intern_atom(false, format!("CROSSTALK_WATCH_{i}").as_bytes()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|x| e(&x))?;
        let mut free = VecDeque::with_capacity(IN_FLIGHT);
        for c in cookies {
            free.push_back(c.reply().map_err(|x| e(&x))?.atom);
        }
        let root = conn
            .setup()
            .roots
            .get(screen)
            .ok_or("the X server has no such screen")?;
        let (root, visual) = (root.root, root.root_visual);
        let window = conn.generate_id().map_err(|x| e(&x))?;
        // Never mapped: it only receives the answers, and (for an incremental transfer)
        // hears of each part written to its properties.
        conn.create_window(
            x11rb::COPY_DEPTH_FROM_PARENT,
            window,
            root,
            0,
            0,
            1,
            1,
            0,
            WindowClass::INPUT_OUTPUT,
            visual,
            &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
        )
        .map_err(|x| e(&x))?
        .check()
        .map_err(|x| e(&x))?;
        conn.xfixes_select_selection_input(
            window,
            atoms.CLIPBOARD,
            SelectionEventMask::SET_SELECTION_OWNER,
        )
        .map_err(|x| e(&x))?
        .check()
        .map_err(|x| e(&x))?;
        Ok(X11 {
            conn,
            window,
            atoms,
            free,
            asked: VecDeque::new(),
            owed: 0,
        })
    }

    /// Asks the CLIPBOARD's owner for its text now, into a free property; with none free,
    /// owes the request.
    fn ask(&mut self) -> Result<(), String> {
        let Some(property) = self.free.pop_front() else {
            self.owed = self.owed.saturating_add(1);
            return Ok(());
        };
        // The current owner's text, whoever that is when the request arrives (CurrentTime,
        // as arboard and xclip ask: owners that check times accept it).
        self.conn
            .convert_selection(
                self.window,
                self.atoms.CLIPBOARD,
                self.atoms.UTF8_STRING,
                property,
                Time::CURRENT_TIME,
            )
            .map_err(|e| e.to_string())?;
        self.conn.flush().map_err(|e| e.to_string())?;
        self.asked.push_back(Request {
            property,
            answer: Answer::Asked,
            deadline: Instant::now() + ANSWER_WAIT,
        });
        Ok(())
    }

    /// The oldest request's contents, once it is answered or given up; its property is
    /// free again, and an owed request is made with it.
    fn take_answered(&mut self) -> Result<Option<Contents>, String> {
        let now = Instant::now();
        for r in self.asked.iter_mut() {
            if !matches!(r.answer, Answer::Done(_)) && now >= r.deadline {
                tracing::debug!("the clipboard's owner did not answer in time");
                r.answer = Answer::Done(Contents::NoAnswer);
            }
        }
        if !matches!(
            self.asked.front(),
            Some(Request {
                answer: Answer::Done(_),
                ..
            })
        ) {
            return Ok(None);
        }
        let Some(Request {
            property,
            answer: Answer::Done(contents),
            ..
        }) = self.asked.pop_front()
        else {
            return Ok(None);
        };
        self.free.push_back(property);
        if self.owed > 0 {
            tracing::debug!(
                replaced = self.owed - 1,
                "copies replaced before they could be asked for"
            );
            self.owed = 0;
            self.ask()?;
        }
        Ok(Some(contents))
    }

    /// Handles every event already read or readable without waiting.
    fn handle_queued(&mut self) -> Result<(), String> {
        while let Some(event) = self.conn.poll_for_event().map_err(|e| e.to_string())? {
            self.handle(event)?;
        }
        Ok(())
    }

    /// One event: an owner change is asked about, an answer or a part of one is taken.
    fn handle(&mut self, event: Event) -> Result<(), String> {
        match event {
            Event::XfixesSelectionNotify(n) if n.selection == self.atoms.CLIPBOARD => self.ask(),
            Event::SelectionNotify(n)
                if n.requestor == self.window && n.selection == self.atoms.CLIPBOARD =>
            {
                if n.property == u32::from(AtomEnum::NONE) {
                    // Refused (no UTF-8 text, or no owner any more). A refusal does not say
                    // which request it answers: the oldest unanswered one is taken.
                    if let Some(r) = self
                        .asked
                        .iter_mut()
                        .find(|r| matches!(r.answer, Answer::Asked))
                    {
                        r.answer = Answer::Done(Contents::AskReader);
                    }
                    return Ok(());
                }
                self.take_property(n.property, false)
            }
            Event::PropertyNotify(p)
                if p.window == self.window && p.state == Property::NEW_VALUE =>
            {
                self.take_property(p.atom, true)
            }
            Event::Error(e) => {
                tracing::debug!(?e, "X error on the clipboard watch");
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Reads (and deletes) `property` for the request that uses it: the whole answer, the
    /// announcement of an incremental one, or (`part`) its next part.
    fn take_property(&mut self, property: Atom, part: bool) -> Result<(), String> {
        let Some(i) = self.asked.iter().position(|r| {
            r.property == property
                && match r.answer {
                    Answer::Asked => !part,
                    Answer::Parts(_) => part,
                    Answer::Done(_) => false,
                }
        }) else {
            // The owner's own writes before its answer, a request given up, or not ours.
            return Ok(());
        };
        // Any type, so that the property is deleted whatever it holds: for an incremental
        // transfer the deletion is what asks the owner for the next part.
        let reply = self
            .conn
            .get_property(true, self.window, property, AtomEnum::ANY, 0, u32::MAX / 4)
            .map_err(|e| e.to_string())?
            .reply()
            .map_err(|e| e.to_string())?;
        let (utf8, incr) = (self.atoms.UTF8_STRING, self.atoms.INCR);
        let r = &mut self.asked[i];
        r.answer = match std::mem::replace(&mut r.answer, Answer::Asked) {
            Answer::Asked if reply.type_ == utf8 => Answer::Done(Contents::Text(reply.value)),
            Answer::Asked if reply.type_ == incr => {
                r.deadline = Instant::now() + ANSWER_WAIT;
                Answer::Parts(Vec::new())
            }
            Answer::Asked => Answer::Done(Contents::AskReader),
            // The empty part ends it.
            Answer::Parts(text) if reply.value.is_empty() => {
                Answer::Done(if reply.type_ == utf8 || text.is_empty() {
                    Contents::Text(text)
                } else {
                    Contents::AskReader
                })
            }
            Answer::Parts(mut text) => {
                text.extend_from_slice(&reply.value);
                r.deadline = Instant::now() + ANSWER_WAIT;
                Answer::Parts(text)
            }
            done @ Answer::Done(_) => done,
        };
        Ok(())
    }

    /// Waits up to `timeout` for the next copy's contents, in the order of the copies.
    /// `Ok(None)`: none came. An error means the connection broke.
    fn next_answer(&mut self, timeout: Duration) -> Result<Option<Contents>, String> {
        let deadline = Instant::now() + timeout;
        loop {
            self.handle_queued()?;
            if let Some(contents) = self.take_answered()? {
                return Ok(Some(contents));
            }
            // Wake for a request to give up too.
            let until = self
                .asked
                .iter()
                .filter(|r| !matches!(r.answer, Answer::Done(_)))
                .map(|r| r.deadline)
                .fold(deadline, Instant::min);
            if !self.readable_before(until)? && Instant::now() >= deadline {
                return Ok(None);
            }
        }
    }

    /// Waits until the connection has something to read or `deadline` passes; whether it
    /// has. A hang-up counts as readable: the next read reports the broken connection.
    fn readable_before(&self, deadline: Instant) -> Result<bool, String> {
        use rustix::event::{PollFd, PollFlags, poll};
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        let timeout = rustix::event::Timespec::try_from(left).map_err(|e| e.to_string())?;
        let fd = self.conn.stream().as_fd();
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(n) => Ok(n > 0),
            // A signal (Ctrl-C): look again; the deadline still holds.
            Err(rustix::io::Errno::INTR) => Ok(true),
            Err(e) => Err(e.to_string()),
        }
    }
}

impl Events for X11 {
    fn waits(&self) -> Waits {
        Waits::X11Events
    }

    /// Asks now, and waits for that answer (owner changes meanwhile are asked about too, and
    /// come from [`Events::next`]).
    fn current(&mut self) -> Result<Contents, String> {
        self.ask()?;
        Ok(self
            .next_answer(ANSWER_WAIT + Duration::from_millis(100))?
            .unwrap_or(Contents::NoAnswer))
    }

    fn next(&mut self, timeout: Duration) -> Result<Option<Contents>, String> {
        self.next_answer(timeout)
    }
}
