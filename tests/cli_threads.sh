#!/bin/sh
# Threads mode end to end: racing script ops ("concurrent": true) in both
# engines with `dlsim check` on every log, the lower bound in --json, bad
# "concurrent" input refused with exit 2, and Ctrl-C inside a phase: exit
# 130, the run 'interrupted', its log still passing check.
DLSIM=$1
. "$(dirname "$0")/lib_cli.sh"

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

# Ctrl-C inside a suspend phase (every device 20 ms, 4 workers: 1.2 s without it)
cat >"$T/slow.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "slow", "seed": 1,
  "defaults": {"suspend": "20ms"},
  "generate": {"topology": "random-dag", "devices": 240} }
J
"$DLSIM" run "$T/slow.json" --mode threads --time-scale 1 --order kernel-async-v2 --workers 4 \
	--db "$T/s.db" >"$T/out" 2>"$T/err" &
pid=$!
sleep 0.4
kill -INT $pid
wait $pid
got=$?
[ "$got" = 130 ] && ok "Ctrl-C: exit 130" || bad "Ctrl-C: exit $got, expected 130"
st=$(sqlite3 "$T/s.db" "select status from runs order by run_id desc limit 1")
[ "$st" = interrupted ] && ok "run marked interrupted" || bad "run status '$st', expected interrupted"
n=$(sqlite3 "$T/s.db" "select count(*) from events where kind = 'suspend_end' and phase = 'suspend'")
[ "$n" -lt 240 ] && ok "stopped inside the phase ($n of 240 suspended)" || bad "the phase ran to its end"
expect 0 "the interrupted log passes check" "$DLSIM" check "$T/s.db"

finish cli_threads
