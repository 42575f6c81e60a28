#!/bin/sh
# --mode kernel without QEMU: dumps recorded on the real 6.12 and 7.3 kernels (tests/kernel/,
# `dlsim run S --mode kernel --kernel-save F` on this tree's scenarios) are
# converted with --kernel-dump into ordinary runs, which `dlsim check` must pass,
# with prepare in dpm_list order and complete in reverse (tests/kernel_order.py);
# then the refusals: bad dumps, scenarios the kernel cannot play, a missing kernel.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
K=$SRC/tests/kernel

# scenario, dump, --set, expected exit of run (faults: an injected fault fails an op)
while read -r sc dump set want; do
	[ "$set" = - ] && set="" || set="--set $set"
	# shellcheck disable=SC2086
	expect "$want" "run $sc from its kernel dump" "$DLSIM" run "$SRC/scenarios/$sc.json" $set \
		--mode kernel --kernel-dump "$K/$dump" --db "$T/k.db" --json
	grep -q '"mode":"kernel"' "$T/out" || bad "$sc: --json says mode kernel"
done <<'L'
soc-small soc-small-6.12.dump - 0
camera camera-6.12.dump - 0
default default-50-6.12.dump devices=50 0
default default-30-6.12.dump devices=30 0
flags flags-6.12.dump - 0
runtime-pm runtime-pm-6.12.dump - 0
faults faults-6.12.dump - 1
unbind-fault unbind-fault-6.12.dump - 1
L
expect 0 "check passes on every kernel run" "$DLSIM" check "$T/k.db" --all
[ "$(grep -c 'no violation' "$T/out")" = 8 ] || bad "check: 8 runs without violation"
expect 0 "prepare in dpm_list order, complete in reverse" python3 "$SRC/tests/kernel_order.py" "$T/k.db"
[ "$(sqlite3 "$T/k.db" "select count(*) from runs where mode = 'kernel' and version like '% kernel 6.12.%'")" = 8 ] \
	&& ok "runs.mode is kernel, the kernel release is recorded" || bad "runs.mode/version of kernel runs"
# what the kernel did, as events: the unbind cascade (consumers' remove first), the
# fault, the refused links, runtime PM through links, the deferred-probe reorder
sqlite3 "$T/k.db" "select group_concat(name, ' ') from (select d.name from events e
	join devices d on d.run_id = e.run_id and d.dev_id = e.dev_id join runs r on r.run_id = e.run_id
	where r.scenario = 'unbind-fault' and e.kind = 'unbind_start' order by e.seq)" >"$T/casc"
[ "$(cat "$T/casc")" = "sound0 amp0 codec0 reg0" ] \
	&& ok "unbinding reg0 unbinds its consumers first ($(cat "$T/casc"))" || bad "unbind cascade: $(cat "$T/casc")"
[ "$(sqlite3 "$T/k.db" "select status from runs where scenario = 'faults'")" = failed ] \
	&& ok "the EBUSY suspend fails the faults run" || bad "faults run status"
[ "$(sqlite3 "$T/k.db" "select count(*) from events e join runs using (run_id) where scenario = 'flags' and kind = 'link_refused'")" -gt 0 ] \
	&& ok "flags: the kernel's refused links are logged" || bad "flags: no link_refused"
[ "$(sqlite3 "$T/k.db" "select count(*) from events e join runs using (run_id) where scenario = 'runtime-pm' and kind = 'rpm_resume'")" -gt 0 ] \
	&& ok "runtime-pm: runtime resumes are logged" || bad "runtime-pm: no rpm_resume"
# the driver core's own deferrals (device_links_check_suppliers() before the probe
# callback; the module's kretprobe, dumps since issue 18): probe_defer events and the
# defers metric, as the DES logs them; a dump from before has none
sqlite3 "$T/k.db" "select count(*) from events e join runs r using (run_id) where r.devices = 30
	and e.kind = 'probe_defer'" >"$T/nd"
[ "$(cat "$T/nd")" -gt 100 ] && ok "default-30: $(cat "$T/nd") driver-core deferrals logged" \
	|| bad "default-30: driver-core deferrals not logged ($(cat "$T/nd"))"
[ "$(sqlite3 "$T/k.db" "select count(*) from events e join runs r using (run_id) where r.devices = 50
	and e.kind = 'probe_defer'")" = 0 ] && ok "default-50 (recorded before the kretprobes): no deferral" \
	|| bad "default-50: deferrals from nowhere"

# a dump recorded on 7.3 (Debian 13 backports: the 6.16 async suspend/resume rework;
# `make kernels KERNELS=7.3`) with the order that models it
expect 0 "run camera from its 7.3 kernel dump" "$DLSIM" run "$SRC/scenarios/camera.json" \
	--mode kernel --kernel 7.3 --order kernel-async-v2 --kernel-dump "$K/camera-7.3.dump" \
	--db "$T/k73.db"
expect 0 "check passes on the 7.3 run" "$DLSIM" check "$T/k73.db"
expect 0 "7.3: prepare in dpm_list order, complete in reverse" python3 "$SRC/tests/kernel_order.py" "$T/k73.db"
[ "$(sqlite3 "$T/k73.db" "select count(*) from runs where mode = 'kernel' and status = 'ok'
	and order_name = 'kernel-async-v2' and version like '% kernel 7.3.4+deb13-amd64'")" = 1 ] \
	&& ok "the 7.3 run is logged with its release" || bad "mode/order/version of the 7.3 run"
[ "$(sqlite3 "$T/k73.db" "select count(distinct worker) from events where kind = 'suspend_start'")" -gt 1 ] \
	&& ok "7.3: async suspend callbacks ran on workers" || bad "7.3: every suspend callback on one thread"
cp "$T/k73.db" "$T/k73-before.db"
expect 2 "a 7.3 dump is not 6.12's" "$DLSIM" run "$SRC/scenarios/camera.json" --mode kernel \
	--kernel 6.12 --order kernel-async --kernel-dump "$K/camera-7.3.dump" --db "$T/k73.db"
grep -q "recorded on kernel 7.3.4+deb13-amd64, not 6.12" "$T/err" || bad "the refusal names both kernels"
expect 2 "a 6.12 dump is not 7.3's" "$DLSIM" run "$SRC/scenarios/camera.json" --mode kernel \
	--kernel 7.3 --order kernel-async-v2 --kernel-dump "$K/camera-6.12.dump" --db "$T/k73.db"
cmp -s "$T/k73.db" "$T/k73-before.db" && ok "the refused dumps leave the database untouched" \
	|| bad "a refused dump changed the database"

# the same dumps through compare: one run per order and seed, in that order
expect 0 "compare from a dump" "$DLSIM" compare "$SRC/scenarios/soc-small.json" --orders kernel-async \
	--mode kernel --kernel-dump "$K/soc-small-6.12.dump" --db "$T/c.db"
expect 0 "check the compare run" "$DLSIM" check "$T/c.db"

# bad input: nothing written
cp "$T/k.db" "$T/before.db"
expect 2 "a dump of another scenario" "$DLSIM" run "$SRC/scenarios/camera.json" --mode kernel \
	--kernel-dump "$K/soc-small-6.12.dump" --db "$T/k.db"
grep -q "another scenario" "$T/err" || bad "the refusal says it is another scenario's dump"
printf '@run 000\ndlsim-kdump 1 6.12.0 x86_64 devices 25 records 3 lost 0\nnot a record\n@done 000\n@end\n' >"$T/bad.dump"
expect 2 "a dump with a bad line" "$DLSIM" run "$SRC/scenarios/soc-small.json" --mode kernel \
	--kernel-dump "$T/bad.dump" --db "$T/k.db"
grep -q "line 3" "$T/err" || bad "the bad line is named"
expect 2 "a dump without the run asked for" "$DLSIM" compare "$SRC/scenarios/soc-small.json" \
	--orders sync,kernel-async --mode kernel --kernel-dump "$K/soc-small-6.12.dump" --db "$T/k.db"
grep -q "no run 001" "$T/err" || bad "the missing run is named"
expect 2 "a scenario with hot-plug" "$DLSIM" run "$SRC/scenarios/hotplug-unbind.json" --mode kernel \
	--kernel-dump "$K/soc-small-6.12.dump" --db "$T/k.db"
grep -q "hot-plugged" "$T/err" || bad "the refusal names hot-plug"
expect 2 "kernel-async-v2 on 6.12" "$DLSIM" run "$SRC/scenarios/soc-small.json" --mode kernel \
	--order kernel-async-v2 --kernel-dump "$K/soc-small-6.12.dump" --db "$T/k.db"
expect 2 "levels is not the kernel's" "$DLSIM" run "$SRC/scenarios/soc-small.json" --mode kernel \
	--order levels --db "$T/k.db"
expect 2 "--kernel-dump needs --mode kernel" "$DLSIM" run "$SRC/scenarios/soc-small.json" \
	--kernel-dump "$K/soc-small-6.12.dump" --db "$T/k.db"
DLSIM_KERNEL_CACHE=$T/nokernels expect 2 "no kernel fetched" "$DLSIM" run "$SRC/scenarios/soc-small.json" \
	--mode kernel --db "$T/k.db"
grep -q "make kernels" "$T/err" || bad "the missing kernel names 'make kernels'"
DLSIM_KERNEL_CACHE=$T/nokernels expect 2 "no kernel 7.3 fetched" "$DLSIM" run "$SRC/scenarios/camera.json" \
	--mode kernel --kernel 7.3 --order kernel-async-v2 --db "$T/k.db"
grep -q "'make kernels' (KERNELS=7.3)" "$T/err" || bad "the missing 7.3 names 'make kernels' (KERNELS=7.3)"
# a module that does not build: the compiler's own message, exit 2 (needs QEMU installed,
# which is checked first; a fake kernel cache whose kbuild fails like a compiler)
if command -v qemu-system-x86_64 >/dev/null && [ -x /bin/busybox ]; then
	mkdir -p "$T/kc/6.12/build"
	: >"$T/kc/6.12/vmlinuz"
	printf 'modules:\n\t@echo "dlsim_kmod.c:42:1: error: fake compiler failure" >&2; exit 1\n' \
		>"$T/kc/6.12/build/Makefile"
	DLSIM_KERNEL_CACHE=$T/kc expect 2 "a module that does not build" "$DLSIM" run \
		"$SRC/scenarios/soc-small.json" --mode kernel --db "$T/k.db"
	grep -q "fake compiler failure" "$T/err" || bad "the compiler's message is shown"
else
	echo "skip: qemu-system-x86_64 or busybox-static missing (make deps)"
fi
cmp -s "$T/k.db" "$T/before.db" && ok "bad input leaves the database untouched" || bad "the database changed"

# a guest that stopped mid-run: the run is logged as failed, with the last op
head -n 60 "$K/camera-6.12.dump" >"$T/cut.dump"
expect 1 "a dump cut short" "$DLSIM" run "$SRC/scenarios/camera.json" --mode kernel \
	--kernel-dump "$T/cut.dump" --db "$T/cut.db"
grep -q "last op" "$T/err" || bad "the failure names the last op reached"
[ "$(sqlite3 "$T/cut.db" "select status from runs")" = failed ] && ok "the cut run is marked failed" \
	|| bad "cut run status"
# a dump whose module buffer overflowed has holes: the run fails, saying so
sed 's/ lost 0$/ lost 5/' "$K/camera-6.12.dump" >"$T/lost.dump"
expect 1 "a dump that lost records" "$DLSIM" run "$SRC/scenarios/camera.json" --mode kernel \
	--kernel-dump "$T/lost.dump" --db "$T/cut.db"
grep -q "5 records lost" "$T/err" || bad "the failure says records were lost"
finish cli_kernel
