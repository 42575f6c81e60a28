/* phase.c - the plan of one phase, for both backends (see phase.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/phase.h"
#include "sim/order/sched.h"

/* The index at place @k of dpm_list. */
static inline uint32_t list_at(const struct dl_phase_view *v, uint32_t k)
{
	return v->list ? v->list[k] : k;
}

static inline uint32_t id_of(const struct dl_phase_view *v, uint32_t i)
{
	return v->id ? v->id[i] : i;
}

int dl_walk_init(struct dl_walk *w, uint32_t nindex, uint32_t nid)
{
	memset(w, 0, sizeof(*w));
	w->v = calloc(2 * (size_t)nindex + 1, sizeof(*w->v));
	w->prepared = calloc((size_t)nid + 1, sizeof(*w->prepared));
	w->seen = calloc((size_t)nindex + 1, 1);
	if (!w->v || !w->prepared || !w->seen) {
		dl_walk_fini(w);
		return -ENOMEM;
	}
	return 0;
}

void dl_walk_fini(struct dl_walk *w)
{
	free(w->v);
	free(w->prepared);
	free(w->seen);
	memset(w, 0, sizeof(*w));
}

/*
 * dpm_complete() walks dpm_prepared_list backward: the order prepare ran,
 * not today's dpm_list, which a link added since may have reordered (the
 * kernel's device_pm_move_last() would even take such a device off the
 * prepared list: not modelled).  Whatever is to complete that prepare did
 * not run follows, in reverse dpm_list order.
 */
static void walk_complete(const struct dl_phase_view *v, struct dl_walk *w)
{
	for (uint32_t k = w->nprepared; k-- > 0;) {
		uint32_t d = w->prepared[k], i = d < v->nid ? v->index_of[d] : DL_NONE;

		if (i != DL_NONE && dl_byte(v->part, i) && !w->seen[i]) {
			w->seen[i] = 1;
			w->v[w->n++] = i;
		}
	}
	for (uint32_t k = v->nlist; k-- > 0;) {
		uint32_t i = list_at(v, k);

		if (dl_byte(v->part, i) && !w->seen[i])
			w->v[w->n++] = i;
	}
	for (uint32_t k = 0; k < w->n; k++)
		w->seen[w->v[k]] = 0;
}

void dl_phase_walk(const struct dl_phase_view *v, const struct dl_walk_how *h, struct dl_walk *w)
{
	const struct dl_phase_scheme *ps = h->ps;
	bool reverse = ps->serial ? h->phase == DL_PH_COMPLETE : ps->kind == DL_PK_SUSPEND;
	uint32_t m = v->nlist;

	w->n = 0;
	w->nupfront = 0;
	if (!ps->link_aware || ps->kind == DL_PK_PROBE_DEFER) {
		/* probing follows registration (device_add) order; naive PM does too */
		for (uint32_t k = 0; k < v->nid; k++) {
			uint32_t d = reverse ? v->nid - 1 - k : k;

			if (v->index_of[d] != DL_NONE)
				w->v[w->n++] = v->index_of[d];
		}
	} else if (ps->serial && h->phase == DL_PH_COMPLETE) {
		walk_complete(v, w);
	} else if (dl_walk_upfront_free(ps)) {
		/* 6.16+: the async devices with nothing to wait for first, then the whole list */
		for (uint32_t k = 0; k < m; k++) {
			uint32_t i = list_at(v, reverse ? m - 1 - k : k);

			if (dl_byte(v->part, i) && !dl_byte(v->on_main, i) &&
			    dl_pm_has_no_deps(h->core, id_of(v, i), ps->kind == DL_PK_SUSPEND))
				w->v[w->n++] = i;
		}
		w->nupfront = w->n;
		for (uint32_t k = 0; k < m; k++)
			w->v[w->n++] = list_at(v, reverse ? m - 1 - k : k);
	} else if (dl_walk_async_first(ps)) {
		/*
		 * Classic async resume phases walk twice: dpm_noirq_resume_devices(),
		 * dpm_resume_early() and dpm_resume() of 6.12 first queue every
		 * async device ("Trigger the resume of 'async' devices upfront"),
		 * then run the sync ones.  (Suspend phases queue an async device
		 * when the walk reaches it.)
		 */
		for (uint32_t k = 0; k < m; k++)
			if (!dl_byte(v->on_main, list_at(v, k)))
				w->v[w->n++] = list_at(v, k);
		for (uint32_t k = 0; k < m; k++)
			if (dl_byte(v->on_main, list_at(v, k)))
				w->v[w->n++] = list_at(v, k);
	} else {
		for (uint32_t k = 0; k < m; k++)
			w->v[w->n++] = list_at(v, reverse ? m - 1 - k : k);
	}
	if (ps->serial && h->phase == DL_PH_PREPARE) {
		w->nprepared = 0;
		for (uint32_t k = 0; k < w->n; k++)
			if (dl_byte(v->part, w->v[k]))
				w->prepared[w->nprepared++] = id_of(v, w->v[k]);
	}
}

void dl_phase_priorities(const struct dl_phase_graph *g, uint32_t nindex, int64_t *prio)
{
	memset(prio, 0, (size_t)nindex * sizeof(*prio));
	/* backward: every index after the ones it releases */
	for (uint32_t k = g->ntopo; k-- > 0;) {
		uint32_t i = g->topo[k];
		int64_t best = 0;

		for (uint32_t j = g->off[i]; j < g->off[i + 1]; j++)
			if (-prio[g->adj[j]] > best)
				best = -prio[g->adj[j]];
		prio[i] = -(best + dl_phase_lat(g, i));
	}
}

int dl_levels_init(struct dl_levels *lv, uint32_t nindex, uint32_t nid)
{
	memset(lv, 0, sizeof(*lv));
	lv->level = calloc((size_t)nindex + 1, sizeof(*lv->level));
	lv->off = calloc((size_t)nindex + 3, sizeof(*lv->off));
	lv->order = calloc((size_t)nindex + 1, sizeof(*lv->order));
	lv->left = calloc((size_t)nindex + 1, sizeof(*lv->left));
	lv->mark = calloc((size_t)nid + 1, 1);
	if (!lv->level || !lv->off || !lv->order || !lv->left || !lv->mark) {
		dl_levels_fini(lv);
		return -ENOMEM;
	}
	return 0;
}

void dl_levels_fini(struct dl_levels *lv)
{
	free(lv->level);
	free(lv->off);
	free(lv->order);
	free(lv->left);
	free(lv->mark);
	memset(lv, 0, sizeof(*lv));
}

void dl_phase_levels(const struct dl_phase_view *v, struct dl_levels *lv)
{
	const struct dl_phase_graph *g = &v->g;
	uint32_t maxlevel = 0, *off = lv->off;

	for (uint32_t k = 0; k < g->ntopo; k++)
		lv->level[g->topo[k]] = 0;
	/* forward: each index's level is final before it is pushed on (indices outside: unread) */
	for (uint32_t k = 0; k < g->ntopo; k++) {
		uint32_t i = g->topo[k], next = lv->level[i] + 1;

		for (uint32_t j = g->off[i]; j < g->off[i + 1]; j++)
			if (lv->level[g->adj[j]] < next)
				lv->level[g->adj[j]] = next;
		if (lv->level[i] > maxlevel)
			maxlevel = lv->level[i];
	}
	lv->nlevels = maxlevel + 1;
	/* counting sort by level: off[l + 1] starts level l while the indices are placed */
	memset(off, 0, ((size_t)lv->nlevels + 2) * sizeof(*off));
	for (uint32_t k = 0; k < g->ntopo; k++)
		off[lv->level[g->topo[k]] + 2]++;
	for (uint32_t l = 0; l < lv->nlevels; l++) {
		lv->left[l] = off[l + 2];
		off[l + 2] += off[l + 1];
	}
	/* each level in device-id order, the order the barrier releases it in */
	for (uint32_t k = 0; k < g->ntopo; k++)
		lv->mark[id_of(v, g->topo[k])] = 1;
	for (uint32_t d = 0; d < v->nid; d++) {
		uint32_t i;

		if (!lv->mark[d])
			continue;
		lv->mark[d] = 0;
		i = v->index_of[d];
		lv->order[off[lv->level[i] + 1]++] = i;
	}
}

int64_t dl_phase_main_bound(const struct dl_phase_view *v, const struct dl_walk *w,
			    const struct dl_phase_scheme *ps, const int64_t *est, int64_t main_ns,
			    int64_t queue_ns)
{
	int64_t t = 0;

	if ((ps->kind != DL_PK_SUSPEND && ps->kind != DL_PK_RESUME) || ps->main_waits_only)
		return 0;   /* probe, or main only waits */
	for (uint32_t k = 0; k < w->n; k++) {
		uint32_t i = w->v[k];

		if (!dl_byte(v->part, i))
			continue;
		if (dl_byte(v->on_main, i)) {
			if (ps->link_aware && est[i] > t)
				t = est[i];
			t += main_ns + dl_phase_lat(&v->g, i);
		} else if (dl_walk_queues_each(ps) || k < w->nupfront) {
			t += main_ns + queue_ns;   /* v2: only the roots/leaves surely */
		}
	}
	return t;
}

void dl_phase_plan(const struct dl_phase_view *v, const struct dl_phase_scheme *ps, uint32_t nindex,
		   struct dl_levels *lv, int64_t *prio)
{
	if (ps->by_priority)
		dl_phase_priorities(&v->g, nindex, prio);
	if (ps->barrier)
		dl_phase_levels(v, lv);
}
