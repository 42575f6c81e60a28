#!/usr/bin/env python3
"""A fake guest for `dlsim advise --verify` tests (DLSIM_KGUEST_STUB=this file).

Called as `kguest_verify.py RUNS_DIR DUMP_FILE KERNEL_VERSION` in QEMU's place
(sim/kernel/kboot.c, docs/development.md).  It plays each job of RUNS_DIR/NNN/
as a one-CPU kernel that runs every callback one after another on the main
thread, each exactly as long as its sampled latency, and writes the dump that
sim/kernel/kdump.c reads: a serial guest, whose saving for a change is the
latency the change removes and nothing for a device made async.

KGUEST_VERIFY_MODE: serial (default); hang (sleeps until killed); fail (exits
1 having written nothing).  KGUEST_VERIFY_JITTER_NS: added to the last job's
probe, so that the two baselines of a --verify boot differ by that much.
KGUEST_VERIFY_CUT=N: job N's dump stops before its end (no @done), as a guest
whose output was lost mid-run; with KGUEST_VERIFY_CUT_BOOT=B and
KGUEST_VERIFY_COUNTER, only in boot B (from 0).  KGUEST_VERIFY_BOOT_JITTER_NS with
KGUEST_VERIFY_COUNTER=FILE (boots counted there): every job of every second
boot probes that much longer, a boot-to-boot spread.
"""
import os
import sys
import time

KEY_PROBE, KEY_REMOVE = 0, 1
MAIN_PID = 1


class Guest:
    def __init__(self, out):
        self.out = out
        self.t = 1_000_000_000
        self.ndev = 0
        self.lat = {}
        self.dpm = []

    def rec(self, kind, dev=-1, aux=-1, key=0, err=0, flags=0):
        self.out.append(f"{self.t} {kind} {dev} {aux} {key} {err} {flags} {MAIN_PID}")

    def callback(self, dev, key):
        self.rec("cb_start", dev, -1, key)
        self.t += self.lat.get(key, [0] * self.ndev)[dev]
        self.rec("cb_end", dev, -1, key)

    def sleep_cycle(self):
        # dpm_prepare forward, dpm_suspend* backward, dpm_resume* forward, dpm_complete backward
        for phase in range(8):
            devs = self.dpm if phase in (0, 4, 5, 6) else list(reversed(self.dpm))
            self.rec("phase_begin", -1, -1, phase)
            for d in devs:
                self.callback(d, phase + 2)
            self.t += 1000
            self.rec("phase_end", -1, -1, phase)

    def line(self, words, extra_ns):
        cmd = words[0]
        if cmd == "devices":
            self.ndev = int(words[1])
        elif cmd == "dev":
            self.dpm.append(int(words[1]))
            self.parent = getattr(self, "parent", {})
            self.parent[int(words[1])] = int(words[2])
        elif cmd == "lat":
            self.lat[int(words[1])] = [int(x) for x in words[2:]]
        elif cmd == "op":
            self.rec("op", -1, int(words[1]))
        elif cmd == "register":
            for d in self.dpm:
                self.rec("register", d, self.parent.get(d, -1))
        elif cmd == "link":
            self.rec("link_add", int(words[1]), int(words[2]), 0, 0, int(words[3]))
        elif cmd == "probe":
            self.t += extra_ns
            for d in self.dpm:
                self.callback(d, KEY_PROBE)
        elif cmd in ("unbind", "remove"):
            self.callback(int(words[1]), KEY_REMOVE)
        elif cmd == "bind":
            self.callback(int(words[1]), KEY_PROBE)
        elif cmd == "opend":
            self.rec("opend", -1, int(words[1]))


def play(run_dir, release, extra_ns):
    out = []
    g = Guest(out)
    for name in sorted(os.listdir(run_dir)):
        if not name[0].isdigit():
            continue
        with open(os.path.join(run_dir, name)) as f:
            for ln in f:
                if ln.split():
                    g.line(ln.split(), extra_ns)
        if name.endswith(".sleep"):
            g.sleep_cycle()
    head = f"dlsim-kdump 1 {release} x86_64 devices {g.ndev} records {len(out)} lost 0"
    return [head] + out


def main():
    runs, dump, kver = sys.argv[1], sys.argv[2], sys.argv[3]
    mode = os.environ.get("KGUEST_VERIFY_MODE", "serial")
    if mode == "hang":
        while True:
            time.sleep(1)
    if mode == "fail":
        sys.exit(1)
    jitter = int(os.environ.get("KGUEST_VERIFY_JITTER_NS", "0"))
    cut = int(os.environ.get("KGUEST_VERIFY_CUT", "-1"))
    boot_jitter = 0
    counter = os.environ.get("KGUEST_VERIFY_COUNTER")
    if counter:
        n = int(open(counter).read() or 0) if os.path.exists(counter) else 0
        if os.environ.get("KGUEST_VERIFY_CUT_BOOT", str(n)) != str(n):
            cut = -1
        with open(counter, "w") as f:
            f.write(str(n + 1))
        if n % 2:
            boot_jitter = int(os.environ.get("KGUEST_VERIFY_BOOT_JITTER_NS", "0"))
    jobs = sorted(os.listdir(runs))
    lines = []
    for i, job in enumerate(jobs):
        lines.append(f"@run {job}")
        recs = play(os.path.join(runs, job), f"{kver}.0-kguest-verify",
                    boot_jitter + (jitter if i == len(jobs) - 1 else 0))
        if i == cut:
            lines += recs[:len(recs) // 2]
            continue
        lines += recs
        lines.append(f"@done {job}")
    lines.append("@end")
    with open(dump, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
