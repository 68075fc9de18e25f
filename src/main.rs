//! The `crosstalk` binary: hands over to the command line.

/// mimalloc rather than the system allocator: envelopes and stored messages are many small
/// strings, and glibc's allocator spent a third of the time loading a large thread (and
/// contends when the import's parsing thread frees what the writing thread used). The
/// benchmarks use it too, to measure what this binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    no_huge_pages();
    crosstalk::cli::run()
}

/// Turns transparent huge pages off for this process. mimalloc returns memory it no longer
/// uses to the system in 64 KiB pieces and takes it again as it needs it; with huge pages, the
/// kernel zeroes a whole 2 MiB page at the first touch of such a piece. An import of 100 000
/// envelopes zeroed about a gigabyte so, a tenth of its writing thread's time (docs/BENCHMARKS.md).
/// mimalloc's own switch (`MIMALLOC_ALLOW_THP=0`) is read before `main`, from the environment.
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes one integer flag and touches no memory of ours; on a
    // kernel without it the call fails and nothing changes.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
