#!/bin/sh
# check and report against tampered logs (issue "Nothing lost, nothing trusted
# blindly"): each tamper of a good log is reported as a corrupt log (exit 3),
# never as a violation of an invariant and never as ok; report refuses to draw
# it (exit 3).  A legal but unusual log (a parent with a larger id than any
# seen so far: the old use-after-free) is checked without a crash.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

"$DLSIM" run "$SRC/scenarios/flags.json" --db "$T/good.db" >/dev/null 2>&1
"$DLSIM" check "$T/good.db" >"$T/out" 2>&1 && ok "the untampered log passes" || { bad "good log"; cat "$T/out"; }

n=0
tamper() { # what sql
	n=$((n + 1))
	cp "$T/good.db" "$T/t$n.db"
	sqlite3 "$T/t$n.db" "$2" || { bad "$1: the tamper itself failed"; return; }
	"$DLSIM" check "$T/t$n.db" >"$T/out" 2>&1
	rc=$?
	if [ "$rc" = 3 ] && grep -q "corrupt log" "$T/out" && ! grep -q "invariant [0-9]" "$T/out"; then
		ok "check: $1 -> corrupt"
	else
		bad "check: $1: exit $rc"; head -3 "$T/out"
	fi
	"$DLSIM" report "$T/t$n.db" --out "$T/r$n" >"$T/out" 2>&1
	rc=$?
	[ "$rc" = 3 ] && grep -q "corrupt log" "$T/out" && [ ! -e "$T/r$n/index.html" ] \
		&& ok "report: $1 -> refused" || { bad "report: $1: exit $rc"; head -3 "$T/out"; }
}
FIRST_PROBE="(select min(seq) from events where kind = 'probe_start')"
tamper "negative time" "update events set t_ns = -5 where seq = 40"
tamper "t = INT64_MAX" "update events set t_ns = 9223372036854775807 where seq = 40"
tamper "t = INT64_MIN on the last event" "update events set t_ns = -9223372036854775808 where seq = (select max(seq) from events)"
tamper "t_ns as text" "update events set t_ns = 'soon' where seq = 3"
tamper "t_ns NULL" "update events set t_ns = NULL where seq = 3"
tamper "a device's time going back" "update events set t_ns = 0 where seq = (select max(seq) from events where kind = 'resume_end')"
tamper "probe_start rewritten as probe_end" "update events set kind = 'probe_end' where seq = $FIRST_PROBE"
tamper "unknown kind" "update events set kind = 'probe_strat' where seq = 5"
tamper "kind NULL" "update events set kind = NULL where seq = 5"
tamper "unknown phase" "update events set phase = 'hibernate' where seq = (select min(seq) from events where kind = 'suspend_start')"
tamper "unknown link state" "update events set phase = 'limbo' where seq = (select min(seq) from events where kind = 'link_state')"
tamper "dev_id out of range" "update events set dev_id = 99999 where seq = 7"
tamper "dev_id negative" "update events set dev_id = -1 where seq = 7"
tamper "dev_id NULL" "update events set dev_id = NULL where seq = 7"
tamper "link_id out of range" "update events set link_id = 4000000 where seq = (select min(seq) from events where kind = 'link_add')"
tamper "supplier out of range" "update events set aux = -3 where seq = (select min(seq) from events where kind = 'link_add')"
tamper "NULL name" "update devices set name = NULL where dev_id = 3"
tamper "duplicated device row" "insert into devices select * from devices where dev_id = 2"
tamper "deleted device row" "delete from devices where dev_id = 4"
tamper "parent out of range" "update devices set parent_id = 123456 where dev_id = 1"
tamper "parent is itself" "update devices set parent_id = dev_id where dev_id = 1"
tamper "duplicate seq" "update events set seq = 9 where seq = 10"
tamper "deleted event" "delete from events where seq = 11"
tamper "events count" "update runs set events = events + 1"
tamper "devices count" "update runs set devices = devices + 5"
tamper "status unknown" "update runs set status = 'fine'"
tamper "links row out of range" "update links set consumer_id = 77777 where link_id = (select min(link_id) from links)"

# the reproducer of the old heap use-after-free (set_parent): a device whose
# parent has a larger id than any seen so far -- legal, so checked, no crash
cp "$T/good.db" "$T/uaf.db"
sqlite3 "$T/uaf.db" "update devices set parent_id = (select max(dev_id) from devices) where dev_id = 0"
"$DLSIM" check "$T/uaf.db" >"$T/out" 2>&1
rc=$?
[ "$rc" -le 1 ] && ok "a parent with a larger id: checked (exit $rc), no crash" || { bad "uaf reproducer: exit $rc"; tail -5 "$T/out"; }

finish cli_corrupt
