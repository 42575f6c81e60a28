#!/usr/bin/env python3
"""pm_guest_devices.py DUMP: what the guest's own devices cost in each PM phase.

DUMP is a --kernel-save dump of a diagnostic boot (DLSIM_KERNEL_APPEND=dlsim_trace=1:
sim/kernel/init.sh records power:device_pm_callback_start/end, which the driver core
fires around every device's PM callback, ours and the guest's own: platform, memory,
serial, virtio, PCI...).  Per PM phase of the first run (the module's phase records):
its span, the time inside our devices' callbacks (dlsim-a.N / dlsim-s.N, from the
tracepoint pairs), inside the guest's own devices' callbacks with their count and the
three costliest, and the rest (the PM core's walk between callbacks).  A DES twin knows
only our devices, so the guest's own are time it cannot have.  Nothing is written.
Exit 2 when the dump has no such tracepoint.
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dispatch_spans as dsp  # noqa: E402
import probe_silences as ps  # noqa: E402

CB = re.compile(r"^\s*(\S*)\s+(\S+), (?:parent|err)")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    recs, trace = ps.read(sys.argv[1])
    wins = [w for w in dsp.windows(recs) if w[0] != "probe"]
    opened, spans = {}, []
    for t, _, pid, ev, rest in trace:
        if ev not in ("device_pm_callback_start", "device_pm_callback_end"):
            continue
        m = CB.match(rest)
        if not m:
            continue
        key = (pid, m.group(1), m.group(2))
        if ev.endswith("start"):
            opened[key] = t
        elif key in opened:
            spans.append((opened.pop(key), t, m.group(2)))
    if not spans:
        print(f"{sys.argv[1]}: no device_pm_callback tracepoint (a dlsim_trace=1 boot)",
              file=sys.stderr)
        sys.exit(2)
    for name, a, b in wins:
        ours = other = 0
        cost = collections.Counter()
        n = 0
        for s, e, dev in spans:
            if a <= s <= b:
                if dev.startswith("dlsim-"):
                    ours += e - s
                else:
                    other += e - s
                    cost[dev] += e - s
                    n += 1
        print(f"{name:14s} span {(b - a) / 1e3:9.1f} us  ours {ours / 1e3:9.1f}  guest's own "
              f"{other / 1e3:8.1f} ({n} callbacks)  rest {(b - a - ours - other) / 1e3:8.1f}  " +
              ", ".join(f"{d} {v / 1e3:.0f}" for d, v in cost.most_common(3)))


if __name__ == "__main__":
    main()
