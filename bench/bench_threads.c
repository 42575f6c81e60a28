/*
 * bench_threads.c - BM_threads_overhead/<shape>/<order>/<devices>: what
 * threads mode costs per device and phase when the callbacks themselves take
 * no time.  One dl_threads_run() (probe, suspend, resume; public API only)
 * per iteration of a generated scenario without latencies:
 *   flat   random-dag with no parents and no suppliers: independent devices,
 *          the pure queue/wake/complete path;
 *   chain  each device consumes the one before: every device waits for one.
 * Devices register in topological order, so probing never defers and the
 * probe op stays a short sequential walk.  The cost model is zero too
 * (queue, wake, switch, main, probe_check: as tests/tsc.h's zero_cost), so
 * that only the real scheduling is timed, not modelled overheads.
 *
 * Counters: us_per_device_phase = (suspend + resume wall) / device-phases run
 * (suspend_start + resume_start events, 8 per device), the figure the target
 * (<= 5 us) is about; wall_us_per_device = whole run / devices.
 */
#include <stdio.h>

#include "bench/bench.h"
#include "bench/bench_common.h"
#include "sim/engine/threads.h"

enum { SH_FLAT, SH_CHAIN, SH_COUNT };
static const char *const shape_name[SH_COUNT] = { "flat", "chain" };

/* Real seconds per simulated second: 1, so op makespans read as wall ns. */
#define THREADS_TIME_SCALE 1.0

#define ZCACHE 8

/* The generated scenario, shallow-copied with a zero cost model; cached. */
static const struct dl_scenario *shape_scenario(int shape, uint32_t n)
{
	static const struct dl_override flat[] = { { "fanout", "0" },
						   { "suppliers_per_device", "0" } };
	static struct dl_scenario zero[ZCACHE];
	static const struct dl_scenario *from[ZCACHE];
	static unsigned nzero;
	const struct dl_scenario *sc;

	sc = shape == SH_FLAT ? bench_gen_scenario_ex("random-dag", n, "topological", flat, 2)
			      : bench_gen_scenario("chain", n, "topological");
	if (!sc)
		return NULL;
	for (unsigned i = 0; i < nzero; i++)
		if (from[i] == sc)
			return &zero[i];
	if (nzero == ZCACHE)
		return NULL;
	zero[nzero] = *sc;   /* shares the arrays, which the engines only read */
	zero[nzero].cost = (struct dl_cost){ .cpus = 0 };   /* cpus 0: the order's default */
	from[nzero] = sc;
	return &zero[nzero++];
}

/* Counts the device-phases run: one *_start event each. */
static void count_phases(void *ctx, struct dl_event *e)
{
	uint64_t *n = ctx;

	*n += e->kind == DL_EV_SUSPEND_START || e->kind == DL_EV_RESUME_START;
}

static void bm_threads_overhead(struct bm_state *st)
{
	int shape = (int)(bm_user(st) >> 8);
	enum dl_order order = (enum dl_order)(bm_user(st) & 0xff);
	const struct dl_scenario *sc = shape_scenario(shape, (uint32_t)bm_range(st, 0));
	static struct dl_run_result r;
	uint64_t phases = 0, phases_all = 0;
	struct dl_engine_opts o = { .order = order,
				    .sink = { .emit = count_phases, .ctx = &phases } };
	double pm_ns = 0, wall_ns = 0;

	if (!sc) {
		bm_skip(st, "scenario failed to load");
		return;
	}
	o.seed = sc->seed;
	while (bm_keep_running(st)) {
		phases = 0;
		if (dl_threads_run(sc, &o, THREADS_TIME_SCALE, &r) != 0 ||
		    phases != (uint64_t)sc->ndev * DL_PH_COUNT) {
			bm_skip(st, "dl_threads_run failed or skipped device-phases");
			return;
		}
		for (uint32_t i = 0; i < r.nops; i++)
			if (r.op[i].kind == DL_OP_SUSPEND || r.op[i].kind == DL_OP_RESUME)
				pm_ns += (double)r.op[i].makespan_ns * THREADS_TIME_SCALE;
		wall_ns += (double)r.wall_ns;
		phases_all += phases;
	}
	bm_set_items(st, (int64_t)phases_all);
	bm_counter(st, "us_per_device_phase", phases_all ? pm_ns / 1e3 / (double)phases_all : 0);
	bm_counter(st, "wall_us_per_device",
		   bm_iterations(st) ? wall_ns / 1e3 / ((double)bm_iterations(st) * sc->ndev) : 0);
	bm_counter(st, "devices", sc->ndev);
	bm_counter(st, "links", sc->nlink);
	bm_counter(st, "workers", r.workers);
}

void bm_register_threads(void)
{
	static const enum dl_order orders[] = { DL_ORDER_SYNC, DL_ORDER_KERNEL_ASYNC,
						DL_ORDER_KERNEL_ASYNC_V2, DL_ORDER_CP_FIRST };
	static const int64_t n_small = 2000, n_large = 20000;
	char name[96];

	for (int s = 0; s < SH_COUNT; s++)
		for (unsigned i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) {
			snprintf(name, sizeof(name), "BM_threads_overhead/%s/%s", shape_name[s],
				 dl_order_name(orders[i]));
			bm_register_real_time(name, bm_threads_overhead,
					      (int64_t)s << 8 | orders[i], &n_small, 1, 'm');
			if (s == SH_FLAT && orders[i] == DL_ORDER_KERNEL_ASYNC_V2)
				bm_register_real_time(name, bm_threads_overhead,
						      (int64_t)s << 8 | orders[i], &n_large, 1,
						      'm');
		}
}
