#!/bin/sh
# dlsim report on a kernel-mode sweep with model twins (fake guest, DLSIM_KGUEST_STUB):
# fidelity.html lists every board with the sweep summary's own numbers, the board whose
# twin orders dependency-ordered pairs otherwise than the kernel first, names escaped,
# and the ratio plot; model twins of both probe contexts side by side; a database that
# is not such a sweep gets no page.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
export DLSIM_KGUEST_STUB="$SRC/tests/tools/kguest_sweep_stub.sh"
unset KGUEST_SWEEP_MODE

mkdir -p "$T/in"
# d30, d50: the canned dumps' own graphs (tests/kernel/default-{30,50}-6.12.dump);
# zz30: 30 devices of another graph, so the kernel's dump disagrees with its twin
python3 - "$SRC/scenarios/default.json" "$T/in" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for n, f, name in ((30, "d30", "default-30"), (50, "d50", "default-50"),
                   (30, "zz30", "other <b>&amp; 30</b>")):
    d["generate"]["devices"] = n
    d["name"] = name
    if f == "zz30":
        d["generate"]["suppliers_per_device"] = 1.0
        d["generate"]["locality"] = 0.9
    json.dump(d, open("%s/%s.json" % (sys.argv[2], f), "w"))
PY
"$DLSIM" sweep --mode kernel --scenarios "$T/in" --orders sync,kernel-async --kernel 6.12 \
	--twins model --db "$T/k.db" --jobs 2 --json >"$T/sweep.json" 2>"$T/err"
[ -s "$T/sweep.json" ] && ok "the kernel sweep ran" || { bad "sweep"; cat "$T/err"; }
expect 0 "report on the kernel sweep" "$DLSIM" report "$T/k.db" --out "$T/rep"
[ -s "$T/rep/fidelity.html" ] && ok "fidelity.html written" || bad "no fidelity.html"
grep -q 'href="fidelity.html"' "$T/rep/index.html" && ok "index.html links it" || bad "no link"
python3 - "$T/sweep.json" "$T/rep/fidelity.html" "$T/rep/fidelity.tsv" <<'PY' \
	&& ok "every board with the summary's numbers, the disagreeing one first, names escaped" \
	|| bad "fidelity page"
import html.parser, json, sys
summ = json.load(open(sys.argv[1]))
page = open(sys.argv[2]).read()
rows = []
class P(html.parser.HTMLParser):
    row = None; cell = None
    def handle_starttag(self, tag, attrs):
        if tag == "tr": self.row = []; self.cls = dict(attrs).get("class")
        if tag == "td" and self.row is not None: self.cell = ""
    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None: self.row.append(self.cell.strip()); self.cell = None
        if tag == "tr" and self.row: rows.append((self.cls, self.row)); self.row = None
    def handle_data(self, d):
        if self.cell is not None: self.cell += d
P().feed(page)
boards = [(c, r) for c, r in rows if r[0].endswith(".json")]
labels = [r[0].rsplit("/", 1)[1] for c, r in boards]
assert sorted(labels) == ["d30.json", "d50.json", "zz30.json"], labels
assert labels[0] == "zz30.json" and boards[0][0] == "disagree", boards[0]
assert all(c == "agree" for c, r in boards[1:]), boards
# the scenario's name is data: shown as text, never as markup
assert boards[0][1][1] == "other <b>&amp; 30</b>", boards[0][1][1]
assert "<b>&amp; 30" not in page and "&lt;b&gt;" in page
# the same numbers as the sweep's summary (one function computes both)
for g in summ["groups"]:
    m = g["kernel_fidelity"]["model"]
    row = [r for c, r in boards if r[0].endswith("/" + g["label"])][0]
    assert row[2] == "model" and int(row[3]) == m["runs"], row
    assert row[4].startswith("%d / %d" % (m["dependency_agree"], m["dependency_pairs"])), (row, m)
    assert row[5] == "%.1f%% of %d" % (100.0 * m["timing_agree"] / m["timing_pairs"], m["timing_pairs"]), row
    assert row[8] == "%.2f" % m["phase_ratio_median"]["suspend"], (row, m)
assert any(not g["kernel_fidelity"]["model"]["every_dependency_agrees"] for g in summ["groups"])
assert "2 of 3 boards" in page, "the count of agreeing boards"
# the over-the-boards table: p10 / median / p90 per phase
phase = [r for c, r in rows if r[0] == "resume"]
assert len(phase) == 1 and len(phase[0]) == 4, phase
tsv = open(sys.argv[3]).read().split("\n\n\n")
assert len(tsv) == 2 and len([l for l in tsv[0].splitlines() if l[:1] != "#"]) == 27, tsv
PY
if command -v gnuplot >/dev/null; then
	[ -s "$T/rep/fidelity.png" ] && [ -s "$T/rep/fidelity.svg" ] && ok "the ratio plot" || bad "no fidelity plot"
fi
# the same boards' model twins again, of boot probe context: a board then has both kinds,
# and the page shows both, each in rows of its own
"$DLSIM" sweep --mode kernel --scenarios "$T/in" --orders sync,kernel-async --kernel 6.12 \
	--twins model --probe-context boot --db "$T/k.db" --jobs 2 --json >"$T/boot.json" 2>"$T/err"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert (d["ran"], d["failed"]) == (6, 0), d' \
	"$T/boot.json" && ok "boot-context model twins added" || { bad "second sweep"; cat "$T/err"; }
expect 0 "report with both kinds of model twins" "$DLSIM" report "$T/k.db" --out "$T/rep3"
python3 - "$T/rep3/fidelity.html" "$T/rep3/fidelity.tsv" <<'PY' \
	&& ok "each board with its model and its model-boot twins" || bad "model-boot twins not shown"
import re, sys
page = open(sys.argv[1]).read()
for b in ("d30.json", "d50.json", "zz30.json"):
    kinds = sorted(re.findall(r"/%s</td><td>[^<]*</td><td>([a-z-]+)</td>" % re.escape(b), page))
    assert kinds == ["model", "model-boot"], (b, kinds)
assert "model-boot twins: <strong>" in page and "model-boot p10" in page
tsv = [l.split("\t") for l in open(sys.argv[2]).read().split("\n\n\n")[0].splitlines() if l[:1] != "#"]
assert len([r for r in tsv if r[0] == "2"]) == 27 and len([r for r in tsv if r[0] == "0"]) == 27, tsv
PY
expect 0 "a plain run" "$DLSIM" run "$SRC/scenarios/camera.json" --db "$T/plain.db"
expect 0 "report on it" "$DLSIM" report "$T/plain.db" --out "$T/rep2"
[ ! -e "$T/rep2/fidelity.html" ] && ! grep -q fidelity.html "$T/rep2/index.html" \
	&& ok "no fidelity page without a kernel sweep" || bad "fidelity page on a plain log"
finish cli_report_fidelity
