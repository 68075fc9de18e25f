#!/usr/bin/env bash
# Times `crosstalk import` of inputs made only of tiny envelopes (about 200 bytes each, made by
# scripts/gen_tiny_envelopes.py) at 1, 4 and 16 MiB, each into a fresh database, against
# Python's sqlite3 inserting the very rows that import wrote (as in scripts/bench-import.sh:
# prepared rows, one statement per table, one transaction, one FTS5 rebuild). Import time per
# MiB should stay flat as the input (and the database) grows; so should the ratio to the
# baseline. Then crosstalk's peak memory at each size.
#
# Usage: scripts/bench-import-tiny.sh [FORM]   FORM as scripts/gen_tiny_envelopes.py takes it:
#        1 (default): v1.1 envelopes of one thread, each answering the previous one; v10: v1.0
#        envelopes of one session, without ids; distinct: each envelope its own thread and
#        session; senders: each also between its own two parties; sessions: v1.0 envelopes,
#        each of its own session; orphans: as distinct, each naming a parent that never comes.
#        RUNS=n (default 3), BENCH_DIR=dir (files kept there).
# Also prints the size on disk of the database each import made.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
helper="$PWD/scripts/bench_import_python.py"
gen_tiny="$PWD/scripts/gen_tiny_envelopes.py"
form="${1:-1}"
runs="${RUNS:-3}"

name=bench-import-tiny
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh
[ -x /usr/bin/time ] || install_pkg /usr/bin/time time
bench_setup
cd "$dir"

q_cli=$(printf %q "$cli")
q_helper=$(printf %q "$helper")
rows=()
for mib in 1 4 16; do
    input="tiny-$form-$mib.txt"
    python3 "$gen_tiny" "$mib" "$input" "$form"
    rm -rf "rows-$mib" ref.sqlite*
    "$cli" --db ref.sqlite import "$input" >/dev/null || [ $? -le 1 ] || die "import failed"
    mkdir "rows-$mib"
    python3 "$helper" dump ref.sqlite "rows-$mib"
    rm -f "python-$mib.txt"
    hyperfine --runs "$runs" --prepare 'rm -f db*' --export-json "hyperfine-$mib.json" \
        -n "crosstalk $mib MiB" "$q_cli --db db-c.sqlite import $input >/dev/null" \
        -n "python $mib MiB" "python3 $q_helper insert rows-$mib db-p.sqlite python-$mib.txt"
    rm -f db*
    kb=$(/usr/bin/time -f %M "$cli" --db db-rss.sqlite import "$input" 2>&1 >/dev/null | tail -n 1)
    disk=$(du -k db-rss.sqlite* | awk '{ s += $1 } END { print s }')
    rm -f db*
    rows+=("$mib:$(wc -c <"$input"):$kb:$disk")
done

python3 - "${rows[@]}" <<'PY'
import json, sys
print("| input | envelopes | crosstalk s/MiB | Python insert s/MiB | crosstalk / Python | peak RSS | on disk |")
print("|---|---:|---:|---:|---:|---:|---:|")
for arg in sys.argv[1:]:
    mib, size, kb, disk = arg.split(":")
    runs = json.load(open(f"hyperfine-{mib}.json"))["results"]
    ct = runs[0]["mean"]
    inserts = [float(l.split()[1]) for l in open(f"python-{mib}.txt")]
    py = sum(inserts) / len(inserts)
    env = sum(1 for l in open(f"rows-{mib}/rows-messages.jsonl")) - 1
    m = int(size) / (1 << 20)
    print(f"| {mib} MiB | {env} | {ct / m:.3f} | {py / m:.3f} | {ct / py:.2f} | {int(kb) // 1024} MiB "
          f"| {int(disk) / 1024:.1f} MiB |")
PY
