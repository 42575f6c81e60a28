#!/bin/sh
# index.html's interactive timeline runs in a real browser: `dlsim run` on a
# 50-device random DAG with hostile device names, `dlsim report`, then
# headless Chromium --dump-dom.  Fails on a script error or when the script
# did not finish (no id="tl-ready" in the DOM, or the hostile name escaped
# into the markup), or when hovering a bar shows no tooltip naming what it
# waited for.  The headline names each op's time and its slowest device
# (a 40 ms disk here), the order the kernel uses is marked, and the
# timeline packs the callbacks into rows per worker (no two bars of a row
# overlap) under the pinned slowest devices, labelled 'dev {driver}' when
# the scenario names the driver (x-driver); the run beside its twin and
# beside a run of another order, per op on one shared axis.  Skipped (exit 77) without
# Chromium.
DLSIM=$1
browser=
for b in /usr/bin/chromium /usr/bin/chromium-headless-shell /usr/bin/chromium-browser \
	/usr/lib/chromium/chromium-headless-shell; do
	if [ -x "$b" ]; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
	echo "SKIP: no chromium"
	exit 77
fi
fail=0
tmp=$(mktemp -d /tmp/dlsim-cli-browser.XXXXXX) || exit 1
cat >"$tmp/hostile.json" <<'EOF'
{
  "format": "dlsim-scenario/1",
  "name": "browser </script><b>x</b>",
  "seed": 7,
  "defaults": { "probe": "1ms", "suspend": {"dist": "lognormal", "mean": "500us", "sd": "200us"},
                "resume": "700us", "async": true },
  "devices": [
    { "name": "soc" },
    { "name": "<script>alert(1)</script>", "parent": "soc" },
    { "name": "q\"uote\\back'slash", "parent": "soc", "x-driver": "</script><i>evil-drv</i>" },
    { "name": "</script><img src=x onerror=alert(2)>", "parent": "soc" },
    { "name": "<!--", "parent": "soc" },
    { "name": "/soc@0/geniqup@ac0000/i2c@a8c0", "parent": "soc" },
    { "name": "/soc@0/geniqup@ac0000/i2c@a8c0/camera-sensor@10", "parent": "/soc@0/geniqup@ac0000/i2c@a8c0" },
    { "name": "/soc@0/geniqup@ac0000/i2c@a8c0/eeprom@50", "parent": "/soc@0/geniqup@ac0000/i2c@a8c0" },
    { "name": "/soc@0/geniqup@ac0000/i2c@a8c1/eeprom@50", "parent": "soc" },
    { "name": "slowdisk", "parent": "soc", "suspend": "40ms", "x-driver": "sd-disk" }
  ],
  "generate": { "topology": "random-dag", "devices": 50 }
}
EOF
if ! "$DLSIM" run "$tmp/hostile.json" --db "$tmp/b.db" >"$tmp/run.out" 2>&1; then
	echo "FAIL: dlsim run"; cat "$tmp/run.out"; fail=$((fail + 1))
fi
if ! "$DLSIM" report "$tmp/b.db" --out "$tmp/out" >"$tmp/report.out" 2>&1; then
	echo "FAIL: dlsim report"; cat "$tmp/report.out"; fail=$((fail + 1))
fi
if [ -s "$tmp/out/index.html" ]; then
	profile=$(mktemp -d /tmp/dlsim-chromium.XXXXXX) || exit 1
	# timeout: a hung browser must not hang ctest.
	to=
	command -v timeout >/dev/null 2>&1 && to="timeout 120"
	$to "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
		--enable-logging=stderr --v=0 --dump-dom "file://$tmp/out/index.html" \
		>"$tmp/dom.html" 2>"$tmp/chromium.err"
	rc=$?
	rm -rf "$profile"
	if [ "$rc" != 0 ]; then
		echo "FAIL: chromium exit $rc"; tail -20 "$tmp/chromium.err"; fail=$((fail + 1))
	fi
	if grep -E 'Uncaught|SyntaxError' "$tmp/chromium.err"; then
		echo "FAIL: script error in index.html"; fail=$((fail + 1))
	fi
	if grep -q 'id="tl-ready"' "$tmp/dom.html"; then
		echo "ok: timeline script ran ($(grep -o 'Timeline: [^<]*' "$tmp/dom.html" | head -1))"
	else
		echo "FAIL: no id=\"tl-ready\" in the dumped DOM"; fail=$((fail + 1))
	fi
	grep -q '<canvas' "$tmp/dom.html" || { echo "FAIL: no canvas in the DOM"; fail=$((fail + 1)); }
	# The hostile names must not have become elements.
	if grep -q -i -E '<script>alert|<img src="?x|<i>evil' "$tmp/dom.html"; then
		echo "FAIL: a device name became markup"; fail=$((fail + 1))
	fi
	# The timeline must hold rows for all 60 devices.
	grep -q 'Timeline: 60 device rows' "$tmp/dom.html" ||
		{ echo "FAIL: expected 60 device rows"; fail=$((fail + 1)); }
	# The headline: each op's time in a box, the slowest device named at once,
	# the order the run's kernel uses marked.
	if grep -q '<section id="headline">' "$tmp/dom.html" &&
	   grep -q -E 'data-op="suspend"><div class="hl-what">Suspend time</div><div class="hl-ms">[0-9.]+ ms</div><div class="hl-slow">slowest: <b>slowdisk</b> 40.0 ms' "$tmp/dom.html" &&
	   grep -q 'hl-what">Resume time' "$tmp/dom.html" && grep -q 'hl-what">Probe time' "$tmp/dom.html"; then
		echo "ok: headline: suspend, resume and probe time, slowdisk the slowest"
	else
		echo "FAIL: headline"; grep -o '<section id="headline">.\{0,600\}' "$tmp/dom.html"; fail=$((fail + 1))
	fi
	grep -q 'kernel-async <span class="hl-kernel">' "$tmp/dom.html" && echo "ok: the kernel's own order marked" ||
		{ echo "FAIL: kernel-async on 6.12 not marked as the kernel's order"; fail=$((fail + 1)); }
	grep -q -E 'critical path: [1-9][0-9]* callbacks' "$tmp/dom.html" ||
		{ echo "FAIL: no critical path in the timeline"; fail=$((fail + 1)); }
	for f in util.png probe.png gantt.png makespan.png; do
		grep -q "<img src=\"$f\"" "$tmp/dom.html" || { echo "FAIL: no $f on the page"; fail=$((fail + 1)); }
	done
	# Panes: probe, then suspend and resume as the two halves of one block,
	# each with its own canvas (and so its own time axis).
	grep -q 'class="tl-pane" data-op="probe"' "$tmp/dom.html" || { echo "FAIL: no probe pane"; fail=$((fail + 1)); }
	if grep -o '<div class="tl-block tl-halves"><div class="tl-pane" data-op="suspend">.*' "$tmp/dom.html" |
	   grep -q 'data-op="resume"'; then
		echo "ok: suspend and resume are two halves of one block"
	else
		echo "FAIL: suspend and resume are not side by side"; fail=$((fail + 1))
	fi
	n=$(grep -o '<canvas class="tl-canvas"' "$tmp/dom.html" | wc -l)
	[ "$n" -ge 3 ] && echo "ok: $n panes with their own canvas" || { echo "FAIL: $n canvases"; fail=$((fail + 1)); }
	# Hover and click: a copy of the page with a probe script appended that
	# moves the mouse over each pane until the tooltip names what a bar
	# waited for, clicks that bar, and writes the tooltip and the device
	# panel into the DOM.
	sed 's|</body>|<script src="hover.js"></script></body>|' "$tmp/out/index.html" >"$tmp/out/hover.html"
	cat >"$tmp/out/hover.js" <<'EOF'
(function () {
  var panes = document.querySelectorAll('.tl-pane'), out = document.createElement('pre'), p, y, x, hit = null;
  out.id = 'hover-result';
  for (p = 0; p < panes.length && !hit; p++) {
    var cv = panes[p].querySelector('.tl-canvas'), tip = panes[p].querySelector('.tl-tip');
    var b = cv.getBoundingClientRect();
    for (y = 40; y < b.height && !hit; y += 6)
      for (x = 215; x < b.width && !hit; x += 3) {
        var ev = { clientX: b.left + x, clientY: b.top + y, bubbles: true };
        cv.dispatchEvent(new MouseEvent('mousemove', ev));
        if (!tip.hidden && tip.textContent.indexOf('ended at') >= 0) {
          hit = panes[p].getAttribute('data-op') + ': ' + tip.textContent;
          cv.dispatchEvent(new MouseEvent('mousedown', ev));
          cv.dispatchEvent(new MouseEvent('mouseup', ev));
          cv.dispatchEvent(new MouseEvent('click', ev));
        }
      }
  }
  var info = document.getElementById('tl-info'), T = window.dlsimTimeline, lay = [], k;
  for (k = 0; T && k < panes.length; k++) {
    var L = T.layout(k);
    lay.push(L.op + ' mode=' + T.mode() + ' devices=' + L.devices + ' rows=' + L.rows + ' overlaps=' + L.overlaps +
      ' pinned=' + L.pinned.join('|') + ' first-row=' + L.rowLabels[0]);
  }
  if (T) T.mode('device');
  out.textContent = (hit || 'no tooltip') + '\n--- panel ---\n' + (info ? info.innerText : 'no panel') +
    '\n--- layout ---\n' + lay.join('\n') +
    '\n--- labels ---\n' + (T ? T.labels(0).join('\n') : 'no labels') +
    '\n--- bars ---\n' + (T ? T.barLabels(1).join('\n') : 'no bars') + '\n--- end ---';
  document.body.appendChild(out);
})();
EOF
	profile=$(mktemp -d /tmp/dlsim-chromium.XXXXXX) || exit 1
	$to "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
		--enable-logging=stderr --v=0 --window-size=1400,1200 --dump-dom \
		"file://$tmp/out/hover.html" >"$tmp/hover.html" 2>"$tmp/chromium-hover.err"
	rm -rf "$profile"
	if grep -E 'Uncaught|SyntaxError' "$tmp/chromium-hover.err"; then
		echo "FAIL: script error while hovering"; fail=$((fail + 1))
	fi
	# only the probe's own output counts: the page's script holds the same words
	sed -n '/<pre id="hover-result">/,/--- panel ---/p' "$tmp/hover.html" >"$tmp/tip.txt"
	if grep -q -E 'waited for: .*ended at' "$tmp/tip.txt" && grep -q 'start .* ms' "$tmp/tip.txt"; then
		echo "ok: hover tooltip ($(grep -A1 '<pre id="hover-result">' "$tmp/hover.html" | tr '\n' ' ' | cut -c1-160) ...)"
	else
		echo "FAIL: no hover tooltip with 'waited for'"; grep -A6 '<pre id="hover-result">' "$tmp/hover.html"
		fail=$((fail + 1))
	fi
	# the click opened the device panel: its callbacks, links and waits
	sed -n '/--- panel ---/,/--- layout ---/p' "$tmp/hover.html" >"$tmp/panel.txt"
	if grep -q 'dev_id' "$tmp/panel.txt" && grep -q 'callbacks' "$tmp/panel.txt" &&
	   grep -q 'suppliers' "$tmp/panel.txt" && grep -q 'ended at' "$tmp/panel.txt"; then
		echo "ok: click shows the device's callbacks, links and waits"
	else
		echo "FAIL: click did not open the device panel"; head -20 "$tmp/panel.txt"; fail=$((fail + 1))
	fi
	# packed by default: per worker, the main PM thread first, fewer rows than
	# devices, no two bars of a row overlapping, the slowest devices pinned on top
	sed -n '/--- layout ---/,/--- labels ---/p' "$tmp/hover.html" | sed '1d;$d' >"$tmp/layout.txt"
	if grep -q -E '^suspend mode=worker devices=60 rows=[0-9]+ overlaps=0 pinned=slowdisk \{sd-disk\}\|.* first-row=main PM thread$' "$tmp/layout.txt" &&
	   [ "$(grep -c ' overlaps=0 ' "$tmp/layout.txt")" = "$(wc -l <"$tmp/layout.txt")" ] &&
	   awk '{ split($3, d, "="); split($4, r, "="); if (r[2] + 0 >= d[2] + 3) bad = 1 } END { exit bad }' "$tmp/layout.txt"; then
		echo "ok: packed per worker, slowdisk pinned on top ($(grep '^suspend' "$tmp/layout.txt" | cut -d' ' -f1-5))"
	else
		echo "FAIL: packed timeline"; cat "$tmp/layout.txt"; fail=$((fail + 1))
	fi
	# row labels: cut from the left to the unique tail of the path, never two alike
	sed -n '/--- labels ---/,/--- bars ---/p' "$tmp/hover.html" | sed '1d;$d' >"$tmp/labels.txt"
	if grep -qx '…/camera-sensor@10' "$tmp/labels.txt" && grep -qx '…/i2c@a8c0/eeprom@50' "$tmp/labels.txt" &&
	   grep -qx '…/i2c@a8c1/eeprom@50' "$tmp/labels.txt" && grep -qx '…/i2c@a8c0' "$tmp/labels.txt" &&
	   [ "$(sort "$tmp/labels.txt" | uniq -d | wc -l)" = 0 ] && [ "$(wc -l <"$tmp/labels.txt")" = 60 ]; then
		echo "ok: names shortened from the left to their unique tail"
	else
		echo "FAIL: row labels"; grep -e '@' "$tmp/labels.txt"; fail=$((fail + 1))
	fi
	# bar labels: 'dev {driver}' as sleepgraph's, the name alone without a driver
	sed -n '/--- bars ---/,/--- end ---/p' "$tmp/hover.html" | sed '1d;$d' >"$tmp/bars.txt"
	if grep -qx 'slowdisk {sd-disk}' "$tmp/bars.txt" && grep -qx 'soc' "$tmp/bars.txt" &&
	   grep -qF '{&lt;/script&gt;&lt;i&gt;evil-drv&lt;/i&gt;}' "$tmp/bars.txt"; then
		echo "ok: bars labelled 'dev {driver}' ($(grep -c '{' "$tmp/bars.txt") of $(wc -l <"$tmp/bars.txt") with a driver)"
	else
		echo "FAIL: bar labels lack the driver"; head -5 "$tmp/bars.txt"; fail=$((fail + 1))
	fi
	# a screenshot of the timeline alone, for a human to look at (KEEP=1 keeps it)
	sed 's|</head>|<style>body > :not(#tl){display:none !important}</style></head>|' "$tmp/out/index.html" \
		>"$tmp/out/shot.html"
	profile=$(mktemp -d /tmp/dlsim-chromium.XXXXXX) || exit 1
	$to "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
		--window-size=1300,1000 --screenshot="$tmp/timeline.png" "file://$tmp/out/shot.html" \
		>/dev/null 2>&1
	rm -rf "$profile"
	[ -s "$tmp/timeline.png" ] && echo "ok: screenshot taken" || { echo "FAIL: no screenshot"; fail=$((fail + 1)); }
	# the beside view: the run over its replay twin (dlsim twin), then over a run of
	# another order (--beside), per op on one shared axis
	"$DLSIM" twin "$tmp/b.db" 1 >"$tmp/twin.out" 2>&1 || { echo "FAIL: dlsim twin"; cat "$tmp/twin.out"; fail=$((fail + 1)); }
	"$DLSIM" run "$tmp/hostile.json" --order sync --db "$tmp/b.db" >"$tmp/run2.out" 2>&1 ||
		{ echo "FAIL: dlsim run --order sync"; cat "$tmp/run2.out"; fail=$((fail + 1)); }
	for which in twin sync; do
		extra=
		[ "$which" = sync ] && extra="--beside 3"
		"$DLSIM" report "$tmp/b.db" --run 1 $extra --out "$tmp/bs-$which" >"$tmp/report.out" 2>&1 ||
			{ echo "FAIL: report ($which)"; cat "$tmp/report.out"; fail=$((fail + 1)); continue; }
		sed 's|</body>|<script src="probe.js"></script></body>|' "$tmp/bs-$which/index.html" >"$tmp/bs-$which/probe.html"
		cat >"$tmp/bs-$which/probe.js" <<'EOF'
(function () {
  var out = document.createElement('pre'), B = window.dlsimBeside;
  out.id = 'bs-result';
  out.textContent = B ? B.panes().map(function (p) {
    return p.op + ' runs=' + p.runs.join(',') + ' rows=' + p.rows.join(',') + ' bars=' + p.bars.join(',') +
      ' ends=' + p.ends_ms.map(function (x) { return x.toFixed(3); }).join(',') + ' axis=' + p.axis_ms.toFixed(3) +
      ' shared=' + p.shared + ' shifted=' + p.shifted;
  }).join('\n') : 'no beside view';
  document.body.appendChild(out);
})();
EOF
		profile=$(mktemp -d /tmp/dlsim-chromium.XXXXXX) || exit 1
		$to "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
			--disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
			--enable-logging=stderr --v=0 --window-size=1400,1200 --dump-dom \
			"file://$tmp/bs-$which/probe.html" >"$tmp/bs-$which.html" 2>"$tmp/bs-$which.err"
		rm -rf "$profile"
		if grep -E 'Uncaught|SyntaxError' "$tmp/bs-$which.err"; then
			echo "FAIL: script error in the beside view ($which)"; fail=$((fail + 1))
		fi
		sed -n '/<pre id="bs-result">/,/<\/pre>/p' "$tmp/bs-$which.html" | sed 's/<[^>]*>//g' >"$tmp/bs-$which.txt"
		# three panes, each with both runs' rows and bars, the axis as long as the longer run's op
		if [ "$(grep -c -E '^(probe|suspend|resume) runs=1,(2|3) rows=[1-9][0-9]*,[1-9][0-9]* bars=[1-9][0-9]*,[1-9][0-9]* ' "$tmp/bs-$which.txt")" = 3 ] &&
		   awk '{ split($5, e, "[=,]"); split($6, a, "="); m = e[2] + 0 > e[3] + 0 ? e[2] : e[3]; if (m != a[2]) bad = 1 }
			END { exit bad }' "$tmp/bs-$which.txt"; then
			echo "ok: beside ($which): two runs on one axis per op ($(head -1 "$tmp/bs-$which.txt"))"
		else
			echo "FAIL: beside view ($which)"; cat "$tmp/bs-$which.txt"; fail=$((fail + 1))
		fi
	done
	# a DES twin replays every callback as long as it was and schedules them alike: nothing
	# diverges; the sync run (one worker) ends later, and its callbacks end elsewhere
	grep -q -E '^suspend runs=1,2 .* shifted=0$' "$tmp/bs-twin.txt" ||
		{ echo "FAIL: the twin diverges from its run"; fail=$((fail + 1)); }
	if grep '^suspend runs=1,3 ' "$tmp/bs-sync.txt" |
	   awk '{ split($5, e, "[=,]"); split($8, s, "="); ok = e[3] + 0 > e[2] + 0 && s[2] + 0 > 0 } END { exit !ok }'; then
		echo "ok: the sync run ends later on the shared axis, callbacks shifted"
	else
		echo "FAIL: sync beside kernel-async"; cat "$tmp/bs-sync.txt"; fail=$((fail + 1))
	fi
else
	echo "FAIL: no index.html"; fail=$((fail + 1))
fi
if [ "$fail" = 0 ] && [ -z "$KEEP" ]; then rm -rf "$tmp"; else echo "outputs kept in $tmp"; fi
echo "cli_browser: $fail failed"
[ "$fail" = 0 ]
