#!/bin/sh
# --set dev.NAME.KEY=VALUE: per-device overrides of a scenario that lists its
# devices (a name with dots, a latency, async), the errors that name what is
# wrong, and a generate key on such a file says to use dev.NAME.KEY.
# --set cost.KEY=VALUE: the cost model's keys, on listed and generated scenarios.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

cat >"$T/cam.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "cam",
  "devices": [ {"name": "i2c.0"}, {"name": "ov5640", "parent": "i2c.0", "probe": "1ms"} ] }
J
expect 0 "dev.ov5640.probe=10ms" "$DLSIM" run "$T/cam.json" --set dev.ov5640.probe=10ms --no-log --json
# probe's makespan: the 10 ms and the async start's small costs (µs), not 1 ms
pmk=$(sed -n 's/.*"probe":{"makespan_ns":\([0-9]*\).*/\1/p' "$T/out")
[ -n "$pmk" ] && [ "$pmk" -ge 10000000 ] && [ "$pmk" -lt 10100000 ] ||
	{ bad "probe takes the 10 ms (probe makespan ${pmk:-none} ns)"; cat "$T/out"; }
expect 0 "a name with a dot" "$DLSIM" run "$T/cam.json" --set dev.i2c.0.suspend=3ms --no-log --json
grep -q '"suspend":{"makespan_ns":30' "$T/out" || { bad "i2c.0 suspends for 3 ms"; cat "$T/out"; }
expect 0 "async=false" "$DLSIM" validate "$T/cam.json" --set dev.ov5640.async=false
expect 2 "a generate key without generate" "$DLSIM" run "$T/cam.json" --set ov5640.probe=10ms --no-log
grep -q 'no "generate" object.*dev.ov5640.probe=10ms' "$T/err" || { bad "says to use dev.NAME.KEY"; cat "$T/err"; }
grep -q "topology" "$T/err" && bad "no misleading generate.topology message"
expect 2 "unknown device" "$DLSIM" run "$T/cam.json" --set dev.nope.probe=1ms --no-log
grep -q "no listed device named 'nope'" "$T/err" || bad "names the unknown device"
expect 2 "unknown key" "$DLSIM" run "$T/cam.json" --set dev.ov5640.bogus=1 --no-log
grep -q "unknown key 'bogus'" "$T/err" || bad "names the unknown key"
expect 2 "bad value" "$DLSIM" run "$T/cam.json" --set dev.ov5640.probe=-1 --no-log
# 1e300 s overflows to inf: out of range, not "negative latency inf ns" (issue 34)
expect 2 "a latency out of range" "$DLSIM" validate "$T/cam.json" --set dev.ov5640.probe=1e300s
grep -q "latency inf ns is out of range; expected under 292 years" "$T/err" && ok "says out of range" \
	|| bad "1e300s: $(cat "$T/err")"
expect 2 "no name" "$DLSIM" validate "$T/cam.json" --set dev.probe=1ms
expect 2 "dev. on a generated scenario" "$DLSIM" validate "$SRC/scenarios/default.json" --set dev.x.probe=1ms
grep -q 'lists no "devices"' "$T/err" || bad "says the scenario lists no devices"
expect 0 "generate keys still work" "$DLSIM" validate "$SRC/scenarios/default.json" --set devices=50
# cost.KEY: one CPU makes four 1 ms CPU-bound async suspends serial (4 ms, not 1 ms)
cat >"$T/par.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "par",
  "defaults": { "suspend": "1ms", "cpu": 1, "async": true },
  "devices": [ {"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"} ] }
J
expect 0 "cost.cpus=4" "$DLSIM" run "$T/par.json" --order kernel-async --set cost.cpus=4 --no-log --json
grep -q '"suspend":{"makespan_ns":1[0-9][0-9][0-9][0-9][0-9][0-9],' "$T/out" || { bad "four CPUs: about 1 ms"; cat "$T/out"; }
expect 0 "cost.cpus=1" "$DLSIM" run "$T/par.json" --order kernel-async --set cost.cpus=1 --no-log --json
grep -q '"suspend":{"makespan_ns":4[0-9][0-9][0-9][0-9][0-9][0-9],' "$T/out" || { bad "one CPU: about 4 ms"; cat "$T/out"; }
grep -q '"workers":1,' "$T/out" || bad "one CPU is K = 1"
# cost.resume_wake_ns: the four items of each of the three resume phases that run items wake
# in parallel (5 ms of CPU each, 8 CPUs): about 15 ms; suspend keeps wake_ns (about 1 ms)
expect 0 "cost.resume_wake_ns=5ms" "$DLSIM" run "$T/par.json" --order kernel-async --set cost.resume_wake_ns=5ms --no-log --json
grep -q '"resume":{"makespan_ns":15[0-9][0-9][0-9][0-9][0-9][0-9],' "$T/out" || { bad "three 5 ms wakes in resume"; cat "$T/out"; }
grep -q '"suspend":{"makespan_ns":1[0-9][0-9][0-9][0-9][0-9][0-9],' "$T/out" || { bad "suspend keeps wake_ns"; cat "$T/out"; }
expect 2 "negative cost.resume_wake_ns" "$DLSIM" run "$T/par.json" --set cost.resume_wake_ns=-1 --no-log
grep -q "cost.resume_wake_ns" "$T/err" || { bad "names cost.resume_wake_ns"; cat "$T/err"; }
expect 0 "cost.wake_ns with a unit, generated scenario" "$DLSIM" validate "$SRC/scenarios/default.json" --set cost.wake_ns=70us --set devices=50
expect 2 "unknown cost key" "$DLSIM" run "$T/par.json" --set cost.bogus=1 --no-log
grep -q "cost: unknown key 'bogus'" "$T/err" || { bad "names the unknown cost key"; cat "$T/err"; }
expect 2 "bad cost value" "$DLSIM" run "$T/par.json" --set cost.cpus=0 --no-log
grep -q "cost.cpus" "$T/err" || { bad "names cost.cpus"; cat "$T/err"; }
expect 2 "no cost key" "$DLSIM" run "$T/par.json" --set cost.=1 --no-log
finish cli_set_dev
