#!/usr/bin/env bash
# Peak memory and time of `crosstalk check --no-db` and `crosstalk parse --json` per MiB of
# input, with `/usr/bin/time -f '%M %e'`, on 1 and 16 MiB of each of the twelve shapes of the
# hostile corpus: the eleven of scripts/gen_hostile_inputs.py and an ordinary relay
# transcript (examples/gen_transcript.rs, nothing mangled). The baseline, measured on the
# same file in the same run, is `cat FILE >/dev/null`: the leanest honest way to read the
# input. Each command runs three times; the table gives the highest peak and the lowest time.
# Prints a markdown table.
#
# Usage: scripts/bench-memory.sh
#        BASE=/path/to/older/crosstalk scripts/bench-memory.sh   (adds that binary's figures,
#                                                     one run each)
#        BENCH_DIR=dir scripts/bench-memory.sh   (inputs and raw figures are kept in dir)
#        SIZES="1 4 16" scripts/bench-memory.sh  (other sizes, in MiB)
# Needs cargo, python3 and GNU time (installed with apt-get when missing).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

name=bench-memory
# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh

[ -x /usr/bin/time ] || install_pkg /usr/bin/time time
# bench_setup asks for hyperfine, which this script does not use: a stand-in satisfies it.
command -v hyperfine >/dev/null || hyperfine() { die "hyperfine is not used here"; }
bench_setup

sizes=${SIZES:-1 16}
shapes="$(python3 scripts/gen_hostile_inputs.py --list) transcript"

# (a) The inputs.
for mib in $sizes; do
    for shape in $shapes; do
        f="$dir/$shape-$mib.txt"
        [ -s "$f" ] && continue
        if [ "$shape" = transcript ]; then
            # 705 bytes per envelope on average (docs/BENCHMARKS.md), cut to the exact size.
            "$gen" --envelopes $((mib * 1600)) --threads $((mib * 80)) --seed 1 --mangled 0 \
                2>/dev/null | head -c $((mib << 20)) >"$f"
        else
            python3 scripts/gen_hostile_inputs.py "$shape" "$mib" "$f" 2>/dev/null
        fi
    done
done
: >"$dir/empty.txt"

# (b) "PEAK_KIB SECONDS" of one command, its output thrown away: the highest peak and the
# lowest time of RUNS runs. A failing command (exit 1: the input has errors) is measured too;
# one killed by a signal is reported as such.
peak() {
    local runs=$1 best_kb=0 best_s="" kb s
    shift
    for _ in $(seq "$runs"); do
        /usr/bin/time -f '%M %e' -o "$dir/time.out" "$@" >/dev/null 2>"$dir/err.out" || true
        grep -q 'terminated by signal' "$dir/time.out" && die "$* was killed: $(head -1 "$dir/time.out")"
        read -r kb s < <(tail -1 "$dir/time.out")
        [ "$kb" -gt "$best_kb" ] && best_kb=$kb
        if [ -z "$best_s" ] || python3 -c "import sys; sys.exit(not $s < $best_s)"; then
            best_s=$s
        fi
    done
    echo "$best_kb $best_s"
}

# (c) Every figure, one line per input: shape, size, then KiB and seconds of cat, check,
# parse (and of BASE's check and parse, or zeros).
{
    echo "empty 0 0 0 $(peak 3 "$cli" check --no-db "$dir/empty.txt") $(peak 3 "$cli" parse --json "$dir/empty.txt") 0 0 0 0"
    for mib in $sizes; do
        for shape in $shapes; do
            f="$dir/$shape-$mib.txt"
            line="$shape $(stat -c %s "$f") $(peak 3 cat "$f")"
            line="$line $(peak 3 "$cli" check --no-db "$f") $(peak 3 "$cli" parse --json "$f")"
            if [ -n "${BASE:-}" ]; then
                line="$line $(peak 1 "$BASE" check --no-db "$f") $(peak 1 "$BASE" parse --json "$f")"
            else
                line="$line 0 0 0 0"
            fi
            echo "$line"
        done
    done
} >"$dir/peaks.txt"

# (d) The tables: peak memory, then time.
python3 - "$dir/peaks.txt" "${BASE:+yes}" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
with_base = len(sys.argv) > 2 and sys.argv[2] == "yes"
e = rows[0]
print(f"Empty input: `check --no-db` {int(e[4]) / 1024:.1f} MiB, "
      f"`parse --json` {int(e[6]) / 1024:.1f} MiB.")
print()
print("Peak resident memory; \"over `cat`\" is (peak − `cat`'s peak) / input size, in MiB per MiB.")
print()
head = "| shape | size | `cat` | `check` | over `cat` |"
rule = "|---|---:|---:|---:|---:|"
if with_base:
    head += " BASE `check` | over `cat` |"
    rule += "---:|---:|"
head += " `parse` | over `cat` |"
rule += "---:|---:|"
if with_base:
    head += " BASE `parse` | over `cat` |"
    rule += "---:|---:|"
print(head)
print(rule)
mib = lambda kb: f"{int(kb) / 1024:.1f} MiB"
for r in rows[1:]:
    shape, size = r[0], int(r[1]) / (1 << 20)
    cat_kb = int(r[2])
    over = lambda kb: f"{(int(kb) - cat_kb) / 1024 / size:.2f}"
    cells = [shape, f"{size:.0f} MiB", mib(cat_kb), mib(r[4]), over(r[4])]
    if with_base:
        cells += [mib(r[8]), over(r[8])]
    cells += [mib(r[6]), over(r[6])]
    if with_base:
        cells += [mib(r[10]), over(r[10])]
    print("| " + " | ".join(cells) + " |")
print()
print("Seconds per MiB of input (`/usr/bin/time`'s %e, 10 ms steps: the largest size only).")
print()
big = max(int(r[1]) for r in rows[1:])
head = "| shape | `check` |" + (" BASE `check` |" if with_base else "") + " `parse` |" + (" BASE `parse` |" if with_base else "")
print(head)
print("|---|" + "---:|" * (head.count("|") - 2))
for r in rows[1:]:
    size = int(r[1]) / (1 << 20)
    if size < big / (1 << 20) / 2:
        continue
    per = lambda s: f"{float(s) / size:.3f}"
    cells = [r[0], per(r[5])] + ([per(r[9])] if with_base else []) + [per(r[7])] + ([per(r[11])] if with_base else [])
    print("| " + " | ".join(cells) + " |")
PY
