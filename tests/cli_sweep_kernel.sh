#!/bin/sh
# dlsim sweep --mode kernel with a fake guest (DLSIM_KGUEST_STUB=tests/tools/kguest_sweep_stub.sh:
# the canned dumps of tests/kernel, no QEMU): three scenarios x two orders booted in
# batches by two workers, each kernel run's model twin logged beside it and the summary
# comparing them; resumed, then with replay twins added from the kernel runs already in
# OUT.db; a list of kernels; a guest that dies mid-run, one that hangs and a worker
# killed under its guest: failed runs that say where, and the sweep goes on.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
export DLSIM_KGUEST_STUB="$SRC/tests/tools/kguest_sweep_stub.sh"
unset KGUEST_SWEEP_MODE

mkdir -p "$T/in"
cp "$SRC/scenarios/camera.json" "$T/in/"
python3 - "$SRC/scenarios/default.json" "$T/in" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for n in (30, 50):     # the device counts of tests/kernel/default-{30,50}-6.12.dump
    d["generate"]["devices"] = n
    d["name"] = "default-%d" % n
    json.dump(d, open("%s/d%d.json" % (sys.argv[2], n), "w"))
PY
SW="--mode kernel --scenarios $T/in --orders sync,kernel-async --kernel 6.12"

expect 0 "3 scenarios x 2 orders, model twins, 2 workers" "$DLSIM" sweep $SW --twins model \
	--db "$T/k.db" --jobs 2 --json
cp "$T/out" "$T/k.json"
python3 - "$T/k.json" "$T/k.db" <<'PY' && ok "6 kernel runs, 6 model twins naming them, the summary per scenario" || bad "kernel sweep"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert (d["planned"], d["ran"], d["failed"]) == (12, 12, 0), d
db = sqlite3.connect(sys.argv[2])
k = db.execute("select count(*) from runs where mode = 'kernel' and status = 'ok' and workers = 1"
               " and version like '% kernel 6.12.%'").fetchone()[0]
assert k == 6, k
# each twin: a des run of the same scenario and order, one CPU, module context, twin_of its kernel run
rows = db.execute("select t.scenario, t.order_name, t.workers, t.probe_context, k.mode, k.scenario,"
                  " k.order_name, w.mode from runs t join runs k on k.run_id = t.twin_of"
                  " join sweep w on w.run_id = t.run_id").fetchall()
assert len(rows) == 6, rows
for r in rows:
    assert r[4] == "kernel" and r[0] == r[5] and r[1] == r[6] and r[2] == 1 and r[3] == "module" \
        and r[7] == "twin-model", r
assert db.execute("select count(*) from metrics where name = 'twin_of'").fetchone()[0] == 6
for g in d["groups"]:
    m = g["kernel_fidelity"]["model"]
    assert m["runs"] == 2 and m["dependencies_known"], g
    assert m["dependency_pairs"] > 0 and m["timing_pairs"] > 0, m
    assert m["dependency_agree"] <= m["dependency_pairs"], m
    assert m["every_dependency_agrees"] == (m["dependency_agree"] == m["dependency_pairs"]), m
    assert "suspend" in m["phase_ratio_median"] and "resume" in m["phase_ratio_median"], m
    for r in m["runs_compared"]:
        assert r["phase_ratio"]["suspend"] > 0, r
    assert "replay" not in g["kernel_fidelity"], g
PY
expect 0 "check of the kernel runs and twins" "$DLSIM" check "$T/k.db"
expect 0 "text summary" "$DLSIM" sweep $SW --twins model --db "$T/k.db"
grep -q "12 already in .*, 0 run now" "$T/out" && ok "resumed: nothing to do" || { bad "resume"; cat "$T/out"; }
grep -q "kernel runs against their DES twins" "$T/out" && grep -q "model twins: [0-9] of 3 scenarios" "$T/out" \
	&& ok "the text summary has the twin table" || { bad "twin table"; cat "$T/out"; }
grep -Eq "^  resume +[0-9.]+ +[0-9.]+ +[0-9.]+$" "$T/out" \
	&& ok "and the per-phase ratio over the scenarios" || { bad "phase ratio lines"; cat "$T/out"; }
expect 0 "replay twins added to the kernel runs already in OUT.db" "$DLSIM" sweep $SW --twins both \
	--db "$T/k.db" --jobs 2 --json
python3 - "$T/out" "$T/k.db" <<'PY' && ok "6 replay twins, no kernel run booted again" || bad "replay twins"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert (d["planned"], d["skipped"], d["ran"], d["failed"]) == (18, 12, 6, 0), d
db = sqlite3.connect(sys.argv[2])
assert db.execute("select count(*) from runs where mode = 'kernel'").fetchone()[0] == 6
n = db.execute("select count(*) from sweep w join runs t on t.run_id = w.run_id join runs k on"
               " k.run_id = t.twin_of where w.mode = 'twin-replay' and k.mode = 'kernel'").fetchone()[0]
assert n == 6, n
for g in d["groups"]:
    assert g["kernel_fidelity"]["replay"]["runs"] == 2, g
PY
expect 0 "--probe-context boot: model twins that probe at boot, beside the others" "$DLSIM" sweep $SW \
	--twins model --probe-context boot --db "$T/k.db" --json
python3 - "$T/out" "$T/k.db" <<'PY' && ok "6 boot-context twins of the same kernel runs" || bad "boot twins"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert (d["planned"], d["skipped"], d["ran"]) == (12, 6, 6), d
db = sqlite3.connect(sys.argv[2])
got = db.execute("select r.probe_context, count(*) from sweep w join runs r using (run_id)"
                 " where w.mode = 'twin-model-boot' and r.twin_of is not null group by 1").fetchall()
assert got == [("boot", 6)], got
assert all(g["kernel_fidelity"]["model"]["runs"] == 2 for g in d["groups"]), d
PY

# a list of kernels: each order on the kernels that ran it (only camera has a 7.3 dump)
expect 0 "--kernel 6.12,7.3: kernel-async on 6.12, kernel-async-v2 on 7.3" "$DLSIM" sweep \
	--mode kernel --scenarios "$T/in/camera.json" --orders sync,kernel-async,kernel-async-v2 \
	--kernel 6.12,7.3 --db "$T/l.db" --json
python3 - "$T/out" "$T/l.db" <<'PY' && ok "4 runs: sync on both, each async order on its kernel" || bad "kernel list"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert (d["planned"], d["ran"], d["failed"]) == (4, 4, 0), d
db = sqlite3.connect(sys.argv[2])
got = sorted(db.execute("select order_name, kernel, substr(version, instr(version, 'kernel ') + 7, 3)"
                        " from runs").fetchall())
assert got == [("kernel-async", "6.12", "6.1"), ("kernel-async-v2", "7.3", "7.3"),
               ("sync", "6.12", "6.1"), ("sync", "7.3", "7.3")], got
PY

# the guest dies half-way through d30's runs: those fail saying where it stopped, the rest go on
KGUEST_SWEEP_MODE=cut=30 expect 1 "a guest that dies mid-run" "$DLSIM" sweep $SW --twins model \
	--kernel-batch 1 --db "$T/c.db" --jobs 1 --json
python3 - "$T/out" <<'PY' && ok "d30's kernel runs failed with their last phase; the other scenarios ran" || { bad "guest died"; cat "$T/out"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert (d["ran"], d["failed"]) == (12, 4), d
bad = [p for p in d["problems"] if p["mode"] == "kernel"]
assert len(bad) == 2 and all(p["label"] == "d30.json" for p in bad), bad
assert all("the guest stopped in " in p["error"] and "last phase begun: " in p["error"] for p in bad), bad
twins = [p for p in d["problems"] if p["mode"] == "twin-model"]
assert len(twins) == 2 and all("its kernel run failed" in p["error"] for p in twins), twins
PY
expect 0 "check of a sweep whose guest died" "$DLSIM" check "$T/c.db"
# a hung guest: killed at --kernel-timeout
KGUEST_SWEEP_MODE=hang expect 1 "a hung guest" "$DLSIM" sweep --mode kernel \
	--scenarios "$T/in/d30.json" --orders sync --kernel 6.12 --kernel-timeout 1 --db "$T/h.db" --json
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); p = d["problems"]; assert d["failed"] == 1 and "did not power off within 1 s" in p[0]["error"], d' \
	"$T/out" && ok "the hung guest's run failed: did not power off" || { bad "hung guest"; cat "$T/out"; }
# a worker killed under its guest: its tasks fail, the other worker's go on, OUT.db is sound
KGUEST_SWEEP_MODE=kill=50 KGUEST_SWEEP_MARK="$T/killed" expect 1 "a worker killed" "$DLSIM" sweep $SW \
	--twins model --kernel-batch 1 --db "$T/w.db" --jobs 2 --json
python3 - "$T/out" <<'PY' && ok "d50's runs failed with the worker; the rest ran" || { bad "killed worker"; cat "$T/out"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert (d["ran"], d["failed"]) == (12, 4), d
assert all(p["label"] == "d50.json" and "signal 9" in p["error"] for p in d["problems"]), d["problems"]
PY
[ -e "$T/killed" ] && ok "the stub did kill a worker" || bad "no worker was killed"
expect 0 "check after a killed worker" "$DLSIM" check "$T/w.db"

# A sweep's twin run and its mark (runs.twin_of, the metric twin_of) are one
# transaction, as for `dlsim twin`: the worker killed once the twin's run is
# committed (test hook sweep-twin-recorded) leaves in its shard a twin that
# names its kernel run.  The mark used to be a statement of its own after the
# run: the shard then held an 'ok' des run naming no run it twins.
if have_test_hooks; then
	DLSIM_TEST_HOOK=sweep-twin-recorded:kill expect 1 "a worker killed as its twin is committed" \
		"$DLSIM" sweep --mode kernel --scenarios "$T/in/d30.json" --orders sync --kernel 6.12 \
		--twins model --jobs 1 --db "$T/t.db"
	grep -q "test hook sweep-twin-recorded:kill" "$T/err" && grep -q "signal 9" "$T/out" \
		&& ok "the hook killed the worker" || bad "hook: $(cat "$T/out" "$T/err")"
	f=$(ls "$T/t.db.shards/"*.db)
	n=$(sqlite3 "$f" "select count(*) from runs where mode = 'des' and status = 'ok'")
	m=$(sqlite3 "$f" "select count(*) from runs r join metrics x on x.run_id = r.run_id
		and x.name = 'twin_of' join runs k on k.run_id = x.value and k.mode = 'kernel'
		where r.mode = 'des' and r.twin_of = k.run_id" 2>&1)
	[ "$n" = 1 ] && [ "$m" = 1 ] && ok "the killed worker's twin is marked a twin of its kernel run" \
		|| bad "killed twin: $n des runs in the shard, $m marked"
	expect 0 "check --all after the kill" "$DLSIM" check "$T/t.db" --all
fi

expect 2 "--twins without kernel mode" "$DLSIM" sweep --scenarios "$T/in" --orders sync --twins model --db "$T/x.db"
expect 2 "an order the kernel does not run" "$DLSIM" sweep --mode kernel --scenarios "$T/in" --orders levels --db "$T/x.db"
expect 2 "kernel-async-v2 on 6.12 alone" "$DLSIM" sweep --mode kernel --scenarios "$T/in" \
	--orders kernel-async-v2 --kernel 6.12 --db "$T/x.db"
expect 2 "--workers 4 in kernel mode" "$DLSIM" sweep $SW --workers 4 --db "$T/x.db"
DLSIM_KGUEST_STUB= DLSIM_KERNEL_CACHE=$T/nokernels expect 2 "no kernel fetched" "$DLSIM" sweep \
	--mode kernel --scenarios "$T/in" --orders sync,kernel-async-v2 --kernel 6.12,7.3 --db "$T/x.db"
grep -q "no kernel 6.12 in .*nokernels.*make kernels" "$T/err" && ok "the refusal names 'make kernels'" \
	|| { bad "missing kernel"; cat "$T/err"; }
[ ! -e "$T/x.db" ] && ok "nothing written on bad usage" || bad "x.db written"
finish cli_sweep_kernel
