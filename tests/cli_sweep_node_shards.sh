#!/bin/sh
# Node-local shards on a cluster, tried on one machine as two "nodes": under mpirun
# with --node-shards DIR every rank but 0 writes its shard into DIR (on a cluster, the
# node's local disk) and leaves its runs there, so OUT.db holds rank 0's only and rank
# 0 says how to gather the rest.  Gathered (DIR/* copied into OUT.db.shards/), the same
# sweep command records them and runs nothing, --compact moves every event in, and the
# database is the one a single process writes.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
[ -x "$(dirname "$DLSIM")/dlsim-mpi" ] || { echo "SKIP: dlsim-mpi not built (no MPI found)"; exit 77; }
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun"; exit 77; }
MPI="mpirun --oversubscribe --allow-run-as-root -np 2"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"   # as cli_sweep_mpi.sh

mkdir -p "$T/in" "$T/nodeA"
cp "$SRC/scenarios/soc-small.json" "$SRC/scenarios/flags.json" "$T/in/"
SW="--scenarios $T/in --orders kernel-async-v2,sync --seeds 3"
expect 0 "one process: the reference" "$DLSIM" sweep $SW --db "$T/one.db" --jobs 1
# static split: rank 1 surely runs half the tasks, whatever the load
expect 0 "2 ranks, rank 1's shard node-local" $MPI "$DLSIM" sweep $SW --distribute static \
	--node-shards "$T/nodeB" --db "$T/nodeA/o.db" --json
grep -q "runs of ranks 1-1 stay in .*nodeB.*copy every node's .*nodeB/\* into .*o.db.shards/ and run dlsim sweep --compact" \
	"$T/err" && ok "rank 0 says how to gather them" || { bad "gather message"; cat "$T/err"; }
n=$(sqlite3 "$T/nodeA/o.db" "SELECT count(*) FROM sweep")
[ "$n" -ge 1 ] && [ "$n" -lt 12 ] && [ "$(ls "$T/nodeB" | grep -c -- '-r1-s0\.db$')" = 1 ] \
	&& ok "OUT.db has rank 0's runs ($n of 12); rank 1's stay on its node" \
	|| bad "before gathering: $n runs in OUT.db; nodeB: $(ls "$T/nodeB")"
expect 0 "check reads what OUT.db has" "$DLSIM" check "$T/nodeA/o.db" --all
cp "$T/nodeB/"* "$T/nodeA/o.db.shards/"
expect 0 "gathered, the same sweep again" $MPI "$DLSIM" sweep $SW --distribute static \
	--db "$T/nodeA/o.db" --json
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert (d["planned"], d["skipped"], d["ran"]) == (12, 12, 0), d' \
	"$T/out" && ok "it records the gathered runs and runs nothing" || { bad "resume after gathering"; cat "$T/out"; }
expect 0 "--compact" "$DLSIM" sweep --compact "$T/nodeA/o.db"
expect 0 "the same database as one process writes" python3 "$SRC/tests/sweep_same.py" "$T/one.db" "$T/nodeA/o.db"
expect 0 "check --all" "$DLSIM" check "$T/nodeA/o.db" --all
[ "$(grep -c "^run [0-9]*: ok" "$T/out")" = 12 ] && ok "12 runs ok" || bad "check: $(cat "$T/out")"
expect 2 "--node-shards without mpirun" "$DLSIM" sweep $SW --node-shards "$T/x" --db "$T/x.db"
[ ! -e "$T/x.db" ] && ok "nothing written" || bad "x.db written"
finish cli_sweep_node_shards
