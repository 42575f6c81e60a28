#!/bin/sh
# dlsim import-log: every real log of ../shared/real/ in a known format
# imports to a scenario that validates and runs, the others exit 2 naming the
# formats; the replay check predicts the Pixel 6 sync cycle's phase totals and
# pm-graph's S3 suspend within 10%; bad input (a return without its call,
# time going backwards, garbage, no known line) is reported with its line;
# names are data in the JSON; --into overlays by name.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

need_real

# file, devices expected (parents included), callbacks expected
while read -r f ndev ncb; do
	expect 0 "import $f" "$DLSIM" import-log "$REAL/$f"
	cp "$T/out" "$T/$f.json"
	grep -q "skipped (no known format)" "$T/err" || bad "$f: skipped lines are counted"
	got=$(grep -o '[0-9]* devices, [0-9]* PM callbacks' "$T/err")
	[ "$got" = "$ndev devices, $ncb PM callbacks" ] || bad "$f: '$got', expected $ndev devices, $ncb PM callbacks"
	expect 0 "validate the scenario of $f" "$DLSIM" validate "$T/$f.json"
	expect 0 "run the scenario of $f" "$DLSIM" run "$T/$f.json" --order kernel-async-v2 --no-log
done <<'L'
pixel6-v616rc4-suspend-initcall.txt 529 907
pmgraph-skynet-mem-dmesg.txt 141 278
pmgraph-skynet-mem-ftrace.txt 141 341
pmgraph-skynet-disk-dmesg.txt 140 275
rk3588-opi5plus-boot-populate-fwdevlink.txt 31 0
imx8m-spdif-dpm-reorder.txt 4 2
L
grep -q '"async": true' "$T/pmgraph-skynet-mem-dmesg.txt.json" || bad "skynet: async devices (off the main pid)"
grep -q '"async": false' "$T/pmgraph-skynet-mem-dmesg.txt.json" || bad "skynet: sync devices (on the main pid)"
grep -q '"error": -16' "$T/pixel6-v616rc4-suspend-initcall.txt.json" || bad "pixel6: the -16 suspend failure is listed"
# the Pixel file has an aborted async cycle and a sync one: two samples -> empirical
grep -q '"empirical"' "$T/pixel6-v616rc4-suspend-initcall.txt.json" || bad "pixel6: several cycles give empirical latencies"
grep -q '"name": "[^"]*gps spi' "$T/pixel6-v616rc4-suspend-initcall.txt.json" && bad "pixel6: a driver name with spaces leaked into a device name"
grep -q '"x-driver": "brcm gps spi"' "$T/pixel6-v616rc4-suspend-initcall.txt.json" || bad "pixel6: the driver the log names is the device's x-driver"
grep -q '"spi5.0"' "$T/pixel6-v616rc4-suspend-initcall.txt.json" || bad "pixel6: spi5.0 (driver 'brcm gps spi') imported"

# stdin ("-"), read a line at a time: the same scenario as the file's
"$DLSIM" import-log "$REAL/pmgraph-skynet-mem-dmesg.txt" --name n >"$T/file.json" 2>/dev/null
expect 0 "import-log - reads stdin" sh -c '"$1" import-log - --name n <"$2"' sh "$DLSIM" "$REAL/pmgraph-skynet-mem-dmesg.txt"
grep -v '"files"\|pmgraph-skynet-mem-dmesg.txt\|<stdin>' "$T/out" >"$T/stdin.cmp"
grep -v '"files"\|pmgraph-skynet-mem-dmesg.txt\|<stdin>' "$T/file.json" >"$T/file.cmp"
cmp -s "$T/stdin.cmp" "$T/file.cmp" && grep -q '"<stdin>"' "$T/out" || bad "stdin: the same scenario as the file, named <stdin>"
# a line longer than the read chunk (1 MiB) is cut, not a crash; the next line is read
{ head -c 3000000 /dev/zero | tr '\0' x; printf '\n[    1.000000] foo bar: PM: calling x_suspend @ 7, parent: none\n[    1.000100] foo bar: PM: x_suspend returned 0 after 90 usecs\n'; } >"$T/long.log"
expect 0 "a 3 MB line" "$DLSIM" import-log "$T/long.log"
grep -q "3 lines, 1 skipped" "$T/err" && grep -q '"suspend": "90us"' "$T/out" || { bad "a 3 MB line: 3 lines, 1 skipped, the callback after it read"; cat "$T/err"; }

for f in INDEX.md pmgraph-skynet-mem.html pixel6-async-cover-letter.txt rcar-overlay-devlink-diff.txt; do
	expect 2 "$f has no line in a known format" "$DLSIM" import-log "$REAL/$f"
	grep -q "no line in a known format" "$T/err" && grep -q "initcall_debug" "$T/err" ||
		bad "$f: the error names the formats"
done

# replay: Pixel 6 sync cycle, all four totals; pm-graph S3: suspend within 10%
expect 0 "replay pixel6" "$DLSIM" import-log "$REAL/pixel6-v616rc4-suspend-initcall.txt" --replay
grep -q "4 of 4 phase totals predicted within 10%" "$T/out" || { bad "pixel6 replay: 4 of 4"; cat "$T/out"; }
grep -q "console printing" "$T/out" || bad "pixel6 replay says the gap is console printing"
expect 0 "replay skynet ftrace" "$DLSIM" import-log "$REAL/pmgraph-skynet-mem-ftrace.txt" --replay
awk '$1 == "dpm_suspend" { d = $6; sub("%", "", d); if (d + 0 > 10 || d + 0 < -10) exit 1; f = 1 } END { exit !f }' "$T/out" ||
	{ bad "skynet ftrace: dpm_suspend within 10%"; cat "$T/out"; }
expect 0 "replay skynet dmesg" "$DLSIM" import-log "$REAL/pmgraph-skynet-mem-dmesg.txt" --replay
grep -q "^suspend .* ok$" "$T/out" || { bad "skynet dmesg: suspend ok"; cat "$T/out"; }
grep -q "a phase under 1 ms" "$T/out" || bad "skynet dmesg: the early resume miss is explained"
# the main thread idled 51 ms until the HDA controller resumed: a link the log implies
grep -q '"supplier": "0000:00:1b.0"' "$T/pmgraph-skynet-mem-dmesg.txt.json" &&
	grep -q '"x-implied-by": ".*sat idle 51.1.. ms in resume' "$T/pmgraph-skynet-mem-dmesg.txt.json" ||
	bad "skynet: the wait for 0000:00:1b.0 becomes an implied link"
grep -q "^resume .* ok$" "$T/out" || { bad "skynet dmesg: resume ok with the implied link"; cat "$T/out"; }
grep -q '"links"' "$T/pixel6-v616rc4-suspend-initcall.txt.json" && bad "pixel6 (sync cycle): no implied link"

# --with-printing: 'dlsim run' of the result reproduces the logged suspend (471.873 ms)
"$DLSIM" import-log "$REAL/pixel6-v616rc4-suspend-initcall.txt" --with-printing >"$T/p.json" 2>/dev/null
"$DLSIM" run "$T/p.json" --order sync --no-log --json >"$T/p.out" 2>"$T/err" || bad "run --with-printing scenario"
grep -q '"gaps_added": true' "$T/p.json" || bad "--with-printing says so in x-log"

# bad input, with line numbers
printf '[    1.000000] foo bar: PM: calling x_suspend @ 7, parent: none\n[    1.000100] foo bar: PM: x_suspend returned 0 after 90 usecs\n[    1.000200] baz qux: PM: y_suspend returned 0 after 5 usecs\nnonsense\n[    0.100000] foo bar: PM: calling x_resume @ 7, parent: none\n[    0.100100] foo bar: PM: x_resume returned 0 after 9 usecs\n' >"$T/bad.log"
printf '[  100.000000] foo bar: PM: calling x_suspend @ 7, parent: none\n' >>"$T/bad.log"
printf '[  100.000100] foo zed: PM: calling z_suspend @ 7, parent: none\n[  100.000200] foo zed: PM: z_suspend returned 0 after 50 usecs\n' >>"$T/bad.log"
expect 0 "a log with contradictions imports" "$DLSIM" import-log "$T/bad.log"
grep -q "bad.log:3: 'qux' returned without its call" "$T/err" || { bad "return without call, line 3"; cat "$T/err"; }
# ... and is skipped, as said: no sample, counted
grep -q "1 returns without their call skipped" "$T/err" || bad "the orphan return is counted"
grep -q '"orphan_returns": 1' "$T/out" || bad "x-log.orphan_returns"
grep -A3 '"name": "qux"' "$T/out" | grep -q '"suspend"' && bad "the orphan return is not a sample"
grep -q '"error": -16' "$T/pixel6-v616rc4-suspend-initcall.txt.json" || bad "pixel6: a failed orphan return is still a failure"
grep -q "bad.log:5: time goes back" "$T/err" && bad "a 0.9 s step back is not a contradiction"
grep -q "1 skipped" "$T/err" || bad "the nonsense line is counted"
printf '[   10.000000] foo bar: PM: calling x_suspend @ 7, parent: none\n[    1.000000] foo bar: PM: x_suspend returned 0 after 9 usecs\n' >"$T/back.log"
expect 0 "time going backwards imports" "$DLSIM" import-log "$T/back.log"
grep -q "back.log:2: time goes back" "$T/err" || { bad "time going back, line 2"; cat "$T/err"; }
head -c 20000 /dev/urandom >"$T/garbage"
expect 2 "garbage" "$DLSIM" import-log "$T/garbage"
: >"$T/empty"
expect 2 "empty file" "$DLSIM" import-log "$T/empty"
expect 2 "missing file" "$DLSIM" import-log "$T/nonexistent.log"
expect 2 "no file" "$DLSIM" import-log
expect 0 "--help" "$DLSIM" import-log --help

# names are data: quotes, backslashes, <script> survive as JSON strings
printf '[    1.000000] drv "q\\\\<script>x: PM: calling cb_suspend @ 7, parent: p"a\n[    1.000010] drv "q\\\\<script>x: PM: cb_suspend returned 0 after 3 usecs\n' >"$T/names.log"
expect 0 "hostile names import" "$DLSIM" import-log "$T/names.log"
cp "$T/out" "$T/names.json"
expect 0 "hostile names validate" "$DLSIM" validate "$T/names.json"
grep -q '"q\\\\\\\\<script>x"' "$T/names.json" || { bad "the name is escaped JSON"; cat "$T/names.json"; }

# --into: overlay by name, unmatched names on both sides
cat >"$T/into.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "into",
  "devices": [ {"name": "bar"}, {"name": "other", "suspend": "1ms"} ] }
J
expect 0 "--into" "$DLSIM" import-log "$T/bad.log" --into "$T/into.json"
cp "$T/out" "$T/over.json"
grep -q '"suspend": "90us"' "$T/over.json" || bad "--into sets bar's measured suspend"
grep -q "in the log, not in the scenario: zed" "$T/err" || { bad "--into lists the log's unmatched"; cat "$T/err"; }
grep -q "in the scenario, not in the log: other" "$T/err" || bad "--into lists the scenario's unmatched"
expect 0 "validate the overlay" "$DLSIM" validate "$T/over.json"
# a device-tree path matches the kernel's platform device name UNIT.NAME
cat >"$T/dt.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "dt",
  "devices": [ {"name": "/soc@0"}, {"name": "/soc@0/bus@30000000/spdif@30090000", "parent": "/soc@0"} ] }
J
expect 0 "--into a DT scenario" "$DLSIM" import-log "$REAL/imx8m-spdif-dpm-reorder.txt" --into "$T/dt.json"
grep -A3 'spdif@30090000' "$T/out" | grep -q '"suspend": "0us"' || { bad "30090000.spdif matched its DT path"; cat "$T/out"; }
# the "empirical" latency of scenario files: samples required, nothing else
cat >"$T/emp.json" <<'J'
{ "format": "dlsim-scenario/1", "devices": [ {"name": "a", "suspend": {"dist": "empirical", "samples": ["1ms", 2000000]}} ] }
J
expect 0 "empirical latency validates" "$DLSIM" validate "$T/emp.json"
sed 's/"samples": \["1ms", 2000000\]/"samples": []/' "$T/emp.json" >"$T/emp0.json"
expect 2 "empirical without samples" "$DLSIM" validate "$T/emp0.json"
sed 's/"samples"/"mean": "1ms", "samples"/' "$T/emp.json" >"$T/emp1.json"
expect 2 "empirical with a mean" "$DLSIM" validate "$T/emp1.json"
finish cli_import_log
