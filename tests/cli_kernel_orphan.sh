#!/bin/sh
# A dlsim killed with kill -9 under its guest takes the guest along: the guest has a
# process group of its own (sim/kernel/kboot.c), so nothing else would end it.  With a
# fake guest that hangs (DLSIM_KGUEST_STUB=tests/tools/kguest_sweep_stub.sh,
# KGUEST_SWEEP_MODE=hang), kill -9 of `run --mode kernel` (the guest's parent) and of a
# `sweep --mode kernel` coordinator (the guest's grandparent, through its worker): the
# guest's pid is gone soon after, where it would sleep 600 s before.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
export DLSIM_KGUEST_STUB="$SRC/tests/tools/kguest_sweep_stub.sh"
export KGUEST_SWEEP_MODE=hang

mkdir -p "$T/in"
python3 - "$SRC/scenarios/default.json" "$T/in/d30.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["generate"]["devices"] = 30
d["name"] = "default-30"
json.dump(d, open(sys.argv[2], "w"))
PY

alive() { # PID: running, and not a zombie left for a reaper that never reaps
	[ -r "/proc/$1/stat" ] && ! sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | grep -q '^[ZX]'
}
# wait_guest PIDFILE: the guest's pid once the guest has started (nothing after 60 s)
wait_guest() {
	i=0
	until [ -s "$1" ] || [ $i -ge 600 ]; do sleep 0.1; i=$((i + 1)); done
	cat "$1" 2>/dev/null
}
# gone PID: the pid ends within 30 s (a loaded machine; the guest itself would sleep 600 s)
gone() {
	i=0
	while alive "$1" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	! alive "$1"
}
guests=
trap 'for g in $guests; do kill -9 $g 2>/dev/null; done; rm -rf "$T"' EXIT

# run --mode kernel: the guest is dlsim's child
KGUEST_SWEEP_PIDFILE="$T/g1.pid" "$DLSIM" run "$T/in/d30.json" --mode kernel --kernel 6.12 \
	--order sync --no-log >"$T/r.out" 2>&1 &
pid=$!
g=$(wait_guest "$T/g1.pid")
guests="$guests $g"
if [ -n "$g" ] && alive "$g"; then
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	gone "$g" && ok "run --mode kernel killed with -9: its guest $g is gone" ||
		bad "run --mode kernel killed with -9: its guest $g still runs"
else
	bad "run --mode kernel: no guest started"; cat "$T/r.out"
fi

# sweep --mode kernel: the guest is a worker's child; only the coordinator is killed
KGUEST_SWEEP_PIDFILE="$T/g2.pid" "$DLSIM" sweep --mode kernel --scenarios "$T/in" --orders sync \
	--kernel 6.12 --jobs 1 --db "$T/s.db" >"$T/s.out" 2>&1 &
pid=$!
g=$(wait_guest "$T/g2.pid")
guests="$guests $g"
if [ -n "$g" ] && alive "$g"; then
	w=$(ps -o pid= --ppid "$pid" | tr -d ' ' | head -n 1)
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	gone "$g" && ok "sweep --mode kernel killed with -9: its guest $g is gone" ||
		bad "sweep --mode kernel killed with -9: its guest $g still runs"
	[ -n "$w" ] && gone "$w" && ok "and its worker $w" || bad "the sweep's worker ${w:-?} still runs"
else
	bad "sweep --mode kernel: no guest started"; cat "$T/s.out"
fi
finish cli_kernel_orphan
