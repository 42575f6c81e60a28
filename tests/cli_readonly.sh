#!/bin/sh
# A log in a folder its reader cannot write (issue 34): SQLite cannot create a
# WAL database's -shm file there, and check and diff said "cannot read:
# attempt to write a readonly database" (exit 2); report and explain, which
# opened it their own way, too.  With no -wal file beside it the log is read
# immutable: check, diff, explain and report work, and nothing is written.
# So are a sweep's OUT.db and its shards.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
as_nobody
mkdir "$T/ro"
"$DLSIM" run "$SRC/scenarios/flags.json" --db "$T/ro/a.db" >/dev/null 2>&1
"$DLSIM" run "$SRC/scenarios/flags.json" --order sync --db "$T/ro/a.db" >/dev/null 2>&1
[ "$(sqlite3 "$T/ro/a.db" "pragma journal_mode")" = wal ] && [ ! -s "$T/ro/a.db-wal" ] \
	&& ok "a WAL log, no -wal left" || bad "setup: $(ls "$T/ro")"
sum=$(cksum <"$T/ro/a.db")
chmod 755 "$T"
chmod 555 "$T/ro"
chmod 444 "$T/ro/a.db"
expect 0 "check reads it" $AS "$DLSIM" check "$T/ro/a.db"
grep -q "ok, [0-9]* events" "$T/out" && ok "check: ok" || bad "check: $(cat "$T/out" "$T/err")"
expect 0 "diff reads it" $AS "$DLSIM" diff "$T/ro/a.db" 1 2
expect 0 "explain reads it" $AS "$DLSIM" explain "$T/ro/a.db" --run 1
grep -q "critical path\|chain" "$T/out" && ok "explain: an account" || bad "explain: $(cat "$T/out" "$T/err")"
mkdir "$T/rep" && chmod 777 "$T/rep"
expect 0 "report reads it" $AS "$DLSIM" report "$T/ro/a.db" --out "$T/rep/r"
[ -s "$T/rep/r/index.html" ] && ok "report: index.html" || bad "report: $(cat "$T/out" "$T/err")"
[ "$(cksum <"$T/ro/a.db")" = "$sum" ] && [ ! -e "$T/ro/a.db-shm" ] && ok "nothing written" \
	|| bad "the log or its folder changed: $(ls "$T/ro")"
chmod 755 "$T/ro"
# a sweep's folder: OUT.db and the shards its runs' events stay in (each left
# as one file, out of WAL, when its worker is done)
mkdir -p "$T/sw/s"
"$DLSIM" sweep --scenarios "$SRC/scenarios/flags.json" --orders sync,kernel-async-v2 --db "$T/sw/s/o.db" \
	--jobs 1 >/dev/null 2>&1 || bad "setup: the sweep"
chmod 755 "$T/sw"
chmod 555 "$T/sw/s" "$T/sw/s/o.db.shards"
chmod 444 "$T/sw/s/o.db" "$T/sw/s/o.db.shards/"*
expect 0 "check reads a sweep's shards" $AS "$DLSIM" check "$T/sw/s/o.db" --all
grep -q "run 2: ok, [1-9][0-9]* events" "$T/out" && ok "check: the shard's events" || bad "check: $(cat "$T/out" "$T/err")"
expect 0 "report reads a sweep's shards" $AS "$DLSIM" report "$T/sw/s/o.db" --out "$T/rep/s"
chmod 755 "$T/sw/s" "$T/sw/s/o.db.shards"
finish cli_readonly
