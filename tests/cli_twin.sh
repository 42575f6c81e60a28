#!/bin/sh
# dlsim twin (issue 31): the replay twin of a logged run, a DES run in which
# every callback lasts what it lasted in the run.  A DES run's twin has the
# run's own scheduling, so its makespans, per op, must be the run's exactly,
# under every order, with the kernel mode's probe context and with unbind and
# bind in the script; a run whose script the log cannot give back is refused.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

# the makespan metrics of run RUN of DB, one line
spans() { # DB RUN
	sqlite3 "$1" "select group_concat(name || '=' || cast(value as integer), ' ') from
		(select name, value from metrics where run_id = $2 and name like '%makespan_ns'
		 order by name)"
}

n=0
for args in "--order sync" "--order kernel-async" "--order kernel-async-v2" \
	    "--order levels --workers 3" "--order kernel-async --probe-context module --workers 1" \
	    "--order kernel-async-v2 --probe-context module --workers 2"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	expect 0 "run ($args)" "$DLSIM" run "$SRC/scenarios/default.json" --set devices=60 \
		--db "$T/a.db" $args
	run=$((2 * n - 1))
	expect 0 "twin of run $run ($args)" "$DLSIM" twin "$T/a.db" $run --json
	id=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['run_id'])" "$T/out")
	[ "$id" = $((run + 1)) ] && ok "--json gives the twin's run_id" || bad "run_id '$id'"
	a=$(spans "$T/a.db" $run) b=$(spans "$T/a.db" $((run + 1)))
	[ -n "$a" ] && [ "$a" = "$b" ] && ok "twin of a DES run: the same makespans ($args)" \
		|| bad "twin makespans differ ($args): '$a' vs '$b'"
	of=$(sqlite3 "$T/a.db" "select twin_of from runs where run_id = $((run + 1))")
	[ "$of" = $run ] && ok "runs.twin_of names the run" || bad "twin_of '$of'"
done
# a kernel run's path (no boot here: run 9, module context on one CPU, relabelled as
# --mode kernel logs it): probe context module whatever the row says, guest profile by default
cp "$T/a.db" "$T/k.db"
sqlite3 "$T/k.db" "update runs set mode = 'kernel', probe_context = NULL where run_id = 9"
expect 0 "twin of a kernel run, hardware profile" "$DLSIM" twin "$T/k.db" 9 --profile hardware --json
id=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['run_id'])" "$T/out")
a=$(spans "$T/k.db" 9) b=$(spans "$T/k.db" "$id")
[ -n "$a" ] && [ "$a" = "$b" ] && ok "kernel run's twin: module context, the same makespans" \
	|| bad "kernel twin: '$a' vs '$b'"
expect 0 "twin of a kernel run, its default profile" "$DLSIM" twin "$T/k.db" 9 --json
g=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['makespan_ns'])" "$T/out")
h=$(sqlite3 "$T/k.db" "select makespan_ns from runs where run_id = 9")
[ "$g" -gt "$h" ] && ok "a kernel run's twin gets the guest profile by default" || bad "$g vs $h"

expect 0 "check every run and twin" "$DLSIM" check "$T/a.db" --all
expect 0 "diff a run and its twin" "$DLSIM" diff "$T/a.db" 1 2
grep -q "(100.00%)" "$T/out" && ok "diff: every pair ordered the same way" \
	|| bad "diff of a run and its twin: $(tail -3 "$T/out")"

# unbind and bind in the script (camera.json), into another database
expect 0 "run camera" "$DLSIM" run "$SRC/scenarios/camera.json" --db "$T/c.db"
expect 0 "twin of camera into another database" "$DLSIM" twin "$T/c.db" 1 --db "$T/t.db"
a=$(spans "$T/c.db" 1) b=$(spans "$T/t.db" 1)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "twin with unbind and bind: the same makespans" \
	|| bad "camera twin: '$a' vs '$b'"
grep -q "unbind" "$T/out" && ok "the rebuilt script has the unbind" || bad "$(cat "$T/out")"

# a generated board (sdm845-mtp.json): SYNC_STATE_ONLY links deleted as their consumers bind
expect 0 "run sdm845-mtp" "$DLSIM" run "$SRC/scenarios/sdm845-mtp.json" --db "$T/s.db"
expect 0 "twin of sdm845-mtp" "$DLSIM" twin "$T/s.db" 1
a=$(spans "$T/s.db" 1) b=$(spans "$T/s.db" 2)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "twin of a run whose probe deletes links: the same makespans" \
	|| bad "sdm845-mtp twin: '$a' vs '$b'"

# the failures a run logged are the twin's faults: a probe returning EPROBE_DEFER once, a
# suspend that fails and rolls back, the empty resume after it and a second cycle
for f in faults unbind-fault; do
	expect 1 "run $f (an injected fault fails an op)" "$DLSIM" run "$SRC/scenarios/$f.json" \
		--db "$T/f-$f.db"
	expect 1 "twin of $f fails the same way" "$DLSIM" twin "$T/f-$f.db" 1
	a=$(spans "$T/f-$f.db" 1) b=$(spans "$T/f-$f.db" 2)
	[ -n "$a" ] && [ "$a" = "$b" ] && ok "twin of $f: the same makespans" \
		|| bad "$f twin: '$a' vs '$b'"
done

# the cost profiles (sim/engine/cost.c): guest, the TCG guest's dispatch costs, on a twin and a run
expect 0 "twin with --profile guest" "$DLSIM" twin "$T/a.db" 3 --profile guest --json
g=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['makespan_ns'])" "$T/out")
h=$(sqlite3 "$T/a.db" "select makespan_ns from runs where run_id = 3")
[ "$g" -gt "$h" ] && ok "the guest's dispatch costs lengthen the twin ($h -> $g ns)" \
	|| bad "guest twin $g ns, run $h ns"
# the guest profile's sleep_end_ns (15 us) ends every sleeping callback late; the log holds
# that already, so the twin of a guest-profile run, guest profile too, has its makespans
# (counted twice, each of the 60 devices' prepare, late, noirq, complete... took 15 us more)
expect 0 "run --profile guest, module context" "$DLSIM" run "$SRC/scenarios/default.json" \
	--set devices=60 --order sync --workers 1 --probe-context module --profile guest --db "$T/g.db"
expect 0 "its twin, --profile guest" "$DLSIM" twin "$T/g.db" 1 --profile guest --json
a=$(spans "$T/g.db" 1) b=$(spans "$T/g.db" 2)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "a replayed callback's sleep is not ended late twice" \
	|| bad "guest twin makespans: '$a' vs '$b'"
expect 0 "run --profile guest" "$DLSIM" run "$SRC/scenarios/camera.json" --profile guest --no-log
expect 2 "run --profile with an unknown name" "$DLSIM" run "$SRC/scenarios/camera.json" \
	--profile tcg --no-log
expect 2 "twin --profile with an unknown name" "$DLSIM" twin "$T/a.db" 1 --profile tcg

# what the log cannot give back, and bad input
expect 0 "run runtime-pm" "$DLSIM" run "$SRC/scenarios/runtime-pm.json" --db "$T/r.db"
expect 2 "twin of a run with rpm_get" "$DLSIM" twin "$T/r.db" 1
grep -q "rpm_get" "$T/err" && ok "the refusal names the op" || bad "$(cat "$T/err")"
[ "$(sqlite3 "$T/r.db" "select count(*) from runs")" = 1 ] && ok "nothing logged" \
	|| bad "a refused twin logged a run"
expect 0 "run hotplug-unbind" "$DLSIM" run "$SRC/scenarios/hotplug-unbind.json" --db "$T/h.db"
expect 2 "twin of a run with add, link_add, link_del, remove" "$DLSIM" twin "$T/h.db" 1
grep -q "op add" "$T/err" && ok "the refusal names the first such op" || bad "$(cat "$T/err")"
expect 2 "no such run" "$DLSIM" twin "$T/a.db" 99
# The twin's run and its mark (runs.twin_of, metric twin_of) are one
# transaction: killed once the twin's run is committed (test hook
# twin-recorded), the database holds the twin marked as one, or no twin.  It
# used to hold an 'ok' run naming no run it twins.
if have_test_hooks; then
	rm -f "$T/k.db"
	expect 0 "run to twin, then kill" "$DLSIM" run "$SRC/scenarios/default.json" --set devices=60 --db "$T/k.db"
	DLSIM_TEST_HOOK=twin-recorded:kill "$DLSIM" twin "$T/k.db" 1 >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" = 137 ] && grep -q "test hook twin-recorded:kill" "$T/err" \
		&& ok "twin killed once its run was committed" || bad "twin: exit $rc, $(cat "$T/err")"
	n=$(sqlite3 "$T/k.db" "select count(*) from runs where run_id > 1")
	m=$(sqlite3 "$T/k.db" "select count(*) from runs r join metrics m on m.run_id = r.run_id
		and m.name = 'twin_of' and m.value = 1 where r.run_id > 1 and r.twin_of = 1" 2>&1)
	[ "$n" = 1 ] && [ "$m" = 1 ] && ok "the killed twin's run is marked a twin of run 1" \
		|| bad "killed twin: $n runs after run 1, $m marked"
	expect 0 "check --all after the kill" "$DLSIM" check "$T/k.db" --all
fi
expect 2 "not a run id" "$DLSIM" twin "$T/a.db" x
expect 2 "no database" "$DLSIM" twin "$T/none.db" 1
expect 0 "--help" "$DLSIM" twin --help
grep -q "usage: dlsim twin DB RUN" "$T/out" && ok "usage" || bad "usage"
finish cli_twin
