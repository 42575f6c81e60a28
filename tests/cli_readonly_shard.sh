#!/bin/sh
# A sweep killed mid-run (kill -9 of its process group) leaves its worker's shard in WAL
# mode: the runs it finished live in SHARD-wal, read through SHARD-shm.  In a folder the
# reader cannot write: with the -shm file the worker left, check and report read those
# runs; with a -wal and no -shm (copied from another node without it) SQLite cannot
# create the -shm, and the readers read it with the WAL's index in memory, writing
# nothing (they refused it, exit 2); --compact where the folder is writable makes it
# one file.  Tests run as root, which ignores
# permissions: the readers run as nobody (setpriv), as in cli_readonly.sh.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
as_nobody
command -v setsid >/dev/null || { echo "SKIP: no setsid"; exit 77; }
export DLSIM_KGUEST_STUB="$SRC/tests/tools/kguest_sweep_stub.sh"
mkdir -p "$T/in" "$T/s"
python3 - "$SRC/scenarios/default.json" "$T/in" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for n in (30, 50):     # the device counts of tests/kernel/default-{30,50}-6.12.dump
    d["generate"]["devices"] = n
    json.dump(d, open("%s/d%d.json" % (sys.argv[2], n), "w"))
PY
# d30's 2 runs and their twins are done, then d50's guest hangs: kill the whole sweep
KGUEST_SWEEP_MODE=hang=50 KGUEST_SWEEP_PIDFILE="$T/guest.pid" setsid "$DLSIM" sweep --mode kernel \
	--scenarios "$T/in" --orders sync,kernel-async --kernel 6.12 --twins model --kernel-batch 1 \
	--jobs 1 --db "$T/s/o.db" >/dev/null 2>&1 &
pid=$!
i=0
until [ -s "$T/guest.pid" ]; do
	i=$((i + 1)); [ $i -gt 300 ] && { bad "the sweep did not reach d50"; break; }; sleep 0.1
done
kill -9 "-$pid"
wait "$pid" 2>/dev/null
kill "$(cat "$T/guest.pid")" 2>/dev/null
shard=$(ls "$T/s/o.db.shards/" | grep -- '-s0\.db$')
S="$T/s/o.db.shards/$shard"
[ -s "$S-wal" ] && [ -e "$S-shm" ] && ok "the killed worker's shard: -wal and -shm left" \
	|| bad "setup: $(ls -l "$T/s/o.db.shards")"
ro() { # the folder and its files read-only (the shard folder is gone after --compact)
	chmod 755 "$T"
	chmod 444 "$T/s/o.db" "$T/s/o.db"-* "$T/s/o.db.shards/"* 2>/dev/null
	chmod 555 "$T/s" "$T/s/o.db.shards" 2>/dev/null
}
rw() {
	chmod 755 "$T/s" "$T/s/o.db.shards" 2>/dev/null
	chmod 644 "$T/s/o.db" "$T/s/o.db"-* "$T/s/o.db.shards/"* 2>/dev/null
}
ro
mkdir "$T/rep" && chmod 777 "$T/rep"
expect 0 "check --all reads the runs in the shard's -wal, read-only folder" $AS "$DLSIM" check "$T/s/o.db" --all
[ "$(grep -c "^run [0-9]*: ok, [1-9][0-9]* events" "$T/out")" = 4 ] && ok "4 runs, their events read" \
	|| bad "check: $(cat "$T/out" "$T/err")"
expect 0 "report reads them" $AS "$DLSIM" report "$T/s/o.db" --out "$T/rep/a"
[ -s "$T/rep/a/fidelity.html" ] && ok "the fidelity page from the -wal's runs" || bad "report: no fidelity page"
# a -wal without its -shm: SQLite cannot create the -shm in a read-only folder;
# the shard is read with the WAL's index in memory (it was refused, exit 2)
rw
rm -f "$S-shm"
ro
sum=$(cat "$S" "$S-wal" | cksum)
expect 0 "check --all: a -wal without -shm in a read-only folder" $AS "$DLSIM" check "$T/s/o.db" --all
[ "$(grep -c "^run [0-9]*: ok, [1-9][0-9]* events" "$T/out")" = 4 ] && ok "the same 4 runs, from the -wal" \
	|| bad "check: $(cat "$T/out" "$T/err")"
expect 0 "report reads them too" $AS "$DLSIM" report "$T/s/o.db" --out "$T/rep/b"
[ -s "$T/rep/b/fidelity.html" ] && ok "the fidelity page from the -wal's runs" || bad "report b: no fidelity page"
[ "$(cat "$S" "$S-wal" | cksum)" = "$sum" ] && [ ! -e "$S-shm" ] && ok "the shard left as it was, no -shm" \
	|| bad "the shard changed: $(ls -l "$T/s/o.db.shards")"
rw
expect 0 "--compact where the folder is writable" "$DLSIM" sweep --compact "$T/s/o.db"
ro
expect 0 "then check reads it read-only" $AS "$DLSIM" check "$T/s/o.db" --all
[ "$(grep -c "^run [0-9]*: ok" "$T/out")" = 4 ] && ok "the same 4 runs" || bad "after compact: $(cat "$T/out" "$T/err")"
rw
finish cli_readonly_shard
