#!/bin/sh
# The log's safety promises (issue "SQLite event log and dlsim check"):
# Ctrl-C commits what was produced and marks the run 'interrupted' (exit 130);
# kill -9 leaves a database that passes integrity_check with the run still
# 'running', which check reports as incomplete; a database locked by another
# writer is waited for (--busy-timeout) and then refused with exit 2, unchanged.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
q() { sqlite3 "$1" "$2" 2>/dev/null; }

# a run that takes seconds: the kernel's deferred-probe storm at 300k devices
LONG="$SRC/scenarios/large.json --set devices=300000 --order kernel-async"

# start a long run into $1, wait until it has committed events, send signal $2
run_and_signal() {
	"$DLSIM" run $LONG --db "$1" >"$T/out" 2>"$T/err" &
	pid=$!
	i=0
	while [ $i -lt 1200 ]; do
		n=$(q "$1" "select count(*) from events")
		[ -n "$n" ] && [ "$n" -gt 0 ] && break
		sleep 0.1
		i=$((i + 1))
	done
	kill "-$2" "$pid"
	wait "$pid"
	echo $?
}

rc=$(run_and_signal "$T/int.db" INT)
[ "$rc" = 130 ] && ok "SIGINT exits 130" || bad "SIGINT: exit $rc, expected 130"
[ "$(q "$T/int.db" "pragma integrity_check")" = ok ] && ok "integrity after SIGINT" \
	|| bad "integrity_check after SIGINT"
[ "$(q "$T/int.db" "select status from runs")" = interrupted ] && ok "run marked interrupted" \
	|| bad "run not marked interrupted"
[ "$(q "$T/int.db" "select events > 0 and events = (select count(*) from events) from runs")" = 1 ] \
	&& ok "what was produced is committed and counted" || bad "events lost or miscounted"
"$DLSIM" check "$T/int.db" >"$T/out" 2>&1 && ok "check passes on the interrupted run" \
	|| { bad "check on the interrupted run"; cat "$T/out"; }
# a new database has its indexes from the start (kept as the rows go in,
# issue 35), so an interrupted run's log has them too; an older database
# without them gets them when a run into it finishes
nidx() { q "$1" "select count(*) from sqlite_master where type = 'index' and name not like 'sqlite_%'"; }
[ "$(nidx "$T/int.db")" = 5 ] && ok "an interrupted run's new database has its 5 indexes" \
	|| bad "interrupted run's database: $(nidx "$T/int.db") indexes, expected 5"
"$DLSIM" run "$SRC/scenarios/default.json" --db "$T/old.db" >/dev/null 2>&1
for i in events_run_seq devices_run metrics_run violations_run refused_run; do
	q "$T/old.db" "drop index $i"
done
"$DLSIM" run "$SRC/scenarios/default.json" --db "$T/old.db" >/dev/null 2>&1
[ "$(nidx "$T/old.db")" = 5 ] && ok "an older database gets its indexes at a run's end" \
	|| bad "older database: $(nidx "$T/old.db") indexes after a finished run, expected 5"
"$DLSIM" check "$T/old.db" --all >"$T/out" 2>&1 && ok "check passes on both runs" \
	|| { bad "check on the older database"; cat "$T/out"; }

rc=$(run_and_signal "$T/kill.db" KILL)
[ "$rc" = 137 ] || bad "kill -9: exit $rc"
[ "$(q "$T/kill.db" "pragma integrity_check")" = ok ] && ok "integrity after kill -9" \
	|| bad "integrity_check after kill -9"
[ "$(q "$T/kill.db" "select status from runs")" = running ] && ok "killed run still 'running'" \
	|| bad "killed run not 'running'"
"$DLSIM" check "$T/kill.db" >"$T/out" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q incomplete "$T/out" && ok "check reports the killed run incomplete" \
	|| { bad "check on the killed run: exit $rc"; cat "$T/out"; }

# another writer holds the lock: wait --busy-timeout, then exit 2, nothing written.  The
# lock is held until the run has ended (a fixed 2 s could pass before a loaded machine's
# run reached its first write), at most 120 s.
"$DLSIM" run "$SRC/scenarios/default.json" --db "$T/busy.db" >/dev/null 2>&1
python3 - "$T/busy.db" "$T/locked" "$T/release" <<'PY' &
import sqlite3, sys, time, os
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("begin exclusive")
open(sys.argv[2], "w").close()
for _ in range(1200):
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.1)
PY
holder=$!
i=0
while [ ! -e "$T/locked" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
"$DLSIM" run "$SRC/scenarios/default.json" --db "$T/busy.db" --busy-timeout 300 >"$T/out" 2>"$T/err"
rc=$?
: >"$T/release"
[ "$rc" = 2 ] && ok "locked database: exit 2" || bad "locked database: exit $rc, expected 2"
grep -q "locked by another writer" "$T/err" && ok "the error says it is locked" \
	|| { bad "lock error message"; cat "$T/err"; }
wait "$holder"
[ "$(q "$T/busy.db" "select count(*) from runs")" = 1 ] && ok "locked database unchanged" \
	|| bad "a run was added to the locked database"
"$DLSIM" run "$SRC/scenarios/default.json" --busy-timeout x --no-log >/dev/null 2>&1
[ $? = 2 ] && ok "bad --busy-timeout: exit 2" || bad "bad --busy-timeout accepted"

finish cli_log
