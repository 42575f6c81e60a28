/*
 * bench_engine.c - BM_engine_run/<order>/<devices>: one dl_engine_run() of
 * scenarios/default.json (random DAG, probe + suspend + resume) at 1k, 10k
 * and 100k devices (1M with DLSIM_BENCH_FULL=1), no event sink.  The
 * scenario is generated once, outside the timing.
 */
#include <stdio.h>

#include "bench/bench.h"
#include "bench/bench_common.h"
#include "sim/engine/engine.h"

static void bm_engine_run(struct bm_state *st)
{
	const struct dl_scenario *sc = bench_default_scenario((uint32_t)bm_range(st, 0));
	struct dl_engine_opts o = { .order = (enum dl_order)bm_user(st) };
	static struct dl_run_result r;
	uint64_t events = 0;

	if (!sc) {
		bm_skip(st, "scenario failed to load");
		return;
	}
	o.seed = sc->seed;
	while (bm_keep_running(st)) {
		int rc = dl_engine_run(sc, &o, &r);

		if (rc < 0) {
			bm_skip(st, "dl_engine_run failed");
			break;
		}
		events += r.events;
	}
	bm_set_items(st, (int64_t)events);
	bm_counter_rate(st, "events/s", (double)events);
	bm_counter(st, "events", (double)r.events);
	bm_counter(st, "devices", r.devices);
	bm_counter(st, "links", r.links);
	bm_counter(st, "makespan_ms", (double)r.makespan_ns / 1e6);
}

void bm_register_engine(void)
{
	char name[64];

	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		snprintf(name, sizeof(name), "BM_engine_run/%s", dl_order_name((enum dl_order)o));
		for (int64_t n = 1000; n <= (bm_full() ? 1000000 : 100000); n *= 10)
			bm_register(name, bm_engine_run, o, &n, 1, 'm');
	}
}
