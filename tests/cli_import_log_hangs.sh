#!/bin/sh
# dlsim import-log: a call with no return (the usual hang signature) is
# listed with its line; a log that ends inside a cycle is said to be
# truncated; complete real logs have neither.  Lines from the Pixel 6 log's
# sync suspend, cut.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

need_real
PIX="$REAL/pixel6-v616rc4-suspend-initcall.txt"

# the sync suspend from its first callbacks, cut 70 lines on, one return deleted:
# cs_trex1's call (line 3 of the cut) never returns, and the log ends mid-suspend
grep -q "platform cs_trex1: PM: platform_pm_suspend returned 0 after 2 usecs" "$PIX" || { echo "SKIP: not the Pixel 6 log"; exit 77; }
sed -n '830,900p' "$PIX" | grep -v "cs_trex1: PM: platform_pm_suspend returned" >"$T/hang.log"
expect 0 "a hung, cut log imports" "$DLSIM" import-log "$T/hang.log"
grep -q "hang.log:3: 'cs_trex1' was called in suspend (cycle 0) and never returned: a hang?" "$T/err" ||
	{ bad "the unreturned call is listed with its line"; cat "$T/err"; }
grep -q "the log ends inside it (truncated" "$T/err" || bad "the cut log is said to be truncated"
grep -q '"truncated": true' "$T/out" || bad "x-log: the cycle is truncated"
grep -A4 '"unreturned_calls"' "$T/out" | grep -q '"device": "cs_trex1"' || bad "x-log.unreturned_calls lists cs_trex1"
grep -A8 '"unreturned_calls"' "$T/out" | grep -q '"line": 3' || bad "x-log.unreturned_calls has its line"

# a call without its return in the middle of a complete cycle is a hang too, not truncation
grep -v "call 0000:00:1b.0+ returned 0 after 28355 usecs" "$REAL/pmgraph-skynet-mem-dmesg.txt" >"$T/s3.log"
expect 0 "S3 with a lost return" "$DLSIM" import-log "$T/s3.log"
grep -q "'0000:00:1b.0' was called in .* and never returned" "$T/err" || { bad "S3: the lost return is a hang"; cat "$T/err"; }
grep -q "truncated" "$T/err" && bad "S3: the log is complete, not truncated"

# complete real logs: no hang, no truncation
for f in pixel6-v616rc4-suspend-initcall.txt pmgraph-skynet-mem-dmesg.txt pmgraph-skynet-mem-ftrace.txt pmgraph-skynet-disk-dmesg.txt; do
	expect 0 "$f" "$DLSIM" import-log "$REAL/$f"
	grep -q "never returned\|truncated" "$T/err" && { bad "$f: no hang, not truncated"; grep "never returned\|truncated" "$T/err"; }
	grep -q '"unreturned_calls": \[\]' "$T/out" || bad "$f: x-log.unreturned_calls is empty"
done
finish cli_import_log_hangs
