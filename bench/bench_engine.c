/*
 * bench_engine.c - BM_engine_run/<order>/<devices>: one dl_engine_run() of
 * scenarios/default.json (random DAG, probe + suspend + resume) at 1k, 10k
 * and 100k devices (1M with DLSIM_BENCH_FULL=1), no event sink.  The
 * scenario is generated once, outside the timing.
 *
 * bytes_per_device_link: the heap the engine holds at its sampled peak
 * (glibc's mallinfo2(), every 16k events, in one untimed run per order and
 * size with a counting sink), less what was in use before, divided by
 * devices + links.
 */
#include <malloc.h>
#include <stdio.h>

#include "bench/bench.h"
#include "bench/bench_common.h"
#include "sim/engine/engine.h"

#define MEM_SAMPLE_MASK 0x3fff

struct mem_probe {
	size_t peak;
	uint64_t events;
};

static size_t heap_in_use(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
}

static void mem_emit(void *ctx, struct dl_event *e)
{
	struct mem_probe *p = ctx;
	size_t u;

	(void)e;
	if ((++p->events & MEM_SAMPLE_MASK) == 0 && (u = heap_in_use()) > p->peak)
		p->peak = u;
}

/* Bytes per device + link of one run of SC under order O; cached, < 0 on error. */
static double engine_bytes(const struct dl_scenario *sc, enum dl_order o)
{
	static struct mem_cached { const struct dl_scenario *sc; enum dl_order o; double v; }
		cache[64];
	static unsigned n;
	static struct dl_run_result r;
	struct mem_probe p = { 0, 0 };
	size_t base;
	double v;

	for (unsigned i = 0; i < n; i++)
		if (cache[i].sc == sc && cache[i].o == o)
			return cache[i].v;
	base = heap_in_use();
	p.peak = base;
	struct dl_engine_opts opts = { .order = o, .seed = sc->seed,
				       .sink = { .emit = mem_emit, .ctx = &p } };
	if (dl_engine_run(sc, &opts, &r) < 0)
		return -1;
	v = (double)(p.peak - base) / ((double)sc->ndev + sc->nlink);
	if (n < 64)
		cache[n++] = (struct mem_cached){ sc, o, v };
	return v;
}

static void bm_engine_run(struct bm_state *st)
{
	const struct dl_scenario *sc = bench_default_scenario((uint32_t)bm_range(st, 0));
	struct dl_engine_opts o = { .order = (enum dl_order)bm_user(st) };
	static struct dl_run_result r;
	uint64_t events = 0;
	double bytes;

	if (!sc) {
		bm_skip(st, "scenario failed to load");
		return;
	}
	o.seed = sc->seed;
	bytes = engine_bytes(sc, o.order);
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
	if (bytes >= 0)
		bm_counter(st, "bytes_per_device_link", bytes);
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
