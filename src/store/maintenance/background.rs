//! Threads that work beside a large import without setting its pace.
//!
//! An import's time is its writing thread's: the search index's writer (`search_index`) and
//! the log's copier (`checkpointer`) only need to keep up, and the thread that parses the
//! input feeds the writer. On two cores the writer has one, and the other three share the
//! second: when the scheduler gave the background threads their equal turn the parser fell
//! behind and the writer waited for it. Running them at a lower priority lets the parser go first;
//! they still get every idle moment, and the import waits for what they have left at its end.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, SyncSender};
use std::thread::JoinHandle;

/// A thread that does one job on a connection of its own after each piece an import commits
/// (the log's copy, the search index), at a lower priority. Only ever an optimization: when
/// its connection cannot be opened or its job fails it stops, and the import does what is
/// left when it is done.
pub(in crate::store) struct Follower {
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
    /// How many times the job has run (what a test waits for).
    #[cfg_attr(not(test), allow(dead_code))]
    done: Arc<AtomicU64>,
}

impl Follower {
    /// Starts one named `name` for the database file at `path`: `open` makes its connection
    /// on the thread, `job` runs on it at every wake-up. `None` for a database in memory (a
    /// second connection would open another one) or when no thread can be started.
    pub(crate) fn start<C, E>(
        name: &str,
        path: &Path,
        open: impl FnOnce(&Path) -> Result<C, E> + Send + 'static,
        job: impl Fn(&C) -> Result<(), E> + Send + 'static,
    ) -> Option<Follower> {
        if path == Path::new(":memory:") || path.as_os_str().is_empty() {
            return None;
        }
        let path = path.to_path_buf();
        // Room for one wake-up: pieces committed while the job runs are all taken by the next
        // run.
        let (wake, woken) = mpsc::sync_channel::<()>(1);
        let done = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&done);
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                lower_priority();
                let Ok(conn) = open(&path) else {
                    return;
                };
                while woken.recv().is_ok() {
                    if job(&conn).is_err() {
                        return;
                    }
                    counted.fetch_add(1, Ordering::Release);
                }
            })
            .ok()?;
        Some(Follower {
            wake: Some(wake),
            thread: Some(thread),
            done,
        })
    }

    /// After a piece is committed: run the job (at once, or after the run under way).
    pub(crate) fn committed(&self) {
        if let Some(wake) = &self.wake {
            // Full: a run is due already. Gone: the thread stopped; the import does the rest.
            let _ = wake.try_send(());
        }
    }

    /// How many times the job has run.
    #[cfg(test)]
    pub(crate) fn done(&self) -> u64 {
        self.done.load(Ordering::Acquire)
    }
}

impl Drop for Follower {
    /// Waits for the run under way, so that what the import does at its end finds the work
    /// as this run left it.
    fn drop(&mut self) {
        self.wake = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// How much lower than the rest of the process (the `nice` value added): the same as
/// `nice`'s own default.
const LOWER_BY: i32 = 10;

/// Lowers the calling thread's scheduling priority (Linux, where a thread's `nice` value is its
/// own). A refusal leaves it as it was: only ever an optimization.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        let this = rustix::thread::gettid();
        let now = rustix::process::getpriority_process(Some(this)).unwrap_or(0);
        let _ = rustix::process::setpriority_process(Some(this), now + LOWER_BY);
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_calling_thread_alone_runs_at_a_lower_priority() {
        let of = |tid| rustix::process::getpriority_process(Some(tid)).unwrap();
        let main = rustix::thread::gettid();
        let before = of(main);
        let (lowered, was) = std::thread::spawn(move || {
            let this = rustix::thread::gettid();
            let was = of(this);
            lower_priority();
            (of(this), was)
        })
        .join()
        .unwrap();
        // `nice` values stop at 19.
        assert_eq!(lowered, (was + LOWER_BY).min(19));
        assert!(lowered > was || was == 19);
        assert_eq!(of(main), before, "the rest of the process is as it was");
    }
}
