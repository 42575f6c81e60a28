#!/bin/sh
# dlsim import-log keys devices by (driver or bus, name), as the kernel
# prints them: 0:0:0:0 of sd, scsi_disk and bsg are three devices, each with
# its own samples; pm-graph's S3 has PNP0C0B:00..04 and PNP0C0C:00 both as
# platform devices and as ACPI devices (fan, button) with other parents.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

need_real

# the Pixel 6's sd 0:0:0:0 lines, and its class devices named alike
cat >"$T/scsi.log" <<'L'
[ 7915.043119][T29333] sd 0:0:0:0: PM: calling scsi_bus_suspend @ 29333, parent: target0:0:0
[ 7915.054275][T29333] sd 0:0:0:0: PM: scsi_bus_suspend returned 0 after 11010 usecs
[ 7915.054300][T29333] scsi_disk 0:0:0:0: PM: calling class_suspend @ 29333, parent: 0:0:0:0
[ 7915.054310][T29333] scsi_disk 0:0:0:0: PM: class_suspend returned 0 after 5 usecs
[ 7915.054320][T29333] bsg 0:0:0:0: PM: calling class_suspend @ 29333, parent: 0:0:0:0
[ 7915.054330][T29333] bsg 0:0:0:0: PM: class_suspend returned 0 after 7 usecs
[ 7915.288662][T29333] PM: suspend of devices complete after 471.873 msecs
L
expect 0 "sd, scsi_disk and bsg 0:0:0:0" "$DLSIM" import-log "$T/scsi.log"
grep -q "4 devices, 3 PM callbacks" "$T/err" || { bad "three devices 0:0:0:0 and target0:0:0"; cat "$T/err"; }
cp "$T/out" "$T/scsi.json"
for kv in '"name": "sd 0:0:0:0"' '"name": "scsi_disk 0:0:0:0"' '"name": "bsg 0:0:0:0"' '"suspend": "11010us"' '"suspend": "5us"' '"suspend": "7us"' '"parent": "sd 0:0:0:0"'; do
	grep -q "$kv" "$T/scsi.json" || { bad "scsi: $kv"; cat "$T/scsi.json"; }
done
grep -q '"empirical"' "$T/scsi.json" && bad "scsi: no device mixes another's samples"
expect 0 "the three validate" "$DLSIM" validate "$T/scsi.json"

# pm-graph S3 (3.15): the platform and the ACPI PNP0C0B:00 are two devices
expect 0 "skynet ftrace" "$DLSIM" import-log "$REAL/pmgraph-skynet-mem-ftrace.txt"
grep -q '"name": "platform PNP0C0B:00"' "$T/out" && grep -q '"name": "fan PNP0C0B:00"' "$T/out" &&
	grep -q '"name": "button PNP0C0C:00"' "$T/out" || bad "ftrace: platform and fan PNP0C0B:00"
grep -q "parent '.*' here, '.*' before" "$T/err" && bad "ftrace: no parent contradictions left"
expect 0 "skynet dmesg" "$DLSIM" import-log "$REAL/pmgraph-skynet-mem-dmesg.txt"
grep -q '"name": "PNP0C0B:00#2"' "$T/out" || bad "3.x: a second PNP0C0B:00 with another parent"
grep -q "parent '.*' here, '.*' before" "$T/err" && bad "dmesg: no parent contradictions left"
grep -q '"empirical"' "$T/out" && bad "dmesg: one cycle, no device with two samples in a phase"
finish cli_import_log_devices
