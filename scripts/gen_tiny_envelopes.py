#!/usr/bin/env python3
"""Writes SIZE MiB of tiny envelopes (about 200 bytes each, nothing between them) to OUT.

  gen_tiny_envelopes.py SIZE_MIB OUT [THREADS | v10 | distinct | senders | sessions | orphans]

Every envelope is a minimal valid v1.1 envelope: banner, `session`, `thread`, `message`,
`parent` (the thread's previous message), `intent` and a one-line body. The envelopes take
turns over THREADS threads (default 1: one long conversation of one session), and the ids are
ULID-shaped and increasing, so equal arguments give equal bytes. With `v10`: v1.0 envelopes
of one session, without ids (each is threaded under the session's latest message).

The other forms make every envelope unrelated to the others, so that nothing an import keeps
per thread, session, sender or parent is ever used twice:

- `distinct`: each envelope opens its own thread of its own session (no parent);
- `senders`: as `distinct`, and each between its own pair of parties;
- `sessions`: v1.0 envelopes without ids, each of its own session;
- `orphans`: as `distinct`, each naming as its parent an id that names nothing (a reply
  whose parent never arrives).
"""

import random
import sys

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
DISTINCT = ("distinct", "senders", "sessions", "orphans")


def ulid(n, time="01J9J3D3M6"):
    """A 26-character ULID-shaped id: a time part, then `n` in base 32."""
    tail = []
    for _ in range(16):
        tail.append(CROCKFORD[n % 32])
        n //= 32
    return time + "".join(reversed(tail))


def random_time(rng):
    """A random ULID time part (its first character at most 7, as a ULID's is)."""
    return rng.choice(CROCKFORD[:8]) + "".join(rng.choice(CROCKFORD) for _ in range(9))


def distinct(form, i, rng):
    """The `i`th envelope of one of the DISTINCT forms."""
    if form == "sessions":
        return (
            f"[[CLAUDE\u2192CHATGPT v1]]\nuser: kalle\nsession: 2026-11-23T11Z s{i:07x}\n"
            f"intent: INFORM\nbody: |\n  message {i} of its session\n[[END]]\n"
        )
    sender, recipient = ("CLAUDE", "CHATGPT")
    if form == "senders":
        sender, recipient = (f"AGENT-{i:x}", f"PEER-{i:x}")
    # Unrelated ids: each with a random time part, so no two are neighbours in an index.
    thread = ulid(i, random_time(rng))
    message = ulid(1_000_000_000 + i, random_time(rng))
    parent = ""
    if form == "orphans":
        parent = f"parent: {ulid(rng.getrandbits(80), random_time(rng))}\n"
    return (
        f"[[{sender}\u2192{recipient} v1]]\nsession: 2026-11-23T11Z s{i:07x}\n"
        f"thread: {thread}\n{parent}message: {message}\nintent: INFORM\nbody: |\n  ok {i}\n"
        "[[END]]\n"
    )


def main():
    size = int(float(sys.argv[1]) * (1 << 20))
    out = sys.argv[2]
    form = sys.argv[3] if len(sys.argv) > 3 else "1"
    threads = 1 if form in ("v10",) + DISTINCT else int(form)
    rng = random.Random(7)
    last = {}
    written, i = 0, 0
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        while written < size:
            t = i % threads
            thread = ulid(t)
            message = ulid(1_000_000_000 + i)
            parent = f"parent: {last[t]}\n" if t in last else ""
            if form in DISTINCT:
                env = distinct(form, i, rng)
            elif form == "v10":
                env = (
                    f"[[CLAUDE\u2192CHATGPT v1]]\nuser: kalle\nsession: 2026-11-23T11Z a7f3d1\n"
                    f"intent: INFORM\nbody: |\n  message {i} of the session\n[[END]]\n"
                )
            else:
                env = (
                    f"[[CLAUDE\u2192CHATGPT v1]]\nsession: 2026-11-23T11Z a7f3d1\n"
                    f"thread: {thread}\n{parent}message: {message}\nintent: INFORM\n"
                    f"body: |\n  ok {i}\n[[END]]\n"
                )
            f.write(env)
            written += len(env.encode("utf-8"))
            last[t] = message
            i += 1
    print(f"{i} envelopes, {written} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
