#!/bin/sh
# dlsim import-log reads the prefixes bug reports carry: the real pm-graph S3
# dmesg re-prefixed as kern.log/syslog, journalctl -k (default), dmesg -T,
# dmesg -x and with "<6>" printk levels imports to the same devices,
# callbacks and line counts as the plain file; the wall-clock-only formats
# say they have no time stamps; modern lines (from the Pixel 6 log) with each
# prefix, written below.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

need_real
S3="$REAL/pmgraph-skynet-mem-dmesg.txt"

# counts: "N lines, S skipped" and "D devices, C PM callbacks"
counts() { grep -o '[0-9]* lines, [0-9]* skipped\|[0-9]* devices, [0-9]* PM callbacks' "$T/err" | tr '\n' ' '; }
expect 0 "plain S3 dmesg" "$DLSIM" import-log "$S3"
plain=$(counts)
[ "$plain" = "708 lines, 139 skipped 141 devices, 278 PM callbacks " ] || bad "plain: '$plain'"

while read -r name sedexpr; do
	sed -E "2,\$$sedexpr" "$S3" >"$T/$name.log"
	expect 0 "$name" "$DLSIM" import-log "$T/$name.log"
	got=$(counts)
	[ "$got" = "$plain" ] || { bad "$name: '$got', expected '$plain'"; head -3 "$T/$name.log"; }
	grep -q "lines lost" "$T/err" && bad "$name: the prefix is not garbage (no lines lost)"
	cp "$T/out" "$T/$name.json"
	expect 0 "$name: the scenario runs" "$DLSIM" run "$T/$name.json" --no-log
done <<'L'
level s/^/<6>/
kernlog s/^/Dec  4 18:35:38 skynet kernel: /
rsyslog s/^/2026-12-04T18:35:38.123456+00:00 skynet kernel: /
dmesgx s/^/kern  :info  : /
dmesgx_level s/^/<6>kern  :info  : /
journal s/^\[ *[0-9.]+\] /Dec 04 18:35:38 skynet kernel: /
dmesgT s/^\[ *[0-9.]+\] /[Fri Dec  4 18:35:38 2026] /
L
# the timed prefixes keep the time stamps: the same main-thread gap and order
for name in level kernlog rsyslog dmesgx; do
	grep -q '"main_gap_ns": 2' "$T/$name.json" || bad "$name: the [ts] after the prefix is read"
done
# wall clocks to the second: said so, not invented
for name in journal dmesgT; do
	"$DLSIM" import-log "$T/$name.log" 2>"$T/err" >/dev/null
	grep -q "569 recognised lines have no time stamp, only a wall clock to the second" "$T/err" ||
		{ bad "$name: says its lines have no time stamp"; cat "$T/err"; }
	grep -q '"lines_untimed": 569' "$T/$name.json" || bad "$name: x-log.lines_untimed"
	grep -q '"main_gap_ns": -1' "$T/$name.json" || bad "$name: no gap measured from wall clocks"
done

# modern lines of the Pixel 6 log, one prefix each
cat >"$T/modern.log" <<'L'
<6>[ 7915.121617][T29333] platform cs_trex2: PM: calling platform_pm_suspend @ 29333, parent: none
<6>[ 7915.121938][T29333] platform cs_trex2: PM: platform_pm_suspend returned 0 after 2 usecs
kern  :info  : [ 7915.122246][T29333] platform cs_trex1: PM: calling platform_pm_suspend @ 29333, parent: none
kern  :info  : [ 7915.122545][T29333] platform cs_trex1: PM: platform_pm_suspend returned 0 after 2 usecs
Dec  4 18:35:38 oriole kernel: [ 7915.122846][T29333] s51xx 0000:01:00.0: PM: calling pci_pm_suspend @ 29333, parent: 0000:00:00.0
Dec  4 18:35:38 oriole kernel: [ 7915.123146][T29333] s51xx 0000:01:00.0: PM: pci_pm_suspend returned 0 after 7 usecs
Dec 04 18:35:38 oriole kernel: lwis-i2c eeprom@2: PM: calling platform_pm_suspend @ 29333, parent: none
Dec 04 18:35:38 oriole kernel: lwis-i2c eeprom@2: PM: platform_pm_suspend returned 0 after 1596 usecs
[Fri Dec  4 18:35:39 2026] PM: suspend of devices complete after 471.873 msecs
L
expect 0 "modern lines with prefixes" "$DLSIM" import-log "$T/modern.log"
grep -q "9 lines, 0 skipped" "$T/err" && grep -q "5 devices, 4 PM callbacks" "$T/err" &&
	grep -q "1 phase totals" "$T/err" || { bad "modern: 9 lines, 4 callbacks, 1 total"; cat "$T/err"; }
grep -q '"eeprom@2"' "$T/out" && grep -q '"suspend": "1596us"' "$T/out" || bad "modern: eeprom@2 timed by its usecs"
grep -q '"name": "0000:01:00.0"' "$T/out" && grep -q '"parent": "0000:00:00.0"' "$T/out" || bad "modern: s51xx read"
grep -q "3 recognised lines have no time stamp" "$T/err" || bad "modern: 3 untimed lines"
# not a prefix: another process's syslog line, a bracket that is not a clock
printf 'Dec  4 18:35:38 oriole systemd-sleep: foo bar: PM: calling x_suspend @ 7, parent: none\n[Fri] foo bar: PM: calling x_suspend @ 7, parent: none\n' >"$T/noprefix.log"
expect 2 "other syslog lines are not kernel lines" "$DLSIM" import-log "$T/noprefix.log"
finish cli_import_log_prefixes
