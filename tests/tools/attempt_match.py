#!/usr/bin/env python3
"""attempt_match.py DB KERNEL_RUN TWIN_RUN KERNEL_WALKER TWIN_WALKER: a probe op's attempts,
kernel run against its twin, matched one by one.

An attempt ends with its probe_defer or probe_end on the walker (the worker that retries:
in --mode kernel the deferred-probe kworker, in a --workers 1 twin its one CPU).  The
kernel logs a deferral as the attempt ends; the DES logs it as the attempt starts and
charges its cost after, so the twin's attempt is taken to end at the walker's next event.
Attempts are matched by (device, kind, occurrence).  Between two matched attempts the lead
the kernel gains over the twin is put down to the second attempt's kind (defer or bind) and
to how many more runtime resumes (rpm_resume) the kernel made in it than the twin.  Prints,
per class, how many attempts, the lead gained in all and per attempt.  What it showed on the
d50-sync boots: attempts with as many resumes as the twin's were 39.5 us longer in the
kernel (pm_wq's kworker taking the vCPU between two attempts, cost.h rpm_idle_ns).
"""
import collections
import sqlite3
import sys

KINDS = ("probe_start", "probe_end", "probe_defer", "rpm_resume", "deferred_retry")


def attempts(db, run, walker, shift):
    """(device, kind, occurrence) -> [end time, resumes before it, bound?]."""
    rows = db.execute("SELECT t_ns, dev_id, kind, worker FROM events WHERE run_id = ? AND kind IN"
                      " (%s) ORDER BY seq" % ",".join("?" * len(KINDS)), (run, *KINDS)).fetchall()
    out = collections.OrderedDict()
    occ = collections.Counter()
    resumes, pending = 0, None
    for t, d, kind, w in rows:
        if kind == "rpm_resume":
            resumes += 1
            continue
        if w != walker:
            continue
        if pending is not None and kind in ("deferred_retry", "probe_start", "probe_defer"):
            out[pending][0] = t       # the twin's deferral ends where the walker goes on
            pending = None
        if kind in ("probe_defer", "probe_end"):
            key = (d, kind, occ[(d, kind)])
            occ[(d, kind)] += 1
            out[key] = [t, resumes, kind == "probe_end"]
            resumes = 0
            if shift and kind == "probe_defer":
                pending = key
    return out


def main(argv):
    if len(argv) != 6:
        sys.exit(__doc__.split("\n")[0])
    db = sqlite3.connect(argv[1])
    kernel = attempts(db, int(argv[2]), int(argv[4]), False)
    twin = attempts(db, int(argv[3]), int(argv[5]), True)
    lead = collections.defaultdict(list)
    prev = None
    for key, (tk, rk, bound) in kernel.items():
        if key not in twin:
            continue
        d = tk - twin[key][0]
        if prev is not None:
            lead[("bind" if bound else "defer", rk - twin[key][1])].append(d - prev)
        prev = d
    print("%-6s %15s %6s %12s %12s" % ("kind", "more resumes", "n", "lead ms", "us each"))
    for (kind, more), v in sorted(lead.items()):
        print("%-6s %15d %6d %12.3f %12.1f" % (kind, more, len(v), sum(v) / 1e6, sum(v) / len(v) / 1e3))


if __name__ == "__main__":
    main(sys.argv)
