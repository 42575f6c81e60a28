#!/bin/sh
# dlsim sweep --compact while a sweep writes the same OUT.db is refused (exit 2, saying
# why and what to do), and nothing is changed; once the sweep is killed with kill -9
# (its whole process group: coordinator, worker, guest) the lock is gone with it and
# --compact runs.  The sweep is held mid-run by a fake guest that hangs
# (DLSIM_KGUEST_STUB, KGUEST_SWEEP_MODE=hang).
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
export DLSIM_KGUEST_STUB="$SRC/tests/tools/kguest_sweep_stub.sh"
command -v setsid >/dev/null || { echo "SKIP: no setsid"; exit 77; }

SC="$SRC/scenarios/camera.json"
# a finished sweep first, so that there is something to compact
expect 0 "a DES sweep" "$DLSIM" sweep --scenarios "$SC" --orders sync,kernel-async --db "$T/o.db"
ls "$T/o.db.shards" >"$T/before"
KGUEST_SWEEP_MODE=hang KGUEST_SWEEP_PIDFILE="$T/guest.pid" setsid "$DLSIM" sweep --mode kernel --scenarios "$SC" --orders sync \
	--kernel 6.12 --kernel-timeout 120 --jobs 1 --db "$T/o.db" >"$T/hung.out" 2>&1 &
pid=$!
# the worker makes its shard once it has its task: then the sweep is under way
i=0
until ls "$T/o.db.shards" | grep '\.db$' | grep -vqxF -f "$T/before"; do
	i=$((i + 1)); [ $i -gt 300 ] && { bad "the sweep did not start"; break; }; sleep 0.1
done
n_before=$(ls "$T/o.db.shards" | wc -l)
expect 2 "--compact while a sweep writes OUT.db" "$DLSIM" sweep --compact "$T/o.db"
grep -q "a dlsim sweep is writing .*o.db.*run --compact when it has ended" "$T/err" \
	&& ok "the refusal says why and what to do" || { bad "refusal message"; cat "$T/err"; }
[ "$(ls "$T/o.db.shards" | wc -l)" = "$n_before" ] && ok "no shard touched" || bad "shards changed"
python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); assert db.execute("select count(*) from run_shards").fetchone()[0] == 2' \
	"$T/o.db" && ok "OUT.db's events still in their shards" || bad "OUT.db changed"
kill -9 "-$pid"
wait "$pid" 2>/dev/null
# the guest has a process group of its own (kboot.c) and holds no lock: end it all the same
[ -s "$T/guest.pid" ] && kill "$(cat "$T/guest.pid")" 2>/dev/null
# the lock goes with the last process holding it: the worker, killed with the coordinator,
# may still be exiting once the coordinator is reaped; wait until none of the group runs
i=0
while ps -e -o pgid=,stat= | awk -v g="$pid" '$1 == g && $2 !~ /^Z/ { f = 1 } END { exit !f }' &&
	[ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
expect 0 "--compact once the sweep is killed with kill -9" "$DLSIM" sweep --compact "$T/o.db"
grep -q "compacted .*o.db" "$T/out" && ok "compacted" || { bad "compact"; cat "$T/out" "$T/err"; }
[ ! -e "$T/o.db.shards" ] && ok "shard folder and lock file gone" || { bad "left: $(ls -A "$T/o.db.shards")"; }
expect 0 "check after compacting" "$DLSIM" check "$T/o.db"
finish cli_sweep_lock
