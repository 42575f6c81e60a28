#!/bin/sh
# dlsim sweep under mpirun (4 ranks on this machine's cores, oversubscribed):
# the same database content as the single-process sweep, with the shared
# counter and ranks committing into OUT.db (direct, one node), and with the
# static split and shards, the events staying in one shard per rank; a rank
# killed with -9 mid-sweep leaves a database that opens and passes check, and
# the same command completes it.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
SAME="python3 $SRC/tests/sweep_same.py"
[ -x "$(dirname "$DLSIM")/dlsim-mpi" ] || { echo "SKIP: dlsim-mpi not built (no MPI found)"; exit 77; }
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun"; exit 77; }
MPI="mpirun --oversubscribe --allow-run-as-root -np 4"
# Open MPI's plugins (dlclose'd at exit, so unattributable) leak at MPI_Finalize:
# LeakSanitizer would fail every rank of a SAN=address build for Open MPI's sake
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

mkdir -p "$T/in"
cp "$SRC/scenarios/soc-small.json" "$SRC/scenarios/flags.json" "$SRC/scenarios/faults.json" "$T/in/"
SMALL="--scenarios $T/in --orders kernel-async-v2,cp-first,sync --seeds 3"
expect 1 "single process (faults.json fails, as it should)" "$DLSIM" sweep $SMALL --db "$T/one.db" --jobs 1
expect 1 "mpirun -np 4, shared counter" $MPI "$DLSIM" sweep $SMALL --db "$T/q.db" --json
python3 - "$T/out" <<'PY' && ok "27 runs by 4 ranks, committed by themselves" || { bad "mpi summary"; cat "$T/out" "$T/err"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert (d["planned"], d["ran"], d["workers"], d["write"]) == (27, 27, 4, "direct"), d
assert d["lock_hold_s"] > 0, d     # the ranks on rank 0's node took OUT.db's lock
PY
expect 0 "4 ranks = 1 process (queue)" $SAME "$T/one.db" "$T/q.db"
expect 1 "mpirun -np 4, static split, shards" $MPI "$DLSIM" sweep $SMALL --db "$T/s.db" \
	--distribute static --write shards --json
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["write"] == "shards" and d["ran"] == 27, d' \
	"$T/out" && ok "27 runs through shards" || { bad "mpi shards"; cat "$T/out"; }
expect 0 "4 ranks = 1 process (static, shards)" $SAME "$T/one.db" "$T/s.db"
[ "$(sqlite3 "$T/q.db" "SELECT count(*) FROM run_shards")" = 27 ] && \
	[ "$(sqlite3 "$T/s.db" "SELECT count(*) FROM events")" = 0 ] && \
	[ "$(ls "$T/s.db.shards" | grep -c -- '-r[0-9]-s0.db$')" = 4 ] \
	&& ok "the events stay in one shard per rank" || bad "shards after mpirun"
# the ranks' shards read as any database: check, diff, report
expect 0 "check --all reads the ranks' shards" "$DLSIM" check "$T/s.db" --all
grep -q "^run 1: ok, [1-9][0-9]* events" "$T/out" && ok "run 1's events from its rank's shard" || { bad "check output"; cat "$T/out"; }
expect 0 "diff of two runs from the shards" "$DLSIM" diff "$T/s.db" 1 2
expect 0 "report from the shards" "$DLSIM" report "$T/s.db" --out "$T/rep"
expect 1 "resumed under mpirun: nothing to do" $MPI "$DLSIM" sweep $SMALL --db "$T/q.db"
grep -q "27 already in .*, 0 run now" "$T/out" && ok "everything skipped" || bad "mpi resume"

# a rank killed mid-sweep.  mpirun takes ~1.4 s to notice a dead rank and tear
# the job down, while the ranks (SIGCONT'd by it) run on: at 40 runs of 200
# devices that was enough to finish the sweep (a CI run kept all 40).  So the
# ranks are stopped first, the count is read, a rank >= 1 is killed and then
# the rest, as when its node is lost.  A rank stopped inside its commit may
# have written the WAL's commit frame before the shared index saw it: that run
# is durable and appears once the WAL is recovered (a CI run kept 10 of 9), so
# the kept count is n0 plus at most one in-flight commit per rank; the re-run
# must complete them.
BIG="--scenarios $SRC/scenarios/default.json --set devices=200 --orders kernel-async-v2,cp-first --seeds 60"
TOTAL=120
expect 0 "reference" "$DLSIM" sweep $BIG --db "$T/ref.db" --jobs 2
# (at nice 10: on a loaded machine this shell's polling must not be starved while the ranks run on)
timeout 300 nice -n 10 $MPI "$DLSIM" sweep $BIG --db "$T/k.db" >"$T/kout" 2>&1 &
pid=$!
count() { sqlite3 -cmd ".timeout 5000" "$1" "SELECT count(*) FROM sweep" 2>/dev/null || echo 0; }
i=0
until [ "$(count "$T/k.db")" -gt 0 ] || [ $i -ge 600 ]; do sleep 0.02; i=$((i + 1)); done
ranks= victim=
for p in $(pgrep -f "dlsim-mpi sweep .*$T/k.db"); do
	# pgrep also matches mpirun and timeout, whose command lines hold the same words
	grep -qz '^OMPI_COMM_WORLD_RANK=' "/proc/$p/environ" 2>/dev/null || continue
	ranks="$ranks $p"
	[ -z "$victim" ] && grep -qz '^OMPI_COMM_WORLD_RANK=[1-9]' "/proc/$p/environ" && victim=$p
done
kill -STOP $ranks 2>/dev/null  # no new commit starts; one in flight may still land (above)
n0=$(count "$T/k.db")
[ -n "$victim" ] && kill -KILL "$victim" && ok "killed rank process $victim after $n0 of $TOTAL runs" ||
	bad "no rank to kill"
kill -KILL $ranks 2>/dev/null
wait $pid; st=$?
[ $st != 0 ] && ok "mpirun reports the lost rank (exit $st)" || bad "mpirun exit 0 after a rank died"
[ "$(sqlite3 "$T/k.db" 'PRAGMA integrity_check')" = ok ] && ok "the database opens" || bad "integrity"
n=$(count "$T/k.db")
nr=$(echo $ranks | wc -w)
[ "$n" -gt 0 ] && [ "$n" -lt $TOTAL ] && [ "$n" -ge "$n0" ] && [ "$n" -le $((n0 + nr)) ] &&
	ok "$n of $TOTAL runs kept ($n0 committed when the $nr ranks were stopped)" ||
	bad "a killed sweep kept $n runs ($n0 committed when the ranks were stopped)"
expect 0 "the kept runs pass check" "$DLSIM" check "$T/k.db" --all
expect 0 "re-run completes it" timeout 300 $MPI "$DLSIM" sweep $BIG --db "$T/k.db"
expect 0 "completed = reference" $SAME "$T/ref.db" "$T/k.db"

# kernel mode under mpirun with the fake guest (tests/tools/kguest_sweep_stub.sh, no QEMU):
# each rank boots its own guest; then a rank killed by the guest it booted (kill -9 of
# its parent), and the same command completes the sweep
mkdir -p "$T/kin"
cp "$SRC/scenarios/camera.json" "$T/kin/"
python3 - "$SRC/scenarios/default.json" "$T/kin" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for n in (30, 50):     # tests/kernel/default-{30,50}-6.12.dump
    d["generate"]["devices"] = n
    d["name"] = "default-%d" % n
    json.dump(d, open("%s/d%d.json" % (sys.argv[2], n), "w"))
PY
KSW="--mode kernel --scenarios $T/kin --orders sync,kernel-async --kernel 6.12 --twins model"
KMPI="mpirun --oversubscribe --allow-run-as-root -np 2"
DLSIM_KGUEST_STUB="$SRC/tests/tools/kguest_sweep_stub.sh" expect 0 "kernel mode, 2 ranks" $KMPI \
	"$DLSIM" sweep $KSW --db "$T/km.db" --json
python3 - "$T/out" "$T/km.db" <<'PY' && ok "6 kernel runs and their 6 twins by 2 ranks" || { bad "mpi kernel sweep"; cat "$T/out"; }
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert (d["planned"], d["ran"], d["failed"], d["workers"]) == (12, 12, 0, 2), d
assert all(g["kernel_fidelity"]["model"]["runs"] == 2 for g in d["groups"]), d["groups"]
db = sqlite3.connect(sys.argv[2])
assert db.execute("select count(*) from runs t join runs k on k.run_id = t.twin_of"
                  " where k.mode = 'kernel' and t.mode = 'des'").fetchone()[0] == 6
PY
DLSIM_KGUEST_STUB="$SRC/tests/tools/kguest_sweep_stub.sh" KGUEST_SWEEP_MODE=kill=50 \
	KGUEST_SWEEP_MARK="$T/kmark" timeout 300 $KMPI "$DLSIM" sweep $KSW --db "$T/kk.db" >"$T/out" 2>&1
st=$?
[ $st != 0 ] && [ -e "$T/kmark" ] && ok "a rank killed under its guest: mpirun exit $st" || bad "killed rank: exit $st"
[ "$(sqlite3 "$T/kk.db" 'PRAGMA integrity_check')" = ok ] && ok "the database opens" || bad "integrity"
expect 0 "the kept runs pass check" "$DLSIM" check "$T/kk.db" --all
DLSIM_KGUEST_STUB="$SRC/tests/tools/kguest_sweep_stub.sh" expect 0 "re-run completes it" \
	timeout 300 $KMPI "$DLSIM" sweep $KSW --db "$T/kk.db" --json
python3 - "$T/out" "$T/kk.db" <<'PY' && ok "every kernel run and twin, once, d50's run now" || { bad "completed kernel sweep"; cat "$T/out"; }
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert d["planned"] == 12 and d["skipped"] + d["ran"] == 12 and d["ran"] > 0 and d["failed"] == 0, d
db = sqlite3.connect(sys.argv[2])
got = db.execute("select mode, count(*) from sweep where status = 'ok' group by 1 order by 1").fetchall()
assert got == [("kernel", 6), ("twin-model", 6)], got
PY
finish cli_sweep_mpi
