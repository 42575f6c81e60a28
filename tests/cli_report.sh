#!/bin/sh
# `dlsim report DB [--out DIR]` from the command line (shared/SPEC.md):
# exit 2 for bad usage, a missing DB or a file that is not a dlsim DB;
# exit 0 with index.html, PNG and SVG plots (well-formed XML when xmllint is
# there) and trace.json with a flow for a small hand-made log; --run.
DLSIM=$1
fail=0
tmp=$(mktemp -d /tmp/dlsim-cli-report.XXXXXX) || exit 1
check() { # expected-status description command...
	want=$1; shift; what=$1; shift
	"$@" >"$tmp/out" 2>&1; got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL: $what: exit $got, expected $want"; cat "$tmp/out"; fail=$((fail + 1))
	else
		echo "ok: $what"
	fi
}
check 0 "report --help" "$DLSIM" report --help
check 2 "report without DB" "$DLSIM" report
check 2 "report with unknown option" "$DLSIM" report x.db --frobnicate
check 2 "report --out without value" "$DLSIM" report x.db --out
check 2 "report missing DB" "$DLSIM" report "$tmp/nope.db"
echo "plain text" >"$tmp/text.db"
check 2 "report on a text file" "$DLSIM" report "$tmp/text.db" --out "$tmp/x"
if command -v sqlite3 >/dev/null 2>&1; then
	sqlite3 "$tmp/other.db" "CREATE TABLE t(x);"
	check 2 "report on a foreign SQLite DB" "$DLSIM" report "$tmp/other.db" --out "$tmp/x"
	sqlite3 "$tmp/log.db" "
CREATE TABLE runs(run_id INTEGER PRIMARY KEY, scenario TEXT, order_name TEXT, mode TEXT, seed INTEGER,
  workers INTEGER, devices INTEGER, links INTEGER, status TEXT, makespan_ns INTEGER, started_at TEXT, version TEXT);
CREATE TABLE devices(run_id, dev_id, name, parent_id, async);
CREATE TABLE links(run_id, link_id, consumer_id, supplier_id, flags);
CREATE TABLE events(run_id, seq, t_ns, dev_id, link_id, kind, phase, worker, err);
CREATE TABLE metrics(run_id, name, value);
CREATE TABLE violations(run_id, invariant, dev_id, link_id, t_ns, detail);
INSERT INTO runs VALUES(1, 'x<y', 'sync', 'des', 1, 1, 2, 1, 'ok', 3000000, '', '');
INSERT INTO metrics VALUES(1, 'lower_bound_ns', 2000000);
INSERT INTO devices VALUES(1, 0, 'a&b', NULL, 1), (1, 1, 'c', 0, 1);
INSERT INTO events VALUES(1, 1, 0, 1, NULL, 'suspend_start', 'suspend', 0, 0),
  (1, 2, 1000000, 1, NULL, 'suspend_end', 'suspend', 0, 0),
  (1, 3, 1000000, 0, NULL, 'suspend_start', 'suspend', 0, 0),
  (1, 4, 2000000, 0, NULL, 'suspend_end', 'suspend', 0, 0);"
	# An output path with a quote and a space must not reach gnuplot's command.
	check 0 "report --out with a quote" "$DLSIM" report "$tmp/log.db" --out "$tmp/it's out"
	for f in index.html makespan.png makespan.svg gantt.png gantt.svg util.png util.svg trace.json.gz trace-1.json.gz; do
		[ -s "$tmp/it's out/$f" ] || { echo "FAIL: $f missing"; fail=$((fail + 1)); }
	done
	grep -q 'x&lt;y' "$tmp/it's out/index.html" || { echo "FAIL: scenario not escaped"; fail=$((fail + 1)); }
	grep -q 'a&amp;b' "$tmp/it's out/index.html" || { echo "FAIL: device not escaped"; fail=$((fail + 1)); }
	grep -q '<script type="application/json" id="tl-data">' "$tmp/it's out/index.html" ||
		{ echo "FAIL: no timeline data"; fail=$((fail + 1)); }
	gzip -dc "$tmp/it's out/trace.json.gz" >"$tmp/trace.json" || { echo "FAIL: trace.json.gz is not gzip"; fail=$((fail + 1)); }
	grep -q '"ph":"X".*"name":"a&b"' "$tmp/trace.json" ||
		{ echo "FAIL: trace.json lacks the X event of a&b"; fail=$((fail + 1)); }
	grep -q '"ph":"s".*"name":"waits for"' "$tmp/trace.json" ||
		{ echo "FAIL: trace.json lacks the flow of c -> a&b"; fail=$((fail + 1)); }
	grep -q '"waited_for":"c"' "$tmp/trace.json" ||
		{ echo "FAIL: a&b's suspend did not wait for its child c"; fail=$((fail + 1)); }
	# traces: gzip, tid 0 named for what it is, per-device tracks, a size cap the page names
	gzip -t "$tmp/it's out/trace.json.gz" && echo "ok: trace.json.gz is gzip" || { echo "FAIL: trace not gzip"; fail=$((fail + 1)); }
	grep -q '"tid":0,"name":"thread_name","args":{"name":"main PM thread"}' "$tmp/trace.json" &&
		echo "ok: tid 0 is the main PM thread" || { echo "FAIL: tid 0 not named main PM thread"; fail=$((fail + 1)); }
	check 0 "report --trace-tracks device --trace-json" "$DLSIM" report "$tmp/log.db" --out "$tmp/dev" \
		--trace-tracks device --trace-json
	grep -q '"name":"thread_name","args":{"name":"a&b"}' "$tmp/dev/trace.json" &&
	grep -q '"name":"thread_name","args":{"name":"c"}' "$tmp/dev/trace.json" &&
		echo "ok: one track per device, named by it" || { echo "FAIL: no per-device tracks"; fail=$((fail + 1)); }
	check 0 "report --trace-devices 1" "$DLSIM" report "$tmp/log.db" --out "$tmp/cap" --trace-devices 1
	n=$(gzip -dc "$tmp/cap/trace.json.gz" | grep -c '"ph":"X"')
	[ "$n" = 1 ] && echo "ok: the cap keeps one device" || { echo "FAIL: capped trace has $n slices"; fail=$((fail + 1)); }
	grep -q 'Size cap: these trace files hold 1 of the run' "$tmp/cap/index.html" &&
		echo "ok: the page names the cap" || { echo "FAIL: no note of the cap"; fail=$((fail + 1)); }
	grep -q 'Size cap' "$tmp/dev/index.html" && { echo "FAIL: a cap note without a cap"; fail=$((fail + 1)); }
	check 2 "report --trace-devices 0" "$DLSIM" report "$tmp/log.db" --out "$tmp/cap" --trace-devices 0
	check 2 "report --trace-tracks cpu" "$DLSIM" report "$tmp/log.db" --out "$tmp/cap" --trace-tracks cpu
	for f in gantt.svg makespan.svg util.svg; do
		if command -v xmllint >/dev/null 2>&1; then
			xmllint --noout --nonet "$tmp/it's out/$f" || { echo "FAIL: $f is not XML"; fail=$((fail + 1)); }
		fi
	done
	check 0 "report --run 1" "$DLSIM" report "$tmp/log.db" --run 1 --out "$tmp/r1"
	check 0 "report --run=1" "$DLSIM" report "$tmp/log.db" --run=1 --out "$tmp/r1"
	check 2 "report --run of a missing run" "$DLSIM" report "$tmp/log.db" --run 5 --out "$tmp/r5"
	[ -e "$tmp/r5" ] && { echo "FAIL: --run 5 wrote $tmp/r5"; fail=$((fail + 1)); }
	check 2 "report --run not a number" "$DLSIM" report "$tmp/log.db" --run 1x --out "$tmp/r5"
	check 2 "report --run without value" "$DLSIM" report "$tmp/log.db" --run
	check 0 "report --out=DIR" "$DLSIM" report "$tmp/log.db" "--out=$tmp/eq"
	[ -s "$tmp/eq/index.html" ] || { echo "FAIL: --out=DIR ignored"; fail=$((fail + 1)); }
	check 0 "report default --out" "$DLSIM" report "$tmp/log.db"
	[ -s "$tmp/log-report/index.html" ] || { echo "FAIL: default out dir is not log-report/ beside log.db"; fail=$((fail + 1)); }
	# from the repository root, the default is never the source tree's report/
	mkdir -p "$tmp/repo/report" && touch "$tmp/repo/report/page.c" "$tmp/repo/CMakeLists.txt"
	cp "$tmp/log.db" "$tmp/repo/dlsim.db"
	(cd "$tmp/repo" && "$DLSIM" report dlsim.db >"$tmp/out" 2>&1) || { echo "FAIL: report from a repo root"; fail=$((fail + 1)); }
	[ -s "$tmp/repo/dlsim-report/index.html" ] && [ ! -e "$tmp/repo/report/index.html" ] ||
		{ echo "FAIL: the report went into the source folder report/"; fail=$((fail + 1)); }
	check 2 "report --out into a source folder" "$DLSIM" report "$tmp/log.db" --out "$tmp/repo/report"
	[ ! -e "$tmp/repo/report/index.html" ] || { echo "FAIL: wrote into a source folder"; fail=$((fail + 1)); }
	# the output folder: never "/", never a folder of someone else's unless --force,
	# never through a symlink that is in it
	check 2 "report --out / refused" "$DLSIM" report "$tmp/log.db" --out /
	grep -q 'is the root directory' "$tmp/out" || { echo "FAIL: no reason given for /"; fail=$((fail + 1)); }
	check 2 "report --out DIR/.. that is / refused, --force or not" "$DLSIM" report "$tmp/log.db" --out /tmp/.. --force
	mkdir "$tmp/theirs" && echo "notes" >"$tmp/theirs/notes.txt" && echo "keep" >"$tmp/target"
	ln -s "$tmp/target" "$tmp/theirs/makespan.tsv"
	check 2 "report into a non-empty folder it did not write" "$DLSIM" report "$tmp/log.db" --out "$tmp/theirs"
	grep -q -- '--force' "$tmp/out" || { echo "FAIL: the refusal does not name --force"; fail=$((fail + 1)); }
	[ -e "$tmp/theirs/index.html" ] && { echo "FAIL: refused, yet wrote index.html"; fail=$((fail + 1)); }
	check 0 "report --force into it" "$DLSIM" report "$tmp/log.db" --out "$tmp/theirs" --force
	[ "$(cat "$tmp/target")" = keep ] && [ ! -L "$tmp/theirs/makespan.tsv" ] && [ -s "$tmp/theirs/makespan.tsv" ] &&
		echo "ok: the symlink was replaced, its target left alone" ||
		{ echo "FAIL: makespan.tsv written through its symlink"; fail=$((fail + 1)); }
	[ -f "$tmp/theirs/notes.txt" ] || { echo "FAIL: --force removed a file of theirs"; fail=$((fail + 1)); }
	# the folder a report replaces keeps its own mode, owner and group (the
	# report is written in a folder beside it, which used to take 0755 and
	# the writer's owner: a private 0700 folder became world-readable)
	mkdir "$tmp/priv" && echo "mine" >"$tmp/priv/notes.txt" && chmod 2710 "$tmp/priv"
	[ "$(id -u)" = 0 ] && chown 65534:65534 "$tmp/priv"
	before=$(stat -c '%a %u %g' "$tmp/priv")
	check 0 "report --force into a 2710 folder" "$DLSIM" report "$tmp/log.db" --out "$tmp/priv" --force
	[ "$(stat -c '%a %u %g' "$tmp/priv")" = "$before" ] && [ -s "$tmp/priv/index.html" ] &&
		[ -f "$tmp/priv/notes.txt" ] && echo "ok: --force keeps the folder's mode and owner ($before)" ||
		{ echo "FAIL: --force: the folder was '$before', is '$(stat -c '%a %u %g' "$tmp/priv")'"; fail=$((fail + 1)); }
	# the same where the writer cannot give the staged folder the owner (not
	# root, another user's group-writable folder): the files are moved into
	# the folder one at a time, which keeps its mode, owner and group.  As
	# root: the writer is nobody (65534), the folder daemon's (1).
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	   setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$DLSIM"; then
		chmod 0711 "$tmp" && mkdir -m 0777 "$tmp/pub" && cp "$tmp/log.db" "$tmp/pub/log.db" &&
			chmod 0666 "$tmp/pub/log.db" && mkdir "$tmp/pub/shared" &&
			echo "theirs" >"$tmp/pub/shared/notes.txt" && chown -R 1:65534 "$tmp/pub/shared" &&
			chmod 2775 "$tmp/pub/shared"
		before=$(stat -c '%a %u %g' "$tmp/pub/shared")
		check 0 "report --force, as another user, into a folder it cannot give its owner" \
			setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$DLSIM" report "$tmp/pub/log.db" --out "$tmp/pub/shared" --force
		[ "$(stat -c '%a %u %g' "$tmp/pub/shared")" = "$before" ] && [ -s "$tmp/pub/shared/index.html" ] &&
			[ "$(cat "$tmp/pub/shared/notes.txt")" = theirs ] &&
			[ -z "$(find "$tmp/pub" -mindepth 1 -maxdepth 2 -name '*dlsim-report-*')" ] &&
			echo "ok: the files moved in one at a time; the folder stays '$before'" ||
			{ echo "FAIL: as another user: the folder was '$before', is '$(stat -c '%a %u %g' "$tmp/pub/shared")'; $(ls -a "$tmp/pub" "$tmp/pub/shared" | tr '\n' ' ')"; fail=$((fail + 1)); }
		chmod 0700 "$tmp"
	else
		echo "skip: not root or no setpriv: the other user's folder is not tried"
	fi
	mkdir "$tmp/empty" && chmod 750 "$tmp/empty"
	check 0 "report into an empty 0750 folder" "$DLSIM" report "$tmp/log.db" --out "$tmp/empty"
	[ "$(stat -c '%a' "$tmp/empty")" = 750 ] && echo "ok: an empty folder keeps its mode" ||
		{ echo "FAIL: the empty folder became $(stat -c '%a' "$tmp/empty")"; fail=$((fail + 1)); }
	check 0 "report again into the 0750 folder it wrote" "$DLSIM" report "$tmp/log.db" --out "$tmp/empty"
	[ "$(stat -c '%a' "$tmp/empty")" = 750 ] && echo "ok: a report's own folder keeps its mode" ||
		{ echo "FAIL: the report's folder became $(stat -c '%a' "$tmp/empty")"; fail=$((fail + 1)); }
	rm -f "$tmp/eq/gantt.svg" && ln -s "$tmp/target" "$tmp/eq/gantt.svg"
	check 0 "report again into a folder it wrote, no --force" "$DLSIM" report "$tmp/log.db" --out "$tmp/eq"
	[ "$(cat "$tmp/target")" = keep ] && [ ! -L "$tmp/eq/gantt.svg" ] ||
		{ echo "FAIL: gnuplot wrote gantt.svg through a symlink"; fail=$((fail + 1)); }
	# a report killed part-way (test hook report-files: its first files
	# written, sim/log/dl_testhook.h) leaves nothing new where it was to go:
	# no folder where there was none, an old report's folder as it was (the
	# same files, inodes and times); the next report removes the folder the
	# killed one wrote in beside it.  It used to leave a half-written folder.
	if grep -q '^DLSIM_TEST_HOOKS:BOOL=ON' "$(dirname "$DLSIM")/CMakeCache.txt" 2>/dev/null; then
		DLSIM_TEST_HOOK=report-files:kill "$DLSIM" report "$tmp/log.db" --out "$tmp/killed" \
			>"$tmp/out" 2>&1
		rc=$?
		[ "$rc" = 137 ] && [ ! -e "$tmp/killed" ] && echo "ok: a killed report leaves no folder" ||
			{ echo "FAIL: killed report: exit $rc, $(ls -A "$tmp/killed" 2>&1 | head -3)"; fail=$((fail + 1)); }
		ls -liA --time-style=full-iso "$tmp/eq" >"$tmp/eq.before"
		DLSIM_TEST_HOOK=report-files:kill "$DLSIM" report "$tmp/log.db" --out "$tmp/eq" >"$tmp/out" 2>&1
		ls -liA --time-style=full-iso "$tmp/eq" >"$tmp/eq.after"
		cmp -s "$tmp/eq.before" "$tmp/eq.after" && echo "ok: a killed report leaves the old one as it was" ||
			{ echo "FAIL: the old report changed:"; diff "$tmp/eq.before" "$tmp/eq.after" | head -6
			  fail=$((fail + 1)); }
		ls -A "$tmp" | grep -q 'dlsim-report-' && echo "ok: the killed reports' own folders are beside" ||
			{ echo "FAIL: no folder beside the killed reports"; fail=$((fail + 1)); }
		check 0 "report into the folder a killed one left as it was" "$DLSIM" report "$tmp/log.db" --out "$tmp/eq"
		check 0 "report where a killed one left nothing" "$DLSIM" report "$tmp/log.db" --out "$tmp/killed"
		[ -s "$tmp/eq/index.html" ] && [ -s "$tmp/killed/index.html" ] && ! ls -A "$tmp" | grep -q 'dlsim-report-' &&
			echo "ok: written, and the killed reports' folders removed" ||
			{ echo "FAIL: after the kills: $(ls -A "$tmp" | tr '\n' ' ')"; fail=$((fail + 1)); }
		# Ctrl-C part-way (report-files:int): the report removes what it wrote,
		# exit 130; no folder where there was none, the old one as it was, and
		# nothing left beside (Ctrl-C's default action used to leave the
		# folder it was writing in, for the next report to remove)
		DLSIM_TEST_HOOK=report-files:int "$DLSIM" report "$tmp/log.db" --out "$tmp/intr" >"$tmp/out" 2>&1
		rc=$?
		[ "$rc" = 130 ] && [ ! -e "$tmp/intr" ] && grep -q "interrupted: nothing of this report" "$tmp/out" &&
			echo "ok: Ctrl-C: exit 130, no folder" ||
			{ echo "FAIL: Ctrl-C: exit $rc, $(cat "$tmp/out")"; fail=$((fail + 1)); }
		ls -liA --time-style=full-iso "$tmp/eq" >"$tmp/eq.before"
		DLSIM_TEST_HOOK=report-files:int "$DLSIM" report "$tmp/log.db" --out "$tmp/eq" >"$tmp/out" 2>&1
		rc=$?
		ls -liA --time-style=full-iso "$tmp/eq" >"$tmp/eq.after"
		[ "$rc" = 130 ] && cmp -s "$tmp/eq.before" "$tmp/eq.after" && echo "ok: Ctrl-C: the old report as it was" ||
			{ echo "FAIL: Ctrl-C: exit $rc, the old report changed"; fail=$((fail + 1)); }
		ls -A "$tmp" | grep -q 'dlsim-report-' &&
			{ echo "FAIL: Ctrl-C left $(ls -A "$tmp" | grep 'dlsim-report-')"; fail=$((fail + 1)); } ||
			echo "ok: Ctrl-C: nothing left beside"
	fi
	# a name with "]]>" (which XML forbids in text) keeps gantt.svg well-formed
	cat >"$tmp/cdata.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "cdata", "seed": 1,
  "defaults": {"probe": "1ms", "suspend": "300us", "resume": "200us", "async": true},
  "devices": [ {"name": "soc"}, {"name": "a]]>b<c&d", "parent": "soc"} ] }
J
	check 0 "run a ]]> name" "$DLSIM" run "$tmp/cdata.json" --db "$tmp/cdata.db"
	check 0 "report of it" "$DLSIM" report "$tmp/cdata.db" --out "$tmp/cdata"
	if command -v xmllint >/dev/null 2>&1; then
		for f in "$tmp"/cdata/*.svg; do
			xmllint --noout --nonet "$f" || { echo "FAIL: $f is not XML"; fail=$((fail + 1)); }
		done
	fi
	# a real kernel-async run logs its sleeping work items: blocked comes from
	# the work_block/work_wake events, not the estimate
	cat >"$tmp/ka.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "ka", "seed": 5,
  "defaults": {"probe": "1ms", "suspend": "300us", "resume": "200us", "async": true},
  "generate": {"topology": "random-dag", "devices": 200} }
J
	check 0 "run kernel-async" "$DLSIM" run "$tmp/ka.json" --order kernel-async --db "$tmp/ka.db"
	check 0 "report of it" "$DLSIM" report "$tmp/ka.db" --out "$tmp/ka"
	# the left axis counts callbacks in progress, which may exceed K (a sleeping one holds no CPU)
	grep -q '>callbacks in progress<' "$tmp/ka/util.svg" && ! grep -q 'busy CPUs' "$tmp/ka/util.svg" ||
		{ echo "FAIL: util.svg's axis does not say what it counts"; fail=$((fail + 1)); }
	grep -q "from the engine's work_block" "$tmp/ka/index.html" ||
		{ echo "FAIL: blocked workers not taken from the logged events"; fail=$((fail + 1)); }
	awk -F'\t' '!/^#/ && $3 > 0 { found = 1 } END { exit !found }' "$tmp/ka/util.tsv" ||
		{ echo "FAIL: util.tsv never shows a blocked worker"; fail=$((fail + 1)); }
	# devices.driver (additive): the scenario's x-driver per device, NULL without one, also
	# when the run goes into a log written before the column; the page's timeline carries it
	cat >"$tmp/drv.json" <<'EOF'
{ "format": "dlsim-scenario/1", "name": "drv", "defaults": { "probe": "1ms", "suspend": "1ms" },
  "devices": [ { "name": "soc" }, { "name": "i2c@1", "parent": "soc", "x-driver": "rk3x-i2c" },
    { "name": "dummy", "parent": "soc", "x-driver": null } ] }
EOF
	check 0 "run" "$DLSIM" run "$tmp/drv.json" --db "$tmp/olddrv.db"
	sqlite3 "$tmp/olddrv.db" "ALTER TABLE devices DROP COLUMN driver"   # as written before it
	check 0 "report of a log without devices.driver" "$DLSIM" report "$tmp/olddrv.db" --out "$tmp/olddrv0"
	grep -q '"drivers":\[null,null,null\]' "$tmp/olddrv0/index.html" ||
		{ echo "FAIL: drivers where the log has none"; fail=$((fail + 1)); }
	check 0 "run into a log without devices.driver" "$DLSIM" run "$tmp/drv.json" --db "$tmp/olddrv.db"
	got=$(sqlite3 "$tmp/olddrv.db" "SELECT group_concat(name || '=' || coalesce(driver, 'NULL'), ' ')
		FROM devices WHERE run_id = 2")
	[ "$got" = "soc=NULL i2c@1=rk3x-i2c dummy=NULL" ] ||
		{ echo "FAIL: devices.driver: '$got'"; fail=$((fail + 1)); }
	check 0 "report of it" "$DLSIM" report "$tmp/olddrv.db" --out "$tmp/olddrv"
	grep -q '"drivers":\[null,"rk3x-i2c",null\]' "$tmp/olddrv/index.html" ||
		{ echo "FAIL: the timeline's data lack the drivers"; fail=$((fail + 1)); }
	check 0 "report of run 1, whose log has no drivers" "$DLSIM" report "$tmp/olddrv.db" --run 1 --out "$tmp/olddrv1"
	# --beside RUN: another run of the same scenario content on one axis; refused (exit 2,
	# nothing drawn) for a run of another scenario, the run drawn itself or no such run
	check 0 "report --beside a run of the same scenario" "$DLSIM" report "$tmp/olddrv.db" --run 2 --beside 1 --out "$tmp/bs"
	grep -q 'id="bs-data"' "$tmp/bs/index.html" && grep -q '<h2 id="beside">Run 2 beside run 1</h2>' "$tmp/bs/index.html" ||
		{ echo "FAIL: no beside view"; fail=$((fail + 1)); }
	check 0 "report --no-beside" "$DLSIM" report "$tmp/olddrv.db" --run 2 --no-beside --out "$tmp/bs0"
	grep -q 'id="bs-data"' "$tmp/bs0/index.html" && { echo "FAIL: a beside view without a twin or --beside"; fail=$((fail + 1)); }
	check 0 "run another scenario" "$DLSIM" run "$tmp/ka.json" --db "$tmp/olddrv.db"
	check 2 "report --beside a run of another scenario" "$DLSIM" report "$tmp/olddrv.db" --run 2 --beside 3 --out "$tmp/bs3"
	grep -q 'ran another scenario than run 2' "$tmp/out" || { echo "FAIL: why --beside 3 is refused"; fail=$((fail + 1)); }
	check 2 "report --beside the run drawn" "$DLSIM" report "$tmp/olddrv.db" --run 2 --beside 2 --out "$tmp/bs3"
	check 2 "report --beside no such run" "$DLSIM" report "$tmp/olddrv.db" --beside 99 --out "$tmp/bs3"
	check 2 "report --beside x" "$DLSIM" report "$tmp/olddrv.db" --beside x --out "$tmp/bs3"
	# a twin is drawn beside its run by default
	check 0 "twin of run 2" "$DLSIM" twin "$tmp/olddrv.db" 2
	got=$(sqlite3 "$tmp/olddrv.db" "SELECT group_concat(coalesce(driver, 'NULL'), ' ') FROM devices WHERE run_id = 4")
	[ "$got" = "NULL rk3x-i2c NULL" ] || { echo "FAIL: the twin's drivers: '$got'"; fail=$((fail + 1)); }
	check 0 "report of run 2, which has a twin" "$DLSIM" report "$tmp/olddrv.db" --run 2 --out "$tmp/bs4"
	grep -q '<h2 id="beside">Run 2 beside run 4</h2>' "$tmp/bs4/index.html" && grep -q 'its replay twin' "$tmp/bs4/index.html" ||
		{ echo "FAIL: the twin is not beside its run"; fail=$((fail + 1)); }
	# another program's database (its application_id) is refused, nothing written (issue 34)
	cp "$tmp/ka.db" "$tmp/foreign.db"
	sqlite3 "$tmp/foreign.db" "pragma application_id = 1234"
	check 2 "report of a foreign application_id" "$DLSIM" report "$tmp/foreign.db" --out "$tmp/fo"
	[ ! -e "$tmp/fo" ] || { echo "FAIL: a report written for a foreign database"; fail=$((fail + 1)); }
else
	echo "skip: sqlite3 not installed, only usage errors tested"
fi
rm -rf "$tmp"
echo "cli_report: $fail failed"
[ "$fail" = 0 ]
