#!/usr/bin/env python3
"""probe_silences.py DUMP [--gap US] [--list N]: what the guest does in the probe op's
silences (issue 31), from a --kernel-save dump of a diagnostic boot.

Boot with the scheduler, workqueue, timer and idle tracepoints recorded (sim/kernel/init.sh):
  DLSIM_KERNEL_APPEND=dlsim_trace=1 dlsim run SCEN ... --mode kernel --kernel-save DUMP
The dump holds the module's records (ktime_get_ns()) and, after "@end", the ftrace text
(trace_clock mono: the same clock, to the microsecond).

A silence is a gap of more than --gap us (default 1000) between two consecutive records
of the first run's probe op (its first attempt to its last probe callback's end) with no
callback of ours open.  Per silence the trace says where the single vCPU was:
- idle (sched_switch to swapper, until the next switch away from it),
- running a task (per comm; kworkers by the work function they ran),
and what ended it: the first timer to expire in it after the CPU went idle the last time
(hrtimer_expire_entry / timer_expire_entry), or an interrupt.
Prints the totals, the classes, and --list N silences in detail, then where the vCPU was
over the whole probe op: idle, our tasks (a pid that wrote a record, a kworker) or a
foreign task (anything else: the boot's own late work, e.g. 6.12's crypto self-test
thread cryptomgr_test, which kernel mode's command line now turns off).
--max-foreign PCT: exit 1 when foreign tasks had more than PCT% of the probe op.
Nothing is written.  Exit 2 when the dump has no trace or no probe op.
"""
import argparse
import collections
import re
import sys

K_PROBE = 0
TRACE = re.compile(r"^\s*(.+)-(\d+)\s+\[\d+\]\s+\S+\s+(\d+)\.(\d+):\s+(\w+):\s*(.*)$")


def read(path):
    recs, trace, section = [], [], None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("@run"):
                section = "run" if section is None else "other"
                continue
            if line.startswith("@trace"):
                section = "trace"
                continue
            if line.startswith("@"):
                if section == "run" and line.startswith("@done"):
                    section = "done"
                continue
            if section == "run":
                p = line.split()
                if len(p) == 8 and p[0].isdigit():
                    recs.append((int(p[0]), p[1], int(p[2]), int(p[4]), int(p[7])))
            elif section == "trace":
                m = TRACE.match(line)
                if m:
                    t = int(m.group(3)) * 10**9 + int(m.group(4).ljust(9, "0")[:9])
                    trace.append((t, m.group(1).strip(), int(m.group(2)), m.group(5), m.group(6)))
    return recs, trace


def probe_window(recs):
    att = [r[0] for r in recs if r[1] == "core_defer" or (r[1] == "cb_start" and r[3] == K_PROBE)]
    ends = [r[0] for r in recs if r[1] == "cb_end" and r[3] == K_PROBE]
    if not att or not ends:
        return None
    return min(att), max(ends)


def silences(recs, t0, t1, gap):
    out, opened = [], set()
    win = [r for r in recs if t0 <= r[0] <= t1]
    for a, b in zip(win, win[1:]):
        if a[1] == "cb_start":
            opened.add((a[2], a[3]))
        elif a[1] == "cb_end":
            opened.discard((a[2], a[3]))
        if b[0] - a[0] > gap and not opened:
            out.append((a, b))
    return out


def field(s, key):
    m = re.search(key + r"=(\S+)", s)
    return m.group(1) if m else ""


def classify(trace, a, b):
    """Where the CPU spent (a, b) and what ended the silence."""
    ta, tb = a[0], b[0]
    # who runs at ta: the last switch before it
    cur = "?"
    i0 = 0
    lo, hi = 0, len(trace)
    while lo < hi:
        mid = (lo + hi) // 2
        if trace[mid][0] < ta:
            lo = mid + 1
        else:
            hi = mid
    i0 = lo
    for j in range(i0 - 1, -1, -1):
        if trace[j][3] == "sched_switch":
            cur = field(trace[j][4], "next_comm")
            break
        if trace[j][3] != "cpu_idle":
            cur = trace[j][1]
            break
    time = collections.Counter()
    work = collections.Counter()
    t, last_idle, ender = ta, None, None
    j = i0
    while j < len(trace) and trace[j][0] <= tb:
        tt, comm, pid, ev, rest = trace[j]
        if ev == "sched_switch":
            time["idle" if cur == "swapper/0" else cur] += tt - t
            t, cur = tt, field(rest, "next_comm")
            if cur == "swapper/0":
                last_idle, ender = tt, None
        elif ev == "workqueue_execute_start":
            work[rest.split("function ")[-1]] += 1
        elif ev in ("hrtimer_expire_entry", "timer_expire_entry") and last_idle is not None \
                and ender is None:
            ender = field(rest, "function")
        elif ev == "irq_handler_entry" and last_idle is not None and ender is None:
            ender = "irq " + field(rest, "name")
        j += 1
    time["idle" if cur == "swapper/0" else cur] += tb - t
    return time, work, ender


def cpu_by_task(trace, t0, t1):
    """vCPU time per (comm, pid) over (t0, t1), ("idle", 0) for swapper."""
    time = collections.Counter()
    cur, t = None, t0
    for tt, comm, pid, ev, rest in trace:
        if ev != "sched_switch":
            continue
        nxt = (field(rest, "next_comm"), int(field(rest, "next_pid") or -1))
        if tt <= t0:
            cur = nxt
            continue
        if tt >= t1:
            break
        if cur is not None:
            time[("idle", 0) if cur[1] == 0 else cur] += tt - t
        cur, t = nxt, tt
    if cur is not None:
        time[("idle", 0) if cur[1] == 0 else cur] += t1 - t
    return time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dump")
    ap.add_argument("--gap", type=int, default=1000, help="us")
    ap.add_argument("--list", type=int, default=0)
    ap.add_argument("--max-foreign", type=float, default=None, metavar="PCT")
    a = ap.parse_args()
    recs, trace = read(a.dump)
    if not trace:
        print(f"{a.dump}: no trace (boot with DLSIM_KERNEL_APPEND=dlsim_trace=1)", file=sys.stderr)
        sys.exit(2)
    w = probe_window(recs)
    if not w:
        print(f"{a.dump}: no probe op", file=sys.stderr)
        sys.exit(2)
    t0, t1 = w
    sil = silences(recs, t0, t1, a.gap * 1000)
    tot = sum(b[0] - x[0] for x, b in sil)
    print(f"probe {(t1 - t0) / 1e6:.1f} ms; silences > {a.gap} us with no callback open: "
          f"{len(sil)}, {tot / 1e6:.1f} ms")
    alltime, enders, around = collections.Counter(), collections.Counter(), collections.Counter()
    bytime = collections.Counter()
    for i, (x, b) in enumerate(sil):
        time, work, ender = classify(trace, x, b)
        alltime.update(time)
        enders[ender or "-"] += 1
        bytime[ender or "-"] += b[0] - x[0]
        around[(x[1] + ("/%d" % x[3] if x[1].startswith("cb") else ""),
                b[1] + ("/%d" % b[3] if b[1].startswith("cb") else ""))] += 1
        if i < a.list:
            print(f"  {x[0]} {x[1]} dev {x[2]} key {x[3]} -> +{(b[0] - x[0]) / 1e3:.0f} us "
                  f"{b[1]} dev {b[2]} key {b[3]}: " +
                  ", ".join(f"{k} {v / 1e3:.0f} us" for k, v in time.most_common(4)) +
                  f"; work {dict(work)}; ended by {ender}")
    print("  where the vCPU was: " + ", ".join(
        f"{k} {v / 1e6:.1f} ms" for k, v in alltime.most_common(8)))
    print("  what ended the idle: " + ", ".join(
        f"{k} {n} ({bytime[k] / 1e6:.1f} ms)" for k, n in enders.most_common(6)))
    print("  records around (before -> after): " + ", ".join(
        f"{p} -> {q} {n}" for (p, q), n in around.most_common(6)))
    ours = {r[4] for r in recs}
    time = cpu_by_task(trace, t0, t1)
    kind = collections.Counter()
    foreign = collections.Counter()
    for (comm, pid), v in time.items():
        if pid == 0:
            kind["idle"] += v
        elif pid in ours or comm.startswith("kworker/"):
            kind["ours"] += v
        else:
            kind["foreign"] += v
            foreign[f"{comm}-{pid}"] += v
    share = 100.0 * kind["foreign"] / (t1 - t0)
    print(f"probe op's vCPU: ours {kind['ours'] / 1e6:.1f} ms, idle {kind['idle'] / 1e6:.1f} ms, "
          f"foreign {kind['foreign'] / 1e6:.1f} ms ({share:.1f}%)" + "".join(
              f"; {k} {v / 1e6:.1f} ms" for k, v in foreign.most_common(4)))
    if a.max_foreign is not None and share > a.max_foreign:
        print(f"{a.dump}: foreign tasks had {share:.1f}% of the probe op (at most "
              f"{a.max_foreign}%)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
