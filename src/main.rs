//! The `crosstalk` binary: hands over to the command line.

fn main() -> std::process::ExitCode {
    crosstalk::cli::run()
}
