#!/usr/bin/env bash
# Times `crosstalk check` on synthetic relay transcripts of 100 000 and 200 000 envelopes
# (made by examples/gen_transcript.rs, see src/synth.rs) against `wc -l` on the same files,
# with hyperfine, and prints a markdown table: sizes, mean times, check/wc and the scaling
# ratio time(200k)/time(100k), which should stay near 2.0 for a linear checker.
#
# Usage: scripts/bench-check.sh            (files go to a temporary directory, removed after)
#        BENCH_DIR=dir scripts/bench-check.sh   (files and hyperfine.json are kept in dir)
# Needs cargo, python3 and hyperfine (installed with apt-get when missing).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

name=bench-check
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh

# (a) Build the CLI and the generator; pick the working directory.
bench_setup

# (b) Two transcripts of the same shape (20 envelopes per thread on average), one twice as big.
small="$dir/transcript-100k.txt"
large="$dir/transcript-200k.txt"
"$gen" --envelopes 100000 --threads 5000 --seed 1 --out "$small"
"$gen" --envelopes 200000 --threads 10000 --seed 1 --out "$large"

# `crosstalk check` exits 1 when a file has errors (the mangled envelopes), which is expected;
# anything else (usage error, panic, crash) means the benchmark would time the wrong thing.
for file in "$small" "$large"; do
    status=0
    "$cli" check "$file" >/dev/null 2>&1 || status=$?
    [ "$status" -le 1 ] || die "'$cli check $file' failed with exit status $status"
done

# (c) One hyperfine run for all four commands.
json="$dir/hyperfine.json"
q_small=$(printf %q "$small")
q_large=$(printf %q "$large")
q_cli=$(printf %q "$cli")
hyperfine --warmup 2 --runs 10 --ignore-failure --export-json "$json" \
    -n "wc 100k" "wc -l $q_small" \
    -n "check 100k" "$q_cli check $q_small >/dev/null" \
    -n "wc 200k" "wc -l $q_large" \
    -n "check 200k" "$q_cli check $q_large >/dev/null"

# (d) The table.
python3 - "$json" "$small" "$large" <<'PY'
import json, os, sys

path, small, large = sys.argv[1:4]
results = {r["command"]: r for r in json.load(open(path))["results"]}
allowed = {"wc": {0}, "check": {0, 1}}
bad = []
for name, r in results.items():
    codes = set(r.get("exit_codes") or [])
    if not codes <= allowed[name.split()[0]]:
        bad.append(f"{name}: exit codes {sorted(codes)}")
if bad or len(results) != 4:
    sys.exit("bench-check: failed runs: " + ("; ".join(bad) or f"{len(results)} results, expected 4"))

mean = {name: r["mean"] for name, r in results.items()}
sd = {name: r.get("stddev") or 0.0 for name, r in results.items()}
print()
print("| transcript | size | wc -l (mean ± sd) | crosstalk check (mean ± sd) | check / wc |")
print("|---|---:|---:|---:|---:|")
for label, file in (("100k", small), ("200k", large)):
    w, c = f"wc {label}", f"check {label}"
    mb = os.path.getsize(file) / 1e6
    print(f"| {label} envelopes | {mb:.1f} MB | {mean[w] * 1e3:.1f} ± {sd[w] * 1e3:.1f} ms"
          f" | {mean[c] * 1e3:.1f} ± {sd[c] * 1e3:.1f} ms | {mean[c] / mean[w]:.1f}× |")
print()
print("| scaling, time(200k) / time(100k) | ratio |")
print("|---|---:|")
print(f"| wc -l | {mean['wc 200k'] / mean['wc 100k']:.2f} |")
print(f"| crosstalk check | {mean['check 200k'] / mean['check 100k']:.2f} |")
PY
