#!/usr/bin/env python3
"""ctrlc_times.py DLSIM WORKDIR [CASE...] - Ctrl-C, every verb: time from SIGINT to exit.

Issue 34's target is exit within 1 s of Ctrl-C for every verb on any input.
tests/cli_limits.sh holds the behaviour (exit 130, the run `interrupted`,
check passing); this script takes the figures of docs/development.md's
"Ctrl-C, every verb" table on big inputs, which no test can afford:

- a logged 1M-device run (default.json, cp-first: 31M events, 2.4 GB), made
  once in WORKDIR and kept there (`m1.db`), read by check, explain, diff,
  report, twin;
- run (DES and threads), compare and advise at 1M devices; a kernel-mode run
  as its guest boots; a sweep over the DTBs of
  /var/cache/dlsim-dtbs; import-log of a 262 MB log (the Pixel 6 log of
  ../shared/real repeated) and validate of a 3M-device listed scenario, both made once.

Each case starts dlsim with SIGINT at its default (as a terminal's job has it;
a shell's `cmd &` would ignore it), sends SIGINT at each moment (seconds after
the start), and prints one markdown row: the moment, the time from SIGINT to
exit, the exit status.  A moment after the command's own end says "ended".
The load average is printed first: take the figures on an idle machine.
Names the cases to run (default: all; `--list` lists them); `--at S,S,...`
sets the moments of every case named.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REAL = os.path.join(ROOT, "..", "shared", "real")


def ensure_m1(dlsim, work):
    db = os.path.join(work, "m1.db")
    if not os.path.exists(db):
        print(f"(making {db}: a logged 1M-device run, minutes)", file=sys.stderr)
        subprocess.run([dlsim, "run", os.path.join(ROOT, "scenarios/default.json"),
                        "--set", "devices=1000000", "--order", "cp-first", "--db", db + ".tmp"],
                       check=True, stdout=subprocess.DEVNULL)
        for ext in ("", "-wal", "-shm"):
            if os.path.exists(db + ".tmp" + ext):
                os.rename(db + ".tmp" + ext, db + ext)
    return db


def ensure_biglog(work):
    out = os.path.join(work, "big.log")
    if not os.path.exists(out):
        src = open(os.path.join(REAL, "pixel6-v616rc4-suspend-initcall.txt"), "rb").read()
        with open(out + ".tmp", "wb") as f:
            while f.tell() < 262 << 20:
                f.write(src)
        os.rename(out + ".tmp", out)
    return out


def ensure_big_scenario(work):
    out = os.path.join(work, "s3m.json")
    if not os.path.exists(out):
        # 3M listed devices, a binary tree of links: 376 MB of JSON to read
        n = 3_000_000
        devs = [{"name": f"d{i}", "probe": "1ms", "suspend": "100us", "resume": "100us"}
                for i in range(n)]
        links = [{"supplier": f"d{i // 2}", "consumer": f"d{i}"} for i in range(1, n)]
        with open(out + ".tmp", "w") as f:
            json.dump({"format": "dlsim-scenario/1", "name": "s3m", "devices": devs,
                       "links": links}, f)
        os.rename(out + ".tmp", out)
    return out


def cases(dlsim, work):
    sc = os.path.join(ROOT, "scenarios/default.json")
    m = lambda: ensure_m1(dlsim, work)
    one_m = ["--set", "devices=1000000"]
    out = lambda tag: os.path.join(work, f"out-{tag}-{os.getpid()}-{time.monotonic_ns()}")
    return {
        "run-nolog": (lambda: [dlsim, "run", sc, *one_m, "--order", "cp-first", "--no-log"], [1, 4, 20]),
        "run-logged": (lambda: [dlsim, "run", sc, *one_m, "--order", "cp-first",
                                "--db", out("run") + ".db"], [1, 4, 20, 40]),
        "run-threads": (lambda: [dlsim, "run", sc, *one_m, "--order", "cp-first", "--mode", "threads",
                                 "--no-log"], [3, 10]),
        # booting the guest (make kernels); a QEMU left behind would be a failure of its own
        "run-kernel": (lambda: [dlsim, "run", os.path.join(ROOT, "scenarios/camera.json"),
                                "--mode", "kernel", "--no-log"], [3]),
        "compare": (lambda: [dlsim, "compare", sc, *one_m, "--orders", "levels,cp-first",
                             "--no-log"], [3, 20]),
        # the kernel orders pass 2^62 ns of virtual time at 1M devices (exit 2 at once)
        "advise": (lambda: [dlsim, "advise", sc, *one_m, "--order", "cp-first"], [3, 30]),
        "check": (lambda: [dlsim, "check", m()], [1, 10]),
        "explain": (lambda: [dlsim, "explain", m()], [1, 10]),
        "diff": (lambda: [dlsim, "diff", m(), "1", "1"], [1, 10]),
        "report": (lambda: [dlsim, "report", m(), "--out", out("report")], [1, 15, 40, 50, 60, 70]),
        "twin": (lambda: [dlsim, "twin", m(), "1", "--db", out("twin") + ".db"], [1, 20, 40, 60, 75]),
        "sweep": (lambda: [dlsim, "sweep", "--dtbs", "/var/cache/dlsim-dtbs",
                           "--orders", "sync,kernel-async", "--jobs", "2",
                           "--db", out("sweep") + ".db"], [2, 6, 10]),
        "import-log": (lambda: [dlsim, "import-log", ensure_biglog(work)], [1, 5]),
        "validate": (lambda: [dlsim, "validate", ensure_big_scenario(work)], [1, 3]),
    }


def sched_idle(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[38] == "5"
    except (OSError, IndexError):
        return False


def once(argv, at):
    def child():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    # stderr to a file: a pipe nobody reads would stop a chatty child (import-log)
    err = tempfile.TemporaryFile()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=child)

    def said():
        err.seek(0)
        return err.read()
    t0 = time.monotonic()
    try:
        p.wait(timeout=at)
        return "ended", p.returncode, said()
    except subprocess.TimeoutExpired:
        pass
    p.send_signal(signal.SIGINT)
    t1 = time.monotonic()
    try:
        rc = p.wait(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return "> 120 s (killed)", None, said()
    return f"{time.monotonic() - t1:.2f} s", rc, said()


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    dlsim, work = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.makedirs(work, exist_ok=True)
    table = cases(dlsim, work)
    want = sys.argv[3:]
    given = None
    if "--at" in want:      # --at S,S,...: these moments for every case named
        i = want.index("--at")
        if i + 1 == len(want):
            print("ctrlc_times: --at needs S,S,...", file=sys.stderr)
            return 2
        given = [float(x) for x in want[i + 1].split(",")]
        del want[i:i + 2]
    want = want or list(table)
    if want == ["--list"]:
        print("\n".join(table))
        return 0
    unknown = [w for w in want if w not in table]
    if unknown:
        print(f"ctrlc_times: no case {unknown[0]} (--list)", file=sys.stderr)
        return 2
    idle = sum(1 for p in os.listdir("/proc") if p.isdigit() and sched_idle(p))
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
          f" ({idle} processes at SCHED_IDLE, which yield the CPU to everything else)")
    print("| case | SIGINT at | SIGINT → exit | exit | load (1 min) |")
    print("|---|---:|---:|---:|---:|")
    for name in want:
        make, moments = table[name]
        moments = given or moments
        for at in moments:
            argv = make()
            took, rc, err = once(argv, at)
            code = rc if rc is None or rc >= 0 else f"{128 - rc} (default action)"
            print(f"| {name} | {at} s | {took} | {code} | {os.getloadavg()[0]:.2f} |", flush=True)
            if rc not in (130, 0, None, -signal.SIGINT):
                sys.stderr.write(err.decode(errors="replace")[-400:])
            for p in os.listdir(work):
                if p.startswith("out-"):
                    q = os.path.join(work, p)
                    shutil.rmtree(q) if os.path.isdir(q) else os.remove(q)
    return 0


if __name__ == "__main__":
    sys.exit(main())
