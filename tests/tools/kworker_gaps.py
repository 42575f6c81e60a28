#!/usr/bin/env python3
"""kworker_gaps.py DB RUN...: how long a kernel run's kworkers take from one async PM
callback's end to the next one's start.

In each PM phase that runs work items (not prepare, complete), the time from a callback's
end to the next event when that is a callback's start on another kworker (worker != 0, the
main PM thread's): on the guest's one vCPU, complete_all(), the finished worker's return to
worker_thread(), the switch to the next kworker and its start.  Prints per run and phase n,
p25 and median in microseconds; sim/engine/cost.c derives the guest profile's wake_ns from
the suspend phases.  Meant for kernel runs (--mode kernel), whose worker column names the
kworker; a DES run's names its CPU.
"""
import sqlite3
import statistics
import sys


def gaps(db, run):
    out, last = {}, None
    q = ("select t_ns, kind, phase, worker from events where run_id = ? and "
         "(kind like 'suspend\\_%' escape '\\' or kind like 'resume\\_%' escape '\\') order by seq")
    for t, kind, phase, worker in db.execute(q, (run,)):
        if (last and kind.endswith("_start") and last[1].endswith("_end") and worker != 0
                and worker != last[3] and phase == last[2] and phase not in ("prepare", "complete")):
            out.setdefault(phase, []).append(t - last[0])
        last = (t, kind, phase, worker)
    return out


def main(argv):
    if len(argv) < 3:
        print("usage: kworker_gaps.py DB RUN...", file=sys.stderr)
        return 2
    db = sqlite3.connect(argv[1])
    for run in map(int, argv[2:]):
        row = db.execute("select mode, order_name, devices, kernel from runs where run_id = ?",
                         (run,)).fetchone()
        cells = []
        for phase, g in sorted(gaps(db, run).items()):
            g.sort()
            cells.append(f"{phase} n {len(g)} p25 {g[len(g) // 4] / 1e3:.1f} us "
                         f"median {statistics.median(g) / 1e3:.1f}")
        print(f"run {run} {row}: " + ("; ".join(cells) if cells else "no kworker gaps"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
