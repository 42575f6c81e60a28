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
# A WAL log whose writer was killed, copied without its -shm: its last run is
# only in the -wal.  SQLite cannot create the -shm in a read-only folder, and
# the readers refused it; now they read it with the WAL's index in memory
# (exclusive locking mode, the unix-none VFS), run 2 included, and write
# nothing: no -shm, the database and its -wal as they were.
mkdir "$T/w"
"$DLSIM" run "$SRC/scenarios/flags.json" --db "$T/w/b.db" >/dev/null 2>&1
cp "$T/w/b.db" "$T/two.db"
"$DLSIM" run "$SRC/scenarios/flags.json" --order sync --db "$T/two.db" >/dev/null 2>&1
python3 - "$T/w/b.db" "$T/two.db" <<'PY' || bad "setup: the -wal"
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("pragma wal_autocheckpoint = 0")
c.execute("attach ? as two", (sys.argv[2],))
c.execute("begin")
for (t,) in c.execute("select name from two.sqlite_master where type = 'table'").fetchall():
    if c.execute("select count(*) from pragma_table_info(?, 'two') where name = 'run_id'", (t,)).fetchone()[0]:
        c.execute('insert into main."%s" select * from two."%s" where run_id = 2' % (t, t))
c.execute("commit")
os._exit(0)    # killed: the -wal and -shm stay
PY
rm -f "$T/w/b.db-shm"
[ -s "$T/w/b.db-wal" ] && [ ! -e "$T/w/b.db-shm" ] && ok "a -wal holding run 2, no -shm" || bad "setup: $(ls "$T/w")"
sum=$(cat "$T/w/b.db" "$T/w/b.db-wal" | cksum)
chmod 555 "$T/w"
chmod 444 "$T/w/b.db" "$T/w/b.db-wal"
expect 0 "check --all reads a -wal without -shm" $AS "$DLSIM" check "$T/w/b.db" --all
grep -q "^run 2: ok, [1-9][0-9]* events" "$T/out" && ok "check: run 2, from the -wal" \
	|| bad "check: $(cat "$T/out" "$T/err")"
expect 0 "diff reads it" $AS "$DLSIM" diff "$T/w/b.db" 1 2
expect 0 "explain reads it" $AS "$DLSIM" explain "$T/w/b.db" --run 2
expect 0 "report reads it" $AS "$DLSIM" report "$T/w/b.db" --out "$T/rep/w" --run 2
expect 0 "twin reads it" $AS "$DLSIM" twin "$T/w/b.db" 2 --db "$T/rep/t.db"
[ "$(cat "$T/w/b.db" "$T/w/b.db-wal" | cksum)" = "$sum" ] && [ ! -e "$T/w/b.db-shm" ] \
	&& ok "-wal without -shm: nothing written" || bad "the log or its folder changed: $(ls "$T/w")"
chmod 755 "$T/w"
# A log named as an SQLite URI reads ("file:u.db?mode=ro", relative): a name is
# data.  Debian's SQLite takes URIs in any path, so the writer made "u.db"
# and read "?mode=ro" as an option (it said "cannot open for writing").
mkdir "$T/u"
SCN=$(cd "$SRC/scenarios" && pwd)/flags.json
(cd "$T/u" && "$DLSIM" run "$SCN" --db 'file:u.db?mode=ro' >/dev/null 2>"$T/err")
[ -s "$T/u/file:u.db?mode=ro" ] && [ ! -e "$T/u/u.db" ] && ok "a log named 'file:u.db?mode=ro' is that file" \
	|| bad "URI-like name: $(ls "$T/u") $(cat "$T/err")"
(cd "$T/u" && "$DLSIM" check 'file:u.db?mode=ro' >"$T/out" 2>&1)
grep -q "^run 1: ok" "$T/out" && ok "check reads it by that name" || bad "check: $(cat "$T/out")"
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
