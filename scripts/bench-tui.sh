#!/usr/bin/env bash
# Memory and first-screen time of the real app on a large history, in tmux at 120x40:
# 100 000 envelopes in 5 000 threads plus one thread of 10 000 messages, against an empty
# database in the same run. Prints the resident memory (VmRSS, and the peak VmHWM) after the
# first screen and after opening the 10 000-message thread, and the time until the first
# screen shows (polled every 5 ms from tmux, so it includes tmux's own latency).
# Usage: scripts/bench-tui.sh   (BENCH_DIR=... keeps the files)
set -euo pipefail
name=bench-tui
cd "$(dirname "$0")/.."
# shellcheck source=bench-common.sh
. scripts/bench-common.sh
command -v tmux >/dev/null || install_pkg tmux tmux
bench_setup

"$gen" --envelopes 100000 --threads 5000 --out "$dir/history.txt"
"$gen" --envelopes 10000 --threads 1 --seed 7 --mangled 0 --out "$dir/long.txt"
"$cli" import --db "$dir/full.db" "$dir/history.txt" "$dir/long.txt" >/dev/null
long=$("$cli" threads --db "$dir/full.db" --json --limit 100000 |
    python3 -c 'import json,sys; t=max(json.load(sys.stdin), key=lambda t: t["message_count"]); print(t["id"])')

sock="$dir/tmux.sock"
t() { tmux -S "$sock" "$@"; }
trap 't kill-server 2>/dev/null || true; [ -n "${BENCH_DIR:-}" ] || rm -rf "$dir"' EXIT

# wait_for TEXT: polls the pane until TEXT shows (10 s at most).
wait_for() {
    for _ in $(seq 2000); do
        t capture-pane -p -t b | grep -qF -- "$1" && return 0
        sleep 0.005
    done
    die "timed out waiting for: $1"
}

mem() { grep -E '^(VmRSS|VmHWM)' "/proc/$1/status" | tr -s ' \t' ' ' | tr '\n' ' '; }

run() { # run DB LABEL
    local start end pid
    t kill-session -t b 2>/dev/null || true
    start=$(date +%s%N)
    t new-session -d -s b -x 120 -y 40 \
        "env XDG_CONFIG_HOME=$dir/config XDG_DATA_HOME=$dir/data $cli --db $1"
    wait_for "Threads"
    end=$(date +%s%N)
    pid=$(t display -p -t b '#{pane_pid}')
    echo "$2: first screen after $(((end - start) / 1000000)) ms; $(mem "$pid")"
}

"$cli" import --db "$dir/empty.db" /dev/null >/dev/null 2>&1 || true
run "$dir/empty.db" "empty database"
run "$dir/full.db" "100k + 10k-thread database"
t send-keys -t b ":open $long" Enter
wait_for "10000 messages"
sleep 0.5
pid=$(t display -p -t b '#{pane_pid}')
echo "after opening the 10 000-message thread: $(mem "$pid")"
t send-keys -t b G
sleep 0.3
echo "after moving to its last message: $(mem "$pid")"
