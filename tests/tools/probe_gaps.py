#!/usr/bin/env python3
"""probe_gaps.py DB RUN [RUN...]: where a run's first probe op spends the time no
probe callback covers (issue 31: probe is short in every twin, the replay twin too).

Per run, from its logged events alone (a kernel run and its twin side by side):
- the probe phase (first attempt to last probe_end), the time covered by at least one
  open probe callback, and the rest ("uncovered": the driver core, the walks, runtime PM,
  and whatever the guest does meanwhile);
- the time between consecutive probe events, by kind (defer -> defer, end -> start...);
- the silences: gaps of more than 1 ms with no event and no probe callback open, by the
  kinds of the events around them.
Nothing is written.  Exit 2 on a run without a probe op.
"""
import collections
import sqlite3
import statistics
import sys

PROBE = ("probe_start", "probe_end", "probe_defer")
QUIET = ("link_state", "dpm_move", "sync_state", "register", "link_add")


def probe_events(con, run):
    return con.execute(
        "select t_ns, kind, dev_id from events where run_id = ? and seq < coalesce("
        "(select min(seq) from events where run_id = ? and kind = 'suspend_start'), 1 << 62) "
        "order by seq", (run, run)).fetchall()


def report(con, run):
    ev = [e for e in probe_events(con, run) if e[1] not in QUIET]
    attempts = [e[0] for e in ev if e[1] in ("probe_start", "probe_defer")]
    ends = [e[0] for e in ev if e[1] == "probe_end"]
    if not attempts or not ends:
        print(f"run {run}: no probe op", file=sys.stderr)
        sys.exit(2)
    t0, t1 = min(attempts), max(ends)
    spans, opened = [], {}
    for t, k, d in ev:
        if k == "probe_start":
            opened[d] = t
        elif k == "probe_end" and d in opened:
            spans.append((opened.pop(d), t))
    covered, cur = 0, None
    for a, b in sorted(spans):
        if cur is None or a > cur[1]:
            covered += cur[1] - cur[0] if cur else 0
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    covered += cur[1] - cur[0] if cur else 0
    n = collections.Counter(k for _, k, _ in ev)
    print(f"run {run}: probe {(t1 - t0) / 1e6:.1f} ms, covered by a callback {covered / 1e6:.1f} ms, "
          f"uncovered {(t1 - t0 - covered) / 1e6:.1f} ms; binds {n['probe_end']}, deferrals "
          f"{n['probe_defer']}, runtime resumes {n['rpm_resume']}")
    pe = [e for e in ev if e[1] in PROBE]
    by = collections.defaultdict(list)
    for (ta, ka, _), (tb, kb, _) in zip(pe, pe[1:]):
        by[(ka, kb)].append(tb - ta)
    for (ka, kb), v in sorted(by.items(), key=lambda x: -sum(x[1])):
        print(f"  {ka:>11} -> {kb:<11} n {len(v):5d}  sum {sum(v) / 1e6:8.1f} ms  "
              f"median {statistics.median(v) / 1e3:8.1f} us")
    opened, silent = set(), []
    for (ta, ka, da), (tb, kb, _) in zip(ev, ev[1:]):
        if ka == "probe_start":
            opened.add(da)
        elif ka == "probe_end":
            opened.discard(da)
        if tb - ta > 1000000 and not opened:
            silent.append((ka, kb, tb - ta))
    around = collections.Counter((a, b) for a, b, _ in silent)
    print(f"  silences > 1 ms outside callbacks: {len(silent)}, "
          f"{sum(s for _, _, s in silent) / 1e6:.1f} ms; by the events around them: "
          + ", ".join(f"{a} -> {b} {c}" for (a, b), c in around.most_common(4)))


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    for run in sys.argv[2:]:
        report(con, int(run))


if __name__ == "__main__":
    main()
