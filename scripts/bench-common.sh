# shellcheck shell=bash
# Set-up shared by the benchmark scripts; source it after setting `name` (used in messages).
# Provides: die, install_pkg, and after `bench_setup`: $cli, $gen (release binaries of
# crosstalk and the transcript generator) and $dir (BENCH_DIR, or a temporary directory
# removed on exit). CROSSTALK=path: the crosstalk binary to measure instead of the one built.

: "${name:?set name before sourcing bench-common.sh}"

die() {
    echo "$name: $*" >&2
    exit 1
}

# install_pkg COMMAND PACKAGE: installs PACKAGE with apt-get (COMMAND names what was missing).
install_pkg() {
    echo "$name: $1 not found, installing $2 with apt-get" >&2
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get install -y "$2" >&2 ||
        { $sudo apt-get update >&2 && $sudo apt-get install -y "$2" >&2; } ||
        die "could not install $2"
}

bench_setup() {
    command -v python3 >/dev/null || die "python3 is needed"
    command -v hyperfine >/dev/null || install_pkg hyperfine hyperfine
    cargo build --release
    cargo build --release --example gen_transcript
    local target_dir
    target_dir=$(cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    # CROSSTALK=path measures that binary instead (a build of another commit, for figures
    # before and after a change, taken by the same script).
    cli="${CROSSTALK:-$target_dir/release/crosstalk}"
    gen="$target_dir/release/examples/gen_transcript"
    [ -x "$cli" ] || die "$cli was not built"
    [ -x "$gen" ] || die "$gen was not built"
    if [ -n "${BENCH_DIR:-}" ]; then
        mkdir -p "$BENCH_DIR"
        dir=$(cd "$BENCH_DIR" && pwd)
    else
        dir=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")
        # shellcheck disable=SC2064 # expand $dir now: it is the directory to remove
        trap "rm -rf '$dir'" EXIT
    fi
}
