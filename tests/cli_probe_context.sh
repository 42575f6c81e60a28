#!/bin/sh
# The probe op and the dpm_list the PM ops after it walk: a deferred retry moves
# its device to the tail (device_pm_move_to_tail()), and the next suspend's prepare
# walks the list as the probe left it.
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

finish cli_probe_context
