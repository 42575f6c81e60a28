#!/bin/sh
# kguest_sweep_stub.sh RUNS_DIR DUMP_FILE KVER: a fake guest for kernel-mode sweeps in
# `make test` (DLSIM_KGUEST_STUB, sim/kernel/kboot.c): for each job RUNS_DIR/NNN/ it
# writes, as run NNN, the canned dump of $KGUEST_SWEEP_DUMPS (default tests/kernel)
# recorded on kernel KVER for as many devices as the job's first file registers
# (tests/kernel/*.dump: 25 soc-small, 30 and 50 default); a job it has none for is
# left out (its run fails: "stops early").  KGUEST_SWEEP_MODE:
#   ok       (default) every job
#   hang     sleep: a hung guest (the sweep's --kernel-timeout kills it); its pid into
#            $KGUEST_SWEEP_PIDFILE if set (a test that kills the sweep ends it too)
#   fail     exit 1 without a dump: QEMU died
#   cut=N    the jobs of N devices stop half-way (no @done): the guest died mid-run
#   hang=N   a boot with a job of N devices hangs (the jobs before it are written)
#   kill=N   the first boot of a job of N devices kills the worker that booted it
#            (kill -9 of the parent, once: marker KGUEST_SWEEP_MARK)
runs=$1 dump=$2 kver=$3
dir=${KGUEST_SWEEP_DUMPS:-$(dirname "$0")/../kernel}
mode=${KGUEST_SWEEP_MODE:-ok}
case $mode in
hang)
	[ -z "$KGUEST_SWEEP_PIDFILE" ] || echo $$ >"$KGUEST_SWEEP_PIDFILE"
	exec sleep 600 ;;
fail) exit 1 ;;
esac
: >"$dump"
for j in "$runs"/*/; do
	n=$(basename "$j")
	nd=$(sed -n 's/^devices \([0-9]*\) .*/\1/p' "$j/0000.ctl")
	case $mode in
	kill="$nd")
		mark=${KGUEST_SWEEP_MARK:?kill=N needs KGUEST_SWEEP_MARK}
		if [ ! -e "$mark" ]; then
			: >"$mark"
			kill -9 "$PPID"
			exit 1
		fi ;;
	esac
	if [ "$mode" = "hang=$nd" ]; then
		[ -z "$KGUEST_SWEEP_PIDFILE" ] || echo $$ >"$KGUEST_SWEEP_PIDFILE"
		exec sleep 600
	fi
	f=$(grep -l "^dlsim-kdump 1 $kver[.][^ ]* x86_64 devices $nd " "$dir"/*.dump 2>/dev/null | head -n 1)
	[ -n "$f" ] || continue
	if [ "$mode" = "cut=$nd" ]; then
		lines=$(wc -l <"$f")
		head -n $((lines / 2)) "$f" | sed -e "s/^@run 000/@run $n/" >>"$dump"
		exit 1
	fi
	sed -e "s/^@run 000/@run $n/" -e "s/^@done 000/@done $n/" -e '/^@end/d' "$f" >>"$dump"
done
echo @end >>"$dump"
