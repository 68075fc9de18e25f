//! The `crosstalk` binary: hands over to the command line.

/// mimalloc rather than the system allocator: envelopes and stored messages are many small
/// strings, and glibc's allocator spent a third of the time loading a large thread (and
/// contends when the import's parsing thread frees what the writing thread used). The
/// benchmarks use it too, to measure what this binary does.
///
/// Built with its `no_thp` feature: mimalloc gives memory back to the system in 64 KiB pieces
/// and takes it again as it needs it, and where it had asked for transparent huge pages the
/// kernel zeroed a whole 2 MiB page at the first touch of such a piece. An import of 100 000
/// envelopes spent 6.6 % of its samples so (docs/BENCHMARKS.md). (A kernel that gives huge
/// pages to every process unasked, `always` in /sys/kernel/mm/transparent_hugepage/enabled,
/// still does.)
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    crosstalk::cli::run()
}
