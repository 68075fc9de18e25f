# shellcheck shell=bash
# Set-up shared by the benchmark scripts; source it after setting `name` (used in messages).
# Provides: die, install_pkg, release_bin, start_xvfb, and after `bench_setup`: $cli, $gen (release binaries of
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
    cargo build --profile profiling
    cargo build --profile profiling --example gen_transcript
    local target_dir
    target_dir=$(cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    # CROSSTALK=path measures that binary instead (a build of another commit, for figures
    # before and after a change, taken by the same script).
    cli="${CROSSTALK:-$target_dir/profiling/crosstalk}"
    gen="$target_dir/profiling/examples/gen_transcript"
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

# release_bin: BIN (a binary given, for figures of another build), else the release code
# built now with line tables (`--profile profiling`); as an absolute path.
release_bin() {
    if [ -z "${BIN:-}" ]; then
        cargo build --profile profiling >&2
        BIN=target/profiling/crosstalk
    fi
    [ -x "$BIN" ] || die "$BIN is not an executable"
    BIN=$(realpath "$BIN")
}

# start_xvfb DIR: an X server of its own for the clipboard, its display number written to
# DIR/display; sets $xvfb (its pid, for the caller's trap) and exports DISPLAY, with no Wayland,
# SSH or tmux around that would make crosstalk choose another clipboard.
start_xvfb() {
    exec 3> "$1/display"
    Xvfb -displayfd 3 -nolisten tcp >/dev/null 2>&1 &
    xvfb=$!
    for _ in $(seq 100); do [ -s "$1/display" ] && break; sleep 0.05; done
    DISPLAY=":$(cat "$1/display")"
    export DISPLAY
    unset WAYLAND_DISPLAY SSH_TTY SSH_CONNECTION TMUX
}
