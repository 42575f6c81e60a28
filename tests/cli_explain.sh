#!/bin/sh
# dlsim explain: chain-bound and CPU-bound phases on scenarios whose answer
# is known by hand, with both figures; critical-path devices with shares;
# refused links with reasons; unbind cascades by name; the account under
# run's and compare's tables and in the report; names are data in HTML;
# bad input exits 2.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

# a consumes b, 10 ms each: suspend is one 20 ms chain on 8 CPUs (callbacks all CPU,
# "cpu": 1: the engine's CPU work, logged per phase, is the callbacks' whole latency)
cat >"$T/chain.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "chain", "defaults": {"suspend": "10ms", "cpu": 1}, "cost": {"cpus": 8},
  "devices": [ {"name": "a"}, {"name": "b"} ], "links": [ {"consumer": "a", "supplier": "b"} ],
  "script": [ {"op": "probe"}, {"op": "suspend"} ] }
J
expect 0 "run chain" "$DLSIM" run "$T/chain.json" --order kernel-async-v2 --db "$T/c.db"
grep -q "^why run 1 took what it took" "$T/out" || { bad "run prints the account under its table"; cat "$T/out"; }
expect 0 "explain chain" "$DLSIM" explain "$T/c.db"
grep -q "^  suspend .*chain-bound (chain 20.0[0-9]* ms >= CPU work/K 2.50[0-9] ms)" "$T/out" || { bad "chain: chain-bound, 20 ms against 2.5"; cat "$T/out"; }
grep -A3 "^  suspend " "$T/out" | grep -q "^    chain  *20.0[0-9]* ms 100%  2 callbacks on workers, each waiting for the one before: a 10.0[0-9]* ms -> b 10.0[0-9]* ms" ||
	{ bad "chain: the chain a -> b sets suspend, each 10 ms"; cat "$T/out"; }

# FILE's phases: the parts printed under each add up to its time (within rounding)
shares_add_up() {
	awk 'function check() { if (ph != "" && (sum - span > 0.01 || span - sum > 0.01)) {
			print "parts " sum " ms, phase " span " ms: " ph; bad = 1 } }
	/^  [a-z_]+ +[0-9.]+ ms/ { check(); ph = $1; span = $2; sum = 0; n++; next }
	/^    (main thread|chain|CPU contention|dispatch|waiting to start) / {
		for (i = 1; i <= NF; i++) if ($(i + 1) == "ms") { sum += $i; break } ; next }
	/^[a-z]/ { check(); ph = "" }
	END { check(); exit bad || !n }' "$1"
}
shares_add_up "$T/out" || { bad "chain: the parts add up"; cat "$T/out"; }

# an all-sync board (issue 33): three sync devices one after another set suspend,
# named longest first, with no dependency between them
cat >"$T/sync.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "sync", "defaults": {"suspend": "1ms", "async": false},
  "devices": [ {"name": "p"}, {"name": "q", "suspend": "30ms"}, {"name": "r", "suspend": "20ms"} ],
  "script": [ {"op": "probe"}, {"op": "suspend"} ] }
J
for o in sync kernel-async kernel-async-v2; do
	expect 0 "run sync board, $o" "$DLSIM" run "$T/sync.json" --order $o --db "$T/y-$o.db"
	expect 0 "explain sync board, $o" "$DLSIM" explain "$T/y-$o.db"
	grep -A3 "^  suspend " "$T/out" | grep -q "^    main thread  *5[0-9].[0-9]* ms  *\(9[0-9]\|100\)%  3 callbacks one after another on the main thread, in dpm_list order; longest: q 30.000 ms, r 20.000 ms, p 1.000 ms" ||
		{ bad "sync board, $o: the main thread's serial work sets suspend, q and r named"; cat "$T/out"; }
	grep -q "^suspend: .*; set by: main thread \(9[0-9]\|100\)%" "$T/out" || { bad "sync board, $o: the op line says so"; cat "$T/out"; }
	shares_add_up "$T/out" || { bad "sync board, $o: the parts add up"; cat "$T/out"; }
done

# two independent 10 ms devices on one CPU: CPU-bound, work/K 20 ms against a 10 ms chain
sed -e 's/, "links": \[[^]]*\]//' "$T/chain.json" >"$T/flat.json"
expect 0 "run flat" "$DLSIM" run "$T/flat.json" --order kernel-async-v2 --workers 1 --db "$T/f.db"
expect 0 "explain flat" "$DLSIM" explain "$T/f.db" --run 1
grep -q "^  suspend .*CPU-bound (chain 10.0[0-9]* ms < CPU work/K 20.0[0-9]* ms)" "$T/out" || { bad "flat: CPU-bound"; cat "$T/out"; }
grep -A3 "^  suspend " "$T/out" | grep -q "^    CPU contention  *10.000 ms  50%" || { bad "flat: b waits 10 ms for the one CPU"; cat "$T/out"; }

# FILE's op and phase lines with a bound: none above its makespan
bound_holds() {
	awk 'match($0, /[0-9.]+ ms, bound [0-9.]+ ms/) {
		split(substr($0, RSTART, RLENGTH), w, " ")
		if (w[4] + 0 > w[1] + 0) { print "bound above its makespan: " $0; bad = 1 }
		n++ }
	END { exit bad || !n }' "$1"
}

# the same devices, but callbacks sleep (the default, "cpu": 0): they overlap on one CPU,
# so suspend is chain-bound, its bound the 10 ms chain, not the 20 ms of callback time
sed -e 's/, "cpu": 1//' "$T/flat.json" >"$T/sleep.json"
expect 0 "run sleep" "$DLSIM" run "$T/sleep.json" --order kernel-async-v2 --workers 1 --db "$T/s.db"
expect 0 "explain sleep" "$DLSIM" explain "$T/s.db"
grep -q "^  suspend  *10.0[0-9]* ms, bound 10.000 ms (the chain; CPU share not given: no CPU verdict)" "$T/out" ||
	{ bad "sleep: bound 10 ms, no verdict on a CPU share never given"; cat "$T/out"; }
grep -q "CPU-bound\|chain-bound\|CPU work/K 0.000" "$T/out" && { bad "sleep: no verdict built on an unknown CPU share"; cat "$T/out"; }
bound_holds "$T/out" || { bad "sleep: a bound above its makespan"; cat "$T/out"; }

# 200 devices in module context on one CPU (issue 18's case: probe is 370 ms of
# device_pm_move_to_tail() and sleeping callbacks): every bound below its makespan
expect 0 "run default" "$DLSIM" run "$SRC/scenarios/default.json" --set devices=200 --order kernel-async \
	--workers 1 --probe-context module --db "$T/d.db"
sed -n '/^why run/,$p' "$T/out" >"$T/acct"
grep -q "CPU-bound" "$T/acct" && { bad "default: a callback that sleeps is not CPU work"; cat "$T/acct"; }
bound_holds "$T/acct" || { bad "default: a bound above its makespan"; cat "$T/acct"; }
lb=$(sqlite3 "$T/d.db" "select printf('%.3f', value / 1e6) from metrics where name = 'probe.probe.lower_bound_ns'")
grep -q "^probe: [0-9.]* ms, bound $lb ms (the chain" "$T/acct" || { bad "default: probe's bound is its phase's, the engine's ($lb ms)"; cat "$T/acct"; }

# module context: the module's device_add()s (register_ns a device) come before the probe
# segments; they are in the probe op's bound, not in its phase's, which explain prints
sed -e 's/"cost": {"cpus": 8}/"cost": {"cpus": 8, "register_ns": "50ms"}/' "$T/sleep.json" >"$T/reg.json"
expect 0 "run module" "$DLSIM" run "$T/reg.json" --order kernel-async --probe-context module --db "$T/m.db"
sed -n '/^why run/,$p' "$T/out" >"$T/acct"
grep -q "^probe: .*, bound 0.000 ms" "$T/acct" || { bad "module: probe's phase has no latency"; cat "$T/acct"; }
bound_holds "$T/acct" || { bad "module: the registration is not in the probe phase's bound"; cat "$T/acct"; }
grep -q "^  before it: 100.000 ms of the module's device_add()s" "$T/acct" ||
	{ bad "module: the two 50 ms device_add()s before the probe phase are named"; cat "$T/acct"; }
expect 0 "explain boot context" "$DLSIM" explain "$T/s.db"
grep -q "before it:" "$T/out" && { bad "boot context: no registration time"; cat "$T/out"; }

# no CPU work in the log (an older log, a kernel-mode run): chain and callback time, no verdict
cp "$T/s.db" "$T/old.db"
sqlite3 "$T/old.db" "delete from metrics where name like '%.%.%' or name like '%.work_ns'"
expect 0 "explain an older log" "$DLSIM" explain "$T/old.db"
grep -q "^  suspend  *10.0[0-9]* ms, chain 10.0[0-9]* ms, callbacks 20.0[0-9]* ms (CPU share unknown: no bound)" "$T/out" ||
	{ bad "older log: chain and callbacks, no bound"; cat "$T/out"; }
grep -q ", bound [0-9]\|-bound" "$T/out" && { bad "older log: no bound, no verdict"; cat "$T/out"; }
grep -q "^    \(CPU contention\|dispatch\) " "$T/out" && { bad "older log: no contention or dispatch verdict without a CPU share"; cat "$T/out"; }
shares_add_up "$T/out" || { bad "older log: the parts add up"; cat "$T/out"; }
cp "$T/s.db" "$T/k.db"
sqlite3 "$T/k.db" "update runs set mode = 'kernel'"
expect 0 "explain a kernel run" "$DLSIM" explain "$T/k.db"
grep -q "^suspend: .*(CPU share unknown: no bound)" "$T/out" || { bad "kernel run: no bound"; cat "$T/out"; }
grep -q "\-bound" "$T/out" && { bad "kernel run: no verdict"; cat "$T/out"; }
grep -q "^    \(CPU contention\|dispatch\) " "$T/out" && { bad "kernel run: no contention or dispatch verdict"; cat "$T/out"; }
# a kernel run from its guest's dump (7.3, kernel-async-v2): parts add up, no CPU verdict
expect 0 "run camera from its kernel dump" "$DLSIM" run "$SRC/scenarios/camera.json" --mode kernel --kernel 7.3 \
	--order kernel-async-v2 --kernel-dump "$SRC/tests/kernel/camera-7.3.dump" --db "$T/kd.db"
expect 0 "explain the kernel run" "$DLSIM" explain "$T/kd.db"
shares_add_up "$T/out" || { bad "kernel run: the parts add up"; cat "$T/out"; }
grep -q "^    chain .*sensor" "$T/out" || { bad "kernel run: the chain through the sensor named"; cat "$T/out"; }
grep -q "^    \(CPU contention\|dispatch\) \|-bound" "$T/out" && { bad "kernel run: no verdict on the CPU share"; cat "$T/out"; }

# refused links with their reasons, unbind cascades by name
expect 0 "run flags" "$DLSIM" run "$SRC/scenarios/flags.json" --db "$T/r.db"
expect 0 "explain flags" "$DLSIM" explain "$T/r.db"
grep -q "dev_arc -> clk0: reverse-dependency" "$T/out" || { bad "the refused reverse dependency"; cat "$T/out"; }
expect 0 "run hotplug-unbind" "$DLSIM" run "$SRC/scenarios/hotplug-unbind.json" --db "$T/u.db"
expect 0 "explain hotplug-unbind" "$DLSIM" explain "$T/u.db"
grep -q "unbind reg0 (.*): its consumers first: sound0, codec0" "$T/out" || { bad "the reg0 cascade"; cat "$T/out"; }

# compare: one short account per order
expect 0 "compare" "$DLSIM" compare "$T/chain.json" --orders sync,kernel-async-v2 --db "$T/c.db"
[ "$(grep -c '^why run' "$T/out")" = 2 ] || { bad "compare explains each order"; cat "$T/out"; }

# names are data in the report's section
cat >"$T/html.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "html", "defaults": {"suspend": "1ms"},
  "devices": [ {"name": "<b>x</b>&\"y"} ], "script": [ {"op": "probe"}, {"op": "suspend"} ] }
J
expect 0 "run html" "$DLSIM" run "$T/html.json" --db "$T/h.db"
expect 0 "report html" "$DLSIM" report "$T/h.db" --out "$T/rep"
grep -q 'id="explain"' "$T/rep/index.html" || bad "the report has the explain section"
sed -n '/id="explain"/,/<\/pre>/p' "$T/rep/index.html" | grep -q '&lt;b&gt;x&lt;/b&gt;&amp;&quot;y' ||
	{ bad "the name is escaped in the section"; sed -n '/id="explain"/,/<\/pre>/p' "$T/rep/index.html"; }
sed -n '/id="explain"/,/<\/pre>/p' "$T/rep/index.html" | grep -q '<b>x' && bad "no raw name in the section"

expect 2 "no such run" "$DLSIM" explain "$T/c.db" --run 999
grep -q "no run 999" "$T/err" || bad "says which run is missing"
expect 2 "missing database" "$DLSIM" explain "$T/nonexistent.db"
printf 'not a database' >"$T/bad.db"
expect 2 "not a database" "$DLSIM" explain "$T/bad.db"
expect 2 "bad run id" "$DLSIM" explain "$T/c.db" --run x
expect 2 "no database" "$DLSIM" explain
# a run still 'running' (its writer died) is said, not explained as if whole;
# a database of another program (foreign application_id) is refused (issue 34)
cp "$T/c.db" "$T/r.db"
sqlite3 "$T/r.db" "update runs set status = 'running', events = NULL"
expect 0 "explain a run still running" "$DLSIM" explain "$T/r.db"
grep -q "run [0-9]* is still 'running'" "$T/err" && ok "says the run is still running" || bad "running: $(cat "$T/err")"
cp "$T/c.db" "$T/foreign.db"
sqlite3 "$T/foreign.db" "pragma application_id = 1234"
expect 2 "a foreign application_id" "$DLSIM" explain "$T/foreign.db"
grep -q "not a dlsim database" "$T/err" && ok "says not a dlsim database" || bad "foreign: $(cat "$T/err")"
expect 0 "--help" "$DLSIM" explain --help
finish cli_explain
