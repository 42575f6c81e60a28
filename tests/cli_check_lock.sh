#!/bin/sh
# check reads in a read transaction (issue 34): it used to take the write
# lock for its whole pass (7 s on a 7.4M-event run), so that a concurrent
# `run --busy-timeout 1000` failed.  Now a clean run is checked without the
# write lock at all: while another process holds it, check answers at once
# (it waited DL_LOG_BUSY_MS, 5 s, for it), and a violating run's rows are
# written in one short transaction at the end.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }

"$DLSIM" run "$SRC/scenarios/flags.json" --db "$T/a.db" >/dev/null 2>&1
"$DLSIM" run "$SRC/scenarios/default.json" --order naive --set devices=200 --db "$T/a.db" >/dev/null 2>&1
python3 - "$T/a.db" "$T/locked" <<'PY' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
c.execute("begin immediate")
open(sys.argv[2], "w").close()
time.sleep(20)
c.execute("rollback")
PY
holder=$!
i=0
while [ ! -e "$T/locked" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
t0=$(date +%s%N)
expect 0 "check of a clean run while another process holds the write lock" "$DLSIM" check "$T/a.db" --run 1
ms=$((($(date +%s%N) - t0) / 1000000))
echo "check took $ms ms under a held write lock"
[ "$ms" -lt 3000 ] && ok "it did not wait for the write lock" || bad "check waited $ms ms for the write lock"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
expect 1 "the naive run's violations" "$DLSIM" check "$T/a.db" --run 2
[ "$(sqlite3 "$T/a.db" "select status, (select count(*) > 0 from violations where run_id = 2) from runs where run_id = 2")" = "violations|1" ] \
	&& ok "stored, the run marked 'violations'" || bad "violations not stored: $(sqlite3 "$T/a.db" "select status from runs")"
expect 1 "checked again: the same" "$DLSIM" check "$T/a.db" --run 2
n1=$(sqlite3 "$T/a.db" "select count(*) from violations where run_id = 2")
grep -q "run 2: [0-9]* violation" "$T/out" && [ "$n1" -gt 0 ] && ok "$n1 rows, replaced not added" || bad "second check"
finish cli_check_lock
