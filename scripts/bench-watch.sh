#!/usr/bin/env bash
# Idle CPU of the clipboard watch: `crosstalk watch` on an Xvfb clipboard that does not
# change, against a shell loop that polls the same clipboard with `xclip -o` at the same
# interval (the lean way to do the same job), both for SECONDS seconds. CPU is user+sys
# ticks from /proc/PID/stat (the shell loop's children included, as `times` counts them).
#
# Usage: scripts/bench-watch.sh [SECONDS] [INTERVAL_MS] [watch|app] [events|poll]
#        (defaults 20, 250, watch, events)
# app: the app in tmux after `W` (its draw loop included) instead of `crosstalk watch`.
# events: the watch waits for the X server's word of each copy (XFixes), as by default;
# poll: `[watch] events = false`, a look every INTERVAL_MS.
# BIN=path/to/crosstalk uses that binary instead of building the release one.
set -euo pipefail
name=bench-watch
cd "$(dirname "${BASH_SOURCE[0]}")/.."
secs=${1:-20}
interval=${2:-250}
mode=${3:-watch}
waits=${4:-events}
case $waits in events) events=true ;; poll) events=false ;; *) echo "$name: events or poll" >&2; exit 2 ;; esac
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh
command -v Xvfb >/dev/null || die "Xvfb is needed (apt-get install xvfb)"
command -v xclip >/dev/null || die "xclip is needed (apt-get install xclip)"
release_bin

dir=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")
start_xvfb "$dir"
trap 'kill $xvfb 2>/dev/null; rm -rf "$dir"' EXIT
# An envelope on the clipboard, served by xclip, unchanged for the whole run.
xclip -selection clipboard -i < assets/examples/v11-request.crosstalk 2>/dev/null

hz=$(getconf CLK_TCK)
# cpu PID: user+sys+cutime+cstime ticks of PID.
cpu() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat"; }

printf '[watch]\ninterval_ms = %s\nevents = %s\n' "$interval" "$events" > "$dir/config.toml"
if [ "$mode" = app ]; then
    command -v tmux >/dev/null || die "tmux is needed"
    sock="$dir/tmux.sock"
    tmux -S "$sock" -f /dev/null new-session -d -x 120 -y 40 \
        "env CROSSTALK_CONFIG='$dir/config.toml' XDG_DATA_HOME='$dir' HOME='$dir' DISPLAY='$DISPLAY' '$(realpath "$BIN")' --db '$dir/w.db'"
    for _ in $(seq 200); do tmux -S "$sock" capture-pane -p | grep -q "Empty database" && break; sleep 0.05; done
    tmux -S "$sock" send-keys W
    for _ in $(seq 200); do tmux -S "$sock" capture-pane -p | grep -q "watching" && break; sleep 0.05; done
    watch=$(pgrep -f "^$(realpath "$BIN") --db $dir/w.db" | head -1)
    [ -n "$watch" ] || die "the app did not start"
    sleep 1
    w0=$(cpu "$watch")
    sleep "$secs"
    w1=$(cpu "$watch")
    tmux -S "$sock" kill-server
else
    CROSSTALK_CONFIG="$dir/config.toml" "$BIN" --db "$dir/w.db" watch > /dev/null 2>&1 &
    watch=$!
    sleep 1
    w0=$(cpu $watch)
    sleep "$secs"
    w1=$(cpu $watch)
    kill -INT $watch
    wait $watch || true
fi

sleep_s=$(awk "BEGIN { print $interval / 1000 }")
bash -c "while :; do xclip -selection clipboard -o > /dev/null 2>&1; sleep $sleep_s; done" &
loop=$!
sleep 1
l0=$(cpu $loop)
sleep "$secs"
l1=$(cpu $loop)
kill $loop
wait $loop 2>/dev/null || true

awk -v m="$mode" -v e="$waits" -v w=$((w1 - w0)) -v l=$((l1 - l0)) -v hz="$hz" -v s="$secs" -v i="$interval" 'BEGIN {
    wp = 100 * w / hz / s; lp = 100 * l / hz / s
    printf "interval %d ms, %d s idle\n", i, s
    printf "crosstalk (%s, %s):   %.2f%% CPU (%d ticks)\n", m, e, wp, w
    printf "xclip -o shell loop:    %.2f%% CPU (%d ticks)\n", lp, l
    if (l > 0) printf "ratio watch / loop:     %.2f\n", w / l
}'
