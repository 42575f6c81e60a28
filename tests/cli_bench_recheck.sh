#!/bin/sh
# bench/compare --recheck: a benchmark beyond the threshold is run again alone
# (a stand-in dlsim-bench that writes the JSON it is told to); it fails the
# gate only if no recheck brings it within the threshold, and a benchmark
# within it is not run again.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

C="$SRC/bench/compare"
entry() { # name cpu_ms
	printf '{"name":"%s_median","run_name":"%s","run_type":"aggregate","aggregate_name":"median",' "$1" "$1"
	printf '"iterations":3,"real_time":%s,"cpu_time":%s,"time_unit":"ms"}' "$2" "$2"
}
doc() { # entries...
	printf '{"context":{"date":"2026-12-07"},"benchmarks":['
	sep=
	for e; do printf '%s%s' "$sep" "$e"; sep=,; done
	printf ']}\n'
}
doc "$(entry BM_a/10 100)" "$(entry BM_b/10 100)" >"$T/base.json"
doc "$(entry BM_a/10 200)" "$(entry BM_b/10 110)" >"$T/new.json"
# the stand-in: BM_a at $FAKE_MS ms; every run noted in $T/runs
cat >"$T/fake-bench" <<FAKE
#!/bin/sh
for a; do case \$a in --benchmark_out=*) out=\${a#--benchmark_out=};; esac; done
echo "\$*" >>"$T/runs"
printf '{"context":{},"benchmarks":[{"name":"BM_a/10_median","run_name":"BM_a/10","run_type":"aggregate","aggregate_name":"median","iterations":3,"real_time":%s,"cpu_time":%s,"time_unit":"ms"}]}\n' "\$FAKE_MS" "\$FAKE_MS" >"\$out"
FAKE
chmod +x "$T/fake-bench"

expect 1 "no recheck: 2x fails" python3 "$C" "$T/new.json" --baseline "$T/base.json"
grep -q "BM_a/10 .*2.00x  REGRESSED" "$T/out" && ok "BM_a 2x regressed" || bad "table: $(cat "$T/out")"

expect 0 "a regression that is noise alone" env FAKE_MS=120 python3 "$C" "$T/new.json" \
	--baseline "$T/base.json" --recheck 2 --bench "$T/fake-bench"
grep -q "BM_a/10 .*1.20x .*noise" "$T/out" && ok "BM_a rechecked at 1.2x: noise" || bad "recheck: $(cat "$T/out")"
[ "$(wc -l <"$T/runs")" = 1 ] && ok "run once: the first recheck was within" || bad "runs: $(cat "$T/runs")"
grep -q -- '--benchmark_filter=^BM_a/10\$' "$T/runs" && ok "only BM_a run again" || bad "runs: $(cat "$T/runs")"

rm -f "$T/runs"
expect 1 "a regression every recheck confirms" env FAKE_MS=190 python3 "$C" "$T/new.json" \
	--baseline "$T/base.json" --recheck 2 --bench "$T/fake-bench"
grep -q "BM_a/10 .*1.90x, 1.90x .*REGRESSED" "$T/out" && ok "BM_a twice 1.9x: regressed" || bad "recheck: $(cat "$T/out")"
grep -q "1 benchmark(s) regressed" "$T/out" && ok "one regression counted" || bad "count: $(tail -2 "$T/out")"

# a name with '-' (kernel-async, cp-first): the filter must not escape it, which
# Google Benchmark's regex refuses ("Invalid escape"; re.escape() did, and compare crashed)
doc "$(entry BM_c-d/10 100)" >"$T/base2.json"
doc "$(entry BM_c-d/10 200)" >"$T/new2.json"
cat >"$T/fake-bench2" <<FAKE
#!/bin/sh
for a; do case \$a in --benchmark_out=*) out=\${a#--benchmark_out=};; --benchmark_filter=*) f=\${a#--benchmark_filter=};; esac; done
case \$f in *'\\-'*) echo "Could not compile benchmark re: Invalid escape in regular expression" >&2; exit 1;; esac
printf '{"context":{},"benchmarks":[{"name":"BM_c-d/10_median","run_name":"BM_c-d/10","run_type":"aggregate","aggregate_name":"median","iterations":3,"real_time":110,"cpu_time":110,"time_unit":"ms"}]}\n' >"\$out"
FAKE
chmod +x "$T/fake-bench2"
expect 0 "a regression named with a '-', rechecked" python3 "$C" "$T/new2.json" \
	--baseline "$T/base2.json" --recheck 1 --bench "$T/fake-bench2"
grep -q "BM_c-d/10 .*1.10x .*noise" "$T/out" && ok "BM_c-d rechecked at 1.1x: noise" || bad "dashed: $(cat "$T/out")"

# --ref-bench: the baseline's commit built on this machine; a recheck is new
# against it, run just before (a baseline measured elsewhere, here with other
# caches: the note says so)
doc "$(entry BM_a/10 100)" "$(entry BM_b/10 100)" |
	sed 's/"context":{"date":"2026-12-07"}/"context":{"date":"2026-12-07","num_cpus":2,"caches":[{"level":3,"type":"Unified","size":272629760}]}/' \
	>"$T/base-elsewhere.json"
cat >"$T/fake-ref" <<FAKE
#!/bin/sh
for a; do case \$a in --benchmark_out=*) out=\${a#--benchmark_out=};; esac; done
echo ref >>"$T/runs"
printf '{"context":{},"benchmarks":[{"name":"BM_a/10_median","run_name":"BM_a/10","run_type":"aggregate","aggregate_name":"median","iterations":3,"real_time":%s,"cpu_time":%s,"time_unit":"ms"}]}\n' "\$REF_MS" "\$REF_MS" >"\$out"
FAKE
chmod +x "$T/fake-ref"
rm -f "$T/runs"
expect 0 "a machine 1.9x slower than the baseline's: not a regression against the ref" \
	env FAKE_MS=190 REF_MS=180 python3 "$C" "$T/new.json" --baseline "$T/base-elsewhere.json" \
	--recheck 2 --bench "$T/fake-bench" --ref-bench "$T/fake-ref"
grep -q "BM_a/10 .*1.06x .*noise" "$T/out" && ok "BM_a at 190 against the ref's 180: 1.06x" \
	|| bad "ref recheck: $(cat "$T/out")"
grep -q "measured on another machine" "$T/out" && ok "said the baseline is another machine's" \
	|| bad "no machine note: $(head -3 "$T/out")"
[ "$(sed -n 1p "$T/runs")" = ref ] && [ "$(wc -l <"$T/runs")" = 2 ] && ok "the ref ran first, once" \
	|| bad "runs: $(cat "$T/runs")"
expect 1 "a real 1.9x against the ref" env FAKE_MS=190 REF_MS=100 python3 "$C" "$T/new.json" \
	--baseline "$T/base-elsewhere.json" --recheck 2 --bench "$T/fake-bench" --ref-bench "$T/fake-ref"
grep -q "BM_a/10 .*1.90x, 1.90x .*REGRESSED" "$T/out" && ok "BM_a 1.9x the ref twice: regressed" \
	|| bad "ref regression: $(cat "$T/out")"
expect 2 "--ref-bench without --recheck" python3 "$C" "$T/new.json" --baseline "$T/base.json" \
	--ref-bench "$T/fake-ref"

expect 2 "--recheck out of range" python3 "$C" "$T/new.json" --baseline "$T/base.json" --recheck 11
finish cli_bench_recheck
