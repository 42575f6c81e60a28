#!/bin/sh
# make test-dtbs: import every cached real DTB, validate it, run it under
# kernel-async-v2 and check the log; print one table row per DTB and a summary.
# usage: dtbs_table.sh DLSIM DTB_CACHE
DLSIM=$1
CACHE=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0; failed=0
printf '%-48s %8s %6s %6s %12s %12s\n' dtb devices links cycles probe_ms suspend_ms
for f in $(find "$CACHE" -name '*.dtb' | sort); do
	n=$((n + 1))
	name=$(basename "$f" .dtb)
	if ! "$DLSIM" import-dtb "$f" >"$T/s.json" 2>"$T/imp"; then
		echo "FAIL import $f: $(cat "$T/imp")"; failed=$((failed + 1)); continue
	fi
	cyc=$(sed -n 's/.* \([0-9]*\) on cycles.*/\1/p' "$T/imp")
	"$DLSIM" validate "$T/s.json" >/dev/null || { echo "FAIL validate $f"; failed=$((failed + 1)); continue; }
	rm -f "$T/r.db"
	if ! "$DLSIM" run "$T/s.json" --order kernel-async-v2 --db "$T/r.db" --json >"$T/r.json" 2>"$T/err"; then
		echo "FAIL run $f: $(head -2 "$T/err")"; failed=$((failed + 1)); continue
	fi
	"$DLSIM" check "$T/r.db" >/dev/null || { echo "FAIL check $f"; failed=$((failed + 1)); continue; }
	python3 - "$T/r.json" "$name" "$cyc" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("%-48s %8d %6d %6s %12.3f %12.3f" % (sys.argv[2][:48], r["devices"], r["links"], sys.argv[3],
      r["probe"]["makespan_ns"] / 1e6, r["suspend"]["makespan_ns"] / 1e6))
PY
done >"$T/table"
cat "$T/table"
python3 - "$T/table" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith(("dtb", "FAIL"))]
if rows:
    dev = [int(r[1]) for r in rows]; lnk = [int(r[2]) for r in rows]; cyc = [int(r[3] or 0) for r in rows]
    print("summary: %d DTBs; devices median %d max %d; links median %d max %d; links on cycles total %d (in %d DTBs)"
          % (len(rows), statistics.median(dev), max(dev), statistics.median(lnk), max(lnk), sum(cyc),
             sum(1 for c in cyc if c)))
PY
echo "test-dtbs: $n DTBs, $failed failed"
[ "$failed" = 0 ]
