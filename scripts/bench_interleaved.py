#!/usr/bin/env python3
"""Times commands in turn, round after round: on a shared machine a busy spell then slows
every command of the round alike, where hyperfine's runs of one command after the other let
it fall on one of them. Prints each command's median and minimum, and the median over the
rounds of its ratio to the last command (the baseline).

  bench_interleaved.py ROUNDS [--clean GLOB]... NAME COMMAND [NAME COMMAND]...

Files matching each GLOB are removed before every run (fresh databases). Commands run
through the shell, output discarded; a command that fails stops the script.
"""

import glob
import os
import statistics
import subprocess
import sys
import time


def main(argv):
    rounds = int(argv[0])
    rest = argv[1:]
    clean = []
    while rest and rest[0] == "--clean":
        clean.append(rest[1])
        rest = rest[2:]
    if not rest or len(rest) % 2:
        sys.exit(__doc__)
    commands = list(zip(rest[0::2], rest[1::2]))
    times = {name: [] for name, _ in commands}
    for _ in range(rounds):
        for name, command in commands:
            for pattern in clean:
                for f in glob.glob(pattern):
                    os.remove(f)
            start = time.perf_counter()
            done = subprocess.run(command, shell=True, stdout=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - start)
            # Imports exit 1 when an envelope was rejected: a result, not a failure.
            if done.returncode > 1:
                sys.exit(f"{name}: exit status {done.returncode}")
    base = commands[-1][0]
    for name, _ in commands:
        ratios = [a / b for a, b in zip(times[name], times[base])]
        print(
            f"{name:12} median {statistics.median(times[name]) * 1e3:8.0f} ms"
            f"  min {min(times[name]) * 1e3:8.0f} ms"
            f"  / {base} {statistics.median(ratios):.2f}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
