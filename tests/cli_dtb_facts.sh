#!/bin/sh
# Driver facts through the CLI: import-dtb's default (--async driver) makes an
# i2c client async by its bus and a compatible without a driver never bind;
# dlsim sweep --dtbs takes the same --kernel, --async, --drivers and
# --probe-context: they reach the import (devices.async in the log), the engine
# (runs.kernel, runs.probe_context) and the resume key (other options: other
# runs); an order the kernel did not run and bad values exit 2.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
command -v dtc >/dev/null 2>&1 || { echo "SKIP: dtc not installed"; exit 0; }
command -v sqlite3 >/dev/null 2>&1 || { echo "SKIP: sqlite3 not installed"; exit 0; }
: "$SRC"

mkdir -p "$T/dt"
cat >"$T/board.dts" <<'DTS'
/dts-v1/;
/ {
	model = "facts board";
	#address-cells = <1>; #size-cells = <1>;
	reg1: regulator { compatible = "regulator-fixed"; regulator-name = "vcc"; };
	soc { compatible = "simple-bus"; #address-cells = <1>; #size-cells = <1>; ranges;
		nod: qos@1000 { compatible = "acme,no-such-qos"; reg = <0x1000 4>; #clock-cells = <0>; };
		i2c@2000 { compatible = "rockchip,rk3399-i2c"; reg = <0x2000 4>; clocks = <&nod>;
			#address-cells = <1>; #size-cells = <0>;
			pmic@1b { compatible = "rockchip,rk808"; reg = <0x1b>; vcc1-supply = <&reg1>; }; };
	};
};
DTS
dtc -q -I dts -O dtb -o "$T/dt/board.dtb" "$T/board.dts" || { bad "dtc"; finish cli_dtb_facts; exit 1; }

expect 0 "import-dtb (driver facts by default)" "$DLSIM" import-dtb "$T/dt/board.dtb"
cp "$T/out" "$T/board.json"
python3 - "$T/board.json" <<'PY' && ok "pmic async by the i2c bus, qos never binds, its link relaxed" || bad "driver facts in the scenario"
import json, sys
sc = json.load(open(sys.argv[1]))
d = {x["name"]: x for x in sc["devices"]}
p, q = d["/soc/i2c@2000/pmic@1b"], d["/soc/qos@1000"]
assert p["x-driver"] == "rk8xx-i2c" and p["async"] is True and "i2c bus" in p["x-async"], p
assert q["x-driver"] is None and q["x-binds"] is False and q["probe"] == 0, q
l = [x for x in sc["links"] if x["consumer"] == "/soc/i2c@2000" and x["supplier"] == "/soc/qos@1000"]
assert len(l) == 1 and l[0]["flags"] == ["INFERRED", "SYNC_STATE_ONLY"] and "x-relaxed" in l[0], l
PY
grep -q 'drivers (6.12): 4 of 5 devices have one in the table, 4 bind, 1 never bind (0 not built), 1 async; 1 links relaxed' "$T/err" \
	&& ok "import-dtb's driver summary" || { bad "driver summary"; cat "$T/err"; }
expect 0 "validate it" "$DLSIM" validate "$T/board.json"

# the sweep: defaults (each order's kernel, 6.12's import, driver facts, boot)
expect 0 "sweep --dtbs, defaults" "$DLSIM" sweep --dtbs "$T/dt" --orders sync --db "$T/s.db" --jobs 1
# (the sweep leaves devices in its shards: --compact brings them into s.db)
q() { "$DLSIM" sweep --compact "$T/s.db" >/dev/null && sqlite3 "$T/s.db" "$1"; }
[ "$(q "SELECT kernel || ' ' || probe_context FROM runs")" = "6.12 boot" ] \
	&& ok "runs.kernel 6.12, probe_context boot" || bad "defaults: $(q 'SELECT kernel, probe_context FROM runs')"
[ "$(q "SELECT name FROM devices WHERE async = 1")" = "/soc/i2c@2000/pmic@1b" ] \
	&& ok "sweep imports with driver facts: the pmic alone async" || bad "async devices: $(q 'SELECT name, async FROM devices')"
# the same options again: nothing to do; other options: new runs
expect 0 "sweep again" "$DLSIM" sweep --dtbs "$T/dt" --orders sync --db "$T/s.db" --jobs 1
grep -q "1 already in" "$T/out" && ok "the same sweep is skipped" || { bad "resume"; cat "$T/out"; }
expect 0 "sweep --kernel 7.3 --async all --probe-context module" "$DLSIM" sweep --dtbs "$T/dt" \
	--orders kernel-async-v2 --kernel 7.3 --async all --probe-context module --db "$T/s.db" --jobs 1
grep -q "0 already in" "$T/out" && ok "other options are other runs" || { bad "new runs"; cat "$T/out"; }
[ "$(q "SELECT kernel || ' ' || probe_context FROM runs WHERE order_name = 'kernel-async-v2'")" = "7.3 module" ] \
	&& ok "--kernel and --probe-context reach the run" || bad "7.3 run: $(q 'SELECT kernel, probe_context FROM runs')"
[ "$(q "SELECT count(*) FROM devices d JOIN runs r USING (run_id) WHERE r.order_name = 'kernel-async-v2' AND d.async = 0")" = 0 ] \
	&& ok "--async all reaches the import" || bad "--async all: $(q 'SELECT run_id, name, async FROM devices')"
expect 0 "sweep --async none" "$DLSIM" sweep --dtbs "$T/dt" --orders sync --async none --db "$T/s.db" --jobs 1
[ "$(q "SELECT count(*) FROM devices d JOIN runs r USING (run_id) WHERE r.run_id = (SELECT max(run_id) FROM runs) AND d.async = 1")" = 0 ] \
	&& ok "--async none reaches the import" || bad "--async none"
expect 2 "sweep --kernel 7.3 with kernel-async (a pair no kernel ran)" "$DLSIM" sweep --dtbs "$T/dt" \
	--orders kernel-async --kernel 7.3 --db "$T/x.db"
expect 2 "sweep --kernel 5.4" "$DLSIM" sweep --dtbs "$T/dt" --orders sync --kernel 5.4 --db "$T/x.db"
expect 2 "sweep --async some" "$DLSIM" sweep --dtbs "$T/dt" --orders sync --async some --db "$T/x.db"
expect 2 "sweep --probe-context late" "$DLSIM" sweep --dtbs "$T/dt" --orders sync --probe-context late --db "$T/x.db"
[ ! -e "$T/x.db" ] && ok "bad options write nothing" || bad "x.db written"
finish cli_dtb_facts
