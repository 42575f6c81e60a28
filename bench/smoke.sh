#!/bin/sh
# bench/smoke.sh DLSIM_BENCH SOURCE_DIR - the ctest bench_smoke (make bench-smoke):
# every family at its smallest size for a few milliseconds each, so the suite
# never rots, then bench/compare on that run:
#  - gating only on failures (--failures-only: a smoke run's timings are noise,
#    and sanitizer builds are 10-1000x slower, but a benchmark whose
#    self-check fails must fail the test);
#  - its own exit codes: 1 on a doctored baseline, 2 on bad input.
set -u
bench=$1
src=$2
filter='/(chain|random)/1000$|/diamond/2$|reorder_to_tail/1000$|topo_pass/1000$'
filter="$filter|engine_run/.*/1000$|BM_log_insert/2000/real_time$|BM_check/2000$"
filter="$filter|BM_event_queue/.*/1024$|BM_threads_overhead/(flat|chain)/kernel-async-v2/2000/"
filter="$filter|BM_import_log/10$|BM_advise/500$|BM_phase_vs_topo/.*/1000$"

tmp=$(mktemp -d /tmp/dlsim-bench-smoke.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "bench_smoke: $*"; exit 1; }

"$bench" "--benchmark_filter=$filter" --benchmark_min_time=0.01 \
	--benchmark_out="$tmp/smoke.json" --benchmark_out_format=json ||
	fail "dlsim-bench exited with $?"

if ! command -v python3 >/dev/null 2>&1; then
	echo "bench_smoke: no python3: bench/compare not exercised"
	exit 77
fi
compare="python3 $src/bench/compare"

# Every family ran, and no benchmark reported a failed self-check.
for fam in BM_link_add/ BM_link_add_kernel_dfs/ BM_reorder_to_tail/ BM_topo_pass/ \
	BM_engine_run/ BM_log_insert/ BM_check/ BM_event_queue/binary BM_event_queue/4ary \
	BM_threads_overhead/ BM_import_log/ BM_advise/ BM_phase_vs_topo/dag/ BM_phase_vs_topo/layered/; do
	grep -q "\"name\": \"$fam" "$tmp/smoke.json" || fail "no $fam benchmark in the smoke run"
done
$compare "$tmp/smoke.json" --failures-only >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ $rc = 0 ] || fail "bench/compare --failures-only exited with $rc (a benchmark failed?)"
for what in "compared with the baseline" "== scaling" "== targets" "binary vs 4-ary" \
	"slowest PM phase vs topo_pass, dag at 1k" "probe op vs topo_pass, layered at 1k"; do
	grep -q "$what" "$tmp/out" || fail "bench/compare printed no '$what'"
done

# The gate: the run against itself passes; against a baseline where one
# benchmark was 10x faster it fails with 1 and names it.
$compare "$tmp/smoke.json" --baseline "$tmp/smoke.json" >/dev/null 2>&1 ||
	fail "a run compared with itself did not pass"
python3 - "$tmp/smoke.json" "$tmp/fast.json" <<'EOF' || fail "could not write the doctored baseline"
import json, sys
doc = json.load(open(sys.argv[1]))
for b in doc["benchmarks"]:
    if b["name"] == "BM_topo_pass/1000":
        b["items_per_second"] *= 10
json.dump(doc, open(sys.argv[2], "w"))
EOF
$compare "$tmp/smoke.json" --baseline "$tmp/fast.json" >"$tmp/out" 2>&1
rc=$?
[ $rc = 1 ] || fail "a 10x regression exited with $rc, expected 1"
grep -q "BM_topo_pass/1000 .*REGRESSED" "$tmp/out" || fail "the regression was not named"
$compare "$tmp/smoke.json" --baseline "$tmp/fast.json" --no-gate >/dev/null 2>&1 ||
	fail "--no-gate did not exit 0"

# A benchmark whose self-check failed (SkipWithError) fails the gate at any threshold.
python3 - "$tmp/smoke.json" "$tmp/broken.json" <<'EOF' || fail "could not write the broken run"
import json, sys
doc = json.load(open(sys.argv[1]))
for b in doc["benchmarks"]:
    if b["name"] == "BM_check/2000":
        b["error_occurred"] = True
        b["error_message"] = "the checker found violations in a clean run"
json.dump(doc, open(sys.argv[2], "w"))
EOF
$compare "$tmp/broken.json" --failures-only >"$tmp/out" 2>&1
rc=$?
[ $rc = 1 ] || fail "a failed benchmark exited with $rc, expected 1"
grep -q "BM_check/2000 .*FAILED: the checker" "$tmp/out" || fail "the failure was not named"

# Bad input: exit 2, a message, no traceback.
echo 'not json' >"$tmp/bad.json"
for args in "$tmp/bad.json" "$tmp/missing.json" "$tmp/smoke.json --threshold 0.5" \
	"$tmp/smoke.json --threshold nan" "$tmp/smoke.json --rt-threshold 0.5" \
	"$tmp/smoke.json --filter (" "$tmp/smoke.json --min-time 1" \
	"$tmp/smoke.json --failures-only --no-gate" "--no-such-option"; do
	# shellcheck disable=SC2086
	$compare $args >"$tmp/out" 2>&1
	rc=$?
	[ $rc = 2 ] || fail "compare $args exited with $rc, expected 2"
	if grep -q Traceback "$tmp/out"; then fail "compare $args: traceback"; fi
done
echo "bench_smoke: ok"
