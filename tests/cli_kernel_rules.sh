#!/bin/sh
# --kernel VERSION in des and threads modes (issue 18): the version-dependent
# rules, the order/version pairs no kernel ran (exit 2, nothing written), the
# version recorded with the run, `dlsim orders`, and the SYNC_STATE_ONLY PM
# rule of 6.18 end to end, with `dlsim check` holding each run to its own.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
export DLSIM_WAKEUP_NS=0

# the orders say which kernels they model and which one a run gets by default
expect 0 "orders" "$DLSIM" orders
grep -q "^kernel-async  *kernels 6.12-6.15 (default 6.12)" "$T/out" || bad "orders: kernel-async is 6.12-6.15"
grep -q "^kernel-async-v2  *kernels 6.16-7.3 (default 7.3)" "$T/out" || bad "orders: kernel-async-v2 is 6.16-7.3"
grep -q "^sync  *kernels 6.12-7.3 (default 6.12)" "$T/out" || bad "orders: sync runs under every version"

cat >"$T/small.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "small", "seed": 3,
  "defaults": {"probe": "1ms", "suspend": "300us", "resume": "200us"},
  "generate": {"topology": "random-dag", "devices": 60} }
J

# pairs no kernel ran, bad versions: exit 2, the reason, no database
expect 2 "kernel-async-v2 on 6.12" "$DLSIM" run "$T/small.json" --order kernel-async-v2 --kernel 6.12 --db "$T/no.db"
grep -q "rework of 6.16, which 6.12 does not have" "$T/err" || bad "v2 on 6.12: the message says why"
expect 2 "kernel-async on 7.3" "$DLSIM" run "$T/small.json" --order kernel-async --kernel 7.3 --db "$T/no.db"
grep -q "up to 6.15 ran; 7.3 has the 6.16 rework" "$T/err" || bad "classic on 7.3: the message says why"
expect 2 "kernel-async on 6.16 (threads)" "$DLSIM" run "$T/small.json" --mode threads --order kernel-async --kernel 6.16 --db "$T/no.db"
expect 2 "compare --orders kernel-async --kernel 7.3" "$DLSIM" compare "$T/small.json" --orders sync,kernel-async --kernel 7.3 --db "$T/no.db"
expect 2 "--kernel 6.1: not modelled" "$DLSIM" run "$T/small.json" --kernel 6.1 --db "$T/no.db"
grep -q "from 6.12 to 7.3" "$T/err" || bad "--kernel 6.1: says which versions"
expect 2 "--kernel junk" "$DLSIM" run "$T/small.json" --kernel 6.x --db "$T/no.db"
expect 2 "--kernel 7.3.1" "$DLSIM" run "$T/small.json" --kernel 7.3.1 --db "$T/no.db"
[ -e "$T/no.db" ] && bad "a refused --kernel created the database" || ok "no database after the refusals"

# the version is the order's by default, recorded in runs.kernel and --json
expect 0 "run kernel-async (default 6.12)" "$DLSIM" run "$T/small.json" --db "$T/a.db"
grep -q "order kernel-async, kernel 6.12 rules" "$T/out" || bad "the table names the kernel's rules"
expect 0 "run kernel-async-v2 (default 7.3)" "$DLSIM" run "$T/small.json" --order kernel-async-v2 --db "$T/a.db"
expect 0 "run sync --kernel 6.18" "$DLSIM" run "$T/small.json" --order sync --kernel 6.18 --db "$T/a.db"
expect 0 "threads kernel-async-v2 --kernel=6.16" "$DLSIM" run "$T/small.json" --mode threads --order kernel-async-v2 --kernel=6.16 --db "$T/a.db"
got=$(sqlite3 "$T/a.db" "select group_concat(order_name || '@' || kernel, ' ') from runs order by run_id")
[ "$got" = "kernel-async@6.12 kernel-async-v2@7.3 sync@6.18 kernel-async-v2@6.16" ] \
	&& ok "runs.kernel records each run's version" || bad "runs.kernel: $got"
expect 0 "run --json" "$DLSIM" run "$T/small.json" --order cp-first --kernel 7.3 --no-log --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["kernel"] == "7.3", d["kernel"]' "$T/out" \
	&& ok "--json carries the kernel" || bad "--json without the kernel"
# compare --kernel 7.3 without --orders leaves kernel-async out instead of refusing
expect 0 "compare --kernel 7.3" "$DLSIM" compare "$T/small.json" --kernel 7.3 --no-log
grep -q "kernel-async-v2" "$T/out" && ! grep -q "kernel-async " "$T/out" \
	&& ok "compare --kernel 7.3 runs kernel-async-v2, not kernel-async" || bad "compare --kernel 7.3 orders"

# Item 10: an AVAILABLE SYNC_STATE_ONLY link (its consumer's probe failed, so
# it was never dropped) orders suspend and resume up to 6.17, not from 6.18.
# The consumer, with no driver, runs no PM callback of its own, but the PM core
# still suspends it after its child (dpm_wait_for_subordinate()): the child's
# 10 ms reach the supplier through the link, or not
cat >"$T/sso.json" <<'J'
{ "format": "dlsim-scenario/1", "name": "sso", "seed": 1,
  "defaults": {"probe": "1ms", "suspend": "1ms", "resume": "1ms", "async": true},
  "devices": [ {"name": "sup"}, {"name": "con"},
    {"name": "kid", "parent": "con", "suspend": "10ms", "resume": "10ms"} ],
  "links": [ {"consumer": "con", "supplier": "sup", "flags": ["SYNC_STATE_ONLY", "INFERRED"]} ],
  "faults": [ {"device": "con", "op": "probe", "error": "ENODEV"} ] }
J
for k in 6.16 7.3; do
	expect 0 "sso: kernel-async-v2 --kernel $k" "$DLSIM" run "$T/sso.json" --order kernel-async-v2 --kernel $k --db "$T/s.db" --json
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["suspend"]["makespan_ns"])' "$T/out" >"$T/mk.$k"
done
[ "$(cat "$T/mk.6.16")" -gt 10500000 ] && ok "6.16: the supplier waits for the SSO consumer ($(cat "$T/mk.6.16") ns)" \
	|| bad "6.16 suspend $(cat "$T/mk.6.16") ns: the SSO link did not order it"
[ "$(cat "$T/mk.7.3")" -lt 10500000 ] && ok "7.3: it does not ($(cat "$T/mk.7.3") ns)" \
	|| bad "7.3 suspend $(cat "$T/mk.7.3") ns: it waited on the SSO link"
expect 0 "sso: threads --kernel 6.12" "$DLSIM" run "$T/sso.json" --mode threads --order kernel-async --kernel 6.12 --db "$T/s.db"
expect 0 "check holds each run to its kernel's rule" "$DLSIM" check "$T/s.db" --all
# the 7.3 run (run 2) did not wait: held to 6.12's rule, it breaks invariant 3
sqlite3 "$T/s.db" "update runs set kernel = '6.12', status = 'ok' where run_id = 2"
expect 1 "check: a 7.3 run relabelled 6.12" "$DLSIM" check "$T/s.db" --run 2
grep -q "invariant 3" "$T/out" || bad "check names invariant 3 for the relabelled run"

finish cli_kernel_rules
