#!/bin/sh
# Output that says why: a probe whose makespan is mostly device_pm_move_to_tail()
# before deferred retries (des.c charges one device_reorder_to_tail() call per
# path below the retried device) says so after `dlsim run`'s table, with the
# walks, calls and time that --json reports (reorder_*); nothing is said when
# the walk costs nothing, and threads mode (which does not charge it) reports null;
# kernel mode reports the walks and time it measured.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
export DLSIM_WAKEUP_NS=0

# c waits for s and has a diamond below it: device_reorder_to_tail(c) makes
# 1 + 2 + 2 = 5 calls (z twice); x and y 2, z 1, s 6 (tests/test_engine.c)
diamond() { # FILE COST-OBJECT
	cat >"$1" <<J
{"format":"dlsim-scenario/1","name":"diamond","seed":1,
 "defaults":{"probe":"1ms","async":false},
 "cost":$2,
 "devices":[{"name":"c"},{"name":"x"},{"name":"y"},{"name":"z"},{"name":"s"}],
 "links":[{"consumer":"c","supplier":"s","flags":["AUTOPROBE_CONSUMER"]},
  {"consumer":"x","supplier":"c","flags":["AUTOPROBE_CONSUMER"]},
  {"consumer":"y","supplier":"c","flags":["AUTOPROBE_CONSUMER"]},
  {"consumer":"z","supplier":"x","flags":["AUTOPROBE_CONSUMER"]},
  {"consumer":"z","supplier":"y","flags":["AUTOPROBE_CONSUMER"]}],
 "script":[{"op":"probe"},{"op":"suspend"},{"op":"resume"}]}
J
}
jget() { # JSON-FILE [OP.]KEY...: their values on one line ("null" for null; one python3 a file)
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(" ".join("null" if v is None else str(v) for v in
	((d[k.split(".")[0]] if "." in k else d)[k.split(".")[-1]] for k in sys.argv[2:])))' "$@"
}
WHY="device_pm_move_to_tail() before each of"

diamond "$T/d.json" '{"reorder_visit_ns": "1ms"}'
for o in sync kernel-async; do
	rm -f "$T/d.db"
	expect 0 "$o: run the diamond" "$DLSIM" run "$T/d.json" --order $o --db "$T/d.db"
	cp "$T/out" "$T/table"
	expect 0 "$o: --json" "$DLSIM" run "$T/d.json" --order $o --no-log --json
	cp "$T/out" "$T/j"
	# the walks the log shows: one per deferred retry, priced by the retried device's paths
	walks=$(sqlite3 "$T/d.db" "select count(*) from events where kind = 'deferred_retry'")
	calls=$(sqlite3 "$T/d.db" "select coalesce(sum(case dev_id when 0 then 5 when 1 then 2
		when 2 then 2 when 3 then 1 when 4 then 6 end), 0) from events where kind = 'deferred_retry'")
	ns=$((calls * 1000000 + walks * 1400))
	[ "$walks" -ge 1 ] && ok "$o: $walks deferred retries, $calls calls" || bad "$o: no deferred retry"
	set -- $(jget "$T/j" probe.reorder_walks probe.reorder_calls probe.reorder_ns \
		 probe.reorder_capped reorder_ns suspend.reorder_ns probe.makespan_ns)
	[ "$1" = "$walks" ] && [ "$2" = "$calls" ] && [ "$3" = "$ns" ] && [ "$4" = 0 ] \
		&& ok "$o: --json probe reorder_walks $1, reorder_calls $2, reorder_ns $3" \
		|| bad "$o: --json probe reorder_* $1 $2 $3 $4, the log says $walks $calls $ns 0"
	[ "$5" = "$ns" ] && [ "$6" = 0 ] \
		&& ok "$o: the run's reorder_ns is the probe's" || bad "$o: run/suspend reorder_ns $5 $6"
	mk=$7
	m=$(sqlite3 "$T/d.db" "select cast(value as integer) from metrics where name = 'reorder_ns'")
	[ "$m" = "$ns" ] && ok "$o: metric reorder_ns $m" || bad "$o: metric reorder_ns '$m', expected $ns"
	line=$(awk -v n="$ns" -v m="$mk" \
		'BEGIN { printf "probe: %.3f ms of its %.3f ms (%.1f%%) is ", n / 1e6, m / 1e6, 100 * n / m }')
	grep -qF "$line$WHY $walks deferred retries: $calls device_reorder_to_tail() calls" "$T/table" \
		&& ok "$o: the table says why: $line..." \
		|| { bad "$o: no line '$line$WHY $walks deferred retries: $calls ...'"; cat "$T/table"; }
	grep -q "cost.reorder_ns 1400 + cost.reorder_visit_ns 1000000 a call" "$T/table" \
		&& ok "$o: the line names the cost keys" || bad "$o: cost keys not named"
	grep -q "hit the cap" "$T/table" && bad "$o: no walk hit the cap" || ok "$o: no cap"
	pct=$(awk -v n="$ns" -v m="$mk" 'BEGIN { printf "%.1f%%", 100 * n / m }')
	# explain (from the log: metrics) says it too
	expect 0 "$o: explain" "$DLSIM" explain "$T/d.db"
	e=$(awk -v n="$ns" 'BEGIN { printf "deferred probe: %.3f ms of the run", n / 1e6 }')
	grep -F "$e" "$T/out" | grep -qF "before $walks deferred retries ($calls device_reorder_to_tail() calls" \
		&& ok "$o: explain: $e..." || { bad "$o: explain lacks '$e ... $walks ... $calls'"; cat "$T/out"; }
done

# compare: one line under the op's rows, naming the orders it concerns (levels never defers)
expect 0 "compare" "$DLSIM" compare "$T/d.json" --orders sync,levels --no-log
grep -q "device_pm_move_to_tail() before deferred retries is $pct of sync's makespan" "$T/out" \
	&& ok "compare: $pct of sync's makespan" || { bad "compare: no '$pct of sync's'"; cat "$T/out"; }
grep -q "of levels's" "$T/out" && bad "compare names levels" || ok "compare: not levels"

# 300 s a call: c's and s's walks (5 and 6 calls) cost more than the 1000 s cap
diamond "$T/cap.json" '{"reorder_visit_ns": "300s"}'
expect 0 "capped walks" "$DLSIM" run "$T/cap.json" --order sync --no-log
k=$(sed -n 's/.*; \([0-9,]*\) walks\{0,1\} hit the cap of 1000 s a walk.*/\1/p' "$T/out")
expect 0 "capped walks --json" "$DLSIM" run "$T/cap.json" --order sync --no-log --json
jk=$(jget "$T/out" probe.reorder_capped)
[ -n "$k" ] && [ "$k" = "$jk" ] && [ "$jk" -ge 1 ] && ok "$k walks hit the cap, as --json says" \
	|| bad "cap: table '$k', --json '$jk'"

# free walks: nothing to explain, though the walks and their calls are still counted
diamond "$T/free.json" '{"reorder_ns": 0, "reorder_visit_ns": 0}'
expect 0 "free walks" "$DLSIM" run "$T/free.json" --order sync --db "$T/free.db"
grep -q "device_pm_move_to_tail\|cost.reorder" "$T/out" && bad "free walks: the table (or explain) names the walk" \
	|| ok "free walks: the table and explain say nothing of it"
expect 0 "free walks --json" "$DLSIM" run "$T/free.json" --order sync --no-log --json
set -- $(jget "$T/out" probe.reorder_ns probe.reorder_walks)
[ "$1" = 0 ] && [ "$2" -ge 1 ] && ok "free walks: counted, reorder_ns 0" || bad "free walks: $(cat "$T/out")"

# threads mode charges the walk too (run.h dl_op_retry_walk()): the same walks, calls and ns
# as the DES's (sync's retries do not depend on timing here).  Not the table's line: it shows
# where the walks are 10% of the makespan, and a loaded machine stretches a threads run's
# (it went missing under ASan beside other tests)
expect 0 "threads --json" "$DLSIM" run "$T/d.json" --mode threads --time-scale 0.01 --order sync \
	--no-log --json
tw=$(jget "$T/out" probe.reorder_walks probe.reorder_calls probe.reorder_ns probe.reorder_capped)
expect 0 "des --json" "$DLSIM" run "$T/d.json" --order sync --no-log --json
dw=$(jget "$T/out" probe.reorder_walks probe.reorder_calls probe.reorder_ns probe.reorder_capped)
[ "$tw" = "$dw" ] && [ "${tw%% *}" -ge 1 ] && ok "threads: reorder_* as the DES's ($tw)" \
	|| bad "threads: reorder_* '$tw', the DES's '$dw'"

# kernel mode measures the walks (dlsim_kmod's "reorder" records: FLAGS is the guest's ns in
# device_pm_move_to_tail()), not their calls: walks and ns as recorded, calls and cap null
K=$SRC/tests/kernel/default-30-6.12.dump
set -- $(awk '$2 == "reorder" { n++; s += $7 } END { print n + 0, s + 0 }' "$K")
kw=$1 kn=$2
expect 0 "kernel: default-30 dump --json" "$DLSIM" run "$SRC/scenarios/default.json" --set devices=30 \
	--mode kernel --kernel-dump "$K" --no-log --json
[ "$(jget "$T/out" probe.reorder_walks probe.reorder_ns reorder_walks reorder_calls probe.reorder_capped)" \
	= "$kw $kn $kw null null" ] && [ "$kw" -gt 100 ] \
	&& ok "kernel: $kw walks, $kn ns, calls null" || bad "kernel: reorder_* $(cat "$T/out")"
expect 0 "kernel: default-30 table" "$DLSIM" run "$SRC/scenarios/default.json" --set devices=30 \
	--mode kernel --kernel-dump "$K" --no-log
grep -q "device_pm_move_to_tail() before" "$T/out" && bad "kernel: a line for 2.6% of the probe" \
	|| ok "kernel: 2.6% of the probe, no line"
# the same dump with walks 5 times longer: 13% of the probe
awk '$2 == "reorder" { $7 *= 5 } { print }' "$K" >"$T/k5.dump"
expect 0 "kernel: walks x5" "$DLSIM" run "$SRC/scenarios/default.json" --set devices=30 \
	--mode kernel --kernel-dump "$T/k5.dump" --no-log
e=$(awk -v n="$kn" 'BEGIN { printf "probe: %.3f ms of its ", 5 * n / 1e6 }')
grep -F "$e" "$T/out" | grep -qF "before each of $kw deferred retries, in the guest" \
	&& ok "kernel: $e..." || { bad "kernel: no '$e... $kw'"; cat "$T/out"; }
grep -q "cost.reorder" "$T/out" && bad "kernel: names the DES's cost keys" || ok "kernel: no cost keys"

finish cli_reorder
