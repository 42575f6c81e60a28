#!/bin/sh
# make test-kernel: boots the real 6.12 kernel in QEMU (`make kernels` fetched it) and
# plays, each in one boot: the camera pipeline (scenarios/camera.json), a generated
# 50-device DAG (default.json --set devices=50, two seeds) and an unbind cascade with a
# failing suspend (scenarios/unbind-fault.json).  Every kernel run must pass
# `dlsim check`, with prepare in dpm_list order and complete in its reverse
# (tests/kernel_order.py).  Then the camera once more on 7.3 (order kernel-async-v2).
# Then a traced boot (probe_silences.py): no foreign task may hold the vCPU in the probe.
# Not part of `make test`: TCG takes tens of seconds a boot.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
# one scenario per boot; the guest's wall time is printed for the record
boot() { # expected-exit what args...
	want=$1; what=$2; shift 2
	t0=$(date +%s)
	expect "$want" "$what" "$DLSIM" "$@" --mode kernel --db "$T/k.db"
	echo "   ($what: $(($(date +%s) - t0)) s wall)"
	grep -q "kept:" "$T/err" && { bad "$what: the guest did not finish"; cat "$T/err"; }
}
boot 0 "camera" run "$SRC/scenarios/camera.json"
boot 0 "50-device DAG, 2 seeds" compare "$SRC/scenarios/default.json" --set devices=50 \
	--orders kernel-async --seeds 2
boot 1 "unbind cascade and suspend fault" run "$SRC/scenarios/unbind-fault.json"
boot 0 "50-device DAG, sync" run "$SRC/scenarios/default.json" --set devices=50 --order sync
# 7.3 (Debian 13 backports: the 6.16 async suspend/resume rework), its module built with
# gcc-14 in the Debian 13 root that `make kernels` made
boot 0 "camera on 7.3, kernel-async-v2" run "$SRC/scenarios/camera.json" --kernel 7.3 \
	--order kernel-async-v2
# a traced boot (sim/kernel/init.sh): during the probe op no task but ours may hold the one
# vCPU (6.12's crypto self-tests held 69% of a d200-sync probe before cryptomgr.notests=1)
expect 0 "50-device DAG, sync, traced" env DLSIM_KERNEL_APPEND=dlsim_trace=1 \
	"$DLSIM" run "$SRC/scenarios/default.json" --set devices=50 --order sync --mode kernel \
	--db "$T/trace.db" --kernel-save "$T/trace.dump"
expect 0 "no foreign task in the probe op" python3 "$SRC/tests/tools/probe_silences.py" \
	"$T/trace.dump" --max-foreign 5
cat "$T/out"
n=$(sqlite3 "$T/k.db" "select count(*) from runs where mode = 'kernel'")
[ "$n" = 6 ] && ok "6 kernel runs logged" || bad "$n kernel runs logged, expected 6"
[ "$(sqlite3 "$T/k.db" "select count(*) from runs where mode = 'kernel' and status = 'ok'
	and order_name = 'kernel-async-v2' and version like '% kernel 7.3.%'")" = 1 ] \
	&& ok "the 7.3 run is logged with its release" || bad "the 7.3 run: mode, order, status or release"
expect 0 "check passes on every kernel run" "$DLSIM" check "$T/k.db" --all
cat "$T/out"
expect 0 "prepare in dpm_list order, complete in reverse" python3 "$SRC/tests/kernel_order.py" "$T/k.db"
cat "$T/out"
sqlite3 "$T/k.db" "select group_concat(name, ' ') from (select d.name from events e
	join devices d on d.run_id = e.run_id and d.dev_id = e.dev_id join runs r on r.run_id = e.run_id
	where r.scenario = 'unbind-fault' and e.kind = 'unbind_start' order by e.seq)" >"$T/casc"
[ "$(cat "$T/casc")" = "sound0 amp0 codec0 reg0" ] \
	&& ok "unbinding reg0 unbinds its consumers first" || bad "unbind cascade: $(cat "$T/casc")"
[ "$(sqlite3 "$T/k.db" "select count(*) from events e join runs r using (run_id)
	where r.scenario = 'unbind-fault' and e.kind = 'suspend_end' and e.err != 0")" = 1 ] \
	&& ok "amp0's suspend_late fails once" || bad "the injected suspend_late fault"
# the sync run walks dpm_list on one thread: every callback on the main thread
[ "$(sqlite3 "$T/k.db" "select count(*) from events e join runs r using (run_id)
	where r.order_name = 'sync' and e.kind in ('suspend_start', 'resume_start') and e.worker != 0")" = 0 ] \
	&& ok "order sync: every PM callback on the main thread" || bad "order sync ran callbacks on workers"
[ "$(sqlite3 "$T/k.db" "select count(*) from events e join runs r using (run_id)
	where r.order_name = 'kernel-async' and r.scenario = 'camera' and e.kind = 'suspend_start' and e.worker != 0")" -gt 0 ] \
	&& ok "order kernel-async: async callbacks on kworkers" || bad "kernel-async ran nothing on workers"
[ "$(sqlite3 "$T/k.db" "select count(*) from events e join runs r using (run_id)
	where r.order_name = 'kernel-async-v2' and e.kind = 'suspend_start' and e.worker != 0")" -gt 0 ] \
	&& ok "7.3 kernel-async-v2: async callbacks on kworkers" || bad "7.3 ran nothing on workers"
finish test-kernel
