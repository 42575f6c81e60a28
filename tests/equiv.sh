#!/bin/sh
# equiv.sh - is this tree's engine behaviour the same as at revision REV?
#
#   sh tests/equiv.sh [REV] [--threads] [--skip-large] [--no-moves]
#
# Builds the engine libraries of REV (default: the merge-base of HEAD with
# main) and of the work tree in a scratch directory, links tests/equiv_dump.c
# against each, and runs every shipped scenario x every order x seeds 1-3
# under DES: the event streams (every field of every event) and every figure
# of the run result must be identical.  With --threads the same runs are
# also made on real threads and their multisets of callbacks compared (the
# times and interleavings of real threads are not deterministic; which
# callbacks run is, except after a fault halts a phase: then only the
# outcome is compared).  Exit 0: identical; 1: a difference (listed); 2: setup.
# A threads run the DES puts beyond a minute of real time (default.json under the
# orders whose deferred retries walk for 1000 s each) is skipped and listed.
# Wall times are not compared (they are not in the dump).  --no-moves leaves
# the dpm_move events out of the comparison (and the event counts, which
# include them): for a change to when the core applies dpm_list moves.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
rev="" threads=0 skip_large=0
for a in "$@"; do
	case $a in
	--threads) threads=1 ;;
	--skip-large) skip_large=1 ;;
	--no-moves) EQUIV_NO_MOVES=1; export EQUIV_NO_MOVES ;;
	*) rev=$a ;;
	esac
done
cd "$here" || exit 2
[ -n "$rev" ] || rev=$(git merge-base HEAD main) || exit 2
work=${EQUIV_DIR:-$(mktemp -d /tmp/dlsim-equiv-XXXXXX)}
mkdir -p "$work"
echo "equiv: reference $(git rev-parse --short "$rev"), scratch $work"

# build SRC DIR: the static libraries of the tree at SRC into DIR, and equiv_dump
build() {
	cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release >/dev/null || return 1
	libs="dl_core dl_order dl_engine dl_scenario dl_log"
	cmake --build "$2" -j2 --target $libs >/dev/null || return 1
	cc -O2 -std=gnu17 -D_GNU_SOURCE -I"$1" "$here/tests/equiv_dump.c" -o "$2/equiv_dump" \
	   -Wl,--start-group $(find "$2/sim" -name 'libdl_*.a') -Wl,--end-group \
	   -ljansson -lfdt -lsqlite3 -lm -lpthread || return 1
}
rm -rf "$work/ref-src"
mkdir -p "$work/ref-src"
git archive "$rev" | tar -x -C "$work/ref-src" || exit 2
build "$work/ref-src" "$work/ref" || { echo "equiv: cannot build $rev"; exit 2; }
build "$here" "$work/new" || { echo "equiv: cannot build the work tree"; exit 2; }

orders=$("$work/ref/equiv_dump" --orders)
runs=0 diffs=0 skipped=0
for sc in "$here"/scenarios/*.json; do
	name=$(basename "$sc" .json)
	[ $skip_large = 1 ] && [ "$name" = large ] && continue
	for o in $orders; do
		for seed in 1 2 3; do
			modes="des"
			# real threads: the small scenarios only (the pool of kernel-async is large)
			[ $threads = 1 ] && [ "$name" != large ] && modes="des threads"
			for m in $modes; do
				flag=""; [ $m = threads ] && flag=--threads
				"$work/ref/equiv_dump" "$sc" "$o" $seed $flag > "$work/a" 2>&1
				if [ $? = 77 ]; then
					# the DES puts it beyond a minute of real time (a retry storm's walks)
					echo "skipped: $name $o seed $seed threads, $(cat "$work/a")"
					skipped=$((skipped + 1))
					continue
				fi
				"$work/new/equiv_dump" "$sc" "$o" $seed $flag > "$work/b" 2>&1
				runs=$((runs + 1))
				# a fault halts a threads phase wherever the other threads are: only the outcome is fixed
				if [ $m = threads ] && grep -q 'status failed' "$work/a"; then
					sed -i 1q "$work/a"; sed -i 1q "$work/b"
				fi
				if ! cmp -s "$work/a" "$work/b"; then
					diffs=$((diffs + 1))
					echo "DIFF $name $o seed $seed $m"
					diff "$work/a" "$work/b" | head -6
				fi
			done
		done
	done
done
if [ $skipped -gt 0 ]; then
	echo "equiv: $runs runs, $diffs differ, $skipped threads runs skipped (listed above)"
else
	echo "equiv: $runs runs, $diffs differ"
fi
[ -z "${EQUIV_DIR:-}" ] && rm -rf "$work"
[ $diffs = 0 ]
