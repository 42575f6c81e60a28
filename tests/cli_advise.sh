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
assert d["resimulations"] == 1 + 2 + 1 + 2, d["resimulations"]   # base, async x2, all async, halve x2
c = {x["change"]: x for x in d["changes"]}
top = d["changes"][0]
assert 9.9e6 <= top["saved_ns"]["suspend"] <= 10.1e6, top
assert 4.9e6 <= c["halve a's latencies"]["saved_ns"]["suspend"] <= 5.1e6, c["halve a's latencies"]
assert 9.9e6 <= c["make a async"]["saved_ns"]["suspend"] <= 10.1e6
assert 9.9e6 <= c["make every device async (2 sync now)"]["saved_ns"]["suspend"] <= 10.1e6
assert not any(x["unsafe"] or x["research"] for x in d["changes"])
assert not any(x["kind"] in ("order", "cpus") for x in d["changes"]), "no research change by default"
PY
# --research adds what no kernel offers: other orders, twice the CPUs
expect 0 "advise two --research" "$DLSIM" advise "$T/two.json" --order kernel-async-v2 --research --json
python3 - "$T/out" <<'PY' || { bad "two --research: orders and CPUs, marked"; cat "$T/out"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["resimulations"] == 6 + 2 + 1, d["resimulations"]       # + levels, cp-first, 4 CPUs
c = {x["change"]: x for x in d["changes"]}
assert abs(c["4 CPUs (research: another machine)"]["saved_ns"]["suspend"]) < 1e5
assert c["order levels (research: no kernel has it)"]["research"]
assert sum(x["research"] for x in d["changes"]) == 3
PY

# the baseline is the scenario's own: kernel-async (run's default) and its flags; a
# classic kernel can be upgraded
expect 0 "advise two, its own order" "$DLSIM" advise "$T/two.json" --json
python3 - "$T/out" <<'PY' || { bad "two: the baseline is kernel-async, the upgrade a change"; cat "$T/out"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["order"] == "kernel-async" and d["order_from"] == "run's default", d["order"]
assert d["workers"] == 2
assert any(x["kind"] == "upgrade" and x["to_order"] == "kernel-async-v2" for x in d["changes"])
PY

# a sync parent and its child (issue 33): the child waits for its parent, which the main
# thread reaches late; neither alone helps, the pair saves the child's 100 ms less x1, x2
cat >"$T/pair.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "pair", "cost": {"cpus": 4}, "defaults": {"async": false},
  "devices": [ {"name": "x1", "resume": "20ms"}, {"name": "x2", "resume": "20ms"},
    {"name": "usb", "resume": "1ms"}, {"name": "dwc3", "parent": "usb", "resume": "100ms"} ],
  "script": [ {"op": "probe"}, {"op": "suspend"}, {"op": "resume"} ] }
J
expect 0 "advise pair" "$DLSIM" advise "$T/pair.json" --json --top 0
python3 - "$T/out" <<'PY' || { bad "pair: dwc3 and usb together"; cat "$T/out"; }
import json, sys
d = json.load(open(sys.argv[1]))
c = {x["change"]: x for x in d["changes"]}
assert c["make dwc3 async"]["total_saved_ns"] < 1e6, c["make dwc3 async"]
assert c["make usb async"]["total_saved_ns"] < 1.5e6, c["make usb async"]
p = c["make dwc3 and its parent usb async"]
assert p["kind"] == "async_pair" and p["devices"] == ["dwc3", "usb"], p
assert p["saved_ns"]["resume"] > 35e6, p
PY

# a chain of three sync devices g <- u <- d: no single change and no pair helps, the chain does
sed -e 's/{"name": "usb", "resume": "1ms"}, {"name": "dwc3", "parent": "usb", "resume": "100ms"}/{"name": "g", "resume": "1ms"}, {"name": "u", "parent": "g", "resume": "1ms"}, {"name": "d", "parent": "u", "resume": "100ms"}/' \
	"$T/pair.json" >"$T/chain3.json"
expect 0 "advise chain3" "$DLSIM" advise "$T/chain3.json" --json --top 0
python3 - "$T/out" <<'PY' || { bad "chain3: d, u and g together"; cat "$T/out"; }
import json, sys
d = json.load(open(sys.argv[1]))
c = {x["change"]: x for x in d["changes"]}
assert c["make d and its parent u async"]["total_saved_ns"] < 1e6
p = c["make the chain d, u, g async"]
assert p["kind"] == "async_chain" and p["devices"] == ["d", "u", "g"], p
assert p["saved_ns"]["resume"] > 35e6, p
PY

# a log's scenario (x-log, as import-log writes it) whose devices all ran on the main
# thread: the baseline is sync, every device without a flag sync, K not given
cat >"$T/log.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "log", "x-log": {"cycles": []},
  "devices": [ {"name": "a", "suspend": "10ms"}, {"name": "b", "suspend": "10ms"},
    {"name": "c", "parent": "b", "suspend": "1ms"} ],
  "script": [ {"op": "probe"}, {"op": "suspend"} ] }
J
expect 0 "advise a sync log" "$DLSIM" advise "$T/log.json"
grep -q "^log under sync (the log's: no device ran async), every device sync, simulated as kernel-async with none async on 8 CPUs (not given" "$T/out" ||
	{ bad "sync log: the baseline is the log's"; cat "$T/out"; }
grep -q "suspend 21.0[0-9]* ms" "$T/out" || { bad "sync log: the baseline runs a, b, c one after another"; cat "$T/out"; }
grep -q "^   1  make \(a\|b\|every device\) .*async" "$T/out" || { bad "sync log: an async change first"; cat "$T/out"; }
expect 0 "advise a log, defaults.async=true" "$DLSIM" advise "$T/log.json" --set defaults.async=true --json
python3 -c "import json,sys; d = json.load(open(sys.argv[1])); sys.exit(d['order'] != 'kernel-async')" "$T/out" ||
	{ bad "a log with defaults.async=true: devices run async"; cat "$T/out"; }

# full names: two devices whose names differ after 60 characters read differently
long=$(printf 'x%.0s' $(seq 60))
sed -e "s/\"a\"/\"${long}-first\"/; s/\"b\"/\"${long}-second\"/" "$T/two.json" >"$T/long.json"
expect 0 "advise long names" "$DLSIM" advise "$T/long.json" --order kernel-async-v2
grep -q "make ${long}-first async " "$T/out" && grep -q "make ${long}-second async " "$T/out" ||
	{ bad "long names are printed whole"; cat "$T/out"; }

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
expect 0 "--db" "$DLSIM" advise "$T/chain.json" --top 3 --db "$T/a.db"
expect 0 "a run of chain" "$DLSIM" run "$T/chain.json" --db "$T/a.db"
expect 0 "report" "$DLSIM" report "$T/a.db" --out "$T/rep"
grep -q 'id="advice"' "$T/rep/index.html" || bad "the report has the advice section"
grep -q '<td>drop link b -&gt; a (UNSAFE)</td>' "$T/rep/index.html" || { bad "the ranking is in the report, escaped"; grep -A12 'id="advice"' "$T/rep/index.html"; }
[ "$(sqlite3 "$T/a.db" "select count(distinct rank) from advice")" = 3 ] || bad "--top 3 keeps 3 changes"
printf 'not a database' >"$T/bad.db"
expect 2 "--db on a file that is not a dlsim database" "$DLSIM" advise "$T/chain.json" --db "$T/bad.db"
[ "$(cat "$T/bad.db")" = "not a database" ] || bad "that file is left untouched"
expect 2 "--by an op not in the script" "$DLSIM" advise "$T/chain.json" --by resume
expect 2 "unknown order" "$DLSIM" advise "$T/chain.json" --order nope
expect 2 "missing scenario" "$DLSIM" advise "$T/nonexistent.json"
expect 2 "no scenario" "$DLSIM" advise
expect 0 "--help" "$DLSIM" advise --help

# Virtual time past 2^62 ns (the walk before each deferred retry does it at
# scale: every kernel order of default.json at 50,000 devices).  The run every
# change is measured on: exit 2 saying so and what leaves the walk out (it said
# "the engine refused the scenario (Value too large for defined data type)").
# One change's run: that change fails and ranks last, the advice stands (the
# whole advice used to end so).  Two sync devices whose suspend ends 23.6 us
# before 2^62 ns on one CPU; "make a async" adds 21 us of dispatch.
sed 's/"suspend": "10ms"/"suspend": "2305843009213680000ns"/' "$T/two.json" >"$T/edge.json"
expect 0 "advise: one change's run passes 2^62 ns" "$DLSIM" advise "$T/edge.json" --workers 1 --json
python3 - "$T/out" <<'PY' || { bad "that change fails, ranked last, the others stand"; cat "$T/out"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["baseline_makespan_ns"]["suspend"] < 2**62, d["baseline_makespan_ns"]
failed = [x["change"] for x in d["changes"] if x["status"] == "failed"]
assert failed == ["make a async"], failed
assert d["changes"][-1]["change"] == "make a async", d["changes"][-1]
assert d["changes"][-1]["why"] == "its run passed 2^62 ns of virtual time", d["changes"][-1]
assert sum(x["status"] == "ok" for x in d["changes"]) >= 4, d["changes"]
PY
expect 0 "advise: one change's run passes 2^62 ns, the table" "$DLSIM" advise "$T/edge.json" --workers 1
grep -Eq '^ +6  make a async +- +- +failed$' "$T/out" && grep -q '^-: its run passed 2^62 ns' "$T/out" &&
	ok "the table: no figures for it, and why" || { bad "the table: no figures for it, and why"; cat "$T/out"; }
# --by an op: no figure to rank it by, still last
expect 0 "advise --by suspend: that change" "$DLSIM" advise "$T/edge.json" --workers 1 --by suspend --json
python3 - "$T/out" <<'PY' || { bad "--by: the overflowed change last, its figures null"; cat "$T/out"; }
import json, sys
d = json.load(open(sys.argv[1]))
last = d["changes"][-1]
assert last["change"] == "make a async", last
assert last["saved_ns"]["suspend"] is None and last["total_saved_ns"] is None, last
PY
# a baseline past 2^62 ns by its latencies: said so, not blamed on the walk
sed 's/"suspend": "10ms"/"suspend": "3000000000000000000ns"/' "$T/two.json" >"$T/over.json"
expect 2 "advise: a latency takes the baseline past 2^62 ns" "$DLSIM" advise "$T/over.json"
grep -q "passed 2^62 ns of virtual time: a latency is too large" "$T/err" &&
	! grep -q "device_pm_move_to_tail" "$T/err" && ok "a latency: said so" ||
	{ bad "a latency past 2^62 ns: said so"; cat "$T/err"; }
expect 2 "advise: the baseline passes 2^62 ns" "$DLSIM" advise "$SRC/scenarios/default.json" \
	--set devices=50000 --order sync
grep -q "the run under sync, on which every change is measured, passed 2^62 ns of virtual time" \
	"$T/err" && grep -q "device_pm_move_to_tail()" "$T/err" && grep -q -- "--order cp-first" "$T/err" ||
	{ bad "the baseline's overflow: said so, and what leaves the walk out"; cat "$T/err"; }

# --jobs N: the changes run on N threads, a working copy each; the advice is the same as
# on one, row for row (the ranking is a total order, and a stage's runs decide the next
# stage's candidates whatever order they end in).  Every kind on the first scenario
# (singles, pairs, chains, subtrees, every, halves, upgrade, links, research); the
# second, a real board (sdm845), has sync parent chains.
same_jobs() { # name args...: --jobs 1 against --jobs 2 and 3
	name=$1; shift
	for j in 1 2 3; do
		expect 0 "$name --jobs $j" "$DLSIM" advise "$@" --json --top 0 --jobs $j
		cp "$T/out" "$T/jobs$j.json"
	done
	python3 - "$T/jobs1.json" "$T/jobs2.json" "$T/jobs3.json" <<'PY2' || bad "$name: --jobs 2 and 3 give what --jobs 1 gives"
import json, sys
def load(f):
    d = json.load(open(f))
    d.pop("wall_ns")
    return d
one = load(sys.argv[1])
kinds = {c["kind"] for c in one["changes"]}
assert {"async", "async_pair", "async_chain", "async_subtree", "halve", "drop_link"} <= kinds, kinds
for f in sys.argv[2:]:
    other = load(f)
    assert other["resimulations"] == one["resimulations"], (f, other["resimulations"], one["resimulations"])
    assert len(other["changes"]) == len(one["changes"]), (f, len(other["changes"]), len(one["changes"]))
    for a, b in zip(one["changes"], other["changes"]):
        assert a == b, (f, a, b)
    assert other == one, f
PY2
}
same_jobs "default.json, 150 sync devices, --research" "$SRC/scenarios/default.json" \
	--set devices=150 --set defaults.async=false --research
same_jobs "sdm845-mtp" "$SRC/scenarios/sdm845-mtp.json"
expect 2 "--jobs 0" "$DLSIM" advise "$T/two.json" --jobs 0
expect 2 "--jobs past 256" "$DLSIM" advise "$T/two.json" --jobs 257

# Ctrl-C (issue 34): exit 130, soon, with what was simulated (the advice takes minutes)
"$DLSIM" advise "$SRC/scenarios/default.json" --set devices=3000 --top 3 >"$T/int.out" 2>"$T/int.err" &
pid=$!
wait_caught $pid
sleep 1
signal_wait INT $pid
[ "$rc" = 130 ] || { bad "Ctrl-C: exit 130, not $rc"; cat "$T/int.err"; }
[ "$ms" -lt 3000 ] || bad "Ctrl-C: out within 3 s ($ms ms)"
grep -q "(interrupted: what was simulated)" "$T/int.out" || { bad "Ctrl-C: says it was interrupted"; cat "$T/int.out"; }
grep -q "advise\]" "$T/int.err" && bad "a progress line off a terminal: $(head -c 200 "$T/int.err")"
# the same on two threads: each stops at its run under way, what ran is ranked (a
# sanitizer's runs are ten times slower: a few more seconds for some to end)
"$DLSIM" advise "$SRC/scenarios/default.json" --set devices=3000 --top 3 --jobs 2 >"$T/int.out" \
	2>"$T/int.err" &
pid=$!
wait_caught $pid
sleep $([ -n "$DLSIM_SAN" ] && echo 5 || echo 1)
signal_wait INT $pid
[ "$rc" = 130 ] || { bad "Ctrl-C, --jobs 2: exit 130, not $rc"; cat "$T/int.err"; }
[ "$ms" -lt 3000 ] || bad "Ctrl-C, --jobs 2: out within 3 s ($ms ms)"
grep -q "(interrupted: what was simulated)" "$T/int.out" && grep -q "^   1  " "$T/int.out" &&
	ok "Ctrl-C, --jobs 2: what was simulated, ranked" ||
	{ bad "Ctrl-C, --jobs 2: what was simulated, ranked"; cat "$T/int.out"; }

# progress: on a terminal, after 0.5 s, the runs done and planned and the time
# left (an advice of tens of thousands of devices takes hours and said nothing)
if command -v script >/dev/null 2>&1; then
	script -qec "timeout -s INT 2 $DLSIM advise $SRC/scenarios/default.json --set devices=3000 --top 1" \
		/dev/null >"$T/tty" 2>&1
	grep -aq '\[advise\] [0-9]* of ~[0-9]* runs, .* ms each, ~[0-9]* [a-z]* to go' "$T/tty" &&
		ok "progress on a terminal" || { bad "no progress on a terminal"; head -c 300 "$T/tty"; }
fi
finish cli_advise
