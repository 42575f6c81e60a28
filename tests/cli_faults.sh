#!/bin/sh
# The log under real faults (issue "Nothing lost, nothing trusted blindly"):
# the writer never reports what it did not store.  A disk that fills (a tiny
# tmpfs), another process holding the write lock, a second dlsim writing the
# same database, and SIGINT/SIGTERM/kill -9 at random points: every run ends
# either complete (status ok/interrupted, runs.events = its rows) or visibly
# incomplete ('failed' with runs.log_error, or still 'running'), the database
# passes integrity_check, and `dlsim check` says which.  Foreign databases are
# refused before anything is written.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
q() { sqlite3 "$1" "$2" 2>/dev/null; }
DEF="$SRC/scenarios/default.json"

# every run of $1 complete or visibly incomplete; $2 names the case
runs_honest() {
	[ "$(q "$1" "pragma integrity_check")" = ok ] && ok "$2: integrity_check ok" \
		|| bad "$2: integrity_check"
	n=$(q "$1" "select count(*) from runs r where not (
		(status in ('ok', 'interrupted') and log_error is null
		 and events = (select count(*) from events e where e.run_id = r.run_id))
		or (status = 'failed' and log_error is not null
		 and events = (select count(*) from events e where e.run_id = r.run_id))
		or status = 'running')")
	[ "$n" = 0 ] && ok "$2: every run complete or visibly incomplete" \
		|| { bad "$2: $n run(s) claim what is not stored"; q "$1" "select run_id, status, events, log_error from runs"; }
}

# wait until $1 has committed events of run $2 (at most 30 s)
wait_events() {
	i=0
	while [ $i -lt 300 ]; do
		n=$(q "$1" "select count(*) from events where run_id = $2")
		[ -n "$n" ] && [ "$n" -gt 0 ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# --- disk full: a 12 MB tmpfs (root only) -------------------------------------
if [ "$(id -u)" = 0 ] && mkdir -p "$T/full" && mount -t tmpfs -o size=12m dlsim-full "$T/full" 2>/dev/null; then
	"$DLSIM" run "$DEF" --set devices=40000 --db "$T/full/x.db" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" = 2 ] && ok "disk full: exit 2" || bad "disk full: exit $rc, expected 2"
	grep -q "disk full" "$T/err" && grep -q "$T/full/x.db" "$T/err" && grep -q "database or disk is full" "$T/err" \
		&& ok "disk full: said as such, with the path and SQLite's message" || { bad "disk full message"; cat "$T/err"; }
	grep -q "^run " "$T/out" && bad "disk full: a summary was printed" || ok "disk full: no summary printed"
	runs_honest "$T/full/x.db" "disk full"
	"$DLSIM" check "$T/full/x.db" >"$T/out" 2>&1
	rc=$?
	[ "$rc" = 1 ] && grep -q incomplete "$T/out" && ok "disk full: check says incomplete (exit 1)" \
		|| { bad "disk full: check exit $rc"; cat "$T/out"; }
	echo "disk full: status $(q "$T/full/x.db" "select status || ', ' || coalesce(events, 'NULL') || ' events' from runs")"
	# a sweep on a full disk said "cannot rollback - no transaction is active",
	# "not an error" and an empty "dlsim sweep: " line, never "disk full" (issue 34)
	for mode in direct shards; do
		rm -rf "$T/full/"*
		"$DLSIM" sweep --scenarios "$DEF" --orders sync,cp-first --seeds 3 --set devices=4000 \
			--jobs 2 --write $mode --db "$T/full/s.db" >"$T/out" 2>"$T/err"
		rc=$?
		[ "$rc" != 0 ] && grep -q "disk full" "$T/err" && ! grep -q "cannot rollback\|not an error\|^dlsim sweep: *$" "$T/err" \
			&& ok "disk full, sweep --write $mode: said as such (exit $rc)" \
			|| { bad "disk full, sweep --write $mode: exit $rc"; head -5 "$T/err"; }
	done
	umount "$T/full"
else
	echo "skipped: disk full (needs root and tmpfs)"
fi

# --- another process holds the write lock in the middle of a run ---------------
hold_lock() { # db seconds: BEGIN IMMEDIATE, hold (until $T/release exists, at most), roll back
	rm -f "$T/release"
	python3 - "$1" "$2" "$T/locked" "$T/release" <<'PY' &
import os, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
c.execute("begin immediate")
open(sys.argv[3], "w").close()
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end and not os.path.exists(sys.argv[4]):
    time.sleep(0.05)
c.execute("rollback")
PY
	holder=$!
	i=0
	while [ ! -e "$T/locked" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	rm -f "$T/locked"
}
"$DLSIM" run "$DEF" --set devices=60000 --order cp-first --db "$T/lock.db" --busy-timeout 300 >"$T/out" 2>"$T/err" &
pid=$!
wait_events "$T/lock.db" 1 || bad "lock: the run never committed"
# held until the run has ended: a fixed 2 s could end before a slow run's next commit
hold_lock "$T/lock.db" 300
wait "$pid"
rc=$?
: >"$T/release"
wait "$holder"
[ "$rc" = 2 ] && ok "lock held past --busy-timeout: exit 2" || bad "lock held: exit $rc, expected 2"
grep -q "locked by another writer" "$T/err" && grep -q "$T/lock.db" "$T/err" \
	&& ok "lock held: the message says so, with the path" || { bad "lock message"; cat "$T/err"; }
grep -q "^run " "$T/out" && bad "lock held: a summary was printed" || ok "lock held: no summary printed"
# 'failed' if the lock was gone in time for the last transaction, else still 'running'
st=$(q "$T/lock.db" "select status from runs")
[ "$st" = failed ] || [ "$st" = running ] && ok "lock held: the run is '$st', not ok" \
	|| bad "lock held: status $st"
runs_honest "$T/lock.db" "lock held"
"$DLSIM" check "$T/lock.db" >"$T/out" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q incomplete "$T/out" && ok "lock held: check says incomplete" \
	|| { bad "lock held: check exit $rc"; cat "$T/out"; }

# the same lock held shorter than the busy timeout: the run waits and loses nothing
"$DLSIM" run "$DEF" --set devices=60000 --order cp-first --db "$T/wait.db" >"$T/out" 2>"$T/err" &
pid=$!
wait_events "$T/wait.db" 1 || bad "wait: the run never committed"
hold_lock "$T/wait.db" 1
wait "$pid"
rc=$?
wait "$holder"
[ "$rc" = 0 ] && [ "$(q "$T/wait.db" "select status from runs")" = ok ] \
	&& ok "lock held 1 s, busy timeout 5 s: the run waits and ends ok" || { bad "wait: exit $rc"; cat "$T/err"; }
runs_honest "$T/wait.db" "lock waited for"

# --- two dlsim writing one database at once ------------------------------------
# both starting on a new database, within the busy timeout: neither may lose
# its run, nor take the half-made schema of the other for a foreign file
lost=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	rm -f "$T/new.db" "$T/new.db-wal" "$T/new.db-shm"
	"$DLSIM" run "$DEF" --set devices=3000 --order cp-first --db "$T/new.db" --busy-timeout 10000 \
		>/dev/null 2>"$T/err1" &
	p1=$!
	"$DLSIM" run "$DEF" --set devices=3000 --order kernel-async-v2 --db "$T/new.db" \
		--busy-timeout 10000 >/dev/null 2>"$T/err2" &
	p2=$!
	wait "$p1"; r1=$?
	wait "$p2"; r2=$?
	n=$(q "$T/new.db" "select count(*) from runs where status = 'ok'")
	[ "$r1$r2" = 00 ] && [ "$n" = 2 ] || { lost=$((lost + 1)); echo "new database, try $i: exits $r1 $r2, ok runs '$n'"; cat "$T/err1" "$T/err2"; }
done
[ "$lost" = 0 ] && ok "two writers on a new database, 10 tries: both runs kept every time" \
	|| bad "two writers on a new database: $lost of 10 tries lost a run"

for bt in 5000 100; do
	"$DLSIM" run "$DEF" --set devices=20000 --order kernel-async-v2 --db "$T/two$bt.db" --busy-timeout $bt >"$T/out1" 2>"$T/err1" &
	p1=$!
	"$DLSIM" run "$DEF" --set devices=20000 --order cp-first --db "$T/two$bt.db" --busy-timeout $bt >"$T/out2" 2>"$T/err2" &
	p2=$!
	wait "$p1"; r1=$?
	wait "$p2"; r2=$?
	runs_honest "$T/two$bt.db" "two writers, busy timeout $bt"
	for r in $r1 $r2; do
		[ "$r" = 0 ] || [ "$r" = 2 ] || bad "two writers ($bt): exit $r"
	done
	"$DLSIM" check "$T/two$bt.db" --all >"$T/out" 2>&1
	rc=$?
	if [ "$r1" = 0 ] && [ "$r2" = 0 ]; then
		[ "$rc" = 0 ] && ok "two writers ($bt ms): both ok, check ok" || { bad "two writers ($bt): check exit $rc"; tail -3 "$T/out"; }
	else
		grep -q -e "invariant [0-9]" -e corrupt "$T/out" && { bad "two writers ($bt): check reports violations of a cut log"; tail -3 "$T/out"; } \
			|| ok "two writers ($bt ms): one failed cleanly, check: no false violation"
	fi
	echo "two writers, busy timeout $bt: exits $r1 $r2; runs: $(q "$T/two$bt.db" "select group_concat(status || ' ' || events, ', ') from runs")"
done

# --- SIGINT / SIGTERM / kill -9 at random points --------------------------------
seed=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
echo "signal loop: seed $seed"
i=0
for sig in INT TERM KILL INT TERM KILL; do
	i=$((i + 1))
	ms=$(awk -v s="$seed" -v i="$i" 'BEGIN { srand(s + i); printf "%d", rand() * 1500 }')
	before=$(q "$T/sig.db" "select coalesce(max(run_id), 0) from runs")
	"$DLSIM" run "$DEF" --set devices=20000 --order kernel-async --db "$T/sig.db" >/dev/null 2>&1 &
	pid=$!
	sleep "$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')"
	kill "-$sig" "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	# (a signal before the run's row was written leaves no row: status ''; one
	# before the handler is set kills by default action: 130 or 143, no row)
	st=$(q "$T/sig.db" "select status from runs where run_id > ${before:-0}")
	echo "signal $sig after $ms ms: exit $rc, last run ${st:-none}"
	case "$sig:$rc:$st" in
	INT:130:interrupted|TERM:130:interrupted|*:0:ok|KILL:137:running|KILL:137:|*:2:|INT:130:|TERM:143:) ;;
	*) bad "signal $sig: exit $rc with status '$st'";;
	esac
done
runs_honest "$T/sig.db" "signal loop"
"$DLSIM" check "$T/sig.db" --all >"$T/out" 2>&1
grep -q -e "invariant [0-9]" -e "corrupt" "$T/out" && { bad "signal loop: check reports violations or corruption"; grep -e invariant -e corrupt "$T/out" | head -3; } \
	|| ok "signal loop: check finds no violation and no corruption in any run"

# --- a supplier that fails to probe under a ready order ------------------------
# cp-first and levels probe a device once its suppliers are bound; a supplier
# whose probe fails releases nobody, and its consumers (and theirs) are left on
# the deferred list unattempted, as the kernel leaves them: a later bind (the
# hot-plugged e) retries them, in both backends (the DES left them off)
cat >"$T/fs.json" <<'JSON'
{ "format": "dlsim-scenario/1", "name": "failed-supplier", "seed": 1,
  "defaults": {"probe": "1ms", "suspend": "1ms", "resume": "1ms"},
  "devices": [ {"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}, {"name": "e", "hotplug": true} ],
  "links": [ {"consumer": "b", "supplier": "a"}, {"consumer": "c", "supplier": "b"} ],
  "faults": [ {"device": "a", "op": "probe", "error": "ENODEV", "times": 1} ],
  "script": [ {"op": "probe"}, {"op": "add", "device": "e"}, {"op": "suspend"}, {"op": "resume"} ] }
JSON
for o in cp-first levels; do
	for m in des threads; do
		rm -f "$T/fs-$m.db"
		"$DLSIM" run "$T/fs.json" --order $o --mode $m --db "$T/fs-$m.db" >/dev/null 2>&1
		q "$T/fs-$m.db" "select d.name from events e join devices d on d.run_id = e.run_id
			and d.dev_id = e.dev_id where e.kind = 'deferred_retry' order by e.seq" |
			tr '\n' ' ' >"$T/fs-$m.txt"
	done
	# (both then retry them again after resume: the test below)
	for m in des threads; do
		grep -q "^b c " "$T/fs-$m.txt" && ok "$o ($m): the failed supplier's consumers retried after a bind" \
			|| bad "$o ($m): retried '$(cat "$T/fs-$m.txt")', expected b and c"
	done
done

# --- nothing binds: PM ops walk devices that run no callback ------------------
# a's probe fails and b, c wait for it: no device has a driver, so suspend and
# resume take the main thread's walk and run no callback (the kernel takes the
# driver's dev_pm_ops only with a driver); check must not call that corrupt
cat >"$T/nb.json" <<'JSON'
{ "format": "dlsim-scenario/1", "name": "none-bound", "seed": 1,
  "defaults": {"probe": "1ms", "suspend": "1ms", "resume": "1ms", "async": false},
  "devices": [ {"name": "a"}, {"name": "b"}, {"name": "c"} ],
  "links": [ {"consumer": "b", "supplier": "a"}, {"consumer": "c", "supplier": "b"} ],
  "faults": [ {"device": "a", "op": "probe", "error": "ENODEV"} ],
  "script": [ {"op": "probe"}, {"op": "suspend"}, {"op": "resume"} ] }
JSON
sed 's/, {"op": "suspend"}, {"op": "resume"}//' "$T/nb.json" >"$T/np.json"
# dpm_complete()'s device_unblock_probing() retries the deferred devices: b and c
# defer again after the resume (a 6.12 guest does so 0.5 ms after dpm_complete(),
# inside kernel mode's resume op), in the resume op's time, in both backends
for m in des threads; do
	rm -f "$T/nb-$m.db"
	"$DLSIM" run "$T/nb.json" --order sync --mode $m --db "$T/nb-$m.db" >/dev/null 2>&1
	n=$(q "$T/nb-$m.db" "select count(*) from events where kind in ('suspend_start', 'resume_start')")
	"$DLSIM" check "$T/nb-$m.db" >"$T/out" 2>&1
	rc=$?
	[ "$rc" = 0 ] && [ "$n" = 0 ] && grep -q "ok, .* no violation" "$T/out" \
		&& ok "none bound ($m): no PM callback, and check finds the log whole" \
		|| { bad "none bound ($m): check exit $rc, $n PM callbacks"; cat "$T/out"; }
	# the same run without suspend and resume: two deferrals fewer, b's and c's
	rm -f "$T/np-$m.db"
	"$DLSIM" run "$T/np.json" --order sync --mode $m --db "$T/np-$m.db" >/dev/null 2>&1
	defers="select group_concat(d.name, ' ') from (select * from events order by seq) e join
		devices d on d.run_id = e.run_id and d.dev_id = e.dev_id where e.kind = 'probe_defer'"
	with=$(q "$T/nb-$m.db" "$defers") without=$(q "$T/np-$m.db" "$defers")
	[ -n "$without" ] && [ "$with" = "$without b c" ] \
		&& ok "none bound ($m): b and c retried after the resume" \
		|| bad "none bound ($m): deferrals '$with' against '$without' without suspend and resume"
done

# --- foreign databases are refused before anything is written ------------------
foreign() { # name sql
	rm -f "$T/$1.db"*
	sqlite3 "$T/$1.db" "$2"
	sum=$(md5sum <"$T/$1.db")
	"$DLSIM" run "$DEF" --db "$T/$1.db" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" = 2 ] && grep -q "not a dlsim database" "$T/err" && ok "foreign ($1): refused, exit 2" \
		|| { bad "foreign ($1): exit $rc"; cat "$T/err"; }
	[ "$(md5sum <"$T/$1.db")" = "$sum" ] && [ ! -e "$T/$1.db-wal" ] \
		&& [ "$(q "$T/$1.db" "pragma journal_mode")" = delete ] \
		&& ok "foreign ($1): left untouched" || bad "foreign ($1): modified"
}
foreign tables "CREATE TABLE runs(id, name); CREATE TABLE events(id, what); INSERT INTO runs VALUES(1, 'x');"
foreign columns "CREATE TABLE runs(run_id INTEGER PRIMARY KEY, scenario TEXT, order_name TEXT, mode TEXT,
  seed INTEGER, workers INTEGER, devices INTEGER, links INTEGER, status TEXT, makespan_ns INTEGER,
  started_at TEXT, version TEXT); CREATE TABLE events(run_id, seq, t_ns, dev_id, link_id, kind, phase, worker, err);"
foreign appid "PRAGMA application_id = 1234; CREATE TABLE t(x);"

finish cli_faults
