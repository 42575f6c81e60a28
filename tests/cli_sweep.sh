#!/bin/sh
# dlsim sweep with the local pool: scenario files and DTBs (imported on the
# fly) × orders × seeds; the runs' events stay in the workers' shards, which
# stay; 2 jobs give the same database content as 1 job and as --write shards; a second run skips what is done and a larger one runs
# only the new seeds; a fault and a malformed DTB are recorded as failed runs
# and the sweep goes on; naive's violations are found; Ctrl-C keeps the
# finished runs and a re-run completes them; a sweep killed with -9 leaves a
# database that opens, with its committed runs (direct) or shards that the
# next one merges (--write shards); a worker killed with -9 costs only its
# task; a writer holding OUT.db's lock makes the workers wait, not fail; bad
# input exits 2 with nothing written.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
SAME="python3 $SRC/tests/sweep_same.py"
command -v dtc >/dev/null 2>&1 || { echo "SKIP: dtc not installed"; exit 77; }

mkdir -p "$T/in/dt" "$T/in/sc"
for n in 1 2 3; do
	cat >"$T/in/dt/b$n.dts" <<DTS
/dts-v1/;
/ {
	model = "board $n";
	#address-cells = <1>; #size-cells = <1>;
	reg1: regulator { compatible = "regulator-fixed"; };
	soc { compatible = "simple-bus"; #address-cells = <1>; #size-cells = <1>; ranges;
		clk: clock@1000 { compatible = "x,clk"; reg = <0x1000 4>; #clock-cells = <1>; };
		a@2000 { compatible = "x,a"; reg = <0x2000 4>; clocks = <&clk 0>; vdd-supply = <&reg1>; };
		b@3000 { compatible = "x,b$n"; reg = <0x3000 4>; clocks = <&clk $n>; };
	};
};
DTS
	dtc -q -I dts -O dtb -o "$T/in/dt/b$n.dtb" "$T/in/dt/b$n.dts" || bad "dtc b$n"
	rm "$T/in/dt/b$n.dts"
done
cp "$SRC/scenarios/soc-small.json" "$SRC/scenarios/flags.json" "$T/in/sc/"
ARGS="--scenarios $T/in/sc --dtbs $T/in/dt --orders kernel-async-v2,cp-first,sync --seeds 2"

expect 0 "sweep, 2 jobs" "$DLSIM" sweep $ARGS --db "$T/a.db" --jobs 2
grep -q "^sweep: 30 runs planned, 0 already in $T/a.db, 30 run now by 2 workers" "$T/out" \
	&& ok "30 runs (5 scenarios x 3 orders x 2 seeds)" || { bad "summary line"; cat "$T/out"; }
grep -Eq "^b2.dtb +6  [a-z0-9-]+ +[0-9.]+ " "$T/out" && ok "a row per scenario" || { bad "scenario row"; cat "$T/out"; }
[ "$(sqlite3 "$T/a.db" "SELECT count(*) FROM runs WHERE status = 'ok'")" = 30 ] \
	&& ok "30 ok runs in the database" || bad "runs in the database"
python3 - "$T/a.db" <<'PY' && ok "events stay in the shards; OUT.db says where" || bad "events in OUT.db or no run_shards"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("SELECT count(*) FROM events").fetchone()[0] == 0
assert db.execute("SELECT count(*) FROM devices").fetchone()[0] == 0
assert db.execute("SELECT count(*) FROM run_shards").fetchone()[0] == 30
for (p,) in db.execute("SELECT path FROM shards"):
    assert p.startswith("a.db.shards/") and p.endswith("-s0.db"), p   # relative to OUT.db's folder
PY
# a sweep's run keeps the metrics of a `dlsim run` (one function writes both)
[ "$(sqlite3 "$T/a.db" "SELECT count(DISTINCT run_id) FROM metrics WHERE name = 'sync_fallbacks'")" = 30 ] \
	&& ok "every run has the metric sync_fallbacks" || bad "sweep runs lack the metric sync_fallbacks"
expect 0 "every merged run passes check" "$DLSIM" check "$T/a.db" --all
# run ids are fixed up front in plan order (so that shards are copied whole, as they are):
# with 2 workers finishing in any order, ids still follow scenario, seed, order
python3 - "$T/a.db" <<'PY' && ok "run ids follow the plan" || bad "run ids not in plan order"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
order = {"kernel-async-v2": 0, "cp-first": 1, "sync": 2}
rows = db.execute("SELECT w.run_id, w.source, w.seed, w.order_name FROM sweep w").fetchall()
plan = sorted(rows, key=lambda r: (r[1].endswith(".dtb"), r[1], r[2], order[r[3]]))  # --scenarios first
ids = [r[0] for r in plan]
assert ids == list(range(1, 31)), ids
assert db.execute("SELECT count(*) FROM runs r JOIN sweep w USING (run_id)").fetchone()[0] == 30
PY
# the log's indexes, dropped for the bulk copy, are back; the log is in WAL mode again
[ "$(sqlite3 "$T/a.db" "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN
    ('events_run_seq', 'devices_run', 'metrics_run', 'violations_run', 'refused_run')")" = 5 ] \
	&& ok "the log's indexes exist after the sweep" || bad "indexes missing after the sweep"
[ "$(sqlite3 "$T/a.db" "PRAGMA journal_mode")" = wal ] && ok "WAL mode after the sweep" \
	|| bad "journal mode after the sweep"
python3 - "$T/a.db" <<'PY' || bad "no sweep row without its run"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("SELECT count(*) FROM sweep w LEFT JOIN runs r USING (run_id)"
                  " WHERE r.run_id IS NULL").fetchone()[0] == 0
PY
expect 0 "sweep, 1 job" "$DLSIM" sweep $ARGS --db "$T/b.db" --jobs 1
expect 0 "2 jobs and 1 job: the same content" $SAME "$T/a.db" "$T/b.db"
expect 0 "sweep, 2 jobs writing shards" "$DLSIM" sweep $ARGS --db "$T/sh.db" --jobs 2 --write shards --json
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["write"] == "shards" and d["ran"] == 30, d' \
	"$T/out" && ok "--write shards is said in --json" || bad "--json of --write shards"
expect 0 "direct and shards: the same content" $SAME "$T/a.db" "$T/sh.db"
[ -e "$T/sh.db.shards" ] && [ "$(sqlite3 "$T/sh.db" "SELECT count(*) FROM run_shards")" = 30 ] \
	&& ok "--write shards: the shards stay, OUT.db says where" || bad "shards after --write shards"

expect 0 "the same sweep again" "$DLSIM" sweep $ARGS --db "$T/a.db" --jobs 2
grep -q "30 already in .*, 0 run now" "$T/out" && ok "everything skipped" || bad "resume skipped nothing"
expect 0 "one more seed" "$DLSIM" sweep $ARGS --seeds 3 --db "$T/a.db" --json
python3 - "$T/out" <<'PY' && ok "--json: only the 15 new runs ran" || { bad "--json of a resumed sweep"; cat "$T/out"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert (d["planned"], d["skipped"], d["ran"], d["failed"]) == (45, 30, 15, 0), d
g = d["groups"][0]
assert g["best"] in ("kernel-async-v2", "cp-first", "sync") and len(g["orders"]) == 3, g
assert all(o["runs"] == 3 for o in g["orders"]) and g["best_ratio_to_bound"] >= 1.0, g
PY
[ "$(sqlite3 "$T/a.db" "SELECT count(*) FROM runs")" = 45 ] && ok "45 runs, none twice" \
	|| bad "run count after resume"

# a sweep folder moved elsewhere reads as before; --compact moves every event
# into OUT.db and removes the shards, with the same content
mkdir "$T/moved"
cp -r "$T/a.db" "$T/a.db.shards" "$T/moved/"
expect 0 "a moved sweep folder: check reads its shards" "$DLSIM" check "$T/moved/a.db" --all
expect 0 "--compact" "$DLSIM" sweep --compact "$T/moved/a.db"
[ ! -e "$T/moved/a.db.shards" ] && ok "--compact removed the shards" || bad "shards after --compact"
[ "$(sqlite3 "$T/moved/a.db" "SELECT count(*) FROM run_shards")" = 0 ] \
	&& [ "$(sqlite3 "$T/moved/a.db" "SELECT count(DISTINCT run_id) FROM events")" = 45 ] \
	&& ok "--compact: every run's events in OUT.db" || bad "events after --compact"
expect 0 "compacted = shard-resident content" $SAME "$T/a.db" "$T/moved/a.db"
# a leftover shard holding 30 runs b.db has and 15 it lacks: the 15 are added,
# none twice (named as the sweep names its shards, HOST-PID.db); their events stay in it
mkdir "$T/b.db.shards"
cp "$T/moved/a.db" "$T/b.db.shards/left-4242.db"
expect 0 "merge a shard that is partly merged already" "$DLSIM" sweep $ARGS --db "$T/b.db" --jobs 1
expect 0 "nothing lost, nothing doubled" $SAME "$T/a.db" "$T/b.db"
[ -e "$T/b.db.shards/left-4242.db" ] && ok "the leftover shard stays (it holds 15 runs' events)" \
	|| bad "leftover shard removed"

# failures are recorded and the sweep goes on
mkdir "$T/in/bad"
cp "$SRC/scenarios/faults.json" "$T/in/bad/"
head -c 300 "$T/in/dt/b1.dtb" >"$T/in/bad/cut.dtb"
# (kernel-async: under cp-first, whose probe does not retry, reg0's one EPROBE_DEFER leaves
# cam0 unbound, and a device without a driver runs no suspend callback to fail)
expect 1 "a fault and a malformed DTB: exit 1" "$DLSIM" sweep --scenarios "$T/in/bad/faults.json" \
	--dtbs "$T/in/bad/cut.dtb" --dtbs "$T/in/dt/b1.dtb" --orders kernel-async --db "$T/f.db"
grep -q "faults.json kernel-async seed 1: failed: device 'cam0' returned -16 (run [0-9]*)" "$T/out" \
	&& ok "the failed run and why" || { bad "failed run listed"; cat "$T/out"; }
grep -q "cut.dtb kernel-async seed 1: failed: .*cut.dtb" "$T/out" && ok "the malformed DTB and why" \
	|| { bad "malformed DTB listed"; cat "$T/out"; }
[ "$(sqlite3 "$T/f.db" "SELECT count(*) FROM sweep WHERE status = 'ok'")" = 1 ] \
	&& ok "the good DTB ran" || bad "good DTB after failures"
cat >"$T/in/bad/nv.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "consumer-first",
  "defaults": {"probe": "1ms", "suspend": "1ms", "resume": "1ms"},
  "devices": [ {"name": "cam"}, {"name": "clk"} ], "links": [ {"consumer": "cam", "supplier": "clk"} ] }
J
expect 1 "naive's violations" "$DLSIM" sweep --scenarios "$T/in/bad/nv.json" --orders naive --db "$T/v.db"
grep -q "nv.json naive seed 1: violations: [0-9]* violations" "$T/out" \
	&& ok "the violating run is listed" || { bad "violations listed"; cat "$T/out"; }
[ "$(sqlite3 "$T/v.db" "SELECT status FROM runs")" = violations ] && ok "runs.status is 'violations'" \
	|| bad "status of the violating run"

# waits until DB has N sweep rows (merged runs), at most 60 s
wait_rows() {
	i=0
	while [ "$(sqlite3 "$1" "SELECT count(*) FROM sweep" 2>/dev/null || echo 0)" -lt "$2" ] && [ $i -lt 600 ]; do
		sleep 0.1; i=$((i + 1))
	done
}
# waits until DIR has a shard with a finished run, at most 60 s
shard_has_run() {
	for f in "$1"/*.db; do
		[ -e "$f" ] && [ "$(sqlite3 "$f" "SELECT count(*) FROM sweep" 2>/dev/null || echo 0)" -gt 0 ] && return 0
	done
	return 1
}
wait_shard() {
	i=0
	until shard_has_run "$1" || [ $i -ge 600 ]; do sleep 0.1; i=$((i + 1)); done
}

# Ctrl-C commits what finished; the same command completes the sweep.  Runs of 600 devices
# (~1.3 s a sweep): with 200 (0.4 s) the sweep could end between its first row and the signal.
# The sweeps that are cut short run at nice 10, so that on a loaded machine this shell's
# polling is not starved while the sweep runs to its end.
NBIG=40
BIG="--scenarios $SRC/scenarios/default.json --set devices=600 --orders kernel-async-v2,cp-first --seeds $((NBIG / 2))"
expect 0 "reference sweep" "$DLSIM" sweep $BIG --db "$T/ref.db" --jobs 2 --json
python3 - "$T/out" <<'PY' && ok "--json: direct, the time the lock was held" || { bad "--json lock figures"; cat "$T/out"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["write"] == "direct" and d["lock_hold_s"] > 0 and d["lock_wait_s"] >= 0, d
assert 0 < d["lock_hold_cpu_s"] <= d["workers_cpu_s"], d
PY
nice -n 10 "$DLSIM" sweep $BIG --db "$T/c.db" --jobs 2 >"$T/out" 2>&1 &
pid=$!
wait_rows "$T/c.db" 1
kill -INT $pid
wait $pid; st=$?
[ $st = 130 ] && ok "Ctrl-C: exit 130" || bad "Ctrl-C: exit $st"
grep -q "interrupted: run again to finish" "$T/out" && ok "says how to finish" || bad "interrupted note"
n=$(sqlite3 "$T/c.db" "SELECT count(*) FROM sweep")
[ "$n" -gt 0 ] && [ "$n" -lt $NBIG ] && ok "Ctrl-C kept $n finished runs" || bad "runs after Ctrl-C: $n"
expect 0 "the kept runs pass check" "$DLSIM" check "$T/c.db" --all
expect 0 "re-run after Ctrl-C" "$DLSIM" sweep $BIG --db "$T/c.db" --jobs 2
expect 0 "completed after Ctrl-C = reference" $SAME "$T/ref.db" "$T/c.db"

# kill -9 of the whole sweep (its workers too, as a lost machine would):
# the database opens with the runs committed so far, and the next sweep
# completes it
nice -n 10 "$DLSIM" sweep $BIG --db "$T/k.db" --jobs 2 >"$T/out" 2>&1 &
pid=$!
wait_rows "$T/k.db" 1
kids=$(pgrep -P $pid)
kill -KILL $pid $kids
sleep 1
[ "$(sqlite3 "$T/k.db" 'PRAGMA integrity_check')" = ok ] && ok "killed sweep: the database opens" \
	|| bad "integrity after kill -9"
n=$(sqlite3 "$T/k.db" "SELECT count(*) FROM sweep")
[ "$n" -gt 0 ] && [ "$n" -lt $NBIG ] && ok "killed sweep: $n runs committed" || bad "runs after kill -9: $n"
expect 0 "its committed runs pass check" "$DLSIM" check "$T/k.db" --all
expect 0 "re-run after kill -9" "$DLSIM" sweep $BIG --db "$T/k.db" --jobs 2
expect 0 "completed after kill -9 = reference" $SAME "$T/ref.db" "$T/k.db"

# the same with --write shards: the next sweep merges the shards the killed one left
nice -n 10 "$DLSIM" sweep $BIG --db "$T/ks.db" --jobs 2 --write shards >"$T/out" 2>&1 &
pid=$!
wait_shard "$T/ks.db.shards"
kids=$(pgrep -P $pid)
kill -KILL $pid
wait $pid
# the workers outlive it until they hear it (SIGTERM at its death): the next sweep must
# not run beside them, so wait until they are gone (a zombie has closed its files)
for k in $kids; do
	i=0
	while [ -r "/proc/$k/stat" ] && ! sed 's/^.*) //' "/proc/$k/stat" 2>/dev/null | grep -q '^[ZX]' &&
		[ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
done
[ "$(sqlite3 "$T/ks.db" 'PRAGMA integrity_check')" = ok ] && ok "killed sweep (shards): the database opens" \
	|| bad "integrity after kill -9 (shards)"
ls "$T/ks.db.shards"/*.db >/dev/null 2>&1 && ok "killed sweep left its shards" || bad "no shards"
expect 0 "re-run after kill -9 (shards)" "$DLSIM" sweep $BIG --db "$T/ks.db" --jobs 2 --write shards
expect 0 "completed after kill -9 (shards) = reference" $SAME "$T/ref.db" "$T/ks.db"

# another writer takes OUT.db's write lock for 2 s in mid-sweep: the workers
# wait for it (SQLite's lock is the sweep's only serialisation; nothing is
# committed meanwhile), then finish
python3 - "$T/l.db" "$DLSIM" "$SRC/scenarios/default.json" <<'PY' && ok "a held lock: the workers waited and finished" \
	|| bad "workers and a held lock"
import json, sqlite3, subprocess, sys, time
db, dlsim, sc = sys.argv[1:4]
p = subprocess.Popen([dlsim, "sweep", "--scenarios", sc, "--set", "devices=200", "--orders",
                      "kernel-async-v2", "--seeds", "200", "--db", db, "--jobs", "2", "--json"],
                     stdout=subprocess.PIPE)
def rows(c):
    try:
        return c.execute("SELECT count(*) FROM sweep").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
con = sqlite3.connect(db, timeout=30, isolation_level=None)
for _ in range(600):
    if rows(con) > 0:
        break
    time.sleep(0.1)
con.execute("BEGIN IMMEDIATE")
assert p.poll() is None, "the sweep ended before the lock was taken"
n0 = rows(con)
time.sleep(2)
assert rows(con) == n0
con.execute("ROLLBACK")
out, _ = p.communicate(timeout=300)
d = json.loads(out)
assert p.returncode == 0 and d["ran"] == 200 and d["failed"] == 0, d
assert d["lock_wait_s"] >= 1.0, d
PY

# a worker killed with -9: its task is recorded as failed, the rest runs
nice -n 10 "$DLSIM" sweep $BIG --db "$T/w.db" --jobs 2 >"$T/out" 2>&1 &
pid=$!
wait_rows "$T/w.db" 1
child=$(pgrep -P $pid | head -1)
[ -n "$child" ] && kill -KILL "$child"
wait $pid; st=$?
[ "$(sqlite3 "$T/w.db" "SELECT count(*) FROM sweep")" = $NBIG ] && ok "worker killed: all $NBIG runs recorded" \
	|| { bad "runs after a worker died"; cat "$T/out"; sqlite3 "$T/w.db" "SELECT status, error, count(*) FROM sweep GROUP BY 1, 2"; }
if [ $st = 1 ]; then
	grep -q "failed: the worker died of signal 9" "$T/out" && ok "the lost task is recorded as failed" \
		|| bad "failed task message"
else
	[ $st = 0 ] && ok "worker killed between tasks: nothing lost" || bad "worker killed: exit $st"
fi

# bad input: exit 2, nothing written
echo '{ "format": "dlsim-scenario/1", "devices": [ {"name": "a", "parent": "zz"} ] }' >"$T/bad.json"
expect 2 "a bad scenario file" "$DLSIM" sweep --scenarios "$T/bad.json" --orders sync --db "$T/n.db"
grep -q "bad.json" "$T/err" && ok "names the file" || bad "bad scenario message"
expect 2 "unknown order" "$DLSIM" sweep --scenarios "$T/in/sc" --orders fastest --db "$T/n.db"
expect 2 "no input" "$DLSIM" sweep --orders sync --db "$T/n.db"
expect 2 "missing path" "$DLSIM" sweep --scenarios "$T/nothing/*.json" --orders sync --db "$T/n.db"
expect 2 "not a dlsim database" "$DLSIM" sweep --scenarios "$T/in/sc" --orders sync --db "$T/bad.json"
[ ! -e "$T/n.db" ] && ok "nothing written for bad input" || bad "database written for bad input"
# a file the sweep did not write in OUT.db.shards/ was deleted unmerged (issue
# 34): now the sweep refuses, exit 2, before it changes anything
mkdir "$T/o.db.shards"
cp "$T/a.db" "$T/o.db.shards/x.db"
expect 2 "a foreign file in the shards folder" "$DLSIM" sweep --scenarios "$T/in/sc" --orders sync --db "$T/o.db"
grep -q "o.db.shards/x.db is not a file this sweep writes" "$T/err" && ok "names the file" \
	|| bad "foreign shard message: $(cat "$T/err")"
[ -e "$T/o.db.shards/x.db" ] && [ ! -e "$T/o.db" ] && ok "the file kept, nothing written" \
	|| bad "foreign shard: $(ls "$T/o.db.shards" "$T"/o.db* 2>&1)"
# a database whose name reads like an SQLite URI is that file, for the shards too
# (issue 34): the workers opened and attached the shards by plain path, so
# 'file:u.db?mode=ro' attached u.db read-only ("no such access mode: ro.shards/...")
mkdir "$T/uri"
expect 0 "a database named file:u.db?mode=ro" sh -c "cd '$T/uri' && '$DLSIM' sweep --scenarios '$T/in/sc' --orders sync --jobs 2 --db 'file:u.db?mode=ro'"
grep -q "2 runs planned, 0 already in file:u.db?mode=ro, 2 run now" "$T/out" && ok "both runs merged" \
	|| bad "uri sweep: $(cat "$T/out" "$T/err")"
[ "$(ls "$T/uri" | wc -l)" = 2 ] && [ -f "$T/uri/file:u.db?mode=ro" ] && ok "that file and its shards, nothing else" \
	|| bad "uri sweep wrote: $(ls "$T/uri")"
# a run past 2^62 ns of virtual time fails saying so (it said "the engine
# failed: Value too large for defined data type"); the sweep goes on
mkdir -p "$T/over"
cat >"$T/over/tiny.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "tiny",
  "defaults": {"probe": "1us", "suspend": "3000000000000000000ns", "resume": "1us", "async": false},
  "devices": [ {"name": "a"}, {"name": "b"} ], "script": [ {"op": "probe"}, {"op": "suspend"} ] }
J
expect 1 "a run past 2^62 ns: failed" "$DLSIM" sweep --scenarios "$T/over/tiny.json" --orders sync \
	--db "$T/over/o.db"
grep -q "tiny.json sync seed 1: failed: the engine failed: virtual time passed 2^62 ns" "$T/out" &&
	[ "$(sqlite3 "$T/over/o.db" "select status from runs")" = failed ] &&
	ok "it says why: virtual time past 2^62 ns" || { bad "a run past 2^62 ns: why"; cat "$T/out"; }

expect 0 "--help" "$DLSIM" sweep --help
finish cli_sweep
