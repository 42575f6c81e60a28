#!/bin/sh
# Threads mode end to end: racing script ops ("concurrent": true) in both
# engines with `dlsim check` on every log, the lower bound in --json, bad
# "concurrent" input refused with exit 2, and Ctrl-C inside a phase: exit
# 130, the run 'interrupted', its log still passing check.
DLSIM=$1
. "$(dirname "$0")/lib_cli.sh"
# correctness, not timing: no wake-up floor under the time scales below
export DLSIM_WAKEUP_NS=0

cat >"$T/race.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "race", "seed": 4,
  "defaults": {"probe": "2ms", "remove": "300us", "suspend": "500us", "resume": "500us"},
  "devices": [ {"name": "soc"}, {"name": "clk", "parent": "soc"}, {"name": "reg", "parent": "soc"},
               {"name": "i2c", "parent": "soc"}, {"name": "codec", "parent": "i2c"},
               {"name": "cam", "parent": "soc", "hotplug": true} ],
  "links": [ {"consumer": "codec", "supplier": "clk"}, {"consumer": "codec", "supplier": "reg"},
             {"consumer": "i2c", "supplier": "clk"}, {"consumer": "cam", "supplier": "reg"} ],
  "generate": {"topology": "random-dag", "devices": 200, "register_order": "consumer-first"},
  "script": [ {"op": "probe"},
              {"op": "unbind", "device": "clk", "concurrent": true, "delay": "1ms"},
              {"op": "link_add", "consumer": "cam", "supplier": "clk", "flags": ["STATELESS"],
               "concurrent": true},
              {"op": "suspend"}, {"op": "resume"},
              {"op": "add", "device": "cam", "concurrent": true, "delay": "200us"},
              {"op": "bind", "device": "clk", "concurrent": true},
              {"op": "link_del", "consumer": "cam", "supplier": "clk"} ] }
J
expect 0 "validate a script with concurrent ops" "$DLSIM" validate "$T/race.json"
for o in sync kernel-async kernel-async-v2 levels cp-first; do
	expect 0 "threads $o with racing ops" "$DLSIM" run "$T/race.json" --mode threads \
		--time-scale 0.2 --order $o --db "$T/r.db"
	expect 0 "check threads $o" "$DLSIM" check "$T/r.db"
done
expect 0 "des runs the same script (serialized)" "$DLSIM" run "$T/race.json" --order cp-first --db "$T/r.db"
expect 0 "check des" "$DLSIM" check "$T/r.db"

# a link added between suspend and resume moves its consumer to dpm_list's
# tail; dpm_complete() still walks the prepared list backward: a b c d, then
# d c b a, in both engines (and check's invariant 3 agrees)
cat >"$T/mid.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "mid", "seed": 1,
  "defaults": {"probe": "200us", "remove": "100us", "suspend": "100us", "resume": "100us"},
  "devices": [ {"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"} ],
  "script": [ {"op": "probe"}, {"op": "suspend"},
              {"op": "link_add", "consumer": "a", "supplier": "d", "flags": ["STATELESS"]},
              {"op": "resume"} ] }
J
for m in des threads; do
	rm -f "$T/m.db"
	expect 0 "$m: link added while suspended" "$DLSIM" run "$T/mid.json" --mode $m --order levels \
		--db "$T/m.db"
	expect 0 "$m: check" "$DLSIM" check "$T/m.db"
	w=$(sqlite3 "$T/m.db" "SELECT group_concat(name, ' ') FROM (SELECT d.name FROM events e
		JOIN devices d ON d.run_id = e.run_id AND d.dev_id = e.dev_id
		WHERE e.kind = 'suspend_start' AND e.phase = 'prepare' OR
		      e.kind = 'resume_start' AND e.phase = 'complete' ORDER BY e.seq)")
	[ "$w" = "a b c d d c b a" ] && ok "$m: complete reverses prepare" \
		|| bad "$m: prepare, complete: '$w', expected 'a b c d d c b a'"
done

# the lower bound and its ratio in threads mode too
"$DLSIM" run "$T/race.json" --mode threads --time-scale 0.2 --order cp-first --no-log --json >"$T/j" \
	|| bad "threads --json"
grep -q '"mode":"threads"' "$T/j" || bad "--json says threads"
lb=$(grep -o '"lower_bound_ns":[0-9]*' "$T/j" | head -1)
[ "${lb#*:}" -gt 0 ] 2>/dev/null && ok "threads lower bound ($lb)" || bad "threads mode has no lower bound"
grep -q '"suspend":{"makespan_ns":[0-9]*,"lower_bound_ns":[1-9]' "$T/j" \
	&& ok "per-op lower bound" || bad "per-op lower bound in threads mode"

# bad input: exit 2, no database
for case in 'probe|{"op": "probe", "concurrent": true}' \
	    'first|{"op": "unbind", "device": "clk", "concurrent": true}' \
	    'delay|{"op": "probe"}, {"op": "unbind", "device": "clk", "delay": "1ms"}' \
	    'notbool|{"op": "probe"}, {"op": "unbind", "device": "clk", "concurrent": "yes"}' \
	    'baddelay|{"op": "probe"}, {"op": "unbind", "device": "clk", "concurrent": true, "delay": "soon"}'; do
	name=${case%%|*}
	printf '{ "format": "dlsim-scenario/1", "devices": [ {"name": "clk"} ], "script": [ %s ] }' \
		"${case#*|}" >"$T/bad-$name.json"
	expect 2 "refused: concurrent $name" "$DLSIM" run "$T/bad-$name.json" --mode threads --db "$T/new.db"
	grep -q "bad-$name.json" "$T/err" || bad "the error names the file ($name)"
done
[ ! -e "$T/new.db" ] && ok "no database for refused input" || bad "database created by bad input"

# Ctrl-C inside a suspend phase (every device 100 ms: the DAG's chain makes
# the phase 1.8 s, the probe before it 0.1 s; at 20 ms a loaded machine's
# Ctrl-C came after the 0.45 s phase had ended)
cat >"$T/slow.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "slow", "seed": 1,
  "defaults": {"suspend": "100ms"},
  "generate": {"topology": "random-dag", "devices": 240} }
J
"$DLSIM" run "$T/slow.json" --mode threads --time-scale 1 --order kernel-async-v2 --workers 4 \
	--db "$T/s.db" >"$T/out" 2>"$T/err" &
pid=$!
# Ctrl-C once the run is logged (its handler is set by then; a fixed sleep
# was too short under TSan on a loaded machine), then again until it is gone
i=0
until [ "$(sqlite3 "$T/s.db" "SELECT count(*) FROM runs" 2>/dev/null || echo 0)" -gt 0 ] || [ $i -ge 300 ]; do
	sleep 0.05; i=$((i + 1))
done
i=0
while kill -INT $pid 2>/dev/null && [ $i -lt 40 ]; do sleep 0.5; i=$((i + 1)); done
wait $pid
got=$?
[ "$got" = 130 ] && ok "Ctrl-C: exit 130" || bad "Ctrl-C: exit $got, expected 130"
st=$(sqlite3 "$T/s.db" "select status from runs order by run_id desc limit 1")
[ "$st" = interrupted ] && ok "run marked interrupted" || bad "run status '$st', expected interrupted"
n=$(sqlite3 "$T/s.db" "select count(*) from events where kind = 'suspend_end' and phase = 'suspend'")
[ "$n" -lt 240 ] && ok "stopped inside the phase ($n of 240 suspended)" || bad "the phase ran to its end"
expect 0 "the interrupted log passes check" "$DLSIM" check "$T/s.db"

# the wake-up floor: a time scale at which the machine's wake-up latency
# (here set to 30 us) would be measured instead of the order is refused,
# naming one that works; without --time-scale that one is picked
cat >"$T/floor.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "floor", "seed": 2,
  "defaults": {"probe": "1ms", "suspend": "200us", "resume": "300us"},
  "generate": {"topology": "random-dag", "devices": 20} }
J
DLSIM_WAKEUP_NS=30000 expect 2 "a time scale under the wake-up floor" "$DLSIM" run "$T/floor.json" \
	--mode threads --time-scale 0.001 --db "$T/floor.db"
grep -q -- "use --time-scale 5 or more" "$T/err" && ok "the refusal names --time-scale 5" \
	|| bad "refusal: $(cat "$T/err")"
[ ! -e "$T/floor.db" ] && ok "no database for the refused scale" || bad "database created for a refused scale"
DLSIM_WAKEUP_NS=30000 expect 0 "default time scale" "$DLSIM" run "$T/floor.json" --mode threads --no-log --json
grep -q '"time_scale":5\.0' "$T/out" && grep -q '"wakeup_ns":30000' "$T/out" \
	&& ok "default time scale 5 (200 us x 5 = 20 x 30 us, rounded up)" || bad "default scale: $(cat "$T/out")"
grep -q '"order_bound_ns":null' "$T/out" && ok "threads --json: order bound null" || bad "threads order bound not null"
DLSIM_WAKEUP_NS=30000 expect 0 "threads table" "$DLSIM" run "$T/floor.json" --mode threads --no-log
grep -q "time scale 5, wake-up latency 30.0 us" "$T/out" && ok "the table says scale and wake-up latency" \
	|| bad "table: $(head -3 "$T/out")"
expect 0 "compare in threads mode" "$DLSIM" compare "$T/floor.json" --mode threads --time-scale 0.05 \
	--orders cp-first --no-log
grep -E -q '^ +cp-first +[0-9.]+ +[0-9.]+ +[0-9.]+ +– +– *$' "$T/out" \
	&& ok "threads compare: order bd and its ratio are '–'" || { bad "threads compare columns"; cat "$T/out"; }

# --- a run that would not end in real time is refused up front -----------------
# default.json under sync: each deferred retry's reorder walk is capped at 1000 s of
# simulated time, 1.8e6 s in all (the DES says so): days of real time at any scale
SRC=$2
expect 2 "threads: a run the DES puts at days of real time is refused" \
	"$DLSIM" run "$SRC/scenarios/default.json" --order sync --mode threads --no-log
grep -q "over --max-wall 3600 s; 100.0% of it is device_pm_move_to_tail()" "$T/err" \
	&& ok "threads: it says why and what to do" || { bad "threads: the refusal"; cat "$T/err"; }
# camera.json takes 84 ms of simulated time: 8.4 s of real time at --time-scale 100
expect 2 "threads: --max-wall 5 refuses 8.4 s" "$DLSIM" compare "$SRC/scenarios/camera.json" \
	--orders cp-first --mode threads --time-scale 100 --max-wall 5 --no-log
grep -q "order cp-first: the DES puts this run at 0.08[0-9]* s of simulated time" "$T/err" \
	&& ok "threads: the refusal names the order and the DES's time" || { bad "threads: --max-wall 5"; cat "$T/err"; }
expect 2 "threads: --max-wall takes whole seconds" "$DLSIM" run "$SRC/scenarios/camera.json" \
	--mode threads --max-wall 0.5 --no-log
# a sweep records such a run failed, saying why, and runs the rest: it never hangs
expect 1 "threads sweep: the run over --max-wall fails, the others run" "$DLSIM" sweep \
	--scenarios "$SRC/scenarios/camera.json" --orders sync,cp-first --mode threads \
	--time-scale 100 --max-wall 5 --db "$T/sw.db"
[ "$(sqlite3 "$T/sw.db" "SELECT count(*) FROM sweep WHERE status = 'failed' AND run_id IS NULL
	AND error LIKE '%the DES puts this run at 0.% s of simulated time, % s of real time%over --max-wall 5 s%'")" = 2 ] \
	&& [ "$(sqlite3 "$T/sw.db" "SELECT count(*) FROM runs")" = 0 ] \
	&& ok "threads sweep: both recorded failed with the reason, none logged" \
	|| { bad "threads sweep --max-wall"; sqlite3 "$T/sw.db" "SELECT * FROM sweep"; }
expect 0 "threads sweep: within --max-wall it runs" "$DLSIM" sweep \
	--scenarios "$SRC/scenarios/camera.json" --orders cp-first --mode threads \
	--time-scale 0.05 --max-wall 5 --db "$T/sw2.db"

finish cli_threads
