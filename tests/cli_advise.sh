#!/bin/sh
# dlsim advise: single changes re-simulated and ranked by makespan saved, on
# scenarios whose answer is known by hand; the unsafe link drop is marked;
# --json, --top, --by; bad input exits 2.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

# two sync devices of 10 ms each on the main thread: making one async saves
# 10 ms of suspend, halving one saves 5 ms, more CPUs save nothing
cat >"$T/two.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "two", "cost": {"cpus": 2},
  "defaults": {"suspend": "10ms", "async": false},
  "devices": [ {"name": "a"}, {"name": "b"} ], "script": [ {"op": "probe"}, {"op": "suspend"} ] }
J
expect 0 "advise two" "$DLSIM" advise "$T/two.json" --order kernel-async-v2 --json
python3 - "$T/out" <<'PY' || { bad "two: the ranking"; cat "$T/out"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["resimulations"] == 1 + 2 + 2 + 4 + 1, d["resimulations"]   # base, async x2, halve x2, orders, cpus
c = {x["change"]: x for x in d["changes"]}
top = d["changes"][0]
assert 9.9e6 <= top["saved_ns"]["suspend"] <= 10.1e6, top
assert 4.9e6 <= c["halve a's latencies"]["saved_ns"]["suspend"] <= 5.1e6, c["halve a's latencies"]
assert abs(c["4 CPUs"]["saved_ns"]["suspend"]) < 1e5, c["4 CPUs"]
assert 9.9e6 <= c["make a async"]["saved_ns"]["suspend"] <= 10.1e6
assert not any(x["unsafe"] for x in d["changes"])
PY

# a chain b -> a (a consumes b): dropping the link lets both suspend at once
cat >"$T/chain.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "chain", "defaults": {"suspend": "10ms"},
  "devices": [ {"name": "a"}, {"name": "b"} ], "links": [ {"consumer": "a", "supplier": "b"} ],
  "script": [ {"op": "probe"}, {"op": "suspend"} ] }
J
expect 0 "advise chain" "$DLSIM" advise "$T/chain.json"
grep -q "^   1  drop link b -> a (UNSAFE)" "$T/out" || { bad "chain: the link drop ranks first, marked UNSAFE"; cat "$T/out"; }
grep -q "^UNSAFE: dropping a link" "$T/out" || bad "chain: the table explains UNSAFE"
grep -q "re-simulations in" "$T/out" || bad "the count of re-simulations is printed"
expect 0 "--top 2" "$DLSIM" advise "$T/chain.json" --top 2
[ "$(grep -c '^ *[0-9]  ' "$T/out")" = 2 ] || { bad "--top 2 prints 2 rows"; cat "$T/out"; }
expect 0 "--by suspend" "$DLSIM" advise "$SRC/scenarios/soc-small.json" --by suspend --top 3
# by total the resume's savings are not in order on soc-small; --by resume puts them in order
expect 0 "--json by total" "$DLSIM" advise "$SRC/scenarios/soc-small.json" --json
cp "$T/out" "$T/total.json"
expect 0 "--by resume --json" "$DLSIM" advise "$SRC/scenarios/soc-small.json" --by resume --json
python3 -c "
import json, sys
col = lambda f: [x['saved_ns']['resume'] for x in json.load(open(f))['changes']]
t, r = col(sys.argv[1]), col(sys.argv[2])
sys.exit(0 if t != sorted(t, reverse=True) and len(r) > 2 and r == sorted(r, reverse=True) else 1)
" "$T/total.json" "$T/out" || bad "--by resume ranks by the resume's savings"
expect 0 "advise on soc-small" "$DLSIM" advise "$SRC/scenarios/soc-small.json" --json
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$T/out" || bad "--json parses"
# --db keeps the ranking; the report of that database shows it for the run's scenario
expect 0 "--db" "$DLSIM" advise "$T/chain.json" --top 5 --db "$T/a.db"
expect 0 "a run of chain" "$DLSIM" run "$T/chain.json" --db "$T/a.db"
expect 0 "report" "$DLSIM" report "$T/a.db" --out "$T/rep"
grep -q 'id="advice"' "$T/rep/index.html" || bad "the report has the advice section"
grep -q '<td>drop link b -&gt; a (UNSAFE)</td>' "$T/rep/index.html" || { bad "the ranking is in the report, escaped"; grep -A12 'id="advice"' "$T/rep/index.html"; }
[ "$(sqlite3 "$T/a.db" "select count(distinct rank) from advice")" = 5 ] || bad "--top 5 keeps 5 changes"
printf 'not a database' >"$T/bad.db"
expect 2 "--db on a file that is not a dlsim database" "$DLSIM" advise "$T/chain.json" --db "$T/bad.db"
[ "$(cat "$T/bad.db")" = "not a database" ] || bad "that file is left untouched"
expect 2 "--by an op not in the script" "$DLSIM" advise "$T/chain.json" --by resume
expect 2 "unknown order" "$DLSIM" advise "$T/chain.json" --order nope
expect 2 "missing scenario" "$DLSIM" advise "$T/nonexistent.json"
expect 2 "no scenario" "$DLSIM" advise
expect 0 "--help" "$DLSIM" advise --help
finish cli_advise
