#!/usr/bin/env python3
"""defer_gaps.py DB RUN...: how far apart a run's consecutive probe deferrals are.

For each run (a kernel run of --mode kernel, or a DES twin of it), the time between two
probe_defer events of different devices with no probe or runtime-PM event between them:
on one thread (order sync, --workers 1) two such deferrals are back to back, so the gap is
what one deferring attempt costs.  Two modes show: first attempts (the registration walk:
really_probe() up to device_links_check_suppliers(), cost.check_ns in the DES) and retries
(deferred_probe_work_func(): the device off the active list, device_pm_move_to_tail(),
bus_probe_device(), the same check: cost.reorder_* + retry_ns + check_ns).  Prints per run
n, p10, p25, median and p75 in microseconds; sim/engine/cost.c derives the guest profile's
check_ns and retry_ns from them.
"""
import sqlite3
import statistics
import sys

KINDS = ("probe_defer", "probe_start", "probe_end", "rpm_resume", "rpm_suspend")


def gaps(db, run):
    out, last = [], None
    q = "select t_ns, kind, dev_id from events where run_id = ? and kind in (?, ?, ?, ?, ?) order by seq"
    for t, kind, dev in db.execute(q, (run,) + KINDS):
        if kind == "probe_defer" and last and last[1] == "probe_defer" and last[2] != dev:
            out.append(t - last[0])
        last = (t, kind, dev)
    return sorted(out)


def main(argv):
    if len(argv) < 3:
        print("usage: defer_gaps.py DB RUN...", file=sys.stderr)
        return 2
    db = sqlite3.connect(argv[1])
    for run in map(int, argv[2:]):
        row = db.execute("select mode, order_name, devices, kernel from runs where run_id = ?",
                         (run,)).fetchone()
        g = gaps(db, run)
        if not row or not g:
            print(f"run {run}: no consecutive deferrals")
            continue
        n = len(g)
        print(f"run {run} ({row[0]}, {row[1]}, {row[2]} devices, {row[3]}): n {n}, "
              f"p10 {g[n // 10] / 1e3:.1f} us, p25 {g[n // 4] / 1e3:.1f}, "
              f"median {statistics.median(g) / 1e3:.1f}, p75 {g[3 * n // 4] / 1e3:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
