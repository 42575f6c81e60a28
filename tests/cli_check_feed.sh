#!/bin/sh
# check reads a run's rows on a reader thread of its own (sim/log/dl_check_rows.c)
# where it may use two CPUs, and inline on one (taskset -c 0).  Both ways must
# give the same exit, the same lines and the same violations table: on a log of
# many batches (82k rows) with violations all through it (naive ignores the
# links), on one with a kind text too long for a name deep in it (corrupt), and
# on one whose rows are not all in rowid order (read again by seq: ok).  In a
# test build (DLSIM_TEST_HOOK) each check also says whether it read the rows
# again by seq, which a lost or doubled row would make it do: a silent cost.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
command -v sqlite3 >/dev/null || { echo "SKIP: no sqlite3 shell"; exit 77; }
command -v taskset >/dev/null || { echo "SKIP: no taskset"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "SKIP: one CPU: no reader thread to compare"; exit 77; }

both() { # what db want: check DB threaded and on one CPU; same exit, lines, violations
	for how in two one; do
		cpus=0,1
		[ $how = one ] && cpus=0
		cp "$T/$2.db" "$T/$how.db"
		DLSIM_TEST_HOOK=check-reread:say taskset -c $cpus "$DLSIM" check "$T/$how.db" \
			>"$T/$how.out" 2>"$T/$how.err"
		echo $? >>"$T/$how.out"
		sqlite3 "$T/$how.db" "select count(*), sum(invariant), sum(t_ns), sum(dev_id), sum(length(detail))
			from violations" >"$T/$how.vio" 2>/dev/null || echo none >"$T/$how.vio"
	done
	if cmp -s "$T/two.out" "$T/one.out" && cmp -s "$T/two.vio" "$T/one.vio"; then
		ok "$1: the same on a reader thread and inline"
	else
		bad "$1: the reader thread differs"; diff "$T/two.out" "$T/one.out" | head -5
		diff "$T/two.vio" "$T/one.vio"
	fi
	[ "$(tail -1 "$T/two.out")" = "$3" ] && ok "$1: exit $3" || bad "$1: exit $(tail -1 "$T/two.out"), expected $3"
	if have_test_hooks; then   # read in rowid order, or again by seq where $4 says so
		for how in two one; do
			if grep -q "test hook check-reread" "$T/$how.err"; then r=reread; else r=rowid; fi
			[ "$r" = "${4:-rowid}" ] && ok "$1 (CPUs: $how): $r" || bad "$1 (CPUs: $how): $r"
		done
	fi
}

"$DLSIM" run "$SRC/scenarios/default.json" --order naive --set devices=3000 --db "$T/naive.db" \
	>/dev/null 2>&1
rows=$(sqlite3 "$T/naive.db" "select count(*) from events")
[ "$rows" -gt 20000 ] && ok "a log of $rows rows" || bad "only $rows rows"
both "violations all through the log" naive 1
grep -q "violations in $rows events" "$T/two.out" && ok "every row checked" \
	|| bad "not every row checked: $(tail -2 "$T/two.out")"
n=$(cut -d'|' -f1 "$T/two.vio")
[ "${n:-0}" -gt 1000 ] && ok "$n violations stored" || bad "violations stored: $(cat "$T/two.vio")"

"$DLSIM" run "$SRC/scenarios/default.json" --order cp-first --set devices=2000 --db "$T/clean.db" \
	>/dev/null 2>&1
sqlite3 "$T/clean.db" "pragma wal_checkpoint(truncate)" >/dev/null
cp "$T/clean.db" "$T/long.db"
sqlite3 "$T/long.db" "update events set kind = 'a_kind_longer_than_any_name_the_checker_knows'
	where seq = 30000"
both "a kind text too long for a name, deep in the log" long 3 reread
grep -q "corrupt" "$T/two.out" && ok "said corrupt" || bad "not corrupt: $(head -2 "$T/two.out")"

cp "$T/clean.db" "$T/moved.db"
sqlite3 "$T/moved.db" "create temp table r as select * from events where seq = 25000;
	delete from events where seq = 25000; insert into events select * from r"
both "a row out of rowid order: read again by seq" moved 0 reread

finish cli_check_feed
