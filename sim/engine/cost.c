/* cost.c - the engines' cost model (see cost.h). */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "sim/engine/cost.h"
#include "sim/engine/engine.h"

/* A "cost" field the scenario left unset is negative. */
static int64_t cost_or(int64_t v, int64_t def)
{
	return v >= 0 ? v : def;
}

void dl_costs_resolve(const struct dl_scenario *sc, struct dl_costs *c)
{
	c->main_ns = cost_or(sc->cost.main_ns, DL_COST_MAIN_NS);
	c->queue_ns = cost_or(sc->cost.queue_ns, DL_COST_QUEUE_NS);
	c->wake_ns = cost_or(sc->cost.wake_ns, DL_COST_WAKE_NS);
	c->switch_ns = cost_or(sc->cost.switch_ns, DL_COST_SWITCH_NS);
	c->check_ns = cost_or(sc->cost.probe_check_ns, DL_COST_PROBE_CHECK_NS);
}

int dl_faults_init(struct dl_faults *f, const struct dl_scenario *sc)
{
	f->sc = sc;
	f->has = calloc(sc->ndev + 1, 1);
	f->used = calloc(sc->nfault + 1, sizeof(*f->used));
	if (!f->has || !f->used) {
		dl_faults_fini(f);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < sc->nfault; i++)
		if (sc->fault[i].dev < sc->ndev)
			f->has[sc->fault[i].dev] = 1;
	return 0;
}

void dl_faults_fini(struct dl_faults *f)
{
	free(f->has);
	free(f->used);
	f->has = NULL;
	f->used = NULL;
}

int dl_faults_take(struct dl_faults *f, uint32_t d, unsigned key)
{
	if (!f->has[d])
		return 0;
	for (uint32_t i = 0; i < f->sc->nfault; i++) {
		const struct dl_sc_fault *x = &f->sc->fault[i];

		if (x->dev != d || x->lat_key != key)
			continue;
		if (x->times && f->used[i] >= x->times)
			continue;
		f->used[i]++;
		return -x->err;
	}
	return 0;
}

int64_t dl_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint32_t dl_engine_workers(const struct dl_scenario *sc, enum dl_order order, uint32_t requested)
{
	uint32_t k = requested ? requested :
		     sc->cost.cpus ? sc->cost.cpus : dl_order_policy(order)->default_workers;

	return k ? k : 1;
}
