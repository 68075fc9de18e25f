#!/usr/bin/env bash
# Times `crosstalk import` of a synthetic relay transcript of 100 000 envelopes (about 70 MB,
# made by examples/gen_transcript.rs, see src/synth.rs) into a fresh database, against two
# baselines of Python's sqlite3 with the parsing already done:
#   - lean: the envelopes' fields (ids, addresses, headers, META, body, signature) in one plain
#     table keyed by message id, with the tree's indexes (thread, parent) and a full-text index,
#     in one transaction. The leanest honest way to keep and search the same envelopes. Run
#     twice: with SQLite's default pages, and with the 16 KiB pages crosstalk gives a new
#     database (so that the page size alone never flatters the ratio).
#   - own rows: the very rows the import wrote (the raw input, threads, messages, the delivery
#     ledger), one prepared statement per table, one transaction, then one FTS5 rebuild. What
#     crosstalk's own schema costs to fill, so the gap between the two is the schema's.
#
# All of them run in one hyperfine run (5 runs each, databases removed before every run). The
# Python figures are reported for the whole process (which also reads the prepared rows from
# JSON lines) and for the insert alone, timed inside the script. Then the peak memory of
# `crosstalk import` for the 70 MB transcript and one twice as big, which should stay about
# the same: the input is read and stored in pieces, not held whole.
#
# Usage: scripts/bench-import.sh            (files go to a temporary directory, removed after)
#        BENCH_DIR=dir scripts/bench-import.sh   (files, databases and hyperfine.json kept in dir)
# Needs cargo, python3, GNU time (/usr/bin/time) and hyperfine (installed with apt-get when
# missing). About 3 GB of disk in the working directory.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
helper="$PWD/scripts/bench_import_python.py"

name=bench-import
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh

python3 -c 'import sqlite3' 2>/dev/null || die "python3 lacks the sqlite3 module"
[ -x /usr/bin/time ] || install_pkg /usr/bin/time time

# (a) Build the CLI and the generator; pick the working directory.
bench_setup
cd "$dir"

# (b) The transcripts: 100 000 envelopes in 5 000 threads, and twice that for the memory check.
small="$dir/transcript-100k.txt"
large="$dir/transcript-200k.txt"
"$gen" --envelopes 100000 --threads 5000 --seed 1 --out "$small"
"$gen" --envelopes 200000 --threads 10000 --seed 1 --out "$large"

# Imports exit 1 when an envelope was rejected (a result); anything above is a failure.
import_into() {
    local status=0
    "$@" >/dev/null || status=$?
    [ "$status" -le 1 ] || die "'$*' failed with exit status $status"
}

# (c) The rows Python will insert: what a crosstalk import of the same transcript stored.
rm -f ref.sqlite ref.sqlite-wal ref.sqlite-shm
import_into "$cli" --db ref.sqlite import "$small"
rm -rf rows
mkdir rows
python3 "$helper" dump ref.sqlite rows

# (d) One hyperfine run for both.
rm -f python-times.txt db*
q_cli=$(printf %q "$cli")
q_small=$(printf %q "$small")
q_helper=$(printf %q "$helper")
rm -f lean-times.txt lean-16k-times.txt
hyperfine --runs 5 --ignore-failure --prepare 'rm -f db*' --export-json hyperfine.json \
    -n crosstalk "$q_cli --db db-crosstalk.sqlite import $q_small >/dev/null" \
    -n python "python3 $q_helper insert rows db-python.sqlite python-times.txt" \
    -n lean "python3 $q_helper lean rows db-lean.sqlite lean-times.txt" \
    -n lean-16k "python3 $q_helper lean rows db-lean.sqlite lean-16k-times.txt 16384"

# `--prepare` ran before every run of every command, so only the lean baseline's last
# database is left; the rows Python inserted are checked against the reference import by
# inserting them once more.
python3 "$helper" insert rows db-python.sqlite
python3 "$helper" compare ref.sqlite db-python.sqlite

# (e) Peak memory of the import, for both transcript sizes.
rss=()
for file in "$small" "$large"; do
    rm -f db-rss.sqlite db-rss.sqlite-wal db-rss.sqlite-shm
    status=0
    kb=$(/usr/bin/time -f %M "$cli" --db db-rss.sqlite import "$file" 2>&1 >/dev/null |
        tail -n 1) || status=$?
    [ "$status" -le 1 ] || die "import of $file failed with exit status $status"
    [[ "$kb" =~ ^[0-9]+$ ]] || die "no memory figure for $file: $kb"
    rss+=("$(basename "$file" .txt | sed 's/transcript-//; s/k$/000/'):$(wc -c <"$file"):$kb")
    rm -f db-rss.sqlite db-rss.sqlite-wal db-rss.sqlite-shm
done

# (f) The tables.
python3 "$helper" table hyperfine.json python-times.txt lean-times.txt lean-16k-times.txt 100000 "$(wc -c <"$small")"
python3 "$helper" rss "${rss[@]}"
