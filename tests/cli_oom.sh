#!/bin/sh
# Out of memory (issue 34): the scenario generator, the loader, import-dtb and
# run (logged and not) are run with tests/tools/failmalloc.c preloaded, which
# makes every allocation fail once N have succeeded.  A first pass counts a
# command's allocations; it is then failed at fractions of that count.  Each
# failure must exit 2 with "out of memory" on stderr (never a crash, never
# another reason such as "not valid UTF-8" or "cannot open"), and a logged run
# must leave no database, or one whose runs are not 'ok' and that `dlsim
# check` does not call corrupt.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
[ -z "$DLSIM_SAN" ] || { echo "SKIP: a sanitizer build replaces malloc"; exit 77; }
command -v cc >/dev/null || { echo "SKIP: no C compiler for the preload library"; exit 77; }
cc -O2 -shared -fPIC -o "$T/failmalloc.so" "$SRC/tests/tools/failmalloc.c" \
	|| { bad "cannot build failmalloc.so"; finish cli_oom; exit 1; }
FM=$T/failmalloc.so

# oom LABEL MIN FRACTIONS CMD...: count CMD's allocations of at least MIN
# bytes, then fail it after each FRACTION/20 of them
oom() {
	label=$1; min=$2; fracs=$3; shift 3
	rm -f "$T/s.db"
	FAILMALLOC_MIN=$min FAILMALLOC_COUNT="$T/count" LD_PRELOAD=$FM "$@" >/dev/null 2>&1 \
		|| { bad "$label: fails without a limit"; return; }
	total=$(cat "$T/count")
	nbad=0 nfail=0
	for k in $fracs; do
		n=$((total * k / 20))
		rm -f "$T/s.db" "$T/s.db-wal" "$T/s.db-shm"
		FAILMALLOC_MIN=$min FAILMALLOC_AFTER=$n LD_PRELOAD=$FM "$@" >"$T/out" 2>"$T/err"
		rc=$?
		[ "$rc" = 0 ] && continue
		nfail=$((nfail + 1))
		if [ "$rc" != 2 ] || ! grep -q "out of memory" "$T/err"; then
			bad "$label, failing after $n of $total allocations: exit $rc: $(head -c 300 "$T/err")"
			nbad=$((nbad + 1))
			continue
		fi
		if [ -e "$T/s.db" ]; then
			nok=$(sqlite3 "$T/s.db" "select count(*) from runs where status = 'ok'" 2>/dev/null)
			"$DLSIM" check "$T/s.db" >"$T/check" 2>&1
			crc=$?
			if [ "${nok:-0}" != 0 ] || [ "$crc" = 0 ] || [ "$crc" = 3 ]; then
				bad "$label, failing after $n: the database holds a run that looks whole or is corrupt (check exit $crc: $(head -c 200 "$T/check"))"
				nbad=$((nbad + 1))
			fi
		fi
	done
	[ "$nfail" -gt 0 ] || bad "$label: no allocation failure reached (of $total)"
	[ "$nbad" = 0 ] && ok "$label: $nfail failures, each 'out of memory', exit 2"
}

ALL="0 1 2 3 5 7 9 11 13 15 17 19"
# the generator: 1M devices; only its large arrays fail
oom "generator (1M devices)" 65536 "0 3 7 11 15 19" \
	"$DLSIM" validate "$SRC/scenarios/default.json" --set devices=1000000
# the loader, every allocation
oom "loader (sdm845-mtp.json)" 0 "$ALL" "$DLSIM" validate "$SRC/scenarios/sdm845-mtp.json"
# import-dtb: a real board if cached, else one of the fuzz seeds
DTB=$(find /var/cache/dlsim-dtbs -name rk3588-orangepi-5-plus.dtb 2>/dev/null | head -1)
if [ -z "$DTB" ] && command -v dtc >/dev/null; then
	dtc -q -I dts -O dtb -o "$T/chain.dtb" "$SRC/tests/fuzz/dts/chain.dts" && DTB=$T/chain.dtb
fi
if [ -n "$DTB" ]; then
	oom "import-dtb" 0 "$ALL" "$DLSIM" import-dtb "$DTB"
	# one allocation failing, the rest not (a passing shortage): exit 2 out
	# of memory, or the very same scenario; the atlas failing to parse gave
	# class guesses for every latency, exit 0, said nowhere
	"$DLSIM" import-dtb "$DTB" >"$T/ref.json" 2>/dev/null
	total=$(FAILMALLOC_COUNT="$T/count" LD_PRELOAD=$FM "$DLSIM" import-dtb "$DTB" >/dev/null 2>&1; cat "$T/count")
	nbad=0
	for k in 1 3 5 7 9 11 13 15 17 19; do
		n=$((total * k / 20))
		FAILMALLOC_ONCE=1 FAILMALLOC_AFTER=$n LD_PRELOAD=$FM "$DLSIM" import-dtb "$DTB" >"$T/one.json" 2>"$T/err"
		rc=$?
		if [ "$rc" = 0 ] && ! cmp -s "$T/ref.json" "$T/one.json"; then
			bad "import-dtb, allocation $n of $total failing once: exit 0 with a different scenario"
			nbad=$((nbad + 1))
		elif [ "$rc" != 0 ] && { [ "$rc" != 2 ] || ! grep -q "out of memory" "$T/err"; }; then
			bad "import-dtb, allocation $n failing once: exit $rc: $(head -c 200 "$T/err")"
			nbad=$((nbad + 1))
		fi
	done
	[ "$nbad" = 0 ] && ok "import-dtb, one allocation failing: out of memory or the same scenario"
else
	echo "skip: import-dtb (no cached DTB, no dtc)"
fi
# run without a log: 50,000 devices, the engine's large arrays
oom "run --no-log (50k devices)" 65536 "0 2 5 9 13 17 19" \
	"$DLSIM" run "$SRC/scenarios/default.json" --set devices=50000 --order cp-first --no-log
# a logged run: the writer, SQLite and the engine
oom "run --db (2,000 devices)" 0 "$ALL" \
	"$DLSIM" run "$SRC/scenarios/default.json" --set devices=2000 --db "$T/s.db"
finish cli_oom
