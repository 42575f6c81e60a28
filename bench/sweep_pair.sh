#!/bin/sh
# bench/sweep_pair.sh BUILD_DIR [PAIRS] [DTB_CACHE]: whole-process wall time of one `--jobs 2`
# sweep over 200 real DTBs (every 5th of the cache; A) against two independent `--jobs 1`
# sweeps over its two halves run side by side (B), each into a fresh database, A and B in
# turn; prints each pair and the median of A/B.  Target: A/B <= 1/0.95 (--jobs 2 >= 0.95
# of two processes).  With DIR set, the set-up is left there for another timer:
# $DIR/a.sh and $DIR/b.sh are the two commands.
B=$(cd "$1" && pwd); PAIRS=${2:-5}; CACHE=${3:-/var/cache/dlsim-dtbs}
if [ -n "$DIR" ]; then T=$DIR; mkdir -p "$T"; else T=$(mktemp -d); trap 'rm -rf "$T"' EXIT; fi
rm -rf "$T/d" "$T/h1" "$T/h2"
mkdir "$T/d" "$T/h1" "$T/h2"
find "$CACHE" -name '*.dtb' | sort | awk 'NR % 5 == 1' | head -200 | while read -r f; do
	ln -s "$f" "$T/d/$(basename "$(dirname "$f")")-$(basename "$f")"
done
ls "$T/d" | awk 'NR % 2' | while read -r n; do ln -s "$(readlink "$T/d/$n")" "$T/h1/$n"; done
ls "$T/d" | awk 'NR % 2 == 0' | while read -r n; do ln -s "$(readlink "$T/d/$n")" "$T/h2/$n"; done
S="sweep --orders kernel-async-v2"
cat >"$T/a.sh" <<A
rm -rf $T/a.db*
exec $B/dlsim $S --dtbs $T/d --db $T/a.db --jobs 2 >/dev/null
A
cat >"$T/b.sh" <<A
rm -rf $T/b1.db* $T/b2.db*
$B/dlsim $S --dtbs $T/h1 --db $T/b1.db --jobs 1 >/dev/null &
$B/dlsim $S --dtbs $T/h2 --db $T/b2.db --jobs 1 >/dev/null
wait
A
[ -n "$DIR" ] && exit 0
now() { date +%s%N; }
for i in $(seq "$PAIRS"); do
	t0=$(now); sh "$T/a.sh"; t1=$(now); sh "$T/b.sh"; t2=$(now)
	echo "$i $(( (t1 - t0) / 1000000 )) $(( (t2 - t1) / 1000000 ))"
done | awk '{ printf "pair %d: --jobs 2 %.2f s, two --jobs 1 %.2f s, ratio %.3f\n", $1, $2 / 1e3, $3 / 1e3, $2 / $3 }' >"$T/pairs"
cat "$T/pairs"
sed 's/.*ratio //' "$T/pairs" | sort -n | awk '{ r[NR] = $1 }
END { m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
      printf "median ratio A/B %.3f (target <= %.3f)\n", m, 1 / 0.95 }'
