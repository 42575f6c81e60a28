#!/bin/sh
# bench/sweep.sh BUILD_DIR [REPS] [DTB_CACHE] [CONFIGS]: the sweep's throughput on 200 real
# DTBs (every 5th of the cache), interleaved, a fresh database each time; prints runs/s, the
# coordinator's and the workers' CPU per run and the workers' time waiting for and holding
# OUT.db's write lock per run.  CONFIGS (default "j1 j2 mpi2q mpi2s"): j1, j2 (--jobs 1, 2),
# j1s, j2s (the same with --write shards), mpi2q, mpi2s (mpirun -np 2, queue or static).
B=$1; REPS=${2:-2}; CACHE=${3:-/var/cache/dlsim-dtbs}; CONFIGS=${4:-j1 j2 mpi2q mpi2s}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir "$T/d"
find "$CACHE" -name '*.dtb' | sort | awk 'NR % 5 == 1' | head -200 | while read -r f; do
	ln -s "$f" "$T/d/$(basename "$(dirname "$f")")-$(basename "$f")"
done
for r in $(seq "$REPS"); do
	for cfg in $CONFIGS; do
		rm -rf "$T/o.db" "$T/o.db-wal" "$T/o.db-shm" "$T/o.db.shards"
		set -- sweep --dtbs "$T/d" --orders kernel-async-v2 --db "$T/o.db" --json
		case $cfg in
		j1) "$B/dlsim" "$@" --jobs 1 >"$T/j" ;;
		j2) "$B/dlsim" "$@" --jobs 2 >"$T/j" ;;
		j1s) "$B/dlsim" "$@" --jobs 1 --write shards >"$T/j" ;;
		j2s) "$B/dlsim" "$@" --jobs 2 --write shards >"$T/j" ;;
		mpi2q) mpirun --allow-run-as-root -np 2 "$B/dlsim" "$@" >"$T/j" 2>/dev/null ;;
		mpi2s) mpirun --allow-run-as-root -np 2 "$B/dlsim" "$@" --distribute static >"$T/j" 2>/dev/null ;;
		esac
		python3 - "$T/j" "$cfg" "$r" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = max(d["ran"], 1)
print("%-6s rep %s: %d runs in %.2f s (%.1f runs/s); CPU per run: coordinator %.2f ms, workers %.2f ms;"
      " lock per run: wait %.2f ms, hold %.2f ms (CPU %.2f ms)"
      % (sys.argv[2], sys.argv[3], d["ran"], d["wall_s"], d["runs_per_s"],
         1e3 * d["coordinator_cpu_s"] / n, 1e3 * d["workers_cpu_s"] / n,
         1e3 * d.get("lock_wait_s", 0) / n, 1e3 * d.get("lock_hold_s", 0) / n,
         1e3 * d.get("lock_hold_cpu_s", 0) / n))
PY
	done
done
