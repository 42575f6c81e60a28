#!/bin/sh
# make test-kernel: `dlsim advise --verify 2` for real on the camera pipeline
# (scenarios/camera.json): one 6.12 boot of six runs (a warm-up, the baseline,
# each of the two best changes followed by the baseline).  Both changes must
# have run on the kernel, the three baselines must agree within 5% (the warm-up
# keeps the boot's slow first seconds out of them) and the kernel's savings
# must have the sign of the predictions.  Not part of `make test`: TCG takes tens of seconds a boot.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
t0=$(date +%s)
expect 0 "advise camera --verify 2 on 6.12" "$DLSIM" advise "$SRC/scenarios/camera.json" \
	--verify 2 --top 2 --json
echo "   (advise --verify 2: $(($(date +%s) - t0)) s wall)"
python3 - "$T/out" >"$T/sum" 2>&1 <<'PY'; st=$?
import json, sys
d = json.load(open(sys.argv[1]))
v = d["verify"]
b = [sum(r.values()) for r in v["baseline_runs"]]
print("kernel", v["kernel"], v["release"], "boots", v["boots"], "runs", v["runs"],
      "baselines", " ".join("%.3f" % (x / 1e6) for x in b), "ms")
assert v["kernel"] == "6.12" and v["release"].startswith("6.12.") and v["boots"] == 1 and v["runs"] == 6
assert len(b) == 3 and max(b) - min(b) <= 0.05 * max(b), "the baselines differ by more than 5%"
for c in d["changes"]:
    k = c["kernel"]
    print(c["rank"], c["change"], "predicted %.3f ms, kernel %.3f ms%s" % (
        c["total_saved_ns"] / 1e6, k["total_saved_ns"] / 1e6, " (flagged)" if k["flagged"] else ""))
    assert k["ran"], c["change"] + " did not run"
    assert (k["total_saved_ns"] > 0) == (c["total_saved_ns"] > 0), c["change"] + ": the sign"
PY
cat "$T/sum"
[ "$st" = 0 ] && ok "both changes ran on the kernel, the baselines agree, the signs hold" \
	|| bad "advise --verify on the kernel"
finish test-kernel-advise-verify
