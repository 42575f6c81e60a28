#!/usr/bin/env python3
"""reorder_fit.py DUMP DB RUN: what a device_reorder_to_tail() call costs in the guest.

DUMP is the --kernel-save dump of kernel run RUN in DB.  Each "reorder" record of the
module (a kretprobe on device_pm_move_to_tail(): its guest time in FLAGS) is paired with
the calls the walk makes, as the kernel's device_reorder_to_tail() recurses over children
and consumers with no visited set: P(d) = 1 + sum of P over d's children and the
consumers of its links that are not SYNC_STATE_ONLY (sim/core/dl_visits.c), from RUN's
devices and links.  Prints the least-squares fit ns = a + b * calls (cost.reorder_ns and
cost.reorder_visit_ns), the same fit on each walk size's median, and the total.  The records' times are wall-of-guest: a task
that shares the vCPU inflates them (before kernel mode booted with cryptomgr.notests=1,
6.12's and 7.3's crypto self-tests did; tests/tools/probe_silences.py shows who ran).
Nothing is written.  Exit 2 on a dump with no reorder record.
"""
import functools
import sqlite3
import statistics
import sys


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    dump, dbp, run = sys.argv[1], sys.argv[2], int(sys.argv[3])
    con = sqlite3.connect(f"file:{dbp}?mode=ro", uri=True)
    below = {}
    for d, p in con.execute("select dev_id, parent_id from devices where run_id = ?", (run,)):
        below.setdefault(d, [])
        if p is not None and p >= 0:
            below.setdefault(p, []).append(d)
    for c, s, fl in con.execute("select consumer_id, supplier_id, flags from links where run_id = ?",
                                (run,)):
        if "SYNC_STATE_ONLY" not in (fl or ""):
            below.setdefault(s, []).append(c)

    @functools.lru_cache(maxsize=None)
    def paths(d):
        return 1 + sum(paths(x) for x in below.get(d, ()))

    xs, ys = [], []
    with open(dump, errors="replace") as f:
        for line in f:
            if line.startswith("@done"):
                break
            p = line.split()
            if len(p) == 8 and p[1] == "reorder" and p[0].isdigit():
                xs.append(paths(int(p[2])))
                ys.append(int(p[6]))
    if not xs:
        print(f"{dump}: no reorder record", file=sys.stderr)
        sys.exit(2)
    a, b = fit(xs, ys)
    by = {}
    for x, y in zip(xs, ys):
        by.setdefault(x, []).append(y)
    # robust: each walk size's median duration, weighted by how many walks had it (a walk
    # that a woken kworker preempted is an outlier, and least squares follows outliers)
    mx = [x for x, v in by.items() for _ in v]
    my = [statistics.median(v) for v in by.values() for _ in v]
    ra, rb = fit(mx, my)
    print(f"run {run}: {len(xs)} reorders, {sum(xs)} calls, {sum(ys) / 1e6:.1f} ms; "
          f"fit {a:.0f} ns + {b:.0f} ns a call; on the medians per walk size "
          f"{ra:.0f} ns + {rb:.0f} ns a call")


def fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return my - b * mx, b


if __name__ == "__main__":
    main()
