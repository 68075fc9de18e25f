#!/usr/bin/env bash
# Hop latency: from a chat window's Copy (the clipboard set by `xclip -i`) to the recipient's
# text being on the clipboard, put there by the release app watching an Xvfb clipboard in
# tmux with `[relay] copy_on_import`. Each of HOPS hops copies a new envelope with prose
# around it and polls `xclip -o` until the clipboard holds the envelope alone.
#
# The baseline, measured in the same run with the same polling, is the floor of the
# measurement itself: setting the clipboard with `xclip -i` and polling `xclip -o` until the
# text is readable, with nothing in between.
#
# Each way of waiting in WAITS is measured in turn, in the same run on the same display,
# each with the floor measured between its hops: `events` (the watch waits for the X
# server's word of each copy, XFixes), `poll` (`[watch] events = false`: it looks every
# INTERVAL_MS), `default` (no `events` key: for a binary from before it).
#
# Usage: scripts/bench-hop.sh [HOPS] [INTERVAL_MS] [app|watch|companion] [WAITS]
#        (defaults 100, 250, app, "events poll")
# app: the app after `W`; watch: `crosstalk watch`; companion: `crosstalk serve --token` as the
# desk and `crosstalk watch --to URL` as its companion, over loopback HTTP.
# BIN=path/to/crosstalk uses that binary instead of building the release one.
set -euo pipefail
name=bench-hop
cd "$(dirname "${BASH_SOURCE[0]}")/.."
hops=${1:-100}
interval=${2:-250}
mode=${3:-app}
waits=${4:-events poll}
case $mode in app|watch|companion) ;; *) echo "$name: mode is app, watch or companion" >&2; exit 2 ;; esac
for w in $waits; do
    case $w in events|poll|default) ;; *) echo "$name: WAITS are events, poll or default" >&2; exit 2 ;; esac
done
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh
for c in Xvfb xclip tmux; do command -v $c >/dev/null || die "$c is needed"; done
release_bin

dir=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")
start_xvfb "$dir"
sock="$dir/tmux.sock"

trap 'kill $(jobs -p) 2>/dev/null; tmux -S "$sock" kill-server 2>/dev/null; kill $xvfb 2>/dev/null; sleep 0.2; rm -rf "$dir"' EXIT

ns() { date +%s%N; }
# A read that asks an owner which has just lost the selection never ends: give up after 1 s.
paste() { timeout 1 xclip -selection clipboard -o 2>/dev/null || true; }
# An id of 26 Crockford characters, distinct for each n.
id() { printf '01KAQ4W5J8Z00000000%07d' "$1"; }
envelope() {
    printf '[[CLAUDE→CHATGPT v1]]\nuser: kalle\nthread: %s\nmessage: %s\ncontext: hop bench\nintent: REQUEST\nbody: |\n  hop %s\nsig: none\n[[END]]\n' \
        "$(id 0)" "$(id "$1")" "$1"
}
stats() { sort -n "$1" | awk '{ v[NR] = $1 } END {
    m = v[int((NR + 1) / 2)]; p = v[int(NR * 0.99 + 0.999)]
    printf "%.1f %.1f", m / 1e6, p / 1e6 }'; }

# start WAITS: the watch of this mode, in a home of its own ($home), waiting as WAITS says.
start() {
    home="$dir/$1"
    mkdir -p "$home"
    case $1 in
    events) events='events = true\n' ;;
    poll) events='events = false\n' ;;
    default) events='' ;;
    esac
    printf "[relay]\ncopy_on_import = true\n[watch]\ninterval_ms = %s\n$events" "$interval" > "$home/config.toml"
    pids=()
    case $mode in
    app)
        tmux -S "$sock" -f /dev/null new-session -d -x 120 -y 40 \
            "env CROSSTALK_CONFIG='$home/config.toml' XDG_DATA_HOME='$home' HOME='$home' DISPLAY='$DISPLAY' '$BIN' --db '$home/h.db'"
        screen() { tmux -S "$sock" capture-pane -p; }
        for _ in $(seq 200); do screen | grep -q "Empty database" && break; sleep 0.05; done
        tmux -S "$sock" send-keys W
        for _ in $(seq 200); do screen | grep -q "Watching the clipboard" && break; sleep 0.05; done
        screen | grep -o "Watching the clipboard ([^)]*)" > "$home/waits" || true
        ;;
    watch)
        env CROSSTALK_CONFIG="$home/config.toml" XDG_DATA_HOME="$home" HOME="$home" DISPLAY="$DISPLAY" \
            "$BIN" --db "$home/h.db" watch > "$home/watch.out" 2> "$home/watch.err" < /dev/null &
        pids+=($!)
        for _ in $(seq 200); do grep -q "watching the clipboard" "$home/watch.err" 2>/dev/null && break; sleep 0.05; done
        grep -o "watching the clipboard ([^)]*)\|watching the clipboard every [0-9]* ms" "$home/watch.err" > "$home/waits" || true
        ;;
    companion)
        env CROSSTALK_CONFIG="$home/config.toml" XDG_DATA_HOME="$home" HOME="$home" DISPLAY="$DISPLAY" \
            "$BIN" --db "$home/h.db" serve --listen 127.0.0.1:0 --token bench > "$home/serve.out" 2> "$home/serve.err" < /dev/null &
        pids+=($!)
        for _ in $(seq 200); do [ -s "$home/serve.out" ] && break; sleep 0.05; done
        url=$(head -1 "$home/serve.out")
        [ -n "$url" ] || die "serve printed no URL"
        mkdir -p "$home/laptop"
        env CROSSTALK_CONFIG="$home/config.toml" XDG_DATA_HOME="$home/laptop" HOME="$home/laptop" DISPLAY="$DISPLAY" \
            "$BIN" watch --to "$url" --token bench > "$home/companion.out" 2> "$home/companion.err" < /dev/null &
        pids+=($!)
        for _ in $(seq 200); do grep -q "companion of" "$home/companion.err" 2>/dev/null && break; sleep 0.05; done
        grep -o "watching the clipboard ([^)]*)" "$home/companion.err" > "$home/waits" || true
        ;;
    esac
}

stop() {
    tmux -S "$sock" kill-server 2>/dev/null || true
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}

# hops FIRST: HOPS hops with ids from FIRST on, each after a floor measurement.
hops() {
    : > "$home/hop.txt"
    : > "$home/floor.txt"
    for n in $(seq "$1" $(( $1 + hops - 1 ))); do
        # The floor: set and read back, nothing in between.
        text="floor $n $(ns)"
        t0=$(ns)
        printf '%s' "$text" | xclip -selection clipboard -i
        until [ "$(paste)" = "$text" ]; do :; done
        echo $(( $(ns) - t0 )) >> "$home/floor.txt"
        # The hop: the window's whole answer copied; the envelope alone comes back.
        copied="Here is my reply:
$(envelope "$n")
Tell me what they say."
        # A pause of a random fraction of the interval: a person's copies do not keep step
        # with the watch's looks, while this loop's would (each copy would come just after a
        # look, and every hop would wait a whole interval).
        sleep "$(awk -v r="$RANDOM" -v i="$interval" 'BEGIN { printf "%.3f", (r % i) / 1000 }')"
        t0=$(ns)
        printf '%s\n' "$copied" | xclip -selection clipboard -i
        until paste | head -1 | grep -q '^\[\[CLAUDE→CHATGPT'; do :; done
        echo $(( $(ns) - t0 )) >> "$home/hop.txt"
    done
}

echo "mode: $mode, hops: $hops per way of waiting, watch interval $interval ms"
first=1
for w in $waits; do
    start "$w"
    hops "$first"
    stop
    first=$(( first + hops ))
    read -r hm hp <<< "$(stats "$home/hop.txt")"
    read -r fm fp <<< "$(stats "$home/floor.txt")"
    stored=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from messages').fetchone()[0])" "$home/h.db" 2>/dev/null || echo '?')
    echo "$w ($(cat "$home/waits" 2>/dev/null)), messages stored: $stored"
    echo "  hop (copy -> recipient text ready):  median $hm ms, p99 $hp ms"
    echo "  floor (xclip set -> readable):       median $fm ms, p99 $fp ms"
    awk -v a="$hm" -v b="$fm" 'BEGIN { if (b > 0) printf "  median ratio hop / floor: %.1f\n", a / b }'
done
