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
# "cpu": 1: explain reads work from the logged callback times, the log has no CPU share)
cat >"$T/chain.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "chain", "defaults": {"suspend": "10ms", "cpu": 1}, "cost": {"cpus": 8},
  "devices": [ {"name": "a"}, {"name": "b"} ], "links": [ {"consumer": "a", "supplier": "b"} ],
  "script": [ {"op": "probe"}, {"op": "suspend"} ] }
J
expect 0 "run chain" "$DLSIM" run "$T/chain.json" --order kernel-async-v2 --db "$T/c.db"
grep -q "^why run 1 took what it took" "$T/out" || { bad "run prints the account under its table"; cat "$T/out"; }
expect 0 "explain chain" "$DLSIM" explain "$T/c.db"
grep -q "^  suspend .*chain-bound (chain 20.0[0-9]* ms >= work/K 2.50[0-9] ms)" "$T/out" || { bad "chain: chain-bound, 20 ms against 2.5"; cat "$T/out"; }
grep -A1 "^  suspend " "$T/out" | grep -q "critical path: [ab] 50%, [ab] 50%" || { bad "chain: a and b share the path"; cat "$T/out"; }

# two independent 10 ms devices on one CPU: CPU-bound, work/K 20 ms against a 10 ms chain
sed -e 's/, "links": \[[^]]*\]//' "$T/chain.json" >"$T/flat.json"
expect 0 "run flat" "$DLSIM" run "$T/flat.json" --order kernel-async-v2 --workers 1 --db "$T/f.db"
expect 0 "explain flat" "$DLSIM" explain "$T/f.db" --run 1
grep -q "^  suspend .*CPU-bound (chain 10.0[0-9]* ms < work/K 20.0[0-9]* ms)" "$T/out" || { bad "flat: CPU-bound"; cat "$T/out"; }

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
expect 0 "--help" "$DLSIM" explain --help
finish cli_explain
