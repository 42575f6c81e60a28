#!/bin/sh
# Option ranges and interruptible sleeps (issue "Nothing lost, nothing trusted
# blindly"): every numeric option refuses what is out of its range with exit 2
# (--time-scale 1e300 overflowed int64 in threads.c), and a threads-mode run
# whose callbacks sleep for seconds ends within a fraction of a second of
# SIGINT or SIGTERM (the EINTR loop used to sleep on, for minutes).
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
DEF="$SRC/scenarios/default.json"

for v in 0 -1 1e300 1e12 inf nan 1e-9 x ""; do
	expect 2 "--time-scale '$v' refused" "$DLSIM" run "$DEF" --mode threads --time-scale "$v" --no-log
	grep -q -- "--time-scale" "$T/err" || bad "--time-scale '$v': the message names the option"
done
for opt in "--workers 0" "--workers 4097" "--workers -1" "--seed -1" "--seed 18446744073709551616" \
	   "--busy-timeout 3600001" "--busy-timeout -5" "--seed 1x"; do
	expect 2 "run $opt refused" "$DLSIM" run "$DEF" --no-log $opt
done
expect 2 "compare --seeds 0 refused" "$DLSIM" compare "$DEF" --orders sync --seeds 0 --no-log
expect 2 "compare --seeds 1001 refused" "$DLSIM" compare "$DEF" --orders sync --seeds 1001 --no-log
expect 2 "check --run 0 refused" "$DLSIM" check x.db --run 0
expect 2 "check --run 99999999999999999999 refused" "$DLSIM" check x.db --run 99999999999999999999
expect 2 "report --run -1 refused" "$DLSIM" report x.db --run -1
expect 2 "validate --seed -1 refused" "$DLSIM" validate "$DEF" --seed -1

# --seed is decimal: 010 is ten (it was eight)
"$DLSIM" run "$DEF" --no-log --json --seed 010 >"$T/out" 2>&1
grep -q '"seed":10,' "$T/out" && ok "--seed 010 is ten" || bad "--seed 010: $(head -c 200 "$T/out")"

# A job started with & by a non-interactive sh ignores SIGINT until dlsim
# installs its handler (after loading the scenario): a SIGINT sent before is
# lost, and on a loaded machine 1 s was sometimes before (the run then went
# on to its end, exit 0).  So wait for the handlers first (lib_cli.sh's wait_caught).
# a run whose callbacks sleep for seconds (1 ms of latency = 10 s): SIGINT and
# SIGTERM end it at once, exit 130, the log is committed and passes check
# (--max-wall 0: it is meant to run for days, which threads mode refuses by default)
for sig in INT TERM; do
	"$DLSIM" run "$DEF" --mode threads --time-scale 10000 --max-wall 0 --order sync --db "$T/slow.db" >"$T/out" 2>"$T/err" &
	pid=$!
	wait_caught "$pid" 0x4002
	sleep 1
	signal_wait "$sig" "$pid"
	echo "SIG$sig during a 10 s sleep: exit $rc after $ms ms"
	[ "$rc" = 130 ] && ok "SIG$sig: exit 130" || bad "SIG$sig: exit $rc"
	# the run would sleep 10 s more: well under that, the sleep was cut short.  (The
	# issue's 100 ms is a latency, not a test's business; the commit and teardown
	# after it took 2.6 s under ThreadSanitizer beside an ASan suite on 2 cores.)
	[ "$ms" -lt 5000 ] && ok "SIG$sig honoured in $ms ms" || bad "SIG$sig took $ms ms"
done
[ "$(sqlite3 "$T/slow.db" "select group_concat(status) from runs")" = "interrupted,interrupted" ] \
	&& ok "both runs 'interrupted'" || bad "slow runs: $(sqlite3 "$T/slow.db" "select group_concat(status) from runs")"
expect 0 "check passes on the interrupted threads runs" "$DLSIM" check "$T/slow.db" --all

# Ctrl-C while a DES run registers devices and adds links (issue 34): at
# 300,000 devices the registration and its reorder walks take many seconds;
# SIGINT ends the run at once (it used to run on for 11 s at 200,000 devices,
# and a logged run then built the indexes of every event).  5 s is generous:
# the exit takes well under 1 s alone on the machine.
sigint_after() { # seconds description run-args...
	s=$1; shift; what=$1; shift
	"$DLSIM" run "$DEF" --set devices=300000 --order cp-first "$@" >"$T/out" 2>"$T/err" &
	pid=$!
	wait_caught "$pid" 0x4002
	sleep "$s"
	signal_wait INT "$pid"
	echo "$what: exit $rc $ms ms after SIGINT"
	[ "$rc" = 130 ] && ok "$what: exit 130" || bad "$what: exit $rc"
	[ "$ms" -lt 5000 ] && ok "$what: stopped in $ms ms" || bad "$what: took $ms ms after SIGINT"
}
sigint_after 1 "SIGINT during registration, no log" --no-log
sigint_after 3 "SIGINT during a logged run" --db "$T/big.db"
[ "$(sqlite3 "$T/big.db" "select status from runs")" = interrupted ] && ok "the logged run is 'interrupted'" \
	|| bad "big run: $(sqlite3 "$T/big.db" "select status from runs")"
expect 0 "check passes on the interrupted run" "$DLSIM" check "$T/big.db"

# Ctrl-C once the run is recorded 'ok' (50k devices).  A new database has
# its secondary indexes from the start, kept as the rows go in (issue 35;
# before, they were built at the run's end: 53 s after SIGINT for 1M
# devices, which Ctrl-C then abandoned): nothing is left to build, exit 0,
# the run stays whole and ok, and its indexes are all there.
rm -f "$T/f.db"
"$DLSIM" run "$DEF" --set devices=50000 --order cp-first --db "$T/f.db" >"$T/out" 2>"$T/err" &
pid=$!
st=
while kill -0 "$pid" 2>/dev/null && [ "$st" != ok ]; do
	sleep 0.1
	st=$(sqlite3 "$T/f.db" "select status from runs" 2>/dev/null)
done
signal_wait INT "$pid"
echo "SIGINT once the run is recorded (50k devices): exit $rc $ms ms after SIGINT"
[ "$rc" = 0 ] && ok "indexes: exit 0, the run was whole" || bad "indexes: exit $rc"
# ... nor the account printed under the run (cli_explain_after(), which read
# the whole log under a handler it never polled: 8 s after SIGINT at 50k)
grep -q "^why run 1 took what it took" "$T/out" && bad "the account after the run went on after SIGINT" \
	|| ok "the account after the run stopped at SIGINT"
[ "$(sqlite3 "$T/f.db" "select status from runs")" = ok ] && ok "indexes: the run is 'ok'" \
	|| bad "indexes: status $(sqlite3 "$T/f.db" "select status from runs")"
[ "$(sqlite3 "$T/f.db" "select count(*) from sqlite_master where type = 'index' and name not like 'sqlite_%'")" -eq 5 ] \
	&& ok "indexes: all there" || bad "indexes: missing on a new database"
[ "$(sqlite3 "$T/f.db" "pragma quick_check")" = ok ] && [ "$(sqlite3 "$T/f.db" \
	"select events = (select count(*) from events) from runs")" = 1 ] \
	&& ok "indexes: the database is sound and holds every event" || bad "indexes: database damaged"

# Ctrl-C in the readers of that log (check, explain, diff, and report and
# twin while they verify it): they only read, and install no handler (a
# handler there would need every loop to poll), so Ctrl-C's default action
# ends them at once, exit 130, nothing written.  At 1M devices: 1-106 ms
# (docs/development.md).  A script's `cmd &` starts them with SIGINT
# ignored: env --default-signal gives it back, as a terminal's foreground
# job has it.  A reader done before the signal is said, not failed.
if env --default-signal=INT true 2>/dev/null && [ -s "$T/f.db" ]; then
	reader_int() { # what args...
		what=$1; shift
		env --default-signal=INT "$DLSIM" "$@" >"$T/out" 2>"$T/err" &
		pid=$!
		sleep 0.3
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			echo "skip: $what ended before the signal"
			return
		fi
		signal_wait INT "$pid"
		echo "$what: exit $rc $ms ms after SIGINT"
		[ "$rc" = 130 ] && [ "$ms" -lt 5000 ] && ok "$what: Ctrl-C ends it" || bad "$what: exit $rc after $ms ms"
	}
	reader_int check check "$T/f.db"
	reader_int explain explain "$T/f.db"
	reader_int diff diff "$T/f.db" 1 1
	reader_int report report "$T/f.db" --out "$T/fr"
	[ ! -e "$T/fr" ] && ! ls -A "$T" | grep -q 'dlsim-report-' && ok "report: nothing written" \
		|| bad "report: $(ls -A "$T" | tr '\n' ' ')"
	reader_int twin twin "$T/f.db" 1 --db "$T/ft.db"
	[ ! -e "$T/ft.db" ] || expect 0 "twin: its output passes check --all" "$DLSIM" check "$T/ft.db" --all
	rm -rf "$T/ft.db" "$T/fr"
fi
rm -f "$T/f.db"

# An older database (made before the indexes came with the tables) gets them
# built at a run's end.  Ctrl-C inside that build (minutes at 1M devices:
# 53 s after SIGINT, then exit 0, before the build heard the flag): the build
# is abandoned, the run stays whole and ok, exit 0.  The SIGINT comes from
# the test hook index-build (sim/log/dl_testhook.h), raised inside the build;
# the older database is a first run's with its indexes dropped.  A build
# without test hooks (Release) skips this part.
if ! have_test_hooks; then
	echo "skip: indexes: this dlsim has no test hooks (DLSIM_TEST_HOOKS)"
else
	"$DLSIM" run "$DEF" --set devices=2000 --order cp-first --db "$T/f.db" >"$T/out" 2>"$T/err" ||
		bad "indexes: the first run: $(cat "$T/err")"
	for i in $(sqlite3 "$T/f.db" "select name from sqlite_master where type = 'index' and name not like 'sqlite_%'"); do
		sqlite3 "$T/f.db" "drop index $i"
	done
	DLSIM_TEST_HOOK=index-build:int "$DLSIM" run "$DEF" --set devices=30000 --order cp-first \
		--db "$T/f.db" >"$T/out" 2>"$T/err"
	rc=$?
	grep -q "test hook index-build:int" "$T/err" && ok "indexes: SIGINT inside the build" \
		|| bad "indexes: the hook never fired (no index build?): $(cat "$T/err")"
	[ "$rc" = 0 ] && ok "indexes: exit 0, the run was whole" || bad "indexes: exit $rc"
	[ "$(sqlite3 "$T/f.db" "select status from runs where run_id = 2")" = ok ] && ok "indexes: the run is 'ok'" \
		|| bad "indexes: status $(sqlite3 "$T/f.db" "select status from runs")"
	[ "$(sqlite3 "$T/f.db" "select count(*) from sqlite_master where type = 'index' and name not like 'sqlite_%'")" -lt 5 ] \
		&& ok "indexes: the build was abandoned" || bad "indexes: all built after SIGINT"
	[ "$(sqlite3 "$T/f.db" "pragma quick_check")" = ok ] && [ "$(sqlite3 "$T/f.db" \
		"select events = (select count(*) from events where run_id = 2) from runs where run_id = 2")" = 1 ] \
		&& ok "indexes: the database is sound and holds every event" || bad "indexes: database damaged"
	expect 0 "indexes: check passes on it" "$DLSIM" check "$T/f.db"
fi
rm -f "$T/f.db"

# Ctrl-C during a logged run of N devices (DLSIM_LIMITS_DEVICES, default
# 300,000: enough for each stage to last a few polls; 1,000,000 gives the
# figures of docs/development.md, in minutes), at a given stage (issue 34): the
# newest event of the log says where the run is (registration: register;
# link adds: link_add; probe: probe_*, link_state, sync_state; suspend:
# suspend_*).  Whatever the stage the run exits 130 and its log is there,
# 'interrupted', and passes check.  The time from SIGINT to exit is printed,
# not asserted (a speed target, not a test's business; measured in
# docs/development.md).  DLSIM_LIMITS_FULL=1 adds the probe and suspend
# stages, which need most of the run (minutes and gigabytes of log, and a
# check of it as long again).
N=${DLSIM_LIMITS_DEVICES:-300000}
sigint_at() { # stage kinds...
	stage=$1; shift
	rm -f "$T/m.db" "$T/m.db-wal" "$T/m.db-shm"
	"$DLSIM" run "$DEF" --set devices=$N --order cp-first --db "$T/m.db" >"$T/out" 2>"$T/err" &
	pid=$!
	k=
	while kill -0 "$pid" 2>/dev/null; do
		sleep 0.2
		k=$(sqlite3 "$T/m.db" "select kind from events order by rowid desc limit 1" 2>/dev/null)
		for w in "$@"; do [ "$k" = "$w" ] && break 2; done
	done
	signal_wait INT "$pid"
	echo "$N devices, logged, SIGINT during $stage (newest event '$k'): exit $rc $ms ms after SIGINT"
	[ "$rc" = 130 ] && ok "$stage: exit 130" || bad "$stage: exit $rc (newest event '$k')"
	[ "$(sqlite3 "$T/m.db" "select status from runs")" = interrupted ] && ok "$stage: the run is 'interrupted'" \
		|| bad "$stage: status $(sqlite3 "$T/m.db" "select status from runs" 2>&1)"
	expect 0 "$stage: check passes on it" "$DLSIM" check "$T/m.db"
	grep -q "status 'interrupted'" "$T/out" && ok "$stage: check says interrupted" || bad "$stage: $(cat "$T/out")"
}
sigint_at registration register
sigint_at "link adds" link_add

# Ctrl-C while the run's N devices rows are written, before any event (issue
# 34: a million rows kept the writer ~3 s, unpolled): the rows stop, and the run
# ends 'interrupted' with only its first devices rows, which check accepts of
# an interrupted run.  The handler is in place before the rows are begun.
rm -f "$T/m.db" "$T/m.db-wal" "$T/m.db-shm"
"$DLSIM" run "$DEF" --set devices=$N --order cp-first --db "$T/m.db" >"$T/out" 2>"$T/err" &
pid=$!
wait_caught "$pid" 0x4002
signal_wait INT "$pid"
echo "$N devices, logged, SIGINT as the devices rows are written: exit $rc $ms ms after SIGINT"
[ "$rc" = 130 ] && ok "devices rows: exit 130" || bad "devices rows: exit $rc"
n=$(sqlite3 "$T/m.db" "select count(*) from devices" 2>&1)
[ "$(sqlite3 "$T/m.db" "select status from runs")" = interrupted ] && [ "$n" -lt "$N" ] \
	&& ok "devices rows: the run is 'interrupted' with $n of $N devices rows" \
	|| bad "devices rows: status $(sqlite3 "$T/m.db" "select status from runs" 2>&1), $n rows"
expect 0 "devices rows: check passes on it" "$DLSIM" check "$T/m.db"
if [ "${DLSIM_LIMITS_FULL:-0}" = 1 ]; then
	sigint_at probe probe_start probe_end link_state sync_state
	sigint_at suspend suspend_start suspend_end
fi
rm -f "$T/m.db" "$T/m.db-wal" "$T/m.db-shm"

# Ctrl-C as a twin's run begins (test hook twin-begin, sim/log/dl_testhook.h):
# its devices rows stop, and the run ends 'interrupted', exit 130.  The twin
# caught Ctrl-C only around its engine: a million devices rows (seconds) were
# written under the default action, which left the run 'running' for good.
if have_test_hooks; then
	rm -f "$T/tw.db"
	"$DLSIM" run "$DEF" --set devices=5000 --order cp-first --db "$T/tw.db" >"$T/out" 2>"$T/err" ||
		bad "twin: the run to twin: $(cat "$T/err")"
	DLSIM_TEST_HOOK=twin-begin:int "$DLSIM" twin "$T/tw.db" 1 >"$T/out" 2>"$T/err"
	rc=$?
	grep -q "test hook twin-begin:int" "$T/err" && [ "$rc" = 130 ] && ok "twin: Ctrl-C as it begins, exit 130" \
		|| bad "twin: exit $rc, $(cat "$T/err")"
	[ "$(sqlite3 "$T/tw.db" "select status from runs where run_id = 2")" = interrupted ] \
		&& ok "twin: its run is 'interrupted'" || bad "twin: status $(sqlite3 "$T/tw.db" "select status from runs")"
	expect 0 "twin: check --all passes" "$DLSIM" check "$T/tw.db" --all
	rm -f "$T/tw.db"
fi

# virtual time past 2^62 ns (146 years): the DES ran on a wrapped clock and
# printed a negative makespan; now the run fails with exit 2 and says why, and
# its log, status 'failed', passes check
cat >"$T/sat.json" <<'EOF'
{ "format": "dlsim-scenario/1", "name": "sat", "seed": 1,
  "defaults": {"probe": "4000000000s", "suspend": "1ms", "resume": "1ms"},
  "devices": [ {"name": "a"}, {"name": "b"}, {"name": "c"} ],
  "links": [ {"supplier": "a", "consumer": "b"}, {"supplier": "b", "consumer": "c"} ] }
EOF
expect 2 "a clock past 2^62 ns fails the run" "$DLSIM" run "$T/sat.json" --order sync --db "$T/sat.db"
grep -q "virtual time passed 4611686018 s.*a latency is too large" "$T/err" && ok "the overflow is named" \
	|| bad "overflow: $(cat "$T/err")"
# ... and the cost that passed it: sync at 50,000 generated devices (issue 34
# saw it at 200,000) spends it in device_pm_move_to_tail() before each
# deferred retry, whose walk makes one call per path (past 2^64 in this
# graph).  Exit 2, and the message says so, not "a latency".
expect 2 "sync at 50,000 devices passes 2^62 ns" "$DLSIM" run "$DEF" --order sync --set devices=50000 --no-log
grep -q "passed 4611686018 s (2^62 ns) in device_pm_move_to_tail()" "$T/err" && \
	grep -q "keeps no visited set, so it makes one call per path" "$T/err" && \
	grep -q "no kernel could probe it" "$T/err" && ok "the walk is named, and why" || bad "walk: $(cat "$T/err")"
grep -q "^[a-z]* *-[0-9]" "$T/out" && bad "a negative makespan: $(cat "$T/out")" || ok "no negative makespan"
[ "$(sqlite3 "$T/sat.db" "select status from runs")" = failed ] && ok "the run is 'failed'" \
	|| bad "status: $(sqlite3 "$T/sat.db" "select status from runs")"
expect 0 "check passes on it" "$DLSIM" check "$T/sat.db"

finish cli_limits
