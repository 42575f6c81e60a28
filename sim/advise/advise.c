/*
 * advise.c - single-change what-ifs by re-simulation.  One working copy of
 * the scenario's device, profile and link arrays is changed for a run and
 * restored after it, so a candidate costs one engine run and no allocation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/advise/advise.h"
#include "sim/engine/cost.h"

struct work {
	struct dl_scenario w;		/* shallow copy; dev, prof, link are ours */
	const struct dl_scenario *sc;
	struct dl_advise_result *res;
	const struct dl_advise_opts *o;
	struct dl_run_result run;
	uint32_t cap;
};

static struct dl_latency halved(struct dl_latency l, int64_t *buf)
{
	l.mean /= 2;
	l.sd /= 2;
	if (l.min > 0)
		l.min /= 2;
	if (l.max != INT64_MAX)
		l.max /= 2;
	if (l.dist == DL_DIST_EMPIRICAL) {
		for (uint32_t i = 0; i < l.nsamp; i++)
			buf[i] = l.samp[i] / 2;
		l.samp = buf;
	}
	return l;
}

static bool has_latency(const struct dl_profile *p)
{
	for (unsigned k = 0; k < DL_LAT_COUNT; k++)
		if (p->lat[k].dist != DL_DIST_NONE && (p->lat[k].mean > 0 || p->lat[k].max > 0 ||
						       p->lat[k].dist == DL_DIST_EMPIRICAL))
			return true;
	return false;
}

/* Run the working copy under @order on @workers and record it as advice @a. */
static int simulate(struct work *wk, struct dl_advice *a, enum dl_order order, uint32_t workers)
{
	struct dl_engine_opts eo = { .order = order, .workers = workers, .seed = wk->w.seed };
	struct dl_advise_result *res = wk->res;
	int ret;

	ret = dl_engine_run(&wk->w, &eo, &wk->run);
	res->resims++;
	if (ret)
		return ret;
	a->status = wk->run.status;
	a->total_saved_ns = 0;
	for (uint32_t i = 0; i < res->base.nops && i < DL_MAX_OPS; i++) {
		int64_t m = i < wk->run.nops ? wk->run.op[i].makespan_ns : 0;

		a->saved_ns[i] = res->base.op[i].makespan_ns - m;
		a->total_saved_ns += a->saved_ns[i];
	}
	if (strcmp(wk->run.status, "ok") && !strcmp(res->base.status, "ok"))
		a->total_saved_ns = INT64_MIN / 4;	/* a change that breaks the run ranks last */
	return 0;
}

static struct dl_advice *push(struct work *wk)
{
	struct dl_advise_result *res = wk->res;

	if (res->nadv == wk->cap) {
		uint32_t c = wk->cap ? wk->cap * 2 : 256;
		struct dl_advice *q = realloc(res->adv, c * sizeof(*q));

		if (!q)
			return NULL;
		res->adv = q;
		wk->cap = c;
	}
	memset(&res->adv[res->nadv], 0, sizeof(res->adv[0]));
	res->adv[res->nadv].dev = res->adv[res->nadv].dev2 = DL_SC_NONE;
	return &res->adv[res->nadv];
}

static int cmp_advice(const void *x, const void *y)
{
	const struct dl_advice *a = x, *b = y;

	if (a->total_saved_ns != b->total_saved_ns)
		return a->total_saved_ns > b->total_saved_ns ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return (a->dev2 > b->dev2) - (a->dev2 < b->dev2);
}

static bool stopped(const struct work *wk)
{
	return wk->o->stop && *wk->o->stop;
}

int dl_advise(const struct dl_scenario *sc, const struct dl_advise_opts *o,
	      struct dl_advise_result *res)
{
	const struct dl_order_policy *pol = dl_order_policy(o->order);
	struct work wk = { .sc = sc, .res = res, .o = o };
	uint32_t maxs = 0, limit = o->max_candidates ? o->max_candidates : UINT32_MAX, n;
	int64_t *samp = NULL, t0 = dl_mono_ns();
	struct dl_engine_opts eo = { .order = o->order, .workers = o->workers, .seed = sc->seed };
	int ret = -ENOMEM;

	memset(res, 0, sizeof(*res));
	res->workers = dl_engine_workers(sc, o->order, o->workers);
	ret = dl_engine_run(sc, &eo, &res->base);
	res->resims = 1;
	if (ret)
		return ret;
	ret = -ENOMEM;
	wk.w = *sc;
	wk.w.dev = malloc(((size_t)sc->ndev + 1) * sizeof(*wk.w.dev));
	wk.w.prof = malloc(((size_t)sc->nprof + 1) * sizeof(*wk.w.prof));
	wk.w.link = malloc(((size_t)sc->nlink + 1) * sizeof(*wk.w.link));
	for (uint32_t p = 0; p < sc->nprof; p++)
		for (unsigned k = 0; k < DL_LAT_COUNT; k++)
			if (sc->prof[p].lat[k].nsamp > maxs)
				maxs = sc->prof[p].lat[k].nsamp;
	samp = malloc(((size_t)maxs * DL_LAT_COUNT + 1) * sizeof(*samp));
	if (!wk.w.dev || !wk.w.prof || !wk.w.link || !samp)
		goto out;
	/* (an empty array may be NULL: memcpy must not see it) */
	if (sc->ndev)
		memcpy(wk.w.dev, sc->dev, sc->ndev * sizeof(*sc->dev));
	if (sc->nprof)
		memcpy(wk.w.prof, sc->prof, sc->nprof * sizeof(*sc->prof));
	if (sc->nlink)
		memcpy(wk.w.link, sc->link, sc->nlink * sizeof(*sc->link));

	/* make X async: only where the order keeps sync devices on the main thread */
	n = 0;
	for (uint32_t d = 0; d < sc->ndev && pol->use_async_flag && n < limit && !stopped(&wk); d++) {
		struct dl_advice *a;

		if (sc->dev[d].async || sc->dev[d].hotplug)
			continue;
		if (!(a = push(&wk)))
			goto out;
		a->kind = DL_ADV_ASYNC;
		a->dev = d;
		wk.w.dev[d].async = 1;
		ret = simulate(&wk, a, o->order, o->workers);
		wk.w.dev[d].async = 0;
		if (ret)
			goto out;
		res->nadv++;
		n++;
		ret = -ENOMEM;
	}
	/* halve X's latencies: a profile of its own for X, in the spare slot */
	n = 0;
	for (uint32_t d = 0; d < sc->ndev && n < limit && !stopped(&wk); d++) {
		const struct dl_profile *p = &sc->prof[sc->dev[d].profile];
		struct dl_advice *a;

		if (!has_latency(p))
			continue;
		if (!(a = push(&wk)))
			goto out;
		for (unsigned k = 0; k < DL_LAT_COUNT; k++)
			wk.w.prof[sc->nprof].lat[k] = halved(p->lat[k], samp + (size_t)k * maxs);
		wk.w.prof[sc->nprof].cpu_ppm = p->cpu_ppm;
		wk.w.nprof = sc->nprof + 1;
		wk.w.dev[d].profile = sc->nprof;
		a->kind = DL_ADV_HALVE;
		a->dev = d;
		ret = simulate(&wk, a, o->order, o->workers);
		wk.w.dev[d].profile = sc->dev[d].profile;
		wk.w.nprof = sc->nprof;
		if (ret)
			goto out;
		res->nadv++;
		n++;
		ret = -ENOMEM;
	}
	/* another order (naive is no option: it ignores the links) */
	for (unsigned ord = 0; ord < DL_ORDER_COUNT && !stopped(&wk); ord++) {
		struct dl_advice *a;

		if (ord == o->order || ord == DL_ORDER_NAIVE)
			continue;
		if (!(a = push(&wk)))
			goto out;
		a->kind = DL_ADV_ORDER;
		a->order = (enum dl_order)ord;
		if ((ret = simulate(&wk, a, (enum dl_order)ord, o->workers)))
			goto out;
		res->nadv++;
		ret = -ENOMEM;
	}
	/* twice the CPUs */
	if (!stopped(&wk)) {
		struct dl_advice *a = push(&wk);

		if (!a)
			goto out;
		a->kind = DL_ADV_CPUS;
		a->cpus = res->workers * 2;
		if ((ret = simulate(&wk, a, o->order, a->cpus)))
			goto out;
		res->nadv++;
		ret = -ENOMEM;
	}
	/* drop link X->Y: the listed and generated links, one at a time */
	n = 0;
	for (uint32_t l = 0; l < sc->nlink && n < limit && !stopped(&wk); l++) {
		struct dl_advice *a;

		if (!(a = push(&wk)))
			goto out;
		a->kind = DL_ADV_DROP_LINK;
		a->unsafe = true;
		a->link = l;
		a->dev = sc->link[l].consumer;
		a->dev2 = sc->link[l].supplier;
		/* the links after it move up one (the order links are added in matters) */
		memmove(&wk.w.link[l], &sc->link[l + 1], (sc->nlink - l - 1) * sizeof(*sc->link));
		wk.w.nlink = sc->nlink - 1;
		wk.w.nlink_generated = sc->nlink_generated - (l < sc->nlink_generated);
		ret = simulate(&wk, a, o->order, o->workers);
		memcpy(&wk.w.link[l], &sc->link[l], (sc->nlink - l) * sizeof(*sc->link));
		wk.w.nlink = sc->nlink;
		wk.w.nlink_generated = sc->nlink_generated;
		if (ret)
			goto out;
		res->nadv++;
		n++;
		ret = -ENOMEM;
	}
	if (res->nadv)	/* qsort() must not see a NULL array */
		qsort(res->adv, res->nadv, sizeof(*res->adv), cmp_advice);
	ret = 0;
out:
	res->wall_ns = dl_mono_ns() - t0;
	free(wk.w.dev);
	free(wk.w.prof);
	free(wk.w.link);
	free(samp);
	if (ret) {
		free(res->adv);
		res->adv = NULL;
		res->nadv = 0;
	}
	return ret;
}

void dl_advice_describe(const struct dl_scenario *sc, const struct dl_advice *a, char *buf,
			size_t len)
{
	switch (a->kind) {
	case DL_ADV_ASYNC:
		snprintf(buf, len, "make %s async", dl_sc_name(sc, a->dev));
		break;
	case DL_ADV_HALVE:
		snprintf(buf, len, "halve %s's latencies", dl_sc_name(sc, a->dev));
		break;
	case DL_ADV_ORDER:
		snprintf(buf, len, "order %s", dl_order_name(a->order));
		break;
	case DL_ADV_CPUS:
		snprintf(buf, len, "%u CPUs", a->cpus);
		break;
	case DL_ADV_DROP_LINK:
		snprintf(buf, len, "drop link %s -> %s (UNSAFE)", dl_sc_name(sc, a->dev2),
			 dl_sc_name(sc, a->dev));
		break;
	default:
		snprintf(buf, len, "?");
	}
}
