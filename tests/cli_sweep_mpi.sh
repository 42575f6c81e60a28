#!/bin/sh
# dlsim sweep under mpirun (4 ranks on this machine's cores, oversubscribed):
# the same database content as the single-process sweep, with the shared
# counter and with the static split; a rank killed with -9 mid-sweep leaves
# a database that opens and passes check, and the same command completes it.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
SAME="python3 $SRC/tests/sweep_same.py"
[ -x "$(dirname "$DLSIM")/dlsim-mpi" ] || { echo "SKIP: dlsim-mpi not built (no MPI found)"; exit 0; }
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun"; exit 0; }
MPI="mpirun --oversubscribe --allow-run-as-root -np 4"
# Open MPI's plugins (dlclose'd at exit, so unattributable) leak at MPI_Finalize:
# LeakSanitizer would fail every rank of a SAN=address build for Open MPI's sake
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

mkdir -p "$T/in"
cp "$SRC/scenarios/soc-small.json" "$SRC/scenarios/flags.json" "$SRC/scenarios/faults.json" "$T/in/"
SMALL="--scenarios $T/in --orders kernel-async-v2,cp-first,sync --seeds 3"
expect 1 "single process (faults.json fails, as it should)" "$DLSIM" sweep $SMALL --db "$T/one.db" --jobs 1
expect 1 "mpirun -np 4, shared counter" $MPI "$DLSIM" sweep $SMALL --db "$T/q.db"
grep -q "^sweep: 27 runs planned, 0 already in .*, 27 run now by 4 workers" "$T/out" \
	&& ok "27 runs by 4 ranks" || { bad "mpi summary"; cat "$T/out" "$T/err"; }
expect 0 "4 ranks = 1 process (queue)" $SAME "$T/one.db" "$T/q.db"
expect 1 "mpirun -np 4, static split" $MPI "$DLSIM" sweep $SMALL --db "$T/s.db" --distribute static
expect 0 "4 ranks = 1 process (static)" $SAME "$T/one.db" "$T/s.db"
[ ! -e "$T/q.db.shards" ] && [ ! -e "$T/s.db.shards" ] && ok "no shards left" || bad "shards left"
expect 1 "resumed under mpirun: nothing to do" $MPI "$DLSIM" sweep $SMALL --db "$T/q.db"
grep -q "27 already in .*, 0 run now" "$T/out" && ok "everything skipped" || bad "mpi resume"

# a rank killed mid-sweep
BIG="--scenarios $SRC/scenarios/default.json --set devices=200 --orders kernel-async-v2,cp-first --seeds 20"
expect 0 "reference" "$DLSIM" sweep $BIG --db "$T/ref.db" --jobs 2
timeout 300 $MPI "$DLSIM" sweep $BIG --db "$T/k.db" >"$T/kout" 2>&1 &
pid=$!
# Kill a rank other than 0 (the writer) as soon as some rank has finished a
# run in its shard: waiting for OUT.db's first merge (every second) let the
# whole sweep finish first on a fast machine.
shard_has_run() {
	for f in "$1"/*.db; do
		[ -e "$f" ] && [ "$(sqlite3 "$f" "SELECT count(*) FROM sweep" 2>/dev/null || echo 0)" -gt 0 ] && return 0
	done
	return 1
}
i=0
until shard_has_run "$T/k.db.shards" || [ $i -ge 600 ]; do sleep 0.05; i=$((i + 1)); done
victim=
for p in $(pgrep -f "dlsim-mpi sweep .*$T/k.db"); do
	grep -qz '^OMPI_COMM_WORLD_RANK=[1-9]' "/proc/$p/environ" 2>/dev/null && { victim=$p; break; }
done
[ -n "$victim" ] && kill -KILL "$victim" && ok "killed rank process $victim" || bad "no rank to kill"
wait $pid; st=$?
[ $st != 0 ] && ok "mpirun reports the lost rank (exit $st)" || bad "mpirun exit 0 after a rank died"
[ "$(sqlite3 "$T/k.db" 'PRAGMA integrity_check')" = ok ] && ok "the database opens" || bad "integrity"
n=$(sqlite3 "$T/k.db" "SELECT count(*) FROM sweep")
[ "$n" -lt 40 ] && ok "$n of 40 runs kept" || bad "a killed sweep finished? ($n runs)"
if [ "$n" -gt 0 ]; then
	expect 0 "the kept runs pass check" "$DLSIM" check "$T/k.db" --all
else	# killed before rank 0's first merge: the finished runs wait in the shards
	shard_has_run "$T/k.db.shards" && ok "finished runs kept in the shards" || bad "no finished run kept"
fi
expect 0 "re-run completes it" timeout 300 $MPI "$DLSIM" sweep $BIG --db "$T/k.db"
expect 0 "completed = reference" $SAME "$T/ref.db" "$T/k.db"
finish cli_sweep_mpi
