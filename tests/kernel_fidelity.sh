#!/bin/sh
# make fidelity: how close the DES comes to the real kernel (issue 18's done-when).
# Nine kernel runs (`--mode kernel`, one boot each, one at a time): the generated 50-
# and 200-device DAGs (scenarios/default.json --set devices=N) and the camera pipeline
# (scenarios/camera.json), each under order sync and kernel-async on 6.12 and
# kernel-async-v2 on 7.3; beside each, its DES twin (same scenario, order, kernel
# rules and seed, --workers 1: the guest has one vCPU).  Then `dlsim diff DES KERNEL
# --json` per case, and tests/tools/fidelity_table.py prints a markdown table: per op,
# both makespans, their ratio DES/kernel, the pairs ordered with a gap above 1 ms in
# both runs, the share ordered the same way, and the first disagreeing pairs.
#
#   sh tests/kernel_fidelity.sh DLSIM SRC [DB]
#
# DB (default build/fidelity.db) is kept: a kernel run already in it (same scenario,
# order, device count, seed and kernel, status ok) is reused, so a second call boots
# nothing and only redoes the DES twins.  The twins probe as the kernel mode's module
# does (--probe-context module); FIDELITY_DES_ARGS replaces that option ("" or
# "--probe-context boot": the boot model); FIDELITY_CASES picks cases by name
# (d50-sync d50-ka d50-v2 d200-sync d200-ka d200-v2 camera-sync camera-ka camera-v2).
# FIDELITY_PROFILE=guest (the default) runs the twins under the guest cost profile
# (--profile guest, sim/engine/cost.c: the TCG guest's sleep overshoot, main-thread step,
# runtime-PM transitions, PM dispatch, kworker pool, async probe start and retry path) and
# 7.3's reorder walk on top; FIDELITY_PROFILE=none runs them with the hardware profile.
# Each case also gets its replay twin (dlsim twin DB KERNEL_RUN: the DES with every callback
# as long as the kernel ran it, guest profile), diffed with the kernel run: its columns
# replay/kernel and replay agreement.
# FIDELITY_OVERSHOOT=boot (the default; "none" skips it) adds a second model twin given the
# boot's own sleep overshoot (sleep_overshoot.py against the first twin): 15 us to ~600 us
# mean from boot to boot while the crypto self-tests shared the vCPU; with them off
# (cryptomgr.notests=1) 1.2-1.5 us beyond the twin's 15 on the sync cases, and 20-190 us on
# the async ones, where a woken callback waits for the vCPU.
# FIDELITY_NOISE=1 adds the kernel against itself: a second kernel run of each case
# (booted once, then reused), diffed with the first, its agreement in a column of
# its own: TCG's timing makes the kernel's own order vary from boot to boot.
# Not part of `make test` nor `make test-kernel`: about two minutes
# of TCG in all.  Exit 0 when every run finished and every diff was made (the
# figures themselves are reported, not judged), 1 otherwise.
DLSIM=$1
SRC=$2
DB=${3:-$SRC/build/fidelity.db}
[ -x "$DLSIM" ] && [ -d "$SRC/scenarios" ] || { echo "usage: $0 DLSIM SRC [DB]" >&2; exit 2; }
DES_ARGS=${FIDELITY_DES_ARGS---probe-context module}
# The guest profile holds what was measured in the 6.12 and 7.3 guests of --mode kernel
# (cost.c says where each figure comes from); 7.3's device_reorder_to_tail() takes 1246 ns a
# call (6.12: 1175, the profile's; tests/tools/reorder_fit.py on traced d200 boots with the
# crypto self-tests off: 6.12 1181, 7.3 1246; the 3960 measured before was 7.3's walk
# preempted by the self-tests), and its kworkers 36 us from one async callback's end to
# the next one's start (6.12: 29, the profile's; tests/tools/kworker_gaps.py).
GUEST_ARGS="--profile guest"
GUEST_ARGS_7_3="--set cost.reorder_visit_ns=1246 --set cost.wake_ns=36us"
# the twins' own sleep_end_ns (cost.c: the guest profile's, the hardware profile's 0)
SLEEP_END_NS=15000
case ${FIDELITY_PROFILE:-guest} in
guest) ;;
none) GUEST_ARGS="" GUEST_ARGS_7_3="" SLEEP_END_NS=0 ;;
*) echo "FIDELITY_PROFILE: guest or none" >&2; exit 2 ;;
esac
CASES=${FIDELITY_CASES:-"d50-sync d50-ka d50-v2 d200-sync d200-ka d200-v2 camera-sync camera-ka camera-v2"}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0

# case NAME -> scenario file, extra args, order, kernel version, device count (or '')
case_args() {
	case $1 in
	d50-*) scen="$SRC/scenarios/default.json"; set_args="--set devices=50"; ndev=50 ;;
	d200-*) scen="$SRC/scenarios/default.json"; set_args="--set devices=200"; ndev=200 ;;
	camera-*) scen="$SRC/scenarios/camera.json"; set_args=""; ndev="" ;;
	*) echo "unknown case $1" >&2; return 1 ;;
	esac
	case $1 in
	*-sync) order=sync; kver=6.12 ;;
	*-ka) order=kernel-async; kver=6.12 ;;
	*-v2) order=kernel-async-v2; kver=7.3 ;;
	*) echo "unknown case $1" >&2; return 1 ;;
	esac
}

q() { sqlite3 "$DB" "$1"; }

# The newest ok run of this case in MODE (kernel rules or release $kver), the one
# before it with SKIP 1, or ''.
find_run() { # mode scenario-name seed [skip]
	dev_cond=""
	[ -n "$ndev" ] && dev_cond="and devices = $ndev"
	[ -f "$DB" ] || return 0
	q "select run_id from runs where mode = '$1' and scenario = '$2' and seed = $3
		and order_name = '$order' and status = 'ok' and kernel = '$kver' $dev_cond
		order by run_id desc limit 1 offset ${4:-0}"
}

# Boot a kernel run of this case.
kernel_boot() { # case
	t0=$(date +%s)
	# shellcheck disable=SC2086
	"$DLSIM" run "$scen" $set_args --order "$order" --mode kernel --kernel "$kver" \
		--db "$DB" >"$T/out" 2>"$T/err" || { echo "$1: kernel run failed" >&2; cat "$T/err" >&2; return 1; }
	echo "$1: kernel run $(($(date +%s) - t0)) s wall" >&2
}

for c in $CASES; do
	case_args "$c" || exit 2
	name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$scen")
	seed=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("seed", 1))' "$scen")
	noise=-
	if [ -n "${FIDELITY_NOISE:-}" ]; then
		# the kernel against itself: the two newest kernel runs, diffed
		while [ -z "$(find_run kernel "$name" "$seed" 1)" ]; do
			kernel_boot "$c" || { fail=1; continue 2; }
		done
		"$DLSIM" diff "$DB" "$(find_run kernel "$name" "$seed" 1)" "$(find_run kernel "$name" "$seed")" \
			--json --max-pairs 0 >"$T/$c.noise.json" 2>"$T/err" \
			|| { echo "$c: diff failed" >&2; cat "$T/err" >&2; fail=1; continue; }
		noise="$T/$c.noise.json"
	fi
	k=$(find_run kernel "$name" "$seed")
	if [ -z "$k" ]; then
		kernel_boot "$c" || { fail=1; continue; }
		k=$(find_run kernel "$name" "$seed")
	else
		echo "$c: kernel run $k reused" >&2
	fi
	# shellcheck disable=SC2086
	"$DLSIM" run "$scen" $set_args --order "$order" --kernel "$kver" --workers 1 --seed "$seed" \
		$DES_ARGS $GUEST_ARGS $([ "$kver" = 7.3 ] && echo "$GUEST_ARGS_7_3") --db "$DB" \
		>"$T/out" 2>"$T/err" || { echo "$c: DES run failed" >&2; cat "$T/err" >&2; fail=1; continue; }
	d=$(q "select max(run_id) from runs where mode = 'des'")
	# how late this boot's guest woke the callbacks' sleeps (sleep_overshoot.py): under
	# -icount some boots overshot ~15 us, others by quanta of ~275 us (the self-tests' era)
	over=$(python3 "$SRC/tests/tools/sleep_overshoot.py" "$DB" "$k" "$d")
	echo "$c: kernel run $k, DES run $d; mean overshoot of the kernel's PM callbacks over the twin's" \
		"$over ns" >&2
	"$DLSIM" diff "$DB" "$d" "$k" --json --max-pairs 1000000 >"$T/$c.json" 2>"$T/err" \
		|| { echo "$c: diff failed" >&2; cat "$T/err" >&2; fail=1; continue; }
	# the model twin again, given this boot's own sleep overshoot (the twin's sleep_end_ns plus
	# what the kernel's callbacks slept beyond the first twin's): a property of the boot's
	# timers, not of the model; its columns "model, boot's overshoot"
	boot=-
	if [ "${FIDELITY_OVERSHOOT:-boot}" = boot ]; then
		# shellcheck disable=SC2086
		"$DLSIM" run "$scen" $set_args --order "$order" --kernel "$kver" --workers 1 \
			--seed "$seed" $DES_ARGS $GUEST_ARGS $([ "$kver" = 7.3 ] && echo "$GUEST_ARGS_7_3") \
			--set "cost.sleep_end_ns=$((over + SLEEP_END_NS))" --db "$DB" >"$T/out" 2>"$T/err" \
			&& "$DLSIM" diff "$DB" "$(q "select max(run_id) from runs where mode = 'des'")" "$k" \
				--json --max-pairs 1000000 >"$T/$c.boot.json" 2>>"$T/err" \
			&& boot="$T/$c.boot.json" || { echo "$c: DES run failed" >&2; cat "$T/err" >&2; }
	fi
	# the replay twin (dlsim twin, guest profile): the kernel run's own callback times
	replay=-
	# shellcheck disable=SC2046
	if "$DLSIM" twin "$DB" "$k" --json $([ "$kver" = 7.3 ] && echo "$GUEST_ARGS_7_3") \
		>"$T/out" 2>"$T/err"; then
		r=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$T/out")
		"$DLSIM" diff "$DB" "$r" "$k" --json --max-pairs 1000000 >"$T/$c.replay.json" \
			2>"$T/err" && replay="$T/$c.replay.json"
	else
		echo "$c: no replay twin: $(cat "$T/err")" >&2
	fi
	echo "$c $T/$c.json $noise $replay $boot" >>"$T/list"
done
[ -f "$T/list" ] || exit 1
echo "DES twins: --workers 1 ${DES_ARGS:-(no extra options)} ${GUEST_ARGS:-(model defaults)}" \
	"${GUEST_ARGS_7_3:+(7.3: $GUEST_ARGS_7_3)}; database $DB"
echo
python3 "$SRC/tests/tools/fidelity_table.py" "$T/list" || fail=1
exit $fail
