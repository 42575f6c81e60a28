#!/bin/sh
# dlsim run / compare / check end to end: exit statuses of shared/SPEC.md,
# input errors that leave the database untouched, the naive negative
# control, fault injection, and --json.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
# correctness, not timing: no wake-up floor under threads mode's time scales
export DLSIM_WAKEUP_NS=0

cat >"$T/small.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "small", "seed": 3,
  "defaults": {"probe": "1ms", "suspend": "300us", "resume": "200us"},
  "generate": {"topology": "random-dag", "devices": 300, "register_order": "consumer-first"} }
J

# every order runs clean and check agrees, except naive, which check must catch
for o in sync kernel-async kernel-async-v2 levels cp-first; do
	expect 0 "run --order $o" "$DLSIM" run "$T/small.json" --order $o --db "$T/a.db"
	expect 0 "check after $o" "$DLSIM" check "$T/a.db"
done
expect 0 "run --order naive" "$DLSIM" run "$T/small.json" --order naive --db "$T/a.db"
expect 1 "check catches naive" "$DLSIM" check "$T/a.db"
grep -q "invariant" "$T/out" || bad "check prints the violated invariant"
st=$(sqlite3 "$T/a.db" "select status from runs order by run_id desc limit 1")
[ "$st" = violations ] && ok "check marks the naive run 'violations'" || bad "naive run left '$st' after check"

# consumer-first registration makes the core reorder dpm_list; without the
# logged dpm_move events the replayed list is not topological: invariant 7
[ "$(sqlite3 "$T/a.db" "select count(*) > 0 from events where run_id = 1 and kind = 'dpm_move'")" = 1 ] \
	|| bad "a consumer-first run logs dpm_move events"
cp "$T/a.db" "$T/nomove.db"
# (rewritten as sync_state, which the rules ignore: a deleted row is a corrupt log)
sqlite3 "$T/nomove.db" "update events set kind = 'sync_state' where run_id = 1 and kind = 'dpm_move'"
expect 1 "check without dpm_move" "$DLSIM" check "$T/nomove.db" --run 1
grep -q "invariant 7" "$T/out" || bad "check names invariant 7 when dpm_move events are missing"
expect 0 "check --run=1 (GNU form)" "$DLSIM" check "$T/a.db" --run=1
expect 2 "check --run without a value" "$DLSIM" check "$T/a.db" --run

# threads mode: the same link core on real threads; check must pass on its log
for o in sync kernel-async kernel-async-v2 levels cp-first; do
	expect 0 "run --mode threads --order $o" "$DLSIM" run "$T/small.json" --mode threads \
		--time-scale 0.0005 --order $o --db "$T/t.db"
	expect 0 "check threads $o" "$DLSIM" check "$T/t.db"
done
# K is chosen once: what --json prints is what the runs row stores (soc-small sets cost.cpus 8)
for o in sync kernel-async; do
	expect 0 "run soc-small --order $o --json" "$DLSIM" run "$SRC/scenarios/soc-small.json" \
		--order $o --json --db "$T/k.db"
	k_json=$(sed -n 's/.*"workers":\([0-9]*\).*/\1/p' "$T/out")
	k_row=$(sqlite3 "$T/k.db" "select workers from runs order by run_id desc limit 1")
	[ -n "$k_json" ] && [ "$k_json" = "$k_row" ] && [ "$k_row" = 8 ] \
		&& ok "$o: workers $k_json in --json and in the runs row" \
		|| bad "$o: workers '$k_json' in --json, '$k_row' in the runs row (cost.cpus is 8)"
done
expect 2 "unknown mode" "$DLSIM" run "$T/small.json" --mode quantum --no-log

# bad input: exit 2, and no database is created
expect 2 "missing scenario file" "$DLSIM" run "$T/nope.json" --db "$T/new.db"
[ ! -e "$T/new.db" ] && ok "no database for a refused run" || bad "database created for a refused run"
printf '{ "format": "dlsim-scenario/1", "devices": [ {"name": "a", "probe": "2 parsecs"} ] }' >"$T/bad.json"
expect 2 "bad latency" "$DLSIM" run "$T/bad.json" --db "$T/new.db"
grep -q "bad.json" "$T/err" || bad "error names the file"
expect 2 "unknown order" "$DLSIM" run "$T/small.json" --order fastest --db "$T/new.db"
expect 2 "unknown option" "$DLSIM" run "$T/small.json" --frobnicate
echo "not a database" >"$T/text.db"
expect 2 "not a dlsim database" "$DLSIM" run "$T/small.json" --db "$T/text.db"
[ "$(cat "$T/text.db")" = "not a database" ] && ok "foreign file untouched" || bad "foreign file changed"
[ ! -e "$T/new.db" ] && ok "still no database" || bad "database created by bad input"

# an injected fault: exit 1, device named, check still passes on the rollback
cat >"$T/fault.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "fault", "seed": 1,
  "defaults": {"suspend": "100us", "resume": "100us"},
  "devices": [ {"name": "bus"}, {"name": "cam", "parent": "bus"}, {"name": "clk"} ],
  "links": [ {"consumer": "cam", "supplier": "clk"} ],
  "faults": [ {"device": "clk", "op": "suspend", "error": "EBUSY"} ] }
J
expect 1 "fault fails the run" "$DLSIM" run "$T/fault.json" --db "$T/f.db"
grep -q "clk" "$T/err" || bad "the failing device is named"
grep -q -- "-EBUSY" "$T/err" && grep -q "returned -EBUSY" "$T/out" \
	&& ok "the error is named -EBUSY" || { bad "the error is not named -EBUSY"; cat "$T/out" "$T/err"; }
expect 0 "rollback passes check" "$DLSIM" check "$T/f.db"
[ "$(sqlite3 "$T/f.db" "select status from runs order by run_id desc limit 1")" = failed ] \
	&& ok "run status failed" || bad "run status is not failed"

# a failed probe releases nobody, but only its dependents stay unprobed: the
# main thread's walk (sync devices) and the level barriers move past them
cat >"$T/pfail.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "pfail", "seed": 1,
  "defaults": {"probe": "1ms", "suspend": "100us", "resume": "100us"},
  "devices": [ {"name": "a", "async": false}, {"name": "b", "async": false},
               {"name": "c", "async": false}, {"name": "d"}, {"name": "e"} ],
  "links": [ {"consumer": "b", "supplier": "a"}, {"consumer": "d", "supplier": "c"},
             {"consumer": "e", "supplier": "d"} ],
  "faults": [ {"device": "a", "op": "probe", "error": "EIO"} ],
  "script": [ {"op": "probe"} ] }
J
for o in kernel-async-v2 cp-first levels threads:kernel-async-v2 threads:levels; do
	case $o in threads:*) o=${o#threads:}; mode="--mode threads --time-scale 0.001" ;; *) mode= ;; esac
	rm -f "$T/p.db"
	expect 0 "failed probe, $o $mode" "$DLSIM" run "$T/pfail.json" --order $o $mode --db "$T/p.db"
	got=$(sqlite3 "$T/p.db" "select group_concat(d.name, '') from (select d.name from events e
		join devices d on d.run_id = e.run_id and d.dev_id = e.dev_id
		where e.kind = 'probe_end' and e.err = 0 order by d.name) d")
	[ "$got" = cde ] && ok "$o binds c, d and e past the failed a" || bad "$o bound '$got', expected cde"
	expect 0 "check failed probe, $o" "$DLSIM" check "$T/p.db"
done

# --json and compare
"$DLSIM" run "$T/small.json" --no-log --json >"$T/j" || bad "run --json"
for k in run_id scenario order mode seed workers devices links links_refused status makespan_ns \
	 lower_bound_ns critical_path_ns work_ns events wall_ns probe_attempts probe_defers; do
	grep -q "\"$k\":" "$T/j" || bad "--json lacks $k"
done
# the simulator's own CPU time, per op and per phase of the op's kind: present,
# non-negative, the phases within their op (plus 1 us of clock granularity), the
# run's the ops' sum; a failed suspend's rollback is in its op, not its phases
cpu_check='
import json, sys
r = json.loads(open(sys.argv[1]).read())
want = {"probe": ["probe"],
        "suspend": ["prepare", "suspend", "suspend_late", "suspend_noirq"],
        "resume": ["resume_noirq", "resume_early", "resume", "complete"]}
ops = [(k, v) for k, v in r.items() if isinstance(v, dict) and "phases" in v]
assert len(ops) == 3, "ops with phases: %r" % [k for k, _ in ops]
total = 0
for k, v in ops:
    c = v["cpu_ns"]
    assert isinstance(c, int) and c >= 0, (k, c)
    total += c
    ph = v["phases"]
    # the phases that ran, in order: all of them, or up to the one that failed
    got = [p for p in want[k] if p in ph]
    assert len(got) == len(ph) and got == want[k][:len(got)] and got, (k, list(ph))
    assert v["err"] != 0 or got == want[k], (k, got)
    s = 0
    for p, pv in ph.items():
        assert isinstance(pv["cpu_ns"], int) and pv["cpu_ns"] >= 0, (k, p, pv)
        s += pv["cpu_ns"]
    assert s <= c + 1000, "%s: phases %d ns > op %d ns" % (k, s, c)
assert r["cpu_ns"] == total, (r["cpu_ns"], total)
'
for mode in des threads; do
	for sc in small fault; do
		"$DLSIM" run "$T/$sc.json" --mode $mode --time-scale 0.0005 --no-log --json >"$T/jcpu"
		python3 -c "$cpu_check" "$T/jcpu" && ok "$mode $sc: --json cpu_ns per op and phase" \
			|| bad "$mode $sc: --json cpu_ns per op and phase wrong"
	done
done
expect 0 "compare" "$DLSIM" compare "$T/small.json" --orders sync,cp-first --seeds 2 --no-log
grep -q "cp-first" "$T/out" || bad "compare table names the orders"
expect 0 "compare without --orders runs every order but naive" "$DLSIM" compare "$T/small.json" --no-log
for o in sync kernel-async kernel-async-v2 levels cp-first; do
	grep -q " $o " "$T/out" || bad "compare without --orders lacks $o"
done
grep -q " naive " "$T/out" && bad "compare without --orders runs naive"
grep -q "±" "$T/out" && bad "one seed shows '± sd'" || ok "one seed: no '± sd'"
expect 0 "compare, 2 seeds" "$DLSIM" compare "$T/small.json" --orders cp-first --seeds 2 --no-log
grep -q "cp-first .*±" "$T/out" && ok "two seeds: mean ± sd" || bad "two seeds show no sd"

# no ratio to a bound of 0: a probe without latency has a lower bound of 0
cat >"$T/nolat.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "nolat", "seed": 3, "defaults": {"suspend": "300us"},
  "generate": {"topology": "random-dag", "devices": 50} }
J
expect 0 "run, probe without latency" "$DLSIM" run "$T/nolat.json" --no-log
grep -E -q '^probe +[0-9.]+ +0\.000 +– ' "$T/out" && ok "ratio to a bound of 0 is '–'" \
	|| { bad "ratio to a bound of 0 printed"; cat "$T/out"; }
expect 0 "compare, probe without latency" "$DLSIM" compare "$T/nolat.json" --orders sync --no-log
grep -E -q '^ +sync +[0-9.]+ +0\.000 +– ' "$T/out" && ok "compare: ratio to a bound of 0 is '–'" \
	|| { bad "compare: ratio to a bound of 0 printed"; cat "$T/out"; }

# every column header of the tables is explained in --help
"$DLSIM" run --help >"$T/help"
for h in "makespan ms" "lower bd ms" ratio attempts defers "peak items" "blocked wkr-ms"; do
	grep -q "^  $h" "$T/help" || bad "run --help does not explain '$h'"
done
"$DLSIM" run "$T/small.json" --no-log >"$T/tab"
grep -q "peak items .*blocked wkr-ms" "$T/tab" && ok "run table: peak items, blocked wkr-ms" \
	|| bad "run table headers"
"$DLSIM" compare --help >"$T/help"
for h in makespan "lower bd" ratio "order bd"; do
	grep -q "^  $h" "$T/help" || bad "compare --help does not explain '$h'"
done

# did you mean
expect 2 "--order cpfirst" "$DLSIM" run "$T/small.json" --order cpfirst --no-log
grep -q "did you mean 'cp-first'" "$T/err" && ok "did you mean 'cp-first'" || bad "no suggestion: $(cat "$T/err")"
expect 2 "--orders sync,kernelasync" "$DLSIM" compare "$T/small.json" --orders sync,kernelasync --no-log
grep -q "did you mean 'kernel-async'" "$T/err" && ok "did you mean 'kernel-async'" || bad "no suggestion: $(cat "$T/err")"
expect 2 "--order fastest" "$DLSIM" run "$T/small.json" --order fastest --no-log
grep -q "did you mean" "$T/err" && bad "a suggestion for 'fastest'" || ok "no suggestion for 'fastest'"

# JSON is JSON, whatever the scenario's name
sed 's/"name": "small"/"name": "q\\"uo\\\\te\\u0001 <tab>\\t"/' "$T/small.json" >"$T/hostile.json"
"$DLSIM" run "$T/hostile.json" --no-log --json >"$T/j" || bad "run --json (hostile name)"
"$DLSIM" compare "$T/hostile.json" --orders sync,cp-first --no-log --json >"$T/jc" || bad "compare --json"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
assert r["scenario"] == "q\"uo\\te\u0001 <tab>\t", repr(r["scenario"])
assert [x["order"] for x in c] == ["sync", "cp-first"]
assert r["probe"]["makespan_ns"] > 0 and r["main_bound_ns"] is not None
' "$T/j" "$T/jc" && ok "--json parses, names intact" || bad "--json does not parse or lost the name"

# semantic errors name file:line:column (1-based) and the device (SPEC.md)
cat >"$T/e1.json" <<'J'
{ "format": "dlsim-scenario/1",
  "devices": [
    { "name": "soc" },
    { "name": "/soc@0/i2c@a8c0/cam", "parent": "i2c3" }
  ]
}
J
expect 2 "unknown parent" "$DLSIM" validate "$T/e1.json"
grep -q "e1.json:4:48: devices\[1\].parent (device '/soc@0/i2c@a8c0/cam'): unknown device 'i2c3'" "$T/err" \
	&& ok "unknown parent: file:line:column and the device" || bad "unknown parent: $(cat "$T/err")"
cat >"$T/e2.json" <<'J'
{ "format": "dlsim-scenario/1",
  "devices": [ { "name": "soc" },
    { "name": "cam", "parent": "soc", "probe": 1.5 } ],
  "links": [ {"consumer": "cam", "supplier": "gpio9"} ] }
J
expect 2 "a latency of 1.5 (ns)" "$DLSIM" validate "$T/e2.json"
grep -q "e2.json:3:48: devices\[1\].probe (device 'cam'): 1.5 would be a fraction of a nanosecond" "$T/err" \
	&& ok "1.5 ns is refused, the unit asked for" || bad "1.5: $(cat "$T/err")"
sed 's/"probe": 1.5/"probe": 1500/' "$T/e2.json" >"$T/e3.json"
expect 2 "unknown supplier" "$DLSIM" validate "$T/e3.json"
grep -q "e3.json:4:46: links\[0\].supplier (link 'cam' -> 'gpio9'): unknown device 'gpio9'" "$T/err" \
	&& ok "unknown supplier: file:line:column and the link" || bad "unknown supplier: $(cat "$T/err")"

# progress: a line on stderr on a terminal (after 0.5 s), nothing off one.  The
# deferred-retry walks are free here: priced, they take default.json at 40000
# devices past 2^62 ns (cli_limits.sh), which fails the run.
sed 's/"seed": 1,/"seed": 1, "cost": {"reorder_ns": 0, "reorder_visit_ns": 0},/' \
	"$SRC/scenarios/default.json" >"$T/big.json"
grep -q reorder_visit_ns "$T/big.json" || bad "big.json: default.json has no '\"seed\": 1,'"
big="run $T/big.json --order sync --set devices=40000 --no-log"
if command -v script >/dev/null 2>&1; then
	script -qec "$DLSIM $big" /dev/null >"$T/tty" 2>&1
	grep -q '\[op 1/3 probe' "$T/tty" && ok "progress on a terminal" || bad "no progress on a terminal"
fi
# shellcheck disable=SC2086
"$DLSIM" $big >"$T/out" 2>"$T/err" </dev/null
[ ! -s "$T/err" ] && ok "nothing on stderr off a terminal" || bad "stderr off a terminal: $(head -c 200 "$T/err")"

finish cli_run
