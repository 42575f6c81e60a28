#!/bin/sh
# `make demo` (issues 22 and 32): a real board, and its headline first, in
# the manner of sleepgraph's: suspend and resume per kernel order, the best
# kernel order, the top advice; no build output (it goes to build.log and is
# shown only on failure), no progress lines off a terminal, no figure a
# kernel engineer would call impossible; it ends with the report's path.
# The demo scenario says where it came from: the board's DTB, and per device
# the real log behind each measured latency.  Runs the real target on the
# already built tree that ctest tests.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
BUILD=$(dirname "$DLSIM")
# the same configuration as the tree under test (a sanitizer build stays one)
SAN=$(sed -n 's/^DLSIM_SAN:STRING=//p' "$BUILD/CMakeCache.txt")
if ! make -s -C "$SRC" demo BUILD="$BUILD" SAN="$SAN" >"$T/out" 2>"$T/err" </dev/null; then
	bad "make demo failed"; cat "$T/out" "$T/err"
fi
head -1 "$T/out" | grep -Eq '^Xunlong Orange Pi 5 Plus \(scenarios/rk3588-orangepi-5-plus.json\): [0-9]+ devices' \
	&& ok "the results come first, on a real board" || bad "first line: $(head -1 "$T/out")"
python3 - "$T/out" <<'P' && ok "the headline: suspend and resume per kernel order, best order, top advice, all plausible" \
	|| { bad "headline"; head -8 "$T/out"; }
import re, sys
lines = open(sys.argv[1]).read().splitlines()[1:6]
orders = []
for l in lines[:3]:
    m = re.match(r"^  (\S+) +Suspend Time: +([\d.]+) ms \| Resume Time: +([\d.]+) ms  \(Linux [\d.]+ rules, \d+ CPUs?\)$", l)
    assert m, l
    orders.append(m.group(1))
    # a phone or board suspends in milliseconds to seconds, not days (issue 32)
    assert all(0.1 < float(m.group(i)) < 5000 for i in (2, 3)), l
assert orders == ["sync", "kernel-async", "kernel-async-v2"], orders
assert re.match(r"^  best kernel order: (sync|kernel-async|kernel-async-v2) \(suspend \+ resume [\d.]+ ms", lines[3]), lines[3]
assert lines[4].startswith("  top advice: "), lines[4]
P
grep -E -q 'Built target|Building C|cmake|\[ *[0-9]+%\]' "$T/out" "$T/err" && bad "build output in the demo's" \
	|| ok "no build output"
grep -q '\[op ' "$T/err" && bad "progress lines without a terminal" || ok "no progress lines off a terminal"
grep -q '^run [0-9]*: Xunlong Orange Pi 5 Plus, order kernel-async-v2' "$T/out" && ok "the run's table" || bad "no run table"
tail -1 "$T/out" | grep -q 'report: .*demo-report/index.html' && ok "ends with the report" || bad "last line: $(tail -1 "$T/out")"
[ -s "$BUILD/demo-report/index.html" ] && ok "the report is written" || bad "no demo report"
python3 - "$SRC/scenarios/rk3588-orangepi-5-plus.json" "$SRC/sim/measure/atlas.json" <<'P' \
	&& ok "the demo scenario's provenance: its DTB and each measured latency's log" || bad "provenance"
import json, re, sys
sc, atlas = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
logs = {l["file"] for l in atlas["logs"]}
assert "rockchip/rk3588-orangepi-5-plus.dtb" in sc["x-doc"], sc["x-doc"][:200]
measured = [d for d in sc["devices"] if "x-latency" in d]
assert len(measured) >= 20, len(measured)
for d in measured:
    for key, src in d["x-latency"].items():
        m = re.match(r"^(driver|subsystem) \S+: median of \d+, (\S+):\d+-\d+", src)
        assert m and m.group(2) in logs and key in d, (d["name"], key, src)
P
finish cli_demo
