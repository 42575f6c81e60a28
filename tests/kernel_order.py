#!/usr/bin/env python3
"""kernel_order.py DB [RUN...]: on kernel-mode runs (default: all of them in DB),
prepare must run in dpm_list order and complete in the reverse order
(drivers/base/power/main.c: dpm_prepare() walks dpm_list forward and dpm_complete()
the prepared list backward, both on the main thread).  dpm_list is replayed from
the log (register, dpm_move, device_del) as `dlsim check` replays it.  Prints a
line per sleep cycle; exit 1 on a mismatch, 2 when a run has no sleep cycle."""
import sqlite3
import sys


def cycles(db, run):
    """Yield (dpm_list at the first prepare, prepare order, complete order) per cycle."""
    pos, clock = {}, 0
    snap, prep, comp = None, [], []
    rows = db.execute("select kind, dev_id, phase from events where run_id = ? and kind in"
                      " ('register', 'dpm_move', 'device_del', 'suspend_start',"
                      " 'resume_start') order by seq", (run,))
    for kind, dev, phase in rows:
        if kind in ("register", "dpm_move"):
            clock += 1
            pos[dev] = clock
        elif kind == "device_del":
            pos.pop(dev, None)
        elif kind == "suspend_start" and phase == "prepare":
            if comp:                      # a new cycle begins
                yield snap, prep, comp
                snap, prep, comp = None, [], []
            if snap is None:
                snap = sorted(pos, key=pos.get)
            prep.append(dev)
        elif kind == "resume_start" and phase == "complete":
            comp.append(dev)
    if prep:
        yield snap, prep, comp


db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
runs = [int(r) for r in sys.argv[2:]] or [r for (r,) in db.execute(
    "select run_id from runs where mode = 'kernel' order by run_id")]
bad = 0
for run in runs:
    n = 0
    for snap, prep, comp in cycles(db, run):
        n += 1
        ok_p = prep == snap[:len(prep)]
        ok_c = set(comp) <= set(prep) and comp == [d for d in reversed(prep) if d in set(comp)]
        print("run %d cycle %d: prepare %s dpm_list order (%d devices), complete %s its"
              " reverse (%d devices)" % (run, n, "in" if ok_p else "NOT in", len(prep),
                                         "in" if ok_c else "NOT in", len(comp)))
        bad += (not ok_p) + (not ok_c)
    if not n:
        print("run %d: no sleep cycle" % run)
        sys.exit(2)
sys.exit(1 if bad else 0)
