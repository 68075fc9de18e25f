#!/usr/bin/env bash
# Peak memory of `crosstalk parse --json` per MiB of input, with `/usr/bin/time -f %M`, on
# 1, 4 and 16 MiB of three inputs: envelopes collapsed onto one line each, of about 250 and
# about 55 bytes (the worst case: many small envelopes, each with a diagnostic), and normal
# relay transcripts (examples/gen_transcript.rs, nothing mangled). Baselines from the same run: `cat FILE >/dev/null`,
# and `parse --json` of an empty input (the binary's own footprint). Prints a markdown table.
#
# Usage: scripts/bench-parse-json.sh
#        BASE=/path/to/older/crosstalk scripts/bench-parse-json.sh   (adds that binary's figures)
#        BENCH_DIR=dir scripts/bench-parse-json.sh   (inputs are kept in dir)
# Needs cargo, python3 and GNU time (installed with apt-get when missing).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

name=bench-parse-json
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh

[ -x /usr/bin/time ] || install_pkg /usr/bin/time time
# bench_setup asks for hyperfine, which this script does not use: a stand-in satisfies it.
command -v hyperfine >/dev/null || hyperfine() { die "hyperfine is not used here"; }
bench_setup

# (a) Inputs: one-line envelopes of about 250 bytes, minimal ones of about 55 bytes, and
# normal transcripts.
python3 - "$dir" <<'PY'
import sys
out = sys.argv[1]
line = ("[[CLAUDE→CHATGPT v1]] user: kalle session: 2025-10-09T15Z 04f07f "
        "thread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K message: 01J9J3DBC4N7P2Q3R5S7T9V1V{:02d} "
        "context: review intent: QUESTION body: | Please look at section {} and tell me "
        "what you think. sig: none [[END]]\n")
tiny = "[[A→B v1]] intent: POLL body: | x{} sig: none [[END]]\n"
for mib in (1, 4, 16):
    for kind, fmt in (("oneline", line), ("tiny", tiny)):
        with open(f"{out}/{kind}-{mib}.txt", "w") as f:
            n = size = 0
            while size < mib << 20:
                l = fmt.format(n % 100, n) if kind == "oneline" else fmt.format(n)
                f.write(l)
                size += len(l.encode())
                n += 1
PY
for mib in 1 4 16; do
    # 705 bytes per envelope on average (docs/BENCHMARKS.md), cut to the exact size.
    "$gen" --envelopes $((mib * 1600)) --threads $((mib * 80)) --seed 1 --mangled 0 2>/dev/null |
        head -c $((mib << 20)) >"$dir/normal-$mib.txt"
done
: >"$dir/empty.txt"

# (b) Peak resident memory in KiB of one command, its output thrown away.
peak() {
    /usr/bin/time -f %M -o "$dir/time.out" "$@" >/dev/null 2>&1 || true
    tail -1 "$dir/time.out"
}

empty=$(peak "$cli" parse --json "$dir/empty.txt")
base_empty=""
[ -n "${BASE:-}" ] && base_empty=$(peak "$BASE" parse --json "$dir/empty.txt")
{
    echo "empty $empty ${base_empty:-0} 0 0"
    for kind in oneline tiny normal; do
        for mib in 1 4 16; do
            f="$dir/$kind-$mib.txt"
            cat_kb=$(peak cat "$f")
            new_kb=$(peak "$cli" parse --json "$f")
            base_kb=0
            # An older binary may need hundreds of times the input: 4 MiB at most.
            [ -n "${BASE:-}" ] && [ "$mib" -le 4 ] && base_kb=$(peak "$BASE" parse --json "$f")
            echo "$kind-$mib $new_kb $base_kb $cat_kb $(stat -c %s "$f")"
        done
    done
} >"$dir/peaks.txt"

# (c) The table.
python3 - "$dir/peaks.txt" "${BASE:+yes}" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
with_base = len(sys.argv) > 2 and sys.argv[2] == "yes"
empty_new, empty_base = int(rows[0][1]), int(rows[0][2])
mib = lambda kb: kb / 1024
print(f"`parse --json` of an empty input: {mib(empty_new):.1f} MiB"
      + (f" (BASE: {mib(empty_base):.1f} MiB)" if with_base else ""))
print()
head = "| input | size | `cat` peak | `parse --json` peak | MiB per MiB of input |"
rule = "|---|---:|---:|---:|---:|"
if with_base:
    head += " BASE peak | BASE MiB per MiB |"
    rule += "---:|---:|"
print(head)
print(rule)
for name, new, base, cat, size in rows[1:]:
    new, base, cat, size = int(new), int(base), int(cat), int(size)
    size_mib = size / (1 << 20)
    per = (new - empty_new) / 1024 / size_mib
    line = f"| {name} | {size_mib:.1f} MiB | {mib(cat):.1f} MiB | {mib(new):.1f} MiB | {per:.2f} |"
    if with_base and base:
        line += f" {mib(base):.1f} MiB | {(base - empty_base) / 1024 / size_mib:.1f} |"
    elif with_base:
        line += " – | – |"
    print(line)
PY
