#!/bin/sh
# ledger.sh CACHE [HOURS] - the fuzzing done so far, per harness, from
# CACHE/ledger.tsv (written by run.sh: when, harness, commit, seconds asked,
# CPU-seconds, executions, crashes): runs, CPU-hours, executions, crashes,
# and how far each is from HOURS CPU-hours (default 1, issue 34's target).
CACHE=$1
HOURS=${2:-1}
LEDGER=$CACHE/ledger.tsv
[ -f "$LEDGER" ] || { echo "fuzz ledger: no $LEDGER yet"; exit 0; }
awk -F '\t' -v target="$HOURS" '
NF == 7 { runs[$2]++; cpu[$2] += $5; ex[$2] += $6; cr[$2] += $7; n++ }
NF != 7 { bad++ }
END {
	printf "fuzz ledger %s: %d runs\n", FILENAME, n
	printf "%-12s %5s %10s %14s %8s %s\n", "harness", "runs", "CPU-hours", "executions", "crashes", "to target"
	for (h in runs) {
		left = target - cpu[h] / 3600
		due = (left > 0) ? sprintf("%.3f h", left) : "met"
		printf "%-12s %5d %10.3f %14d %8d %s\n", h, runs[h], cpu[h] / 3600, ex[h], cr[h], due
		tc += cpu[h]; te += ex[h]; tk += cr[h]
	}
	printf "%-12s %5d %10.3f %14d %8d\n", "total", n, tc / 3600, te, tk
	if (bad) printf "(%d malformed lines skipped)\n", bad
}' "$LEDGER"
