#!/usr/bin/env python3
"""sweep_same.py A.db B.db: exit 0 when two sweep databases hold the same runs.

Runs are matched by their sweep key (scenario hash, order, seed, kernel, mode,
workers), not by run id; every table with a run_id column is compared row by
row, ignoring run ids, the wall-clock columns (started_at, finished_at) and
the wall_ns metric.  A run's rows that live in a shard (run_shards) are read
from the shard, so a sweep compares the same before and after --compact.
Prints the first differences."""
import os
import sqlite3
import sys

IGNORED_COLUMNS = {"run_id", "started_at", "finished_at"}
IGNORED_METRICS = {"wall_ns"}
SHARD_BOOKKEEPING = {"shards", "run_shards"}     # where the rows are, not what they are
SHARD_TABLES = {"events", "devices", "links", "refused"}   # sim/log/dl_log_shard.c
KEY = "scenario_hash, order_name, seed, ifnull(kernel, ''), mode, workers"


def shard_rows(db, path, table, keep):
    """(OUT's run id, row) of TABLE for every run whose rows live in a shard."""
    if table not in SHARD_TABLES or \
            not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'run_shards'").fetchone():
        return []
    out = []
    for sid, rel in db.execute("SELECT shard_id, path FROM shards"):
        runs = dict(db.execute("SELECT shard_run_id, run_id FROM run_shards WHERE shard_id = ?", (sid,)))
        if not runs:
            continue
        f = os.path.join(os.path.dirname(os.path.abspath(path)), rel)
        sh = sqlite3.connect("file:%s?mode=ro" % f, uri=True)
        cols = [r[1] for r in sh.execute("SELECT * FROM pragma_table_info(?)", (table,))]
        sel = ", ".join('"%s"' % c if c in cols else "NULL" for c in keep)
        for r in sh.execute('SELECT run_id, %s FROM "%s"' % (sel, table)):
            if r[0] in runs:
                out.append((runs[r[0]],) + tuple(r[1:]))
        sh.close()
    return out


def content(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    tables = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'sweep'"
        " AND name NOT LIKE 'sqlite_%'") if r[0] not in SHARD_BOOKKEEPING]
    key_of = {rid: key for rid, *key in db.execute("SELECT run_id, %s FROM sweep" % KEY)}
    out = {"sweep": sorted(tuple(r) for r in db.execute(
        "SELECT %s, status, error, source FROM sweep" % KEY))}
    if len(out["sweep"]) != len(set(r[:6] for r in out["sweep"])):
        out["duplicate keys"] = True
    for t in tables:
        cols = [r[1] for r in db.execute("SELECT * FROM pragma_table_info(?)", (t,))]
        if "run_id" not in cols:
            continue
        keep = [c for c in cols if c not in IGNORED_COLUMNS]
        rows = []
        for r in list(db.execute('SELECT run_id, %s FROM "%s"' % (", ".join('"%s"' % c for c in keep), t))) \
                + shard_rows(db, path, t, keep):
            row = dict(zip(keep, r[1:]))
            if t == "metrics" and row.get("name") in IGNORED_METRICS:
                continue
            rows.append((repr(key_of.get(r[0], ("no sweep row", r[0]))), tuple(map(repr, row.values()))))
        out[t] = sorted(rows)
    return out


def main():
    a, b = content(sys.argv[1]), content(sys.argv[2])
    diffs = 0
    for t in sorted(set(a) | set(b)):
        ra, rb = a.get(t, []), b.get(t, [])
        if ra != rb:
            diffs += 1
            sa, sb = set(map(repr, ra)) if isinstance(ra, list) else {repr(ra)}, \
                set(map(repr, rb)) if isinstance(rb, list) else {repr(rb)}
            print("%s: %d vs %d rows; only in A: %s; only in B: %s" % (
                t, len(ra) if isinstance(ra, list) else 1, len(rb) if isinstance(rb, list) else 1,
                sorted(sa - sb)[:2], sorted(sb - sa)[:2]))
    print("same content" if not diffs else "%d tables differ" % diffs)
    return 1 if diffs else 0


sys.exit(main())
