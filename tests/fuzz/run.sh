#!/bin/sh
# run.sh NAME FUZZ_DIR SRC SECS [CACHE] - run libFuzzer harness fuzz_NAME (built
# in FUZZ_DIR, a DLSIM_SAN=fuzz tree: ASan+UBSan) over its seeds and corpus,
# then fuzz for the rest of SECS.  New inputs go to CACHE/corpus/NAME (CACHE
# defaults to FUZZ_DIR; never the source tree); a crash leaves
# CACHE/crash-NAME-* and fails.  With a CACHE given, the run's CPU-seconds and
# executions are appended to CACHE/ledger.tsv (tests/fuzz/ledger.sh sums it),
# so that fuzzing hours accumulate across sessions and machines' idle time.
# Seeds: scenario: scenarios/; dtb: tests/fuzz/dts/*.dts compiled with dtc and
# the 16 smallest DTBs of /var/cache/dlsim-dtbs (linked, when `make dtbs` ran);
# check, report, diff, explain: a few byte programs written here (fuzz_log.c
# says how they read); they share check.dict.  import_log: the real logs of ../shared/real
# (linked, never copied).
NAME=$1
FUZZ_DIR=$2
SRC=$3
SECS=${4:-30}
CACHE=${5:-}
BIN=$FUZZ_DIR/fuzz_$NAME
[ -x "$BIN" ] || { echo "fuzz_$NAME: $BIN not built (make fuzz-build)"; exit 1; }
CORPUS=${CACHE:-$FUZZ_DIR}/corpus/$NAME
SEEDS=$FUZZ_DIR/seeds/$NAME
mkdir -p "$CORPUS" "$SEEDS" || exit 1
case $NAME in
scenario)
	set -- "$SRC/scenarios";;
dtb)
	for f in "$SRC"/tests/fuzz/dts/*.dts; do
		dtc -q -I dts -O dtb -o "$SEEDS/$(basename "$f" .dts).dtb" "$f" || exit 1
	done
	if [ -d /var/cache/dlsim-dtbs ]; then
		find /var/cache/dlsim-dtbs -name '*.dtb' -size -12k 2>/dev/null | head -16 | while read -r d; do
			ln -sf "$d" "$SEEDS/real-$(basename "$d")"
		done
	fi
	set -- "$SEEDS";;
check|report|diff|explain)
	# header (devices, status, switches), parents, then ops: register x3,
	# link_add, probe x3, suspend, resume; a second with a raw time of INT64_MAX
	printf '\003\000\000\000\200\200\000\000\000\000\000\001\000\000\000\002\000\000\005\001\000\000\001\000\000\000\001\001\000\000\001\002\000\000\003\002\001\000\004\002\001\000' >"$SEEDS/run"
	printf '\003\000\000\000\200\200\000\000\000\000\000\001\000\000\017\001\361\000' >"$SEEDS/bad-time"
	# found by fuzz_report: op spans summed past INT64_MIN in explain (report/explain.c)
	printf '\341\056\000\000\000\000\003\000\000\017\000\160\162\157\142\145\137\144\145\146\145\162\000\000\000\200\200\000\000\377\006\000\000\000\000\000\017\001\361\000' >"$SEEDS/span-overflow"
	# found by fuzz_check: devices without a driver on a cycle made check's
	# suspended_in()/resumed_in() walk exponential (sim/log/dl_check_rules.c nd_first_visit())
	printf '\000\075\200\000\000\000\001\022\001\004\017\001\050\000\000\017\345\345\033\032\032\032\377\377\345\033\032\032\032\377\377\072\003\072\001\000\072\002\003\000\001\000' >"$SEEDS/nodriver-cycle"
	set -- "$SEEDS";;
import_log)
	# the real logs, read where they are (../shared/real, beside the tree)
	REAL=${DLSIM_REAL_DIR:-$SRC/../shared/real}
	[ -d "$REAL" ] || REAL=/work/shared/real
	for f in "$REAL"/*.txt; do
		[ -e "$f" ] && ln -sf "$f" "$SEEDS/$(basename "$f")"
	done
	set -- "$SEEDS";;
*)
	echo "fuzz: unknown harness '$NAME'"; exit 1;;
esac
DICT=$NAME
case $NAME in report|diff|explain) DICT=check;; esac
# a smaller quarantine: SQLite's many small allocations otherwise make the
# harnesses page-fault bound (measured: 3x the execs/s)
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=32}
DLSIM_FUZZ_TMP=$(mktemp -d /dev/shm/dlsim-fuzz-XXXXXX 2>/dev/null || mktemp -d)
export DLSIM_FUZZ_TMP
trap 'rm -rf "$DLSIM_FUZZ_TMP"' EXIT
LOG=${CACHE:-$FUZZ_DIR}/fuzz-$NAME.log
TIMES=$DLSIM_FUZZ_TMP/times
# the tree's commit as the run starts (a long run may end on a later one)
commit=$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo -)
# /usr/bin/time gives the harness's own CPU-seconds (user+system): on a
# shared machine wall time says little about how much fuzzing was done
/usr/bin/time -f '%U %S' -o "$TIMES" \
	"$BIN" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
	-dict="$SRC/tests/fuzz/$DICT.dict" -artifact_prefix="${CACHE:-$FUZZ_DIR}/crash-$NAME-" \
	-print_final_stats=1 "$CORPUS" "$@" >"$LOG" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$LOG")
cpu=$(awk '/^[0-9.]+ [0-9.]+$/ { printf "%.1f", $1 + $2 }' "$TIMES" 2>/dev/null)
# A timeout is a slow input only if it is slow alone: under SCHED_IDLE or nice on
# a machine at load 30, a unit of 0.1 s has been seen to miss -timeout=10.  The
# unit that timed out runs again by itself; if it finishes in time it is kept as
# slow-NAME-* (not crash-), and the run counts no crash.
if [ "$rc" != 0 ] && grep -q "ERROR: libFuzzer: timeout" "$LOG"; then
	unit=$(sed -n 's/.*Test unit written to //p' "$LOG" | tail -1)
	if [ -f "$unit" ] && "$BIN" -timeout=10 -rss_limit_mb=2048 "$unit" >"$LOG.alone" 2>&1; then
		slow=$(dirname "$unit")/slow-$NAME-${unit##*/crash-$NAME-}
		mv "$unit" "$slow"
		echo "fuzz_$NAME: timed out under load; alone the unit ran in time (not a crash): $slow"
		rc=0
	fi
fi
echo "fuzz_$NAME: exit $rc, ${execs:-?} execs in ${SECS} s (${cpu:-?} CPU-s), ${rate:-?} execs/s, corpus $(ls "$CORPUS" | wc -l) files"
if [ -n "$CACHE" ]; then
	crashes=0; [ "$rc" = 0 ] || crashes=1
	# one line a run: when, harness, commit, wall s asked, CPU s, executions, crashes
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$NAME" "$commit" \
		"$SECS" "${cpu:-0}" "${execs:-0}" "$crashes" >>"$CACHE/ledger.tsv"
fi
if [ "$rc" != 0 ]; then
	grep -E "ERROR|SUMMARY|runtime error|Test unit written" "$LOG" | head -20
	tail -40 "$LOG"
fi
exit $rc
