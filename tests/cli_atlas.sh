#!/bin/sh
# The latency atlas (issue 32): `dlsim atlas` prints what it knows and from
# which log; a lookup falls back from the driver to the subsystem to none;
# import-dtb gives devices the atlas's figures with their provenance; and the
# committed atlas is what `dlsim atlas --regen` makes of ../shared/real.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

# a small atlas of known figures: a driver with suspend only, a subsystem
# with suspend and resume
cat >"$T/a.json" <<'J'
{ "format": "dlsim-atlas/1", "logs": [ {"file": "x.txt"} ],
  "entries": [
    {"kind": "driver", "name": "foo-i2c", "phases": {
      "suspend": {"n": 3, "median_ns": 700000, "p90_ns": 900000, "from": [{"log": "x.txt", "lines": [10, 30], "n": 3}]}}},
    {"kind": "subsystem", "name": "i2c", "phases": {
      "suspend": {"n": 2, "median_ns": 5000, "p90_ns": 6000, "from": [{"log": "x.txt", "lines": [40, 41], "n": 2}]},
      "resume": {"n": 2, "median_ns": 8000, "p90_ns": 9000, "from": [{"log": "x.txt", "lines": [50, 51], "n": 2}]}}}
  ] }
J
expect 0 "atlas DRIVER --node" "$DLSIM" atlas foo-i2c --node /soc/i2c@1000 --file "$T/a.json"
grep -Eq '^driver +foo-i2c +suspend +3 +0\.700 ms +0\.900 ms +x\.txt:10-30 \(3\)' "$T/out" \
	&& ok "the driver's own figure, with its log and lines" || { bad "driver figure"; cat "$T/out"; }
grep -Eq '^subsystem +i2c +resume +2 +0\.008 ms' "$T/out" \
	&& ok "a phase the driver lacks falls back to its subsystem" || { bad "subsystem fallback"; cat "$T/out"; }
expect 0 "atlas - --node (no driver)" "$DLSIM" atlas - --node i2c@2000 --file "$T/a.json"
grep -Eq '^subsystem +i2c +suspend +2 +0\.005 ms' "$T/out" && ok "no driver: the subsystem" \
	|| { bad "no-driver fallback"; cat "$T/out"; }
expect 0 "atlas of a node named by function" "$DLSIM" atlas - --node /vcc-main-i2c@7 --file "$T/a.json"
grep -Eq '^subsystem +i2c +resume ' "$T/out" && ok "a generic name's last word is its subsystem" \
	|| { bad "last-word fallback"; cat "$T/out"; }
expect 0 "atlas of an unknown device" "$DLSIM" atlas bar --node /soc/mmc@3000 --file "$T/a.json"
grep -q 'in no log' "$T/out" && ! grep -q '^driver\|^subsystem' "$T/out" \
	&& ok "neither: the scenario's own guess" || { bad "unknown device"; cat "$T/out"; }
expect 2 "a malformed atlas is refused" "$DLSIM" atlas --file "$T/out"
printf '{"format": "dlsim-atlas/1", "logs": [], "entries": [{"kind": "x"}]}' >"$T/bad.json"
expect 2 "an atlas entry of no kind is refused" "$DLSIM" atlas --file "$T/bad.json"
grep -q 'bad.json:1:[0-9]*: entries\[0\]: expected' "$T/err" && ok "the error names the line, column and entry" \
	|| bad "error: $(cat "$T/err")"

# the built-in atlas: a Pixel 6 driver, with its log
expect 0 "atlas exynos5-hsi2c" "$DLSIM" atlas exynos5-hsi2c
grep -Eq '^driver +exynos5-hsi2c +suspend_noirq +6 .*pixel6-v616rc4-suspend-initcall\.txt:[0-9]+-[0-9]+ \(6\)' \
	"$T/out" && ok "built in: a driver of the Pixel 6 log" || { bad "built-in driver"; cat "$T/out"; }
expect 0 "atlas lists everything" "$DLSIM" atlas
grep -q '^latency atlas: [1-9][0-9]* drivers, [1-9][0-9]* subsystems, from 4 logs' "$T/out" \
	&& ok "the listing's headline" || { bad "listing"; head -3 "$T/out"; }

# import-dtb draws from it: a driver the Pixel 6 log has (exynos5-hsi2c), a
# driver in no log whose subsystem is in one (dw-apb-uart: serial), and a
# compatible without a driver (never binds: no callbacks, nothing measured)
if command -v dtc >/dev/null; then
	cat >"$T/b.dts" <<'D'
/dts-v1/;
/ { model = "atlas test"; #address-cells = <1>; #size-cells = <1>;
    i2c@10d50000 { compatible = "samsung,exynosautov9-hsi2c"; reg = <0x10d50000 0x100>; };
    serial@fe650000 { compatible = "snps,dw-apb-uart"; reg = <0xfe650000 0x100>; };
    mystery@1000 { compatible = "acme,mystery"; reg = <0x1000 0x10>; };
};
D
	dtc -q -I dts -O dtb -o "$T/b.dtb" "$T/b.dts"
	expect 0 "import-dtb" "$DLSIM" import-dtb "$T/b.dtb"
	python3 - "$T/out" "$SRC/sim/measure/atlas.json" <<'P' && ok "import-dtb: the driver's figures, else the subsystem's, and where they came from" \
		|| bad "import-dtb atlas"
import json, sys
d = {x["name"]: x for x in json.load(open(sys.argv[1]))["devices"]}
atlas = {(e["kind"], e["name"]): e["phases"] for e in json.load(open(sys.argv[2]))["entries"]}
i2c, uart, none = d["/i2c@10d50000"], d["/serial@fe650000"], d["/mystery@1000"]
fig = atlas[("driver", "exynos5-hsi2c")]["suspend_noirq"]
assert i2c["x-driver"] == "exynos5-hsi2c" and i2c["suspend_noirq"] == fig["median_ns"], i2c
assert i2c["x-latency"]["suspend_noirq"].startswith(
    "driver exynos5-hsi2c: median of %d, pixel6-v616rc4-suspend-initcall.txt:" % fig["n"]), i2c
assert uart["x-driver"] == "dw-apb-uart" and ("driver", "dw-apb-uart") not in atlas, uart
assert uart["suspend"] == atlas[("subsystem", "serial")]["suspend"]["median_ns"], uart
assert uart["x-latency"]["suspend"].startswith("subsystem serial: "), uart
assert "x-latency" not in none and none["probe"] == 0, none
P
	# a board's own log still overrides the atlas (import-log --into)
	"$DLSIM" import-dtb --kernel 6.12 "$T/b.dtb" >"$T/b.json" 2>/dev/null
	printf '[    1.000000] probe of fe650000.serial returned 0 after 9000 usecs\n' >"$T/own.log"
	expect 0 "import-log --into" "$DLSIM" import-log "$T/own.log" --into "$T/b.json"
	python3 - "$T/out" <<'P' && ok "the board's own log overrides the atlas" || bad "import-log --into over the atlas"
import json, sys
uart = {x["name"]: x for x in json.load(open(sys.argv[1]))["devices"]}["/serial@fe650000"]
assert uart["probe"] in ("9000us", 9000000), uart
assert uart["x-latency"]["suspend"].startswith("subsystem serial: "), uart
P
	# sweep --dtbs imports the same way: its run takes what import-dtb's scenario takes
	ns_run=$("$DLSIM" run "$T/b.json" --order sync --kernel 6.12 --no-log --json |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["makespan_ns"])')
	expect 0 "sweep --dtbs" "$DLSIM" sweep --dtbs "$T/b.dtb" --orders sync --kernel 6.12 --db "$T/sw.db"
	got=$(sqlite3 "$T/sw.db" 'SELECT makespan_ns FROM runs')
	[ -n "$ns_run" ] && [ "$got" = "$ns_run" ] && ok "sweep --dtbs draws from the atlas too ($got ns)" \
		|| bad "sweep's makespan $got, import-dtb's scenario's $ns_run"
else
	echo "skip: no dtc"
fi

# the committed atlas is the one the real logs give
REAL=$SRC/../shared/real
[ -d "$REAL" ] || REAL=/work/shared/real
if [ -d "$REAL" ]; then
	expect 0 "atlas --regen" "$DLSIM" atlas --regen "$REAL"
	cmp -s "$T/out" "$SRC/sim/measure/atlas.json" && ok "the committed atlas is up to date" \
		|| bad "sim/measure/atlas.json differs from 'dlsim atlas --regen $REAL' (make atlas)"
else
	echo "skip: no shared/real"
fi
# an empty value names its option, however it was given (not "--node=")
for o in --node --file --regen; do
	expect 2 "atlas x $o=" "$DLSIM" atlas x "$o="
	grep -qx "dlsim atlas: $o needs a value" "$T/err" && ok "$o= names $o" || bad "$o=: $(cat "$T/err")"
done
expect 2 "atlas --regen of a directory without the logs" "$DLSIM" atlas --regen "$T"
grep -q 'pixel6-v616rc4-suspend-initcall.txt' "$T/err" && ok "names the missing log" || bad "error: $(cat "$T/err")"
finish cli_atlas
