#!/usr/bin/env python3
"""sleep_overshoot.py DB KERNEL_RUN DES_RUN: how late the guest woke the kernel run's sleeps.

For every PM callback both runs made (same device, phase and occurrence) whose DES
duration is above zero (a callback that sleeps its requested latency: the DES twin's
duration is that latency, plus the twin's own cost.sleep_end_ns), the kernel's duration
less the DES's.  The DES stamps a callback's start after the overhead its burst pays
first (main's step, a kworker's wake), so a callback that does not sleep lasts 0 there
and is left out; before that, main_ns made every callback on the main thread last
main_ns, and those were averaged in (issue 31).  Prints their mean in
integer nanoseconds (0 when there is none, never below 0), for `--set
cost.sleep_end_ns=`: the mean, since a sync phase's makespan adds them up.  Under
QEMU's -icount the overshoot is a property of the boot: ~15 us on some, quanta of
~275 us on others (tests/kernel_fidelity.sh).
"""
import sqlite3
import sys

KINDS = ("suspend_start", "suspend_end", "resume_start", "resume_end")


def durations(db, run):
    start, occ, out = {}, {}, {}
    q = ("select t_ns, kind, phase, dev_id from events where run_id = ? and kind in "
         "(?, ?, ?, ?) order by seq")
    for t, kind, phase, dev in db.execute(q, (run,) + KINDS):
        key = (kind.rsplit("_", 1)[0], phase, dev)
        if kind.endswith("_start"):
            start[key] = t
        elif key in start:
            n = occ.get(key, 0)
            occ[key] = n + 1
            out[key + (n,)] = t - start.pop(key)
    return out


def main(argv):
    if len(argv) != 4:
        print("usage: sleep_overshoot.py DB KERNEL_RUN DES_RUN", file=sys.stderr)
        return 2
    db = sqlite3.connect(argv[1])
    k, d = durations(db, int(argv[2])), durations(db, int(argv[3]))
    over = [k[x] - d[x] for x in k if x in d and d[x] > 0]
    print(max(sum(over) // len(over), 0) if over else 0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
