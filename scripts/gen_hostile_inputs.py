#!/usr/bin/env python3
"""Writes SIZE MiB of one hostile input shape to OUT: the corpus scripts/bench-memory.sh
measures peak memory on. Equal arguments give equal bytes.

  gen_hostile_inputs.py SHAPE SIZE_MIB OUT
  gen_hostile_inputs.py --list

The shapes (`transcript`, the ordinary one, is made by examples/gen_transcript.rs):

  stray-end        `[[END]]` lines with no envelope open, indented every other line (an
                   indented one is no place to cut the input): one diagnostic per 9 bytes
  collapsed        one-line envelopes, one a line (`[[A→B v1]] user: x … [[END]]`)
  no-end           banners with headers and a body but no `[[END]]`, one after the other
  giant            envelopes just under the 1 MiB size limit, their header section full
                   of lines that are not headers (one `unexpected-line` error per line)
  huge-body        one envelope whose body is the whole input (over the size limit)
  meta             envelopes of a thousand META blocks each, every block naming a key twice
  quotes           envelopes behind quote prefixes up to 300 levels deep (`> > > …`)
  long-line        one line without a line break: one-line envelopes one after the other
  cr               ordinary envelopes with CR line ends only (a terminal's paste)
  bad-utf8         envelopes between runs of bytes that are not UTF-8
  mbox             a mail mbox, one envelope in each message
"""

import sys

SHAPES = [
    "stray-end", "collapsed", "no-end", "giant", "huge-body", "meta", "quotes",
    "long-line", "cr", "bad-utf8", "mbox",
]

LIMIT = 1 << 20  # protocol::DEFAULT_SIZE_LIMIT
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid(n):
    """A ULID-shaped id: a fixed time part, then `n` in base 32."""
    tail = []
    for _ in range(16):
        tail.append(CROCKFORD[n % 32])
        n //= 32
    return "01J9J3D3M6" + "".join(reversed(tail))


def envelope(i, nl="\n"):
    """An ordinary valid v1.1 envelope, lines ended by `nl`."""
    lines = [
        "[[CLAUDE\u2192CHATGPT v1]]", "user: kalle", "session: 2026-11-23T11Z a7f3d1",
        f"thread: {ulid(i // 20)}", f"message: {ulid(1_000_000 + i)}", "intent: INFORM",
        "body: |", f"  message {i} of the session,", "  a second line of the body.",
        "sig: none", "[[END]]",
    ]
    return nl.join(lines) + nl


def pieces(shape):
    """An endless run of byte strings of the shape, in order."""
    i = 0
    if shape == "huge-body":
        yield envelope(0).split("  message")[0].encode()
        while True:
            yield f"  line {i} of a body that never ends, well past the size limit\n".encode()
            i += 1
    while True:
        if shape == "stray-end":
            yield b"[[END]]\n" if i % 2 else b" [[END]]\n"
        elif shape == "collapsed":
            yield (f"[[A\u2192B v1]] user: x session: 2025-10-09T15Z 04f07f intent: INFORM "
                   f"body: | note {i} sig: none [[END]]\n").encode()
        elif shape == "no-end":
            yield f"[[A\u2192B v1]]\nuser: x\nintent: INFORM\nbody: |\n  note {i}\n".encode()
        elif shape == "giant":
            head = "[[A\u2192B v1]]\nuser: x\nsession: 2025-10-09T15Z 04f07f\n"
            tail = "intent: INFORM\nbody: |\n  hi\nsig: none\n[[END]]\n"
            junk = "x\n" * ((LIMIT - 4096 - len(head) - len(tail)) // 2)
            yield (head + junk + tail).encode()
        elif shape == "meta":
            blocks = "".join(f"meta: m{k}\nKey: {k}\nKey: again\n" for k in range(1000))
            yield (f"[[A\u2192B v1]]\nuser: x\nsession: 2025-10-09T15Z 04f07f\n{blocks}"
                   f"intent: INFORM\nbody: |\n  note {i}\nsig: none\n[[END]]\n").encode()
        elif shape == "quotes":
            prefix = "> " * (1 + i % 300)
            yield "".join(prefix + line + "\n" for line in envelope(i).splitlines()).encode()
        elif shape == "long-line":
            yield f"[[A\u2192B v1]] user: x intent: INFORM body: | note {i} sig: none [[END]] ".encode()
        elif shape == "cr":
            yield envelope(i, "\r").encode()
        elif shape == "bad-utf8":
            yield envelope(i).encode() + b"\xff\xfe\xc3" * (1 + i % 64) + b"\n"
        elif shape == "mbox":
            yield (f"From kalle@example.org Mon Nov 23 11:{i % 60:02d}:00 2026\n"
                   f"From: kalle@example.org\nTo: relay@example.org\n"
                   f"Subject: envelope {i}\nMessage-ID: <m{i}@example.org>\n"
                   f"Content-Type: text/plain; charset=utf-8\n\n"
                   f"{envelope(i)}\n").encode()
        else:
            sys.exit(f"unknown shape {shape!r}; one of: {' '.join(SHAPES)}")
        i += 1


def main():
    if sys.argv[1:] == ["--list"]:
        print(" ".join(SHAPES))
        return
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    shape, size, out = sys.argv[1], int(float(sys.argv[2]) * (1 << 20)), sys.argv[3]
    written = 0
    with open(out, "wb") as f:
        for piece in pieces(shape):
            if written + len(piece) > size and written > 0 and shape != "huge-body":
                break
            piece = piece[: size - written]
            f.write(piece)
            written += len(piece)
            if written >= size:
                break
    print(f"{shape}: {written} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
