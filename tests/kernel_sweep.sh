#!/bin/sh
# make test-kernel: a small kernel-mode sweep on the real 6.12 guest: three real boards
# (Debian's arm64 DTBs, /var/cache/dlsim-dtbs) x {sync, kernel-async}, two workers each
# booting its own guest for its batch, every kernel run with its model twin.  The summary
# must count every run, compare each kernel run with its twin on pairs a dependency
# orders (where a disagreement is a broken rule) and give the phase ratios; every kernel
# run must pass check and kernel_order.py; `dlsim report` gives the same per board on its
# fidelity page.  Skipped (77) without the DTB cache.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
D=${DLSIM_DTB_DIR:-/var/cache/dlsim-dtbs/x/usr/lib/linux-image-6.12.118+deb12-arm64}
mkdir -p "$T/b"
for f in allwinner/sun50i-a100-allwinner-perf1.dtb rockchip/px30-evb.dtb \
	amlogic/meson-gxl-s905x-nexbox-a95x.dtb; do
	[ -f "$D/$f" ] || { echo "SKIP: no $D/$f (set DLSIM_DTB_DIR)"; exit 77; }
	ln -s "$D/$f" "$T/b/"
done
t0=$(date +%s)
expect 0 "3 boards x 2 orders on 6.12, model twins, 2 workers" "$DLSIM" sweep --mode kernel \
	--dtbs "$T/b" --orders sync,kernel-async --kernel 6.12 --twins model --jobs 2 \
	--db "$T/k.db" --json
echo "   (kernel sweep: $(($(date +%s) - t0)) s wall)"
cp "$T/out" "$T/k.json"
python3 - "$T/k.json" <<'PY' && ok "the summary: 6 kernel runs and 6 twins compared per board" || { bad "summary"; cat "$T/k.json"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert (d["planned"], d["ran"], d["failed"], d["violations"]) == (12, 12, 0, 0), d
assert len(d["groups"]) == 3
for g in d["groups"]:
    m = g["kernel_fidelity"]["model"]
    assert m["runs"] == 2 and m["dependencies_known"], g["label"]
    assert m["dependency_pairs"] > 0 and 0 <= m["dependency_agree"] <= m["dependency_pairs"], m
    assert m["timing_agree"] <= m["timing_pairs"], m
    for ph in ("suspend", "resume"):
        assert 0.05 < m["phase_ratio_median"][ph] < 20, (g["label"], ph, m["phase_ratio_median"])
    print("   %-40s dependency pairs %d/%d, timing pairs %d/%d, suspend %.2f, resume %.2f" % (
        g["label"], m["dependency_agree"], m["dependency_pairs"], m["timing_agree"],
        m["timing_pairs"], m["phase_ratio_median"]["suspend"], m["phase_ratio_median"]["resume"]))
PY
[ "$(sqlite3 "$T/k.db" "select count(*) from runs where mode = 'kernel' and status = 'ok'
	and version like '% kernel 6.12.%'")" = 6 ] && ok "6 kernel runs on the 6.12 guest" || bad "kernel runs"
expect 0 "check passes on every run" "$DLSIM" check "$T/k.db" --all
expect 0 "report: the fidelity page" "$DLSIM" report "$T/k.db" --out "$T/rep"
python3 - "$T/k.json" "$T/rep/fidelity.html" <<'PY' && ok "fidelity.html: the 3 boards, the summary's pairs" || bad "fidelity page"
import json, sys
d = json.load(open(sys.argv[1]))
page = open(sys.argv[2]).read()
for g in d["groups"]:
    m = g["kernel_fidelity"]["model"]
    assert g["label"] in page, g["label"]
    assert "%d / %d" % (m["dependency_agree"], m["dependency_pairs"]) in page, (g["label"], m)
PY
expect 0 "resumed: nothing boots again" "$DLSIM" sweep --mode kernel --dtbs "$T/b" \
	--orders sync,kernel-async --kernel 6.12 --twins model --db "$T/k.db"
grep -q "12 already in .*, 0 run now" "$T/out" && ok "every run skipped" || bad "resume"
# kernel_order.py reads OUT.db's events table itself: the events move in from the shards first
expect 0 "the shards' events compacted into OUT.db" "$DLSIM" sweep --compact "$T/k.db"
expect 0 "prepare in dpm_list order, complete in reverse" python3 "$SRC/tests/kernel_order.py" "$T/k.db"
finish test-kernel-sweep
