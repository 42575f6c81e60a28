#!/bin/sh
# A sweep's events stay in its shards: check, explain, diff, twin and report
# read a shard-resident run as they read a compacted one (the same output,
# byte for byte); `dlsim sweep --compact` gives the content the shards hold,
# every event in OUT.db, and removes only the files the sweep wrote; a
# missing shard and a file that is not the shard OUT.db names are errors
# (exit 2) naming the file, and the runs whose shards are there still read;
# more shards than SQLite attaches at once are read too; shards gathered from
# another node after the sweep are recorded and merged by --compact.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
SAME="python3 $SRC/tests/sweep_same.py"

mkdir -p "$T/in" "$T/s" "$T/c"
cp "$SRC/scenarios/soc-small.json" "$SRC/scenarios/flags.json" "$T/in/"
ARGS="--scenarios $T/in --orders kernel-async-v2,sync --seeds 2"
expect 0 "sweep, 2 jobs" "$DLSIM" sweep $ARGS --db "$T/s/o.db" --jobs 2
[ "$(sqlite3 "$T/s/o.db" "SELECT count(*) FROM events")" = 0 ] \
	&& [ "$(sqlite3 "$T/s/o.db" "SELECT count(*) FROM run_shards")" = 8 ] \
	&& ok "8 runs, their events in the shards" || bad "events in OUT.db"
cp -r "$T/s/o.db" "$T/s/o.db.shards" "$T/c/"
expect 0 "--compact a copy" "$DLSIM" sweep --compact "$T/c/o.db"
grep -q "the events of 8 runs moved in" "$T/out" && ok "--compact says what it moved" || { bad "--compact output"; cat "$T/out"; }
expect 0 "compacted = the shards' content" $SAME "$T/s/o.db" "$T/c/o.db"
python3 - "$T/c/o.db" <<'PY' && ok "compacted: every run's events, as many as it logged" || bad "compacted event counts"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT r.run_id, r.events, (SELECT count(*) FROM events e WHERE e.run_id = r.run_id),"
                  " (SELECT count(*) FROM devices d WHERE d.run_id = r.run_id), r.devices FROM runs r").fetchall()
assert len(rows) == 8 and all(n > 0 and n == e and d == nd for _, n, e, d, nd in rows), rows
assert db.execute("SELECT count(*) FROM run_shards").fetchone()[0] == 0
assert db.execute("SELECT count(*) FROM shards").fetchone()[0] == 0
PY
[ ! -e "$T/c/o.db.shards" ] && ok "--compact removed the shards" || bad "shards after --compact"

# every reader: shard-resident and compacted runs read the same
same() { # WHAT ARGS... (@ stands for the database)
	what=$1; shift
	a=$(echo "$@" | sed "s|@|$T/s/o.db|g"); b=$(echo "$@" | sed "s|@|$T/c/o.db|g")
	"$DLSIM" $a >"$T/a.out" 2>&1; ra=$?
	"$DLSIM" $b >"$T/b.out" 2>&1; rb=$?
	sed -i "s|$T/[sc]/o.db|DB|g" "$T/a.out" "$T/b.out"
	if [ $ra = $rb ] && [ $ra = 0 ] && cmp -s "$T/a.out" "$T/b.out" && [ -s "$T/a.out" ]; then
		ok "$what: the same from the shards"
	else
		bad "$what: exit $ra vs $rb"; diff "$T/a.out" "$T/b.out" | head -5
	fi
}
same "check --all" check @ --all
grep -q "^run 3: ok, [1-9][0-9]* events" "$T/a.out" && ok "check counts run 3's events" || { bad "check output"; cat "$T/a.out"; }
same "check --run 6 -v" check @ --run 6 -v
same "explain" explain @ --run 3
grep -q "chain" "$T/a.out" && ok "explain walks the shard's callbacks" || { bad "explain output"; head -5 "$T/a.out"; }
same "diff" diff @ 1 6 --json
same "diff across two shards" diff @ 1 2
same "twin" twin @ 7 --db @.twin --json
for d in s c; do
	"$DLSIM" report "$T/$d/o.db" --out "$T/r$d" --run 3 >/dev/null 2>"$T/err" || { bad "report $d: $(cat "$T/err")"; }
done
for f in gantt.tsv makespan.tsv orders.tsv probe.tsv util.tsv; do
	cmp -s "$T/rs/$f" "$T/rc/$f" || bad "report: $f differs"
done
[ "$(wc -l <"$T/rs/gantt.tsv")" -gt 10 ] && cmp -s "$T/rs/gantt.tsv" "$T/rc/gantt.tsv" \
	&& ok "report: the same data files from the shards" || bad "report from the shards"

# more shards than SQLite attaches at once (10): report reads them one by one
mkdir "$T/m" "$T/mc"
expect 0 "a sweep with 12 workers" "$DLSIM" sweep --scenarios "$T/in/flags.json" --orders sync --seeds 24 \
	--db "$T/m/o.db" --jobs 12
n=$(sqlite3 "$T/m/o.db" "SELECT count(DISTINCT shard_id) FROM run_shards")
cp -r "$T/m/o.db" "$T/m/o.db.shards" "$T/mc/"
"$DLSIM" sweep --compact "$T/mc/o.db" >/dev/null || bad "--compact of 12 shards"
for d in m mc; do
	"$DLSIM" report "$T/$d/o.db" --out "$T/r$d" >/dev/null 2>"$T/err" || bad "report $d: $(cat "$T/err")"
done
[ "$n" -gt 10 ] && cmp -s "$T/rm/makespan.tsv" "$T/rmc/makespan.tsv" && cmp -s "$T/rm/gantt.tsv" "$T/rmc/gantt.tsv" \
	&& ok "report over $n shards: the same as compacted" || bad "report over $n shards"

# a missing shard: exit 2 naming it; runs in the other shard still read
sh1=$(sqlite3 "$T/s/o.db" "SELECT path FROM shards s JOIN run_shards m USING (shard_id) WHERE m.run_id = 1")
r_other=$(sqlite3 "$T/s/o.db" "SELECT min(run_id) FROM run_shards m JOIN shards s USING (shard_id) WHERE s.path <> '$sh1'")
mv "$T/s/$sh1" "$T/s/away.db"
for v in "check $T/s/o.db --run 1" "check $T/s/o.db --all" "explain $T/s/o.db --run 1" "diff $T/s/o.db 1 2" \
	"report $T/s/o.db --out $T/rm" "twin $T/s/o.db 1"; do
	expect 2 "a missing shard: $(echo "$v" | cut -d' ' -f1) exits 2" "$DLSIM" $v
	grep -q "$sh1, which is missing" "$T/err" || { bad "the message names the file"; cat "$T/err"; }
done
grep -q "run 1's events are in $T/s/$sh1, which is missing" "$T/err" && ok "the message names the run and the file" \
	|| { bad "missing shard message"; cat "$T/err"; }
expect 0 "a run in the other shard still reads" "$DLSIM" check "$T/s/o.db" --run "$r_other"
expect 2 "check --all with a shard missing" "$DLSIM" check "$T/s/o.db" --all
grep -q "^run $r_other: ok" "$T/out" && ok "check --all still checks the other shard's runs" \
	|| { bad "check --all with a shard missing"; cat "$T/out" "$T/err"; }
expect 2 "--compact with a shard missing" "$DLSIM" sweep --compact "$T/s/o.db"
grep -q "$sh1, which is missing" "$T/err" && ok "--compact names the missing shard" || { bad "--compact message"; cat "$T/err"; }
mv "$T/s/away.db" "$T/s/$sh1"

# another sweep's shard under the same name: refused, not read as this one's
mkdir "$T/o"
"$DLSIM" sweep $ARGS --seed 5 --db "$T/o/o.db" --jobs 1 >/dev/null 2>&1 || bad "the other sweep"
cp "$T/s/$sh1" "$T/s/keep.db"
cp "$(ls "$T/o/o.db.shards"/*-s0.db | head -1)" "$T/s/$sh1"
expect 2 "a foreign shard: check exits 2" "$DLSIM" check "$T/s/o.db" --run 1
grep -q "$sh1 does not hold run 1 of .* as it was logged" "$T/err" && ok "names the file and the run" \
	|| { bad "foreign shard message"; cat "$T/err"; }
echo "not a database at all, just text long enough to look like one................................" >"$T/s/$sh1"
expect 2 "a shard that is not a database: exit 2" "$DLSIM" explain "$T/s/o.db" --run 1
grep -q "$sh1" "$T/err" && ok "names the file" || { bad "not-a-database message"; cat "$T/err"; }
mv "$T/s/keep.db" "$T/s/$sh1"
expect 0 "the shard back: check --all" "$DLSIM" check "$T/s/o.db" --all

# shards gathered from another node (copied into the folder after the sweep):
# --compact records their runs first, then merges their events
mkdir "$T/g" "$T/n2"
expect 0 "the sweep on rank 0's node" "$DLSIM" sweep $ARGS --db "$T/g/o.db" --jobs 1
expect 0 "the other node's share" "$DLSIM" sweep $ARGS --seed 3 --db "$T/n2/o.db" --jobs 1
cp "$T/n2/o.db.shards/"*-s0.db "$T/g/o.db.shards/"
expect 0 "--compact with a gathered shard" "$DLSIM" sweep --compact "$T/g/o.db"
grep -q "the events of 16 runs moved in from their shards (and runs" "$T/out" \
	&& [ "$(sqlite3 "$T/g/o.db" "SELECT count(DISTINCT run_id) FROM events")" = 16 ] \
	&& ok "the gathered runs recorded and merged" || { bad "gathered shard"; cat "$T/out"; }
expect 0 "they pass check" "$DLSIM" check "$T/g/o.db" --all

# --compact removes only what the sweep wrote in the shards folder
echo keep >"$T/s/o.db.shards/notes.txt"
expect 2 "a foreign file in the shards folder: --compact refuses" "$DLSIM" sweep --compact "$T/s/o.db"
rm "$T/s/o.db.shards/notes.txt"
expect 2 "--compact of a missing database" "$DLSIM" sweep --compact "$T/nothing.db"
[ ! -e "$T/nothing.db" ] && ok "nothing created" || bad "--compact created a database"
expect 2 "--compact without a database" "$DLSIM" sweep --compact
finish cli_sweep_shards
