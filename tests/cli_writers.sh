#!/bin/sh
# Every writer opens its database one way (sim/log dl_log_open_db()): the
# advice table of `advise --db` and the twin's mark refuse a database that is
# not dlsim's (no or a foreign application_id) as `run` does, leave it
# untouched, and a new one gets the log's WAL journal and application_id.
# The twin reads its source read-only and validates it first: a tampered run
# is not replayed (exit 3), a source in a read-only folder is enough.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
S=$SRC/scenarios/flags.json
expect 0 "run" "$DLSIM" run "$S" --db "$T/a.db"

# advise --db: a dlsim-looking database without the application_id
cp "$T/a.db" "$T/noid.db"
sqlite3 "$T/noid.db" "pragma application_id = 0"
sum=$(cksum <"$T/noid.db")
expect 2 "advise --db: tables like dlsim's, no application_id" \
	"$DLSIM" advise "$S" --top 2 --db "$T/noid.db"
grep -q "noid.db: not a dlsim database.*application_id" "$T/err" && ok "the same reason as run's" \
	|| bad "message: $(cat "$T/err")"
[ "$(cksum <"$T/noid.db")" = "$sum" ] && ok "left untouched" || bad "advise wrote into it"
cp "$T/a.db" "$T/foreign.db"
sqlite3 "$T/foreign.db" "pragma application_id = 1234"
expect 2 "advise --db: a foreign application_id" "$DLSIM" advise "$S" --top 2 --db "$T/foreign.db"
mkdir "$T/dir.db"
expect 2 "advise --db: a folder" "$DLSIM" advise "$S" --top 2 --db "$T/dir.db"
grep -q "dir.db: not a regular file" "$T/err" && ok "says so" || bad "message: $(cat "$T/err")"
expect 0 "advise --db: a new file" "$DLSIM" advise "$S" --top 2 --db "$T/new.db"
[ "$(sqlite3 "$T/new.db" "pragma journal_mode; pragma application_id;" | tr '\n' ' ')" = \
	"wal 1684829033 " ] && ok "WAL and dlsim's application_id" || bad "$(sqlite3 "$T/new.db" "pragma journal_mode; pragma application_id")"
[ "$(sqlite3 "$T/new.db" "select count(*) from advice where op = 'total'")" = 2 ] \
	&& ok "the ranking stored" || bad "advice rows: $(sqlite3 "$T/new.db" "select count(*) from advice")"

# twin: a tampered source is refused before anything is replayed or written
cp "$T/a.db" "$T/tampered.db"
sqlite3 "$T/tampered.db" "update runs set makespan_ns = -9223372036854775808"
expect 3 "twin of a tampered run" "$DLSIM" twin "$T/tampered.db" 1 --db "$T/tw.db"
grep -q "corrupt log" "$T/err" && ok "says corrupt" || bad "message: $(cat "$T/err")"
[ ! -e "$T/tw.db" ] && ok "no twin written" || bad "a twin of a corrupt run was logged"
grep -q "ms" "$T/out" && bad "printed figures: $(cat "$T/out")" || ok "no figures printed"
expect 2 "twin into a foreign database" "$DLSIM" twin "$T/a.db" 1 --db "$T/foreign.db"
expect 2 "twin into one without the application_id" "$DLSIM" twin "$T/a.db" 1 --db "$T/noid.db"
[ "$(cksum <"$T/noid.db")" = "$sum" ] && ok "left untouched" || bad "twin wrote into it"

# twin: the source in a folder nobody may write, the twin elsewhere
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null && AS="setpriv --reuid=65534 --regid=65534 --clear-groups" \
		|| AS=skip
else
	AS=
fi
if [ "$AS" != skip ]; then
	mkdir "$T/ro" "$T/dst"
	cp "$T/a.db" "$T/ro/a.db"
	rsum=$(cksum <"$T/ro/a.db")
	chmod 755 "$T"
	chmod 555 "$T/ro"
	chmod 444 "$T/ro/a.db"
	chmod 777 "$T/dst"
	expect 0 "twin of a source in a read-only folder" $AS "$DLSIM" twin "$T/ro/a.db" 1 --db "$T/dst/t.db"
	[ "$(sqlite3 "$T/dst/t.db" "select twin_of from runs")" = 1 ] && ok "twin_of recorded" \
		|| bad "twin_of: $(sqlite3 "$T/dst/t.db" "select * from runs")"
	[ "$(cksum <"$T/ro/a.db")" = "$rsum" ] && [ "$(ls "$T/ro")" = a.db ] && ok "source untouched" \
		|| bad "the source or its folder changed: $(ls "$T/ro")"
	chmod 755 "$T/ro"
fi
finish cli_writers
