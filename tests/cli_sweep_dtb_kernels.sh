#!/bin/sh
# dlsim sweep --dtbs with a list of kernels (--kernel 6.12,7.3): each kernel's runs import
# the DTB with that kernel's own driver table.  Two real boards whose driver facts differ
# between the tables (/var/cache/dlsim-dtbs, skipped without them): thunder2-99xx's /pmu
# binds arm_pmuv3 on 6.12 and nothing on 7.3; r9a09g011-v2mevk2's ethernet binds ravb on
# 7.3 only.  Before, both kernels' runs had the first kernel's facts; an OUT.db written
# so (no sweep.import_kernel) has its 7.3 runs done again (the old ones removed), its 6.12
# runs kept.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
DTBS=${DLSIM_DTB_CACHE:-/var/cache/dlsim-dtbs}
mkdir -p "$T/d"
for b in thunder2-99xx r9a09g011-v2mevk2; do
	f=$(find "$DTBS" -name "$b.dtb" 2>/dev/null | head -n 1)
	[ -n "$f" ] || { echo "SKIP: no $b.dtb under $DTBS"; exit 77; }
	ln -s "$f" "$T/d/$b.dtb"
done
expect 0 "a DES sweep of 2 boards on 6.12 and 7.3" "$DLSIM" sweep --dtbs "$T/d" --orders sync \
	--kernel 6.12,7.3 --db "$T/o.db" --json
expect 0 "compacted, to read the devices with sqlite3" "$DLSIM" sweep --compact "$T/o.db"
python3 - "$T/o.db" <<'PY' && ok "each kernel's runs have its own table's drivers" || bad "driver facts per kernel"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
def driver(name, kernel):
    rows = db.execute("select ifnull(d.driver, ''), (select count(*) from events e where e.run_id = r.run_id"
                      " and e.dev_id = d.dev_id and e.kind = 'probe_start') from runs r join devices d"
                      " on d.run_id = r.run_id where r.kernel = ? and d.name = ?", (kernel, name)).fetchall()
    assert len(rows) == 1, (name, kernel, rows)
    return rows[0]
assert driver("/pmu", "6.12")[0] == "arm_pmuv3", driver("/pmu", "6.12")
assert driver("/pmu", "7.3")[0] == "", driver("/pmu", "7.3")
eth = "/soc/ethernet@a3300000"
assert driver(eth, "6.12")[0] == "", driver(eth, "6.12")
assert driver(eth, "7.3")[0] == "ravb", driver(eth, "7.3")
# one board each in the sweep table, both kernels under its key
got = db.execute("select count(distinct scenario_hash), count(distinct kernel), count(*) from sweep").fetchone()
assert got == (2, 2, 4), got
PY
expect 0 "the same sweep again: nothing to do" "$DLSIM" sweep --dtbs "$T/d" --orders sync \
	--kernel 6.12,7.3 --db "$T/o.db" --json
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert (d["planned"], d["skipped"], d["ran"]) == (4, 4, 0), d' \
	"$T/out" && ok "resumed" || bad "resume: $(cat "$T/out")"
# an OUT.db of an older dlsim, which imported for 7.3 with 6.12's table: no import_kernel
python3 - "$T/o.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
if "import_kernel" in [c[1] for c in db.execute("pragma table_info(sweep)")]:
    db.execute("alter table sweep drop column import_kernel")
db.commit()
PY
expect 0 "the same sweep on an older dlsim's OUT.db" "$DLSIM" sweep --dtbs "$T/d" --orders sync \
	--kernel 6.12,7.3 --db "$T/o.db"
grep -q "2 runs of DTBs imported with another kernel's driver table than their own .* run again" "$T/err" \
	&& ok "it says why runs are redone" || { bad "no word on the stale runs"; cat "$T/err"; }
python3 - "$T/o.db" <<'PY' && ok "its 7.3 runs redone, its 6.12 runs kept" || bad "stale 7.3 runs"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select kernel, import_kernel, run_id from sweep order by kernel, run_id").fetchall()
assert [(k, i) for k, i, r in rows] == [("6.12", None)] * 2 + [("7.3", "7.3")] * 2, rows
assert min(r for k, i, r in rows if k == "7.3") > max(r for k, i, r in rows if k == "6.12"), rows
# the old 7.3 runs are gone with their rows (they used to stay, outside the sweep)
runs = sorted(r for (r,) in db.execute("select run_id from runs"))
assert runs == sorted(r for k, i, r in rows), (runs, rows)
for t in ("devices", "links", "events", "metrics", "run_shards"):
    left = db.execute("select count(*) from %s where run_id not in (select run_id from runs)" % t).fetchone()[0]
    assert left == 0, (t, left)
PY
expect 0 "check --all: the 4 runs of the sweep" "$DLSIM" check "$T/o.db" --all
[ "$(grep -c '^run [0-9]*: ok' "$T/out")" = 4 ] && ok "check --all lists 4 runs, not the old ones" \
	|| bad "check --all: $(cat "$T/out")"
expect 0 "and again: nothing to do" "$DLSIM" sweep --dtbs "$T/d" --orders sync \
	--kernel 6.12,7.3 --db "$T/o.db" --json
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert (d["planned"], d["skipped"], d["ran"]) == (4, 4, 0), d' \
	"$T/out" && ok "resumed after the redo" || bad "resume after the redo: $(cat "$T/out")"
finish cli_sweep_dtb_kernels
