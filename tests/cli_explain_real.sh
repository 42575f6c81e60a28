#!/bin/sh
# explain and advise on real logs (issue 33), imported from ../shared/real/:
# the pm-graph x86 laptop (3.15, some devices async) and the Pixel 6 (v6.16-rc4,
# its long cycle all sync).  explain's parts add up to every phase under sync,
# classic and v2; a sync run is set by the main thread with its longest
# callbacks named; advise puts a change a kernel engineer can make first.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

need_real pmgraph-skynet-mem-dmesg.txt pixel6-v616rc4-suspend-initcall.txt

# FILE's phases: the parts printed under each add up to its time (within rounding)
shares_add_up() {
	awk 'function check() { if (ph != "" && (sum - span > 0.01 || span - sum > 0.01)) {
			print "parts " sum " ms, phase " span " ms: " ph; bad = 1 } }
	/^  [a-z_]+ +[0-9.]+ ms/ { check(); ph = $1; span = $2; sum = 0; n++; next }
	/^    (main thread|chain|CPU contention|dispatch|waiting to start) / {
		for (i = 1; i <= NF; i++) if ($(i + 1) == "ms") { sum += $i; break } ; next }
	/^[a-z]/ { check(); ph = "" }
	END { check(); exit bad || !n }' "$1"
}

expect 0 "import the x86 log" "$DLSIM" import-log "$REAL/pmgraph-skynet-mem-dmesg.txt"
cp "$T/out" "$T/x86.json"
expect 0 "import the Pixel 6 log" "$DLSIM" import-log "$REAL/pixel6-v616rc4-suspend-initcall.txt"
cp "$T/out" "$T/p6.json"

n=0
for sc in x86 p6; do
	for o in sync kernel-async kernel-async-v2; do
		n=$((n + 1))
		expect 0 "run $sc under $o" "$DLSIM" run "$T/$sc.json" --order $o --set defaults.async=false --db "$T/r.db"
		expect 0 "explain $sc under $o" "$DLSIM" explain "$T/r.db" --run $n
		cp "$T/out" "$T/$sc-$o.txt"
		shares_add_up "$T/out" || { bad "$sc, $o: the parts add up to every phase"; cat "$T/out"; }
		grep -q "CPU work/K 0.000\|chain-bound\|CPU-bound" "$T/out" && { bad "$sc, $o: no verdict on a CPU share never given"; cat "$T/out"; }
	done
done
# sync: the main thread sets suspend, its longest callback named (the x86 disk, the Pixel's UFS LUN)
grep -q "^suspend: .*; set by: main thread 100%" "$T/x86-sync.txt" || { bad "x86 sync: the main thread sets suspend"; cat "$T/x86-sync.txt"; }
grep -q "^    main thread .* longest: 0:0:0:0 " "$T/x86-sync.txt" || { bad "x86 sync: the disk named first"; cat "$T/x86-sync.txt"; }
grep -q "^    main thread .* longest: 0:0:0:49488 " "$T/p6-sync.txt" || { bad "p6 sync: the UFS LUN named first"; cat "$T/p6-sync.txt"; }
# classic, the log's flags: resume is a chain on workers, named
grep -A4 "^  resume " "$T/x86-kernel-async.txt" | grep -q "^    chain .*0000:00:1b.0" || { bad "x86 classic: the resume chain named"; cat "$T/x86-kernel-async.txt"; }

# advise on the x86 log: its own order and flags, a kernel-actionable change first
expect 0 "advise x86" "$DLSIM" advise "$T/x86.json" --json --top 5
python3 - "$T/out" <<'PY' || { bad "advise x86: the log's baseline, a kernel change first"; cat "$T/out"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["order"] == "kernel-async" and d["order_from"].startswith("the log's"), d["order"]
top = d["changes"][0]
assert top["kind"] in ("async", "async_pair", "async_chain", "async_subtree", "async_all", "halve",
                       "upgrade", "drop_link") and not top["research"], top
assert top["total_saved_ns"] > 0, top
PY
expect 0 "advise x86 --research" "$DLSIM" advise "$T/x86.json" --json --research --top 0
python3 - "$T/out" <<'PY' || { bad "advise x86 --research: orders and CPUs marked research"; cat "$T/out"; }
import json, sys
d = json.load(open(sys.argv[1]))
r = [c for c in d["changes"] if c["research"]]
assert sorted(c["kind"] for c in r) == ["cpus", "order", "order"], r
PY
# the Pixel's long cycle as an all-sync log: the baseline is sync, async changes first
expect 0 "advise p6, all sync" "$DLSIM" advise "$T/p6.json" --top 3 --order sync
grep -q "^pixel6-v616rc4-suspend-initcall under sync (--order), every device sync" "$T/out" || { bad "p6: a sync baseline"; cat "$T/out"; }
grep -q "^   1  make .* async" "$T/out" || { bad "p6: an async change first"; cat "$T/out"; }
finish cli_explain_real
