#!/bin/sh
# The fuzzing ledger (issue 34): `make fuzz` appends one line a harness run to
# FUZZ_CACHE/ledger.tsv (tests/fuzz/run.sh) and tests/fuzz/ledger.sh sums them,
# so that CPU-hours add up across sessions.  Here on a hand-made ledger: the
# totals per harness, the crashes, "met" once a harness has its hour, and a
# malformed line skipped, not counted.  And run.sh's timeouts: a unit that timed
# out while fuzzing is run again alone, and is a crash only if it is slow alone
# (a stand-in harness, so that no fuzz build is needed).  And the fuzzing of
# machines that are gone, carried in the tree (tests/fuzz/ledger-earlier.tsv):
# added to the cache's, and `--carry` prints a cache's ledger in its format.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

L="$SRC/tests/fuzz/ledger.sh"
DLSIM_FUZZ_CARRIED=; export DLSIM_FUZZ_CARRIED   # none, until the carried part below
expect 0 "no ledger yet" sh "$L" "$T/none"
grep -q "no $T/none/ledger.tsv yet" "$T/out" && ok "says there is none" || bad "no ledger: $(cat "$T/out")"
mkdir -p "$T/c"
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
	2026-12-07T02:41:40Z check abc1234 4883 1800.5 40000 0 \
	2026-12-08T02:41:40Z check def5678 4883 1800.0 50000 0 \
	2026-12-07T02:41:40Z dtb abc1234 4883 900 123456 1 >"$T/c/ledger.tsv"
echo "a line cut short" >>"$T/c/ledger.tsv"
expect 0 "ledger totals" sh "$L" "$T/c"
cat "$T/out"
grep -Eq '^check +2 +1\.000 +90000 +0 met$' "$T/out" && ok "check: two runs, 1.000 CPU-hour, met" \
	|| bad "check row: $(grep '^check' "$T/out")"
grep -Eq '^dtb +1 +0\.250 +123456 +1 0\.750 h$' "$T/out" && ok "dtb: 0.25 h, a crash, 0.75 h to go" \
	|| bad "dtb row: $(grep '^dtb' "$T/out")"
grep -Eq '^total +3 +1\.250 +213456 +1$' "$T/out" && ok "the totals" || bad "total: $(grep '^total' "$T/out")"
grep -q "1 malformed lines skipped" "$T/out" && ok "the cut line skipped" || bad "malformed line not said"
expect 0 "a target of 2 hours" sh "$L" "$T/c" 2
grep -Eq '^check .* 1\.000 h$' "$T/out" && ok "check: an hour to go for 2" || bad "target 2: $(cat "$T/out")"
# carried: a comment, a line summing 4 runs; then the cache's own
printf '# earlier machines\n%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
	2026-12-06T14:45:00Z dtb stop41 0 1800 1000 2 4 >"$T/carried.tsv"
expect 0 "carried alone" env DLSIM_FUZZ_CARRIED="$T/carried.tsv" sh "$L" "$T/none"
grep -Eq '^dtb +4 +0\.500 +1000 +2 0\.500 h$' "$T/out" && ok "carried: 4 runs, half an hour" \
	|| bad "carried alone: $(cat "$T/out")"
expect 0 "carried and the cache" env DLSIM_FUZZ_CARRIED="$T/carried.tsv" sh "$L" "$T/c"
grep -Eq '^dtb +5 +0\.750 +124456 +3 0\.250 h$' "$T/out" && ok "dtb: 4 carried runs and 1, 0.75 h" \
	|| bad "carried + cache dtb: $(cat "$T/out")"
grep -q '^fuzz ledger: 7 runs (4 of them on earlier machines' "$T/out" && ok "says what was carried" \
	|| bad "carried head: $(head -1 "$T/out")"
expect 0 "--carry" sh "$L" "$T/c" --carry
grep -Eq '^2026-12-08T02:41:40Z	check	def5678	9766	3600\.5	90000	0	2$' "$T/out" && ok "--carry sums check's runs" \
	|| bad "--carry: $(cat "$T/out")"
[ "$(wc -l <"$T/out")" -eq 2 ] && ok "--carry: a line a harness" || bad "--carry lines: $(cat "$T/out")"
[ -s "$SRC/tests/fuzz/ledger-earlier.tsv" ] && env -u DLSIM_FUZZ_CARRIED sh "$L" "$T/none" | grep -q 'earlier machines' \
	&& ok "the tree's carried ledger is read by default" || bad "the tree's carried ledger not read"
# run.sh with a stand-in harness: fuzzing "times out" and writes its unit; alone
# the unit finishes, unless FAKE_SLOW=1
mkdir -p "$T/fz" "$T/fc"
cat >"$T/fz/fuzz_check" <<'FAKE'
#!/bin/sh
for a; do case $a in -max_total_time=*) fuzz=1;; -artifact_prefix=*) pre=${a#-artifact_prefix=};; esac; done
if [ -n "$fuzz" ]; then
	echo x >"${pre}timeout-abc"
	echo "artifact_prefix='$pre'; Test unit written to ${pre}timeout-abc"
	echo "==1== ERROR: libFuzzer: timeout after 13 seconds"
	exit 70
fi
[ "$FAKE_SLOW" = 1 ] && { echo "==1== ERROR: libFuzzer: timeout after 11 seconds"; exit 70; }
exit 0
FAKE
chmod +x "$T/fz/fuzz_check"
R="$SRC/tests/fuzz/run.sh"
expect 0 "a timeout that is not slow alone" sh "$R" check "$T/fz" "$SRC" 1 "$T/fc"
[ -f "$T/fc/slow-check-timeout-abc" ] && [ ! -e "$T/fc/crash-check-timeout-abc" ] \
	&& ok "kept as slow-, not crash-" || bad "artefacts: $(ls "$T/fc")"
[ "$(cut -f7 "$T/fc/ledger.tsv")" = 0 ] && ok "the ledger counts no crash" || bad "ledger: $(cat "$T/fc/ledger.tsv")"
expect 70 "a timeout that is slow alone too" env FAKE_SLOW=1 sh "$R" check "$T/fz" "$SRC" 1 "$T/fc"
[ -f "$T/fc/crash-check-timeout-abc" ] && ok "kept as a crash" || bad "artefacts: $(ls "$T/fc")"
[ "$(tail -1 "$T/fc/ledger.tsv" | cut -f7)" = 1 ] && ok "the ledger counts the crash" || bad "ledger: $(cat "$T/fc/ledger.tsv")"
finish cli_fuzz_ledger
