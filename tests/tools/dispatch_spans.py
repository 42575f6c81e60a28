#!/usr/bin/env python3
"""dispatch_spans.py DUMP: how long the guest's dispatch paths take, per op and PM phase.

DUMP is a --kernel-save dump of a diagnostic boot (DLSIM_KERNEL_APPEND=dlsim_trace=1:
sim/kernel/init.sh adds kprobe events on the entry and return of create_worker(),
async_schedule_node_domain() and async_schedule_dev_nocall()).  A span is a call's
entry to its return on the same task, in the guest's wall time: it holds what the call
runs and anything that preempts it on the one vCPU (a woken kworker), and the kprobes'
and tracepoints' own cost, so the low percentiles are the call's cost.  Per function and
window (the first run's probe op, each PM phase, "other": outside them) prints n, p10,
median and p90 in microseconds; sim/engine/cost.c cites them.  Nothing is written.
Exit 2 when the dump has no kprobe event.
"""
import collections
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import probe_silences as ps  # noqa: E402

PHASES = ("prepare", "suspend", "suspend_late", "suspend_noirq", "resume_noirq", "resume_early",
          "resume", "complete")


def windows(recs):
    out = []
    w = ps.probe_window(recs)
    if w:
        out.append(("probe",) + w)
    ph = {}
    for r in recs:
        if r[1] in ("phase_begin", "phase_end"):
            ph.setdefault(r[3], [0, 0])[0 if r[1] == "phase_begin" else 1] = r[0]
    for k, (a, b) in sorted(ph.items()):
        out.append((PHASES[k] if k < len(PHASES) else str(k), a, b))
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    recs, trace = ps.read(sys.argv[1])
    wins = windows(recs)

    def where(t):
        for n, a, b in wins:
            if a <= t <= b:
                return n
        return "other"

    opened, spans = {}, collections.defaultdict(list)
    for t, _, pid, ev, _ in trace:
        if not ev.startswith("dl_"):
            continue
        if ev.endswith("_ret"):
            f = ev[3:-4]
            if (pid, f) in opened:
                t0 = opened.pop((pid, f))
                spans[(f, where(t0))].append(t - t0)
        else:
            opened[(pid, ev[3:])] = t
    if not spans:
        print(f"{sys.argv[1]}: no kprobe event (boot with DLSIM_KERNEL_APPEND=dlsim_trace=1)",
              file=sys.stderr)
        sys.exit(2)
    order = {n: i for i, (n, _, _) in enumerate(wins)}
    for (f, w), v in sorted(spans.items(), key=lambda x: (x[0][0], order.get(x[0][1], 99))):
        v.sort()
        print(f"{f:28s} {w:14s} n {len(v):5d}  p10 {v[len(v) // 10] / 1e3:7.1f}  median "
              f"{statistics.median(v) / 1e3:7.1f}  p90 {v[9 * len(v) // 10] / 1e3:8.1f} us")


if __name__ == "__main__":
    main()
