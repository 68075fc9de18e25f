#!/usr/bin/env bash
# The size on disk of a database holding a synthetic relay transcript of 100 000 envelopes
# (about 70 MB, made by examples/gen_transcript.rs, see src/synth.rs), as a ratio to the
# transcript's own size: `crosstalk import` into a fresh database, then a checkpoint that
# empties the write-ahead log, then `du` of the database with its log. Prints the bytes per
# table and index (SQLite's `dbstat`), largest first.
#
# With OLD=path/to/an/older/crosstalk, the same transcript is also imported by that binary,
# and its database opened with the new one (which migrates it): the sizes before and after
# the migration, and a check that both databases give back the same messages (via
# `crosstalk export`, which writes every thread's canonical texts).
#
# Usage: scripts/bench-size.sh             (files go to a temporary directory, removed after)
#        BENCH_DIR=dir OLD=bin scripts/bench-size.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
name=bench-size
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh

bench_setup
cd "$dir"
input="$dir/transcript-100k.txt"
"$gen" --envelopes 100000 --threads 5000 --seed 1 --out "$input"
bytes=$(wc -c <"$input")

# size DB: bytes of the database and its log after a checkpoint that empties the log, with
# the full-text index's file beside it (and its log) when there is one.
size() {
    python3 - "$1" <<'PY'
import os, sqlite3, sys
path = sys.argv[1]
files = [p for p in (path, path + "-search") if os.path.exists(p)]
for p in files:
    conn = sqlite3.connect(p)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
print(sum(os.path.getsize(p + s) for p in files for s in ("", "-wal") if os.path.exists(p + s)))
PY
}

# tables DB: the bytes each table and index takes, largest first.
tables() {
    python3 - "$1" <<'PY'
import sqlite3, sys
import os
conn = sqlite3.connect(sys.argv[1])
stat = "SELECT name, pgsize FROM temp.stat"
if os.path.exists(sys.argv[1] + "-search"):
    conn.execute("ATTACH ? AS search", (sys.argv[1] + "-search",))
    conn.execute("CREATE VIRTUAL TABLE temp.search_stat USING dbstat(search)")
    stat += " UNION ALL SELECT name, pgsize FROM temp.search_stat"
conn.execute("CREATE VIRTUAL TABLE temp.stat USING dbstat")
rows = conn.execute(f"SELECT name, sum(pgsize) FROM ({stat}) GROUP BY name ORDER BY 2 DESC")
for name, size in rows:
    if size >= 100_000:
        print(f"| `{name}` | {size / 1e6:.1f} MB |")
PY
}

import_into() {
    local status=0
    "$@" >/dev/null || status=$?
    [ "$status" -le 1 ] || die "'$*' failed with exit status $status"
}

rm -f new.sqlite*
import_into "$cli" --db new.sqlite import "$input"
new=$(size new.sqlite)
echo "input: $bytes bytes"
printf 'crosstalk import: %s bytes, %.2f× the input\n' "$new" "$(echo "$new / $bytes" | bc -l)"
tables new.sqlite

if [ -n "${OLD:-}" ]; then
    rm -f old.sqlite*
    import_into "$OLD" --db old.sqlite import "$input"
    old=$(size old.sqlite)
    printf 'older binary: %s bytes, %.2f× the input\n' "$old" "$(echo "$old / $bytes" | bc -l)"
    tables old.sqlite
    "$OLD" --db old.sqlite export --all >old-export.txt
    "$OLD" --db old.sqlite export --all --format json >old-export.json
    start=$(date +%s.%N)
    "$cli" --db old.sqlite threads >/dev/null
    end=$(date +%s.%N)
    migrated=$(size old.sqlite)
    printf 'migrated by crosstalk (%.1f s): %s bytes, %.2f× the input\n' \
        "$(echo "$end - $start" | bc -l)" "$migrated" "$(echo "$migrated / $bytes" | bc -l)"
    "$cli" --db old.sqlite export --all >migrated-export.txt
    "$cli" --db old.sqlite export --all --format json >migrated-export.json
    cmp old-export.txt migrated-export.txt || die "the migrated database exports other texts"
    cmp old-export.json migrated-export.json || die "the migrated database exports other JSON"
    echo "the migrated database exports the same $(wc -c <old-export.txt) bytes"
fi
