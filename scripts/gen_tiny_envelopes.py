#!/usr/bin/env python3
"""Writes SIZE MiB of tiny envelopes (about 200 bytes each, nothing between them) to OUT.

  gen_tiny_envelopes.py SIZE_MIB OUT [THREADS | v10]

Every envelope is a minimal valid v1.1 envelope: banner, `session`, `thread`, `message`,
`parent` (the thread's previous message), `intent` and a one-line body. The envelopes take
turns over THREADS threads (default 1: one long conversation of one session), and the ids are
ULID-shaped and increasing, so equal arguments give equal bytes. With `v10`: v1.0 envelopes
of one session, without ids (each is threaded under the session's latest message).
"""

import sys

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid(n):
    """A 26-character ULID-shaped id: a fixed time part, then `n` in base 32."""
    tail = []
    for _ in range(16):
        tail.append(CROCKFORD[n % 32])
        n //= 32
    return "01J9J3D3M6" + "".join(reversed(tail))


def main():
    size = int(float(sys.argv[1]) * (1 << 20))
    out = sys.argv[2]
    form = sys.argv[3] if len(sys.argv) > 3 else "1"
    threads = 1 if form == "v10" else int(form)
    last = {}
    written, i = 0, 0
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        while written < size:
            t = i % threads
            thread = ulid(t)
            message = ulid(1_000_000_000 + i)
            parent = f"parent: {last[t]}\n" if t in last else ""
            env = (
                f"[[CLAUDE\u2192CHATGPT v1]]\nuser: kalle\nsession: 2026-11-23T11Z a7f3d1\n"
                f"intent: INFORM\nbody: |\n  message {i} of the session\n[[END]]\n"
            ) if form == "v10" else (
                f"[[CLAUDE\u2192CHATGPT v1]]\nsession: 2026-11-23T11Z a7f3d1\nthread: {thread}\n"
                f"{parent}message: {message}\nintent: INFORM\nbody: |\n  ok {i}\n[[END]]\n"
            )
            f.write(env)
            written += len(env.encode("utf-8"))
            last[t] = message
            i += 1
    print(f"{i} envelopes, {written} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
