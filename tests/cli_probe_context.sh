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

finish cli_probe_context
