//! The `crosstalk` binary: hands over to the command line.

/// mimalloc rather than the system allocator: envelopes and stored messages are many small
/// strings, and glibc's allocator spent a third of the time loading a large thread (and
/// contends when the import's parsing thread frees what the writing thread used). The
/// benchmarks use it too, to measure what this binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    crosstalk::cli::run()
}
