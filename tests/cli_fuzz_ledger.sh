#!/bin/sh
# The fuzzing ledger (issue 34): `make fuzz` appends one line a harness run to
# FUZZ_CACHE/ledger.tsv (tests/fuzz/run.sh) and tests/fuzz/ledger.sh sums them,
# so that CPU-hours add up across sessions.  Here on a hand-made ledger: the
# totals per harness, the crashes, "met" once a harness has its hour, and a
# malformed line skipped, not counted.  And run.sh's timeouts: a unit that timed
# out while fuzzing is run again alone, and is a crash only if it is slow alone
# (a stand-in harness, so that no fuzz build is needed).
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

L="$SRC/tests/fuzz/ledger.sh"
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
