#!/bin/sh
# The probe op and the dpm_list the PM ops after it walk: a deferred retry moves
# its device to the tail (device_pm_move_to_tail()), and the next suspend's prepare
# walks the list as the probe left it.  --probe-context module: the probe as --mode
# kernel's module makes it (devices, then links; retries on a kworker of their own).
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

# prepare's order (dpm_list) in run RUN of DB
prep() { # DB RUN
	sqlite3 "$1" "select group_concat(name, ' ') from (select d.name from events e
		join devices d on d.run_id = e.run_id and d.dev_id = e.dev_id where e.run_id = $2
		and e.kind = 'suspend_start' and e.phase = 'prepare' order by e.seq)"
}

# r2 -> s then r1 -> s leave dpm_list s r2 r1; both defer, s binds, the retries move
# r1 then r2 to the tail: s r1 r2
cat >"$T/two.json" <<J
{"format":"dlsim-scenario/1","name":"two-retries","seed":1,
 "defaults":{"probe":"1ms","async":false},
 "devices":[{"name":"r1"},{"name":"r2"},{"name":"s"}],
 "links":[{"consumer":"r2","supplier":"s","flags":["AUTOPROBE_CONSUMER"]},
  {"consumer":"r1","supplier":"s","flags":["AUTOPROBE_CONSUMER"]}],
 "script":[{"op":"probe"},{"op":"suspend"},{"op":"resume"}]}
J
expect 0 "sync run with two deferred retries" "$DLSIM" run "$T/two.json" --order sync --db "$T/a.db"
[ "$(prep "$T/a.db" 1)" = "s r1 r2" ] && ok "prepare walks dpm_list as the retries left it" \
	|| bad "prepare order '$(prep "$T/a.db" 1)', expected 's r1 r2'"

# --probe-context: boot (the default) or module, des only
expect 2 "--probe-context: a bad value" "$DLSIM" run "$T/two.json" --probe-context initrd --no-log
grep -q "expected boot or module" "$T/err" && ok "it says what it expects" || bad "message: $(cat "$T/err")"
expect 2 "--probe-context module in threads mode is refused" "$DLSIM" run "$T/two.json" \
	--probe-context module --mode threads --no-log
expect 0 "--probe-context boot" "$DLSIM" run "$T/two.json" --order sync --probe-context boot --db "$T/a.db"
ev() { sqlite3 "$T/a.db" "select group_concat(kind || ' ' || dev_id || ' ' || t_ns || ' ' || worker, ',')
	from (select * from events where run_id = $1 order by seq)"; }
[ "$(ev 1)" = "$(ev 2)" ] && ok "boot is the default: the same events" || bad "boot differs from the default"
[ "$(sqlite3 "$T/a.db" "select group_concat(probe_context, ' ') from runs")" = "boot boot" ] \
	&& ok "runs.probe_context: boot" || bad "runs.probe_context of the boot runs"

# module context, as --mode kernel's module plays the camera (orders sync): devices
# registered first, then every listed link in listed order, each moving its consumer
# (and what depends on it) to the tail; the kernel (6.12) leaves this dpm_list after
# probing, and its deferred retries (dma, isp) run on the deferred-probe kworker
cam=$SRC/scenarios/camera.json
expect 0 "camera, sync, module context" "$DLSIM" run "$cam" --order sync --workers 1 \
	--probe-context module --db "$T/c.db"
[ "$(prep "$T/c.db" 1 | cut -d' ' -f1-10)" = "soc clk gpio0 iommu i2c0 gpio1 sensor csi dma isp" ] \
	&& ok "module: dpm_list as the module's register-then-link leaves it" \
	|| bad "module: prepare order '$(prep "$T/c.db" 1 | cut -d' ' -f1-10)'"
[ "$(sqlite3 "$T/c.db" "select probe_context from runs")" = module ] \
	&& ok "runs.probe_context: module" || bad "runs.probe_context of the module run"
# the first probe op: events before the first suspend
first_probe="run_id = 1 and seq < (select min(seq) from events where run_id = 1 and kind = 'suspend_start')"
r=$(sqlite3 "$T/c.db" "select group_concat(d.name || '@' || (e.worker != 0), ' ') from events e
	join devices d on d.run_id = e.run_id and d.dev_id = e.dev_id
	where e.$first_probe and e.kind = 'probe_start' and d.name in ('dma', 'isp', 'iommu') order by e.seq")
[ "$r" = "iommu@0 dma@1 isp@1" ] && ok "module: the retries probe on the kworker, the walk on main" \
	|| bad "module: probes (name@on-a-worker) '$r', expected 'iommu@0 dma@1 isp@1'"
# i2c0's supplier clk binds before the walk reaches i2c0: not deferred (dev->can_match)
r=$(sqlite3 "$T/c.db" "select count(*) from events where $first_probe and kind = 'deferred_retry'")
[ "$r" = 2 ] && ok "module: two deferred retries, as in the kernel" || bad "module: $r deferred retries, expected 2"
expect 0 "camera, sync, boot context" "$DLSIM" run "$cam" --order sync --workers 1 --db "$T/b.db"
r=$(sqlite3 "$T/b.db" "select count(*) from events where $first_probe and worker != 0")
[ "$r" = 0 ] && ok "boot: every probe on main" || bad "boot: $r events on workers"

# Runtime PM around every probe attempt (module context: 6.12/7.3 __driver_probe_device()
# takes every PM_RUNTIME supplier and the parent with pm_runtime_get_sync() before
# really_probe(), even for an attempt that defers, and puts them after, asynchronously).
# k -> s -> t, registered consumer first: s's retry resumes t; k's resumes t (through s's
# link) and s; a supplier not yet bound has runtime PM disabled and is not resumed.
cat >"$T/rpm.json" <<J
{"format":"dlsim-scenario/1","name":"rpm-chain","seed":1,
 "defaults":{"probe":"1ms","async":false},
 "devices":[{"name":"k"},{"name":"s"},{"name":"t"}],
 "links":[{"consumer":"k","supplier":"s","flags":["AUTOPROBE_CONSUMER","PM_RUNTIME"]},
  {"consumer":"s","supplier":"t","flags":["AUTOPROBE_CONSUMER","PM_RUNTIME"]}],
 "script":[{"op":"probe"}]}
J
rpm_ev() { sqlite3 "$T/r.db" "select group_concat(kind || ' ' || name, ', ') from (select e.kind, d.name
	from events e join devices d using (run_id, dev_id) where e.run_id = $1 and e.kind like 'rpm%'
	order by e.seq)"; }
mk_ms() { sqlite3 "$T/r.db" "select cast(value as integer) from metrics where run_id = $1 and name = 'probe.makespan_ns'"; }
for a in "0 0" "1ms 0" "1ms 10ms"; do
	set -- $a
	expect 0 "module context, cost.rpm_ns=$1, cost.rpm_idle_ns=$2" "$DLSIM" run "$T/rpm.json" \
		--order sync --workers 1 --probe-context module --set cost.rpm_ns="$1" \
		--set cost.rpm_idle_ns="$2" --set cost.wake_ns=0 --db "$T/r.db"
done
expect 0 "boot context" "$DLSIM" run "$T/rpm.json" --order sync --workers 1 --db "$T/r.db"
[ "$(rpm_ev 1)" = "rpm_resume t, rpm_suspend t, rpm_resume t, rpm_resume s, rpm_suspend s, rpm_suspend t" ] \
	&& ok "module: each attempt resumes its suppliers' chain, the puts suspend it" \
	|| bad "module: runtime PM '$(rpm_ev 1)'"
[ "$(($(mk_ms 2) - $(mk_ms 1)))" = 3000000 ] && ok "module: the three resumes cost rpm_ns each" \
	|| bad "module: probe $(mk_ms 1) ns at rpm_ns 0, $(mk_ms 2) ns at 1ms; expected 3 ms more"
[ "$(rpm_ev 3)" = "rpm_resume t, rpm_resume s, rpm_suspend s, rpm_suspend t" ] \
	&& ok "module: t's suspend, not due yet (rpm_idle_ns), leaves it active for k" \
	|| bad "module: runtime PM with rpm_idle_ns 10ms '$(rpm_ev 3)'"
[ "$(($(mk_ms 3) - $(mk_ms 1)))" = 2000000 ] && ok "module: two resumes then" \
	|| bad "module: probe $(mk_ms 3) ns, expected 2 ms over $(mk_ms 1)"
[ -z "$(rpm_ev 4)" ] && ok "boot: no runtime PM around probe" || bad "boot: '$(rpm_ev 4)'"
# pm_wq's kworker takes the vCPU from the prober when it suspends something between two
# attempts: the next attempt pays its wake and the switch back (wake_ns).  Here once, before
# k's attempt (t suspends after s's); the last batch, after the op's last attempt, is pm_wq's
# own time.  With rpm_idle_ns 10 ms nothing is due before k's attempt: no such wake (the
# deferred-probe kworker's own wake is in both).
for a in "1ms 10ms" "1ms 0"; do
	set -- $a
	expect 0 "module context, cost.wake_ns=$1, cost.rpm_idle_ns=$2" "$DLSIM" run "$T/rpm.json" \
		--order sync --workers 1 --probe-context module --set cost.rpm_ns=0 \
		--set cost.rpm_idle_ns="$2" --set cost.wake_ns="$1" --db "$T/w.db"
done
w_ms() { sqlite3 "$T/w.db" "select cast(value as integer) from metrics where run_id = $1 and name = 'probe.makespan_ns'"; }
[ "$(($(w_ms 2) - $(w_ms 1)))" = 1000000 ] && ok "module: pm_wq's one batch between attempts costs a wake" \
	|| bad "module: probe $(w_ms 1) ns without a batch due, $(w_ms 2) ns with one; expected 1 ms more"
r=$(sqlite3 "$T/w.db" "select group_concat(kind || ' ' || name, ', ') from (select e.kind, d.name
	from events e join devices d using (run_id, dev_id) where e.run_id = 2 and e.kind like 'rpm%'
	order by e.seq)")
[ "$r" = "rpm_resume t, rpm_suspend t, rpm_resume t, rpm_resume s, rpm_suspend s, rpm_suspend t" ] \
	&& ok "module: the batch is t's suspend before k's attempt" || bad "module: runtime PM '$r'"

# Module context: the module's init registers every device, then adds every link, on one
# thread before any driver registers (register_ns a device, link_add_ns a link plus its
# consumer's reorder walk): serial time at the probe op's start.  Three devices, two links.
for a in "0 0" "1ms 2ms"; do
	set -- $a
	expect 0 "module context, cost.register_ns=$1, cost.link_add_ns=$2" "$DLSIM" run "$T/rpm.json" \
		--order sync --workers 1 --probe-context module --set cost.register_ns="$1" \
		--set cost.link_add_ns="$2" --set cost.reorder_ns=0 --set cost.reorder_visit_ns=0 \
		--set cost.rpm_ns=0 --db "$T/r.db"
done
[ "$(($(mk_ms 6) - $(mk_ms 5)))" = 7000000 ] && ok "module: 3 device_add()s and 2 device_link_add()s: 7 ms" \
	|| bad "module: probe $(mk_ms 5) ns, then $(mk_ms 6) ns; expected 7 ms more"
first=$(sqlite3 "$T/r.db" "select min(t_ns) from events where run_id = 6 and kind like 'probe%'")
[ "$first" = 7000000 ] && ok "module: the first attempt after them" || bad "module: first attempt at $first ns"

# sleep_end_ns: a callback's sleep ends that much after its latency (a guest's timer
# overshoot); the three 1 ms probes sleep, the deferrals do not.
expect 0 "module context, cost.sleep_end_ns=100us" "$DLSIM" run "$T/rpm.json" --order sync \
	--workers 1 --probe-context module --set cost.register_ns=1ms --set cost.link_add_ns=2ms \
	--set cost.reorder_ns=0 --set cost.reorder_visit_ns=0 --set cost.rpm_ns=0 \
	--set cost.sleep_end_ns=100us --db "$T/r.db"
[ "$(($(mk_ms 7) - $(mk_ms 6)))" = 300000 ] && ok "sleep_end_ns: once per probe callback" \
	|| bad "sleep_end_ns: probe $(mk_ms 7) ns, expected 0.3 ms over $(mk_ms 6)"

# A deferring attempt in module context sleeps in its runtime resumes (a's 5 ms): the
# kernel puts its device on the deferred list only once the attempt has returned
# (driver_probe_device() after __driver_probe_device(), 6.12 and 7.3 dd.c), and triggers
# the lists again if a bind triggered them meanwhile.  b binds at ~4 ms, inside k's
# second attempt (2.05-7.05 ms): k is retried after that attempt, not during it.
cat >"$T/sleep.json" <<J
{"format":"dlsim-scenario/1","name":"defer-in-sleep","seed":1,
 "defaults":{"probe":"1ms","async":true},
 "devices":[{"name":"a","rpm_resume":"5ms"},{"name":"k"},{"name":"b","probe":"3ms"}],
 "links":[{"consumer":"k","supplier":"a","flags":["PM_RUNTIME"]},
  {"consumer":"k","supplier":"b"}],
 "script":[{"op":"probe"}]}
J
expect 0 "module context, a deferral still asleep when its supplier binds" "$DLSIM" run \
	"$T/sleep.json" --order kernel-async --workers 4 --probe-context module --db "$T/s.db"
kt() { sqlite3 "$T/s.db" "select $1(e.t_ns) from events e join devices d using (run_id, dev_id)
	where d.name = 'k' and e.kind = '$2'"; }
[ "$(kt max deferred_retry)" -ge "$(($(kt max probe_defer) + 5000000))" ] \
	&& ok "module: k is retried once its deferring attempt has returned" \
	|| bad "module: k retried at $(kt max deferred_retry) ns, its last attempt deferred at $(kt max probe_defer) ns and sleeps 5 ms"
[ "$(kt count probe_start)" = 1 ] && [ "$(kt count probe_end)" = 1 ] \
	&& ok "module: and then binds, in one attempt" || bad "module: k's probes: $(kt count probe_start) started"
expect 0 "soc-small, kernel-async, module context" "$DLSIM" run "$SRC/scenarios/soc-small.json" \
	--order kernel-async --probe-context module --no-log

finish cli_probe_context
