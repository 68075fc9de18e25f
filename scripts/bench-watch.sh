#!/usr/bin/env bash
# Idle CPU of the clipboard watch: `crosstalk watch` on an Xvfb clipboard that does not
# change, against a shell loop that polls the same clipboard with `xclip -o` at the same
# interval (the lean way to do the same job), both for SECONDS seconds. CPU is user+sys
# ticks from /proc/PID/stat (the shell loop's children included, as `times` counts them).
#
# Usage: scripts/bench-watch.sh [SECONDS] [INTERVAL_MS]   (defaults 20 and 250)
# BIN=path/to/crosstalk uses that binary instead of building the release one.
set -euo pipefail
name=bench-watch
cd "$(dirname "${BASH_SOURCE[0]}")/.."
secs=${1:-20}
interval=${2:-250}
die() { echo "$name: $*" >&2; exit 1; }
command -v Xvfb >/dev/null || die "Xvfb is needed (apt-get install xvfb)"
command -v xclip >/dev/null || die "xclip is needed (apt-get install xclip)"
if [ -z "${BIN:-}" ]; then
    cargo build --release >&2
    BIN=target/release/crosstalk
fi
[ -x "$BIN" ] || die "$BIN is not an executable"

dir=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")
exec 3> "$dir/display"
Xvfb -displayfd 3 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [ -s "$dir/display" ] && break; sleep 0.05; done
export DISPLAY=":$(cat "$dir/display")"
unset WAYLAND_DISPLAY SSH_TTY SSH_CONNECTION
# An envelope on the clipboard, served by xclip, unchanged for the whole run.
xclip -selection clipboard -i < assets/examples/v11-request.crosstalk 2>/dev/null

hz=$(getconf CLK_TCK)
# cpu PID: user+sys+cutime+cstime ticks of PID.
cpu() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat"; }

printf '[watch]\ninterval_ms = %s\n' "$interval" > "$dir/config.toml"
CROSSTALK_CONFIG="$dir/config.toml" "$BIN" --db "$dir/w.db" watch > /dev/null 2>&1 &
watch=$!
sleep 1
w0=$(cpu $watch)
sleep "$secs"
w1=$(cpu $watch)
kill -INT $watch
wait $watch || true

sleep_s=$(awk "BEGIN { print $interval / 1000 }")
bash -c "while :; do xclip -selection clipboard -o > /dev/null 2>&1; sleep $sleep_s; done" &
loop=$!
sleep 1
l0=$(cpu $loop)
sleep "$secs"
l1=$(cpu $loop)
kill $loop
wait $loop 2>/dev/null || true

awk -v w=$((w1 - w0)) -v l=$((l1 - l0)) -v hz="$hz" -v s="$secs" -v i="$interval" 'BEGIN {
    wp = 100 * w / hz / s; lp = 100 * l / hz / s
    printf "interval %d ms, %d s idle\n", i, s
    printf "crosstalk watch:        %.2f%% CPU (%d ticks)\n", wp, w
    printf "xclip -o shell loop:    %.2f%% CPU (%d ticks)\n", lp, l
    if (l > 0) printf "ratio watch / loop:     %.2f\n", w / l
}'
