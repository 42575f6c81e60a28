#!/bin/sh
# --set defaults.KEY=VALUE (issue 33): a key of the scenario's "defaults" for
# every device without its own, taken the same way by run, compare, advise and
# validate, on a scenario without a "generate" object; bad keys exit 2 with a
# suggestion that works.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

# two independent 10 ms devices, async by default: suspend takes 10 ms on two CPUs,
# 20 ms when every device is sync (one after another on the main thread)
cat >"$T/two.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "two", "cost": {"cpus": 2}, "defaults": {"suspend": "10ms"},
  "devices": [ {"name": "a"}, {"name": "b"}, {"name": "c", "async": true} ],
  "script": [ {"op": "probe"}, {"op": "suspend"} ] }
J
susp() { python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['suspend']['makespan_ns'] / 1e6))" "$T/out"; }
expect 0 "run as written" "$DLSIM" run "$T/two.json" --order kernel-async-v2 --no-log --json
[ "$(susp)" -lt 15 ] || { bad "as written: the three run at once"; cat "$T/out"; }
expect 0 "run defaults.async=false" "$DLSIM" run "$T/two.json" --order kernel-async-v2 --no-log --json --set defaults.async=false
[ "$(susp)" -ge 20 ] || { bad "defaults.async=false: a and b one after another"; cat "$T/out"; }
expect 0 "run defaults.suspend=30ms" "$DLSIM" run "$T/two.json" --order kernel-async-v2 --no-log --json --set defaults.suspend=30ms
[ "$(susp)" -ge 30 ] || { bad "defaults.suspend=30ms: every device takes 30 ms"; cat "$T/out"; }
expect 0 "compare defaults.async=false" "$DLSIM" compare "$T/two.json" --orders kernel-async-v2 --set defaults.async=false --db "$T/c.db"
[ "$(sqlite3 "$T/c.db" "select count(*) from devices where async = 0")" = 2 ] || bad "compare: a and b sync, c its own"
expect 0 "sweep defaults.async=false" "$DLSIM" sweep --scenarios "$T/two.json" --orders kernel-async-v2 --set defaults.async=false --db "$T/s.db" --jobs 1
"$DLSIM" sweep --compact "$T/s.db" >/dev/null || bad "sweep --compact"
[ "$(sqlite3 "$T/s.db" "select count(*) from devices where async = 0")" = 2 ] || bad "sweep: a and b sync, c its own"
expect 0 "validate defaults.async=true" "$DLSIM" validate "$T/two.json" --set defaults.async=true
expect 0 "advise defaults.async=false" "$DLSIM" advise "$T/two.json" --order kernel-async-v2 --set defaults.async=false --json
python3 - "$T/out" <<'PY' || { bad "advise: a and b sync, so making one async saves time"; cat "$T/out"; }
import json, sys
d = json.load(open(sys.argv[1]))
c = {x["change"]: x for x in d["changes"]}
assert any(k.startswith("make a async") and v["total_saved_ns"] > 5e6 for k, v in c.items()), c.keys()
PY
expect 2 "an unknown defaults key" "$DLSIM" run "$T/two.json" --no-log --set defaults.bogus=1
grep -q "defaults: unknown key 'bogus'" "$T/err" || { bad "names the key"; cat "$T/err"; }
expect 2 "defaults. without a key" "$DLSIM" run "$T/two.json" --no-log --set defaults.=1
expect 2 "a generator key on a scenario without generate" "$DLSIM" run "$T/two.json" --no-log --set async=true
grep -q "e.g. --set defaults.async=true" "$T/err" || { bad "suggests defaults.async=true"; cat "$T/err"; }
sug=$(sed -n 's/.*e\.g\. \(--set [^ ),]*\).*/\1/p' "$T/err")
expect 0 "the suggestion works" "$DLSIM" run "$T/two.json" --no-log $sug
finish cli_set_defaults
