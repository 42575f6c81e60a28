#!/usr/bin/env python3
"""pool_trace.py DUMP: how the async workqueue's kworker pool takes the PM phases' work items.

DUMP is a --kernel-save dump of a diagnostic boot (DLSIM_KERNEL_APPEND=dlsim_trace=1: its
@trace section has workqueue_queue_work/execute_start/execute_end, sched_wakeup/switch and
the kprobes on create_worker()).  Per window (the first run's probe op, each PM phase), for workqueue "async":
  queued       items queued (workqueue_queue_work)
  pend         peak items queued and not yet taken by a kworker (the pool's worklist)
  busy         peak items taken and not finished (kworkers holding an item, blocked or not)
  kw           distinct kworkers that took an item
  new          create_worker() calls
  back         items a kworker took right after its previous one's end (no wake between)
  woken        items taken by a kworker that was switched to (an idle one woken, or new)
  main_run_us  longest stretch the PM thread (the first task to queue) ran without a switch
Issue 31: the DES gave every queued item a kworker as soon as the vCPU was free; the kernel's
worklist holds them until a kworker is back or one idle is woken, and the pool grows one
create_worker() at a time.  Nothing is written.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import probe_silences as ps  # noqa: E402
import dispatch_spans as ds  # noqa: E402


def phase_stats(trace, a, b):
    queued = pend = busy = pend_pk = busy_pk = new = back = woken = 0
    kw, holding, last_end = set(), set(), {}
    main, run_from, main_run = None, None, 0
    for t, task, pid, ev, rest in trace:
        if t < a or t > b:
            continue
        if ev == "workqueue_queue_work" and "workqueue=async " in rest + " ":
            queued += 1
            pend += 1
            if main is None:
                main, run_from = pid, t
        elif ev == "workqueue_execute_start" and "async_run_entry_fn" in rest:
            pend = max(pend - 1, 0)
            busy += 1
            holding.add(pid)
            kw.add(pid)
            if last_end.get(pid) is not None:
                back += 1
            else:
                woken += 1
        elif ev == "workqueue_execute_end" and pid in holding:
            holding.discard(pid)
            busy -= 1
            last_end[pid] = t
        elif ev == "dl_create_worker":
            new += 1
        elif ev == "sched_switch":
            if pid == main and run_from is not None:
                main_run = max(main_run, t - run_from)
                run_from = None
            nxt = ps.field(rest, "next_pid")
            if nxt.isdigit():
                last_end[int(nxt)] = None if int(nxt) not in holding else last_end.get(int(nxt))
                if int(nxt) == main:
                    run_from = t
        pend_pk, busy_pk = max(pend_pk, pend), max(busy_pk, busy)
    if main is not None and run_from is not None:
        main_run = max(main_run, b - run_from)
    return queued, pend_pk, busy_pk, len(kw), new, back, woken, main_run


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    recs, trace = ps.read(sys.argv[1])
    if not any(ev == "workqueue_queue_work" for _, _, _, ev, _ in trace):
        print(f"{sys.argv[1]}: no workqueue event (boot with DLSIM_KERNEL_APPEND=dlsim_trace=1)",
              file=sys.stderr)
        sys.exit(2)
    for name, a, b in ds.windows(recs):
        q, p, bz, kw, new, back, woken, mr = phase_stats(trace, a, b)
        print(f"{name:14s} queued {q:4d}  pend {p:4d}  busy {bz:4d}  kw {kw:3d}  new {new:3d}  "
              f"back {back:4d}  woken {woken:4d}  main_run_us {mr / 1e3:7.1f}")


if __name__ == "__main__":
    main()
