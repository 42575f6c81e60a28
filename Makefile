# Thin front for CMake.  `make demo` and `make test` do all set-up on a fresh Debian machine.
BUILD ?= build
SAN   ?=
JOBS  ?= 2
ifneq ($(SAN),)
BUILD := build-$(SAN)
endif

DEB_PKGS := cmake gcc g++ make libsqlite3-dev libjansson-dev libbenchmark-dev gnuplot-nox \
            libcunit1-dev sqlite3 libfdt-dev device-tree-compiler chromium python3 libxml2-utils \
            qemu-system-x86 busybox-static zlib1g-dev \
            libssl-dev libopenmpi-dev openmpi-bin clang-14 libclang-rt-14-dev mmdebstrap

.PHONY: all deps build test demo bench bench-ref bench-smoke bench-baseline clean dtbs test-dtbs kernels test-kernel \
        trace-check fuzz fuzz-build fidelity atlas demo-scenario

all: build

deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

$(BUILD)/Makefile: deps
	cmake -S . -B $(BUILD) -DDLSIM_WERROR=ON -DDLSIM_SAN=$(SAN)

build: deps $(BUILD)/Makefile
	cmake -S . -B $(BUILD) -DDLSIM_WERROR=ON -DDLSIM_SAN=$(SAN) >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

# The real DTBs are fetched once into a cache outside the tree; if the archive
# cannot be reached, cli_dtb says so and tests only the DTBs it compiles itself.
# The libFuzzer harnesses (tests/fuzz/, built by clang in build-fuzz) are tests
# too: each runs over its corpus plus FUZZ_TEST_SECONDS of fuzzing (ASan+UBSan).
FUZZ_BUILD := build-fuzz
FUZZ_TEST_SECONDS ?= 30
test: build fuzz-build
	@$(MAKE) --no-print-directory dtbs || echo "dtbs: not fetched; the real-DTB part of cli_dtb is skipped"
	cmake -S . -B $(BUILD) -DDLSIM_FUZZ_DIR=$(abspath $(FUZZ_BUILD)) -DDLSIM_FUZZ_SECONDS=$(FUZZ_TEST_SECONDS) >/dev/null
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# In-process fuzzing (libFuzzer, clang-14, ASan+UBSan): `make fuzz FUZZ_SECONDS=N`
# runs every harness (FUZZ_HARNESSES) for N seconds, JOBS at a time, at
# `nice -n FUZZ_NICE`.  Corpora, crashes and a ledger of CPU-seconds and
# executions live in FUZZ_CACHE, outside the tree, so that the hours add up
# across runs; the cumulative totals are printed at the end
# (tests/fuzz/ledger.sh).  tests/fuzz/run.sh says where the seeds are.
FUZZ_SECONDS ?= 300
FUZZ_CACHE ?= /var/cache/dlsim-fuzz
FUZZ_NICE ?= 0
FUZZ_HARNESSES ?= scenario dtb check report import_log diff explain
fuzz-build: deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DDLSIM_WERROR=ON -DDLSIM_SAN=fuzz >/dev/null
	cmake --build $(FUZZ_BUILD) -j$(JOBS) --target fuzz_scenario fuzz_dtb fuzz_check fuzz_report fuzz_import_log \
	  fuzz_diff fuzz_explain

fuzz: fuzz-build
	mkdir -p $(FUZZ_CACHE)
	printf '%s\n' $(FUZZ_HARNESSES) | xargs -P $(JOBS) -I{} \
	  nice -n $(FUZZ_NICE) sh tests/fuzz/run.sh {} $(abspath $(FUZZ_BUILD)) $(CURDIR) $(FUZZ_SECONDS) \
	  $(FUZZ_CACHE); rc=$$?; sh tests/fuzz/ledger.sh $(FUZZ_CACHE); exit $$rc

# The demo is a real board: the Orange Pi 5 Plus (RK3588), whose own boot log is
# in ../shared/real (README "The demo board").  Its first lines are a headline
# in the manner of sleepgraph's: suspend and resume per kernel order, the best
# kernel order, the top kernel-actionable advice (dlsim advise under that
# order); then the full table, one kernel-async-v2 run and its report.
# Quiet: the results come first; the build's output is shown only if it fails
# (it is in $(BUILD)/build.log).  Progress lines appear only on a terminal.
DEMO_SCENARIO ?= scenarios/rk3588-orangepi-5-plus.json
DEMO_DTB := rockchip/rk3588-orangepi-5-plus.dtb
KERNEL_ORDERS := sync,kernel-async,kernel-async-v2
define DEMO_HEADLINE
import json, sys
runs, adv, scen = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
kernel = sys.argv[4].split(",")
ms = lambda ns: ns / 1e6
by = {}
for r in runs:
    by.setdefault(r["order"], []).append(r)
mean = lambda o, op: sum(r[op]["makespan_ns"] for r in by[o]) / len(by[o])
r0 = runs[0]
print(f'{r0["scenario"]} ({scen}): {r0["devices"]} devices, {r0["links"]} links; simulated (DES)')
for o in kernel:
    print(f'  {o:<16} Suspend Time: {ms(mean(o, "suspend")):9.3f} ms | Resume Time: {ms(mean(o, "resume")):9.3f} ms'
          f'  (Linux {by[o][0]["kernel"]} rules, {by[o][0]["workers"]} CPU{"s" if by[o][0]["workers"] != 1 else ""})')
best = min(kernel, key=lambda o: (mean(o, "suspend") + mean(o, "resume"), kernel.index(o)))
sync = mean("sync", "suspend") + mean("sync", "resume")
tot = mean(best, "suspend") + mean(best, "resume")
print(f'  best kernel order: {best} (suspend + resume {ms(tot):.3f} ms, {100 * (tot - sync) / sync:+.1f}% vs sync)')
sleep = lambda c: c["saved_ns"].get("suspend", 0) + c["saved_ns"].get("resume", 0)
ok = [c for c in adv["changes"] if c["status"] == "ok" and not c["unsafe"] and sleep(c) > 0
      and (c["kind"] in ("async", "halve") or (c["kind"] == "order" and c.get("to_order") in kernel))]
ok.sort(key=lambda c: -sleep(c))
devs = {d["name"]: d for d in json.load(open(scen))["devices"]}
if ok:
    c = ok[0]
    d = devs.get(c.get("device"), {})
    src = "" if not d else (f'; driver {d.get("x-driver") or "unknown"}, latencies '
                            + ("measured (x-latency)" if "x-latency" in d else "a class guess, in no log"))
    print(f'  top advice: {c["change"]}: saves {ms(c["saved_ns"]["suspend"]):.3f} ms of suspend, '
          f'{ms(c["saved_ns"]["resume"]):.3f} ms of resume{src} (dlsim advise {scen} --order {best})')
else:
    print(f'  top advice: none saves time under {best} (dlsim advise {scen} --order {best})')
endef
export DEMO_HEADLINE
demo: deps
	@mkdir -p $(BUILD)
	@{ cmake -S . -B $(BUILD) -DDLSIM_WERROR=ON -DDLSIM_SAN=$(SAN) && cmake --build $(BUILD) -j$(JOBS); } \
	  >$(BUILD)/build.log 2>&1 || { cat $(BUILD)/build.log; echo "demo: the build failed (log: $(BUILD)/build.log)"; exit 1; }
	@rm -f $(BUILD)/demo.db $(BUILD)/demo.db-wal $(BUILD)/demo.db-shm
	@$(BUILD)/dlsim compare $(DEMO_SCENARIO) --orders $(KERNEL_ORDERS),levels,cp-first --seeds 2 \
	  --db $(BUILD)/demo.db --json >$(BUILD)/demo-compare.json
	@best=$$(python3 -c "$$DEMO_HEADLINE" $(BUILD)/demo-compare.json /dev/null $(DEMO_SCENARIO) $(KERNEL_ORDERS) 2>/dev/null \
	  | sed -n 's/^  best kernel order: \([^ ]*\).*/\1/p'); \
	$(BUILD)/dlsim advise $(DEMO_SCENARIO) --order $${best:-kernel-async-v2} --top 0 --json >$(BUILD)/demo-advise.json
	@python3 -c "$$DEMO_HEADLINE" $(BUILD)/demo-compare.json $(BUILD)/demo-advise.json $(DEMO_SCENARIO) $(KERNEL_ORDERS)
	@echo
	@$(BUILD)/dlsim compare $(DEMO_SCENARIO) --orders $(KERNEL_ORDERS),levels,cp-first --seeds 2 --no-log
	@echo
	@$(BUILD)/dlsim run $(DEMO_SCENARIO) --order kernel-async-v2 --seed 3 --db $(BUILD)/demo.db
	@echo
	@$(BUILD)/dlsim report $(BUILD)/demo.db --out $(BUILD)/demo-report >/dev/null
	@echo "report: $(BUILD)/demo-report/index.html (open it in a browser)"

# The demo's scenario, re-imported from the board's DTB in the cache (make dtbs).
demo-scenario: build dtbs
	@dtb=$$(find $(DTB_CACHE)/x -path '*/$(DEMO_DTB)' | sort -V | tail -1); \
	[ -n "$$dtb" ] || { echo "demo-scenario: no $(DEMO_DTB) in $(DTB_CACHE)"; exit 1; }; \
	./$(BUILD)/dlsim import-dtb "$$dtb" >$(DEMO_SCENARIO).tmp && mv $(DEMO_SCENARIO).tmp $(DEMO_SCENARIO)

# The latency atlas that import-dtb draws from (sim/measure/atlas.json, committed):
# rebuilt from the real logs in REAL, which are never copied into the tree.
REAL ?= ../shared/real
atlas: build
	./$(BUILD)/dlsim atlas --regen $(REAL) >sim/measure/atlas.json.tmp
	mv sim/measure/atlas.json.tmp sim/measure/atlas.json
	cmake --build $(BUILD) -j$(JOBS)

# The full suite (about 10 minutes: 3 repetitions, medians), then bench/compare
# against bench/baseline.json: exits 1 on a regression that a run alone confirms
# (--recheck 2), each recheck against the baseline's own commit built on this
# machine (bench-ref: a baseline measured on another machine still gates;
# BENCH_COMPARE=--no-gate to only print).  DLSIM_BENCH_FULL=1 adds the 1M-device
# sizes (not in the baseline).
BENCH_ARGS ?= --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
BENCH_COMPARE ?=
bench: build bench-ref
	./$(BUILD)/dlsim-bench $(BENCH_ARGS) --benchmark_out=$(BUILD)/bench.json --benchmark_out_format=json
	ref=$(BENCH_REF)/build/dlsim-bench; \
	python3 bench/compare $(BUILD)/bench.json --recheck 2 --bench ./$(BUILD)/dlsim-bench \
	  $$([ -x $$ref ] && echo --ref-bench $$ref) $(BENCH_COMPARE)

# The baseline's commit (bench/baseline.json's context.dlsim_commit), built as
# `make build` builds, into a cache outside the tree, once: what make bench's
# rechecks time the new tree against.  Without that commit (a shallow clone, a
# dirty baseline) the rechecks are against the baseline's figures alone.
BENCH_REF_CACHE ?= $(HOME)/.cache/dlsim/bench-ref
BENCH_REF_COMMIT = $(shell python3 -c 'import json,sys; print(json.load(open("bench/baseline.json"))["context"].get("dlsim_commit",""))' 2>/dev/null)
BENCH_REF = $(BENCH_REF_CACHE)/$(BENCH_REF_COMMIT)
bench-ref: deps
	@c='$(BENCH_REF_COMMIT)'; \
	if [ -z "$$c" ] || ! git cat-file -e "$$c^{commit}" 2>/dev/null; then \
	  echo "bench-ref: no commit '$$c' here: rechecks against the baseline's figures alone"; \
	elif [ ! -x $(BENCH_REF)/build/dlsim-bench ]; then \
	  rm -rf $(BENCH_REF) && mkdir -p $(BENCH_REF)/src && \
	  git archive "$$c" | tar -x -C $(BENCH_REF)/src && \
	  cmake -S $(BENCH_REF)/src -B $(BENCH_REF)/build >/dev/null && \
	  cmake --build $(BENCH_REF)/build -j$(JOBS) --target dlsim-bench >/dev/null && \
	  echo "bench-ref: $$c built in $(BENCH_REF)" || \
	  { rm -rf $(BENCH_REF); echo "bench-ref: $$c did not build: rechecks against the baseline's figures alone"; }; \
	fi

# Refresh the committed baseline (on the reference machine, otherwise idle).
bench-baseline: build
	./$(BUILD)/dlsim-bench $(BENCH_ARGS) --benchmark_out=$(BUILD)/baseline.json --benchmark_out_format=json \
	  --benchmark_context=dlsim_commit=$$(git describe --always --dirty 2>/dev/null || echo unknown)
	python3 bench/compare $(BUILD)/baseline.json --no-gate
	mv $(BUILD)/baseline.json bench/baseline.json

bench-smoke: build
	cd $(BUILD) && ctest --output-on-failure -R bench_smoke

# Real device trees: Debian's arm64 kernel package, extracted into a cache outside the
# source tree (never committed).  Needs the arm64 architecture in dpkg and the archive.
DTB_CACHE ?= /var/cache/dlsim-dtbs
dtbs:
	@set -e; mkdir -p $(DTB_CACHE); cd $(DTB_CACHE); \
	if [ -z "$$(find x -name '*.dtb' 2>/dev/null | head -1)" ]; then \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  dpkg --print-foreign-architectures | grep -qx arm64 || { $$SUDO dpkg --add-architecture arm64; $$SUDO apt-get update -qq; }; \
	  pkg=$$(apt-cache search --names-only '^linux-image-[0-9].*-arm64-unsigned$$' | awk '{print $$1}' \
	         | grep -v -e cloud -e '-rt-' | sort -V | tail -1); \
	  echo "fetching $$pkg"; rm -f linux-image-*.deb; apt-get download $$pkg; \
	  rm -rf x; dpkg-deb -x linux-image-*.deb x; rm -f linux-image-*.deb; \
	fi; \
	echo "$$(find x -name '*.dtb' | wc -l) DTBs in $(DTB_CACHE)"

# Every cached DTB imported on the fly, run and checked: a sweep into a fresh
# $(BUILD)/dtbs.db, a line per DTB as it finishes, the summary at the end.
# DTB_KERNEL (7.3 or 6.12: import rules, driver table and engine rules),
# DTB_ASYNC (driver, none, all) and DTB_PROBE_CONTEXT (boot, module) go to the
# sweep; the order is that kernel's: kernel-async-v2 on 7.3, kernel-async on 6.12.
DTB_KERNEL ?= 7.3
DTB_ASYNC ?= driver
DTB_PROBE_CONTEXT ?= boot
DTB_ORDERS ?= $(if $(filter 6.12,$(DTB_KERNEL)),kernel-async,kernel-async-v2)
test-dtbs: build dtbs
	rm -rf $(BUILD)/dtbs.db $(BUILD)/dtbs.db-wal $(BUILD)/dtbs.db-shm $(BUILD)/dtbs.db.shards
	./$(BUILD)/dlsim sweep --dtbs $(DTB_CACHE) --orders $(DTB_ORDERS) --kernel $(DTB_KERNEL) \
	  --async $(DTB_ASYNC) --probe-context $(DTB_PROBE_CONTEXT) --db $(BUILD)/dtbs.db --verbose

# Kernels for `--mode kernel`: Debian's packages, fetched once with apt-get download
# and unpacked into a cache outside the tree (KERNELS=6.12 or 7.3 for one; 7.3 is a minimal
# Debian 13 root with gcc-14 to build the module in, ~410 MB, see fetch-kernel.sh).
# dlsim builds its test module against them on first use (cached beside them).
KERNELS ?= 6.12 7.3
KERNEL_CACHE ?= /var/cache/dlsim-kernels
kernels: deps
	sh sim/kernel/fetch-kernel.sh $(KERNEL_CACHE) $(KERNELS)

# Boots for real (not part of `make test`): see tests/kernel_boot.sh,
# tests/kernel_advise_verify.sh (advise --verify 2 on the camera pipeline) and tests/kernel_sweep.sh
# (a small kernel-mode sweep of three real boards; skipped without the DTB cache).
test-kernel: build kernels
	DLSIM_KERNEL_CACHE=$(KERNEL_CACHE) sh tests/kernel_boot.sh ./$(BUILD)/dlsim $(CURDIR)
	DLSIM_KERNEL_CACHE=$(KERNEL_CACHE) sh tests/kernel_advise_verify.sh ./$(BUILD)/dlsim $(CURDIR)
	DLSIM_KERNEL_CACHE=$(KERNEL_CACHE) sh tests/kernel_sweep.sh ./$(BUILD)/dlsim $(CURDIR); \
	  rc=$$?; [ $$rc = 0 ] || [ $$rc = 77 ]

# DES against the real kernel (issue 18): 9 kernel runs (50- and 200-device DAGs, camera;
# sync and kernel-async on 6.12, kernel-async-v2 on 7.3) and their DES twins (model twins
# under the guest profile, replay twins with `dlsim twin`), markdown tables of makespans and
# pair agreement (tests/kernel_fidelity.sh).  Not in test-kernel: about five minutes of TCG;
# FIDELITY_NOISE=1 boots each case twice for the kernel-vs-kernel columns.  Kernel runs
# already in FIDELITY_DB are reused.
FIDELITY_DB ?= $(BUILD)/fidelity.db
fidelity: build kernels
	DLSIM_KERNEL_CACHE=$(KERNEL_CACHE) sh tests/kernel_fidelity.sh ./$(BUILD)/dlsim $(CURDIR) $(FIDELITY_DB)

# Does a 100k-device trace load in a real viewer?  Chrome DevTools' trace engine
# (npm, installed once into a cache outside the tree) reads trace.json.gz of a
# 100k-device run; see tests/tools/trace_viewer.mjs.  About a minute.
NPM_CACHE ?= /var/cache/dlsim-npm
TRACE_ENGINE := $(NPM_CACHE)/node_modules/@paulirish/trace_engine
TRACE_DEVICES ?= 100000
trace-check: build
	@[ -d $(TRACE_ENGINE) ] || npm install --silent --no-audit --no-fund --prefix $(NPM_CACHE) @paulirish/trace_engine@0.0.65
	rm -f $(BUILD)/trace-check.db*
	./$(BUILD)/dlsim run scenarios/default.json --order kernel-async-v2 --set devices=$(TRACE_DEVICES) \
	  --db $(BUILD)/trace-check.db >/dev/null
	./$(BUILD)/dlsim report $(BUILD)/trace-check.db --out $(BUILD)/trace-check --trace-devices $(TRACE_DEVICES)
	node tests/tools/trace_viewer.mjs $(TRACE_ENGINE) $(BUILD)/trace-check/trace.json.gz

clean:
	rm -rf build build-*
