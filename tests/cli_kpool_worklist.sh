#!/bin/sh
# The async pool's worklist (issue 31, sim/engine/des.c pool_grew()): under the
# guest profile (a pool of two kworkers, one vCPU) work beyond the pool's
# kworkers waits on the worklist for a kworker back from its item or a new
# one, as worker_thread() runs it.  The 200-device classic async case held
# 199 items at once when every queued item took a kworker at once (149 in
# its suspend, where the 6.12 guest keeps 25 busy and 81 waiting:
# tests/tools/pool_trace.py); now 61.  The hardware profile's pool is
# max_active from the start: its 200 items are all in flight.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

peak() { sqlite3 "$1" "select cast(value as int) from metrics where name = 'peak_workers' and run_id = (select max(run_id) from runs)"; }
expect 0 "guest run" "$DLSIM" run "$SRC/scenarios/default.json" --set devices=200 --order kernel-async \
	--seed 1 --profile guest --workers 1 --db "$T/g.db"
p=$(peak "$T/g.db")
[ -n "$p" ] && [ "$p" -gt 2 ] && [ "$p" -le 100 ] && ok "guest: $p items hold a kworker at the peak" \
	|| bad "guest: peak_workers $p, expected 3-100"
expect 0 "hardware run" "$DLSIM" run "$SRC/scenarios/default.json" --set devices=200 --order kernel-async \
	--seed 1 --workers 1 --db "$T/h.db"
p=$(peak "$T/h.db")
[ "$p" -ge 190 ] && ok "hardware: $p at the peak" || bad "hardware: peak_workers $p, expected >= 190"
finish cli_kpool_worklist
