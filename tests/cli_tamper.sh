#!/bin/sh
# Every reader against tampered logs (issue 34, "every reader checks the log"):
# a database with two good runs of one scenario; run 2 is tampered in many
# generated ways (each column of each table set out of its range, rows
# deleted, duplicated or added, the runs row made to disagree with its
# events); then check, explain, report and diff each must exit 3 saying
# "corrupt" and print no figure of the run: check and explain write nothing
# on stdout but check's corrupt lines, report writes no file, diff prints
# nothing on stdout.  check must also leave the tampered database as it was.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
command -v sqlite3 >/dev/null || { echo "SKIP: no sqlite3 shell"; exit 77; }

G=$T/good.db
"$DLSIM" run "$SRC/scenarios/flags.json" --db "$G" >/dev/null 2>&1
"$DLSIM" run "$SRC/scenarios/flags.json" --order cp-first --db "$G" >/dev/null 2>&1
sqlite3 "$G" "pragma wal_checkpoint(truncate)" >/dev/null
for v in check explain diff; do
	case $v in diff) set -- diff "$G" 1 2 ;; *) set -- "$v" "$G" ;; esac
	expect 0 "untampered: $v accepts it" "$DLSIM" "$@"
done

# not tampering: a run whose log failed (runs.log_error) keeps its engine's
# metrics but stores only part of its events; it is incomplete, not corrupt
cp "$G" "$T/cut.db"
sqlite3 "$T/cut.db" "delete from events where run_id = 2 and seq >= 300;
	update runs set status = 'failed', log_error = 'disk full (commit: database or disk is full)',
	events = 300 where run_id = 2"
expect 1 "a run whose log failed: incomplete (exit 1)" "$DLSIM" check "$T/cut.db"
grep -q "incomplete" "$T/out" && ! grep -q corrupt "$T/out" && ok "said incomplete, not corrupt" \
	|| bad "cut log: $(cat "$T/out")"
expect 0 "explain of it" "$DLSIM" explain "$T/cut.db"

# not tampering: a hot-plugged device that the script never adds has a devices
# row and no register event; the writer counted it (devices_unregistered)
cat >"$T/hp.json" <<'JSON'
{ "format": "dlsim-scenario/1", "name": "hp", "seed": 1,
  "defaults": {"probe": "1ms", "suspend": "1ms", "resume": "1ms"},
  "devices": [ {"name": "a"}, {"name": "b", "hotplug": true}, {"name": "c", "parent": "a"} ] }
JSON
"$DLSIM" run "$T/hp.json" --db "$T/hp.db" >/dev/null 2>&1
expect 0 "a hot-plugged device never added: not corrupt" "$DLSIM" check "$T/hp.db"

n=0
readers() { # what: run every reader on $T/t.db
	"$DLSIM" check "$T/t.db" >"$T/out" 2>&1
	rc=$?
	if [ "$rc" = 3 ] && grep -q "corrupt log" "$T/out" && ! grep -qv "corrupt log" "$T/out"; then
		ok "check: $1"
	else
		bad "check: $1: exit $rc"; head -3 "$T/out"
	fi
	[ "$(sqlite3 "$T/t.db" .dump | cksum)" = "$sum" ] || bad "check: $1: wrote into the tampered database"
	"$DLSIM" explain "$T/t.db" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" = 3 ] && grep -q "corrupt" "$T/err" && [ ! -s "$T/out" ] && ok "explain: $1" \
		|| { bad "explain: $1: exit $rc"; head -c 300 "$T/out" "$T/err"; }
	"$DLSIM" report "$T/t.db" --out "$T/r" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" = 3 ] && grep -q "corrupt" "$T/err" && [ ! -e "$T/r" ] && ok "report: $1" \
		|| { bad "report: $1: exit $rc"; head -c 300 "$T/out" "$T/err"; }
	rm -rf "$T/r"
	"$DLSIM" diff "$T/t.db" 1 2 >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" = 3 ] && grep -q "corrupt" "$T/err" && [ ! -s "$T/out" ] && ok "diff: $1" \
		|| { bad "diff: $1: exit $rc"; head -c 300 "$T/out" "$T/err"; }
}
tamper() { # what sql
	n=$((n + 1))
	cp "$G" "$T/t.db"
	rm -f "$T/t.db-wal" "$T/t.db-shm"
	sqlite3 "$T/t.db" "$2" || { bad "$1: the tamper itself failed"; return; }
	sum=$(sqlite3 "$T/t.db" .dump | cksum)
	readers "$1"
}

# one column of one event set to each value out of its range
R="run_id = 2"
LINK="$R and seq = (select min(seq) from events where $R and kind = 'link_add')"
SUSP="$R and seq = (select min(seq) from events where $R and kind = 'suspend_start')"
LAST="$R and seq = (select max(seq) from events where $R)"
for col_vals in "t_ns:-1 4611686018427387905 NULL 'soon' -9223372036854775808 9223372036854775807" \
		"dev_id:-1 99999 NULL 'dev'" "link_id:-1 99999 NULL" "aux:-1 99999 NULL" \
		"kind:'bogus' NULL ''" "worker:-2 40000 'w'" "err:-40000 40000 'e'" \
		"flags:-1 1024 'MANAGED'" "seq:-1 100000 NULL"; do
	col=${col_vals%%:*}
	for val in ${col_vals#*:}; do
		tamper "link_add event: $col = $val" "update events set $col = $val where $LINK"
	done
done
for val in "'hibernate'" NULL "''"; do
	tamper "suspend_start: phase = $val" "update events set phase = $val where $SUSP"
done
tamper "last event: time going back" "update events set t_ns = 0 where $LAST"
tamper "last event: after the makespan" "update events set t_ns = t_ns + 1000 where $LAST"
tamper "an event deleted" "delete from events where $R and seq = 20"
tamper "an event duplicated" "insert into events select * from events where $R and seq = 20"
tamper "an event added at the end" "insert into events(run_id, seq, t_ns, dev_id, kind, worker, err)
	select 2, max(seq) + 1, max(t_ns), 0, 'register', 0, 0 from events where $R"
tamper "probe_start made probe_end" "update events set kind = 'probe_end'
	where $R and seq = (select min(seq) from events where $R and kind = 'probe_start')"

# the runs row
for col_vals in "status:'fine' NULL" "events:events+1 events-1 NULL 'many' -1" \
		"devices:devices+5 -1 'all' 999999999999" \
		"makespan_ns:-1 -9223372036854775808 9223372036854775807 'long' makespan_ns-1" \
		"workers:-1 70000 'k'" "links:-1 1099511627776 'l'"; do
	col=${col_vals%%:*}
	for val in ${col_vals#*:}; do
		tamper "runs.$col = $val" "update runs set $col = $val where $R"
	done
done

# metrics
for val in -1 1e300 NULL "'x'" "value+1"; do
	tamper "metric makespan_ns = $val" "update metrics set value = $val where $R and name = 'makespan_ns'"
done
tamper "metric events = events + 1" "update metrics set value = value + 1 where $R and name = 'events'"
tamper "metric resume.critical_path_ns = -5" "update metrics set value = -5 where $R and name = 'resume.critical_path_ns'"
tamper "metric without a name" "update metrics set name = NULL where $R and name = 'wakeups'"

# devices and links
tamper "device name NULL" "update devices set name = NULL where $R and dev_id = 3"
tamper "device row duplicated" "insert into devices select * from devices where $R and dev_id = 2"
tamper "device row deleted" "delete from devices where $R and dev_id = 4"
tamper "device id -1" "update devices set dev_id = -1 where $R and dev_id = 4"
tamper "parent out of range" "update devices set parent_id = 123456 where $R and dev_id = 1"
tamper "parent is itself" "update devices set parent_id = dev_id where $R and dev_id = 1"
for val in "'BOGUS'" "'MANAGED|'" "'MANAGED||PM_RUNTIME'" "'managed'"; do
	tamper "link flags = $val" "update links set flags = $val where $R and link_id = 1"
done
tamper "link consumer out of range" "update links set consumer_id = 77777 where $R and link_id = 1"
tamper "link id out of range" "update links set link_id = -4 where $R and link_id = 1"

# the runs row made to agree with damaged events (what a careful tamperer does)
tamper "all events deleted, runs.events = 0" "delete from events where $R;
	update runs set events = 0 where $R; update metrics set value = 0 where $R and name = 'events'"
tamper "200 devices never registered" "with recursive s(i) as (select 0 union all select i + 1 from s where i < 199)
	insert into devices(run_id, dev_id, name, parent_id, async) select 2, 14 + i, 'ghost' || i, NULL, 0 from s;
	update runs set devices = devices + 200 where $R"
tamper "the resume op deleted, seq renumbered" "delete from events where $R and kind like 'resume%';
	create temp table m as select seq from events where $R order by seq;
	update events set seq = (select count(*) from temp.m where temp.m.seq < events.seq) where $R;
	update runs set events = (select count(*) from events where $R) where $R;
	update metrics set value = (select events from runs where $R) where $R and name = 'events'"
tamper "a register event deleted, seq renumbered" "delete from events where $R and kind = 'register' and dev_id = 5;
	create temp table m as select seq from events where $R order by seq;
	update events set seq = (select count(*) from temp.m where temp.m.seq < events.seq) where $R;
	update runs set events = events - 1 where $R; update metrics set value = value - 1 where $R and name = 'events'"

echo "$n tamperings, each read by check, explain, report and diff"
finish cli_tamper
