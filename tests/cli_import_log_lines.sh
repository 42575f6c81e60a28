#!/bin/sh
# dlsim import-log, single lines: Ubuntu's per-device "PM: suspend of drv:X
# dev:Y complete after N msecs" is a callback time; junk the console left
# at a line's end is not part of a parent's name; a cycle with totals but
# no callbacks is not replayed as -100%.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

need_real

# Ubuntu kernels time each device in its phase (drv may hold spaces or be empty)
cat >"$T/ubuntu.log" <<'L'
[  550.702791] PM: suspend entry (deep)
[  550.850411] PM: suspend of drv:i2c_hid dev:i2c-ELAN0001:00 complete after 12.345 msecs
[  550.850511] PM: suspend of drv:brcm gps spi dev:spi5.0 complete after 0.100 msecs
[  550.850611] PM: suspend of drv: dev:platform complete after 0.002 msecs
[  550.860000] PM: suspend of devices complete after 20.000 msecs
[  550.870000] PM: late suspend of drv:i2c_hid dev:i2c-ELAN0001:00 complete after 1.500 msecs
[  550.870100] PM: late suspend of devices complete after 1.600 msecs
[  550.875000] PM: noirq suspend of drv:i2c_hid dev:i2c-ELAN0001:00 complete after 0.500 msecs
[  550.875100] PM: noirq suspend of devices complete after 0.600 msecs
[  550.880000] PM: noirq resume of drv:i2c_hid dev:i2c-ELAN0001:00 complete after 0.250 msecs
[  550.880100] PM: noirq resume of devices complete after 0.300 msecs
[  550.890000] PM: resume of drv:i2c_hid dev:i2c-ELAN0001:00 complete after 30.000 msecs
[  550.890100] PM: resume of devices complete after 30.100 msecs
L
expect 0 "Ubuntu's per-device lines" "$DLSIM" import-log "$T/ubuntu.log"
grep -q "3 devices, 7 PM callbacks" "$T/err" && grep -q "1 skipped" "$T/err" || { bad "ubuntu: 3 devices, 7 callbacks"; cat "$T/err"; }
cp "$T/out" "$T/ubuntu.json"
for kv in '"suspend": "12345us"' '"suspend_late": "1500us"' '"suspend_noirq": "500us"' '"resume_noirq": "250us"' '"resume": "30000us"' '"name": "spi5.0"' '"suspend": "100us"' '"name": "platform"'; do
	grep -q "$kv" "$T/ubuntu.json" || bad "ubuntu: $kv"
done
grep -q "lines lost" "$T/err" && bad "ubuntu: no phase skipped"
expect 0 "ubuntu scenario runs" "$DLSIM" run "$T/ubuntu.json" --no-log

# junk after "parent: P" (a real Pixel 6 line, and its 3.x pm-graph twin)
printf '[ 7915.122846][T29333] s51xx 0000:01:00.0: PM: calling pci_pm_suspend @ 29333, parent: 0000:00:00.0 \372\001garbage\n[ 7915.123146][T29333] s51xx 0000:01:00.0: PM: pci_pm_suspend returned 0 after 7 usecs\n[  550.850408] calling  7-0061+ @ 4122, parent: i2c-7^C\n[  550.850410] call 7-0061+ returned 0 after 1 usecs\n[  550.850413] calling  i2c-7+ @ 4122, parent: 1-1.1\372\n[  550.850415] call i2c-7+ returned 0 after 1 usecs\n' >"$T/junk.log"
expect 0 "junk at a line's end" "$DLSIM" import-log "$T/junk.log"
grep -q '"parent": "0000:00:00.0"' "$T/out" && grep -q '"parent": "i2c-7"' "$T/out" && grep -q '"parent": "1-1.1"' "$T/out" ||
	{ bad "the parents' names end before the junk"; grep parent "$T/out"; }
grep -q "garbage\|\^C" "$T/out" && bad "no junk in a name"
grep -q "5 devices" "$T/err" || { bad "junk: 5 devices"; cat "$T/err"; }

# the real S3 log's totals without its callbacks: nothing to replay, no -100%
grep "PM: suspend entry\|of devices complete" "$REAL/pmgraph-skynet-mem-dmesg.txt" >"$T/totals.log"
expect 0 "replay of totals only" "$DLSIM" import-log "$T/totals.log" --replay
grep -q -- "-100" "$T/out" && { bad "no -100% for a cycle without callbacks"; cat "$T/out"; }
grep -q "phase totals but no callback timed" "$T/out" || { bad "the replay says why it has nothing to replay"; cat "$T/out"; }
# console garbage inside names (the Pixel 6 log's stray bytes): '?', and the scenario is valid JSON
printf '[ 7915.122846][T29333] s51xx 0000:01:\37200.0: PM: calling pci_pm_suspend @ 29333, parent: 0000:00:\37300.0\n[ 7915.123146][T29333] s51xx 0000:01:\37200.0: PM: pci_pm_suspend returned 0 after 7 usecs\n' >"$T/bytes.log"
expect 0 "garbage bytes in names" "$DLSIM" import-log "$T/bytes.log"
cp "$T/out" "$T/bytes.json"
grep -q '"name": "0000:01:?00.0"' "$T/bytes.json" ||
	{ bad "garbage bytes become '?'"; cat "$T/bytes.json"; }
expect 0 "... and validates" "$DLSIM" validate "$T/bytes.json"

# a name longer than a scenario's (255) is cut, and its lines still name one device
long=$(head -c 300 /dev/zero | tr '\0' a)
printf '[    1.000000] probe of %s returned 0 after 90 usecs\n[    2.000100] probe of %s returned 0 after 80 usecs\n' "$long" "$long" >"$T/long.log"
expect 0 "a 300-character name" "$DLSIM" import-log "$T/long.log"
grep -q "1 devices, 0 PM callbacks in 0 cycles, 2 boot probes" "$T/err" ||
	{ bad "a long name: one device, two probes"; cat "$T/err"; }
finish cli_import_log_lines
