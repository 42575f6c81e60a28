/*
 * bench_engine.c - BM_engine_run/<order>/<devices>: one dl_engine_run() of
 * scenarios/default.json (random DAG, probe + suspend + resume) at 1k, 10k
 * and 100k devices (1M with DLSIM_BENCH_FULL=1), no event sink.  The
 * scenario is generated once, outside the timing.
 *
 * bytes_per_device_link: the heap the engine holds at its sampled peak
 * (glibc's mallinfo2(), every 16k events, in one untimed run per order and
 * size with a counting sink), less what was in use before, divided by
 * devices + links.  It counts what is allocated, touched or not.
 * rss_per_device_link: what the same run made resident at its peak (the
 * process's VmHWM, reset to VmRSS before it through /proc/self/clear_refs,
 * after malloc_trim() gave back what earlier runs freed), less VmRSS
 * before, divided by devices + links: issue 35's figure, without
 * the scenario (`/usr/bin/time -f %M dlsim run` counts it too).  Absent
 * where the kernel cannot reset the peak.
 *
 * BM_phase_vs_topo/<topology>/<order>/<devices>: one dl_engine_run() of
 * default.json ("dag") or a generated layered graph ("layered"), at 1k (for
 * the smoke run) and 100k devices (1M with DLSIM_BENCH_FULL=1), set against one plain topological
 * pass over the same graph (bench_kahn(), as BM_topo_pass).  Counters, from
 * the run's own CPU figures (dl_op_result.cpu_ns and ph_cpu_ns, the engine
 * thread's CPU clock) and the fastest of TOPO_REPS passes on the same clock:
 * phase_vs_topo, the slowest PM phase over the pass; probe_vs_topo, the
 * probe op over the pass (issue 35's targets, bench/compare); topo_us,
 * slowest_phase_us and probe_op_us.  Each is the lowest over the iterations.
 * And the floor under any event-driven engine: event_floor_us, one
 * bench_event_pass() over the same graph (every device one event through a
 * binary heap, in time order, nothing else); floor_vs_topo, that pass over
 * the topological one; phase_vs_floor, the slowest PM phase over it.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* A kB figure of /proc/self/status ("VmRSS", "VmHWM"); -1 if unreadable. */
static long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	size_t k = strlen(key);
	long v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, k) && line[k] == ':')
			v = strtol(line + k + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* VmHWM back to VmRSS (proc(5) clear_refs, "5"): false where it cannot be. */
static bool hwm_reset(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	bool ok;

	if (!f)
		return false;
	ok = fputs("5", f) >= 0;
	return (fclose(f) == 0) && ok;
}

struct mem_figures { double heap, rss; };   /* bytes per device + link; < 0: not measured */

/* The memory figures of one run of SC under order O; cached; heap < 0 on error. */
static struct mem_figures engine_bytes(const struct dl_scenario *sc, enum dl_order o)
{
	static struct mem_cached { const struct dl_scenario *sc; enum dl_order o; struct mem_figures v; }
		cache[64];
	static unsigned n;
	static struct dl_run_result r;
	struct mem_probe p = { 0, 0 };
	struct mem_figures v = { -1, -1 };
	double units = (double)sc->ndev + sc->nlink;
	size_t base;
	long rss0, hwm;
	bool reset;

	for (unsigned i = 0; i < n; i++)
		if (cache[i].sc == sc && cache[i].o == o)
			return cache[i].v;
	base = heap_in_use();
	p.peak = base;
	/* what earlier runs freed, given back: else the run reuses resident pages */
	malloc_trim(0);
	reset = hwm_reset();
	rss0 = status_kb("VmRSS");
	struct dl_engine_opts opts = { .order = o, .seed = sc->seed,
				       .sink = { .emit = mem_emit, .ctx = &p } };
	if (dl_engine_run(sc, &opts, &r) < 0)
		return v;
	hwm = status_kb("VmHWM");
	v.heap = (double)(p.peak - base) / units;
	if (reset && rss0 >= 0 && hwm >= rss0)
		v.rss = (double)(hwm - rss0) * 1024 / units;
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
	struct mem_figures bytes;

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
	if (bytes.heap >= 0)
		bm_counter(st, "bytes_per_device_link", bytes.heap);
	if (bytes.rss >= 0)
		bm_counter(st, "rss_per_device_link", bytes.rss);
}

#define TOPO_REPS 5

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * The fastest of TOPO_REPS passes over @sc's graph, thread CPU ns, each of
 * bench_kahn() (*@topo) and bench_event_pass() (*@floor); false: a cycle.
 */
static bool pass_ns(const struct dl_scenario *sc, int64_t *topo, int64_t *floor)
{
	struct bench_csr *g = bench_csr_build(sc);
	bool dag = true;

	*topo = *floor = INT64_MAX;
	for (int i = 0; i < TOPO_REPS && dag; i++) {
		int64_t t0 = thread_cpu_ns(), t1, t2;

		dag = bench_kahn(g) == g->n;
		t1 = thread_cpu_ns();
		dag = dag && bench_event_pass(g) == g->n;
		t2 = thread_cpu_ns();
		*topo = t1 - t0 < *topo ? t1 - t0 : *topo;
		*floor = t2 - t1 < *floor ? t2 - t1 : *floor;
	}
	bench_csr_free(g);
	*topo = *topo > 0 ? *topo : 1;
	*floor = *floor > 0 ? *floor : 1;
	return dag;
}

enum { PV_DAG, PV_LAYERED, PV_COUNT };
static const char *const pv_name[PV_COUNT] = { "dag", "layered" };
static const int64_t pv_sizes[] = { 1000, 100000, 1000000 };   /* 1M: DLSIM_BENCH_FULL=1 */

static const struct dl_scenario *pv_scenario(int topo, uint32_t n)
{
	return topo == PV_DAG ? bench_default_scenario(n) : bench_gen_scenario("layered", n, "random");
}

static void bm_phase_vs_topo(struct bm_state *st)
{
	int topo = (int)(bm_user(st) / DL_ORDER_COUNT);
	const struct dl_scenario *sc = pv_scenario(topo, (uint32_t)bm_range(st, 0));
	struct dl_engine_opts o = { .order = (enum dl_order)(bm_user(st) % DL_ORDER_COUNT) };
	static struct dl_run_result r;
	int64_t topo_ns, floor_ns, phase = INT64_MAX, probe = INT64_MAX;

	if (!sc) {
		bm_skip(st, "scenario failed to load");
		return;
	}
	o.seed = sc->seed;
	if (!pass_ns(sc, &topo_ns, &floor_ns)) {
		bm_skip(st, "graph has a cycle");
		return;
	}
	while (bm_keep_running(st)) {
		int64_t ph = -1, pr = -1;

		if (dl_engine_run(sc, &o, &r) < 0) {
			bm_skip(st, "dl_engine_run failed");
			return;
		}
		for (uint32_t i = 0; i < r.nops; i++) {
			const struct dl_op_result *op = &r.op[i];

			if (op->kind == DL_OP_PROBE && op->cpu_ns > pr)
				pr = op->cpu_ns;
			for (unsigned p = 0; p < DL_PH_COUNT; p++)
				if ((op->ph_ran & (1u << p)) && op->ph_cpu_ns[p] > ph)
					ph = op->ph_cpu_ns[p];
		}
		if (ph < 0 || pr < 0) {
			bm_skip(st, "the run has no PM phase or no probe op");
			return;
		}
		phase = ph < phase ? ph : phase;
		probe = pr < probe ? pr : probe;
	}
	bm_counter(st, "devices", r.devices);
	bm_counter(st, "links", r.links);
	bm_counter(st, "topo_us", (double)topo_ns / 1e3);
	bm_counter(st, "event_floor_us", (double)floor_ns / 1e3);
	bm_counter(st, "slowest_phase_us", (double)phase / 1e3);
	bm_counter(st, "probe_op_us", (double)probe / 1e3);
	bm_counter(st, "phase_vs_topo", (double)phase / (double)topo_ns);
	bm_counter(st, "probe_vs_topo", (double)probe / (double)topo_ns);
	bm_counter(st, "floor_vs_topo", (double)floor_ns / (double)topo_ns);
	bm_counter(st, "phase_vs_floor", (double)phase / (double)floor_ns);
}

void bm_register_engine(void)
{
	char name[64];

	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		snprintf(name, sizeof(name), "BM_engine_run/%s", dl_order_name((enum dl_order)o));
		for (int64_t n = 1000; n <= (bm_full() ? 1000000 : 100000); n *= 10)
			bm_register(name, bm_engine_run, o, &n, 1, 'm');
	}
	for (int t = 0; t < PV_COUNT; t++) {
		for (int o = 0; o < DL_ORDER_COUNT; o++) {
			snprintf(name, sizeof(name), "BM_phase_vs_topo/%s/%s", pv_name[t],
				 dl_order_name((enum dl_order)o));
			/* 1k: for the smoke run; the targets are read at the largest size */
			for (int i = 0; i < (bm_full() ? 3 : 2); i++)
				bm_register(name, bm_phase_vs_topo, (int64_t)t * DL_ORDER_COUNT + o,
					    &pv_sizes[i], 1, 'm');
		}
	}
}
