#!/bin/sh
# ledger.sh CACHE [HOURS] - the fuzzing done so far, per harness, from
# CACHE/ledger.tsv (written by run.sh: when, harness, commit, seconds asked,
# CPU-seconds, executions, crashes) and the fuzzing of earlier machines
# carried in the tree (ledger-earlier.tsv beside this script, or the file
# $DLSIM_FUZZ_CARRIED names: the same seven fields and an eighth, the runs
# a line sums): runs, CPU-hours, executions, crashes, and how far each is
# from HOURS CPU-hours (default 1, issue 34's target).  A machine's cache
# does not outlive it; `ledger.sh CACHE --carry` prints its lines summed a
# harness, in the carried format, for ledger-earlier.tsv.
CACHE=$1
LEDGER=$CACHE/ledger.tsv
CARRIED=${DLSIM_FUZZ_CARRIED-$(dirname "$0")/ledger-earlier.tsv}
if [ "$2" = --carry ]; then
	[ -f "$LEDGER" ] || { echo "fuzz ledger: no $LEDGER" >&2; exit 2; }
	awk -F '\t' 'NF == 7 { if (!($2 in runs)) order[++n] = $2; runs[$2]++; s[$2] += $4
		cpu[$2] += $5; ex[$2] += $6; cr[$2] += $7; when[$2] = $1; rev[$2] = $3 }
		END { for (i = 1; i <= n; i++) { h = order[i]
			printf "%s\t%s\t%s\t%d\t%.1f\t%d\t%d\t%d\n", when[h], h, rev[h], s[h], cpu[h], ex[h], cr[h], runs[h] } }' "$LEDGER"
	exit 0
fi
HOURS=${2:-1}
[ -f "$CARRIED" ] || CARRIED=
[ -f "$LEDGER" ] || LEDGER=
[ -n "$LEDGER$CARRIED" ] || { echo "fuzz ledger: no $CACHE/ledger.tsv yet"; exit 0; }
set --
[ -z "$CARRIED" ] || set -- "$CARRIED"
[ -z "$LEDGER" ] || set -- "$@" "$LEDGER"
awk -F '\t' -v target="$HOURS" -v carried="$CARRIED" '
/^#/ { next }
NF == 7 || NF == 8 { k = NF == 8 ? $8 : 1; runs[$2] += k; cpu[$2] += $5; ex[$2] += $6; cr[$2] += $7; n += k
	if (FILENAME == carried) nc += k; next }
{ bad++ }
END {
	printf "fuzz ledger: %d runs", n
	if (nc) printf " (%d of them on earlier machines: %s)", nc, carried
	printf "\n%-12s %5s %10s %14s %8s %s\n", "harness", "runs", "CPU-hours", "executions", "crashes", "to target"
	for (h in runs) {
		left = target - cpu[h] / 3600
		due = (left > 0) ? sprintf("%.3f h", left) : "met"
		printf "%-12s %5d %10.3f %14d %8d %s\n", h, runs[h], cpu[h] / 3600, ex[h], cr[h], due
		tc += cpu[h]; te += ex[h]; tk += cr[h]
	}
	printf "%-12s %5d %10.3f %14d %8d\n", "total", n, tc / 3600, te, tk
	if (bad) printf "(%d malformed lines skipped)\n", bad
}' "$@"
