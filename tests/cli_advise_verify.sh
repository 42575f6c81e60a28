#!/bin/sh
# advise --verify N without QEMU: the fake guest tests/tools/kguest_verify.py
# (DLSIM_KGUEST_STUB) runs every callback one after another, each exactly as
# long as its sampled latency.  So a device's halved latencies save exactly
# what they took (no flag), a device made async saves nothing there (flagged),
# and the two baselines differ by KGUEST_VERIFY_JITTER_NS.  Then a guest that
# fails, one that hangs (timeout, Ctrl-C) and what kernel mode cannot play.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
DLSIM_KGUEST_STUB=$SRC/tests/tools/kguest_verify.py
export DLSIM_KGUEST_STUB
cat >"$T/s.json" <<'EOF'
{
  "format": "dlsim-scenario/1",
  "name": "verify-small",
  "seed": 1,
  "defaults": { "probe": "1ms", "suspend": "200us", "resume": "300us", "async": false },
  "devices": [
    { "name": "soc" },
    { "name": "i2c0", "parent": "soc" },
    { "name": "codec", "parent": "i2c0", "probe": "6ms", "suspend": "2ms", "resume": "3ms" },
    { "name": "gpu", "parent": "soc", "probe": "4ms", "suspend": "1ms", "resume": "2ms" },
    { "name": "usb", "parent": "soc" }
  ],
  "links": [ { "consumer": "codec", "supplier": "usb" } ],
  "script": [ {"op": "probe"}, {"op": "suspend"}, {"op": "resume"} ]
}
EOF
# what each row says, as "change|ran|kernel total|flagged|why"
rows() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
v = d["verify"]
print("base", v["kernel"], v["runs"], v["boots"], v["spread_ns"], v["baseline_makespan_ns"]["probe"])
for c in d["changes"]:
    k = c.get("kernel")
    if k is None:
        print(c["change"], "|-")
    else:
        print(c["change"], "|", k["ran"], k.get("total_saved_ns"), k.get("flagged"), k.get("why", ""), sep="")
' "$1"
}

expect 0 "advise --verify 4 on the fake guest" "$DLSIM" advise "$T/s.json" --verify 4 --top 6 --json
rows "$T/out" >"$T/rows"
cat "$T/rows"
grep -qx "base 6.12 10 1 0 13000000" "$T/rows" \
	&& ok "one boot of 10 runs (warm-up, baseline, each change followed by it) on 6.12, spread 0" \
	|| bad "the boot: $(head -1 "$T/rows")"
grep -qx "halve codec's latencies|True5500000False" "$T/rows" \
	&& ok "halving codec saves on the guest exactly its latencies (5.5 ms), not flagged" \
	|| bad "halve codec: $(grep codec "$T/rows")"
grep -qx "halve gpu's latencies|True3500000False" "$T/rows" \
	&& ok "halving gpu saves 3.5 ms on the guest" || bad "halve gpu: $(grep gpu "$T/rows")"
grep -qx "make every device async (5 sync now)|True0True" "$T/rows" \
	&& ok "every device async saves nothing on a serial guest: flagged" \
	|| bad "async all: $(grep every "$T/rows")"
[ "$(grep -c '|-$' "$T/rows")" = 2 ] && ok "rows 5 and 6 are not verified" || bad "rows past --verify 4"

expect 0 "the table" "$DLSIM" advise "$T/s.json" --verify 4 --top 6
grep -q "the kernel's spread: 0.000 ms (the baseline runs before and after each change" "$T/out" \
	&& ok "the table says how the spread was measured" || bad "no spread line"
grep "halve codec" "$T/out" | grep -q " 5.500 *0%$" && ok "halve codec: kernel 5.500 ms, 0% off" \
	|| bad "table row: $(grep 'halve codec' "$T/out")"
grep "every device" "$T/out" | grep -q "0.000 *-100%!$" && ok "async all: flagged '!'" \
	|| bad "table row: $(grep 'every device' "$T/out")"

# the kernel's spread widens the tolerance: the last baseline 7 ms longer; a saving is
# measured against the baselines either side of it (halve gpu, the last change: +3.5 ms)
KGUEST_VERIFY_JITTER_NS=7000000 expect 0 "a guest whose last baseline is 7 ms longer" \
	"$DLSIM" advise "$T/s.json" --verify 4 --json
rows "$T/out" >"$T/rows"
grep -q "^base 6.12 10 1 7000000 14400000$" "$T/rows" && ok "spread 7 ms, baseline probe the mean of 5 (14.4 ms)" \
	|| bad "spread: $(head -1 "$T/rows")"
grep -qx "halve codec's latencies|True5500000False" "$T/rows" \
	&& grep -qx "halve gpu's latencies|True7000000False" "$T/rows" \
	&& grep -qx "make every device async (5 sync now)|True0False" "$T/rows" \
	&& ok "only the change next to it moves; within the spread (off 3.5 and 6.4 ms < 7 ms): not flagged" \
	|| bad "spread tolerance: $(cat "$T/rows")"

# two rounds of boots, the second 4 ms slower on every run: the savings are the means, the
# spread the baselines' boot-to-boot difference
KGUEST_VERIFY_COUNTER=$T/boots KGUEST_VERIFY_BOOT_JITTER_NS=4000000 expect 0 "--boots 2" \
	"$DLSIM" advise "$T/s.json" --verify 4 --boots 2 --json
rows "$T/out" >"$T/rows"
grep -q "^base 6.12 20 2 4000000 15000000$" "$T/rows" && [ "$(cat "$T/boots")" = 2 ] \
	&& ok "two boots of 10 runs, spread 4 ms from boot to boot, baseline probe the mean (15 ms)" \
	|| bad "--boots 2: $(head -1 "$T/rows")"
grep -qx "halve codec's latencies|True5500000False" "$T/rows" \
	&& ok "halve codec: 5.5 ms, the mean over the boots" || bad "--boots 2: $(grep codec "$T/rows")"
grep -q "baseline_runs" "$T/out" && [ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["verify"]["baseline_runs"]))' "$T/out")" = 10 ] \
	&& ok "--json lists the 10 baseline runs" || bad "baseline_runs"
expect 2 "--boots without --verify" "$DLSIM" advise "$T/s.json" --boots 2

# a run whose dump stops early (job 4: the second change): its row says so, the rest stand
KGUEST_VERIFY_CUT=4 expect 0 "a guest that loses the end of one run" "$DLSIM" advise "$T/s.json" \
	--verify 4 --json
rows "$T/out" >"$T/rows"
grep -qx "make every device async (5 sync now)|True.*Truethe kernel's run failed: the guest stopped before the run's end" \
	"$T/rows" && grep -qx "halve codec's latencies|True5500000False" "$T/rows" \
	&& ok "that row says the kernel's run failed and where; the others stand" \
	|| bad "a cut run: $(cat "$T/rows")"

# over two boots, a change's run that stops early in one of them (job 6, halve codec, boot 0):
# measured on the other, and it says so
KGUEST_VERIFY_COUNTER=$T/boots2 KGUEST_VERIFY_CUT=6 KGUEST_VERIFY_CUT_BOOT=0 expect 0 \
	"--boots 2, one run cut in the first" "$DLSIM" advise "$T/s.json" --verify 4 --boots 2 --json
rows "$T/out" >"$T/rows"
grep -qx "halve codec's latencies|True5500000False1 of 2 runs left out: the kernel's run failed: the guest stopped before the run's end" \
	"$T/rows" && ok "measured on the run that completed; one of two left out, and why" \
	|| bad "a run cut in one boot: $(grep codec "$T/rows")"

# a baseline whose dump stops early (job 3): the changes either side use the other one
KGUEST_VERIFY_CUT=3 expect 0 "a guest that loses the end of a baseline run" "$DLSIM" advise \
	"$T/s.json" --verify 4 --json
rows "$T/out" >"$T/rows"
grep -q "^base 6.12 10 1 0 13000000$" "$T/rows" && ! grep -q "failed" "$T/rows" \
	&& grep -qx "make every device async (5 sync now)|True0True" "$T/rows" \
	&& ok "the failed baseline is left out; every change still measured" || bad "a cut baseline: $(cat "$T/rows")"

# changes the guest cannot play, and the upgrade on 7.3 in a boot of its own
expect 0 "--research --verify 30" "$DLSIM" advise "$T/s.json" --order kernel-async --research \
	--verify 30 --top 0 --json
rows "$T/out" >"$T/rows"
grep -q "^base 6.12 32 2 " "$T/rows" && ok "two boots (6.12, 7.3 for the upgrade)" || bad "boots: $(head -1 "$T/rows")"
grep -q "^16 CPUs (research: another machine)|False.*one-CPU guest" "$T/rows" \
	&& ok "more CPUs: not played, and why" || bad "cpus row: $(grep CPUs "$T/rows")"
grep -q "^order levels (research: no kernel has it)|False.*not the kernel's" "$T/rows" \
	&& ok "an order no kernel has: not played, and why" || bad "levels row: $(grep levels "$T/rows")"
grep -q "^upgrade the kernel.*|True.*played on kernel 7.3 (a boot of its own)" "$T/rows" \
	&& ok "the upgrade runs on 7.3 and says so" || bad "upgrade row: $(grep upgrade "$T/rows")"
grep -q "^drop link usb -> codec (UNSAFE)|True" "$T/rows" && ok "a dropped link is played" \
	|| bad "drop link row: $(grep drop "$T/rows")"

# a guest that fails, one that hangs; a baseline the kernel cannot play; bad usage
KGUEST_VERIFY_MODE=fail expect 2 "a failing guest: exit 2" "$DLSIM" advise "$T/s.json" --verify 2
grep -q "exited with status 1" "$T/err" && [ ! -s "$T/out" ] && ok "it says so, prints no ranking" \
	|| bad "failing guest: $(cat "$T/err")"
KGUEST_VERIFY_MODE=hang expect 2 "a hung guest, --kernel-timeout 1: exit 2" \
	"$DLSIM" advise "$T/s.json" --verify 2 --kernel-timeout 1
grep -q "did not power off within 1 s" "$T/err" && ok "the timeout is named" || bad "hang: $(cat "$T/err")"
KGUEST_VERIFY_MODE=hang "$DLSIM" advise "$T/s.json" --verify 2 >"$T/out" 2>"$T/err" &
pid=$!
# Ctrl-C once the (hung) guest runs: a child of dlsim, after the handler is set
wait_caught $pid
i=0
until pgrep -P $pid >/dev/null || [ $i -ge 600 ]; do sleep 0.1; i=$((i + 1)); done
signal_wait INT $pid
# heard during the boot, not at --kernel-timeout (180 s): 10 s leaves a loaded machine room
[ "$rc" = 130 ] && [ "$ms" -lt 10000 ] && ok "Ctrl-C during the boot: exit 130 in $ms ms" \
	|| bad "Ctrl-C: exit $rc after $ms ms"
grep -q "interrupted" "$T/out" && ok "the DES ranking is printed, marked interrupted" || bad "after Ctrl-C: $(cat "$T/out")"
python3 - "$T/s.json" "$T/hp.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["script"] = [{"op": "probe"}, {"op": "suspend"}, {"op": "resume"},
               {"op": "unbind", "device": "gpu", "concurrent": True}]
json.dump(d, open(sys.argv[2], "w"))
EOF
expect 2 "a baseline kernel mode cannot play: exit 2" "$DLSIM" advise "$T/hp.json" --verify 2
grep -q "kernel mode cannot play the baseline: op 4 (unbind) is concurrent" "$T/err" \
	&& ok "it says why" || bad "unplayable baseline: $(cat "$T/err")"
# the DES under the guest's conditions: its cost profile, probe from a module
base() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(d["profile"], d["probe_context"], d["baseline_makespan_ns"]["probe"], d["baseline_makespan_ns"]["suspend"])' "$T/out"; }
expect 0 "advise (hardware, boot)" "$DLSIM" advise "$T/s.json" --json
b0=$(base)
expect 0 "advise --profile guest --probe-context module" "$DLSIM" advise "$T/s.json" --json \
	--profile guest --probe-context module
b1=$(base)
[ "$b0" = "hardware boot 13006575 3610000" ] && [ "${b1% *}" != "guest module 13006575" ] \
	&& [ "${b1##* }" -gt 3610000 ] && ok "the guest's costs and module probing move the baseline ($b0 -> $b1)" \
	|| bad "--profile/--probe-context: $b0 -> $b1"
expect 0 "the table hints at the guest's conditions" "$DLSIM" advise "$T/s.json" --verify 1
grep -q -- "--profile guest --probe-context module predicts for that guest" "$T/out" && ok "it does" \
	|| bad "no hint"
expect 0 "no hint under them" "$DLSIM" advise "$T/s.json" --verify 1 --profile guest --probe-context module
grep -q "predicts for that guest" "$T/out" && bad "a hint under --profile guest" || ok "none"
expect 2 "--profile bogus" "$DLSIM" advise "$T/s.json" --profile bogus
expect 2 "--probe-context bogus" "$DLSIM" advise "$T/s.json" --probe-context bogus
expect 2 "--kernel 5.4" "$DLSIM" advise "$T/s.json" --verify 2 --kernel 5.4
expect 2 "--kernel without --verify" "$DLSIM" advise "$T/s.json" --kernel 6.12
expect 2 "--verify 0" "$DLSIM" advise "$T/s.json" --verify 0
finish cli_advise_verify
