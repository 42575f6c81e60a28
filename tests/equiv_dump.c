/*
 * equiv_dump.c - one run of a scenario, reduced to lines that must not
 * change across a behaviour-preserving refactor (tests/equiv.sh builds it
 * against two revisions and compares).  Only the engine's narrow entry
 * points are used (dl_scenario_load, dl_engine_run, dl_threads_run), so that
 * an old revision links it too.
 *
 *   equiv_dump SCENARIO ORDER SEED            DES: every event, every figure
 *   equiv_dump SCENARIO ORDER SEED --threads  real threads (time scale 0.001):
 *                                             the multiset of callbacks only
 *   equiv_dump --orders                       the orders this revision has
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/engine.h"
#include "sim/engine/threads.h"
#include "sim/scenario/scenario.h"

/* --threads: real seconds per simulated second, and the longest real-time run made */
#define EQUIV_SCALE 0.001
#define EQUIV_MAX_WALL_NS 60e9

struct acc {
	uint64_t hash, n;
	bool threads;
	bool no_moves;          /* leave dpm_move events out (EQUIV_NO_MOVES set) */
	uint64_t *cb;           /* threads: packed (kind, dev, phase, err) of callbacks */
	size_t ncb, cap;
};

static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static bool is_callback(unsigned kind)
{
	return kind == DL_EV_PROBE_START || kind == DL_EV_PROBE_END ||
	       kind == DL_EV_UNBIND_START || kind == DL_EV_UNBIND_END ||
	       (kind >= DL_EV_SUSPEND_START && kind <= DL_EV_RESUME_END);
}

static void on_event(void *ctx, struct dl_event *e)
{
	struct acc *a = ctx;

	if (a->no_moves && e->kind == DL_EV_DPM_MOVE)
		return;
	a->n++;
	if (!a->threads) {
		/* field by field: the struct has padding */
		a->hash = fnv(a->hash, &e->t_ns, sizeof(e->t_ns));
		a->hash = fnv(a->hash, &e->dev, sizeof(e->dev));
		a->hash = fnv(a->hash, &e->link, sizeof(e->link));
		a->hash = fnv(a->hash, &e->aux, sizeof(e->aux));
		a->hash = fnv(a->hash, &e->flags, sizeof(e->flags));
		a->hash = fnv(a->hash, &e->kind, sizeof(e->kind));
		a->hash = fnv(a->hash, &e->phase, sizeof(e->phase));
		a->hash = fnv(a->hash, &e->worker, sizeof(e->worker));
		a->hash = fnv(a->hash, &e->err, sizeof(e->err));
		return;
	}
	if (!is_callback(e->kind))
		return;
	if (a->ncb == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 4096;
		a->cb = realloc(a->cb, a->cap * sizeof(*a->cb));
		if (!a->cb)
			exit(3);
	}
	a->cb[a->ncb++] = (uint64_t)e->kind << 56 | (uint64_t)e->phase << 48 |
			  (uint64_t)(uint16_t)e->err << 32 | e->dev;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
	struct dl_engine_opts o = { 0 };
	struct dl_scenario *sc;
	struct dl_error err;
	static struct dl_run_result r;
	struct acc a = { .hash = 0xcbf29ce484222325ull };
	uint64_t seed;
	int rc;

	if (argc == 2 && !strcmp(argv[1], "--orders")) {
		for (int i = 0; i < DL_ORDER_COUNT; i++)
			printf("%s\n", dl_order_name((enum dl_order)i));
		return 0;
	}
	if (argc < 4 || dl_order_parse(argv[2], &o.order)) {
		fprintf(stderr, "usage: equiv_dump SCENARIO ORDER SEED [--threads]\n");
		return 2;
	}
	a.threads = argc > 4 && !strcmp(argv[4], "--threads");
	a.no_moves = getenv("EQUIV_NO_MOVES") != NULL;
	seed = strtoull(argv[3], NULL, 10);
	if (dl_scenario_load(argv[1], NULL, 0, &seed, &sc, &err)) {
		fprintf(stderr, "equiv_dump: %s\n", err.msg);
		return 2;
	}
	o.seed = sc->seed;
	if (a.threads && dl_engine_run(sc, &o, &r) == 0 &&
	    (double)r.makespan_ns * EQUIV_SCALE > EQUIV_MAX_WALL_NS) {
		/* as dlsim run --max-wall: a real-time run of it would not end */
		printf("skip: the DES puts it at %.3g s, %.3g s of real time at scale %g\n",
		       r.makespan_ns / 1e9, r.makespan_ns * EQUIV_SCALE / 1e9, EQUIV_SCALE);
		dl_scenario_free(sc);
		return 77;
	}
	o.sink = (struct dl_sink){ .emit = on_event, .ctx = &a };
	rc = a.threads ? dl_threads_run(sc, &o, EQUIV_SCALE, &r) : dl_engine_run(sc, &o, &r);
	printf("rc %d status %s devices %u links %u\n", rc, r.status, r.devices, r.links);
	if (a.threads) {
		qsort(a.cb, a.ncb, sizeof(*a.cb), cmp_u64);
		printf("callbacks %zu hash %016llx\n", a.ncb,
		       (unsigned long long)fnv(0xcbf29ce484222325ull, a.cb, a.ncb * sizeof(*a.cb)));
		free(a.cb);
		dl_scenario_free(sc);
		return 0;
	}
	if (a.no_moves)
		printf("workers %u refused %u events but dpm_move %llu hash %016llx\n", r.workers,
		       r.links_refused, (unsigned long long)a.n, (unsigned long long)a.hash);
	else
		printf("workers %u refused %u events %llu/%llu hash %016llx\n", r.workers,
		       r.links_refused, (unsigned long long)r.events, (unsigned long long)a.n,
		       (unsigned long long)a.hash);
	printf("run makespan %lld lb %lld cp %lld work %lld blocked %lld main %lld order %lld "
	       "attempts %llu defers %llu wakeups %llu peak %u err %d fail %u\n",
	       (long long)r.makespan_ns, (long long)r.lower_bound_ns, (long long)r.critical_path_ns,
	       (long long)r.work_ns, (long long)r.blocked_ns, (long long)r.main_bound_ns,
	       (long long)r.order_bound_ns, (unsigned long long)r.probe_attempts,
	       (unsigned long long)r.probe_defers, (unsigned long long)r.wakeups, r.peak_workers,
	       r.err, r.fail_dev);
	for (uint32_t i = 0; i < r.nops; i++) {
		const struct dl_op_result *p = &r.op[i];

		printf("op %u kind %u start %lld makespan %lld lb %lld cp %lld work %lld blocked %lld "
		       "main %lld order %lld wakeups %llu attempts %llu defers %llu peak %u err %d "
		       "fail %u\n", i, p->kind, (long long)p->start_ns, (long long)p->makespan_ns,
		       (long long)p->lower_bound_ns, (long long)p->critical_path_ns,
		       (long long)p->work_ns, (long long)p->blocked_ns, (long long)p->main_bound_ns,
		       (long long)p->order_bound_ns, (unsigned long long)p->wakeups,
		       (unsigned long long)p->probe_attempts, (unsigned long long)p->probe_defers,
		       p->peak_workers, p->err, p->fail_dev);
	}
	dl_scenario_free(sc);
	return 0;
}
