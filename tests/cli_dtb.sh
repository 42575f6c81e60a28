#!/bin/sh
# dlsim import-dtb: a compiled .dts imports to a scenario that validates,
# with fw_devlink's flags and sync devices unless --async all; bad options,
# garbage and truncated files exit 2.  DTBs under /var/cache/dlsim-dtbs
# (e.g. Debian's arm64 ones), when present, must each import and validate.
DLSIM=$1
SRCDIR=$2
fail=0
T=$(mktemp -d /tmp/dlsim-cli-dtb.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
command -v dtc >/dev/null 2>&1 || { echo "SKIP: dtc not installed"; exit 0; }
cat >"$T/soc.dts" <<'DTS'
/dts-v1/;
/ {
	model = "cli tiny";
	#address-cells = <1>; #size-cells = <1>;
	reg1: regulator { compatible = "regulator-fixed"; };
	soc { compatible = "simple-bus"; #address-cells = <1>; #size-cells = <1>; ranges;
		clk: clock@1000 { compatible = "x,clk"; reg = <0x1000 4>; #clock-cells = <1>; };
		a@2000 { compatible = "x,a"; reg = <0x2000 4>; clocks = <&clk 0>; vdd-supply = <&reg1>;
			port { a_ep: endpoint { remote-endpoint = <&b_ep>; }; }; };
		b@3000 { compatible = "x,b"; reg = <0x3000 4>;
			port { b_ep: endpoint { remote-endpoint = <&a_ep>; }; }; };
	};
};
DTS
check() { # expected-status description command...
	want=$1; shift; what=$1; shift
	"$@" >"$T/out" 2>"$T/err"; got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL: $what: exit $got, expected $want"; cat "$T/err"; fail=$((fail + 1))
	else
		echo "ok: $what"
	fi
}
dtc -q -I dts -O dtb -o "$T/soc.dtb" "$T/soc.dts" || { echo "FAIL: dtc"; exit 1; }
check 0 "import-dtb --help" "$DLSIM" import-dtb --help
check 2 "import-dtb without file" "$DLSIM" import-dtb
check 0 "import a compiled dts" "$DLSIM" import-dtb "$T/soc.dtb"
cp "$T/out" "$T/soc.json"
grep -q '"CYCLE"' "$T/soc.json" || { echo "FAIL: no CYCLE link"; fail=$((fail + 1)); }
grep -q 'on cycles' "$T/err" || { echo "FAIL: no cycle count on stderr"; fail=$((fail + 1)); }
grep -q 'gate probe' "$T/err" || { echo "FAIL: no blocking-link count on stderr"; fail=$((fail + 1)); }
check 0 "validate the imported scenario" "$DLSIM" validate "$T/soc.json"
# fw_devlink=on's flags on an own-node link; devices sync unless --async all
grep -q '"AUTOPROBE_CONSUMER"' "$T/soc.json" || { echo "FAIL: no AUTOPROBE_CONSUMER link"; fail=$((fail + 1)); }
grep -q '"SYNC_STATE_ONLY"' "$T/soc.json" || { echo "FAIL: cycle links not SYNC_STATE_ONLY"; fail=$((fail + 1)); }
grep -q '"async": false' "$T/soc.json" || { echo "FAIL: devices not sync by default"; fail=$((fail + 1)); }
check 0 "import-dtb --async all" "$DLSIM" import-dtb --async all "$T/soc.dtb"
grep -q '"async": true' "$T/out" || { echo "FAIL: --async all did not make devices async"; fail=$((fail + 1)); }
check 0 "import-dtb --async=none --kernel 7.3" "$DLSIM" import-dtb --async=none --kernel 7.3 "$T/soc.dtb"
check 2 "import-dtb --async sometimes" "$DLSIM" import-dtb --async sometimes "$T/soc.dtb"
grep -q 'expected driver, none or all' "$T/err" || { echo "FAIL: --async error does not say what is expected"; fail=$((fail + 1)); }
check 2 "import-dtb --drivers some" "$DLSIM" import-dtb --drivers some "$T/soc.dtb"
check 0 "import-dtb --async driver --drivers all" "$DLSIM" import-dtb --async driver --drivers all "$T/soc.dtb"
grep -q '"x-driver-facts": "--drivers all"' "$T/out" || { echo "FAIL: --drivers all not recorded"; fail=$((fail + 1)); }
check 2 "import-dtb --kernel 5.4" "$DLSIM" import-dtb --kernel 5.4 "$T/soc.dtb"
check 2 "import-dtb --kernel without a value" "$DLSIM" import-dtb "$T/soc.dtb" --kernel
head -c 4096 /dev/urandom >"$T/garbage"
check 2 "garbage file" "$DLSIM" import-dtb "$T/garbage"
head -c 100 "$T/soc.dtb" >"$T/trunc.dtb"
check 2 "truncated dtb" "$DLSIM" import-dtb "$T/trunc.dtb"
check 2 "missing file" "$DLSIM" import-dtb "$T/nonexistent.dtb"
# A real board, when cached: RK3399's CRU and PMU CRU are CLK_OF_DECLAREd and its GIC-v3
# IRQCHIP_DECLAREd: none is a device, nothing links to them.
rk=$(find /var/cache/dlsim-dtbs -name rk3399-rockpro64.dtb 2>/dev/null | head -1)
if [ -n "$rk" ]; then
	check 0 "import rk3399-rockpro64" "$DLSIM" import-dtb "$rk"
	for n in /clock-controller@ff760000 /clock-controller@ff750000 /interrupt-controller@fee00000; do
		if grep -q "\"$n\"" "$T/out"; then echo "FAIL: rk3399: $n is a device or a supplier"; fail=$((fail + 1)); fi
	done
	grep -q '"name": "/syscon@ff770000"' "$T/out" || { echo "FAIL: rk3399: GRF missing"; fail=$((fail + 1)); }
	grep -q '[1-9][0-9]* early-initialised nodes, [1-9][0-9]* links to them not made' "$T/err" ||
		{ echo "FAIL: rk3399: no early-initialised nodes counted"; cat "$T/err"; fail=$((fail + 1)); }
	# driver facts (6.12's table): the PMIC is an i2c client (async by its bus), its
	# driver built in; the I2C controller a module, sync; a QoS node has no driver
	grep -q '"x-driver-facts": "linux-source-6.12 and config-6.12' "$T/out" ||
		{ echo "FAIL: rk3399: no x-driver-facts"; fail=$((fail + 1)); }
	python3 - "$T/out" <<'PY' || fail=$((fail + 1))
import json, sys
d = {x["name"]: x for x in json.load(open(sys.argv[1]))["devices"]}
bad = []
p = d.get("/i2c@ff3c0000/pmic@1b", {})
if p.get("x-driver") != "rk8xx-i2c" or p.get("async") is not True: bad.append("pmic %s" % p)
i = d.get("/i2c@ff3c0000", {})
if i.get("x-driver") != "rk3x-i2c" or i.get("async", False) or "module" not in i.get("x-driver-build", ""):
    bad.append("i2c %s" % i)
q = d.get("/qos@ffa58000", {})
if q.get("x-binds") is not False or q.get("x-driver", 0) is not None: bad.append("qos %s" % q)
for b in bad: print("FAIL: rk3399 driver facts:", b)
sys.exit(1 if bad else 0)
PY
	grep -q 'drivers (6.12): [0-9]* of [0-9]* devices have one in the table, [0-9]* bind, [1-9][0-9]* never bind' "$T/err" ||
		{ echo "FAIL: rk3399: no driver summary"; cat "$T/err"; fail=$((fail + 1)); }
fi
if [ -d /var/cache/dlsim-dtbs ]; then
	find /var/cache/dlsim-dtbs -name '*.dtb' | while read -r f; do
		if "$DLSIM" import-dtb "$f" >"$T/real.json" 2>"$T/err" &&
		   "$DLSIM" validate "$T/real.json" >/dev/null 2>>"$T/err"; then
			echo x >>"$T/passed"
		else
			echo "FAIL: $f"; cat "$T/err"; echo x >>"$T/failed"
		fi
	done
	echo "ok: $( [ -f "$T/passed" ] && wc -l <"$T/passed" || echo 0) real DTBs imported and validated"
	[ -f "$T/failed" ] && fail=$((fail + $(wc -l <"$T/failed")))
else
	echo "skip: /var/cache/dlsim-dtbs absent (no real DTBs to import)"
fi
: "$SRCDIR"
[ "$fail" = 0 ] || { echo "$fail failure(s)"; exit 1; }
exit 0
