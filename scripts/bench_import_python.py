#!/usr/bin/env python3
"""The Python side of scripts/bench-import.sh: what inserting the rows crosstalk produced costs
when the parsing is already done.

  dump SOURCE_DB DIR          Rows and schema of a database crosstalk imported into:
                              DIR/schema.sql and DIR/rows-TABLE.jsonl for every table
                              crosstalk writes (the input as received, threads, messages,
                              the delivery ledger in them, signature verdicts).
  insert DIR DB [TIMES]       A fresh DB with that schema (the full-text table without
                              triggers), then in one transaction: the rows of each table with
                              one prepared statement (executemany), and one FTS5 'rebuild'.
                              Loading the rows is timed apart from inserting them; with TIMES,
                              "load insert" seconds are appended to that file. Same pragmas
                              as crosstalk.
  lean DIR DB [TIMES [PAGE]]  The lean baseline: the same envelopes' fields (DIR/rows-lean.jsonl,
                              written by dump) into one plain table keyed by message id, with
                              the tree's indexes (thread, parent) and a full-text index of
                              body, context, sender and recipient, in one transaction. No
                              input kept, no ledger. With TIMES, "load insert" seconds are
                              appended to that file; with PAGE, the database has pages of
                              that many bytes (as crosstalk's new databases do) instead of
                              SQLite's default.
  compare DB_A DB_B           Same messages, threads and full-text index in both databases.
  table HYPERFINE_JSON TIMES LEAN_TIMES LEAN_PAGE_TIMES ENVELOPES BYTES   The markdown table of the comparison.
  rss ENVELOPES:BYTES:KB...   The markdown table of crosstalk's peak memory.
"""

import json
import sqlite3
import sys
import time

FTS = "messages_fts"
# crosstalk keeps its full-text index in a file of its own beside the database (words only,
# no text). Python inserting the same rows indexes them in the database itself, as crosstalk
# did before, with the same columns and tokenizer: the leanest way to the same index.
FTS_SQL = (f"CREATE VIRTUAL TABLE {FTS} USING fts5(body, context, participants, "
           "content = 'messages', content_rowid = 'seq', tokenize = 'unicode61');")
# Every table crosstalk writes on import, parents before children (foreign keys are on).
# (The delivery ledger is columns of `messages` since schema 8; `delivery` is a view.)
TABLES = (("pastes", "id"), ("paste_pieces", "paste_id, seq"), ("threads", "id"),
          ("messages", "seq"), ("signatures", "seq"))
# The tables added since the first baseline: their insert is timed apart, so that the figure
# without them stays comparable with earlier runs.
LEDGER = ("signatures",)


def connect(path, page_size=None):
    conn = sqlite3.connect(path, isolation_level=None)
    if page_size:
        conn.execute(f"PRAGMA page_size = {int(page_size)}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA cache_size = -32768")
    return conn


def dump(source, out):
    conn = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    ddl = []
    for kind, name, sql in conn.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid"
    ):
        # FTS5 makes its shadow tables itself; no triggers: the index is rebuilt at the end.
        if kind == "trigger" or (kind == "table" and name.startswith(FTS + "_")):
            continue
        # SQLite's own (AUTOINCREMENT's counters) are made by SQLite.
        if name.startswith("sqlite_"):
            continue
        ddl.append(sql + ";")
    if not any(FTS_SQL.split("(")[0] in d for d in ddl):
        ddl.append(FTS_SQL)
    with open(f"{out}/schema.sql", "w") as f:
        f.write("\n".join(ddl) + "\n")
    for table, order in TABLES:
        # Stored columns only: a generated one is computed by SQLite, not inserted.
        columns = [r[0] for r in conn.execute(f"SELECT name FROM pragma_table_info('{table}')")]
        cur = conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}")
        with open(f"{out}/rows-{table}.jsonl", "w") as f:
            f.write(json.dumps(columns) + "\n")
            for row in cur:
                # JSON has no bytes: a BLOB (the input as received) is written as hex.
                row = [{"hex": v.hex()} if isinstance(v, bytes) else v for v in row]
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    dump_lean(conn, out)


# The lean baseline: what storing the envelopes' fields with the tree's indexes and a
# full-text index costs, with nothing else kept. Columns as crosstalk's messages hold them.
LEAN_COLUMNS = ("id", "thread_id", "parent_id", "sender", "recipient", "user", "session",
                "context", "intent", "meta", "body", "sig")
LEAN_SCHEMA = f"""
CREATE TABLE envelopes (
    id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, parent_id TEXT, sender TEXT NOT NULL,
    recipient TEXT NOT NULL, user TEXT, session TEXT, context TEXT, intent TEXT, meta TEXT,
    body TEXT, sig TEXT
);
CREATE INDEX envelopes_thread ON envelopes(thread_id);
CREATE INDEX envelopes_parent ON envelopes(parent_id);
CREATE VIRTUAL TABLE envelopes_fts USING fts5(
    body, context, sender, recipient, content = 'envelopes', tokenize = 'unicode61'
);
"""


def dump_lean(conn, out):
    cur = conn.execute(f"SELECT {', '.join(LEAN_COLUMNS)} FROM messages ORDER BY seq")
    with open(f"{out}/rows-lean.jsonl", "w") as f:
        f.write(json.dumps(LEAN_COLUMNS) + "\n")
        for row in cur:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def lean(rows_dir, db, times=None, page_size=None):
    start = time.perf_counter()
    columns, rows = load(f"{rows_dir}/rows-lean.jsonl")
    loaded = time.perf_counter()
    conn = connect(db, page_size)
    conn.executescript(LEAN_SCHEMA)
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(insert_sql("envelopes", columns), rows)
    conn.execute("INSERT INTO envelopes_fts(envelopes_fts) VALUES ('rebuild')")
    conn.execute("COMMIT")
    conn.close()
    record(times, loaded - start, time.perf_counter() - loaded)


def insert_sql(table, columns):
    return "INSERT INTO {} ({}) VALUES ({})".format(
        table, ", ".join(columns), ", ".join("?" * len(columns))
    )


def record(times, *seconds):
    """Appends one run's figures to the file `times`, when there is one."""
    if times:
        with open(times, "a") as f:
            f.write(" ".join(f"{s:.6f}" for s in seconds) + "\n")


def load(path):
    with open(path) as f:
        columns = json.loads(f.readline())
        unhex = lambda v: bytes.fromhex(v["hex"]) if isinstance(v, dict) else v
        return columns, [tuple(unhex(v) for v in json.loads(line)) for line in f]


def insert(rows_dir, db, times=None):
    start = time.perf_counter()
    tables = {t: load(f"{rows_dir}/rows-{t}.jsonl") for t, _ in TABLES}
    with open(f"{rows_dir}/schema.sql") as f:
        schema = f.read()
    loaded = time.perf_counter()

    conn = connect(db)
    conn.executescript(schema)
    conn.execute("BEGIN IMMEDIATE")
    ledger = 0.0
    for table, _ in TABLES:
        columns, rows = tables[table]
        began = time.perf_counter()
        conn.executemany(insert_sql(table, columns), rows)
        if table in LEDGER:
            ledger += time.perf_counter() - began
    conn.execute(f"INSERT INTO {FTS}({FTS}) VALUES ('rebuild')")
    conn.execute("COMMIT")
    conn.close()
    record(times, loaded - start, time.perf_counter() - loaded, ledger)


def compare(a, b):
    """Both databases hold the same import: v1.0 envelopes get fresh ids on every import, so
    only the ids that came with the envelopes are compared one by one."""
    ca, cb = (sqlite3.connect(f"file:{p}?mode=ro", uri=True) for p in (a, b))
    # A database crosstalk wrote has its index in the file beside it.
    fts = {}
    for name, c in (("a", ca), ("b", cb)):
        path = a if name == "a" else b
        inside = c.execute("SELECT count(*) FROM sqlite_master WHERE name = ?", (FTS,)).fetchone()[0]
        if not inside:
            c.execute("ATTACH ? AS search", (f"file:{path}-search?mode=ro",))
        fts[name] = FTS if inside else f"search.{FTS}"
    checks = [
        "SELECT count(*), total(length(body)), total(length(raw)), total(ids_assigned) FROM messages",
        "SELECT id FROM messages WHERE ids_assigned = 0 ORDER BY seq",
        "SELECT count(*), total(message_count) FROM threads",
        "SELECT count(*), total(length(bytes)) FROM paste_pieces",
        "SELECT count(*), total(received), total(to_me), total(missing_parent) FROM delivery",
        "SELECT state, count(*) FROM delivery GROUP BY state ORDER BY state",
        f"SELECT count(*) FROM {FTS} WHERE {FTS} MATCH 'backfill'",
        f"SELECT count(*) FROM {FTS} WHERE {FTS} MATCH 'zusammenfassung'",
    ]
    for sql in checks:
        try:
            ra = ca.execute(sql.replace(f"FROM {FTS}", f"FROM {fts['a']}")).fetchall()
            rb = cb.execute(sql.replace(f"FROM {FTS}", f"FROM {fts['b']}")).fetchall()
        except sqlite3.OperationalError as e:
            # crosstalk's index (contentless_delete, SQLite 3.43) may be newer than the
            # SQLite Python was built with; crosstalk's own tests compare it with its messages.
            if FTS not in sql:
                raise
            print(f"bench-import: full-text counts not compared ({e}; SQLite "
                  f"{sqlite3.sqlite_version})", file=sys.stderr)
            continue
        if ra != rb:
            sys.exit(f"bench-import: {a} and {b} differ: {sql}: {ra[:3]} vs {rb[:3]}")
    n = ca.execute("SELECT count(*) FROM messages").fetchone()[0]
    print(f"bench-import: {a} and {b} hold the same {n} messages")


def table(hyperfine_json, times, lean_times, lean_page_times, envelopes, size):
    envelopes, size = int(envelopes), int(size)
    results = {r["command"]: r for r in json.load(open(hyperfine_json))["results"]}
    # `crosstalk import` exits 1 when some envelope was rejected, which is a result, not a
    # failure; anything else (usage error, crash) means the wrong thing was timed.
    allowed = {"crosstalk": {0, 1}, "python": {0}, "lean": {0}, "lean-16k": {0}}
    bad = [
        f"{name}: exit codes {sorted(set(r.get('exit_codes') or []))}"
        for name, r in results.items()
        if not set(r.get("exit_codes") or []) <= allowed[name]
    ]
    if bad or set(results) != set(allowed):
        sys.exit("bench-import: failed runs: " + ("; ".join(bad) or str(sorted(results))))

    def mean_times(path):
        runs = [tuple(map(float, line.split())) for line in open(path) if line.strip()]
        return [sum(r[i] for r in runs) / len(runs) for i in range(len(runs[0]))], len(runs)

    (load_s, insert_s, ledger_s), n = mean_times(times)
    (lean_load_s, lean_s), _ = mean_times(lean_times)
    (_, lean_page_s), _ = mean_times(lean_page_times)
    ct, py, lean_r = results["crosstalk"], results["python"], results["lean"]
    lean_page_r = results["lean-16k"]
    mb = size / 1e6

    def ms(r):
        return f"{r['mean'] * 1e3:,.0f} ± {(r.get('stddev') or 0) * 1e3:,.0f} ms"

    def row(what, mean_text, seconds):
        print(f"| {what} | {mean_text} | {envelopes / seconds:,.0f} | {ct['mean'] / seconds:.2f}× |")

    print()
    print(f"Import of {envelopes:,} envelopes ({mb:.1f} MB transcript), {n} runs each:")
    print()
    print("| | mean | envelopes/s | crosstalk / this |")
    print("|---|---:|---:|---:|")
    row("`crosstalk import` (parse, thread, store, index)", ms(ct), ct["mean"])
    row("lean baseline, insert + FTS rebuild only", f"{lean_s * 1e3:,.0f} ms", lean_s)
    row("lean baseline, whole process (load rows + insert)", ms(lean_r), lean_r["mean"])
    row("lean baseline with 16 KiB pages, insert + FTS rebuild only", f"{lean_page_s * 1e3:,.0f} ms",
        lean_page_s)
    row("lean baseline with 16 KiB pages, whole process", ms(lean_page_r), lean_page_r["mean"])
    row("own rows, insert + FTS rebuild only", f"{insert_s * 1e3:,.0f} ms", insert_s)
    row("own rows, whole process (load rows + insert)", ms(py), py["mean"])
    bare = insert_s - ledger_s
    row("own rows without the signature verdicts", f"{bare * 1e3:,.0f} ms", bare)
    print()
    print(f"(Python spent {lean_load_s * 1e3:,.0f} ms (lean) and {load_s * 1e3:,.0f} ms (own rows)"
          " per run reading the prepared rows from JSON.)")


def rss(*entries):
    print()
    print("| transcript | size | crosstalk import peak RSS |")
    print("|---|---:|---:|")
    for entry in entries:
        envelopes, size, kb = map(int, entry.split(":"))
        print(f"| {envelopes:,} envelopes | {size / 1e6:.0f} MB | {kb / 1024:.0f} MiB |")


def main(argv):
    commands = {"dump": dump, "insert": insert, "lean": lean, "compare": compare, "table": table, "rss": rss}
    if len(argv) < 2 or argv[1] not in commands:
        sys.exit(__doc__)
    commands[argv[1]](*argv[2:])


if __name__ == "__main__":
    main(sys.argv)
