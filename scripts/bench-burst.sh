#!/usr/bin/env bash
# Copies caught: COPIES distinct envelopes copied GAP_MS apart onto an Xvfb clipboard, with
# `crosstalk watch` running; how many were imported once the watch has caught up. Each copy is
# an `xclip -i` of its own that owns the clipboard before the next one starts, as a Copy
# button's copy is done when the button comes back (the next starts GAP_MS after the last
# one started, or at once when that one took longer to own the clipboard). An X clipboard is
# served by the program that copied, and `xclip` ends when the next copy takes over, so a
# copy not read before the next one is lost for good. (xclip's first process ends just after
# it asked for the clipboard, not once the X server gave it: on a busy machine two copies can
# still land a millisecond apart.)
#
# Each way of waiting in WAITS is measured in turn in the same run, on the same display:
# `events` (the watch waits for XFixes' word of each copy), `poll` (`[watch] events =
# false`, a look every 100 ms: the baseline), `default` (no `events` key: for a binary from
# before it, which always polls).
#
# Usage: scripts/bench-burst.sh [COPIES] [GAP_MS] [WAITS]   (defaults 1000, 6, "events poll")
# BIN=path/to/crosstalk uses that binary instead of building the release one.
set -euo pipefail
name=bench-burst
cd "$(dirname "${BASH_SOURCE[0]}")/.."
copies=${1:-1000}
gap=${2:-6}
waits=${3:-events poll}
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh
for c in Xvfb xclip python3; do command -v $c >/dev/null || die "$c is needed"; done
for w in $waits; do
    case $w in events|poll|default) ;; *) die "WAITS are events, poll or default" ;; esac
done
release_bin

dir=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")
start_xvfb "$dir"
trap 'kill $(jobs -p) 2>/dev/null; kill $xvfb 2>/dev/null; sleep 0.2; rm -rf "$dir"' EXIT

count() {
    python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from messages').fetchone()[0])" "$1" 2>/dev/null || echo 0
}

echo "copies: $copies, $gap ms apart"
first=1
for w in $waits; do
    home="$dir/$w"
    mkdir -p "$home"
    case $w in
    events) events='events = true\n' ;;
    poll) events='events = false\n' ;;
    default) events='' ;;
    esac
    printf "[watch]\ninterval_ms = 100\n$events" > "$home/config.toml"
    env CROSSTALK_CONFIG="$home/config.toml" XDG_DATA_HOME="$home" HOME="$home" \
        "$BIN" --db "$home/w.db" watch > "$home/watch.out" 2> "$home/watch.err" < /dev/null &
    watch=$!
    for _ in $(seq 200); do grep -q "watching the clipboard" "$home/watch.err" 2>/dev/null && break; sleep 0.05; done
    how=$(grep -o "watching the clipboard ([^)]*)\|watching the clipboard every [0-9]* ms" "$home/watch.err" || true)
    # The burst; each copy's text is an envelope of its own.
    python3 - "$copies" "$gap" "$first" > "$home/burst.txt" <<'EOF'
import subprocess, sys, time
copies, gap, first = int(sys.argv[1]), float(sys.argv[2]) / 1000, int(sys.argv[3])
def envelope(n):
    return (
        "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nthread: 01KAQ4W5J8Z000000000000000\n"
        f"message: 01KAQ4W5J8Z00000000{n:07d}\ncontext: burst\nintent: REQUEST\n"
        f"body: |\n  copy {n}\nsig: none\n[[END]]\n"
    ).encode()
starts = []
for i in range(copies):
    if starts:
        wait = starts[-1] + gap - time.monotonic()
        if wait > 0:
            time.sleep(wait)
    starts.append(time.monotonic())
    # xclip's first process ends once the clipboard is its server's (which stays to serve
    # it until the next copy takes over).
    subprocess.run(["xclip", "-selection", "clipboard", "-i"], input=envelope(first + i),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
gaps = sorted(b - a for a, b in zip(starts, starts[1:]))
print(f"{1000 * gaps[len(gaps) // 2]:.1f} {1000 * (starts[-1] - starts[0]):.0f}")
EOF
    # Caught up: the count has not moved for two seconds.
    last=-1
    now=$(count "$home/w.db")
    while [ "$now" != "$last" ]; do
        last=$now
        sleep 2
        now=$(count "$home/w.db")
    done
    kill -INT $watch 2>/dev/null || true
    wait $watch 2>/dev/null || true
    read -r median span < "$home/burst.txt"
    echo "$w ($how): $now of $copies imported (copies started a median $median ms apart, over $span ms)"
    first=$(( first + copies ))
done
