//! Threads that work beside a large import without setting its pace.
//!
//! An import's time is its writing thread's: the search index's writer (`search_index`) and
//! the log's copier (`checkpointer`) only need to keep up, and the thread that parses the
//! input feeds the writer. On two cores the four of them share the second one with the parser,
//! and when the scheduler gave the background threads their equal turn the parser fell behind
//! and the writer waited for it. Running them at a lower priority lets the parser go first;
//! they still get every idle moment, and the import waits for what they have left at its end.

/// How much lower than the rest of the process (the `nice` value added): the same as
/// `nice`'s own default.
const LOWER_BY: i32 = 10;

/// Lowers the calling thread's scheduling priority (Linux, where a thread's `nice` value is its
/// own). A refusal leaves it as it was: only ever an optimization.
pub(super) fn lower_priority() {
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
