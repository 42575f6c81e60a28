#!/bin/sh
# dlsim import-log: one run's dmesg and ftrace (pm-graph's S3) given together
# are one cycle, each callback once (the dmesg's 278 and the 63 prepare and
# complete callbacks only ftrace timed), each total once; two runs (S3 and
# hibernation) stay two cycles.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

need_real
DM="$REAL/pmgraph-skynet-mem-dmesg.txt"
FT="$REAL/pmgraph-skynet-mem-ftrace.txt"

for order in "$DM $FT" "$FT $DM"; do
	# shellcheck disable=SC2086
	expect 0 "dmesg + ftrace ($order)" "$DLSIM" import-log $order
	grep -q "141 devices, 341 PM callbacks in 1 cycles" "$T/err" && grep -q "8 phase totals" "$T/err" ||
		{ bad "one cycle, 341 callbacks, 8 totals"; cat "$T/err"; }
	grep -q "1 cycles of later files overlap an earlier file's in time" "$T/err" || bad "the merge is said"
	cp "$T/out" "$T/m.json"
	expect 0 "the merged scenario validates" "$DLSIM" validate "$T/m.json"
	grep -q '"empirical"' "$T/m.json" && bad "no callback twice (one cycle: fixed latencies)"
	grep -q '"prepare": ' "$T/m.json" && grep -q '"suspend_noirq": ' "$T/m.json" || bad "both files' phases"
done
# the merged replay: the dmesg's totals and ftrace's dpm_prepare/dpm_complete, once each
expect 0 "replay dmesg + ftrace" "$DLSIM" import-log "$DM" "$FT" --replay
grep -q "^cycle 0 .*341 callbacks" "$T/out" && ! grep -q "^cycle 1" "$T/out" || { bad "one cycle replayed"; cat "$T/out"; }
[ "$(grep -c '^dpm_suspend \|^suspend ' "$T/out")" = 1 ] || bad "the suspend total once"
grep -q "^resume .* ok$" "$T/out" || { bad "merged: resume ok"; cat "$T/out"; }
grep -q "of 8 phase totals" "$T/out" || bad "8 totals replayed"

# two runs overlap in nothing: two cycles
expect 0 "S3 and hibernation" "$DLSIM" import-log "$DM" "$REAL/pmgraph-skynet-disk-dmesg.txt"
grep -q "553 PM callbacks in 2 cycles" "$T/err" || { bad "two runs, two cycles"; cat "$T/err"; }
grep -q "overlap an earlier" "$T/err" && bad "two runs are not merged"
finish cli_import_log_merge
